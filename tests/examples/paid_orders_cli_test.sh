#!/usr/bin/env bash
# outbox-paid-orders follows the publisher's CLI conventions: --help prints the
# flags on stdout and exits 0, --version prints the project's version and its
# librdkafka's (the publisher's), and every
# flag is also an OUTBOX_<FLAG> variable (the image's OUTBOX_METRICS_PORT reaches
# it), the command line winning.
#   tests/examples/paid_orders_cli_test.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: paid_orders_cli_test.sh BUILD_DIR}
bin=$build/outbox-paid-orders
fail() { echo "FAIL: $*" >&2; exit 1; }

help=$("$bin" --help) || fail "--help exited $?"
for flag in --pg --brokers --group --topic --metrics-port --metrics-address -F -X; do
  grep -q -- "^  $flag " <<<"$help" || fail "--help does not list $flag"
done
# The publisher's version and librdkafka's: "outbox-publisher V (librdkafka R, libpq P)".
expected=$("$build/outbox-publisher" --version |
           sed -n 's/^outbox-publisher \([^ ]*\) (librdkafka \([0-9.]*\).*/outbox-paid-orders \1 (librdkafka \2)/p')
[ "$("$bin" --version)" = "$expected" ] ||
  fail "--version is not '$expected' (the publisher's version and librdkafka): $("$bin" --version)"

# Missing --pg and --brokers: exit 2 with the usage on stderr.
set +e
out=$("$bin" 2>&1 >/dev/null); code=$?
set -e
[ $code = 2 ] || fail "no flags exited $code, not 2"
grep -q -- "--pg and --brokers are required" <<<"$out" || fail "no usage error: $out"

# The variables reach the flags: a bad OUTBOX_METRICS_PORT is refused naming it ...
set +e
out=$(OUTBOX_PG=x OUTBOX_BROKERS=y OUTBOX_METRICS_PORT=abc "$bin" 2>&1); code=$?
set -e
[ $code = 2 ] && grep -q "bad --metrics-port abc (0-65535, 0 = off) (from OUTBOX_METRICS_PORT)" <<<"$out" ||
  fail "OUTBOX_METRICS_PORT=abc: exit $code: $out"
# ... and the command line wins over it.
set +e
out=$(OUTBOX_METRICS_PORT=abc "$bin" --metrics-port 0 2>&1); code=$?
set -e
grep -q "(from OUTBOX_METRICS_PORT)" <<<"$out" && fail "the command line did not win: $out"
# OUTBOX_PG and OUTBOX_BROKERS stand for the required flags: it goes on to connect.
set +e
out=$(OUTBOX_PG='host=127.0.0.1 port=1 connect_timeout=5' OUTBOX_BROKERS=127.0.0.1:1 \
      timeout 60 "$bin" 2>&1); code=$?
set -e
grep -q "required" <<<"$out" && fail "OUTBOX_PG and OUTBOX_BROKERS were not read: $out"
[ $code = 1 ] || fail "an unreachable database should exit 1, not $code: $out"
echo "paid_orders_cli_test: ok"
