#!/usr/bin/env bash
# Builds and runs the Java example: fetches pom.xml's jars (scripts/fetch-jars.sh,
# cached), generates the envelope's classes with protoc outside the source tree,
# compiles with javac and runs. The environment settings are OutboxConsumer.java's.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
lib=$("$root/scripts/fetch-jars.sh" "$here/pom.xml")
build=$(mktemp -d "${TMPDIR:-/tmp}/outbox-java-example.XXXXXX")
trap 'rm -rf "$build"' EXIT
mkdir -p "$build/gen" "$build/classes"
protoc --java_out="$build/gen" -I "$root/proto" "$root/proto/outbox/v1/envelope.proto"
javac -nowarn -d "$build/classes" -cp "$lib/*" $(find "$build/gen" "$here/src" -name '*.java')
java -cp "$build/classes:$lib/*" example.OutboxConsumer
