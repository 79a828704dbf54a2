#!/usr/bin/env bash
# The include rule (docs/design.md, "Where the code lives"), kept by the build instead of by memory:
#   - a pure file includes no outside library's shell header (librdkafka, libpq,
#     httplib) and no header of a shell of ours;
#   - every folder includes only from the folders below it;
#   - the product (cdc, common, publisher, consumer) and the example service
#     include nothing of tools/ or tests/; tools/ includes nothing of tests/.
# Fails naming each offending line. scripts/test.sh runs it before building.
#   scripts/check-layers.sh [ROOT]   (default: this checkout)
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

# Headers of the outside libraries' shells.
library_shells='<librdkafka/|<libpq-fe\.h>|<libpq/|<httplib\.h>|"httplib\.h"'

# Our shells: the folders named for the library they wrap (and the program).
shell_folders='common/(postgres|kafka|http)/|cdc/postgres/|publisher/(kafka|postgres|program)/|consumer/(kafka|postgres)/|examples/'

# folder -> what its files may include of ours, as a regex over
# the include path. Order: from the ground floor up.
declare -A allowed=(
  [common]='common/[a-z_]+\.h'
  [cdc]='cdc/[a-z_]+\.h|common/[a-z_]+\.h'
  [publisher/delivery]='cdc/|common/[a-z_]+\.h|outbox/|publisher/delivery/'
  [publisher/mapping]='cdc/|common/[a-z_]+\.h|outbox/|publisher/(delivery|mapping)/'
  [publisher/relay]='cdc/|common/[a-z_]+\.h|outbox/|publisher/(delivery|mapping|relay)/'
  [publisher/recovery]='cdc/|common/[a-z_]+\.h|outbox/|publisher/(delivery|mapping|recovery)/'
  [publisher/operations]='cdc/|common/[a-z_]+\.h|publisher/(delivery|mapping|relay|operations)/'
  [consumer]='common/[a-z_]+\.h|outbox/|consumer/(failures/)?[a-z_]+\.h'
  [consumer/failures]='common/[a-z_]+\.h|outbox/|consumer/(failures/)?[a-z_]+\.h'
  # Shells: the pure parts below them, and their own library.
  [common/postgres]='common/([a-z_]+\.h|postgres/)'
  [common/kafka]='common/([a-z_]+\.h|kafka/)'
  [common/http]='common/http/'
  [cdc/postgres]='cdc/|common/([a-z_]+\.h|postgres/)'
  [publisher/kafka]='cdc/|common/([a-z_]+\.h|kafka/)|outbox/|publisher/(mapping|operations|delivery|kafka)/'
  [publisher/postgres]='cdc/|common/([a-z_]+\.h|postgres/)|outbox/|publisher/(mapping|operations|delivery|relay|recovery|postgres)/'
  [consumer/kafka]='common/([a-z_]+\.h|kafka/)|outbox/|consumer/((failures|kafka)/)?[a-z_]+\.h'
  [consumer/postgres]='common/([a-z_]+\.h|postgres/)|outbox/|consumer/((failures|postgres)/)?[a-z_]+\.h'
  # The programs wire everything below them.
  [publisher/program]='cdc/|common/|outbox/|publisher/'
  [examples/paid_orders]='common/|outbox/|consumer/|examples/paid_orders/'
  # The tools (harness, fault suite, benchmarks) use the product, never the tests.
  [tools/harness]='cdc/|common/|outbox/|publisher/|consumer/|tools/harness/'
  [tools/chaos]='cdc/|common/|outbox/|publisher/|consumer/|tools/(harness|chaos)/'
  [tools/bench]='cdc/|common/|outbox/|publisher/|consumer/|tools/(harness|bench)/'
)
declare -A pure=([cdc]=1 [common]=1 [publisher/mapping]=1 [publisher/operations]=1
                 [publisher/delivery]=1 [publisher/relay]=1 [publisher/recovery]=1 [consumer]=1
                 [consumer/failures]=1)

failed=0
# Every folder of sources has its place in the rule.
for dir in $(find cdc common publisher consumer examples tools -name '*.h' -o -name '*.cc' |
               xargs -n1 dirname | sort -u); do
  if [ -z "${allowed[$dir]:-}" ]; then
    echo "$dir: a folder of sources with no place in the include rule: add it to $0" >&2
    failed=1
  fi
done
for group in "${!allowed[@]}"; do
  for f in $(ls "$group"/*.h "$group"/*.cc 2>/dev/null); do
    while IFS= read -r line; do
      [ -z "$line" ] && continue
      n=${line%%:*}
      inc=${line#*:}
      if [ -n "${pure[$group]:-}" ]; then
        if [[ $inc =~ $library_shells ]] || [[ $inc =~ \"($shell_folders) ]]; then
          echo "$f:$n: a pure file includes a shell's header: $inc" >&2
          failed=1
          continue
        fi
      fi
      if [[ $inc =~ ^#include\ \"([^\"]+)\" ]]; then
        path=${BASH_REMATCH[1]}
        # Outside libraries' headers in quotes (absl, gtest, generated protobuf).
        [[ $path =~ ^(absl|google|gtest|gmock|nlohmann)/ ]] && continue
        if ! [[ $path =~ ^(${allowed[$group]}) ]]; then
          echo "$f:$n: $group may not include $path (dependencies point down)" >&2
          failed=1
        fi
      fi
    done < <(grep -n '^#include' "$f" || true)
  done
done
if [ "$failed" != 0 ]; then
  echo "check-layers: the include rule is broken (docs/design.md, "Where the code lives")" >&2
  exit 1
fi
echo "check-layers: ok"
