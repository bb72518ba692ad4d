"""Public library e-books: checkouts slow and failing at the evening peak. loan-broker has a
required pod anti-affinity on the host name (one pod a node) and 6 replicas. The platform
team shrank the lend pool from 6 to 4 nodes at 17:30 (cost review); the pods of the two
removed nodes were recreated and stay Pending: "didn't match pod anti-affinity rules". Four
pods carry the evening load and time out. Red herrings: the DRM licence server's slow
answers, cluster-autoscaler "max node group size reached" notes, GC warnings."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gauge, set_times
from tests.data.holdout2._generator.kit import NodeKind, cpu_seconds, deleted, requests
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, Obj, Template, http_probe, running

from .kit5 import Incident, provider_nodes

ID = "ebook-checkouts-timing-out"
NOW = datetime.fromisoformat("2027-11-09T18:22:00+00:00")
NS = "lending"
REG = "cr.nks.example/openshelf"
MSG = ("0/4 nodes are available: 4 node(s) didn't match pod anti-affinity rules. "
       "preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod.")


def build() -> Incident:
    s = Incident(
        id=ID, title="E-book checkouts time out in the evening", now=NOW,
        report="""\
Readers report that borrowing an e-book fails with "Something went wrong, try again" or takes
ages since around half past five. The catalogue search is fine. Is the DRM licence service
acting up again?
""",
        truth=truth(
            "unschedulable", "Deployment", NS, "loan-broker",
            ["Pending", "didn't match pod anti-affinity rules", "0/4 nodes are available"],
            "loan-broker requires one pod a node (required podAntiAffinity on "
            "kubernetes.io/hostname) with 6 replicas, but the lend node pool was shrunk from "
            "6 to 4 nodes at 17:30: two pods stay Pending and four carry the evening peak. "
            "Make the anti-affinity preferred (or use a topologySpreadConstraint with "
            "ScheduleAnyway) or give the pool back its 6 nodes."))
    set_times(s, 2.0, 60)
    c = s.cluster
    namespaces(s, {"default": 500, "kube-system": 500, NS: 470, "catalogue": 460})
    kind = NodeKind("s4-g2-h16", "4", "16266640Ki", "3800m", "14121104Ki", "v1.29.8",
                    "5.15.0-119-generic", "Ubuntu 22.04.4 LTS")
    nodes = provider_nodes(s, "nks", 6, kind, days=6.6)
    live, gone = nodes[:4], nodes[4:]
    shrink = NOW.replace(hour=17, minute=30, second=14)
    for n in gone:
        c.remove(n)
    c.nodes = [n for n in c.nodes if n not in gone]
    ctr = Ctr("loan-broker", f"{REG}/loan-broker:7.3.1", port=8080,
              requests={"cpu": "1500m", "memory": "2Gi"}, limits={"memory": "2Gi"},
              readiness=http_probe("/ready", delay=15))
    anti = {"podAntiAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": [{
        "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "loan-broker"}},
        "topologyKey": "kubernetes.io/hostname"}]}}
    work = c.workload("Deployment", NS, "loan-broker", Template([ctr],
                      service_account="loan-broker"), replicas=6, created=s.ago(days=290))
    rs = c.revision(work, 31, s.ago(days=4, hours=2), replicas=6)
    pods = []
    for i, n in enumerate(live):
        born = s.ago(days=4, hours=2) + timedelta(seconds=20 * i)
        pods.append(c.pod(work, rs, node=n, created=born,
                          statuses={"loan-broker": running(born + timedelta(seconds=9))}))
    pending = []
    for i in range(2):
        born = shrink + timedelta(seconds=41 + 3 * i)
        pending.append(c.pod(work, rs, node=None, created=born, statuses={},
                             scheduled_message=MSG))
    ghosts = [deleted(s, NS, f"{rs['metadata']['name']}-{c.token(5)}", gone[i]["metadata"]
                      ["name"], s.ago(days=4, hours=2), shrink + timedelta(seconds=40 + 3 * i))
              for i in range(2)]
    for p in [*pods, *pending]:
        p["spec"]["affinity"] = anti
    def spread(objs: list[Obj]) -> None:
        for o in objs:
            if o["kind"] in ("Deployment", "ReplicaSet") and \
                    o["metadata"]["name"].startswith("loan-broker"):
                o["spec"]["template"]["spec"]["affinity"] = anti
    s.fixes.append(spread)
    work.availability_changed = shrink + timedelta(seconds=41)
    for p in pending:
        name = p["metadata"]["name"]
        c.event(rs, "SuccessfulCreate", f"Created pod: {name}",
                first=shrink + timedelta(seconds=41),
                component="replicaset-controller")
        c.event(p, "FailedScheduling", MSG, first=shrink + timedelta(seconds=42),
                last=NOW - timedelta(seconds=s.rng.uniform(20, 80)), count=38,
                type_="Warning", component="default-scheduler", host="")
    gauge(s, "kube_deployment_status_replicas_available", {"namespace": NS,
                                                           "deployment": "loan-broker"},
          lambda t: 4.0 if t >= shrink.timestamp() + 40 else 6.0,
          "The number of available replicas per deployment.")
    gauge(s, "kube_deployment_spec_replicas", {"namespace": NS, "deployment": "loan-broker"},
          lambda t: 6.0, "Number of desired pods for a deployment.")
    for n in gone:
        gauge(s, "kube_node_info", {"node": n["metadata"]["name"]}, lambda t: 1.0,
              "Information about a cluster node.",
              times=[t for t in s.times if t < shrink.timestamp()])
    peak = NOW.replace(hour=17, minute=0, second=0).timestamp()

    def load(t: int) -> float:  # checkouts a second, whole service
        return 36.0 + 30.0 * min(1.0, max(0.0, (t - peak) / 3600))

    def per(t: int) -> float:
        return load(t) / (4 if t >= shrink.timestamp() + 40 else 6)
    for p in pods:
        quiet(s, [p], "loan-broker", 1290)
        cpu_seconds(s, p, "loan-broker", lambda t: min(3.6, 0.17 * per(t)))
        requests(s, p, "loan-broker", rps=per, codes={
            "200": lambda t: 1 - max(0.0, per(t) - 11) * 0.03,
            "504": lambda t: max(0.0, per(t) - 11) * 0.03},
            median=lambda t: 0.12 + max(0.0, per(t) - 10) * 0.35, buckets=(0.25, 1.0, 2.5, 5.0))
    chatter(s, pods, "loan-broker", "loan-broker", [
        ("warn", "checkout queue wait 3.9s for title OS-411209 (worker pool busy)", {}),
        ("error", "checkout timed out after 8000ms for patron 2270119", {}),
        ("warn", "DRM licence server lcp.openshelf.example answered in 1890ms", {}),
    ], 200, start=shrink)
    chatter(s, pods, "loan-broker", "loan-broker", [
        ("info", "checkout ok title OS-220913 patron 1188230 in 140ms", {}),
        ("warn", "[gc] Pause Young (G1 Evacuation Pause) 1190M->402M(2048M) 61.2ms", {}),
    ], 160)
    _ = ghosts
    ca = Ctr("cluster-autoscaler", "registry.k8s.io/autoscaling/cluster-autoscaler:v1.29.4",
             port=8085, requests={"cpu": "100m", "memory": "300Mi"}, limits={"memory": "600Mi"})
    _, cas = steady(s, "kube-system", "cluster-autoscaler", [ca], nodes=live, replicas=1,
                    revision=5, rollout=s.ago(days=5), service=None)
    quiet(s, cas, "cluster-autoscaler", 120)
    chatter(s, cas, "cluster-autoscaler", "cluster-autoscaler", [
        ("info", "Pod lending/loan-broker is unschedulable", {}),
        ("info", "Skipping node group pool-lend - max node group size reached (4)", {}),
        ("info", "No expansion options", {}),
    ], 40, start=shrink)
    cat = Ctr("catalogue-search", f"{REG}/catalogue-search:4.0.7", port=8080,
              requests={"cpu": "400m", "memory": "1Gi"}, limits={"memory": "1536Mi"})
    _, cats = steady(s, "catalogue", "catalogue-search", [cat], nodes=live, replicas=2,
                     revision=19, rollout=s.ago(days=3))
    quiet(s, cats, "catalogue-search", 920)
    return s
