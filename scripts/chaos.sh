#!/usr/bin/env bash
# The full fault-injection suite: builds, then runs outbox-chaos once per schedule,
# each over at least 300k rows (transactions of 1 to 50 rows across 64 aggregates)
# and 40 faults of every kind:
#   full           every fault kind, PostgreSQL restarts included;
#   no-pg-restart  no PostgreSQL restart (it would set the slot back and hide a
#                  confirmation that ran ahead of the broker), a kill -9 after
#                  every other fault;
#   failover       no-pg-restart plus primary failovers (PostgreSQL 17+, 17 unless
#                  --pg-version says otherwise): the primary is killed, its standby
#                  promoted with the synchronized failover slot, and the old
#                  primary rebuilt as the new standby, again and again;
#   standby        publishing from a standby (PostgreSQL 16+, 17 unless --pg-version
#                  says otherwise): no-pg-restart plus restarts and the loss of the
#                  publishing standby (a gap republished from the table) and primary
#                  failovers that it follows.
# Each prints committed, delivered, duplicates, faults survived, lost,
# early_confirmations, per-key and per-partition order violations (all must be 0),
# unproven deliveries and rewinds, and the longest commit-to-delivery.
#   scripts/chaos.sh [--schedule full|no-pg-restart|failover|standby]
#                    [--broker mock|kafka]
#                    [--delivery at-least-once|exactly-once] [--pg-version N]
#                    [outbox-chaos flags ...]
# --broker kafka runs on a real 3-node Apache Kafka cluster (KRaft, jars from Maven
# Central, cached): broker kill -9 and restart and broker freeze join the fault
# kinds, and the verifier is a plain read_committed consumer.
# Flags given are passed to every run (a --schedule runs only that one).
# CI runs a shorter variant of both as the ctests `chaos.short*` (label chaos).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
"$root/scripts/install-deps.sh" >/dev/null
cmake -S "$root" -B "$build" >/dev/null
cmake --build "$build" -j"$(nproc)" --target outbox-chaos outbox-publisher mock-kafka fault-proxy >/dev/null

schedules=(full no-pg-restart failover standby)
args=()
while [ $# -gt 0 ]; do
  if [ "$1" = --schedule ] && [ $# -ge 2 ]; then
    schedules=("$2")
    shift 2
  else
    args+=("$1")
    shift
  fi
done

status=0
for schedule in "${schedules[@]}"; do
  echo "=== schedule: $schedule"
  "$build/outbox-chaos" --rows 300000 --faults 40 --max-tx-rows 50 --aggregates 64 \
    --schedule "$schedule" "${args[@]}" || status=1
done
exit $status
