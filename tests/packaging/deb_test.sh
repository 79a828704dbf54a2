#!/usr/bin/env bash
# The Debian package: built with cpack from the build folder, installed with
# dpkg -i on this machine, run from its installed path (--version, and --check as
# its own user with its own environment file, against a throwaway PostgreSQL and
# mock-kafka), its unit checked with systemd-analyze verify, then purged: nothing
# of it may be left. Needs root, as CI is.
#   tests/packaging/deb_test.sh BUILD_DIR
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: deb_test.sh BUILD_DIR}" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/outbox-deb.XXXXXX")
mock=""
installed=""
cleanup() {
  [ -n "$installed" ] && dpkg --purge outbox-publisher >/dev/null 2>&1 || true
  [ -n "$mock" ] && kill "$mock" 2>/dev/null || true
  [ -n "${PG_CLUSTER_DIR:-}" ] && "$root/tools/harness/pg_cluster.sh" stop "$PG_CLUSTER_DIR" || true
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "dpkg -i needs root (CI runs as root)"
if dpkg-query -W -f='${Status}' outbox-publisher 2>/dev/null | grep -q installed; then
  fail "outbox-publisher is already installed here; this test would remove it"
fi

# Build.
(cd "$work" && cpack -G DEB --config "$build/CPackConfig.cmake" -B "$work" >cpack.log 2>&1) ||
  { cat "$work/cpack.log" >&2; fail "cpack -G DEB failed"; }
deb=$(ls "$work"/outbox-publisher_*.deb)
version=$("$build/outbox-publisher" --version | awk '{print $2}')
[ "$(dpkg-deb -f "$deb" Version)" = "$version-1" ] || fail "the package is not version $version-1"
contents=$(dpkg-deb -c "$deb")
for f in ./usr/bin/outbox-publisher ./usr/bin/outbox-paid-orders \
         ./lib/systemd/system/outbox-publisher.service \
         ./etc/outbox-publisher/outbox-publisher.env ./etc/outbox-publisher/kafka.properties \
         ./usr/share/outbox-publisher/schema.sql ./usr/share/doc/outbox-publisher/copyright \
         ./usr/share/doc/outbox-publisher/changelog.gz \
         ./usr/share/doc/outbox-publisher/librdkafka-LICENSES.txt \
         ./usr/share/doc/outbox-publisher/changelog.Debian.gz; do
  grep -q " $f\$" <<<"$contents" || fail "the package has no $f"
done
dpkg-deb --ctrl-tarfile "$deb" | tar -xOf - ./conffiles | grep -qx /etc/outbox-publisher/kafka.properties ||
  fail "kafka.properties is not a conffile (an upgrade would overwrite the operator's)"

# Install, and look at what it made.
dpkg -i "$deb" >"$work/dpkg.log" 2>&1 || { cat "$work/dpkg.log" >&2; fail "dpkg -i failed"; }
installed=yes
getent passwd outbox-publisher >/dev/null || fail "no outbox-publisher user"
shell=$(getent passwd outbox-publisher | cut -d: -f7)
case "$shell" in */nologin|*/false) ;; *) fail "the user has a login shell: $shell" ;; esac
for f in /etc/outbox-publisher/kafka.properties /etc/outbox-publisher/outbox-publisher.env; do
  [ "$(stat -c '%U:%G %a' "$f")" = "root:outbox-publisher 640" ] ||
    fail "$f is $(stat -c '%U:%G %a' "$f"), not root:outbox-publisher 640"
done
runuser -u nobody -- cat /etc/outbox-publisher/kafka.properties >/dev/null 2>&1 &&
  fail "another user can read kafka.properties"
[ "$(/usr/bin/outbox-publisher --version | awk '{print $2}')" = "$version" ] ||
  fail "/usr/bin/outbox-publisher --version is not $version"
# The librdkafka it ships is the pinned release, inside the binaries; the package
# depends on no librdkafka of Debian's (another release).
pinned=$(sed -n 's/^LIBRDKAFKA_VERSION=//p' "$root/packaging/librdkafka.env")
for bin in /usr/bin/outbox-publisher /usr/bin/outbox-paid-orders; do
  "$bin" --version | grep -q "(librdkafka $pinned[,)]" ||
    fail "$bin --version does not name the pinned librdkafka $pinned: $("$bin" --version)"
  ldd "$bin" | grep -q librdkafka && fail "$bin loads a shared librdkafka: $(ldd "$bin" | grep librdkafka)"
done
dpkg-deb -f "$deb" Depends | grep -q librdkafka &&
  fail "the package depends on Debian's librdkafka: $(dpkg-deb -f "$deb" Depends)"
unit=/lib/systemd/system/outbox-publisher.service
systemd-analyze verify "$unit" >"$work/verify.log" 2>&1 ||
  { cat "$work/verify.log" >&2; fail "systemd-analyze verify $unit"; }
grep -v '^$' "$work/verify.log" | grep -iv 'no such file or directory\|not running' | grep -q . &&
  { cat "$work/verify.log" >&2; fail "systemd-analyze verify warns about $unit"; }
for setting in 'User=outbox-publisher' 'ProtectSystem=strict' 'Restart=on-failure' \
               'EnvironmentFile=/etc/outbox-publisher/outbox-publisher.env' \
               'NoNewPrivileges=yes'; do
  grep -qx "$setting" "$unit" || fail "the unit has no $setting"
done

# --check from the installed path, as the service runs: its user, its environment
# file (pointed at the test's servers), its Kafka properties file.
set -a
eval "$("$root/tools/harness/pg_cluster.sh" start --owner $$)"
set +a
psql -q -v ON_ERROR_STOP=1 -f /usr/share/outbox-publisher/schema.sql >/dev/null
coproc MOCK { "$build/mock-kafka"; }
mock=$MOCK_PID
read -r line <&"${MOCK[0]}"
brokers=${line#bootstrap=}
env_file=$work/outbox-publisher.env
sed -e "s|^OUTBOX_PG=.*|OUTBOX_PG=host=127.0.0.1 port=$PGPORT dbname=$PGDATABASE user=$PGUSER|" \
    -e "s|^OUTBOX_BROKERS=.*|OUTBOX_BROKERS=$brokers|" \
    /etc/outbox-publisher/outbox-publisher.env >"$env_file"
chmod 644 "$env_file"
# As systemd reads an EnvironmentFile: each KEY=VALUE line whole (values hold
# spaces), nothing else of this shell's environment.
mapfile -t vars < <(grep -v '^[[:space:]]*#' "$env_file" | grep '=')
check=$(runuser -u outbox-publisher -- env -i PATH=/usr/bin:/bin "${vars[@]}" \
          /usr/bin/outbox-publisher --check 2>&1) ||
  { echo "$check" >&2; fail "--check from /usr/bin as outbox-publisher failed"; }
grep -q '^ok    Kafka' <<<"$check" || { echo "$check" >&2; fail "--check did not reach the brokers"; }

# Purge: nothing left.
dpkg --purge outbox-publisher >"$work/purge.log" 2>&1 ||
  { cat "$work/purge.log" >&2; fail "dpkg --purge failed"; }
installed=""
for f in /usr/bin/outbox-publisher /usr/bin/outbox-paid-orders "$unit" /etc/outbox-publisher \
         /usr/share/outbox-publisher; do
  [ -e "$f" ] && fail "$f is left after purge"
done
getent passwd outbox-publisher >/dev/null && fail "the user is left after purge"
echo "deb_test: $(basename "$deb") built, installed, checked, purged"
