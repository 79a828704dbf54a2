#!/usr/bin/env python3
"""What deploy/kubernetes/ must say, beyond the schemas.

  - the publisher runs as a pair that converges: both Ready in normal running,
    rollouts and node drains that progress (rollout_model.py plays the
    controllers' rules), and the check bites: the pair as it shipped before
    (Ready on /healthz, which a standby answers 503) must fail it;
  - probes ask /readyz and /livez;
  - every pod runs as a numeric non-root user without privilege escalation;
  - credentials come from the Secret, never from a command line or a literal;
  - every OUTBOX_<FLAG> variable is a flag of outbox-publisher, and every flag the
    consumer's args pass is one of outbox-paid-orders (their --help / usage);
  - the image's tag is the project's version (outbox-publisher --version).

Usage: kubernetes_manifests.py REPOSITORY BUILD_DIR
"""

import copy
import glob
import os
import re
import subprocess
import sys

import yaml

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rollout_model  # noqa: E402

failures = []


def fail(message):
    failures.append(message)
    print("FAIL: " + message, file=sys.stderr)


def documents(repository):
    docs = []
    for path in sorted(glob.glob(os.path.join(repository, "deploy/kubernetes/*.yaml"))):
        with open(path) as f:
            docs += [d for d in yaml.safe_load_all(f) if d]
    return docs


def named(docs, kind, name):
    for d in docs:
        if d["kind"] == kind and d["metadata"]["name"] == name:
            return d
    fail("no %s %s" % (kind, name))
    return None


def check_pod(deployment, secret_names, version):
    name = deployment["metadata"]["name"]
    spec = deployment["spec"]["template"]["spec"]
    context = spec.get("securityContext", {})
    if context.get("runAsNonRoot") is not True or not isinstance(
            context.get("runAsUser"), int) or context.get("runAsUser") == 0:
        fail("%s: runAsNonRoot with a numeric non-root runAsUser" % name)
    for c in spec["containers"]:
        if c.get("securityContext", {}).get("allowPrivilegeEscalation") is not False:
            fail("%s: allowPrivilegeEscalation must be false" % name)
        if not c["image"].endswith(":" + version):
            fail("%s: image %s is not tagged %s (the version)" % (name, c["image"], version))
        words = " ".join(c.get("command", []) + c.get("args", []))
        if re.search(r"password|secret|sasl\.", words, re.IGNORECASE):
            fail("%s: a credential on the command line: %s" % (name, words))
        for e in c.get("env", []):
            if re.search(r"PASSWORD|SECRET", e["name"]) and "value" in e:
                fail("%s: %s is a literal, not from the Secret" % (name, e["name"]))
            ref = e.get("valueFrom", {}).get("secretKeyRef", {}).get("name")
            if ref is not None and ref not in secret_names:
                fail("%s: %s names Secret %s, which is not shipped" % (name, e["name"], ref))
        probes = {p: c.get(p, {}).get("httpGet", {}).get("path")
                  for p in ("readinessProbe", "livenessProbe")}
        if probes != {"readinessProbe": "/readyz", "livenessProbe": "/livez"}:
            fail("%s: readiness must ask /readyz and liveness /livez, not %s" %
                 (name, probes))
    return spec["containers"]


def budget_of(deployment, budgets):
    labels = deployment["spec"]["template"]["metadata"]["labels"]
    for b in budgets:
        selector = b["spec"]["selector"]["matchLabels"]
        if all(labels.get(k) == v for k, v in selector.items()):
            return b
    return None


def check_convergence(deployment, budgets):
    budget = budget_of(deployment, budgets)
    for reason in rollout_model.check(deployment, budget):
        fail("publisher pair: " + reason)
    # The check must bite on what was measured before: a readiness probe on
    # /healthz, which a standby answers 503 (one pod never Ready, rollouts stall).
    mutant = copy.deepcopy(deployment)
    container = mutant["spec"]["template"]["spec"]["containers"][0]
    container["readinessProbe"]["httpGet"]["path"] = "/healthz"
    if not rollout_model.check(mutant, budget):
        fail("the convergence check passes a pair that is Ready on /healthz")
    # And on a budget that lets nothing go.
    if budget is not None:
        strict = copy.deepcopy(budget)
        strict["spec"].pop("maxUnavailable", None)
        strict["spec"]["minAvailable"] = deployment["spec"]["replicas"]
        if not rollout_model.check(deployment, strict):
            fail("the convergence check passes a budget that refuses every drain")


def check_operator(repository, deployments):
    """deploy/prometheus-operator/: the PodMonitor scrapes every outbox pod on a
    port each one names, and the PrometheusRule holds exactly alerts.yml's groups."""
    folder = os.path.join(repository, "deploy/prometheus-operator")
    with open(os.path.join(folder, "pod-monitor.yaml")) as f:
        monitor = yaml.safe_load(f)
    if monitor.get("apiVersion") != "monitoring.coreos.com/v1" or \
            monitor.get("kind") != "PodMonitor":
        fail("pod-monitor.yaml is not a monitoring.coreos.com/v1 PodMonitor")
        return
    selector = monitor["spec"]["selector"]["matchLabels"]
    endpoints = monitor["spec"]["podMetricsEndpoints"]
    for d in deployments:
        name = d["metadata"]["name"]
        labels = d["spec"]["template"]["metadata"]["labels"]
        if any(labels.get(k) != v for k, v in selector.items()):
            fail("the PodMonitor does not select %s's pods" % name)
        ports = {p.get("name") for c in d["spec"]["template"]["spec"]["containers"]
                 for p in c.get("ports", [])}
        for e in endpoints:
            if e.get("port") not in ports:
                fail("the PodMonitor scrapes port %s, which %s does not name" %
                     (e.get("port"), name))
            if e.get("path", "/metrics") != "/metrics":
                fail("the PodMonitor scrapes %s, not /metrics" % e.get("path"))
    with open(os.path.join(folder, "prometheus-rule.yaml")) as f:
        rule = yaml.safe_load(f)
    with open(os.path.join(repository, "deploy/prometheus/alerts.yml")) as f:
        source = yaml.safe_load(f)
    if rule.get("kind") != "PrometheusRule" or \
            rule.get("apiVersion") != "monitoring.coreos.com/v1":
        fail("prometheus-rule.yaml is not a monitoring.coreos.com/v1 PrometheusRule")
    elif rule["spec"]["groups"] != source["groups"]:
        fail("prometheus-rule.yaml's groups are not deploy/prometheus/alerts.yml's")


def publisher_flags(build):
    usage = subprocess.run([os.path.join(build, "outbox-publisher"), "--help"],
                           capture_output=True, text=True, check=True).stdout
    return set(re.findall(r"^\s+--([a-z-]+)", usage, re.MULTILINE))


def consumer_flags(build):
    usage = subprocess.run([os.path.join(build, "outbox-paid-orders")],
                           capture_output=True, text=True).stderr
    return set(re.findall(r"--([a-z-]+)", usage))


def main():
    repository, build = sys.argv[1], sys.argv[2]
    docs = documents(repository)
    version = subprocess.run([os.path.join(build, "outbox-publisher"), "--version"],
                             capture_output=True, text=True, check=True).stdout.split()[1]
    secrets = {d["metadata"]["name"] for d in docs if d["kind"] == "Secret"}
    if not secrets:
        fail("no Secret for the credentials")

    publisher = named(docs, "Deployment", "outbox-publisher")
    if publisher:
        if publisher["spec"]["replicas"] != 2:
            fail("the publisher runs as an active/standby pair: replicas 2")
        flags = publisher_flags(build)
        for c in check_pod(publisher, secrets, version):
            for e in c.get("env", []):
                n = e["name"]
                if n.startswith("OUTBOX_KAFKA_") or not n.startswith("OUTBOX_"):
                    continue
                flag = n[len("OUTBOX_"):].lower().replace("_", "-")
                if flag not in flags:
                    fail("publisher: %s sets --%s, which is no flag" % (n, flag))
    budgets = [d for d in docs if d["kind"] == "PodDisruptionBudget"]
    if publisher:
        check_convergence(publisher, budgets)
    for app in ("outbox-publisher", "outbox-paid-orders"):
        if not any(b["spec"]["selector"]["matchLabels"].get("app.kubernetes.io/name") == app
                   for b in budgets):
            fail("no PodDisruptionBudget for %s" % app)

    consumer = named(docs, "Deployment", "outbox-paid-orders")
    if consumer:
        flags = consumer_flags(build)
        for c in check_pod(consumer, secrets, version):
            for arg in c.get("args", []):
                if arg.startswith("--") and arg[2:] not in flags:
                    fail("consumer: %s is not a flag of outbox-paid-orders" % arg)

    check_operator(repository, [d for d in (publisher, consumer) if d])

    if failures:
        print("kubernetes_manifests: %d failure(s)" % len(failures), file=sys.stderr)
        return 1
    print("kubernetes_manifests: ok (version %s)" % version)
    return 0


if __name__ == "__main__":
    sys.exit(main())
