#!/usr/bin/env bash
# The example consumers of examples/consumers/ (Python, Go, Java) against events
# the publisher wrote: a throwaway PostgreSQL and a one-node Apache Kafka, 24 outbox
# rows over 6 aggregates, published by outbox-publisher, and one record delivered a
# second time (copied back into its topic, as a redelivery after a publisher
# restart would be). Each example then runs in a database of its own; the test
# checks that each event was applied once: 24 ids claimed, each aggregate's count of
# effects equal to its rows, 24 "applied" lines and one "duplicate".
#
#   tests/examples/consumers_test.sh BUILD_DIR [python|go|java ...]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:?usage: consumers_test.sh BUILD_DIR [LANGUAGE...]}
shift
languages=("$@")
[ ${#languages[@]} -gt 0 ] || languages=(python go java)
rows=24
work=$(mktemp -d "${TMPDIR:-/tmp}/outbox-examples.XXXXXX")
publisher=""
cleanup() {
  [ -n "$publisher" ] && kill -9 "$publisher" 2>/dev/null || true
  [ -n "${PG_CLUSTER_DIR:-}" ] && "$root/tools/harness/pg_cluster.sh" stop "$PG_CLUSTER_DIR" || true
  [ -n "${KAFKA_CLUSTER_DIR:-}" ] &&
    "$root/tools/harness/kafka_cluster.sh" stop "$KAFKA_CLUSTER_DIR" || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# wait_for SECONDS COMMAND...: polls COMMAND until it succeeds, or fails the test.
wait_for() {
  local deadline=$((SECONDS + $1)) what=$2
  shift 2
  until "$@"; do
    [ $SECONDS -lt $deadline ] || fail "timed out waiting for $what"
    sleep 0.2
  done
}

set -a
eval "$("$root/tools/harness/pg_cluster.sh" start --owner $$)"
eval "$("$root/tools/harness/kafka_cluster.sh" start --owner $$ --brokers 1)"
set +a
psql -q -v ON_ERROR_STOP=1 -f "$root/scripts/schema.sql" >/dev/null
"$root/tools/harness/kafka_cluster.sh" topic "$KAFKA_CLUSTER_DIR" outbox.event.order 3 1 >/dev/null

conninfo="host=$PGHOST port=$PGPORT user=$PGUSER dbname=$PGDATABASE"
"$build/outbox-publisher" --pg "$conninfo" --brokers "$KAFKA_BOOTSTRAP" \
  --status-interval 200ms >"$work/publisher.log" 2>&1 &
publisher=$!
streaming() { grep -qs '"msg":"streaming"' "$work/publisher.log"; }
wait_for 60 "the publisher to stream" streaming
psql -q -v ON_ERROR_STOP=1 -c "
  INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload)
  SELECT 'order', 'o-' || (n % 6), 'OrderPaid', jsonb_build_object('n', n)
  FROM generate_series(1, $rows) n"
caught_up() {
  [ "$(psql -At -c "SELECT confirmed_flush_lsn >= pg_current_wal_insert_lsn()
                    FROM pg_replication_slots WHERE slot_name = 'outbox_publisher'")" = t ]
}
wait_for 60 "the publisher to confirm every row" caught_up
kill -TERM "$publisher"
wait "$publisher" || fail "the publisher exited $?: $(tail -5 "$work/publisher.log")"
publisher=""

# One record again, as a redelivery: the same key, value and headers.
/usr/bin/python3 - "$KAFKA_BOOTSTRAP" <<'PY' || fail "could not redeliver a record"
import sys
from confluent_kafka import Consumer, Producer
bootstrap = sys.argv[1]
c = Consumer({"bootstrap.servers": bootstrap, "group.id": "redeliver",
              "auto.offset.reset": "earliest", "enable.auto.commit": False})
c.subscribe(["outbox.event.order"])
m = None
while m is None or m.error():
    m = c.poll(1.0)
p = Producer({"bootstrap.servers": bootstrap, "enable.idempotence": True})
p.produce("outbox.event.order", key=m.key(), value=m.value(), headers=m.headers(),
          partition=m.partition())
if p.flush(30) != 0:
    sys.exit(1)
c.close()
PY

proto_dir="$root/proto"
run_python() {
  # As its README says: a virtualenv with requirements.txt's pinned versions.
  mkdir -p "$work/python"
  python3 -m venv "$work/venv"
  "$work/venv/bin/pip" install -q -r "$root/examples/consumers/python/requirements.txt"
  protoc --python_out="$work/python" -I "$proto_dir" "$proto_dir/outbox/v1/envelope.proto"
  OUTBOX_PROTO_PY="$work/python" "$work/venv/bin/python" \
    "$root/examples/consumers/python/consumer.py"
}
run_go() {
  "$root/examples/consumers/go/run.sh"
}
run_java() {
  "$root/examples/consumers/java/run.sh"
}

export -f run_python run_go run_java
export work root proto_dir
status=0
for language in "${languages[@]}"; do
  db="example_$language"
  psql -q -c "CREATE DATABASE $db"
  out="$work/$language.out"
  echo "--- $language"
  if ! KAFKA_BOOTSTRAP="$KAFKA_BOOTSTRAP" TOPICS=outbox.event.order GROUP="$language-example" \
       DATABASE_URL="host=127.0.0.1 port=$PGPORT user=$PGUSER dbname=$db" \
       EXIT_AFTER=$((rows + 1)) timeout 600 bash -c "run_$language" >"$out" \
       2>"$work/$language.err"; then
    echo "FAIL: the $language example exited non-zero:" >&2
    tail -20 "$work/$language.err" >&2
    status=1
    continue
  fi
  applied=$(grep -c '^applied ' "$out" || true)
  duplicates=$(grep -c '^duplicate ' "$out" || true)
  claimed=$(psql -At -d "$db" -c "SELECT count(*) FROM processed_messages")
  expected_effects=$(psql -At -c "SELECT string_agg(aggregate_id || '=' || n, ',' ORDER BY aggregate_id)
    FROM (SELECT aggregate_id, count(*) AS n FROM outbox GROUP BY 1) x")
  effects=$(psql -At -d "$db" -c "SELECT string_agg(aggregate_id || '=' || events, ',' ORDER BY aggregate_id)
    FROM example_effects")
  echo "$language: applied $applied, duplicates $duplicates, ids claimed $claimed, effects $effects"
  if [ "$applied" != "$rows" ] || [ "$duplicates" != 1 ] || [ "$claimed" != "$rows" ] ||
     [ "$effects" != "$expected_effects" ]; then
    echo "FAIL: $language: expected $rows applied, 1 duplicate, $rows claimed, effects $expected_effects" >&2
    head -40 "$out" >&2
    status=1
  fi
done
[ $status -eq 0 ] && echo "consumers_test: ok (${languages[*]})"
exit $status
