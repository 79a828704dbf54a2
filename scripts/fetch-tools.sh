#!/usr/bin/env bash
# Fetches a pinned checking tool, once, into a cache, and prints the command's path.
#
#   scripts/fetch-tools.sh promtool              Prometheus' promtool, built with Go
#                                                from the module proxy
#   scripts/fetch-tools.sh kubernetes-validate   PyPI's kubernetes-validate, in a
#                                                virtualenv (the Kubernetes schemas
#                                                come with it: no network to validate)
#
# The cache is $OUTBOX_CACHE_DIR/tools (default ~/.cache/outbox-publisher/tools), as
# for scripts/fetch-jars.sh. Bumping a pin fetches anew.
set -euo pipefail

promtool_version=v0.316.0          # github.com/prometheus/prometheus (Prometheus 3.x)
kubernetes_validate_version=1.37.0 # its newest schemas: Kubernetes 1.37

cache=${OUTBOX_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/outbox-publisher}/tools
mkdir -p "$cache"

die() { echo "fetch-tools: $*" >&2; exit 1; }

# Fills $1 by running the rest (which writes into $dest), once: under a lock, so
# two tests fetching at once do it once, and in place, because a virtualenv cannot
# move. A failed fill leaves nothing behind.
fill() {
  dest=$1
  shift
  [ -f "$dest/.complete" ] && return 0
  exec 9>"$dest.lock"
  flock 9
  if [ ! -f "$dest/.complete" ]; then
    rm -rf "$dest"
    mkdir -p "$dest"
    if ! "$@" >"$dest.log" 2>&1; then
      tail -n 20 "$dest.log" >&2
      rm -rf "$dest"
      die "fetching into $dest failed (above: the end of its output, in $dest.log)"
    fi
    touch "$dest/.complete"
  fi
  flock -u 9
}

build_promtool() {
  command -v go >/dev/null || die "go not found: promtool is built with Go (1.24 or newer)"
  # remove_all_sd leaves out the service discoveries (Kubernetes, cloud APIs), which
  # rule checks never use: a third of the download and build.
  GOBIN="$dest/bin" GOFLAGS=-mod=mod GOCACHE="$cache/go-build" GOMODCACHE="$cache/go-mod" \
    go install -tags remove_all_sd -trimpath -ldflags=-s \
    "github.com/prometheus/prometheus/cmd/promtool@$promtool_version"
}

install_kubernetes_validate() {
  python3 -m venv "$dest" ||
    die "python3 -m venv failed: install python3-venv (scripts/install-deps.sh)"
  "$dest/bin/pip" install --quiet --disable-pip-version-check \
    "kubernetes-validate==$kubernetes_validate_version"
}

case "${1:-}" in
  promtool)
    dest="$cache/promtool-$promtool_version"
    fill "$dest" build_promtool
    echo "$dest/bin/promtool" ;;
  kubernetes-validate)
    dest="$cache/kubernetes-validate-$kubernetes_validate_version"
    fill "$dest" install_kubernetes_validate
    echo "$dest/bin/kubernetes-validate" ;;
  *) sed -n '2,12p' "$0" >&2; exit 2 ;;
esac
