"""The Deployment controller's and the eviction API's rules, played on the
publisher pair, since no Kubernetes control plane runs here.

A pod's role follows from the slot: the first publisher holds it (active), every
other one stands by; when the active pod goes, one standby takes over. Whether a
pod is Ready or alive follows from which endpoint its probes ask and what that
endpoint answers in its role. ENDPOINTS is that table, as StandbyPairTest checks
it against the binary (tests/publisher/end_to_end/standby_pair_test.cc).

check(deployment, budget) returns the reasons the pair would not converge:
  - in the steady state, a replica that runs normally and is not Ready (the
    Deployment would report fewer available replicas than desired, forever);
  - a liveness probe that fails in a normal role (the pod would be restarted in a
    loop);
  - a rolling update that can stall, for any order in which the controller may
    pick the old pods to delete (kubectl rollout status would never return);
  - a node drain whose eviction the PodDisruptionBudget refuses while the pair
    runs normally.
"""

import copy
import math

ENDPOINTS = {
    "/livez": {"active": True, "standby": True},
    "/readyz": {"active": True, "standby": True},
    "/healthz": {"active": True, "standby": False},
    "/metrics": {"active": True, "standby": True},
}


def _probe(container, kind):
    return container.get(kind, {}).get("httpGet", {}).get("path")


def _answers(path, role):
    return ENDPOINTS.get(path, {}).get(role, False)


def _resolve(value, replicas, round_up):
    if isinstance(value, str) and value.endswith("%"):
        exact = replicas * int(value[:-1]) / 100.0
        return int(math.ceil(exact) if round_up else math.floor(exact))
    return int(value)


class _Pods:
    """The pods of the pair: (name, version, role), in creation order."""

    def __init__(self, readiness_path):
        self.readiness_path = readiness_path
        self.pods = []
        self.count = 0

    def start(self, version):
        self.count += 1
        role = "standby" if any(p[2] == "active" for p in self.pods) else "active"
        self.pods.append(("pod-%d" % self.count, version, role))

    def delete(self, name):
        gone = [p for p in self.pods if p[0] == name][0]
        self.pods = [p for p in self.pods if p[0] != name]
        if gone[2] == "active" and self.pods:
            # The standby that looks first takes over: any of them.
            first = self.pods[0]
            self.pods[0] = (first[0], first[1], "active")

    def ready(self, pod):
        return _answers(self.readiness_path, pod[2])

    def ready_count(self):
        return sum(1 for p in self.pods if self.ready(p))


def _rollout_stalls(replicas, surge, unavailable, readiness_path):
    """Every order of deletions the controller may choose; None when each
    converges, else a description of a stalled state."""
    start = _Pods(readiness_path)
    for _ in range(replicas):
        start.start("old")
    stack = [(start, 0)]
    while stack:
        pods, depth = stack.pop()
        if depth > 50:
            return "the rollout does not finish within 50 steps"
        new = [p for p in pods.pods if p[1] == "new"]
        old = [p for p in pods.pods if p[1] == "old"]
        if not old and len(new) == replicas and pods.ready_count() == replicas:
            continue
        moves = []
        # Scale the new ReplicaSet up within maxSurge.
        if len(new) < replicas and len(pods.pods) < replicas + surge:
            up = copy.deepcopy(pods)
            up.start("new")
            moves.append(up)
        # Scale the old one down while enough pods stay available: unready old
        # pods first, then any Ready one (either role: the controller does not know
        # which one holds the slot).
        unready_old = [p for p in old if not pods.ready(p)]
        candidates = unready_old or [
            p for p in old if pods.ready_count() - 1 >= replicas - unavailable]
        for victim in candidates:
            down = copy.deepcopy(pods)
            down.delete(victim[0])
            moves.append(down)
        if not moves:
            return ("the rollout stalls with %s: %d Ready, and maxSurge %d / "
                    "maxUnavailable %d allow no step" %
                    (", ".join("%s %s (%s, %s)" % (p[0], p[1], p[2], "Ready" if
                                                   pods.ready(p) else "not Ready")
                               for p in pods.pods), pods.ready_count(), surge,
                     unavailable))
        stack.extend((m, depth + 1) for m in moves)
    return None


def _disruptions_allowed(budget, replicas, healthy):
    spec = budget["spec"]
    if "minAvailable" in spec:
        desired = _resolve(spec["minAvailable"], replicas, round_up=True)
    else:
        desired = replicas - _resolve(spec["maxUnavailable"], replicas, round_up=True)
    return max(0, healthy - desired)


def check(deployment, budget):
    reasons = []
    spec = deployment["spec"]
    replicas = spec["replicas"]
    container = spec["template"]["spec"]["containers"][0]
    readiness = _probe(container, "readinessProbe")
    liveness = _probe(container, "livenessProbe")
    for role in ("active", "standby"):
        if not _answers(readiness, role):
            reasons.append("a %s publisher is never Ready on %s: the Deployment reports "
                           "fewer available replicas than desired forever" %
                           (role, readiness))
        if not _answers(liveness, role):
            reasons.append("a %s publisher fails its liveness probe %s and is restarted "
                           "in a loop" % (role, liveness))

    rolling = spec.get("strategy", {}).get("rollingUpdate", {})
    surge = _resolve(rolling.get("maxSurge", "25%"), replicas, round_up=True)
    unavailable = _resolve(rolling.get("maxUnavailable", "25%"), replicas,
                           round_up=False)
    if surge == 0 and unavailable == 0:
        reasons.append("maxSurge and maxUnavailable are both 0: no rollout can start")
    else:
        stall = _rollout_stalls(replicas, surge, unavailable, readiness)
        if stall:
            reasons.append(stall)

    # A node drain, one node after the other (the pods spread over nodes): each
    # eviction must be allowed once the replacement of the previous one is Ready.
    if budget is None:
        reasons.append("no PodDisruptionBudget: a drain may take both at once")
    else:
        pods = _Pods(readiness)
        for _ in range(replicas):
            pods.start("old")
        for _ in range(replicas):
            victim = pods.pods[0]
            healthy = pods.ready_count()
            if pods.ready(victim) and _disruptions_allowed(budget, replicas, healthy) < 1:
                reasons.append(
                    "a drain of the node of %s (%s) is refused by the "
                    "PodDisruptionBudget: %d of %d Ready" %
                    (victim[0], victim[2], healthy, replicas))
                break
            pods.delete(victim[0])
            pods.start("old")
    return reasons
