#!/usr/bin/env bash
# The consumer kit's fault run: on a real Apache Kafka broker, kills
# the publisher and two consumers of the example service (outbox-paid-orders) at
# random while events flow, kill -9 or SIGTERM, then checks in the database that
# every committed event's effect was applied exactly once, none that was not
# committed, and each order's events in commit order. Prints the figures.
#   scripts/consumer-chaos.sh [FAULTS]     default 60
# ctest runs the same test with 12 faults (kafka.consumer).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh" >/dev/null
cmake -S "$root" -B "$build" >/dev/null
cmake --build "$build" -j"$(nproc)" --target consumer_kafka_tests >/dev/null
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
OUTBOX_CONSUMER_CHAOS_FAULTS=${1:-60} "$build/tests/consumer_kafka_tests" \
  --gtest_filter='*KillsOfThePublisherAndConsumersAtRandom*' >"$log" 2>&1 || status=$?
grep -vE '^%[0-9]\|' "$log" || true  # Without librdkafka's own log lines.
exit $status
