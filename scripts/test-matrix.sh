#!/usr/bin/env bash
# The integration tests on each supported PostgreSQL release: every test labelled
# `integration` runs with PG_VERSION set, so each throwaway cluster is of that
# release (tools/harness/pg_cluster.sh; releases other than Debian's 15 are pinned
# prebuilt servers that scripts/fetch-postgres.sh fetches once). The failover tests
# pin their own releases (16, 17, 18) and run in the main pass only, and so do the
# tests whose subject is the broker side alone (PostgreSQL is only their backdrop).
#   scripts/test-matrix.sh [MAJOR ...] [-- ctest arguments]
# With no MAJOR: every pinned release (14 to 18). scripts/test.sh runs 14, the
# oldest, beside the main pass on 15; the newest, 18, it runs in its sanitizer
# pass. BUILD_DIR as in test.sh; the build must exist (scripts/test.sh makes it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}

versions=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do versions+=("$1"); shift; done
[ "${1:-}" = -- ] && shift
if [ ${#versions[@]} -eq 0 ]; then
  mapfile -t versions < <("$root/scripts/fetch-postgres.sh" --list | cut -d' ' -f1)
fi
[ -d "$build" ] || { echo "test-matrix: no build in $build: run scripts/test.sh first" >&2; exit 2; }
cmake --build "$build" -j"$(nproc)" >/dev/null

main_pass_only='FailoverSlotTest|GapTest|FailoverFixture|harness\.mock_kafka|MockTransactionsTest'
main_pass_only+='|CheckpointReaderTest|KafkaTransactionsTest|UnreachableBrokersExitTwo'
main_pass_only+='|CheckFailsKafkaProblems|HealthTurnsUnhealthyWhenNothingIsAcknowledged'
# The pair's language test starts Debian's 15 itself (its translations), whatever
# PG_VERSION says: another pass would run the same server again.
main_pass_only+='|StandbyPairTest'
# Publishing from a standby picks its releases itself (16, 17 and 18).
main_pass_only+='|StandbyPublishTest|StandbyFaultTest|StandbyFixture'
# fault-proxy's own tests use no PostgreSQL.
main_pass_only+='|FaultProxyTest'

status=0
for v in "${versions[@]}"; do
  echo "=== PostgreSQL $v"
  # Fetched before the tests start, so no test's time goes into the download.
  if [ "$v" != 15 ] || [ ! -x /usr/lib/postgresql/15/bin/initdb ]; then
    "$root/scripts/fetch-postgres.sh" "$v" >/dev/null
  fi
  PG_VERSION=$v ctest --test-dir "$build" --output-on-failure --no-tests=error -j2 \
    -L integration -E "$main_pass_only" "$@" || status=1
done
exit $status
