"""CRM: the activity-store Cassandra ring runs on two members of three. AWS retired the
data node of eu-central-1b at 07:44; activity-store-1 was recreated, but its EBS volume lives
in eu-central-1b, the two remaining data nodes are in 1a and 1c, and the autoscaler cannot
get an r6i.2xlarge in 1b (InsufficientInstanceCapacity). The pod stays Pending."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from tests.data.holdout._generator.base import (
    PCtr,
    add_endpoints,
    add_service,
    alive,
    daemonset,
    gauge,
    logs_for,
    set_times,
)
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import Ctr, Obj, Template, ended, http_probe, running

from .kit import (
    Incident,
    NodeKind,
    after,
    app_counter,
    cpu_seconds,
    deleted,
    deploy,
    drift,
    node,
    plain,
    requests,
    restarts_series,
    statefulset,
    storage_class,
    working_set,
)

ID = "crm-activity-degraded"
NOW = datetime.fromisoformat("2027-02-18T08:31:00+00:00")
REGION = "eu-central-1"
ECR = f"381492270185.dkr.ecr.{REGION}.amazonaws.com"
NS = "crm"
GONE = f"ip-10-42-41-87.{REGION}.compute.internal"
SCHED = ("0/8 nodes are available: 2 node(s) had volume node affinity conflict, 6 node(s) "
         "didn't match Pod's node affinity/selector. preemption: 0/8 nodes are available: 8 "
         "Preemption is not helpful for scheduling.")
ASG_1B = "eks-data-1b-68c73f1a-92b4-4d55-a6c3-0e18b2f4d9a1"


def _eks(s: Incident, ip: str, zone: str, group: str, kind: NodeKind, created: datetime,
         labels: dict[str, str] | None = None, taints: Sequence[Obj] = ()) -> Obj:
    name = f"ip-{ip.replace('.', '-')}.{REGION}.compute.internal"
    instance = f"i-0{s.cluster.hexid('ec2', name, length=16)}"
    return node(s, name, ip=ip, kind=kind, created=created, region=REGION, zone=zone,
                labels={"eks.amazonaws.com/nodegroup": group,
                        "eks.amazonaws.com/capacityType": "ON_DEMAND",
                        "eks.amazonaws.com/nodegroup-image": "ami-0c7d1f59a2e3b4f61",
                        "k8s.io/cloud-provider-aws": "5c1e8f2d4a9b7e6f3d2c1b0a9e8f7d6c",
                        **(labels or {})},
                provider_id=f"aws:///{zone}/{instance}", taints=taints)


def build() -> Incident:
    s = Incident(
        id=ID,
        title="activity-store running on two of three members",
        now=NOW,
        report="""\
activity-store (the Cassandra behind the CRM timeline, namespace crm) has only 2 of 3
members since ~07:45 and it doesn't come back by itself. The customer timeline in the CRM
is noticeably slower and the repair job alerted. Nobody touched it. Why isn't the third
member coming back?
""",
        truth=truth(
            "unschedulable", "StatefulSet", NS, "activity-store",
            ["volume node affinity conflict", "FailedScheduling", "data-activity-store-1",
             "eu-central-1b", "InsufficientInstanceCapacity"],
            "activity-store-1's EBS volume is in eu-central-1b, where no data node is left "
            "(the old one was retired by AWS, the replacement r6i.2xlarge cannot be launched "
            "for lack of capacity): allow another instance type in the data-1b node group (e.g. "
            "r7i.2xlarge or r6a.2xlarge) so a node can start in 1b, or, if the data must move, "
            "replace the member from a new volume in another zone (nodetool "
            "replace_address)."))
    set_times(s, 2.5, 60)
    c = s.cluster
    for ns, days in (("default", 720), ("kube-system", 720), (NS, 610), ("campaigns", 190)):
        c.namespace(ns, s.ago(days=days))
    gen = NodeKind("m6i.2xlarge", "8", "32386388Ki", "7910m", "31369556Ki",
                   "v1.32.9-eks-5e0f2a3", "6.1.158-180.294.amzn2023.x86_64",
                   "Amazon Linux 2023.9.20260120", runtime="containerd://1.7.27", pods="58")
    data = NodeKind("r6i.2xlarge", "8", "65023252Ki", "7910m", "64006420Ki",
                    "v1.32.9-eks-5e0f2a3", "6.1.158-180.294.amzn2023.x86_64",
                    "Amazon Linux 2023.9.20260120", runtime="containerd://1.7.27", pods="58")
    general: list[Obj] = []
    for i, (zone, third) in enumerate((("a", 6), ("b", 37), ("c", 70), ("a", 11), ("b", 44),
                                       ("c", 82))):
        general.append(_eks(s, f"10.42.{third}.{s.rng.randrange(10, 250)}", REGION + zone,
                            "general-m6i", gen, s.ago(days=5.9 - i * 0.3, hours=i)))
    taint = [{"effect": "NoSchedule", "key": "dedicated", "value": "activity-store"}]
    data_a = _eks(s, f"10.42.{s.rng.randrange(1, 30)}.{s.rng.randrange(10, 250)}",
                  REGION + "a", "data-1a", data, s.ago(days=6.2),
                  {"node-role/data": "true"}, taint)
    data_c = _eks(s, f"10.42.{s.rng.randrange(65, 94)}.{s.rng.randrange(10, 250)}",
                  REGION + "c", "data-1c", data, s.ago(days=6.3),
                  {"node-role/data": "true"}, taint)
    nodes = [*general, data_a, data_c]
    storage_class(s, "gp3", "ebs.csi.aws.com", {"type": "gp3", "encrypted": "true",
                                                "throughput": "250"},
                  created=s.ago(days=720), default=True)

    # ---- the ring: members 0 and 2 run, member 1 is Pending on its volume's zone
    retired = NOW - timedelta(minutes=46, seconds=50)  # 07:44:10
    not_ready = retired + timedelta(seconds=42)
    node_gone = retired + timedelta(minutes=2, seconds=21)
    recreated = node_gone + timedelta(seconds=3)
    labels = {"app.kubernetes.io/name": "activity-store", "app.kubernetes.io/component":
              "cassandra", "app.kubernetes.io/part-of": "crm"}
    cas = PCtr("cassandra", f"{ECR}/mirror/cassandra:4.1.7", port=None,
               requests={"cpu": "3", "memory": "24Gi"}, limits={"memory": "24Gi"},
               env={"CASSANDRA_CLUSTER_NAME": "crm-activity", "CASSANDRA_DC": REGION,
                    "CASSANDRA_ENDPOINT_SNITCH": "GossipingPropertyFileSnitch",
                    "CASSANDRA_SEEDS": "activity-store-0.activity-store.crm.svc.cluster.local,"
                    "activity-store-2.activity-store.crm.svc.cluster.local",
                    "MAX_HEAP_SIZE": "12G", "HEAP_NEWSIZE": "2G"},
               readiness={"exec": {"command": ["/bin/sh", "-c", "nodetool status | grep -q "
                                               "\"^UN.*$(hostname -i)\""]},
                          "initialDelaySeconds": 30, "periodSeconds": 15, "timeoutSeconds": 10,
                          "successThreshold": 1, "failureThreshold": 3},
               liveness={"tcpSocket": {"port": 9042}, "initialDelaySeconds": 90,
                         "periodSeconds": 20, "timeoutSeconds": 5, "successThreshold": 1,
                         "failureThreshold": 6},
               mounts=[{"mountPath": "/var/lib/cassandra", "name": "data"}],
               ports=[("intra-node", 7000, "TCP"), ("jmx", 7199, "TCP"), ("cql", 9042, "TCP")])
    tpl = Template([cas], service_account="activity-store",
                   node_selector={"node-role/data": "true"},
                   tolerations=[{"effect": "NoSchedule", "key": "dedicated", "operator":
                                 "Equal", "value": "activity-store"}])
    old_born = [s.ago(days=5, hours=21, minutes=30 - 9 * i) for i in range(3)]
    homes = [data_a, None, data_c]
    sts, pods = statefulset(
        s, NS, "activity-store", tpl, replicas=3, nodes=[data_a, data_a, data_c],
        revisions=[(9, s.ago(days=41), tpl)], pod_revision=lambda i: 9,
        born=lambda i: recreated if i == 1 else old_born[i],
        claim=("data", "500Gi", "gp3"), labels=labels, created=s.ago(days=610),
        pending={1: SCHED})
    sts.obj["metadata"]["generation"] = 9
    for i, pod in enumerate(pods):
        pod["spec"]["affinity"] = {"podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [{
                "labelSelector": {"matchLabels": {"app.kubernetes.io/name": "activity-store"}},
                "topologyKey": "kubernetes.io/hostname"}]}}
        pod["spec"]["priorityClassName"] = "crm-critical"
        pod["spec"]["priority"] = 1000000
        if homes[i] is None:
            pod["spec"].pop("nodeName", None)
    pvc_1 = next(o for o in c.objects_of("PersistentVolumeClaim")
                 if o["metadata"]["name"] == "data-activity-store-1")
    pvc_1["metadata"]["annotations"]["volume.kubernetes.io/selected-node"] = GONE
    for o in c.objects_of("PersistentVolumeClaim"):
        o["metadata"]["annotations"]["volume.kubernetes.io/storage-provisioner"] = \
            "ebs.csi.aws.com"
    ports = [{"name": "cql", "port": 9042, "protocol": "TCP", "targetPort": 9042},
             {"name": "intra-node", "port": 7000, "protocol": "TCP", "targetPort": 7000}]
    svc = add_service(s, NS, "activity-store", dict(sts.obj["spec"]["selector"]["matchLabels"]),
                      ports, created=s.ago(days=610), labels=labels, headless=True)
    svc["spec"]["publishNotReadyAddresses"] = True
    add_endpoints(s, svc, [pods[0], pods[2]], [{"name": "cql", "port": 9042, "protocol": "TCP"},
                                               {"name": "intra-node", "port": 7000,
                                                "protocol": "TCP"}])

    def sts_status(objects: list[Obj]) -> None:
        rev = sts.revisions[-1]["metadata"]["name"]
        sts.obj["status"] = {"availableReplicas": 2, "collisionCount": 0, "currentReplicas": 3,
                             "currentRevision": rev, "observedGeneration": 9,
                             "readyReplicas": 2, "replicas": 3, "updateRevision": rev,
                             "updatedReplicas": 3}
    s.fixes.append(sts_status)
    pending = pods[1]
    c.event(sts.obj, "SuccessfulCreate", "create Pod activity-store-1 in StatefulSet "
            "activity-store successful", first=recreated, component="statefulset-controller")
    c.event(pending, "FailedScheduling", SCHED, first=recreated, last=NOW - timedelta(
        seconds=47), count=19, type_="Warning", component="default-scheduler", host="")
    c.event(pending, "TriggeredScaleUp", f"pod triggered scale-up: [{{{ASG_1B} 0->1 (max: 1)}}]",
            first=recreated + timedelta(seconds=12), component="cluster-autoscaler", host="")
    c.event(pending, "NotTriggerScaleUp", "pod didn't trigger scale-up: 1 in backoff after "
            "failed scale-up, 6 node(s) didn't match Pod's node affinity/selector, 2 node(s) had "
            "volume node affinity conflict", first=recreated + timedelta(minutes=6, seconds=4),
            last=NOW - timedelta(seconds=21), count=37, component="cluster-autoscaler",
            host="")
    c.add({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": c.meta("ConfigMap", "cluster-autoscaler-status", "kube-system",
                              s.ago(days=720), annotations={
                                  "cluster-autoscaler.kubernetes.io/last-updated":
                                  (NOW - timedelta(seconds=9)).strftime(
                                      "%Y-%m-%d %H:%M:%S.%f +0000 UTC")}),
           "data": {"status": _ca_status(NOW - timedelta(seconds=9), recreated)}})

    # metrics of the ring
    ghost = deleted(s, NS, "activity-store-1", GONE, old_born[1], retired)
    cut = retired.timestamp()
    for pod, mib in ((pods[0], 21800), (ghost, 21450), (pods[2], 21990)):
        name = pod["metadata"]["name"]
        working_set(s, pod, "cassandra", drift(s, mib * MIB, 0.01, 3100))
        cpu_seconds(s, pod, "cassandra", lambda t: 1.1 * s.rng.uniform(0.85, 1.15) * (
            1.0 if t < cut else 1.3))
        if pod is not ghost:
            restarts_series(s, pod, "cassandra", 0, [])
            app_counter(s, "cassandra_storage_total_hints_total", {"namespace": NS, "pod": name},
                        alive(s, pod), lambda t: 0.02 if t < cut else 41.0,
                        "Hints stored for unreachable replicas.")
            gauge(s, "cassandra_cluster_live_nodes", {"namespace": NS, "pod": name},
                  after(cut + 11, 3.0, 2.0), "Members of the ring seen as UP by this node.")
    gauge(s, "kube_statefulset_status_replicas_ready", {"namespace": NS, "statefulset":
                                                        "activity-store"},
          after(cut + 45, 3.0, 2.0), "The number of ready replicas per StatefulSet.")
    gauge(s, "kube_pod_status_unschedulable", {"namespace": NS, "pod": "activity-store-1"},
          lambda t: 1.0, "Describes the unschedulable status for the pod.",
          times=alive(s, pending))
    for status, rng in (("true", (None, not_ready)), ("unknown", (not_ready, node_gone)),
                        ("false", (None, node_gone))):
        lo, hi = rng

        def ready(t: int, st: str = status, a: datetime | None = lo,
                  b: datetime = hi) -> float | None:
            if t >= node_gone.timestamp():
                return None
            if st == "false":
                return 0.0
            inside = (a is None or t >= a.timestamp()) and t < b.timestamp()
            return 1.0 if inside else 0.0
        gauge(s, "kube_node_status_condition", {"node": GONE, "condition": "Ready",
                                                "status": status}, ready,
              "The condition of a cluster node.")
    first_try = recreated + timedelta(seconds=12)
    failures = [(first_try + timedelta(minutes=5.5 * k + (0 if k == 0 else 0.4),
                                       seconds=96)).timestamp() for k in range(12)]
    s.metrics.counter("cluster_autoscaler_failed_scale_ups",
                      {"namespace": "kube-system", "reason": "cloudProviderError"},
                      [(t, 3 + sum(1 for f in failures if f <= t)) for t in s.times],
                      "Number of times scale-up operation has failed.")
    gauge(s, "cluster_autoscaler_nodes_count", {"namespace": "kube-system", "state": "ready"},
          lambda t: 9.0 if t < not_ready.timestamp() else 8.0,
          "Number of nodes in cluster.")

    # ---- the cluster autoscaler (logs only: what it tried)
    ca = Ctr("cluster-autoscaler", "registry.k8s.io/autoscaling/cluster-autoscaler:v1.32.1",
             port=8085, requests={"cpu": "100m", "memory": "600Mi"}, limits={"memory": "1Gi"},
             command=["./cluster-autoscaler", "--cloud-provider=aws", "--expander=least-waste",
                      "--balance-similar-node-groups", "--skip-nodes-with-local-storage=false",
                      "--node-group-auto-discovery=asg:tag=k8s.io/cluster-autoscaler/enabled,"
                      "k8s.io/cluster-autoscaler/crm-prod"])
    _, cas_pods = deploy(s, "kube-system", "cluster-autoscaler", [ca], replicas=1,
                         nodes=general, revision=5, rollout=s.ago(days=5, hours=8),
                         service=None, labels={"app.kubernetes.io/name": "cluster-autoscaler"})
    for k in range(12):
        when = first_try + timedelta(minutes=5.5 * k + (0 if k == 0 else 0.4))
        if when > NOW:
            break
        for off, level, msg in (
                (0.0, "info", f"Scale-up: setting group {ASG_1B} size to 1"),
                (0.3, "info", f"Setting asg {ASG_1B} size to 1"),
                (96.0, "warn", f"Instance group {ASG_1B} has unregistered nodes: failed to "
                 "launch: InsufficientInstanceCapacity: We currently do not have sufficient "
                 "r6i.2xlarge capacity in the Availability Zone you requested (eu-central-1b). "
                 "Our system will be working on provisioning additional capacity. You can "
                 "currently get r6i.2xlarge capacity by not specifying an Availability Zone in "
                 "your request or choosing eu-central-1a, eu-central-1c."),
                (96.2, "warn", f"Disabling scale-up for node group {ASG_1B} until "
                 f"{(when + timedelta(seconds=96 + 300)).strftime('%Y-%m-%d %H:%M:%S')} +0000 "
                 "UTC; errorClass=OutOfResource; errorCode=InsufficientInstanceCapacity")):
            stamp = when + timedelta(seconds=off)
            if stamp <= NOW:
                s.logs.add(stamp, level, msg, namespace="kube-system",
                           pod=cas_pods[0]["metadata"]["name"], container="cluster-autoscaler",
                           service="cluster-autoscaler",
                           node=cas_pods[0]["spec"]["nodeName"])
    logs_for(s, cas_pods, "cluster-autoscaler", "cluster-autoscaler", [
        ("info", "Pod crm/activity-store-1 is unschedulable", {}),
        ("info", "No pod using affinity / antiaffinity found in cluster, disabling affinity "
         "predicate for this loop", {}),
        ("info", "Scale down status: lastScaleUpTime=2027-02-18 07:46:49 +0000 UTC "
         "lastScaleDownDeleteTime=2027-02-17 19:12:05 +0000 UTC", {}),
    ], 24, start=recreated, end=NOW)

    # ---- timeline-api reads the ring at LOCAL_QUORUM
    tl = Ctr("timeline-api", f"{ECR}/crm/timeline-api:6.3.2", port=8080,
             requests={"cpu": "500m", "memory": "1Gi"}, limits={"memory": "1536Mi"},
             env={"CASSANDRA_CONTACT_POINTS": "activity-store.crm.svc.cluster.local:9042",
                  "CASSANDRA_CONSISTENCY": "LOCAL_QUORUM", "JAVA_TOOL_OPTIONS":
                  "-XX:MaxRAMPercentage=70"},
             readiness=http_probe("/actuator/health/readiness", delay=20),
             liveness=http_probe("/actuator/health/liveness", delay=60, period=20))
    _, tls = deploy(s, NS, "timeline-api", [tl], replicas=3, nodes=general, revision=118,
                    rollout=s.ago(days=1, hours=22))
    buckets = (0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
    for k, pod in enumerate(tls):
        plain(s, pod, "timeline-api", 788)
        requests(s, pod, "timeline-api", rps=lambda t: 12.0, codes={
            "200": lambda t: 0.991 if t < cut else 0.978, "404": lambda t: 0.008,
            "500": lambda t: 0.0005 if t < cut else 0.013},
            median=(lambda t: 0.038 if t < cut else 0.094) if k == 0 else None,
            buckets=buckets if k == 0 else ())
    start = NOW - timedelta(hours=2.5)
    logs_for(s, tls, "timeline-api", "timeline-api", [
        ("info", "GET /v1/accounts/{id}/timeline?limit=50 200", {"http.response.status_code":
                                                                 200}),
        ("info", "POST /v1/activities 201", {"http.response.status_code": 201}),
        ("warn", "slow query (412 ms) on activities_by_account partition acct=0019Z00002bQ",
         {}),
    ], 90, start=start, end=NOW)
    gone_ip = "10.42.41.122"
    logs_for(s, tls, "timeline-api", "timeline-api", [
        ("warn", f"c.d.o.d.i.c.p.ChannelPool - [s0|/{gone_ip}:9042] Error while opening new "
         "channel (ConnectionInitException: [s0|connecting...] Protocol initialization request, "
         "step 1 (OPTIONS): failed to send request (io.netty.channel.ConnectTimeoutException: "
         f"connection timed out after 5000 ms: /{gone_ip}:9042))", {}),
        ("error", "GET /v1/accounts/{id}/timeline 500: ReadTimeoutException: Cassandra timeout "
         "during read query at consistency LOCAL_QUORUM (2 responses were required but only 1 "
         "replica responded)", {"http.response.status_code": 500,
                                "error.type": "ReadTimeoutException"}),
        ("info", "GET /v1/accounts/{id}/timeline?limit=50 200 (speculative execution used)",
         {"http.response.status_code": 200}),
    ], 72, start=retired + timedelta(seconds=20), end=NOW)
    for pod in (pods[0], pods[2]):
        for off, level, msg in (
                (-3600.0, "info", "Completed flushing /var/lib/cassandra/data/activity/"
                 "activities_by_account-5b1f/nb-41873-big-Data.db (58.113MiB) for commitlog "
                 "position CommitLogPosition(segmentId=1739410811204, position=1881622)"),
                (10.8, "info", f"InetAddress /{gone_ip}:7000 is now DOWN"),
                (62.0, "warn", f"Timed out waiting for hints delivery to /{gone_ip}:7000, "
                 "will retry when it is back")):
            s.logs.add(retired + timedelta(seconds=off + s.rng.uniform(0, 0.4)), level, msg,
                       namespace=NS, pod=pod["metadata"]["name"], container="cassandra",
                       service="activity-store", node=pod["spec"]["nodeName"])
    logs_for(s, [pods[0], pods[2]], "cassandra", "activity-store", [
        ("info", f"Handshaking version with /{gone_ip}:7000", {}),
        ("info", "Hints for 10.42.41.122 stored: 184213 (dispatch paused, endpoint DOWN)", {}),
        ("info", "Writing Memtable-activities_by_account@1482113(61.204MiB serialized bytes, "
         "233041 ops, 3.66%/0.00% of on/off-heap limit), flushed range = (min(-9223372036854775808"
         "), max(9223372036854775807)]", {}),
    ], 42, start=retired, end=NOW)

    # ---- red herrings
    ls = Ctr("lead-scoring", f"{ECR}/crm/lead-scoring:2.0.14", port=8000,
             requests={"cpu": "300m", "memory": "1Gi"}, limits={"memory": "2Gi"},
             readiness=http_probe("/ready", delay=10))
    old = s.ago(days=2, hours=4, minutes=17)

    def ls_states(i: int, name: str, started: datetime) -> dict[str, Obj]:
        return {"lead-scoring": running(old, restarts=1, last=ended(
            "Error", 1, started, old - timedelta(seconds=8)))} if i == 0 else {}
    _, lss = deploy(s, NS, "lead-scoring", [ls], replicas=2, nodes=general, revision=31,
                    rollout=s.ago(days=3, hours=2), statuses=ls_states, offset=2)
    for k, pod in enumerate(lss):
        plain(s, pod, "lead-scoring", 1210, restarts=1 - k)
    logs_for(s, lss, "lead-scoring", "lead-scoring", [
        ("info", "scored 500 leads in 1.8s (model lgbm-2027-02-14)", {}),
        ("warn", "feature 'last_email_open_days' missing for 37 leads, imputing median", {}),
        ("warn", "model reload took 14.2s (s3://crm-models/lead-scoring/latest)", {}),
    ], 30, start=start, end=NOW)
    lp = Ctr("landing-pages", f"{ECR}/campaigns/landing-pages:2027.7.0", port=3000,
             requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"},
             readiness=http_probe("/api/health", delay=5, timeout=1))
    _, lps = deploy(s, "campaigns", "landing-pages", [lp], replicas=2, nodes=general,
                    revision=204, rollout=s.ago(days=1, hours=3), offset=4)
    blip = NOW - timedelta(minutes=28, seconds=3)
    ip = lps[0]["status"]["podIP"]
    c.event(lps[0], "Unhealthy", f'Readiness probe failed: Get "http://{ip}:3000/api/health": '
            "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            first=blip, last=blip + timedelta(seconds=20), count=3, type_="Warning",
            field_path="spec.containers{landing-pages}")
    logs_for(s, lps, "landing-pages", "landing-pages", [
        ("info", "GET /spring-offers 200", {"http.response.status_code": 200}),
        ("warn", "GET /wp-admin/setup-config.php 404", {"http.response.status_code": 404}),
    ], 30, start=start, end=NOW)
    cni = Ctr("aws-node", "602401143452.dkr.ecr.eu-central-1.amazonaws.com/amazon-k8s-cni:"
              "v1.19.2-eksbuild.1", port=61678, port_name="metrics",
              requests={"cpu": "25m"}, limits={})
    _, cnis = daemonset(s, "kube-system", "aws-node", [cni], node_list=nodes, generation=6,
                        since=s.ago(days=6.3), labels={"k8s-app": "aws-node"})
    for pod in cnis:
        pod["spec"]["hostNetwork"] = True
        pod["status"]["podIP"] = pod["status"]["hostIP"]
        pod["status"]["podIPs"] = [{"ip": pod["status"]["hostIP"]}]
    logs_for(s, cnis, "aws-node", "aws-node", [
        ("info", "Received request to assign IP for pod crm/timeline-api", {}),
        ("warn", "IMDS request throttled (status 429), retrying in 1s", {}),
        ("info", "Successfully reconciled ENI warm pool, 8 IPs available", {}),
    ], 24, start=start, end=NOW)
    return s


def _ca_status(when: datetime, since: datetime) -> str:
    stamp = when.strftime("%Y-%m-%d %H:%M:%S.%f +0000 UTC")
    since_s = since.strftime("%Y-%m-%d %H:%M:%S.%f +0000 UTC")
    return f"""\
time: {stamp}
autoscalerStatus: Running
clusterWide:
  health:
    status: Healthy
    nodeCounts:
      registered:
        total: 8
        ready: 8
        notStarted: 0
      longUnregistered: 0
      unregistered: 0
    lastProbeTime: "{stamp}"
    lastTransitionTime: "2027-02-12 10:14:31.201422877 +0000 UTC"
  scaleUp:
    status: InProgress
    lastProbeTime: "{stamp}"
    lastTransitionTime: "{since_s}"
  scaleDown:
    status: NoCandidates
    lastProbeTime: "{stamp}"
    lastTransitionTime: "2027-02-17 19:12:05.004121902 +0000 UTC"
nodeGroups:
- name: {ASG_1B}
  health:
    status: Healthy
    nodeCounts:
      registered:
        total: 0
        ready: 0
      unregistered: 0
    cloudProviderTarget: 0
    minSize: 0
    maxSize: 1
  scaleUp:
    status: Backoff
    backoffInfo:
      errorCode: InsufficientInstanceCapacity
      errorMessage: "We currently do not have sufficient r6i.2xlarge capacity in the \\
        Availability Zone you requested (eu-central-1b)."
    lastProbeTime: "{stamp}"
    lastTransitionTime: "{since_s}"
"""
