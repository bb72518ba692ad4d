"""Treasury: the fx-rates 4.2.0 rollout never produces a pod. The new revision asks for a 3Gi
memory limit; the namespace's LimitRange allows 2Gi per container, so the ReplicaSet's pod
creations are forbidden and the old revision keeps serving."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from tests.scenario_tools.common import Story, truth
from tests.scenario_tools.kube import Ctr, Template, ended, http_probe, iso, running

from .base import (
    deployment,
    eks_nodes,
    gauge,
    http_series,
    logs_for,
    parse,
    quiet_container,
    set_times,
)

ID = "fx-rates-release-stuck"
NOW = datetime.fromisoformat("2027-01-25T11:07:00+00:00")
REGION = "us-west-2"
ECR = f"880533171420.dkr.ecr.{REGION}.amazonaws.com"
NS = "treasury"
BUCKETS = (0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0)


def build() -> Story:
    s = Story(
        id=ID,
        title="fx-rates release not going out",
        now=NOW,
        report="""\
The fx-rates 4.2.0 release was synced by Argo at ~10:19 UTC and it still hasn't rolled out:
the app went Progressing and is now Degraded with "progress deadline exceeded". The old
version is still serving so nothing is down, but the new currency pairs (ARS, NGN) we
promised for today aren't live. There's nothing unusual in the fx-rates logs. Why is it stuck?
""",
        truth=truth(
            "quota_exceeded", "Deployment", NS, "fx-rates",
            ["maximum memory usage per Container is 2Gi, but limit is 3Gi", "FailedCreate",
             "treasury-limits", "LimitRange"],
            "Bring fx-rates 4.2.0's memory limit within the namespace LimitRange "
            "(treasury-limits allows 2Gi per container), e.g. 2Gi with -XX:MaxRAMPercentage "
            "adjusted, or get the platform team to raise the LimitRange maximum; the "
            "ReplicaSet then creates the new pods."))
    set_times(s, 2.0, 30)
    c = s.cluster
    t0 = NOW - timedelta(minutes=48, seconds=3)
    for ns, days in (("default", 801), ("kube-system", 801), (NS, 377), ("marketing", 256)):
        c.namespace(ns, s.ago(days=days))
    nodes = eks_nodes(s, 3, region=REGION, subnet=24, pool="core-m5", instance="m5.2xlarge",
                      kubelet="v1.30.14-eks-b707fbb", kernel="5.10.240-238.966.amzn2.x86_64",
                      os_image="Amazon Linux 2", cpu="8", memory="32408380Ki",
                      alloc_cpu="7910m", alloc_memory="31391548Ki", pods="58", days=6.8,
                      runtime="containerd://1.7.27")
    c.add({"apiVersion": "v1", "kind": "LimitRange",
           "metadata": c.meta("LimitRange", "treasury-limits", NS, s.ago(days=377), {
               "app.kubernetes.io/managed-by": "platform-baseline"}),
           "spec": {"limits": [
               {"type": "Container", "max": {"cpu": "2", "memory": "2Gi"},
                "default": {"cpu": "500m", "memory": "512Mi"},
                "defaultRequest": {"cpu": "100m", "memory": "256Mi"}},
               {"type": "Pod", "max": {"memory": "4Gi"}}]}})

    # ---- fx-rates: revision 31 serving, revision 32 unable to create a pod
    labels = {"app.kubernetes.io/name": "fx-rates", "app.kubernetes.io/instance": "fx-rates",
              "helm.sh/chart": "fx-rates-4.2.0"}

    def ctr(version: str, limit: str, request: str, ram: int) -> Ctr:
        return Ctr("fx-rates", f"{ECR}/treasury/fx-rates:{version}", port=8080,
                   requests={"cpu": "500m", "memory": request}, limits={"memory": limit},
                   env={"JAVA_TOOL_OPTIONS": f"-XX:MaxRAMPercentage={ram} -XX:+UseG1GC",
                        "RATES_PROVIDERS": "refinitiv,ecb", "PAIRS_FILE": "/config/pairs.yaml"},
                   readiness=http_probe("/actuator/health/readiness", delay=25, period=5),
                   liveness=http_probe("/actuator/health/liveness", delay=60, period=15),
                   mounts=[{"mountPath": "/config", "name": "pairs"}])
    vols = [{"name": "pairs", "configMap": {"name": "fx-rates-pairs", "defaultMode": 420}}]
    old_tpl = Template([ctr("4.1.3", "1536Mi", "1Gi", 70)], service_account="fx-rates",
                       labels={"app.kubernetes.io/version": "4.1.3"}, volumes=vols)
    new_tpl = Template([ctr("4.2.0", "3Gi", "2Gi", 75)], service_account="fx-rates",
                       labels={"app.kubernetes.io/version": "4.2.0"}, volumes=vols)
    work = c.workload("Deployment", NS, "fx-rates", new_tpl, replicas=3,
                      created=s.ago(days=377), labels=labels)
    old_at = s.ago(days=5, hours=21, minutes=40)
    old_rs = c.revision(work, 31, old_at, old_tpl, replicas=3)
    new_rs = c.revision(work, 32, t0, new_tpl, replicas=1)
    oom_at = s.ago(days=2, hours=2, minutes=17)
    pods = []
    for i in range(3):
        node = nodes[i]
        born = max(old_at, parse(node["metadata"]["creationTimestamp"]) + timedelta(minutes=3)) \
            + timedelta(seconds=31 * i + 4)
        started = born + timedelta(seconds=6)
        state = running(started)
        if i == 1:
            state = running(oom_at + timedelta(seconds=12), restarts=1, last=ended(
                "OOMKilled", 137, started, oom_at))
        pods.append(c.pod(work, old_rs, node=node, created=born, statuses={"fx-rates": state}))
    work.progressing = ("ProgressDeadlineExceeded",
                        f'ReplicaSet "{new_rs["metadata"]["name"]}" has timed out progressing.',
                        t0 + timedelta(seconds=600))
    rs_name = new_rs["metadata"]["name"]
    forbidden = [f'pods "{rs_name}-{c.token(5)}" is forbidden: maximum memory usage per '
                 "Container is 2Gi, but limit is 3Gi" for _ in range(11)]
    work.extra_conditions = [{"type": "ReplicaFailure", "status": "True",
                              "reason": "FailedCreate", "message": forbidden[-1],
                              "lastUpdateTime": iso(t0 + timedelta(seconds=1)),
                              "lastTransitionTime": iso(t0 + timedelta(seconds=1))}]
    work.availability_changed = old_at + timedelta(minutes=2)
    c.service(NS, "fx-rates", {"app.kubernetes.io/name": "fx-rates"}, port=80,
              created=s.ago(days=377))
    c.add({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": c.meta("ConfigMap", "fx-rates-pairs", NS, t0 - timedelta(seconds=4),
                              labels),
           "data": {"pairs.yaml": "pairs:\n  - EURUSD\n  - GBPUSD\n  - USDJPY\n  - USDCHF\n"
                    "  - USDCAD\n  - AUDUSD\n  - USDMXN\n  - USDBRL\n  - USDARS\n  - USDNGN\n"}})

    def fix(objects: list) -> None:
        for obj in objects:
            if obj["kind"] == "ReplicaSet" and obj["metadata"]["name"] == rs_name:
                obj["status"] = {"replicas": 0, "observedGeneration": 1, "conditions": [{
                    "type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
                    "message": forbidden[-1],
                    "lastTransitionTime": iso(t0 + timedelta(seconds=1))}]}
                obj["metadata"]["generation"] = 1
    s.fixes = [fix]
    # the controllers' events: one scale-up, then refused creations (aggregated after ten)
    c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set {rs_name} from 0 to 1",
            first=t0, component="deployment-controller")
    at = t0 + timedelta(milliseconds=180)
    delay = 0.005
    tries = []
    while at <= NOW:
        tries.append(at)
        at += timedelta(seconds=delay + 0.03)
        delay = min(delay * 2, 1000)
    for k, when in enumerate(tries[:10]):
        c.event(new_rs, "FailedCreate", f"Error creating: {forbidden[k]}", first=when,
                type_="Warning", component="replicaset-controller")
    if len(tries) > 10:
        c.event(new_rs, "FailedCreate", f"(combined from similar events): Error creating: "
                f"{forbidden[10]}", first=tries[10], last=tries[-1], count=len(tries) - 10,
                type_="Warning", component="replicaset-controller")
    edge = t0.timestamp()
    for name, value in (("kube_deployment_spec_replicas", lambda t: 3.0),
                        ("kube_deployment_status_replicas_available", lambda t: 3.0),
                        ("kube_deployment_status_replicas_updated",
                         lambda t: 3.0 if t < edge else 0.0),
                        ("kube_deployment_status_replicas_unavailable",
                         lambda t: 0.0 if t < edge else 1.0)):
        gauge(s, name, {"namespace": NS, "deployment": "fx-rates"}, value,
              {"kube_deployment_spec_replicas": "Number of desired pods for a deployment.",
               "kube_deployment_status_replicas_available": "The number of available replicas "
               "per deployment.", "kube_deployment_status_replicas_updated": "The number of "
               "updated replicas per deployment.", "kube_deployment_status_replicas_unavailable":
               "The number of unavailable replicas per deployment."}[name])
    for rs, spec in ((old_rs, lambda t: 3.0), (new_rs, lambda t: 1.0)):
        born = parse(rs["metadata"]["creationTimestamp"]).timestamp()
        gauge(s, "kube_replicaset_spec_replicas", {"namespace": NS, "replicaset":
                                                   rs["metadata"]["name"]},
              lambda t, b=born, f=spec: f(t) if t >= b + 15 else None,
              "Number of desired pods for a ReplicaSet.")
        gauge(s, "kube_replicaset_status_ready_replicas", {"namespace": NS, "replicaset":
                                                           rs["metadata"]["name"]},
              lambda t, b=born, r=rs: (3.0 if r is old_rs else 0.0) if t >= b + 15 else None,
              "The number of ready replicas per ReplicaSet.")
    for status in ("true", "false"):
        gauge(s, "kube_deployment_status_condition", {"namespace": NS, "deployment": "fx-rates",
                                                      "condition": "Progressing",
                                                      "status": status},
              lambda t, st=status: float((t < edge + 600) == (st == "true")),
              "The current status conditions of a deployment.")
    for k, pod in enumerate(pods):
        quiet_container(s, pod, "fx-rates", 1290 + 60 * k, cpu=0.31, limit_mib=1536)
        http_series(s, pod, "fx-rates", rps=lambda t: 48 * _day(t),
                    codes={"200": lambda t: 0.998, "400": lambda t: 0.0015,
                           "503": lambda t: 0.0002},
                    median=lambda t: 0.008, buckets=BUCKETS)
    start = NOW - timedelta(hours=2)
    logs_for(s, pods, "fx-rates", "fx-rates", [
        ("info", "published 10 rates from refinitiv (EURUSD=1.0874)", {}),
        ("info", "GET /v1/rates?base=USD 200 6ms", {"http.response.status_code": 200}),
        ("warn", "ecb reference feed not yet published for today, using yesterday's fixing", {}),
        ("info", "GC pause (G1 Evacuation Pause) 41ms, heap 812M->640M(1075M)", {}),
        ("warn", "rate for USDBRL older than 30s (last tick 34.2s ago)", {}),
    ], 200, start=start, end=NOW)

    # ---- the namespace's quota (with room to spare)
    others = []
    sched = Ctr("payment-scheduler", f"{ECR}/treasury/payment-scheduler:2.7.1", port=8080,
                requests={"cpu": "200m", "memory": "512Mi"}, limits={"memory": "1Gi"},
                readiness=http_probe("/ready", delay=10))
    _, scheds = deployment(s, NS, "payment-scheduler", [sched], replicas=2, node_list=nodes,
                           revision=19, rollout=s.ago(days=3, hours=15), node_offset=1)
    others += scheds
    ui = Ctr("treasury-ui", f"{ECR}/treasury/treasury-ui:1.30.2", port=8080,
             requests={"cpu": "100m", "memory": "128Mi"}, limits={"memory": "256Mi"},
             readiness=http_probe("/", delay=3))
    _, uis = deployment(s, NS, "treasury-ui", [ui], replicas=2, node_list=nodes, revision=44,
                        rollout=s.ago(days=1, hours=9), node_offset=2)
    others += uis
    used_cpu = 3 * 500 + 2 * 200 + 2 * 100
    used_req = 3 * 1024 + 2 * 512 + 2 * 128
    used_lim = 3 * 1536 + 2 * 1024 + 2 * 256
    c.add({"apiVersion": "v1", "kind": "ResourceQuota",
           "metadata": c.meta("ResourceQuota", "treasury-quota", NS, s.ago(days=377), {
               "app.kubernetes.io/managed-by": "platform-baseline"}),
           "spec": {"hard": {"limits.memory": "64Gi", "pods": "60", "requests.cpu": "16",
                             "requests.memory": "48Gi"}},
           "status": {"hard": {"limits.memory": "64Gi", "pods": "60", "requests.cpu": "16",
                               "requests.memory": "48Gi"},
                      "used": {"limits.memory": f"{used_lim}Mi", "pods": "7",
                               "requests.cpu": f"{used_cpu}m",
                               "requests.memory": f"{used_req}Mi"}}})
    for pod in scheds:
        quiet_container(s, pod, "payment-scheduler", 402, cpu=0.05, limit_mib=1024)
    for pod in uis:
        quiet_container(s, pod, "treasury-ui", 61)
    logs_for(s, scheds, "payment-scheduler", "payment-scheduler", [
        ("info", "scheduled 14 SEPA payments for value date 2027-01-26", {}),
        ("error", "SFTP upload to bank-gw.citi-example.net failed: Connection reset by peer, "
         "retry 1/5 in 20s", {"error.type": "SSHException"}),
        ("info", "upload pain.001 batch 7781 OK", {}),
        ("warn", "cut-off for GBP CHAPS in 55 minutes, 3 payments pending approval", {}),
    ], 80, start=start, end=NOW)

    # ---- cluster-autoscaler, and a transient mount failure in marketing
    ca = Ctr("cluster-autoscaler", "registry.k8s.io/autoscaling/cluster-autoscaler:v1.30.4",
             port=8085, requests={"cpu": "100m", "memory": "600Mi"}, limits={"memory": "600Mi"},
             command=["./cluster-autoscaler", "--cloud-provider=aws", "--expander=least-waste",
                      "--balance-similar-node-groups", "--skip-nodes-with-system-pods=false"])
    _, cas = deployment(s, "kube-system", "cluster-autoscaler", [ca], replicas=1,
                        node_list=nodes, revision=8, rollout=s.ago(days=6, hours=3), service=None,
                        labels={"app.kubernetes.io/name": "aws-cluster-autoscaler"})
    quiet_container(s, cas[0], "cluster-autoscaler", 88)
    logs_for(s, cas, "cluster-autoscaler", "cluster-autoscaler", [
        ("info", "Scale-down calculation: ignoring 2 nodes unremovable in the last 5m0s", {}),
        ("info", f"Node {nodes[2]['metadata']['name']} is not suitable for removal - memory "
         "utilization too big (0.62)", {}),
        ("warn", "Failed to get node infos for groups: DescribeLaunchTemplateVersions "
         "throttled, retrying", {}),
    ], 40, start=start, end=NOW)
    camp = Ctr("campaign-api", f"{ECR}/marketing/campaign-api:0.19.0", port=8080,
               requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "512Mi"},
               readiness=http_probe("/healthz", delay=5),
               mounts=[{"mountPath": "/etc/flags", "name": "flags"}])
    mount_at = NOW - timedelta(minutes=51, seconds=40)
    _, camps = deployment(s, "marketing", "campaign-api", [camp], replicas=1, node_list=nodes,
                          revision=7, rollout=mount_at - timedelta(seconds=3),
                          volumes=[{"name": "flags", "configMap": {"name": "campaign-flags"}}])
    cpod = camps[0]
    run_at = mount_at + timedelta(minutes=2, seconds=31)
    cpod["status"]["containerStatuses"][0]["state"] = {"running": {"startedAt": iso(run_at)}}
    for cond in cpod["status"]["conditions"]:
        if cond["type"] in ("Ready", "ContainersReady"):
            cond["lastTransitionTime"] = iso(run_at + timedelta(seconds=8))
    c.event(cpod, "FailedMount", 'MountVolume.SetUp failed for volume "flags" : configmap '
            '"campaign-flags" not found', first=mount_at, last=mount_at + timedelta(
                seconds=64), count=5, type_="Warning")
    c.add({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": c.meta("ConfigMap", "campaign-flags", "marketing",
                              mount_at + timedelta(minutes=2, seconds=15)),
           "data": {"flags.json": '{"spring_sale": false, "free_shipping_banner": true}'}})
    quiet_container(s, cpod, "campaign-api", 140)
    return s


def _day(t: int) -> float:
    hour = (t % 86400) / 3600
    return 1 + 0.4 * math.cos((hour - 14) / 24 * 2 * math.pi)
