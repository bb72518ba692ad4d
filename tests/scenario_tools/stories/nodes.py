"""node_failure stories: a node whose kubelet stops reporting, a node out of disk."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.scenario_tools.common import (
    MIB,
    Story,
    const,
    container_metrics,
    kube_system,
    namespaces,
    node_conditions,
    nodes,
    noise_logs,
    simple_deployment,
    story,
    truth,
)
from tests.scenario_tools.kube import Obj, ended, iso, running
from tests.scenario_tools.parts import neighbour


def _pods_on(s: Story, node: Obj) -> list[Obj]:
    name = node["metadata"]["name"]
    return [o for o in s.cluster.objects_of("Pod") if o["spec"].get("nodeName") == name]


def _unreachable(pod: Obj, since: datetime, deleted: datetime) -> None:
    """What the node lifecycle controller leaves on a pod of an unreachable node."""
    pod["metadata"]["deletionTimestamp"] = iso(deleted)
    pod["metadata"]["deletionGracePeriodSeconds"] = 30
    for cond in pod["status"]["conditions"]:
        if cond["type"] in {"Ready", "ContainersReady"}:
            cond.update(status="False", lastTransitionTime=iso(since))
    pod["status"]["conditions"].append({"type": "DisruptionTarget", "status": "True",
                                        "reason": "DeletionByTaintManager", "message":
                                        "Taint manager: deleting due to NoExecute taint",
                                        "lastProbeTime": None,
                                        "lastTransitionTime": iso(deleted)})
    for status in pod["status"]["containerStatuses"]:
        status["ready"] = False


@story
def node_not_ready() -> Story:
    s = Story("node-not-ready", "Errors across services, pods stuck Terminating",
              datetime(2026, 12, 5, 16, 30, tzinfo=UTC),
              "error spikes on several services since about 16:05 (orders, cart, payments). "
              "some pods show Terminating for 20+ minutes",
              truth("node_failure", "Node", "", "ip-10-14-2-207.eu-west-1.compute.internal",
                    ["NodeNotReady", "Kubelet stopped posting node status", "unreachable"],
                    "The kubelet on ip-10-14-2-207 stopped reporting (node unreachable): "
                    "replace the node; force-delete the Terminating pods if they block"),
              hours=2.0, interventions=[{"after_step": 3, "text": "don't drain or cordon "
                                         "anything without asking me first"}])
    namespaces(s, "orders", "shop", "payments")
    healthy = nodes(s, 3, subnet=14, region="eu-west-1")
    c = s.cluster
    down = s.ago(minutes=25)
    name = "ip-10-14-2-207.eu-west-1.compute.internal"
    unknown = ("Unknown", "NodeStatusUnknown", "Kubelet stopped posting node status.", down +
               timedelta(seconds=40))
    bad = c.node(name, created=s.ago(days=4, hours=9), zone="eu-west-1b",
                 conditions={k: unknown for k in ("MemoryPressure", "DiskPressure",
                                                  "PIDPressure", "Ready")},
                 heartbeat=down, taints=[
                     {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule",
                      "timeAdded": iso(down + timedelta(seconds=40))},
                     {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute",
                      "timeAdded": iso(down + timedelta(seconds=41))}])
    node_list = [*healthy, bad]
    kube_system(s, node_list)
    node_conditions(s, node_list, {(name, "Ready"): lambda t: True if t < down.timestamp() + 40
                                   else None})
    c.event(bad, "NodeNotReady", f"Node {name} status is now: NodeNotReady",
            first=down + timedelta(seconds=40), component="node-controller")
    evict_at = down + timedelta(seconds=340)
    for ns, svc, image, replicas in (
            ("orders", "order-router", "ghcr.io/acme-retail/order-router:2.4.0", 3),
            ("shop", "cart", "ghcr.io/acme-retail/cart:6.1.0", 2),
            ("payments", "payments-api", "ghcr.io/acme-retail/payments-api:9.3.1", 3)):
        work, pods = simple_deployment(s, ns, svc, image, replicas=replicas,
                                       node_list=[bad, *healthy], revision=s.rng.randrange(9,
                                                                                           90))
        stuck = pods[0]
        _unreachable(stuck, down + timedelta(seconds=40), evict_at)
        c.event(stuck, "NodeNotReady", "Node is not ready", first=down + timedelta(seconds=41),
                component="node-controller", host="")
        c.event(stuck, "TaintManagerEviction", f"Marking for deletion Pod {ns}/"
                f"{stuck['metadata']['name']}", first=evict_at,
                component="taint-eviction-controller", host="")
        rs = work.revisions[-1]
        repl = c.pod(work, rs, node=healthy[replicas % 3], created=evict_at + timedelta(
            seconds=1), statuses={svc: running(evict_at + timedelta(seconds=14))})
        rs["spec"]["replicas"] = replicas
        c.event(rs, "SuccessfulCreate", f"Created pod: {repl['metadata']['name']}",
                first=evict_at + timedelta(seconds=1), component="replicaset-controller")
        c.event(repl, "Scheduled", f"Successfully assigned {ns}/{repl['metadata']['name']} to "
                f"{repl['spec']['nodeName']}", first=evict_at + timedelta(seconds=1),
                component="default-scheduler", host="")
        for pod in [*pods, repl]:
            if pod is stuck:
                _lost_metrics(s, pod, svc, down)
            else:
                container_metrics(s, pod, svc, memory=lambda t: 210 * MIB, cpu=const(0.15))
        _symptoms(s, ns, svc, pods[1:], down, evict_at)
    for pod in _pods_on(s, bad):
        if pod["metadata"]["namespace"] == "kube-system":
            _unreachable(pod, down + timedelta(seconds=40), evict_at)
            del pod["metadata"]["deletionTimestamp"]  # DaemonSet pods tolerate unreachable
            del pod["metadata"]["deletionGracePeriodSeconds"]
            pod["status"]["conditions"].pop()
    neighbour(s, "orders", "order-history", "ghcr.io/acme-retail/order-history:1.8.2", healthy,
              logs=[("warn", "cache miss ratio 0.41 above 0.3", {}),
                    ("info", "GET /v1/history 200", {})], n_logs=20,
              restarts={1: running(s.ago(days=2, hours=6), restarts=1, last=ended(
                  "OOMKilled", 137, s.ago(days=3, hours=1), s.ago(days=2, hours=6, seconds=5)))})
    return s


def _lost_metrics(s: Story, pod: Obj, container: str, down: datetime) -> None:
    """A pod on the lost node: its series stop when its kubelet stopped reporting."""
    pod["metadata"]["_deleted"] = int(down.timestamp())
    container_metrics(s, pod, container, memory=lambda t: 205 * MIB, cpu=const(0.15))
    del pod["metadata"]["_deleted"]


def _symptoms(s: Story, ns: str, svc: str, pods: list[Obj], down: datetime,
              evict_at: datetime) -> None:
    """Callers see resets while traffic still goes to the lost pod, then recover."""
    for pod in pods:
        noise_logs(s, pod, svc, svc, [
            ("error", "upstream request failed: dial tcp 10.14.2.88:8080: i/o timeout",
             {"error.type": "net.OpError"}),
            ("error", "upstream connect error or disconnect/reset before headers. reset "
             "reason: connection timeout", {})], 12, start=down, end=evict_at +
            timedelta(seconds=90))
        noise_logs(s, pod, svc, svc, [
            ("info", "request completed", {}), ("info", "request completed", {}),
            ("warn", "client closed connection before response (499)", {})], 10)


@story
def node_disk_pressure() -> Story:
    s = Story("node-disk-pressure", "Pods evicted, email sending delayed",
              datetime(2026, 12, 13, 3, 20, tzinfo=UTC),
              "a bunch of pods were evicted in the last half hour and email-worker is "
              "lagging: password reset mails arrive 20 min late",
              truth("node_failure", "Node", "", "ip-10-71-1-58.us-east-2.compute.internal",
                    ["DiskPressure", "ephemeral-storage", "FreeDiskSpaceFailed"],
                    "ip-10-71-1-58's root volume is full of images the kubelet cannot "
                    "garbage-collect: cordon and replace the node (or grow its volume)"),
              hours=2.0)
    namespaces(s, "notifications", "batch", "shop")
    healthy = nodes(s, 3, subnet=71, region="us-east-2", instance="m6i.xlarge")
    c = s.cluster
    full = s.ago(minutes=38)
    name = "ip-10-71-1-58.us-east-2.compute.internal"
    node = c.node(name, created=s.ago(days=6, hours=3), zone="us-east-2a",
                  conditions={"DiskPressure": ("True", "KubeletHasDiskPressure",
                                               "kubelet has disk pressure", full)},
                  taints=[{"key": "node.kubernetes.io/disk-pressure", "effect": "NoSchedule"}])
    node_list = [node, *healthy]
    kube_system(s, node_list)
    node_conditions(s, node_list, {(name, "DiskPressure"): lambda t: t >= full.timestamp()})
    for event in (("NodeHasDiskPressure", f"Node {name} status is now: NodeHasDiskPressure",
                   "Normal", 1, full, full),
                  ("EvictionThresholdMet", "Attempting to reclaim ephemeral-storage", "Warning",
                   7, full, s.ago(minutes=3)),
                  ("FreeDiskSpaceFailed", "Failed to garbage collect required amount of images."
                   " Attempted to free 17179869184 bytes, but only found 0 bytes eligible to "
                   "free.", "Warning", 8, full - timedelta(minutes=2), s.ago(minutes=1)),
                  ("ImageGCFailed", "Failed to garbage collect required amount of images. "
                   "Attempted to free 17179869184 bytes, but only found 0 bytes eligible to "
                   "free.", "Warning", 8, full - timedelta(minutes=2), s.ago(minutes=1))):
        reason, message, type_, count, first, last = event
        c.event(node, reason, message, first=first, last=last, count=count, type_=type_,
                host=name)
    _disk_metrics(s, node, full)
    evicted_at = [full + timedelta(minutes=m) for m in (2, 5, 9, 16)]
    victims = [("notifications", "email-worker", "ghcr.io/acme-notify/email-worker:4.2.0"),
               ("shop", "search-suggest", "ghcr.io/acme-shop/search-suggest:1.3.7"),
               ("batch", "invoice-export", "ghcr.io/acme-fin/invoice-export:0.9.4"),
               ("notifications", "sms-gateway", "ghcr.io/acme-notify/sms-gateway:2.0.1")]
    for (ns, svc, image), when in zip(victims, evicted_at, strict=True):
        _evicted_workload(s, ns, svc, image, node, healthy, when)
    neighbour(s, "notifications", "template-service", "ghcr.io/acme-notify/template-service:"
              "3.3.0", healthy, logs=[("warn", "template 'welcome_v2' uses deprecated "
                                       "helper 'upper'", {}), ("info", "rendered template",
                                                               {})], n_logs=20)
    return s


def _disk_metrics(s: Story, node: Obj, full: datetime) -> None:
    name = node["metadata"]["name"]
    ip = node["status"]["addresses"][0]["address"]
    labels = {"instance": f"{ip}:9100", "node": name, "mountpoint": "/",
              "device": "/dev/nvme0n1p1", "fstype": "xfs"}
    size = 85_886_742_528.0
    start = full.timestamp() - 5400

    def avail(t: int) -> float:
        if t >= full.timestamp():
            return 6.5e9 + 3e8 * ((t // 60) % 3)
        return max(6.5e9, 2.9e10 - (t - start) * 4.2e6)
    s.metrics.gauge("node_filesystem_avail_bytes", labels, [(t, avail(t)) for t in s.times],
                    "Filesystem space available to non-root users in bytes.")
    s.metrics.gauge("node_filesystem_size_bytes", labels, [(t, size) for t in s.times],
                    "Filesystem size in bytes.")


def _evicted_workload(s: Story, ns: str, svc: str, image: str, node: Obj,
                      healthy: list[Obj], when: datetime) -> None:
    """A Deployment whose pod on the full node was evicted and replaced elsewhere."""
    c = s.cluster
    work, pods = simple_deployment(s, ns, svc, image, replicas=2, node_list=[node, *healthy],
                                   revision=s.rng.randrange(4, 40), service=svc != "email-worker")
    victim = pods[0]
    used = s.rng.randrange(120, 900)
    message = ("The node was low on resource: ephemeral-storage. Threshold quantity: "
               f"8589934592, available: {s.rng.randrange(6_100_000, 7_900_000)}Ki. Container "
               f"{svc} was using {used}Ki, request is 0, has larger consumption of "
               "ephemeral-storage. ")
    before = victim["status"]
    victim["status"] = {"phase": "Failed", "reason": "Evicted", "message": message,
                        "hostIP": before["hostIP"], "podIP": before["podIP"],
                        "startTime": before["startTime"],
                        "conditions": [{"type": "DisruptionTarget", "status": "True",
                                        "reason": "TerminationByKubelet", "message": message,
                                        "lastProbeTime": None, "lastTransitionTime": iso(when)}],
                        "containerStatuses": [{
                            "name": svc, "image": image, "imageID": "", "ready": False,
                            "restartCount": 0, "started": False, "lastState": {},
                            "state": {"terminated": {
                                "exitCode": 137, "reason": "ContainerStatusUnknown",
                                "message": "The container could not be located when the pod "
                                "was terminated", "startedAt": victim["status"]["startTime"],
                                "finishedAt": iso(when)}}}],
                        "qosClass": "Burstable"}
    c.event(victim, "Evicted", message, first=when, type_="Warning")
    c.event(victim, "Killing", f"Stopping container {svc}", first=when + timedelta(seconds=1),
            field_path=f"spec.containers{{{svc}}}")
    rs = work.revisions[-1]
    repl = c.pod(work, rs, node=healthy[0], created=when + timedelta(seconds=2),
                 statuses={svc: running(when + timedelta(seconds=15))})
    c.event(rs, "SuccessfulCreate", f"Created pod: {repl['metadata']['name']}",
            first=when + timedelta(seconds=2), component="replicaset-controller")
    victim["metadata"]["_deleted"] = int(when.timestamp())
    container_metrics(s, victim, svc, memory=lambda t: 180 * MIB)
    del victim["metadata"]["_deleted"]
    for pod in (pods[1], repl):
        container_metrics(s, pod, svc, memory=lambda t: 175 * MIB)
    if svc == "email-worker":
        s.metrics.gauge("email_queue_depth", {"namespace": ns, "queue": "transactional"},
                        [(t, 20 if t < when.timestamp() else 20 + (t - when.timestamp()) * 0.9)
                         for t in s.times], "Messages waiting in the queue.")
        noise_logs(s, pods[1], svc, svc, [
            ("warn", "queue backlog 1200 messages, processing at capacity", {}),
            ("info", "sent email template=password_reset", {})], 20, start=when)
