#!/usr/bin/env bash
# The full fault-injection suite: builds, then runs outbox-chaos with at least 30
# faults over at least 200k rows (transactions of 1 to 500 rows) and prints its
# figures: committed, delivered, duplicates, faults survived, lost (must be 0),
# per-aggregate order violations (must be 0), longest commit-to-delivery.
#   scripts/chaos.sh [--rows N] [--faults F] [--seed S] [--max-tx-rows R] [--aggregates A]
# CI runs a shorter variant as the ctest `chaos.short` (label chaos).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh" >/dev/null
cmake -S "$root" -B "$build" >/dev/null
cmake --build "$build" -j"$(nproc)" --target outbox-chaos outbox-publisher mock-kafka >/dev/null
exec "$build/outbox-chaos" --rows 200000 --faults 30 --max-tx-rows 500 "$@"
