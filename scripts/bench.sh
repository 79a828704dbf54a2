#!/usr/bin/env bash
# The benchmark: builds (Release), then runs every contender on the same backlogs in
# one PostgreSQL cluster per workload (tests/bench/bench.cc says how), then the
# micro-benchmarks of the decoder and the mapper, and prints the tables. The same
# figures, with the machine, go to docs/benchmarks.md.
#   scripts/bench.sh [--quick] [-- extra outbox-publisher flags]
# BUILD_DIR overrides the build directory (default: build-release).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-release}
"$root/scripts/install-deps.sh" >/dev/null
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target outbox-bench codec-bench >/dev/null

out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$build/outbox-bench" --markdown "$out" "$@"
echo
echo "Micro-benchmarks (CPU per row, one thread):"
micro=$("$build/codec-bench" --benchmark_min_time=0.5 2>/dev/null)
echo "$micro"

quick=false
for a in "$@"; do [ "$a" = --quick ] && quick=true; done
if [ "$quick" = false ]; then
  {
    echo "# Benchmarks"
    echo
    echo "Measured by \`scripts/bench.sh\` on $(date -u +%Y-%m-%d): $(nproc) cores,"
    echo "$(awk -F': ' '/model name/ {print $2; exit}' /proc/cpuinfo),"
    echo "$(free -g | awk '/Mem:/ {print $2}') GiB, $(. /etc/os-release; echo "$PRETTY_NAME"),"
    echo "PostgreSQL $(/usr/lib/postgresql/15/bin/postgres --version | awk '{print $3}'),"
    echo "librdkafka $(pkg-config --modversion rdkafka), publisher, PostgreSQL and"
    echo "mock-kafka all on this one machine. Reproduce with \`scripts/bench.sh\`."
    echo
    echo "How it is measured is in \`tests/bench/bench.cc\`: each contender reads the"
    echo "same backlog from its own slot; *limit* is a raw libpq client that discards"
    echo "CopyData (the faster of a run before and after the others); the publisher is"
    echo "timed from its start until its slot is confirmed to the backlog's end, so"
    echo "its figure includes start-up and every acknowledgement. CPU is user+sys of"
    echo "all its threads; RSS is VmHWM."
    echo
    cat "$out"
    echo
    echo "Targets (issue 8): publisher CPU ≤ 3 µs per row in every 100-byte workload;"
    echo "throughput ≥ 0.95 × the limit at 10 rows per transaction and ≥ the limit at 1;"
    echo "peak RSS ≤ 64 MiB; steady-state p99 ≤ 8 ms at 5k rows/s."
    echo
    echo '```'
    echo "$micro"
    echo '```'
  } >"$root/docs/benchmarks.md"
  echo "wrote docs/benchmarks.md"
fi
