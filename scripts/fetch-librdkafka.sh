#!/usr/bin/env bash
# Builds the librdkafka release that outbox-publisher ships (packaging/librdkafka.env:
# Debian's source package, pinned by version and SHA-256), once, into a cache,
# and prints its prefix: include/librdkafka/, lib/librdkafka.a, lib/pkgconfig/ and
# share/doc/librdkafka/LICENSES.txt (which the Debian package ships). CMake runs it when it configures; so does
# scripts/install-deps.sh, so that a fresh machine builds it up front (about a
# minute and a half on 2 cores).
#   scripts/fetch-librdkafka.sh
# OUTBOX_LIBRDKAFKA_POOL replaces Debian's pool with a mirror (a snapshot, a
# company proxy); the checksums are checked all the same.
# The cache is $OUTBOX_CACHE_DIR/librdkafka (default
# ~/.cache/outbox-publisher/librdkafka), as for scripts/fetch-tools.sh. Bumping the
# pin builds anew. Needs a compiler, make, curl and the -dev packages of
# librdkafka's dependencies (scripts/install-deps.sh installs them); a missing one
# fails the build instead of leaving a feature out.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=../packaging/librdkafka.env
. "$root/packaging/librdkafka.env"

die() { echo "fetch-librdkafka: $*" >&2; exit 1; }
# Where the source package comes from: Debian's pool, or a mirror that keeps it.
pool=${OUTBOX_LIBRDKAFKA_POOL:-$LIBRDKAFKA_POOL}

cache=${OUTBOX_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/outbox-publisher}/librdkafka
dest="$cache/$LIBRDKAFKA_DEBIAN_VERSION"
# Complete: built, and laid out as this script lays it out.
complete() { [ -f "$dest/.complete" ] && [ -f "$dest/prefix/share/doc/librdkafka/LICENSES.txt" ]; }
if complete; then
  echo "$dest/prefix"
  exit 0
fi
mkdir -p "$cache"

# Downloads $1 from Debian's pool into the work folder and checks its SHA-256 ($2).
download() {
  local name=$1 sha=$2
  curl -fsSL --retry 3 -o "$work/$name" "$pool/$name" ||
    die "cannot download $pool/$name: if Debian's pool no longer serves $LIBRDKAFKA_DEBIAN_VERSION (unstable moves on), bump packaging/librdkafka.env (docs/librdkafka.md, \"Bumping the release\"), or set OUTBOX_LIBRDKAFKA_POOL to a mirror that keeps it"
  echo "$sha  $work/$name" | sha256sum -c --quiet - ||
    die "$name does not have the pinned SHA-256 (packaging/librdkafka.env)"
}

build() {
  download "librdkafka_$LIBRDKAFKA_VERSION.orig.tar.gz" "$LIBRDKAFKA_ORIG_SHA256"
  download "librdkafka_$LIBRDKAFKA_DEBIAN_VERSION.debian.tar.xz" "$LIBRDKAFKA_DEBIAN_SHA256"
  mkdir "$work/src"
  tar -xzf "$work/librdkafka_$LIBRDKAFKA_VERSION.orig.tar.gz" -C "$work/src" \
    --strip-components=1
  tar -xJf "$work/librdkafka_$LIBRDKAFKA_DEBIAN_VERSION.debian.tar.xz" -C "$work/src"
  cd "$work/src"
  # The Debian patches the pin lists (LIBRDKAFKA_DEBIAN_PATCHES), in its order.
  for patch in ${LIBRDKAFKA_DEBIAN_PATCHES:-}; do
    grep -qx "$patch" debian/patches/series ||
      die "$patch is not in Debian's series of $LIBRDKAFKA_DEBIAN_VERSION"
    patch -p1 --quiet <"debian/patches/$patch"
  done
  # The features Debian builds with, required (a missing -dev package fails here);
  # what Debian takes from its own packages instead of the bundled copies (cJSON,
  # nanopb) stays bundled.
  ./configure --prefix="$dest/prefix" --enable-ssl --enable-gssapi --enable-zstd \
    --enable-lz4-ext --enable-curl --enable-zlib
  make -j"$(nproc)" libs
  make install-subdirs
  # Static only: nothing can link the shared library of this prefix by mistake and
  # then load another release at run time.
  rm -f "$dest/prefix/lib/"*.so*
  # Its license and those of the code it bundles, for the programs that link it.
  install -D -m 644 LICENSES.txt "$dest/prefix/share/doc/librdkafka/LICENSES.txt"
  grep -q "^Version: $LIBRDKAFKA_VERSION\$" "$dest/prefix/lib/pkgconfig/rdkafka-static.pc" ||
    die "the build did not report version $LIBRDKAFKA_VERSION"
}

# Once, under a lock: two configures at once build it once.
exec 9>"$dest.lock"
flock 9
if ! complete; then
  echo "fetch-librdkafka: building librdkafka $LIBRDKAFKA_DEBIAN_VERSION (once; cached in $dest)" >&2
  rm -rf "$dest"
  mkdir -p "$dest"
  work=$(mktemp -d "$cache/.build.XXXXXX")
  if ! (build) >"$dest.log" 2>&1; then
    tail -n 20 "$dest.log" >&2
    rm -rf "$dest" "$work"
    die "building librdkafka failed (above: the end of its output, in $dest.log)"
  fi
  rm -rf "$work"
  touch "$dest/.complete"
fi
flock -u 9
echo "$dest/prefix"
