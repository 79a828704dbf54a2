#!/usr/bin/env bash
# Runs the Kafka fault suite once with each of two builds that differ only in their
# librdkafka, on the same seeds and schedules, and prints one line per run: how the
# releases are chosen between (docs/librdkafka.md).
#   scripts/compare-librdkafka.sh OLD_BUILD NEW_BUILD [OUT_DIR]
# OLD_BUILD is configured with -DOUTBOX_LIBRDKAFKA=system (Debian 12's librdkafka-dev),
# NEW_BUILD as usual (the pinned release). Every schedule (full, no-pg-restart,
# failover) in both delivery modes on 3-node Apache Kafka, 300k rows and 40 faults
# each; the two builds alternate, so both see the machine alike. Each run's whole
# output is kept in OUT_DIR (default: a new folder under /tmp).
# SCHEDULES and DELIVERIES (space-separated) choose a part.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
[ $# -ge 2 ] || { sed -n '2,12p' "$0" >&2; exit 2; }
old=$(cd "$1" && pwd)
new=$(cd "$2" && pwd)
out=${3:-$(mktemp -d /tmp/outbox-compare-librdkafka.XXXXXX)}
mkdir -p "$out"
echo "compare-librdkafka: outputs in $out"
for build in "$old" "$new"; do
  "$build/outbox-publisher" --version
done

# Each run's seed is fixed by its schedule and delivery, whatever SCHEDULES and
# DELIVERIES choose, so runs of a part line up with earlier whole runs.
seed_of() {
  local base
  case $1 in no-pg-restart) base=8 ;; failover) base=10 ;; full) base=12 ;; *) base=14 ;; esac
  [ "$2" = exactly-once ] && base=$((base + 1))
  echo "$base"
}
for schedule in ${SCHEDULES:-no-pg-restart failover full}; do
  for delivery in ${DELIVERIES:-at-least-once exactly-once}; do
    seed=$(seed_of "$schedule" "$delivery")
    for build in "$old" "$new"; do
      release=$("$build/outbox-publisher" --version | sed -n 's/.*(librdkafka \([0-9.]*\).*/\1/p')
      log="$out/$schedule.$delivery.$release.log"
      start=$(date +%s)
      BUILD_DIR=$build "$root/scripts/chaos.sh" --schedule "$schedule" --broker kafka \
        --delivery "$delivery" --seed "$seed" >"$log" 2>&1
      status=$?
      summary=$(grep -E '^chaos: (lost|delivered|early_confirmations|per-key|per-partition|split|unproven|longest|primary failovers|faults survived)' "$log" |
                sed 's/^chaos: //' | tr '\n' ';')
      echo "$schedule $delivery librdkafka $release seed $seed: exit $status," \
        "$(( $(date +%s) - start )) s; $summary"
    done
  done
done
