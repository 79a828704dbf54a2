#!/usr/bin/env bash
# deploy/prometheus/alerts.yml: valid rules (promtool check rules), and each alert
# fires on series that should fire it and stays quiet on others (promtool test
# rules deploy/prometheus/alerts_test.yml). Every alert has a severity of
# critical or warning and a runbook_url naming a section of docs/operations.md
# that exists. The forms deployments load are made from it: the rule file with a
# runbook base (promtool checks it too) and the Prometheus Operator's
# PrometheusRule, which must be current.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
promtool=$("$root/scripts/fetch-tools.sh" promtool)
"$promtool" check rules "$root/deploy/prometheus/alerts.yml"
(cd "$root/deploy/prometheus" && "$promtool" test rules alerts_test.yml)

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$root/scripts/prometheus-rules.sh" --runbook-base https://docs.example.test/outbox \
  >"$work/alerts.yml"
grep -q 'runbook_url: "https://docs.example.test/outbox/docs/operations.md#' "$work/alerts.yml" ||
  { echo "FAIL: --runbook-base did not reach the runbook URLs" >&2; exit 1; }
"$promtool" check rules "$work/alerts.yml"
"$root/scripts/prometheus-rules.sh" --operator >"$work/prometheus-rule.yaml"
diff -u "$root/deploy/prometheus-operator/prometheus-rule.yaml" "$work/prometheus-rule.yaml" ||
  { echo "FAIL: deploy/prometheus-operator/prometheus-rule.yaml is not current: run" \
         "scripts/prometheus-rules.sh --operator > deploy/prometheus-operator/prometheus-rule.yaml" >&2
    exit 1; }

python3 - "$root/deploy/prometheus/alerts.yml" "$root/docs/operations.md" <<'PY'
import re
import sys

rules, doc = open(sys.argv[1]).read(), open(sys.argv[2]).read()


def anchor(heading):
    """GitHub's anchor of a Markdown heading."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


anchors = {anchor(h) for h in re.findall(r"^#{1,6} (.+)$", doc, re.MULTILINE)}
failures = []
blocks = re.split(r"\n\s*- alert: ", rules)[1:]
for block in blocks:
    name = block.split("\n", 1)[0].strip()
    severity = re.search(r"severity: (\S+)", block)
    if not severity or severity.group(1) not in ("critical", "warning"):
        failures.append("%s: severity must be critical or warning, not %s" %
                        (name, severity.group(1) if severity else "none"))
    url = re.search(r'runbook_url: "docs/operations\.md#([^"]+)"', block)
    if not url:
        failures.append("%s: no runbook_url into docs/operations.md" % name)
    elif url.group(1) not in anchors:
        failures.append("%s: docs/operations.md has no section #%s" % (name, url.group(1)))
for f in failures:
    print("FAIL: " + f, file=sys.stderr)
if failures or not blocks:
    sys.exit(1)
print("runbooks: %d alerts, each with a severity and a runbook that exists" % len(blocks))
PY
