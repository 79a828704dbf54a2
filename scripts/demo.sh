#!/usr/bin/env bash
# The main job, end to end, on embedded defaults: builds outbox-publisher, starts a
# throwaway PostgreSQL 15 (wal_level=logical) and a local Kafka-protocol broker
# (mock-kafka, on librdkafka's mock cluster), creates the outbox table, runs the
# pre-flight check and the publisher, writes sample events in transactions, shows
# them consumed from Kafka and decoded, then /healthz and a few lines of /metrics,
# and last the consumer half: the example service (outbox-paid-orders) applies the
# OrderPaid event to its table once, even when the topic is read again.
# Everything it started is stopped and deleted on exit.
#   scripts/demo.sh          mock-kafka: quick, nothing to fetch
#   scripts/demo.sh --kafka  a real Apache Kafka broker (KRaft), its jars fetched from
#                            Maven Central once and cached (tools/harness/kafka_cluster.sh)
set -euo pipefail
real_kafka=0
case "${1:-}" in
  --kafka) real_kafka=1 ;;
  "") ;;
  *) echo "usage: scripts/demo.sh [--kafka]" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }

say "Installing dependencies and building"
"$root/scripts/install-deps.sh"
cmake -S "$root" -B "$build" >/dev/null
cmake --build "$build" -j"$(nproc)" --target outbox-publisher mock-kafka \
  outbox-paid-orders >/dev/null

work=$(mktemp -d)
publisher_pid=""
consumer_pid=""
cleanup() {
  [ -n "$publisher_pid" ] && kill "$publisher_pid" 2>/dev/null && wait "$publisher_pid" 2>/dev/null
  [ -n "$consumer_pid" ] && kill "$consumer_pid" 2>/dev/null && wait "$consumer_pid" 2>/dev/null
  [ -n "${mock_pid:-}" ] && kill "$mock_pid" 2>/dev/null
  [ -n "${PG_CLUSTER_DIR:-}" ] && "$root/tools/harness/pg_cluster.sh" stop "$PG_CLUSTER_DIR"
  [ -n "${KAFKA_CLUSTER_DIR:-}" ] && "$root/tools/harness/kafka_cluster.sh" stop "$KAFKA_CLUSTER_DIR"
  rm -rf "$work"
}
trap cleanup EXIT

say "Starting a throwaway PostgreSQL 15 and a local Kafka-protocol broker"
out=$("$root/tools/harness/pg_cluster.sh" start --owner $$)
set -a; eval "$out"; set +a
echo "PostgreSQL on 127.0.0.1:$PGPORT (data in $PG_CLUSTER_DIR)"
if [ $real_kafka = 1 ]; then
  echo "Starting Apache Kafka (KRaft, one node; the first run fetches its jars with Maven)"
  out=$("$root/tools/harness/kafka_cluster.sh" start --owner $$ --brokers 1)
  eval "$out"
  brokers=$KAFKA_BOOTSTRAP
  "$root/tools/harness/kafka_cluster.sh" topic "$KAFKA_CLUSTER_DIR" outbox.event.order 3 1
  echo "Apache Kafka broker at $brokers (data in $KAFKA_CLUSTER_DIR)"
else
  mkfifo "$work/mock.in"
  "$build/mock-kafka" --brokers 1 <"$work/mock.in" >"$work/mock.out" 2>"$work/mock.err" &
  mock_pid=$!
  exec 3>"$work/mock.in"  # Holds mock-kafka's stdin open; it exits when we do.
  for _ in $(seq 1 100); do grep -q '^bootstrap=' "$work/mock.out" && break; sleep 0.1; done
  brokers=$(sed -n 's/^bootstrap=//p' "$work/mock.out")
  echo "topic outbox.event.order 3" >&3
  echo "Kafka broker (mock-kafka) at $brokers"
fi

say "Creating the outbox table (scripts/schema.sql)"
psql -q -v ON_ERROR_STOP=1 -f "$root/scripts/schema.sql"
psql -q -c "CREATE TABLE orders (id text PRIMARY KEY, total numeric NOT NULL)"

pg="host=127.0.0.1 port=$PGPORT user=postgres dbname=postgres"
say "Pre-flight check (outbox-publisher --check): reads both sides, creates nothing"
"$build/outbox-publisher" --check --pg "$pg" --brokers "$brokers" | sed 's/^/  /'

metrics_port=$("$root/tools/harness/pg_cluster.sh" free-port)
say "Running outbox-publisher (metrics on 127.0.0.1:$metrics_port)"
"$build/outbox-publisher" --pg "$pg" \
  --brokers "$brokers" --log-format text --status-interval 1s --log-stats-every 5s \
  --metrics-port "$metrics_port" --slot-check-interval 1s --message-prefix outbox \
  2>"$work/publisher.log" &
publisher_pid=$!
for _ in $(seq 1 100); do grep -q ' streaming ' "$work/publisher.log" && break; sleep 0.1; done
sed 's/^/  publisher | /' "$work/publisher.log"

say "Writing business changes and their events in the same transactions"
psql -q <<'SQL'
BEGIN;
INSERT INTO orders VALUES ('o-1', 42.50);
INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload, headers)
VALUES ('order', 'o-1', 'OrderCreated', '{"order": "o-1", "total": 42.50}', '{"trace_id": "t-100"}');
COMMIT;
BEGIN;
UPDATE orders SET total = 40 WHERE id = 'o-1';
INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload)
VALUES ('order', 'o-1', 'OrderDiscounted', '{"order": "o-1", "total": 40}');
COMMIT;
BEGIN;
INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload)
VALUES ('order', 'o-1', 'OrderPaid', '{"order": "o-1", "amount": 40}');
COMMIT;
BEGIN;  -- the "keep the table empty" pattern: insert, then delete, in one transaction
INSERT INTO orders VALUES ('o-2', 7);
INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload)
VALUES ('order', 'o-2', 'OrderCreated', '{"order": "o-2", "total": 7}');
-- (a separate statement: a data-modifying CTE's DELETE would not see the new row)
DELETE FROM outbox WHERE aggregate_id = 'o-2';
COMMIT;
BEGIN;  -- rolled back: never published
INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload)
VALUES ('order', 'o-3', 'NeverHappened', '{}');
ROLLBACK;
SQL
psql -Atc "SELECT count(*) || ' row(s) left in outbox' FROM outbox"

say "The same without a table: outbox_emit() (--message-prefix outbox), WAL only"
psql -q -At <<'SQL'
BEGIN;
UPDATE orders SET total = 38 WHERE id = 'o-1';
SELECT 'emitted event ' || outbox_emit('order', 'o-1', 'OrderDiscounted',
                                       '{"order": "o-1", "total": 38}',
                                       '{"trace_id": "t-101"}');
COMMIT;
SQL
psql -Atc "SELECT count(*) || ' row(s) in outbox, as before: the event added none' FROM outbox"

say "Consuming outbox.event.order from Kafka"
kcat -b "$brokers" -C -t outbox.event.order -o beginning -c 5 -e -q -m 30 \
  -f 'partition %p offset %o key=%k headers=%h\n' | tee "$work/consumed.txt"

say "Decoding each value (protoc --decode outbox.v1.Envelope)"
sed -E 's/^partition ([0-9]+) offset ([0-9]+).*/\1 \2/' "$work/consumed.txt" |
while read -r p o; do
  echo "--- partition $p offset $o"
  kcat -b "$brokers" -C -t outbox.event.order -p "$p" -o "$o" -c 1 -e -q -m 30 -f '%s' |
    protoc --decode=outbox.v1.Envelope -I "$root/proto" -I /usr/include \
      "$root/proto/outbox/v1/envelope.proto" | sed 's/^/  /'
done

say "The slot was confirmed only after the broker acknowledged"
for _ in $(seq 1 100); do
  caught_up=$(psql -Atc "SELECT confirmed_flush_lsn = pg_current_wal_lsn() FROM pg_replication_slots")
  [ "$caught_up" = t ] && break
  sleep 0.1
done
psql -c "SELECT slot_name, plugin, confirmed_flush_lsn, pg_current_wal_lsn() FROM pg_replication_slots"

say "The consumer half: outbox-paid-orders applies OrderPaid events once each"
# examples/paid_orders: each event's effect and its id in processed_messages, in one
# PostgreSQL transaction; the Kafka offset is committed after that.
consume() {  # GROUP: runs the example service until it has read all 5 events.
  "$build/outbox-paid-orders" --pg "$pg" --brokers "$brokers" --group "$1" \
    --log-format text --log-stats-every 1s 2>"$work/consumer-$1.log" &
  consumer_pid=$!
  for _ in $(seq 1 300); do
    read_events=$(sed -nE 's/.*consumer stats.* applied=([0-9]+) duplicates=([0-9]+).*/\1 \2/p' \
      "$work/consumer-$1.log" | tail -n1 | awk '{print $1 + $2}')
    [ "${read_events:-0}" -ge 5 ] && break
    sleep 0.1
  done
  kill -TERM "$consumer_pid"
  wait "$consumer_pid" || true
  consumer_pid=""
  grep -E ' (consuming|stopped) ' "$work/consumer-$1.log" | sed 's/^/  consumer | /'
}
consume paid-orders
psql -c "SELECT order_id, payments, paid FROM order_payments"
echo "Reading the whole topic again (a new consumer group, as a rewind would):"
consume paid-orders-replay
psql -c "SELECT order_id, payments, paid FROM order_payments"
echo "The second reading found every id in processed_messages: nothing applied twice."

say "Is it healthy? GET /healthz and /readyz, and a few lines of GET /metrics"
# bash's /dev/tcp: no HTTP client needed.
http_get() {
  exec 4<>"/dev/tcp/127.0.0.1/$metrics_port"
  printf 'GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n' "$1" >&4
  sed -e '1,/^\r*$/d' <&4
  exec 4<&-
}
for _ in $(seq 1 50); do
  grep -q 'retained_wal' <(http_get /metrics) && break
  sleep 0.1
done
echo "  /healthz (the active publisher, streaming): $(http_get /healthz)"
echo "  /readyz (doing its job, as active or as a standby that could take over): $(http_get /readyz)"
http_get /metrics | grep -E '^outbox_publisher_(active|acknowledged_total|in_flight_messages|lag_bytes|lag_seconds|oldest_unacked_age_seconds|slot_retained_wal_bytes|commit_to_ack_seconds_count|errors_total)' |
  sed 's/^/  /'

say "Stopping the publisher (SIGTERM): it drains, confirms and exits 0"
kill -TERM "$publisher_pid"
wait "$publisher_pid" && echo "exit code 0"
publisher_pid=""
tail -n 3 "$work/publisher.log" | sed 's/^/  publisher | /'
