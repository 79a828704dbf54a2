#!/usr/bin/env bash
# Every metric deploy/grafana/outbox.json names exists: a running publisher's and a
# running consumer example's /metrics are read (a throwaway PostgreSQL and
# mock-kafka, one event through both), and each outbox_* name in the dashboard's
# queries must be among their samples. Also: the dashboard is valid JSON with a
# query in every panel.
#   tests/deploy/dashboard_test.sh BUILD_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: dashboard_test.sh BUILD_DIR}" && pwd)
harness=$root/tools/harness
work=$(mktemp -d)
pids=()
cleanup() {
  # Newest first: the programs stop while their broker still answers.
  local i
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    kill "${pids[$i]}" 2>/dev/null || true
    wait "${pids[$i]}" 2>/dev/null || true
  done
  [ -n "${PG_CLUSTER_DIR:-}" ] && "$harness/pg_cluster.sh" stop "$PG_CLUSTER_DIR"
  rm -rf "$work"
}
trap cleanup EXIT

# Waits up to $1 seconds for the command after it to succeed.
wait_for() {
  local deadline=$((SECONDS + $1))
  shift
  until "$@"; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.2
  done
}
scrape() {  # PORT FILE: /metrics into FILE; fails unless it answered 200.
  python3 - "$1" "$2" <<'PY'
import sys, urllib.request
with urllib.request.urlopen("http://127.0.0.1:%s/metrics" % sys.argv[1], timeout=5) as r:
    open(sys.argv[2], "wb").write(r.read())
PY
}

set -a
eval "$("$harness/pg_cluster.sh" start --owner $$)"
set +a
mkfifo "$work/mock.in"
"$build/mock-kafka" --brokers 1 <"$work/mock.in" >"$work/mock.out" 2>/dev/null &
pids+=($!)
exec 3>"$work/mock.in"
wait_for 30 grep -q '^bootstrap=' "$work/mock.out"
brokers=$(sed -n 's/^bootstrap=//p' "$work/mock.out")
echo "topic outbox.event.order 2" >&3
psql -q -v ON_ERROR_STOP=1 -f "$root/scripts/schema.sql"

pg="host=127.0.0.1 port=$PGPORT user=postgres dbname=postgres"
publisher_port=$("$harness/pg_cluster.sh" free-port)
consumer_port=$("$harness/pg_cluster.sh" free-port)
"$build/outbox-publisher" --pg "$pg" --brokers "$brokers" --metrics-port "$publisher_port" \
  --slot-check-interval 1s 2>"$work/publisher.log" &
pids+=($!)
"$build/outbox-paid-orders" --pg "$pg" --brokers "$brokers" \
  --metrics-port "$consumer_port" 2>"$work/consumer.log" &
pids+=($!)
# Rows committed before the slot exists are not in its stream.
wait_for 60 grep -q '"msg":"streaming"' "$work/publisher.log" ||
  { echo "FAIL: the publisher did not stream" >&2; cat "$work/publisher.log" >&2; exit 1; }
psql -q -c "INSERT INTO outbox (aggregate_type, aggregate_id, event_type, payload)
            VALUES ('order', 'o-1', 'OrderPaid', '{\"order\": \"o-1\", \"amount\": 5}')"

# The slot watcher's first reading and the consumer's applied event: every family
# has been written by then.
publisher_ready() {
  scrape "$publisher_port" "$work/publisher.metrics" 2>/dev/null &&
    grep -q '^outbox_publisher_slot_retained_wal_bytes{slot="outbox_publisher"} ' "$work/publisher.metrics" &&
    grep -q '^outbox_publisher_acknowledged_total{slot="outbox_publisher"} 1$' "$work/publisher.metrics"
}
consumer_ready() {
  scrape "$consumer_port" "$work/consumer.metrics" 2>/dev/null &&
    grep -q '^outbox_consumer_applied_total 1$' "$work/consumer.metrics"
}
if ! wait_for 60 publisher_ready || ! wait_for 60 consumer_ready; then
  echo "FAIL: the publisher or the consumer did not publish and apply the event" >&2
  tail -n 20 "$work/publisher.log" "$work/consumer.log" >&2
  exit 1
fi

python3 - "$root/deploy/grafana/outbox.json" "$work/publisher.metrics" \
  "$work/consumer.metrics" <<'PY'
import json, re, sys
dashboard = json.load(open(sys.argv[1]))
exposed = set()
for path in sys.argv[2:]:
    for line in open(path):
        if line and not line.startswith("#"):
            exposed.add(re.split(r"[{ ]", line, 1)[0])
named, failures = set(), []
for panel in dashboard["panels"]:
    if panel["type"] == "row":
        continue
    if not panel.get("targets"):
        failures.append("panel %r has no query" % panel["title"])
    for target in panel.get("targets", []):
        names = set(re.findall(r"outbox_(?:publisher|consumer)_[a-z_]+", target["expr"]))
        if not names:
            failures.append("panel %r: a query names no outbox metric" % panel["title"])
        named |= names
for name in sorted(named - exposed):
    failures.append("the dashboard names %s, which no /metrics serves" % name)
for f in failures:
    print("FAIL: " + f, file=sys.stderr)
if failures:
    sys.exit(1)
print("dashboard_test: %d metrics named, all served" % len(named))
PY
