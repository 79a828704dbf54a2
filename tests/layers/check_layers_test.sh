#!/usr/bin/env bash
# scripts/check-layers.sh passes on this tree and fails on each kind of breach,
# planted in a copy: a pure file including a library's shell header, a pure file
# including a shell of ours, a folder including from a folder above it, the product
# including the tools or the tests, and a new folder with no place in the rule. Then
# the build's side of the rule: configuring fails when a pure library is made to
# link librdkafka (outbox_pure_library in CMakeLists.txt).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
check=$root/scripts/check-layers.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$check" "$root" >/dev/null

fresh() {  # A copy of the tree in $work/tree.
  rm -rf "$work/tree" && mkdir "$work/tree"
  cp -r "$root"/{cdc,common,publisher,consumer,examples,proto,packaging,tools} \
    "$root"/CMakeLists.txt \
    "$work/tree"/
  # Configuring builds (or finds cached) the pinned librdkafka.
  mkdir "$work/tree/scripts" && cp "$root/scripts/fetch-librdkafka.sh" "$work/tree/scripts/"
}
plant() {  # plant FILE LINE: a fresh copy with LINE appended to FILE must fail.
  fresh
  echo "$2" >>"$work/tree/$1"
  if "$check" "$work/tree" 2>"$work/err"; then
    echo "FAIL: not caught: $1 with $2" >&2
    exit 1
  fi
  grep -q "^$1:" "$work/err" || { echo "FAIL: not named: $1" >&2; cat "$work/err" >&2; exit 1; }
}
plant publisher/mapping/mapper.cc '#include <librdkafka/rdkafka.h>'
plant publisher/delivery/checkpoint.h '#include <libpq-fe.h>'
plant publisher/operations/metrics.cc '#include <httplib.h>'
plant publisher/relay/relay.cc '#include "publisher/kafka/kafka_sink.h"'
plant consumer/handler.h '#include "common/postgres/sql_connection.h"'
plant publisher/mapping/json_scan.h '#include "publisher/relay/relay.h"'
plant publisher/kafka/kafka_sink.h '#include "publisher/program/config.h"'
plant consumer/apply_once.cc '#include "consumer/kafka/kafka_source.h"'
plant cdc/pgoutput.cc '#include "common/postgres/sql_connection.h"'
# Delivery is below mapping, and operations above the relay.
plant publisher/delivery/sink.h '#include "publisher/mapping/mapper.h"'
plant publisher/relay/relay.cc '#include "publisher/operations/metrics.h"'
# The product and the examples never use the tools or the tests; the tools never
# use the tests; the harness is below the fault suite and the benchmarks.
plant publisher/relay/relay.cc '#include "tools/harness/pg_cluster.h"'
plant cdc/pgoutput.h '#include "tests/test_util.h"'
plant consumer/handler.h '#include "examples/paid_orders/paid_orders.h"'
plant examples/paid_orders/main.cc '#include "tools/harness/processes.h"'
plant tools/chaos/verifier.cc '#include "tests/test_util.h"'
plant tools/harness/shell.cc '#include "tools/chaos/audit.h"'
plant tools/bench/support.h '#include "tools/chaos/verifier.h"'
# A new folder of sources must be given its place in the rule.
unplaced() {  # unplaced DIR FILE: a fresh copy with DIR/FILE added must fail, naming DIR.
  fresh
  mkdir -p "$work/tree/$1" && echo '// x' >"$work/tree/$1/$2"
  if "$check" "$work/tree" 2>"$work/err"; then
    echo "FAIL: $1, a folder with no place in the rule, passed" >&2
    exit 1
  fi
  grep -q "^$1: a folder of sources with no place" "$work/err" ||
    { echo "FAIL: $1 not named" >&2; cat "$work/err" >&2; exit 1; }
}
unplaced publisher/newpart x.h
unplaced tools/newtool x.cc

# The build: a pure library that links librdkafka does not configure.
fresh
sed -i 's|LIBS publisher_delivery cdc_core outbox_proto absl::time|LIBS publisher_delivery cdc_core rdkafka outbox_proto absl::time|' \
  "$work/tree/CMakeLists.txt"
grep -q 'cdc_core rdkafka outbox_proto' "$work/tree/CMakeLists.txt" ||
  { echo "FAIL: could not plant the link in CMakeLists.txt" >&2; exit 1; }
if cmake -S "$work/tree" -B "$work/build" -DOUTBOX_TESTS=OFF >"$work/cmake.log" 2>&1; then
  echo "FAIL: a pure library linking librdkafka configured" >&2
  exit 1
fi
grep -q "publisher_mapping is pure logic: it may not link rdkafka" "$work/cmake.log" ||
  { echo "FAIL: configuring failed for another reason:" >&2; cat "$work/cmake.log" >&2; exit 1; }
echo "check_layers_test: ok"
