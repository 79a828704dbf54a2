#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for tests, the demo and the chaos suite.
#
#   pg_cluster.sh start --owner PID [--version N] [-c name=value ...]
#       initdb + start on a free loopback port with wal_level=logical and a private
#       socket directory; prints shell assignments on stdout:
#         PG_CLUSTER_DIR=... PGHOST=... PGPORT=... PGUSER=postgres PGDATABASE=postgres
#       A detached watchdog stops the cluster and deletes its directory as soon as
#       PID (the test, or a script's $$) exits, so a crashed or killed test leaves nothing.
#   pg_cluster.sh clone SRC --owner PID     copy SRC's data directory into a new
#       cluster directory (for a standby: run it between the source's backup start
#       and stop); prints PG_CLUSTER_DIR=...; the same watchdog guards it
#   pg_cluster.sh start-standby DIR --primary-port P --slot S [--label FILE]
#                                   [--port PORT] [-c ...]
#       make DIR's data a physical standby of the server on port P, streaming
#       through physical slot S (FILE: the backup_label from the backup stop), and
#       start it on PORT or a free port; prints the same assignments as start. Every
#       physical standby connects as application_name `physical_standby`: that is
#       the name a primary's synchronous_standby_names gives (`*` would also match
#       a logical walsender, e.g. the publisher's, and make commits wait for Kafka)
#   pg_cluster.sh stop DIR                  stop (immediate) and delete
#   pg_cluster.sh kill DIR                  kill -9 the postmaster (a crash); keep DIR
#   pg_cluster.sh resume DIR                start DIR again, same port and settings
#   pg_cluster.sh restart DIR [MODE]        pg_ctl restart -m MODE (default fast)
#   pg_cluster.sh pgctl DIR ARGS...         any other pg_ctl action (e.g. stop -m fast, promote)
#   pg_cluster.sh free-port                 print a loopback TCP port nobody listens on
#
# The version: --version, else $PG_VERSION, else 15. 15 is Debian's postgresql-15
# when installed; every other release is a pinned prebuilt server that
# scripts/fetch-postgres.sh fetches once. A cluster remembers its version.
#
# PostgreSQL refuses to run as root: as root, every server command runs as the
# `postgres` user, which owns the directory.
set -euo pipefail

version=${PG_VERSION:-15}
self_path="$(cd "$(dirname "$0")" && pwd)/$(basename "$0")"
fetch_postgres="$(cd "$(dirname "$0")/../../scripts" && pwd)/fetch-postgres.sh"
server_lib=""

# Where `version`'s server commands are; sets server_lib for a prebuilt server.
bindir() {
  if [ "$version" = 15 ] && [ -x /usr/lib/postgresql/15/bin/initdb ]; then
    echo /usr/lib/postgresql/15/bin
    return
  fi
  "$fetch_postgres" "$version"
}

# The version a cluster directory was made with.
use_version_of() {
  if [ -f "$1/version" ]; then version=$(cat "$1/version"); fi
  bin=$(bindir)
  if [ "$bin" != /usr/lib/postgresql/15/bin ]; then server_lib=$(dirname "$bin")/lib; fi
}

# Runs a server command as the cluster's owner, with the prebuilt server's own
# libraries on its path (theirs only: nothing else of ours is run this way).
as_owner() {
  local env=()
  [ -n "$server_lib" ] && env=(env "LD_LIBRARY_PATH=$server_lib")
  if [ "$(id -u)" -eq 0 ]; then
    runuser -u postgres -- "${env[@]}" "$@"
  else
    "${env[@]}" "$@"
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

# Whether postmaster.pid names a live postmaster of `dir` (it runs in its data
# directory). After a kill -9 the file stays behind, and its pid may since belong
# to another process, which pg_ctl would signal.
postmaster_alive() {
  local dir=$1 pid
  pid=$(head -n 1 "$dir/data/postmaster.pid" 2>/dev/null) || return 1
  [ -n "$pid" ] && [ "$(readlink "/proc/$pid/cwd" 2>/dev/null)" = "$(cd "$dir/data" && pwd -P)" ]
}

cmd_stop() {
  local dir=$1
  [ -d "$dir" ] || return 0
  if postmaster_alive "$dir"; then
    use_version_of "$dir"
    as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
  fi
  rm -rf "$dir"
}

# kill -9 of the postmaster: its children notice and exit; the directory stays, to
# be started again (crash recovery) or stopped and deleted.
cmd_kill() {
  local dir=$1 pid
  postmaster_alive "$dir" || return 0
  pid=$(head -n 1 "$dir/data/postmaster.pid")
  kill -9 "$pid" 2>/dev/null || true
  for _ in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  # Its children notice the postmaster's death and exit on their own.
}

# A new cluster directory guarded by a watchdog for `owner`; prints its path.
new_dir() {
  local owner=$1 dir
  dir=$(mktemp -d "${TMPDIR:-/tmp}/outbox-pg.XXXXXX")
  chmod 755 "$dir"
  mkdir -p "$dir/sock"
  echo "$version" >"$dir/version"
  if [ "$(id -u)" -eq 0 ]; then chown -R postgres: "$dir"; fi
  # The watchdog: detached from the caller's pipes so `$(pg_cluster.sh start)` returns.
  setsid bash -c '
    owner=$1 dir=$2 self=$3
    while kill -0 "$owner" 2>/dev/null && [ -d "$dir" ]; do sleep 1; done
    "$self" stop "$dir"
  ' watchdog "$owner" "$dir" "$self_path" </dev/null >/dev/null 2>&1 &
  echo "$dir"
}

# Starts the server of `dir` on a free port with the test settings and `extra`
# (-c pairs); prints the shell assignments. Retries with another port if it
# loses the race for one.
start_server() {
  local dir=$1 want_port=$2
  shift 2
  local extra=("$@") port started=0 opts
  for _ in 1 2 3 4 5; do
    port=${want_port:-$(free_port)}
    # One line: pg_ctl hands -o to a shell, where a newline would end the command.
    opts="-c listen_addresses=127.0.0.1 -c port=$port -c unix_socket_directories=$dir/sock"
    opts+=" -c wal_level=logical -c max_wal_senders=10 -c max_replication_slots=10"
    opts+=" -c fsync=off -c full_page_writes=off ${extra[*]:-}"
    if as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
        -o "$opts" >/dev/null 2>&1; then
      started=1
      echo "$opts" >"$dir/opts"
      break
    fi
    # A standby that lost the race must not have half-started; a primary neither.
    as_owner "$bin/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop >/dev/null 2>&1 || true
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
  bin=$(bindir) || return 1
  if [ "$bin" != /usr/lib/postgresql/15/bin ]; then server_lib=$(dirname "$bin")/lib; fi
  [ -x "$bin/initdb" ] || {
    echo "pg_cluster: PostgreSQL $version not found in $bin: run scripts/install-deps.sh" >&2
    return 1
  }

  local dir
  dir=$(new_dir "$owner")
  if ! as_owner "$bin/initdb" -D "$dir/data" -U postgres --auth=trust \
      --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1; then
    cat "$dir/initdb.log" >&2
    cmd_stop "$dir"
    return 1
  fi
  start_server "$dir" "" "${extra[@]}"
}

# Starts a stopped or killed cluster again with the options and port it had.
cmd_resume() {
  local dir=$1
  use_version_of "$dir"
  as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 120 start \
    -o "$(cat "$dir/opts")" >/dev/null
}

# Copies a running server's data directory for a standby. The caller holds a
# backup open on the source (pg_backup_start) meanwhile, and writes the
# backup_label that its stop returns; WAL comes from the primary's slot.
cmd_clone() {
  local src=$1 owner=""
  shift
  while [ $# -gt 0 ]; do
    case "$1" in
      --owner) owner=$2; shift 2 ;;
      *) echo "pg_cluster: unknown option $1" >&2; return 2 ;;
    esac
  done
  [ -n "$owner" ] || { echo "pg_cluster: clone needs --owner PID" >&2; return 2; }
  use_version_of "$src"
  local dir
  dir=$(new_dir "$owner")
  # What pg_basebackup leaves out: the running server's own files, its WAL
  # (streamed from the slot instead), its slots and temporary files.
  as_owner mkdir "$dir/data"
  # GNU tar exits 1 when a file changed or vanished while it read it: an online
  # backup expects that (replaying WAL from the backup's start makes the copy
  # consistent), so only a status above 1 is a failure.
  local read_status=0
  {
    as_owner tar -C "$src/data" -cf - --warning=no-file-changed --warning=no-file-removed \
      --exclude=./postmaster.pid --exclude=./postmaster.opts \
      --exclude='./pg_wal/*' --exclude='./pg_replslot/*' --exclude='./pgsql_tmp*' \
      --exclude=./backup_label --exclude=./tablespace_map --exclude=./standby.signal \
      --exclude='./pg_stat_tmp/*' . || read_status=$?
    [ "$read_status" -le 1 ]
  } | as_owner tar -C "$dir/data" -xf -
  as_owner chmod 700 "$dir/data"
  echo "PG_CLUSTER_DIR=$dir"
}

cmd_start_standby() {
  local dir=$1 primary_port="" slot="" label="" port=""
  shift
  local extra=()
  while [ $# -gt 0 ]; do
    case "$1" in
      --primary-port) primary_port=$2; shift 2 ;;
      --slot) slot=$2; shift 2 ;;
      --label) label=$2; shift 2 ;;
      --port) port=$2; shift 2 ;;
      -c) extra+=(-c "$2"); shift 2 ;;
      *) echo "pg_cluster: unknown option $1" >&2; return 2 ;;
    esac
  done
  [ -n "$primary_port" ] && [ -n "$slot" ] || {
    echo "pg_cluster: start-standby needs --primary-port and --slot" >&2; return 2; }
  use_version_of "$dir"
  if [ -n "$label" ]; then
    cp "$label" "$dir/data/backup_label"
    if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir/data/backup_label"; fi
  fi
  as_owner touch "$dir/data/standby.signal"
  # dbname: a standby that synchronizes logical slots (PostgreSQL 17+) needs it.
  as_owner bash -c "cat >>'$dir/data/postgresql.auto.conf'" <<CONF
primary_conninfo = 'host=127.0.0.1 port=$primary_port user=postgres dbname=postgres application_name=physical_standby'
primary_slot_name = '$slot'
hot_standby_feedback = on
CONF
  start_server "$dir" "$port" "${extra[@]}"
}

cmd=${1:-}
shift || true
case "$cmd" in
  start) cmd_start "$@" ;;
  clone) cmd_clone "$@" ;;
  start-standby) cmd_start_standby "$@" ;;
  stop) cmd_stop "$1" ;;
  kill) cmd_kill "$1" ;;
  resume) cmd_resume "$1" ;;
  free-port) free_port ;;
  restart) use_version_of "$1"
           as_owner "$bin/pg_ctl" -D "$1/data" -l "$1/server.log" -w -t 60 \
             -m "${2:-fast}" restart >/dev/null ;;
  pgctl) dir=$1; shift; use_version_of "$dir"
         as_owner "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" "$@" ;;
  *) sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2 ;;
esac
