#!/usr/bin/env bash
# The test command: installs what is missing, configures, builds and runs every test
# (unit, integration, fuzz, chaos) through ctest, the integration tests again on
# PostgreSQL 14, then the unit and integration tests again under ASan + UBSan on
# PostgreSQL 18 (so CI takes the oldest and the newest release). CI runs exactly
# this (.ci/run).
#   scripts/test.sh [extra ctest arguments, e.g. -L unit or -R Decoded]
# BUILD_DIR overrides the build directory (default: build). With CI=true, compiler
# warnings are errors.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}

"$root/scripts/install-deps.sh"
# The include rule (docs/design.md, "Where the code lives"): a pure file never includes a shell's
# header, and dependencies point down.
"$root/scripts/check-layers.sh"

werror=OFF
if [ "${CI:-}" = true ]; then werror=ON; fi
# The deployment checks' tools (promtool is built with Go: minutes on a fresh
# machine, mostly downloading) are fetched while the project builds; their tests
# would fetch them anyway, and report a failure.
tools_log=$(mktemp)
( "$root/scripts/fetch-tools.sh" promtool && "$root/scripts/fetch-tools.sh" kubernetes-validate ) \
  >"$tools_log" 2>&1 &
tools=$!
cmake -S "$root" -B "$build" -DOUTBOX_WERROR="$werror"
cmake --build "$build" -j"$(nproc)"
wait "$tools" || { echo "test.sh: fetching the deployment tools failed:" >&2; cat "$tools_log" >&2; }
rm -f "$tools_log"

# The sanitizer build (ASan + UBSan, SKIP_SANITIZERS=1 skips that pass for a quick
# local run) compiles while the main pass runs, at idle priority: it takes only
# the CPU the tests leave (most of their time is spent waiting on servers), and
# the tests' timing stays their own.
asan=${ASAN_BUILD_DIR:-$root/build-asan}
if [ "${SKIP_SANITIZERS:-}" != 1 ]; then
  cmake -S "$root" -B "$asan" -DOUTBOX_SANITIZE=ON -DOUTBOX_WERROR="$werror" >/dev/null
  asan_log=$(mktemp)
  idle=(nice -n 19)
  if chrt --idle 0 true 2>/dev/null; then idle=(chrt --idle 0); fi
  # Only what its pass runs: the chaos, bench and Kafka binaries are not built.
  "${idle[@]}" cmake --build "$asan" -j"$(nproc)" --target unit-and-integration \
    >"$asan_log" 2>&1 &
  asan_build=$!
fi

# Two at a time: each integration test starts its own PostgreSQL on a free port.
status=0
ctest --test-dir "$build" --output-on-failure --no-tests=error -j2 "$@" || status=1

# The integration tests again on the oldest supported PostgreSQL; the newest runs in
# the sanitizer pass below (scripts/test-matrix.sh runs every release). Only for a
# whole run: ctest arguments choose a part, which the matrix leaves alone.
# SKIP_MATRIX=1 skips it.
if [ "${SKIP_MATRIX:-}" != 1 ] && [ $# -eq 0 ]; then
  BUILD_DIR="$build" "$root/scripts/test-matrix.sh" 14 || status=1
  # The backlog memory test measures RSS, which ASan inflates: its run on the newest
  # release is here.
  PG_VERSION=18 ctest --test-dir "$build" --output-on-failure --no-tests=error \
    -R BacklogMemoryTest || status=1
fi

# Second pass: the unit and integration tests again, built with AddressSanitizer +
# UBSan, on the newest PostgreSQL (the tests that pin their own releases keep them).
if [ "${SKIP_SANITIZERS:-}" != 1 ]; then
  if ! wait "$asan_build"; then
    tail -n 50 "$asan_log" >&2
    echo "test.sh: building the sanitizer pass failed (above: the end of its output)" >&2
    exit 1
  fi
  rm -f "$asan_log"
  "$root/scripts/fetch-postgres.sh" 18 >/dev/null
  # The backlog memory test measures RSS, which ASan's quarantine of freed memory
  # inflates by design; it runs (and must pass) in the plain build above. So do
  # the failover-slot tests, which spend their time waiting for PostgreSQL's slot
  # sync; the gap and invalidation tests run here, through the re-publishing code.
  # A sanitizer build reports its own crashes (and aborts): the crash report's test
  # is the plain build's.
  PG_VERSION=18 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
    UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir "$asan" --output-on-failure --no-tests=error -j2 -L 'unit|integration' \
    -E 'BacklogMemoryTest|FailoverSlotTest|publisher\.crash_report' "$@" || status=1
fi
exit $status
