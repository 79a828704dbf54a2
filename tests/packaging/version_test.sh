#!/usr/bin/env bash
# The version the binary prints is the newest one CHANGELOG.md describes.
#   tests/packaging/version_test.sh BUILD_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
printed=$("${1:?usage: version_test.sh BUILD_DIR}/outbox-publisher" --version | awk '{print $2}')
newest=$(sed -n 's/^## \([0-9][0-9.]*\) .*/\1/p' "$root/CHANGELOG.md" | head -n 1)
if [ -z "$printed" ] || [ "$printed" != "$newest" ]; then
  echo "FAIL: outbox-publisher --version prints '$printed'; CHANGELOG.md's newest is '$newest'" >&2
  exit 1
fi
echo "version_test: $printed"
