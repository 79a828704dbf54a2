#!/usr/bin/env bash
# Builds and runs the Go example: generates the envelope's Go code from the
# repository's proto files (protoc with protoc-gen-go, pinned in go.mod and built
# from the Go module proxy) into a copy of this module outside the source tree, then
# `go run`s it. The environment settings are main.go's.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
build=$(mktemp -d "${TMPDIR:-/tmp}/outbox-go-example.XXXXXX")
trap 'rm -rf "$build"' EXIT
cp "$here/go.mod" "$here/go.sum" "$here/main.go" "$build/"
cd "$build"
# protoc-gen-go at the version go.mod pins for google.golang.org/protobuf.
GOBIN="$build/bin" go install google.golang.org/protobuf/cmd/protoc-gen-go
PATH="$build/bin:$PATH" protoc --go_out=. --go_opt=module=outboxpublisher \
  -I "$root/proto" "$root/proto/outbox/v1/envelope.proto"
go run .
