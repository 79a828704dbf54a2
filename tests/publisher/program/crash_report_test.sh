#!/usr/bin/env bash
# A crash of outbox-publisher says where: SIGSEGV (as a null dereference would
# raise) prints the signal and the stack on stderr, and the process
# still dies of the signal (exit status 139, a core where the system keeps them).
# SIGTERM is still the clean stop, not a crash. Kept alive by brokers that never
# answer (it waits 15 s for them before touching PostgreSQL).
#   tests/publisher/program/crash_report_test.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: crash_report_test.sh BUILD_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; cat "$work/log" >&2 || true; exit 1; }

# Starts the publisher in the background; returns once it logged its start.
start() {
  (cd "$work" && ulimit -c 0 && exec "$build/outbox-publisher" --pg "host=127.0.0.1 port=1" \
     --brokers 127.0.0.1:1 --metrics-port 0) >"$work/log" 2>&1 &
  pid=$!
  for _ in $(seq 100); do
    grep -q '"msg":"starting outbox-publisher"' "$work/log" && return
    sleep 0.1
  done
  fail "the publisher did not start"
}

start
kill -SEGV "$pid"
set +e; wait "$pid"; code=$?; set -e
[ "$code" = 139 ] || fail "SIGSEGV: exit status $code, not 139 (died of the signal)"
grep -q '\*\*\* SIGSEGV received' "$work/log" || fail "SIGSEGV: no crash report on stderr"
# The stack of the thread the signal reached (sent from outside, the main thread
# waiting for the brokers: libc frames, whose symbols Debian strips).
grep -Eq '^PC: @ +0x[0-9a-f]+' "$work/log" || fail "SIGSEGV: no stack"

start
kill -TERM "$pid"
set +e; wait "$pid"; code=$?; set -e
grep -q 'SIGTERM received' "$work/log" && fail "SIGTERM was reported as a crash"
# Stopped before it streamed: brokers that never answered are an environment error.
[ "$code" = 2 ] || fail "SIGTERM: exit status $code, not 2"
echo "crash_report_test: ok"
