#!/usr/bin/env bash
# The test command: installs what is missing, configures, builds and runs every test
# (unit, integration, fuzz, chaos) through ctest, the integration tests again on
# PostgreSQL 14 and 18, then the unit and integration tests again under ASan +
# UBSan. CI runs exactly this (.ci/run).
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

# Two at a time: each integration test starts its own PostgreSQL on a free port.
ctest --test-dir "$build" --output-on-failure --no-tests=error -j2 "$@"

# The integration tests again on the oldest and the newest supported PostgreSQL
# (scripts/test-matrix.sh runs every release). Only for a whole run: ctest
# arguments choose a part, which the matrix leaves alone. SKIP_MATRIX=1 skips it.
if [ "${SKIP_MATRIX:-}" != 1 ] && [ $# -eq 0 ]; then
  BUILD_DIR="$build" "$root/scripts/test-matrix.sh" 14 18
fi

# Second pass: the unit and integration tests again, everything built with
# AddressSanitizer + UBSan (SKIP_SANITIZERS=1 skips it for a quick local run).
if [ "${SKIP_SANITIZERS:-}" != 1 ]; then
  asan=${ASAN_BUILD_DIR:-$root/build-asan}
  cmake -S "$root" -B "$asan" -DOUTBOX_SANITIZE=ON -DOUTBOX_WERROR="$werror"
  # Only what this pass runs: the chaos, bench and Kafka binaries are not built.
  cmake --build "$asan" -j"$(nproc)" --target unit-and-integration
  # The backlog memory test measures RSS, which ASan's quarantine of freed memory
  # inflates by design; it runs (and must pass) in the plain build above. So do
  # the failover-slot tests, which spend their time waiting for PostgreSQL's slot
  # sync; the gap and invalidation tests run here, through the re-publishing code.
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --test-dir "$asan" --output-on-failure --no-tests=error -j2 -L 'unit|integration' \
    -E 'BacklogMemoryTest|FailoverSlotTest' "$@"
fi
