#!/usr/bin/env bash
# Resolves a pinned pom.xml's runtime dependencies with Maven (from Maven Central)
# into a cache outside the build tree, once, and prints the folder of jars.
#
#   scripts/fetch-jars.sh POM     e.g. tools/harness/kafka/pom.xml
#
# The cache is $OUTBOX_CACHE_DIR (default ~/.cache/outbox-publisher), one folder per
# pom, named by the pom's hash: editing a pom (a version bump) fetches anew, and
# an unchanged one costs nothing. Java and Maven come from scripts/install-deps.sh.
set -euo pipefail

pom=$(cd "$(dirname "${1:?usage: fetch-jars.sh POM}")" && pwd)/$(basename "$1")
[ -f "$pom" ] || { echo "fetch-jars: no such pom: $1" >&2; exit 2; }
command -v mvn >/dev/null || { echo "fetch-jars: mvn not found: run scripts/install-deps.sh" >&2; exit 1; }

cache=${OUTBOX_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/outbox-publisher}
name=$(basename "$(dirname "$pom")")
hash=$(sha256sum "$pom" | cut -c1-12)
dest="$cache/$name-$hash"

if [ ! -f "$dest/.complete" ]; then
  mkdir -p "$cache"
  # Into a fresh folder, renamed only once complete: an interrupted fetch (or two
  # tests fetching at once) never leaves a half-filled folder that looks done.
  tmp=$(mktemp -d "$cache/.fetch.XXXXXX")
  trap 'rm -rf "$tmp"' EXIT
  echo "fetch-jars: resolving $pom with Maven (once; cached in $dest)" >&2
  if ! mvn -B -q -f "$pom" dependency:copy-dependencies -DincludeScope=runtime \
      -DoutputDirectory="$tmp/lib" >"$tmp/mvn.log" 2>&1; then
    echo "fetch-jars: Maven failed; its output:" >&2
    tail -n 30 "$tmp/mvn.log" >&2
    exit 1
  fi
  touch "$tmp/.complete"
  if ! mv -T "$tmp" "$dest" 2>/dev/null; then
    [ -f "$dest/.complete" ] || { echo "fetch-jars: cannot fill $dest" >&2; exit 1; }
  fi
  trap - EXIT
fi
echo "$dest/lib"
