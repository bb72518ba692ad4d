"""Language school: the online placement test hangs at "Scoring your answers". At 13:45 the
platform team applied a NetworkPolicy `scorer-ingress` in `placement` that selects the
test-scorer pods and admits only grading-worker from the same namespace: exam-portal (in
`learners`) can no longer reach test-scorer, its calls time out (ETIMEDOUT) and it answers
504. test-scorer itself is healthy and idle. Red herrings: item-bank rolled out 40 min before
the onset in the same namespace (the engineer suspects it, it is fine and still reachable),
an ERROR-looking rubric cache line in test-scorer, an old OOM restart of the certificate
renderer, a readiness blip in marketing."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.scenario_tools.common import (
    MIB,
    Story,
    const,
    container_metrics,
    http_metrics,
    truth,
)
from tests.scenario_tools.kube import Ctr, ended, http_probe, running
from tests.scenario_tools.parts import app, neighbour, readiness_blip, rollout
from tests.scenario_tools.telemetry import spread

from .kit import base, chatter, namespaced

ID = "placement-test-scoring-hangs"
NOW = datetime.fromisoformat("2027-03-09T14:12:00+00:00")
NS = "placement"
REG = "registry.gitlab.com/linguaviva/platform"


def build() -> Story:
    s = Story(
        id=ID, title="Online placement test stuck on scoring", now=NOW,
        report="""\
Students finishing the online placement test get stuck on "Scoring your answers..." and
then a timeout page, since roughly quarter to two. Practice questions and the course
catalogue load fine. item-bank got a release a bit before that, could that be it?
""",
        truth=truth(
            "network", "NetworkPolicy", NS, "scorer-ingress",
            ["scorer-ingress", "ETIMEDOUT", "test-scorer.placement.svc.cluster.local",
             "grading-worker"],
            "The NetworkPolicy scorer-ingress, applied at 13:45, selects the test-scorer pods "
            "and allows ingress only from grading-worker in the placement namespace, so "
            "exam-portal in the learners namespace is dropped and its scoring calls time out. "
            "Add an ingress rule for exam-portal (namespaceSelector learners + podSelector "
            "exam-portal) on port 8080, or roll the policy back."))
    onset = NOW - timedelta(minutes=27)
    nodes = base(s, [NS, "learners", "marketing"], 4, subnet=42, region="eu-central-1")
    c = s.cluster

    # ---- the policy that cuts exam-portal off, and an older one that shows the pattern
    namespaced(s, "networking.k8s.io/v1", "NetworkPolicy", NS, "scorer-ingress", onset, {
        "podSelector": {"matchLabels": {"app.kubernetes.io/name": "test-scorer"}},
        "policyTypes": ["Ingress"],
        "ingress": [{"from": [{"podSelector": {"matchLabels": {
            "app.kubernetes.io/name": "grading-worker"}}}],
            "ports": [{"protocol": "TCP", "port": 8080}]}]},
        labels={"app.kubernetes.io/managed-by": "argocd",
                "policy.linguaviva.io/tier": "zero-trust"},
        annotations={"argocd.argoproj.io/tracking-id":
                     "placement-policies:networking.k8s.io/NetworkPolicy:placement/"
                     "scorer-ingress"})
    namespaced(s, "networking.k8s.io/v1", "NetworkPolicy", NS, "item-bank-ingress",
               NOW - timedelta(days=131), {
                   "podSelector": {"matchLabels": {"app.kubernetes.io/name": "item-bank"}},
                   "policyTypes": ["Ingress"],
                   "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {
                       "kubernetes.io/metadata.name": "learners"}}, "podSelector": {
                       "matchLabels": {"app.kubernetes.io/name": "exam-portal"}}}],
                       "ports": [{"protocol": "TCP", "port": 8080}]}]},
               labels={"app.kubernetes.io/managed-by": "argocd",
                       "policy.linguaviva.io/tier": "zero-trust"})

    # ---- test-scorer: healthy, but exam-portal's traffic no longer arrives
    cut = onset.timestamp() + 40

    def scorer_rps(t: int) -> float:
        return 3.4 if t < cut else 0.15

    scorer, scorers = app(
        s, NS, "test-scorer", f"{REG}/test-scorer:2.14.0", nodes[1:], replicas=3, revision=22,
        rps=scorer_rps, codes={"200": const(0.997), "422": const(0.003)},
        median=const(0.42), cpu=lambda t: 0.35 if t < cut else 0.04, memory_mib=610,
        limits={"memory": "1Gi"}, requests={"cpu": "500m", "memory": "768Mi"},
        env={"RUBRIC_CACHE_DIR": "/var/cache/rubrics", "CEFR_MODEL": "cefr-scorer-2026.11"},
        rollout_at=NOW - timedelta(days=6, hours=3))
    svc = next(x for x in c.services if x["metadata"]["name"] == "test-scorer")
    scorer_ip = svc["spec"]["clusterIP"]
    chatter(s, scorers, "test-scorer", "test-scorer", [
        ("info", "scored attempt level=B1 sections=4 in 0.41s", {}),
        ("info", "scored attempt level=A2 sections=4 in 0.37s", {}),
        ("info", "scored attempt level=C1 sections=5 in 0.58s", {}),
        ("error", "rubric cache miss for B2-writing-v7, reloading from bucket",
         {"error.type": "RubricCacheMiss"}),
    ], 240, end=onset)
    chatter(s, scorers, "test-scorer", "test-scorer", [
        ("info", "scored attempt level=B2 sections=5 in 0.46s (source=grading-worker)", {}),
        ("error", "rubric cache miss for C1-speaking-v3, reloading from bucket",
         {"error.type": "RubricCacheMiss"}),
        ("info", "rubric cache: 41 entries, 3 evicted", {}),
    ], 24, start=onset)

    grader, graders = app(
        s, NS, "grading-worker", f"{REG}/grading-worker:2.14.0", nodes, replicas=2,
        revision=22, rps=const(0.12), codes={"200": const(1.0)}, median=const(0.5),
        cpu=const(0.05), memory_mib=180, histogram=False,
        rollout_at=NOW - timedelta(days=6, hours=3))
    chatter(s, graders, "grading-worker", "grading-worker", [
        ("info", "essay batch 2027-03-09/141 re-scored via test-scorer (12 attempts)", {}),
        ("warn", "teacher override pending for attempt 88120914, skipping re-score", {}),
    ], 30)

    # ---- item-bank: rolled out 40 min before the onset, healthy (the suspect)
    roll_at = onset - timedelta(minutes=41)
    item = rollout(s, NS, "item-bank", lambda v: Ctr(
        "item-bank", f"{REG}/item-bank:{v}", requests={"cpu": "200m", "memory": "256Mi"},
        limits={"memory": "512Mi"}, readiness=http_probe("/ready"),
        liveness=http_probe("/healthz", delay=15, period=20)),
        old="5.8.2", new="5.9.0", at=roll_at, revision=48, replicas=3, node_list=nodes)
    for pod in item.new_pods + item.old_pods:
        container_metrics(s, pod, "item-bank", memory=lambda t: 210 * MIB)
        http_metrics(s, "item-bank", pod, rps=const(2.2), codes={"200": const(0.999),
                                                                 "404": const(0.001)},
                     median=const(0.04))
    chatter(s, item.new_pods, "item-bank", "item-bank", [
        ("info", "item-bank 5.9.0 started, 18412 items across 6 CEFR levels", {}),
        ("info", "GET /v2/items?level=B1&section=reading 200 in 31ms", {}),
        ("info", "GET /v2/items?level=A2&section=listening 200 in 44ms", {}),
        ("warn", "item 40-77121 has no audio transcript, served without captions", {}),
    ], 90, start=roll_at + timedelta(minutes=2))

    # ---- exam-portal in learners: the caller that times out
    portal_ctr = Ctr("exam-portal", f"{REG}/exam-portal:7.3.1", port=3000,
                     requests={"cpu": "250m", "memory": "384Mi"}, limits={"memory": "768Mi"},
                     env={"SCORER_URL": "http://test-scorer.placement.svc.cluster.local",
                          "ITEM_BANK_URL": "http://item-bank.placement.svc.cluster.local",
                          "SCORER_TIMEOUT_MS": "5000"},
                     readiness=http_probe("/api/ready"),
                     liveness=http_probe("/api/live", delay=15, period=20))

    def share_504(t: int) -> float:
        return 0.0005 if t < cut else 0.11

    portal, portals = app(
        s, "learners", "exam-portal", portal_ctr.image, nodes, replicas=3, revision=63,
        rps=const(31.0), codes={"200": lambda t: 0.995 - share_504(t), "304": const(0.004),
                                "504": share_504}, median=lambda t: 0.09 if t < cut else 0.6,
        cpu=const(0.22), memory_mib=330, port=3000,
        env=portal_ctr.env, rollout_at=NOW - timedelta(days=3, hours=20))
    chatter(s, portals, "exam-portal", "exam-portal", [
        ("info", "GET /placement/attempt/section/3 200", {"http.response.status_code": 200}),
        ("info", "POST /placement/attempt/submit 200", {"http.response.status_code": 200}),
        ("info", "GET /catalogue/courses?level=B2 200", {"http.response.status_code": 200}),
    ], 300, end=onset)
    chatter(s, portals, "exam-portal", "exam-portal", [
        ("info", "GET /placement/attempt/section/2 200", {"http.response.status_code": 200}),
        ("info", "GET /catalogue/courses?level=A2 200", {"http.response.status_code": 200}),
    ], 120, start=onset)
    for i, when in enumerate(spread(s.rng, onset + timedelta(seconds=45), NOW, 96)):
        pod = portals[i % len(portals)]
        s.logs.add(when, "error",
                   f"POST {portal_ctr.env['SCORER_URL']}/v1/score failed: connect ETIMEDOUT "
                   f"{scorer_ip}:80 after 5000ms",
                   namespace="learners", pod=pod["metadata"]["name"], container="exam-portal",
                   service="exam-portal", node=pod["spec"]["nodeName"],
                   error__type="ETIMEDOUT", http__response__status_code=504,
                   url__path="/placement/attempt/submit")
    del grader, scorer, portal

    # ---- elsewhere: an old OOM restart, a readiness blip
    last = ended("OOMKilled", 137, NOW - timedelta(days=2, hours=7),
                 NOW - timedelta(days=2, hours=5, minutes=12))
    neighbour(s, "learners", "certificate-pdf", f"{REG}/certificate-pdf:1.12.4", nodes,
              replicas=2, memory_mib=390, restarts={1: running(
                  NOW - timedelta(days=2, hours=5, minutes=11), restarts=1, last=last)},
              logs=[("info", "rendered certificate CERT-2027-031188 (B2) in 1.9s", {}),
                    ("warn", "font fallback for glyph U+0150 in student name", {})],
              n_logs=24, rps=0.3)
    readiness_blip(s, "marketing", "landing-pages", f"{REG}/landing-pages:2027.3.2", nodes,
                   minutes_ago=51)
    return s

