#!/usr/bin/env bash
# The soak at scale: outbox-chaos --schedule soak (every fault kind at once from
# concurrent lanes, network faults on both paths; docs/testing.md, "Fault
# injection") on 3-node Apache Kafka and PostgreSQL 17, once per delivery mode,
# each over at least ROWS committed rows and FAULTS faults. Each run's whole output
# is kept as a report, headed by the commit, the seed, the machine and the command:
#   docs/reports/soak-<date>/<mode>.txt
#   [RATE=rows/s] scripts/soak.sh [at-least-once|exactly-once|both] [ROWS] [FAULTS] [SEED]
# Defaults: both, 10,000,000 rows, 1,000 faults, seed 45 (46 for exactly-once),
# RATE 3,000 committed rows a second (the writer's pace; lower it when two runs
# share a machine). A run ends once both ROWS and FAULTS are reached: on 2 cores
# the rows take the longer (the four lanes inject some 25 faults a minute; 10M
# rows at 3,000/s take about an hour). CI runs a short one as the ctest
# `chaos.soak.short`.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD_DIR:-$root/build}
mode=${1:-both}
rows=${2:-10000000}
faults=${3:-1000}
seed=${4:-45}
rate=${RATE:-3000}
"$root/scripts/install-deps.sh" >/dev/null
cmake -S "$root" -B "$build" >/dev/null
cmake --build "$build" -j"$(nproc)" --target outbox-chaos outbox-publisher fault-proxy >/dev/null

case "$mode" in
  both) modes=(at-least-once exactly-once) ;;
  at-least-once | exactly-once) modes=("$mode") ;;
  *) sed -n '2,14p' "$0" >&2; exit 2 ;;
esac
reports="$root/docs/reports/soak-$(date -u +%F)"
mkdir -p "$reports"
# A process that dies of a signal leaves a core where it ran (the kernel's
# core_pattern permitting): the publishers and consumers run in $cores.
cores=${CORE_DIR:-${TMPDIR:-/tmp}/outbox-soak-cores}
mkdir -p "$cores"
ulimit -c unlimited 2>/dev/null || true
# A SIGKILL or SIGSTOP leaves neither a core nor a line. As root, where the kernel
# has tracefs, the run records every SIGKILL, SIGSTOP, SIGQUIT, SIGABRT and SIGSEGV
# sent on the machine with its sender (the signal:signal_generate tracepoint), and
# the report ends with those sent to a publisher or consumer by anything but the
# harness, and with the record of each publisher that exited by itself.
tracing=/sys/kernel/tracing
event=$tracing/events/signal/signal_generate
start_signal_trace() {
  [ "$(id -u)" = 0 ] || return 0
  [ -d "$event" ] || mount -t tracefs nodev "$tracing" 2>/dev/null || true
  [ -w "$event/enable" ] || return 0
  { echo 'sig == 9 || sig == 19 || sig == 3 || sig == 6 || sig == 11' >"$event/filter" &&
    echo 1 >"$event/enable" && echo 1 >"$tracing/tracing_on"; } 2>/dev/null || return 0
  cat "$tracing/trace_pipe" >"$1" &
  trace_reader=$!
}
stop_signal_trace() {
  [ -n "${trace_reader:-}" ] || return 0
  echo 0 >"$event/enable" 2>/dev/null || true
  kill "$trace_reader" 2>/dev/null || true
  wait "$trace_reader" 2>/dev/null || true
  trace_reader=""
  local report=$2 pid
  echo "signals from outside the harness to publishers and consumers (the kernel's record):"
  grep -E 'comm=outbox-(publishe|paid-ord)' "$1" | grep -v '^ *outbox-chaos-' || echo "  none"
  for pid in $(sed -n 's/^chaos: a publisher .* exited by itself (exit 1[2-9][0-9], pid \([0-9]*\),.*/\1/p' "$report"); do
    echo "signals to pid $pid, a publisher that exited by itself:"
    grep -E " pid=$pid " "$1" || echo "  none"
  done
}
trap 'stop_signal_trace /dev/null /dev/null >/dev/null' EXIT
status=0
for m in "${modes[@]}"; do
  s=$seed
  [ "$m" = exactly-once ] && [ -z "${4:-}" ] && s=$((seed + 1))
  report="$reports/$m.txt"
  command=("$build/outbox-chaos" --schedule soak --broker kafka --delivery "$m"
           --rows "$rows" --faults "$faults" --seed "$s" --rate "$rate" --max-tx-rows 50
           --aggregates 64)
  {
    echo "# outbox-chaos --schedule soak, $m"
    echo "commit: $(git -C "$root" rev-parse HEAD)$(git -C "$root" diff --quiet || echo ' (with changes)')"
    echo "seed: $s, rows: $rows, faults: $faults, rate: $rate rows/s"
    echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr)"
    echo "started: $(date -u +%FT%TZ)"
    echo "command: ${command[*]#"$build/"}"
    echo
  } >"$report"
  echo "=== soak, $m: $report"
  start_signal_trace "$cores/signals-$m.log"
  (cd "$cores" && "${command[@]}") >>"$report" 2>&1 || status=1
  stop_signal_trace "$cores/signals-$m.log" "$report" >>"$report"
  echo "ended: $(date -u +%FT%TZ), exit $status" >>"$report"
  grep -E '^chaos: (lost|early|split|per-|duplicates|faults survived|/healthz|/metrics|resources|  publisher|recovery|fault kinds)' "$report" || true
done
exit $status
