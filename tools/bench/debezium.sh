#!/usr/bin/env bash
# Debezium beside the publisher in the benchmark: Kafka Connect
# standalone with Debezium's PostgreSQL connector (pgoutput) and its Outbox Event
# Router, from the jars of tools/bench/debezium/pom.xml (fetched and cached by
# scripts/fetch-jars.sh). One JVM; its folder (configs, offsets, log) is deleted
# by `stop`, and by a watchdog when the owner exits.
#
#   debezium.sh start --owner PID --bootstrap HOST:PORT,... --pg-port PORT
#                     --slot NAME --publication NAME --table SCHEMA.TABLE[,...]
#                     [--topic-prefix PREFIX] [--value-converter CLASS]
#                     [--type-header yes|no]
#       starts Connect with the connector and prints on stdout:
#         DEBEZIUM_DIR=... DEBEZIUM_PID=...
#       The slot and the publication must exist (the benchmark makes them, before
#       the backlog it measures); the connector takes no snapshot and streams from
#       the slot. Rows go to PREFIX<aggregate_type> (default prefix
#       "debezium.outbox.event."), keyed by aggregate_id, with the id and
#       event_type (header "type"; --type-header no leaves it out, the router's
#       default) in headers, the payload as the value: its text with the default
#       StringConverter, a bytea's bytes with io.debezium.converters.BinaryDataConverter.
#   debezium.sh stop DIR
#
# The settings follow Debezium's documentation for throughput (a larger batch
# and queue than the defaults, a short poll interval) and give the Connect
# producer the publisher's own: acks=all, idempotence, linger.ms=2. Connect
# flushes offsets every second (offset.flush.interval.ms=1000 rather than 60 s),
# and Debezium confirms the slot after each flush: so "everything acknowledged and
# confirmed" is not held back by a long flush interval.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
self_path="$here/$(basename "$0")"

die() { echo "debezium: $*" >&2; exit 1; }

cmd_stop() {
  local dir=$1
  [ -d "$dir" ] || return 0
  if [ -s "$dir/pid" ]; then
    kill -9 "$(cat "$dir/pid")" 2>/dev/null || true
  fi
  rm -rf "$dir"
}

cmd_start() {
  local owner="" bootstrap="" pg_port="" slot="" publication="" table=""
  local prefix="debezium.outbox.event."
  local converter="org.apache.kafka.connect.storage.StringConverter" type_header=yes
  while [ $# -gt 0 ]; do
    case "$1" in
      --owner) owner=$2; shift 2 ;;
      --bootstrap) bootstrap=$2; shift 2 ;;
      --pg-port) pg_port=$2; shift 2 ;;
      --slot) slot=$2; shift 2 ;;
      --publication) publication=$2; shift 2 ;;
      --table) table=$2; shift 2 ;;
      --topic-prefix) prefix=$2; shift 2 ;;
      --value-converter) converter=$2; shift 2 ;;
      --type-header) type_header=$2; shift 2 ;;
      *) die "unknown option $1" ;;
    esac
  done
  [ -n "$owner" ] && [ -n "$bootstrap" ] && [ -n "$pg_port" ] && [ -n "$slot" ] &&
    [ -n "$publication" ] && [ -n "$table" ] || die "start needs every option: see the top of $0"
  command -v java >/dev/null || die "java not found: run scripts/install-deps.sh"
  local lib
  lib=$("$root/scripts/fetch-jars.sh" "$here/debezium/pom.xml") ||
    die "cannot fetch Debezium's jars"

  local dir
  dir=$(mktemp -d "${TMPDIR:-/tmp}/outbox-debezium.XXXXXX")
  setsid bash -c '
    owner=$1 dir=$2 self=$3
    while kill -0 "$owner" 2>/dev/null && [ -d "$dir" ]; do sleep 1; done
    "$self" stop "$dir"
  ' watchdog "$owner" "$dir" "$self_path" </dev/null >/dev/null 2>&1 &

  local rest_port
  rest_port=$("$root/tools/harness/pg_cluster.sh" free-port)
  cat >"$dir/worker.properties" <<PROPS
bootstrap.servers=$bootstrap
key.converter=org.apache.kafka.connect.storage.StringConverter
value.converter=org.apache.kafka.connect.storage.StringConverter
offset.storage.file.filename=$dir/offsets
offset.flush.interval.ms=1000
listeners=http://127.0.0.1:$rest_port
plugin.discovery=only_scan
producer.acks=all
producer.enable.idempotence=true
producer.linger.ms=2
producer.batch.size=262144
producer.max.request.size=1048576
PROPS
  cat >"$dir/connector.properties" <<PROPS
name=outbox-debezium
connector.class=io.debezium.connector.postgresql.PostgresConnector
tasks.max=1
plugin.name=pgoutput
database.hostname=127.0.0.1
database.port=$pg_port
database.user=postgres
database.dbname=postgres
topic.prefix=bench
slot.name=$slot
publication.name=$publication
publication.autocreate.mode=disabled
table.include.list=$table
snapshot.mode=no_data
tombstones.on.delete=false
max.batch.size=8192
max.queue.size=32768
poll.interval.ms=5
transforms=outbox
transforms.outbox.type=io.debezium.transforms.outbox.EventRouter
transforms.outbox.table.field.event.id=id
transforms.outbox.table.field.event.key=aggregate_id
transforms.outbox.table.field.event.payload=payload
transforms.outbox.route.by.field=aggregate_type
transforms.outbox.route.topic.replacement=$prefix\${routedByValue}
value.converter=$converter
PROPS
  if [ "$type_header" = yes ]; then
    echo "transforms.outbox.table.fields.additional.placement=event_type:header:type" \
      >>"$dir/connector.properties"
  fi
  cat >"$dir/log4j2.properties" <<'LOG'
status = error
appender.file.type = File
appender.file.name = file
appender.file.fileName = ${sys:debezium.dir}/connect.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = file
LOG
  # exec: the pid file names the JVM itself, for CPU and memory readings.
  setsid bash -c 'echo $$ >"$1/pid"; shift; exec "$@"' connect "$dir" \
    java -Xms256m -Xmx2g -Dlog4j2.configurationFile="$dir/log4j2.properties" \
    -Ddebezium.dir="$dir" -cp "$lib/*" org.apache.kafka.connect.cli.ConnectStandalone \
    "$dir/worker.properties" "$dir/connector.properties" \
    </dev/null >>"$dir/stdout.log" 2>&1 &
  local waited=0
  while [ ! -s "$dir/pid" ] && [ $waited -lt 100 ]; do sleep 0.05; waited=$((waited + 1)); done
  [ -s "$dir/pid" ] || { cmd_stop "$dir"; die "Kafka Connect did not start"; }
  cat <<OUT
DEBEZIUM_DIR=$dir
DEBEZIUM_PID=$(cat "$dir/pid")
OUT
}

cmd=${1:-}
shift || true
case "$cmd" in
  start) cmd_start "$@" ;;
  stop) cmd_stop "${1:?usage: debezium.sh stop DIR}" ;;
  *) sed -n '2,24p' "$0" >&2; exit 2 ;;
esac
