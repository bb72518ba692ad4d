"""Ski resort: lift gates validate passes slowly during the Saturday morning rush.
gate-validator's HPA (CPU, target 65%) scaled 4 -> 5 at 09:59 and 5 -> 9 at 10:06 (local
UTC+1), but the namespace's ResourceQuota skipass-compute caps requests.memory at 12Gi and
the namespace already requests 11520Mi: every further pod (1Gi request) is refused
(FailedCreate, "exceeded quota"). The five pods that run are healthy but hot, so validation
latency climbs. Red herrings: pass-shop 3.2.0 rolled out 55 minutes ago (plausible
alternative), an old OOM restart of season-ledger, a slow payment provider warning."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gauge, set_times
from tests.data.holdout2._generator.kit import (
    NodeKind,
    cpu_seconds,
    deploy,
    requests,
    start_events,
)
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.data.holdout4._generator.kit4 import hpa, ramp
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe, iso

from .kit7 import Incident, provider_nodes, quota

ID = "lift-gates-validating-slowly"
NOW = datetime.fromisoformat("2028-01-22T09:47:00+00:00")
NS = "skipass"
REG = "harbor.alpenbahnen.example/skipass"
QUOTA = "skipass-compute"


def build() -> Incident:
    s = Incident(
        id=ID, title="Lift gates slow to validate ski passes", now=NOW,
        report="""\
Turnstiles at the valley station and at Gondola 2 take several seconds per skier this
morning, lines are getting long and staff are waving people through. Passes do get
validated in the end. Worse in the last half hour or so.
""",
        truth=truth(
            "quota_exceeded", "Deployment", NS, "gate-validator",
            ["exceeded quota: skipass-compute", "requests.memory=12Gi", "FailedCreate",
             "desiredReplicas: 9"],
            "The morning rush drove gate-validator's HPA to 9 replicas, but the ResourceQuota "
            "skipass-compute (requests.memory 12Gi, 11520Mi used) refuses every pod beyond "
            "the fifth (FailedCreate: exceeded quota), so 5 pods run at ~140% of their CPU "
            "request and validations queue. Raise the quota's requests.memory (to ~20Gi) or "
            "lower gate-validator's 1Gi memory request; the ReplicaSet then creates the "
            "missing pods."))
    set_times(s, 2.0, 60)
    c = s.cluster
    namespaces(s, {"default": 720, "kube-system": 720, NS: 690, "lifts": 688,
                   "monitoring": 700})
    kind = NodeKind("vsphere-8c-32g", "8", "32861200Ki", "7800m", "30139408Ki", "v1.30.6",
                    "5.15.0-126-generic", "Ubuntu 22.04.5 LTS", runtime="containerd://1.7.22")
    nodes = provider_nodes(s, "kkp", 5, kind, days=5.4)
    rush = NOW - timedelta(minutes=75)
    up5 = NOW - timedelta(minutes=48, seconds=20)
    up9 = NOW - timedelta(minutes=41, seconds=5)

    def load(t: int) -> float:
        return 1.0 + 2.3 * ramp(t, rush, 40)

    def pods_at(t: int) -> int:
        return 5 if t >= up5.timestamp() + 40 else 4

    # ---- the quota
    quota(s, NS, QUOTA, {"limits.memory": "24Gi", "pods": "40", "requests.cpu": "16",
                         "requests.memory": "12Gi"},
          {"limits.memory": "17152Mi", "pods": "12", "requests.cpu": "5300m",
           "requests.memory": "11520Mi"}, created=s.ago(days=402))
    c.add({"apiVersion": "v1", "kind": "LimitRange",
           "metadata": c.meta("LimitRange", "skipass-defaults", NS, s.ago(days=402),
                              {"app.kubernetes.io/managed-by": "argocd"}),
           "spec": {"limits": [{"type": "Container",
                                "default": {"cpu": "500m", "memory": "512Mi"},
                                "defaultRequest": {"cpu": "100m", "memory": "256Mi"}}]}})

    # ---- gate-validator
    gv = Ctr("gate-validator", f"{REG}/gate-validator:7.4.2", port=8443, port_name="grpc",
             requests={"cpu": "500m", "memory": "1Gi"}, limits={"memory": "1536Mi"},
             env={"LEDGER_ADDR": "season-ledger.skipass.svc:6379", "GRPC_MAX_INFLIGHT": "64",
                  "JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=65"},
             readiness={"grpc": {"port": 8443}, "periodSeconds": 5, "timeoutSeconds": 1,
                        "successThreshold": 1, "failureThreshold": 3,
                        "initialDelaySeconds": 8})
    roll = s.ago(days=2, hours=19)
    work, gvs = deploy(s, NS, "gate-validator", [gv], replicas=5, nodes=nodes, revision=31,
                       rollout=roll, service=8443, target="grpc",
                       born=lambda i: up5 + timedelta(seconds=1) if i == 4 else
                       roll + timedelta(seconds=6 + 21 * i))
    rs = work.revisions[-1]
    rs_name = rs["metadata"]["name"]
    work.obj["spec"]["replicas"] = 9
    work.replicas = 9
    rs["spec"]["replicas"] = 9
    rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] = "9"
    rs["metadata"]["annotations"]["deployment.kubernetes.io/max-replicas"] = "12"
    refused = f"{rs_name}-{c.token(5)}"
    msg = (f'pods "{refused}" is forbidden: exceeded quota: {QUOTA}, requested: '
           "requests.memory=1Gi, used: requests.memory=11520Mi, limited: requests.memory=12Gi")
    work.availability_changed = up9 + timedelta(seconds=1)
    work.extra_conditions.append({
        "type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
        "message": msg, "lastUpdateTime": iso(up9 + timedelta(seconds=1)),
        "lastTransitionTime": iso(up9 + timedelta(seconds=1))})

    def rs_condition(objects: list[dict[str, object]]) -> None:
        for obj in objects:
            if obj is rs:
                status = rs["status"]
                status["conditions"] = [{"type": "ReplicaFailure", "status": "True",
                                         "reason": "FailedCreate", "message": msg,
                                         "lastTransitionTime": iso(up9 + timedelta(seconds=1))}]
    s.fixes.append(rs_condition)
    newest = gvs[4]
    c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set {rs_name} from 4 to 5",
            first=up5, component="deployment-controller")
    c.event(rs, "SuccessfulCreate", f"Created pod: {newest['metadata']['name']}",
            first=up5 + timedelta(seconds=0.6), component="replicaset-controller")
    start_events(s, newest, scheduled=up5 + timedelta(seconds=0.7),
                 started=up5 + timedelta(seconds=6))
    c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set {rs_name} from 5 to 9",
            first=up9, component="deployment-controller")
    c.event(rs, "FailedCreate", f"Error creating: {msg}", first=up9 + timedelta(seconds=0.4),
            last=NOW - timedelta(seconds=38), count=47, type_="Warning",
            component="replicaset-controller")
    hpa(s, work, min_=4, max_=14, metrics=[{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 65}}}],
        current=[{"type": "Resource", "resource": {"name": "cpu", "current": {
            "averageUtilization": 139, "averageValue": "696m"}}}],
        replicas=5, desired=9, created=s.ago(days=300), last_scale=up9, conditions=[
            ("AbleToScale", "True", "ReadyForNewScale", "recommended size matches current "
             "size", up9 + timedelta(minutes=5)),
            ("ScalingActive", "True", "ValidMetricFound", "the HPA was able to successfully "
             "calculate a replica count from cpu resource utilization (percentage of "
             "request)", s.ago(days=5)),
            ("ScalingLimited", "False", "DesiredWithinRange", "the desired count is within "
             "the acceptable range", up9)])
    hpa_obj = c.objects_of("HorizontalPodAutoscaler")[-1]
    for when, size in ((up5 - timedelta(seconds=0.5), 5), (up9 - timedelta(seconds=0.5), 9)):
        c.event(hpa_obj, "SuccessfulRescale", f"New size: {size}; reason: cpu resource "
                "utilization (percentage of request) above target", first=when,
                component="horizontal-pod-autoscaler")
    gauge(s, "kube_deployment_spec_replicas", {"namespace": NS, "deployment": "gate-validator"},
          lambda t: 9.0 if t >= up9.timestamp() else (5.0 if t >= up5.timestamp() else 4.0),
          "Number of desired pods for a deployment.")
    gauge(s, "kube_deployment_status_replicas_available",
          {"namespace": NS, "deployment": "gate-validator"}, lambda t: float(pods_at(t)),
          "The number of available replicas per deployment.")
    gauge(s, "kube_horizontalpodautoscaler_status_desired_replicas",
          {"namespace": NS, "horizontalpodautoscaler": "gate-validator"},
          lambda t: 9.0 if t >= up9.timestamp() else (5.0 if t >= up5.timestamp() else 4.0),
          "Desired number of replicas of pods managed by this autoscaler.")
    qlabels = {"namespace": NS, "resourcequota": QUOTA, "resource": "requests.memory"}
    gauge(s, "kube_resourcequota", {**qlabels, "type": "hard"}, lambda t: 12.0 * 1024 ** 3,
          "Information about resource quota.")
    gauge(s, "kube_resourcequota", {**qlabels, "type": "used"},
          lambda t: (11520.0 if t >= up5.timestamp() else 10496.0) * 1024 ** 2,
          "Information about resource quota.")
    for pod in gvs:
        quiet(s, [pod], "gate-validator", 690)
        cpu_seconds(s, pod, "gate-validator", lambda t: 0.21 * load(t) * 4 / pods_at(t))
        requests(s, pod, "gate-validator", rps=lambda t: 38.0 * load(t) * 4 / pods_at(t),
                 codes={"200": lambda t: 0.997, "504": lambda t: 0.003 if t < up9.timestamp()
                        else 0.021},
                 median=lambda t: 0.035 if t < rush.timestamp() + 1200 else
                 0.035 + 1.1 * ramp(t, rush + timedelta(minutes=20), 35),
                 buckets=(0.1, 0.5, 2.5))
    chatter(s, gvs, "gate-validator", "gate-validator", [
        ("info", "validated pass SP-2028-****8841 at gate VS-03 (day pass, valid)", {}),
        ("info", "validated pass SP-2028-****1207 at gate G2-01 (season, valid)", {}),
    ], 60, end=rush + timedelta(minutes=25))
    chatter(s, gvs, "gate-validator", "gate-validator", [
        ("warn", "slow validation 2140ms for gate G2-04 (queued 1910ms, inflight 64/64)", {}),
        ("warn", "grpc executor saturated: 64 inflight, 212 queued", {}),
        ("info", "validated pass SP-2028-****3390 at gate VS-01 (day pass, valid)", {}),
        ("warn", "slow validation 1675ms for gate VS-02 (queued 1490ms, inflight 64/64)", {}),
    ], 140, start=rush + timedelta(minutes=25))
    bridge = Ctr("turnstile-bridge", f"{REG}/turnstile-bridge:2.9.0", port=8080,
                 requests={"cpu": "100m", "memory": "192Mi"}, limits={"memory": "256Mi"})
    _, brs = steady(s, "lifts", "turnstile-bridge", [bridge], nodes=nodes, replicas=2,
                    revision=12, rollout=s.ago(days=5, hours=14), offset=2)
    quiet(s, brs, "turnstile-bridge", 120)
    chatter(s, brs, "turnstile-bridge", "turnstile-bridge", [
        ("warn", "gate G2-04: validation took 2.3s (budget 1.5s), holding barrier", {}),
        ("warn", "gate VS-03: validation took 1.9s (budget 1.5s), holding barrier", {}),
        ("info", "gate VS-01 heartbeat ok", {}),
    ], 60, start=rush + timedelta(minutes=28))

    # ---- red herrings
    shop_roll = NOW - timedelta(minutes=55)
    shop = Ctr("pass-shop", f"{REG}/pass-shop:3.2.0", port=8080,
               requests={"cpu": "200m", "memory": "768Mi"}, limits={"memory": "1Gi"},
               readiness=http_probe("/ready"))
    _, shops = steady(s, NS, "pass-shop", [shop], nodes=nodes, replicas=3, revision=88,
                      rollout=shop_roll, offset=1,
                      old=(87, s.ago(days=6), [Ctr("pass-shop", f"{REG}/pass-shop:3.1.4")]))
    quiet(s, shops, "pass-shop", 540)
    chatter(s, shops, "pass-shop", "pass-shop", [
        ("info", "pass-shop 3.2.0 started (feature flags: family-bundle=on)", {}),
    ], 3, start=shop_roll, end=shop_roll + timedelta(minutes=2))
    chatter(s, shops, "pass-shop", "pass-shop", [
        ("warn", "payment provider alpenpay answered in 3210ms (threshold 2000ms)", {}),
        ("info", "order SO-771203 paid: 2x day pass adult", {}),
        ("info", "order SO-771219 paid: 1x family bundle", {}),
    ], 45, start=shop_roll)
    ledger = Ctr("season-ledger", "docker.io/library/redis:7.2.6", port=6379,
                 port_name="redis", requests={"cpu": "250m", "memory": "1536Mi"},
                 limits={"memory": "2Gi"})
    _, leds = steady(s, NS, "season-ledger", [ledger], nodes=nodes, replicas=2, revision=6,
                     rollout=s.ago(days=4, hours=3), offset=3, service=6379, target="redis",
                     restarted={1: (s.ago(days=1, hours=9), "OOMKilled", 137)})
    quiet(s, leds, "season-ledger", 1100)
    sync = Ctr("gate-sync", f"{REG}/gate-sync:1.6.1", port=8080,
               requests={"cpu": "50m", "memory": "512Mi"}, limits={"memory": "768Mi"})
    _, syncs = steady(s, NS, "gate-sync", [sync], nodes=nodes, replicas=2, revision=19,
                      rollout=s.ago(days=6, hours=5), offset=4)
    quiet(s, syncs, "gate-sync", 300)
    chatter(s, syncs, "gate-sync", "gate-sync", [
        ("info", "pushed allow-list delta to 38 gates (412 passes)", {}),
    ], 14)
    return s
