#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests, the demo and the chaos suite.
#
#   pg_cluster.sh start --owner PID [--version N] [-c name=value ...]
#       initdb + start on a free loopback port with wal_level=logical and a private
#       socket directory; prints shell assignments on stdout:
#         PG_CLUSTER_DIR=... PGHOST=... PGPORT=... PGUSER=postgres PGDATABASE=postgres
#       A detached watchdog stops the cluster and deletes its directory as soon as
#       PID (the test, or a script's $$) exits, so a crashed or killed test leaves nothing.
#   pg_cluster.sh stop DIR                  stop (immediate) and delete
#   pg_cluster.sh restart DIR [MODE]        pg_ctl restart -m MODE (default fast)
#   pg_cluster.sh pgctl DIR ARGS...         any other pg_ctl action (e.g. stop -m fast)
#   pg_cluster.sh free-port                 print a loopback TCP port nobody listens on
#
# PostgreSQL refuses to run as root: as root, every server command runs as the
# `postgres` user, which owns the directory.
set -euo pipefail

version=${PG_VERSION:-15}
self_path="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
bindir() { echo "/usr/lib/postgresql/$version/bin"; }

as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

# A loopback TCP port nobody listens on right now. The server's own bind is the
# final check: start retries with another port if it loses a race. Below the
# kernel's ephemeral range, so that a port a server binds seconds after it was
# chosen (a JVM's) does not meanwhile become the local port of some outgoing
# connection.
free_port() {
  local port low=32768 high
  read -r low high </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
  for _ in $(seq 1 50); do
    if [ "$low" -gt 15000 ]; then
      port=$((10000 + RANDOM % (low - 10000)))
    else  # An unusual ephemeral range: take our chances.
      port=$((20000 + RANDOM % 40000))
    fi
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  echo "pg_cluster: no free port found" >&2
  return 1
}

cmd_stop() {
  local dir=$1
  [ -d "$dir" ] || return 0
  if [ -f "$dir/data/postmaster.pid" ]; then
    as_owner "$(bindir)/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}

cmd_start() {
  local owner=""
  local extra=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --owner) owner=$2; shift 2 ;;
      --version) version=$2; shift 2 ;;
      -c) extra+=(-c "$2"); shift 2 ;;
      *) echo "pg_cluster: unknown option $1" >&2; return 2 ;;
    esac
  done
  [ -n "$owner" ] || { echo "pg_cluster: start needs --owner PID" >&2; return 2; }
  [ -x "$(bindir)/initdb" ] || {
    echo "pg_cluster: PostgreSQL $version not found in $(bindir): run scripts/install-deps.sh" >&2
    return 1
  }

  local dir
  dir=$(mktemp -d "${TMPDIR:-/tmp}/outbox-pg.XXXXXX")
  chmod 755 "$dir"
  mkdir -p "$dir/sock"
  if [ "$(id -u)" -eq 0 ]; then chown -R postgres: "$dir"; fi

  # The watchdog: detached from the caller's pipes so `$(pg_cluster.sh start)` returns.
  setsid bash -c '
    owner=$1 dir=$2 self=$3
    while kill -0 "$owner" 2>/dev/null && [ -d "$dir" ]; do sleep 1; done
    "$self" stop "$dir"
  ' watchdog "$owner" "$dir" "$self_path" </dev/null >/dev/null 2>&1 &

  if ! as_owner "$(bindir)/initdb" -D "$dir/data" -U postgres --auth=trust \
      --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1; then
    cat "$dir/initdb.log" >&2
    cmd_stop "$dir"
    return 1
  fi

  local port started=0 opts
  for _ in 1 2 3 4 5; do
    port=$(free_port)
    # One line: pg_ctl hands -o to a shell, where a newline would end the command.
    opts="-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir/sock"
    opts+=" -c wal_level=logical -c max_wal_senders=10 -c max_replication_slots=10"
    opts+=" -c fsync=off -c full_page_writes=off ${extra[*]:-}"
    if as_owner "$(bindir)/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
        -o "$opts" >/dev/null 2>&1; then
      started=1
      break
    fi
  done
  if [ $started -ne 1 ]; then
    echo "pg_cluster: server failed to start; its log:" >&2
    tail -n 20 "$dir/server.log" >&2 || true
    cmd_stop "$dir"
    return 1
  fi
  echo "$port" >"$dir/port"
  cat <<OUT
PG_CLUSTER_DIR=$dir
PGHOST=$dir/sock
PGPORT=$port
PGUSER=postgres
PGDATABASE=postgres
OUT
}

cmd=${1:-}
shift || true
case "$cmd" in
  start) cmd_start "$@" ;;
  stop) cmd_stop "$1" ;;
  free-port) free_port ;;
  restart) as_owner "$(bindir)/pg_ctl" -D "$1/data" -l "$1/server.log" -w -t 60 \
             -m "${2:-fast}" restart >/dev/null ;;
  pgctl) dir=$1; shift; as_owner "$(bindir)/pg_ctl" -D "$dir/data" -l "$dir/server.log" "$@" ;;
  *) sed -n '2,16p' "$0" >&2; exit 2 ;;
esac
