#!/usr/bin/env bash
# Builds and runs the Java example as its pom says: `mvn package` (the protobuf
# plugin generates the envelope's classes from the repository's proto files) into
# a build folder outside the source tree, then runs the jar with pom.xml's
# dependencies (scripts/fetch-jars.sh, cached). The environment settings are
# OutboxConsumer.java's.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=$(mktemp -d "${TMPDIR:-/tmp}/outbox-java-example.XXXXXX")
trap 'rm -rf "$build"' EXIT
mvn -q -B -f "$here/pom.xml" package -Doutbox.build.directory="$build" >&2
lib=$("$root/scripts/fetch-jars.sh" "$here/pom.xml")
java -cp "$build/outbox-consumer-java-1.jar:$lib/*" example.OutboxConsumer
