#!/usr/bin/env bash
# deploy/prometheus/alerts.yml: valid rules (promtool check rules), and each alert
# fires on series that should fire it and stays quiet on others (promtool test
# rules deploy/prometheus/alerts_test.yml).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
promtool=$("$root/scripts/fetch-tools.sh" promtool)
"$promtool" check rules "$root/deploy/prometheus/alerts.yml"
cd "$root/deploy/prometheus"
"$promtool" test rules alerts_test.yml
