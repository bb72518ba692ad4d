"""Broadcasting: worker talos-w04 (Talos on bare metal) went NotReady at 20:41. The kernel
reports containerd blocked in D state on the NVMe (hung task warnings, a controller reset), so
the kubelet still heartbeats but its runtime is down and PLEG is unhealthy. The taint manager
evicted the pods on it five minutes later: epg-api got a replacement elsewhere, but
playout-scheduler-1 cannot be recreated while its old pod is stuck Terminating on the node.
Red herrings: epg-api's release of yesterday, the scheduler's leader-election warnings, and
upstream DNS timeouts of CoreDNS."""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import partial

from tests.data.holdout._generator.base import daemonset, gauge, set_times
from tests.data.holdout2._generator.kit import NodeKind, deploy, requests
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.scenario_tools.common import node_conditions, truth
from tests.scenario_tools.kube import Ctr, Template, http_probe, iso, running

from .kit4 import Incident, pool

ID = "epg-playout-degraded"
NOW = datetime.fromisoformat("2027-12-04T21:07:00+00:00")
NS = "broadcast"
REG = "harbor.nordcast.internal/broadcast"
BAD = "talos-w04"


def build() -> Incident:
    s = Incident(
        id=ID,
        title="Playout scheduler down to one instance, EPG errors",
        now=NOW,
        report="""\
Alertmanager fires KubePodNotReady for broadcast/playout-scheduler-1 and
KubeStatefulSetReplicasMismatch since about 20:45. The EPG shows gaps for a few channels and
the on-air team says schedule changes take ages to reach playout. Tonight's live match
starts 21:45 and we cannot run on one scheduler. What happened?
""",
        truth=truth(
            "node_failure", "Node", "", BAD,
            ["NotReady", "container runtime is down", "PLEG is not healthy",
             "blocked for more than 120 seconds"],
            "talos-w04 is NotReady: containerd hangs in D state on the node's NVMe (kernel "
            "hung-task warnings, nvme controller reset), so the runtime is down and PLEG "
            "unhealthy. Cordon and reboot or replace talos-w04 (talosctl reboot; check the "
            "NVMe), force-delete playout-scheduler-1 so the StatefulSet recreates it on a "
            "healthy node."))
    set_times(s, 2.0, 30)
    c = s.cluster
    namespaces(s, {"default": 900, "kube-system": 900, NS: 800, "logging": 700})
    kind = NodeKind("", "32", "131811764Ki", "31500m", "128051764Ki", "v1.32.3",
                    "6.12.18-talos", "Talos (v1.9.5)", runtime="containerd://2.0.3",
                    storage="936937276Ki", alloc_storage="863284547174")
    down = NOW - timedelta(minutes=26, seconds=11)
    evict = down + timedelta(seconds=302)

    def namer(i: int) -> tuple[str, str]:
        return f"talos-w{i + 1:02d}", f"10.20.30.{21 + i}"

    nodes = pool(s, 5, kind=kind, namer=namer, days=6.9, region="", zones=[],
                 labels=lambda i, n: {"node-role.kubernetes.io/worker": "",
                                      "site": "osl-dc1", "rack": f"r{7 + i // 3}"},
                 provider=lambda i, n: "", cidr=lambda i: f"10.244.{i + 1}.0/24")
    for n in nodes:
        n["metadata"]["labels"].pop("node.kubernetes.io/instance-type", None)
    bad = nodes[3]
    for cond in bad["status"]["conditions"]:
        if cond["type"] == "Ready":
            cond.update({"status": "False", "reason": "KubeletNotReady",
                         "message": "container runtime is down, PLEG is not healthy: pleg was "
                         "last seen active 26m14s ago; threshold is 3m0s",
                         "lastTransitionTime": iso(down)})
    bad["spec"]["taints"] = [
        {"effect": "NoSchedule", "key": "node.kubernetes.io/not-ready",
         "timeAdded": iso(down + timedelta(seconds=2))},
        {"effect": "NoExecute", "key": "node.kubernetes.io/not-ready",
         "timeAdded": iso(down + timedelta(seconds=2))}]
    c.event(bad, "NodeNotReady", f"Node {BAD} status is now: NodeNotReady", first=down,
            component="kubelet", host=BAD)
    c.event(bad, "ContainerGCFailed", "rpc error: code = DeadlineExceeded desc = context "
            "deadline exceeded", first=down + timedelta(seconds=40),
            last=NOW - timedelta(seconds=34), count=26, type_="Warning", host=BAD)
    c.event(bad, "ImageGCFailed", "failed to get image stats: rpc error: code = "
            "DeadlineExceeded desc = context deadline exceeded", first=down +
            timedelta(minutes=4), last=NOW - timedelta(minutes=1, seconds=50), count=5,
            type_="Warning", host=BAD)
    node_conditions(s, nodes, {(BAD, "Ready"): lambda t: t < down.timestamp()})
    for n in nodes:
        name = n["metadata"]["name"]
        base = s.rng.uniform(3.0, 7.0)
        gauge(s, "node_load1", {"instance": name},
              partial(_load, s, base, name == BAD, down.timestamp()),
              "1m load average.")

    # ---- epg-api: one pod on the broken node, evicted and replaced
    epg = Ctr("epg-api", f"{REG}/epg-api:3.22.0", port=8080,
              requests={"cpu": "500m", "memory": "768Mi"}, limits={"memory": "1Gi"},
              readiness=http_probe("/ready"), liveness=http_probe("/live", delay=20))
    rollout = s.ago(hours=22, minutes=13)

    def born(i: int) -> datetime:
        return evict + timedelta(seconds=1) if i == 2 else rollout + timedelta(seconds=9 + 30 * i)
    work, epgs = deploy(s, NS, "epg-api", [epg], replicas=3, nodes=[nodes[0], nodes[1],
                                                                    nodes[4]],
                        revision=64, rollout=rollout, born=born)
    rs = work.revisions[-1]
    gone = c.pod(work, rs, node=bad, created=rollout + timedelta(seconds=71),
                 statuses={"epg-api": running(rollout + timedelta(seconds=80), ready=False)})
    gone["metadata"]["deletionTimestamp"] = iso(evict + timedelta(seconds=30))
    gone["metadata"]["deletionGracePeriodSeconds"] = 30
    for cond in gone["status"]["conditions"]:
        if cond["type"] in ("Ready", "ContainersReady"):
            cond.update({"status": "False", "lastTransitionTime": iso(down + timedelta(
                seconds=41))})
            cond.pop("reason", None)
            cond.pop("message", None)
    for pod in (gone,):
        meta = pod["metadata"]
        c.event(pod, "NodeNotReady", "Node is not ready", first=down + timedelta(seconds=41),
                type_="Warning", component="node-controller", host="")
        c.event(pod, "TaintManagerEviction", f"Marking for deletion Pod {NS}/{meta['name']}",
                first=evict, component="taint-eviction-controller", host="")
        c.event(pod, "Killing", "Stopping container epg-api", first=evict + timedelta(
            seconds=1), host=BAD, field_path="spec.containers{epg-api}")
    new = epgs[2]
    c.event(rs, "SuccessfulCreate", f"Created pod: {new['metadata']['name']}",
            first=evict + timedelta(seconds=1), component="replicaset-controller", host="")
    c.event(new, "Scheduled", f"Successfully assigned {NS}/{new['metadata']['name']} to "
            f"{new['spec']['nodeName']}", first=evict + timedelta(seconds=1),
            component="default-scheduler", host="")
    for pod in epgs:
        quiet(s, [pod], "epg-api", 610)
        requests(s, pod, "epg-api", rps=lambda t: 40.0, codes={
            "200": lambda t: 0.97, "404": lambda t: 0.02,
            "502": lambda t: 0.012 if t >= down.timestamp() else 0.0005})
    chatter(s, epgs, "epg-api", "epg-api", [
        ("info", "GET /v2/channels/nrk1/schedule?day=2027-12-04 200 18ms", {}),
        ("warn", "schedule for channel sport-2 has a 22 min gap after 21:45, playout "
         "scheduler did not confirm the live block", {}),
        ("error", "POST http://playout-scheduler.broadcast.svc/v1/confirm timed out after 5s",
         {}),
    ], 120, start=down)
    chatter(s, epgs[:2], "epg-api", "epg-api", [
        ("info", "GET /v2/channels/nrk1/schedule?day=2027-12-04 200 14ms", {}),
    ], 30, end=down)

    # ---- playout-scheduler: pod 1 stuck Terminating on the node
    ps = Ctr("playout-scheduler", f"{REG}/playout-scheduler:7.4.2", port=8080,
             requests={"cpu": "1", "memory": "2Gi"}, limits={"memory": "2Gi"},
             readiness=http_probe("/ready"), liveness=http_probe("/live", delay=30))
    tpl = Template([ps], service_account="playout-scheduler")
    sts = c.workload("StatefulSet", NS, "playout-scheduler", tpl, replicas=2,
                     created=s.ago(days=400))
    rev = c.revision(sts, 9, s.ago(days=6, hours=10))
    p0 = c.pod(sts, rev, node=nodes[2], created=s.ago(days=6, hours=10),
               statuses={"playout-scheduler": running(s.ago(days=6, hours=10) +
                                                      timedelta(seconds=12))},
               name="playout-scheduler-0")
    p1 = c.pod(sts, rev, node=bad, created=s.ago(days=6, hours=9, minutes=58),
               statuses={"playout-scheduler": running(s.ago(days=6, hours=9, minutes=57),
                                                      ready=False)},
               name="playout-scheduler-1")
    p1["metadata"]["deletionTimestamp"] = iso(evict + timedelta(seconds=30))
    p1["metadata"]["deletionGracePeriodSeconds"] = 30
    for cond in p1["status"]["conditions"]:
        if cond["type"] in ("Ready", "ContainersReady"):
            cond.update({"status": "False", "lastTransitionTime": iso(down + timedelta(
                seconds=41))})
            cond.pop("reason", None)
            cond.pop("message", None)
    c.event(p1, "NodeNotReady", "Node is not ready", first=down + timedelta(seconds=41),
            type_="Warning", component="node-controller", host="")
    c.event(p1, "TaintManagerEviction", f"Marking for deletion Pod {NS}/playout-scheduler-1",
            first=evict, component="taint-eviction-controller", host="")
    c.event(p1, "Killing", "Stopping container playout-scheduler", first=evict +
            timedelta(seconds=1), host=BAD, field_path="spec.containers{playout-scheduler}")
    c.event(p1, "FailedKillPod", "error killing pod: failed to \"KillContainer\" for "
            "\"playout-scheduler\" with KillContainerError: \"rpc error: code = "
            "DeadlineExceeded desc = context deadline exceeded\"", first=evict +
            timedelta(seconds=33), last=NOW - timedelta(seconds=52), count=11,
            type_="Warning", host=BAD)
    c.service(NS, "playout-scheduler", {"app.kubernetes.io/name": "playout-scheduler"},
              created=s.ago(days=400))
    for pod in (p0, p1):
        name = pod["metadata"]["name"]
        gauge(s, "kube_pod_status_ready", {"namespace": NS, "pod": name, "condition": "true"},
              partial(_ready, name.endswith("-1"), down.timestamp() + 41),
              "Describes whether the pod is ready to serve requests.")
    quiet(s, [p0], "playout-scheduler", 1210)
    chatter(s, [p0], "playout-scheduler", "playout-scheduler", [
        ("warn", "lost contact with peer playout-scheduler-1 (raft term 412), continuing as "
         "single leader without quorum for writes", {}),
        ("warn", "schedule change SC-90411 queued: write quorum unavailable (1/2)", {}),
        ("info", "as-run log for sport-2 block 20:00-21:00 archived", {}),
    ], 80, start=down)

    # ---- fluent-bit on every node ships the kernel log too
    fb = Ctr("fluent-bit", "cr.fluentbit.io/fluent/fluent-bit:3.2.6", port=2020,
             requests={"cpu": "50m", "memory": "64Mi"}, limits={"memory": "128Mi"})
    _, fbs = daemonset(s, "logging", "fluent-bit", [fb], node_list=nodes, generation=4,
                       since=s.ago(days=6, hours=20), labels={"app.kubernetes.io/name":
                                                             "fluent-bit"})
    quiet(s, fbs, "fluent-bit", 41)
    kernel = [
        (-95, "warn", "nvme nvme0: I/O tag 412 (a19c) opcode 0x1 (Write) QID 7 timeout, "
         "aborting"),
        (-64, "warn", "nvme nvme0: I/O tag 412 (a19c) opcode 0x1 (Write) QID 7 timeout, "
         "reset controller"),
        (60, "error", "INFO: task containerd:1187 blocked for more than 122 seconds."),
        (61, "error", "      Not tainted 6.12.18-talos #1"),
        (184, "error", "INFO: task containerd-shim:40211 blocked for more than 122 seconds."),
        (306, "error", "INFO: task kubelet:1402 blocked for more than 245 seconds."),
        (429, "error", "INFO: task containerd:1187 blocked for more than 368 seconds."),
        (612, "warn", "nvme nvme0: I/O tag 77 (304d) opcode 0x2 (Read) QID 3 timeout, "
         "aborting"),
        (980, "error", "INFO: task containerd:1187 blocked for more than 983 seconds."),
    ]
    for offset, level, text in kernel:
        s.logs.add(down + timedelta(seconds=offset), level, text, namespace="logging",
                   pod=fbs[3]["metadata"]["name"], container="fluent-bit",
                   service="kernel", node=BAD, **{"log.logger": "kmsg"})
    chatter(s, fbs, "fluent-bit", "fluent-bit", [
        ("info", "[output:loki:loki.0] flushed 412 records", {}),
    ], 40)
    dns = Ctr("coredns", "registry.k8s.io/coredns/coredns:v1.12.0", port=53, port_name="dns",
              requests={"cpu": "100m", "memory": "70Mi"}, limits={"memory": "170Mi"},
              readiness=http_probe("/ready", 8181))
    _, dnss = steady(s, "kube-system", "coredns", [dns], nodes=[nodes[0], nodes[2]],
                     replicas=2, revision=3, rollout=s.ago(days=6, hours=22), service=None)
    quiet(s, dnss, "coredns", 28)
    chatter(s, dnss, "coredns", "coredns", [
        ("error", "[ERROR] plugin/errors: 2 metadata.nordcast.no. A: read udp "
         "10.244.1.9:51820->1.1.1.1:53: i/o timeout", {}),
    ], 12)
    _ = (Template, p0)
    return s


def _load(s: Incident, base: float, broken: bool, down: float, t: int) -> float:
    extra = min(71.0, (t - down + 240) / 22) if broken and t >= down - 240 else 0.0
    return base * s.rng.uniform(0.85, 1.15) + extra


def _ready(stuck: bool, since: float, t: int) -> float:
    return 0.0 if stuck and t >= since else 1.0
