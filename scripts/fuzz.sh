#!/usr/bin/env bash
# Builds the libFuzzer target with clang + ASan/UBSan and runs it for a bounded time
# on a seed corpus made from the golden fixtures:
#   scripts/fuzz.sh [SECONDS]      (default 60; FUZZ_BUILD_DIR overrides build-fuzz)
# Exits non-zero on any crash, sanitizer report or round-trip mismatch.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-60}
build=${FUZZ_BUILD_DIR:-$root/build-fuzz}
mkdir -p "$build"  # Its logs live inside it, never beside it in the source tree.

CC=clang CXX=clang++ cmake -S "$root" -B "$build" -DOUTBOX_FUZZ=ON -DOUTBOX_TESTS=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build/configure.log" 2>&1 ||
  { cat "$build/configure.log"; exit 1; }
cmake --build "$build" --target pgoutput_fuzz -j"$(nproc)" >"$build/build.log" 2>&1 ||
  { cat "$build/build.log"; exit 1; }

# Seeds: every recorded message in each mode the target understands.
corpus="$build/corpus"
mkdir -p "$corpus"
if [ -z "$(ls -A "$corpus")" ]; then
  n=0
  for f in "$root"/tests/cdc/fixtures/*.hex; do
    # Up to 60 messages per fixture keep the seed set small but varied.
    awk '{print $2}' "$f" | awk '!seen[substr($0,1,2)]++ || NR % 50 == 0' | head -60 |
    while read -r hex; do
      n=$((n + 1))
      { printf '\x01'; echo -n "$hex" | xxd -r -p; } >"$corpus/pg1-$(basename "$f")-$n"
      { printf '\x00w'; head -c 24 /dev/zero; echo -n "$hex" | xxd -r -p; } \
        >"$corpus/w-$(basename "$f")-$n"
    done
  done
fi

cd "$build"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ./tests/fuzz/pgoutput_fuzz -max_total_time="$seconds" -max_len=4096 -timeout=10 \
  -print_final_stats=1 "$corpus" 2>&1 | tail -n 25
status=${PIPESTATUS[0]}
exit "$status"
