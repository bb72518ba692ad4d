"""Shape 3: pods stay Pending because their nodeSelector names a label the new pool lacks.

The high-memory node group was replaced this morning (highmem-2026-05 -> highmem-2026-11).
The new group's template labels nodes `node.example.io/pool=highmem` instead of the old
`workload-class=highmem`. scoring-engine still selects `workload-class: highmem`; when the
old nodes were drained its pods went Pending and never came back. model-trainer, which
already used the new label, runs on the new nodes. decision-api, the caller, answers 503.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from . import kube
from .emit import Scenario, steps
from .fleet import (
    App,
    app,
    basic_signals,
    chatter,
    cpu_series,
    http_series,
    make_nodes,
    memory_series,
    platform,
    simple,
)

ID = "scoring-down-after-node-upgrade"
NOW = datetime.fromisoformat("2026-11-27T11:10:00+00:00")
NEW_POOL = datetime.fromisoformat("2026-11-27T07:31:00+00:00")
DRAIN = datetime.fromisoformat("2026-11-27T08:14:00+00:00")
NS = "risk"
TAINT = [{"key": "dedicated", "value": "highmem", "effect": "NoSchedule"}]
TOLERATE = [{"key": "dedicated", "operator": "Equal", "value": "highmem", "effect": "NoSchedule"}]


def build() -> Scenario:
    rng = random.Random(31_03)
    sc = Scenario(
        id=ID, title="Risk scoring down since the node upgrade",
        now=NOW,
        report=(
            "decision-api is returning 503 for most risk checks since ~08:15, around when "
            "platform did the node upgrade. all nodes show Ready and nothing is crashing. "
            "rollback the upgrade?\n"),
        truth={"category": "unschedulable",
               "culprit": {"kind": "Deployment", "namespace": NS, "name": "scoring-engine"},
               "evidence": ["didn't match Pod's node affinity/selector",
                            "workload-class: highmem", "node.example.io/pool: highmem"],
               "fix": "Point scoring-engine's nodeSelector at node.example.io/pool=highmem "
                      "(or add workload-class=highmem back to the highmem-2026-11 node group)."})
    created = NOW - timedelta(days=400)
    sc.add(kube.namespace(NS, created, {"team": "risk"}))
    general = make_nodes(sc, ["ip-10-20-4-11.eu-central-1.compute.internal",
                              "ip-10-20-4-57.eu-central-1.compute.internal",
                              "ip-10-20-5-102.eu-central-1.compute.internal",
                              "ip-10-20-6-33.eu-central-1.compute.internal"],
                         created=NOW - timedelta(days=12),
                         labels={"eks.amazonaws.com/nodegroup": "general-2026-11",
                                 "node.kubernetes.io/instance-type": "m6i.2xlarge",
                                 "node.example.io/pool": "general"})
    highmem_names = ["ip-10-20-7-18.eu-central-1.compute.internal",
                     "ip-10-20-7-140.eu-central-1.compute.internal",
                     "ip-10-20-8-66.eu-central-1.compute.internal"]
    highmem = make_nodes(sc, highmem_names, created=NEW_POOL, cpu="16", memory="128Gi",
                         first_index=11,
                         labels={"eks.amazonaws.com/nodegroup": "highmem-2026-11",
                                 "node.kubernetes.io/instance-type": "r6i.4xlarge",
                                 "node.example.io/pool": "highmem"})
    for obj in sc.objects:
        if obj["kind"] == "Node" and obj["metadata"]["name"] in highmem_names:
            obj["spec"]["taints"] = TAINT
    since = NOW - timedelta(days=5, hours=20)
    platform(sc, rng, general, created, since=since)

    def scoring(image: str) -> list[dict]:
        return [kube.container("scoring-engine", image,
                               requests={"cpu": "2", "memory": "24Gi"},
                               limits={"memory": "28Gi"}, port=8080, readiness="/ready",
                               liveness="/healthz",
                               env={"MODEL_BUNDLE": "s3://risk-models/gbm/2026-11-18",
                                    "JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=80"})]

    engine = app(sc, rng, "scoring-engine", NS, replicas=3, nodes=highmem, created=created,
                 images=[("registry.example.io/risk/scoring-engine:9.4.0",
                          NOW - timedelta(days=9))],
                 containers=scoring, add_pods=False,
                 spec_extra={"node_selector": {"workload-class": "highmem"},
                             "tolerations": TOLERATE})
    rs = engine.replicasets[-1]
    template_hash = rs["metadata"]["labels"]["pod-template-hash"]
    message = ("0/7 nodes are available: 7 node(s) didn't match Pod's node affinity/selector. "
               "preemption: 0/7 nodes are available: 7 Preemption is not helpful for scheduling.")
    pending_names = []
    for index in range(3):
        at = DRAIN + timedelta(minutes=index * 9, seconds=rng.randint(0, 40))
        name = f"scoring-engine-{template_hash}-{kube.suffix(rng)}"
        pending_names.append((name, at))
        sc.add(kube.pod(name, NS, owner=("apps/v1", "ReplicaSet", rs["metadata"]["name"]),
                        labels={"app": "scoring-engine", "pod-template-hash": template_hash},
                        spec=rs["spec"]["template"]["spec"], created=at, node_name=None,
                        ip=None, statuses=None, phase="Pending",
                        conditions=[{"type": "PodScheduled", "status": "False",
                                     "reason": "Unschedulable", "message": message,
                                     "lastProbeTime": None,
                                     "lastTransitionTime": kube.ts(at)}]))
    rs["status"] = {"replicas": 3, "fullyLabeledReplicas": 3, "observedGeneration": 1}
    engine.deployment["status"] = {
        "observedGeneration": 2, "replicas": 3, "updatedReplicas": 3, "unavailableReplicas": 3,
        "conditions": [
            {"type": "Progressing", "status": "True", "reason": "NewReplicaSetAvailable",
             "message": f'ReplicaSet "{rs["metadata"]["name"]}" has successfully progressed.',
             "lastUpdateTime": kube.ts(NOW - timedelta(days=9)),
             "lastTransitionTime": kube.ts(NOW - timedelta(days=9))},
            {"type": "Available", "status": "False", "reason": "MinimumReplicasUnavailable",
             "message": "Deployment does not have minimum availability.",
             "lastUpdateTime": kube.ts(DRAIN + timedelta(minutes=19)),
             "lastTransitionTime": kube.ts(DRAIN + timedelta(minutes=19))}]}

    trainer = app(sc, rng, "model-trainer", NS, replicas=1, nodes=highmem, created=created,
                  images=[("registry.example.io/risk/model-trainer:2.2.1",
                           NOW - timedelta(days=30))],
                  pod_started=DRAIN + timedelta(minutes=2), port=None, service=False,
                  containers=simple("model-trainer", port=None, cpu="4", memory="48Gi",
                                    limit_memory="64Gi", probe=None),
                  spec_extra={"tolerations": TOLERATE, "affinity": {"nodeAffinity": {
                      "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
                          {"matchExpressions": [{"key": "node.example.io/pool",
                                                 "operator": "In", "values": ["highmem"]}]}]}}}})
    decision = app(sc, rng, "decision-api", NS, replicas=3, nodes=general, created=created,
                   images=[("registry.example.io/risk/decision-api:6.0.3",
                            NOW - timedelta(days=4))],
                   containers=simple("decision-api", cpu="300m", memory="512Mi",
                                     limit_memory="1Gi", probe="/healthz",
                                     env={"SCORING_URL": "http://scoring-engine.risk.svc:80"}))
    rules = app(sc, rng, "rules-engine", NS, replicas=2, nodes=general, created=created,
                images=[("registry.example.io/risk/rules-engine:1.14.0", NOW - timedelta(days=16))],
                pod_started=since,
                containers=simple("rules-engine", cpu="200m", memory="384Mi", probe="/healthz"))
    _events(sc, pending_names, message)
    _signals(sc, rng, decision, rules, trainer, template_hash)
    cluster_ip = next(o["spec"]["clusterIP"] for o in sc.objects
                      if o["kind"] == "Service" and o["metadata"]["name"] == "scoring-engine")
    _logs(sc, rng, decision, rules, trainer, cluster_ip)
    return sc


def _events(sc: Scenario, pending: list[tuple[str, datetime]], message: str) -> None:
    for index, (name, created) in enumerate(pending):
        minutes = int((NOW - created).total_seconds() // 60)
        sc.add(kube.event(NS, kind="Pod", name=name, reason="FailedScheduling", type="Warning",
                          component="default-scheduler", message=message, count=minutes // 5 + 2,
                          first=created + timedelta(seconds=1),
                          last=NOW - timedelta(minutes=2 + index)),
               kube.event(NS, kind="Pod", name=name, reason="NotTriggerScaleUp",
                          component="cluster-autoscaler",
                          message="pod didn't trigger scale-up: 2 node(s) didn't match Pod's "
                                  "node affinity/selector, 1 max node group size reached",
                          count=minutes // 10 + 1, first=created + timedelta(seconds=12),
                          last=NOW - timedelta(minutes=4 + index)))
    sc.add(kube.event("default", kind="Node", name="ip-10-20-7-18.eu-central-1.compute.internal",
                      reason="FreeDiskSpaceFailed", type="Warning",
                      message="Failed to garbage collect required amount of images. Attempted "
                              "to free 2148451942 bytes, but only found 0 bytes eligible to free.",
                      first=NOW - timedelta(minutes=44), last=NOW - timedelta(minutes=44),
                      host="ip-10-20-7-18.eu-central-1.compute.internal", api="v1"))


def _decision_errors(at: datetime) -> float:
    """decision-api's 5xx share: half while the old pods drain, nearly all once gone."""
    if at < DRAIN:
        return 0.001
    return 0.35 if at < DRAIN + timedelta(minutes=19) else 0.93


def _signals(sc: Scenario, rng: random.Random, decision: App, rules: App, trainer: App,
             template_hash: str) -> None:
    start = NOW - timedelta(hours=6)
    times = steps(start, NOW, timedelta(minutes=5))
    for pod_obj in decision.pods:
        name = pod_obj["metadata"]["name"]
        http_series(sc, NS, name, "decision-api", times, lambda _at: 18.0,
                    _decision_errors,
                    lambda at: 0.045 if at < DRAIN else 0.012)
        cpu_series(sc, NS, name, "decision-api", times, lambda _at: 0.12)
        memory_series(sc, NS, name, "decision-api", times,
                      lambda _at, r=rng: 300 * 2**20 * (1 + 0.03 * r.random()))
    basic_signals(sc, rules, start, NOW, cores=0.05, mem_mib=210)
    basic_signals(sc, trainer, DRAIN + timedelta(minutes=5), NOW, cores=3.1, mem_mib=39000)
    for index in range(3):
        old = f"scoring-engine-{template_hash}-{kube.suffix(rng)}"
        gone = DRAIN + timedelta(minutes=index * 9)
        series_times = [t for t in times if t <= gone]
        cpu_series(sc, NS, old, "scoring-engine", series_times, lambda _at: 1.4)
        memory_series(sc, NS, old, "scoring-engine", series_times,
                      lambda _at, r=rng: 19.5 * 2**30 * (1 + 0.02 * r.random()))


def _logs(sc: Scenario, rng: random.Random, decision: App, rules: App, trainer: App,
          cluster_ip: str) -> None:
    start = NOW - timedelta(hours=6)
    for pod_obj in decision.pods:
        pod_name = pod_obj["metadata"]["name"]
        at = start + timedelta(seconds=rng.randint(0, 60))
        while at < NOW:
            if at < DRAIN or rng.random() < (0.5 if at < DRAIN + timedelta(minutes=19) else 0.05):
                sc.both(at, service="decision-api", ns=NS, pod=pod_name, container="decision-api",
                        level="info", message=f"POST /v1/decisions 200 score={rng.random():.3f} "
                        f"took={rng.randint(20, 90)}ms")
            else:
                sc.both(at, service="decision-api", ns=NS, pod=pod_name, container="decision-api",
                        level="error", message="POST /v1/decisions 503: scoring call failed: "
                        "Post \"http://scoring-engine.risk.svc:80/v3/score\": dial tcp "
                        f"{cluster_ip}:80: connect: connection refused",
                        http__response__status_code=503)
            at += timedelta(seconds=rng.randint(20, 70))
    chatter(sc, rules, start, NOW, timedelta(minutes=5), [
        ("info", "ruleset v412 evaluated request={id} matched={n}"),
        ("info", "ruleset cache hit ratio 0.9{n}"),
        ("warn", "rule R-1182 deprecated, still referenced by 3 policies"),
    ], rng)
    pod_name = trainer.pods[0]["metadata"]["name"]
    boot = DRAIN + timedelta(minutes=2, seconds=6)
    for offset, line in enumerate(("model-trainer 2.2.1 starting, resuming job gbm-2026-11-27 "
                                   "from checkpoint epoch 14",
                                   "loaded 48,112,009 training rows")):
        sc.both(boot + timedelta(seconds=offset * 40), service="model-trainer", ns=NS,
                pod=pod_name, container="model-trainer", level="info", message=line)
    at = boot + timedelta(minutes=3)
    epoch = 14
    while at < NOW:
        epoch += 1
        sc.both(at, service="model-trainer", ns=NS, pod=pod_name, container="model-trainer",
                level="info", message=f"epoch {epoch} done auc=0.9{rng.randint(10, 40)} "
                f"took={rng.randint(480, 620)}s")
        at += timedelta(minutes=10)
