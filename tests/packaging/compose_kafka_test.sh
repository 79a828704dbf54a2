#!/usr/bin/env bash
# docker-compose.yml runs the Apache Kafka release the tests run
# (tools/harness/kafka/pom.xml's kafka.version, which docs/testing.md names), so
# what people try by hand is what CI proved.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
tested=$(sed -n 's|.*<kafka.version>\(.*\)</kafka.version>.*|\1|p' "$root/tools/harness/kafka/pom.xml")
composed=$(sed -n 's|^ *image: apache/kafka:\(.*\)$|\1|p' "$root/docker-compose.yml")
[ -n "$tested" ] && [ "$composed" = "$tested" ] || {
  echo "FAIL: docker-compose.yml runs apache/kafka:$composed; the tests run $tested" >&2
  exit 1
}
grep -q "Apache Kafka $tested" "$root/docs/testing.md" ||
  { echo "FAIL: docs/testing.md does not name Apache Kafka $tested" >&2; exit 1; }
echo "compose_kafka_test: apache/kafka:$composed, as tested"
