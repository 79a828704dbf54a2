#!/usr/bin/env bash
# Checks mock-kafka's contract with a real Kafka client (kcat): the bootstrap line,
# topic creation, produce/consume, broker down/up, injected errors, delay, and
# command errors.
set -euo pipefail
mock=${1:?usage: mock_kafka_test.sh PATH/TO/mock-kafka}
fail() { echo "FAIL: $*" >&2; exit 1; }

coproc MOCK { exec "$mock" --brokers 2; }
mock_pid=$MOCK_PID  # bash unsets MOCK_PID when the coprocess exits
trap 'kill "$mock_pid" 2>/dev/null || true' EXIT
read -r -t 30 first <&"${MOCK[0]}" || fail "no bootstrap line"
[[ $first == bootstrap=127.0.0.1:* ]] || fail "unexpected first line: $first"
bootstrap=${first#bootstrap=}

# send CMD: writes one command and prints the answer.
send() {
  echo "$*" >&"${MOCK[1]}"
  local answer
  read -r -t 30 answer <&"${MOCK[0]}" || fail "no answer to: $*"
  echo "$answer"
}

[ "$(send topic events 6)" = ok ] || fail "topic create"
partitions=$(kcat -b "$bootstrap" -L -t events -m 10 | grep -c 'partition [0-9]*, leader')
[ "$partitions" = 6 ] || fail "expected 6 partitions, got $partitions"

printf 'k1:v1\nk2:v2\n' | kcat -b "$bootstrap" -P -t events -K: -p 3 -m 10
got=$(kcat -b "$bootstrap" -C -t events -p 3 -o beginning -c 2 -e -f '%k=%s\n' -m 10)
[ "$got" = $'k1=v1\nk2=v2' ] || fail "consumed: $got"

[ "$(send down all)" = ok ] || fail "down all"
if kcat -b "$bootstrap" -L -m 3 >/dev/null 2>&1; then fail "metadata succeeded with all brokers down"; fi
[ "$(send up all)" = ok ] || fail "up all"
kcat -b "$bootstrap" -L -t events -m 10 >/dev/null || fail "metadata after up"

[ "$(send errors Produce NOT_LEADER_FOR_PARTITION 6)" = ok ] || fail "errors by name and number"
[ "$(send clear-errors Produce)" = ok ] || fail "clear-errors"
[ "$(send rtt 1 50)" = ok ] || fail "rtt"
[ "$(send rtt all 0)" = ok ] || fail "rtt all"

# A leader move: the metadata names the new leader, and the partition keeps working.
[ "$(send leader events 3 2)" = ok ] || fail "leader move"
kcat -b "$bootstrap" -L -t events -m 10 | grep -q 'partition 3, leader 2,' ||
  fail "metadata does not show broker 2 leading partition 3"
printf 'k3:v3\n' | kcat -b "$bootstrap" -P -t events -K: -p 3 -m 10
got=$(kcat -b "$bootstrap" -C -t events -p 3 -o beginning -c 3 -e -f '%k=%s\n' -m 10)
[ "$got" = $'k1=v1\nk2=v2\nk3=v3' ] || fail "consumed after the leader move: $got"
[[ $(send leader events 3 7) == error:* ]] || fail "leader on an unknown broker accepted"

[ "$(send topic-error missing UNKNOWN_TOPIC_OR_PART)" = ok ] || fail "topic-error"
if kcat -b "$bootstrap" -L -t missing -m 5 2>&1 | grep -q 'partition 0'; then
  fail "topic-error did not hide the topic"
fi
[[ $(send frobnicate) == error:* ]] || fail "unknown command accepted"
[[ $(send topic x 0) == error:* ]] || fail "zero partitions accepted"
[[ $(send down 9) == error:* ]] || fail "unknown broker accepted"
[[ $(send errors Produce NO_SUCH_ERROR) == error:* ]] || fail "unknown error accepted"

echo quit >&"${MOCK[1]}"
wait "$mock_pid" || fail "mock-kafka exit status $?"
echo "mock-kafka: all checks passed"
