"""unschedulable: a values change makes feed-handler request hugepages-2Mi that no node has."""

from __future__ import annotations

import json
from pathlib import Path

from ._kit import Obj, Scenario, pending_job_pod, worker_nodes

SID = "market-data-feed-down"
NOW = "2026-08-11T13:32:00Z"
UPGRADE = 22.0


def fh_template(huge: bool) -> Obj:
    res: Obj = {"requests": {"cpu": "2", "memory": "4Gi"}, "limits": {"memory": "4Gi"}}
    c: Obj = {"name": "feed-handler", "image": "registry.internal/market-data/feed-handler:7.3.0",
              "args": ["--venues=XLON,XPAR,XETR", "--publish=nats://nats.market-data.svc:4222"],
              "resources": res,
              "ports": [{"containerPort": 9100, "name": "metrics", "protocol": "TCP"}]}
    tpl: Obj = {"metadata": {"labels": {"app": "feed-handler"},
                             "annotations": {"checksum/values": "91ab3e" if huge else "4d02c7"}},
                "spec": {"containers": [c], "priorityClassName": "market-critical",
                         "nodeSelector": {"nodepool": "general"}}}
    if huge:
        res["requests"]["hugepages-2Mi"] = "1Gi"
        res["limits"]["hugepages-2Mi"] = "1Gi"
        c["volumeMounts"] = [{"name": "hugepage-2mi", "mountPath": "/hugepages-2Mi"}]
        c["env"] = [{"name": "FH_USE_HUGEPAGES", "value": "true"}]
        tpl["spec"]["volumes"] = [{"name": "hugepage-2mi",
                                   "emptyDir": {"medium": "HugePages-2Mi"}}]
    return tpl


def build(root: Path) -> None:
    s = Scenario(SID, NOW, 5705)
    nodes = worker_nodes(s, 6)
    s.node("ip-10-0-2-201.eu-west-1.compute.internal", "eu-west-1a", "gpu", cpu="16",
           memory="64Gi", instance="g5.4xlarge", taints=[{"key": "dedicated", "value": "gpu",
                                                          "effect": "NoSchedule"}],
           capacity={"nvidia.com/gpu": "1"})
    s.node("ip-10-0-18-202.eu-west-1.compute.internal", "eu-west-1b", "gpu", cpu="16",
           memory="64Gi", instance="g5.4xlarge", taints=[{"key": "dedicated", "value": "gpu",
                                                          "effect": "NoSchedule"}],
           capacity={"nvidia.com/gpu": "1"})
    s.background(nodes, ["market-data", "batch"])
    msg = ("0/8 nodes are available: 2 node(s) had untolerated taint {dedicated: gpu}, "
           "6 Insufficient hugepages-2Mi. preemption: 0/8 nodes are available: 8 Preemption "
           "is not helpful for scheduling.")

    new = fh_template(True)
    old = fh_template(False)
    s.deployment("market-data", "feed-handler", new, replicas=2, ready=0, updated=2,
                 revision=34, unavailable=2, strategy={"type": "Recreate"},
                 annotations={"meta.helm.sh/release-name": "feed-handler",
                              "meta.helm.sh/release-namespace": "market-data"},
                 conditions=[{"type": "Available", "status": "False",
                              "reason": "MinimumReplicasUnavailable",
                              "message": "Deployment does not have minimum availability.",
                              "lastUpdateTime": s.t(UPGRADE), "lastTransitionTime": s.t(UPGRADE)},
                             {"type": "Progressing", "status": "False",
                              "reason": "ProgressDeadlineExceeded",
                              "message": 'ReplicaSet "PLACE" has timed out progressing.',
                              "lastUpdateTime": s.t(UPGRADE - 10),
                              "lastTransitionTime": s.t(UPGRADE - 10)}])
    dep = s.objects[-1]
    dep["status"]["replicas"] = 2
    old_rs = s.replicaset("market-data", "feed-handler", 33, old, replicas=0, ready=0,
                          created_min=9 * 1440)
    s.objects[-1]["status"] = {"replicas": 0, "observedGeneration": 4}
    new_rs = s.replicaset("market-data", "feed-handler", 34, new, replicas=2, ready=0,
                          created_min=UPGRADE - 0.5)
    s.objects[-1]["status"] = {"replicas": 2, "fullyLabeledReplicas": 2, "observedGeneration": 1}
    dep["status"]["conditions"][1]["message"] = f'ReplicaSet "{new_rs}" has timed out progressing.'
    pend = []
    for i in range(2):
        p, _ = s.pod("market-data", new_rs, "feed-handler", new, None,
                     created_min=UPGRADE - 0.6, key=str(i), phase="Pending", ready=False,
                     conditions=[{"type": "PodScheduled", "status": "False",
                                  "reason": "Unschedulable", "message": msg,
                                  "lastTransitionTime": s.t(UPGRADE - 0.6)}])
        pend.append(p)
        s.event("market-data", "Pod", p, "FailedScheduling", msg, type_="Warning",
                count=9 + i, first=UPGRADE - 0.6, last=1.5 + i, component="default-scheduler")
        s.event("market-data", "Pod", p, "NotTriggerScaleUp",
                "pod didn't trigger scale-up: 1 Insufficient hugepages-2Mi, 1 node(s) had "
                "untolerated taint {dedicated: gpu}", count=4, first=UPGRADE - 1, last=3,
                component="cluster-autoscaler")
    s.event("market-data", "Deployment", "feed-handler", "ScalingReplicaSet",
            f"Scaled down replica set {old_rs} to 0 from 2", first=UPGRADE, last=UPGRADE,
            component="deployment-controller")
    s.event("market-data", "Deployment", "feed-handler", "ScalingReplicaSet",
            f"Scaled up replica set {new_rs} to 2", first=UPGRADE - 0.5, last=UPGRADE - 0.5,
            component="deployment-controller")
    s.add({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": s.meta("feed-handler-values", "market-data", UPGRADE + 1,
                              labels={"app": "feed-handler"}),
           "data": {"values.yaml": json.dumps({"replicas": 2, "venues": ["XLON", "XPAR", "XETR"],
                                               "hugepages": {"enabled": True, "size": "2Mi",
                                                             "amount": "1Gi"},
                                               "resources": {"cpu": "2", "memory": "4Gi"}},
                                              indent=1)}})
    old_pods = [s.pod_name(old_rs, f"o{i}") for i in range(2)]
    for i, p in enumerate(old_pods):
        m = 60 - s.rng.uniform(0, 0.2)
        seq = 88123400 + i * 1000
        while m > UPGRADE:
            venue = s.rng.choice(["XLON", "XPAR", "XETR"])
            seq += s.rng.randint(40000, 60000)
            s.log(s.ago(m), "info", "feed-handler", "market-data", p, "feed-handler",
                  f"{venue} stats: seq={seq} msgs/s={s.rng.randint(38000, 61000)} gaps=0 "
                  f"latency_p99={s.rng.randint(40, 90)}us")
            if s.rng.random() < 0.05:
                s.log(s.ago(m - 0.01), "warn", "feed-handler", "market-data", p, "feed-handler",
                      f"{venue} retransmit request served by backup line ({s.rng.randint(1, 9)}"
                      " packets)")
            m -= 20 / 60 * s.rng.uniform(0.7, 1.3)
        s.log(s.ago(UPGRADE + 0.02), "info", "feed-handler", "market-data", p, "feed-handler",
              "received SIGTERM, closing multicast sessions")
        s.counter("feed_handler_messages", "Market data messages published.",
                  {"namespace": "market-data", "pod": p},
                  lambda m: 0.0 if m < UPGRADE else 50000.0, start=9e9)
    s.gauge("kube_deployment_status_replicas_available", "Available replicas.",
            {"namespace": "market-data", "deployment": "feed-handler"},
            lambda m: 2 if m > UPGRADE else 0)
    for p in pend:
        s.gauge("kube_pod_status_phase", "Pod phase.",
                {"namespace": "market-data", "pod": p, "phase": "Pending"},
                lambda m: 1 if m < UPGRADE - 0.6 else None)
    for n in nodes:
        s.gauge("kube_node_status_allocatable", "Allocatable resources.",
                {"node": n, "resource": "hugepages_2Mi", "unit": "byte"}, lambda m: 0)
        s.gauge("kube_node_status_allocatable", "Allocatable resources.",
                {"node": n, "resource": "memory", "unit": "byte"}, lambda m: 33285996544)

    quote = s.app("market-data", "quote-api", "registry.internal/market-data/quote-api:3.0.2",
                  nodes[2:5], revision=18, created_min=3 * 1440)
    for p in quote.pods:
        m = 60 - s.rng.uniform(0, 0.3)
        while m > 0:
            if m < UPGRADE - 0.3 and s.rng.random() < 0.5:
                s.log(s.ago(m), "warn", "quote-api", "market-data", p, "quote-api",
                      f"no feed update for {int((UPGRADE - m) * 60)}s on XLON,XPAR,XETR; "
                      "serving stale quotes (stale=true)")
            else:
                s.log(s.ago(m), "info", "quote-api", "market-data", p, "quote-api",
                      f"GET /v1/quotes?symbols={s.rng.randint(1, 40)} 200 "
                      f"{s.rng.randint(1, 9)}ms")
            m -= 20 / 60 * s.rng.uniform(0.6, 1.4)
    s.pod_basics(quote, cpu=lambda m, i: 0.2, mem_mb=lambda m, i: 300.0, rps=lambda m, i: 40.0)
    nats = s.app("market-data", "nats", "nats:2.10.14-alpine", nodes[3:6], port=4222,
                 revision=6, created_min=5 * 1440)
    s.chatter(nats, [("info", "[INF] 10.244.{n}.7:{rnd} - cid:{n} - Client connection closed"),
                     ("warn", "[WRN] 10.244.{n}.9:{rnd} - cid:{n} - Readloop processing time: "
                              "2.1s")], every_s=120)
    s.pod_basics(nats, cpu=lambda m, i: 0.3 if m > UPGRADE else 0.02, mem_mb=lambda m, i: 90.0)
    ca = s.app("kube-system", "cluster-autoscaler",
               "registry.k8s.io/autoscaling/cluster-autoscaler:v1.29.2", nodes[:1],
               revision=8, created_min=5 * 1440, service=False)
    job_pod = pending_job_pod(s, "batch", "risk-backfill-29106720", "60Gi", 8, 50)
    m = 50.0
    while m > 0:
        s.log(s.ago(m), "info", "cluster-autoscaler", "kube-system", ca.pods[0],
              "cluster-autoscaler", f"Pod batch/{job_pod} is unschedulable")
        s.log(s.ago(m), "info", "cluster-autoscaler", "kube-system", ca.pods[0],
              "cluster-autoscaler", f"Pod batch/{job_pod} can't be scheduled on "
              "eks-general-2c4a, predicate checking error: Insufficient memory; "
              "predicateName=NodeResourcesFit; reasons: Insufficient memory; debugInfo=")
        if m < UPGRADE - 0.6:
            for p in pend:
                s.log(s.ago(m), "info", "cluster-autoscaler", "kube-system", ca.pods[0],
                      "cluster-autoscaler", f"Pod market-data/{p} can't be scheduled on "
                      "eks-general-2c4a, predicate checking error: Insufficient hugepages-2Mi; "
                      "predicateName=NodeResourcesFit; reasons: Insufficient hugepages-2Mi; "
                      "debugInfo=")
        s.log(s.ago(m - 0.01), "info", "cluster-autoscaler", "kube-system", ca.pods[0],
              "cluster-autoscaler", "No expansion options")
        m -= 1.0 + s.rng.uniform(-0.1, 0.1)

    s.scenario_yaml = {
        "id": SID,
        "title": "market data feed down after the 13:10 deploy, pods Pending",
        "now": NOW,
        "report": "feed-handler has been down since the 13:10 helm upgrade, both pods stuck "
                  "Pending and quote-api is serving stale prices. Cluster looks full again - "
                  "there's a batch pod pending on memory too. Can we just scale up the general "
                  "node group?\n",
        "truth": {
            "category": "unschedulable",
            "culprit": {"kind": "Deployment", "namespace": "market-data",
                        "name": "feed-handler"},
            "evidence": ["Insufficient hugepages-2Mi", "hugepages-2Mi: 1Gi",
                         "Preemption is not helpful for scheduling"],
            "fix": "The values change (hugepages.enabled) makes feed-handler request 1Gi of "
                   "hugepages-2Mi, which no node in the general pool offers (hugepages-2Mi: 0), "
                   "and the autoscaler cannot add such a node; with the Recreate strategy both "
                   "old pods were already gone. Roll the values back (or provision a node group "
                   "with 2Mi hugepages preallocated). Adding ordinary nodes does not help; the "
                   "batch pod's memory shortage is unrelated.",
        },
    }
    s.write(root)
