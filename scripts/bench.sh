#!/usr/bin/env bash
# The benchmark: builds (Release), then runs every contender on the same backlogs in
# one PostgreSQL cluster per workload (tools/bench/bench.cc says how), then the
# publisher beside Debezium on a real Apache Kafka broker (tools/bench/versus.cc),
# then the micro-benchmarks of the decoder and the mapper, and prints the tables.
# The same figures, with the machine, go to docs/benchmarks.md.
#   scripts/bench.sh [--quick] [-- extra outbox-publisher flags]
# BUILD_DIR overrides the build directory (default: build-release).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build-release}
"$root/scripts/install-deps.sh" >/dev/null
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" -j"$(nproc)" --target outbox-bench outbox-versus codec-bench >/dev/null

out=$(mktemp)
versus=$(mktemp)
trap 'rm -f "$out" "$versus"' EXIT
"$build/outbox-bench" --markdown "$out" "$@"
echo
echo "Beside Debezium, on Apache Kafka:"
"$build/outbox-versus" --markdown "$versus" "$@"
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
    echo "librdkafka $("$build/outbox-publisher" --version | sed -n 's/.*(librdkafka \([^,]*\),.*/\1/p'), publisher, PostgreSQL and"
    echo "mock-kafka all on this one machine. Reproduce with \`scripts/bench.sh\`."
    echo
    echo "How it is measured is in \`tools/bench/bench.cc\`: each contender reads the"
    echo "same backlog from its own slot; *limit* is a raw libpq client that discards"
    echo "CopyData (the faster of blocking and napping when dry); the publisher is"
    echo "timed from its start until its slot is confirmed to the backlog's end, so"
    echo "its figure includes start-up and every acknowledgement. They run in 5"
    echo "rounds, the publisher right after the limit in each, because one run alone"
    echo "swings by a third on a shared machine: rows/s and CPU are medians, the"
    echo "ratio is the median of the rounds' ratios (their lowest and highest beside"
    echo "it), and peak RSS is the highest. CPU is user+sys of all threads, RSS is"
    echo "VmHWM. The publisher runs at its defaults, as a user"
    echo "runs it: the default topic template, its topic auto-created by the broker."
    echo "One workload has mock-kafka answer every request after 1 s, a broker slower"
    echo "than the WAL, so that the in-flight limits, not the backlog, bound memory."
    echo
    echo "The shards table runs 1, 2 and 4 publishers (\`--shard I/N\`, each with its"
    echo "own slot and row-filtered publication, each into a mock-kafka of its own) on"
    echo "one backlog whose slots and publications all exist before it is written, in"
    echo "rounds that alternate the counts. Total rows/s is timed from their start until"
    echo "every shard's slot is confirmed to the backlog's end. Each walsender's CPU is"
    echo "read from /proc while it runs: every one decodes the whole WAL, whatever its"
    echo "filter keeps, so \"primary's decoding CPU\" is what N shards cost"
    echo "PostgreSQL against one publisher. On a machine whose cores the database,"
    echo "the walsenders and the publishers already share, more shards only add"
    echo "decoding: read the total rows/s against the walsenders' CPU, and"
    echo "docs/operations.md for when sharding pays."
    echo
    echo "The standby table publishes the same kind of backlog from a primary of"
    echo "PostgreSQL 16+ (PG_VERSION, else 17) and from a standby of it (\`--pg\` the"
    echo "standby, \`--pg-primary\` the primary), and by 2 shards on the primary against"
    echo "2 shards one per standby, in rounds that alternate the four. \"Primary's"
    echo "walsenders\" is the CPU over the run of every walsender of the primary, its"
    echo "two standbys' included: what publishing costs the primary. \"Decoding\" is the"
    echo "publishers' walsenders, on whichever server. The steady state commits on the"
    echo "primary and times each row to the consumer, the publisher on the primary and"
    echo "then on a standby (whose replay adds its delay)."
    echo
    cat "$out"
    echo
    echo "## Beside Debezium, on Apache Kafka"
    echo
    echo "The same backlogs and steady state into one real Apache Kafka broker"
    echo "(4.1.1, one node, on this machine, with the heap and collector of Kafka's"
    echo "own start scripts: 1 GiB, G1), the publisher at its defaults and"
    echo "Debezium 3.6.1 (Kafka Connect 4.1.1 standalone, PostgreSQL connector with"
    echo "pgoutput, Outbox Event Router), each from its own slot, one after the"
    echo "other (\`tools/bench/versus.cc\`). Debezium's settings, as its documentation"
    echo "advises for throughput, are in \`tools/bench/debezium.sh\`: max.batch.size"
    echo "8192, max.queue.size 32768, poll.interval.ms 5, the Connect producer with"
    echo "acks=all, idempotence and linger.ms 2 (the publisher's), offsets flushed"
    echo "every second (the default, 60 s, would hold its slot back for a minute),"
    echo "heap -Xms256m -Xmx2g (connect-standalone.sh's). Rows/s is from start"
    echo "(JVM start-up included, as the publisher's) until the slot is confirmed"
    echo "past the last commit; CPU includes every JVM thread. The steady state"
    echo "is measured after 15 s of the same traffic unmeasured, for both (a JVM"
    echo "compiles its hot paths under load). The broker side alone is"
    echo "bench-sink-floor paced at the same rate with the publisher's producer"
    echo "settings into the same broker, after the same warm-up, timed by the same"
    echo "consumer: the floor under both contenders' latency on this broker."
    echo "The broker's floor for a backlog is producing alone: bench-sink-floor"
    echo "producing as many envelope-sized records (250 bytes) as fast as it can,"
    echo "with the publisher's producer settings, into the same broker, with no"
    echo "PostgreSQL (timed from its first record to its last acknowledgement, its"
    echo "connection made beforehand, so the floor is if anything high); the column"
    echo "\"/ producing alone\" is each contender's rows/s as a ratio to it."
    echo "The publisher's backlogs run in 3 rounds (rows/s and CPU are medians, the"
    echo "lowest and highest rounds beside them, RSS the highest), each round followed"
    echo "by producing alone, whose medians are the floor; Debezium runs once. Before"
    echo "the first exactly-once round one exactly-once row warms the broker's"
    echo "transaction coordinator (a new broker makes its transaction state topic on"
    echo "the first transaction, about half a second), as on any cluster that has used"
    echo "transactions. The exactly-once / at-least-once line divides the medians; its"
    echo "range divides the lowest by the highest and the highest by the lowest."
    echo "Each steady state has two broker floors: producing alone, and producing"
    echo "alone while PostgreSQL commits the same transactions beside it (no slot, no"
    echo "publisher), since on a small machine the database's own work moves the"
    echo "broker's tail too."
    echo
    cat "$versus"
    echo
    echo "Targets: publisher CPU ≤ 3 µs per row at 1 and 10 rows per"
    echo "transaction (100-byte rows); throughput ≥ 0.95 × the limit at 10 rows per"
    echo "transaction and ≥ the limit at 1, exactly-once ≥ 0.8 ×; on Apache Kafka,"
    echo "exactly-once ≥ 0.95 × at-least-once at 10 rows per transaction; peak RSS ≤"
    echo "64 MiB in every workload; steady-state p99 ≤ 5 ms at 5k rows/s on Apache"
    echo "Kafka. Where one is missed, the floors beside it (the limit's and producing"
    echo "alone's CPU, the broker side's latency) show what stands in the way."
    echo
    echo '```'
    echo "$micro"
    echo '```'
  } >"$root/docs/benchmarks.md"
  echo "wrote docs/benchmarks.md"
fi
