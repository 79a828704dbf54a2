#!/usr/bin/env bash
# deploy/kubernetes/ validates against the Kubernetes schemas (kubernetes-validate,
# strict: no unknown field passes), and says what docs/operations.md promises
# (kubernetes_manifests.py): checked against the built binaries' own flags.
#   tests/deploy/kubernetes_test.sh BUILD_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:?usage: kubernetes_test.sh BUILD_DIR}
validate=$("$root/scripts/fetch-tools.sh" kubernetes-validate)
"$validate" --strict --quiet "$root"/deploy/kubernetes/*.yaml
# The validator's virtualenv has PyYAML.
"$(dirname "$validate")/python" "$root/tests/deploy/kubernetes_manifests.py" "$root" "$build"
