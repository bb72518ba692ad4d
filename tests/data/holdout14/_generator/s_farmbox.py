"""Farm box subscriptions: customers cannot save changes to next week's box, intermittently,
since about 13:20. One of four worker nodes (ip-10-88-2-141) runs out of memory outside any
pod (the host's system.slice grows: a log agent's buffer on the host), goes into
MemoryPressure and the kubelet evicts the Burstable pods that use more than they request:
two box-builder pods and a delivery-routes pod, with "The node was low on resource:
memory". The replacements start elsewhere and box-builder runs short while they warm up.
The node is the culprit. The signal is in the cluster state and events (node condition,
taint, Evicted pods) and in the node memory metrics. Red herrings: subscription-api 2.9.0
rolled out 41 min before the onset in the same namespace, an old OOM restart of the
surviving box-builder pod five days ago, an alert-looking cache warning in box-builder,
recipe-cards NotReady while its CMS is in a maintenance window, and a readiness blip in
another namespace."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.scenario_tools.common import (
    MIB,
    Story,
    const,
    container_metrics,
    deployment_metrics,
    http_metrics,
    node_conditions,
    truth,
)
from tests.scenario_tools.failures import not_ready, probe_events
from tests.scenario_tools.kube import Ctr, Template, ended, http_probe, iso, running
from tests.scenario_tools.parts import neighbour, readiness_blip, rollout, simple_deployment

from .kit14 import base, chatter, gauge

ID = "farm-box-changes-not-saving"
NOW = datetime(2028, 7, 20, 14, 5, tzinfo=UTC)
NS = "farmbox"
REG = "ghcr.io/acre-and-crate"
GIB = 1024 * MIB


def _evict(s: Story, pod: dict, container: str, when: datetime, using: int,
           request: str) -> None:
    """What the kubelet leaves of a pod it evicted under memory pressure."""
    message = ("The node was low on resource: memory. Threshold quantity: 100Mi, available: "
               f"{s.rng.randrange(61_000, 98_000)}Ki. Container {container} was using "
               f"{using}Ki, request is {request}, has larger consumption of memory. ")
    st = pod["status"]
    st["phase"], st["reason"], st["message"] = "Failed", "Evicted", message
    for cond in st["conditions"]:
        if cond["type"] in {"Ready", "ContainersReady"}:
            cond.update(status="False", reason="PodFailed", lastTransitionTime=iso(when))
            cond.pop("message", None)
    st["conditions"].insert(0, {"type": "DisruptionTarget", "status": "True",
                                "reason": "TerminationByKubelet", "message": message,
                                "lastProbeTime": None, "lastTransitionTime": iso(when)})
    for cs in st["containerStatuses"]:
        started = cs["state"]["running"]["startedAt"]
        cs["state"] = {"terminated": {"exitCode": 137, "reason": "Error",
                                      "startedAt": started, "finishedAt": iso(
                                          when + timedelta(seconds=30)),
                                      "containerID": cs["containerID"]}}
        cs["ready"], cs["started"] = False, False
    s.cluster.event(pod, "Evicted", message, first=when, type_="Warning")
    s.cluster.event(pod, "Killing", f"Stopping container {container}", first=when,
                    field_path=f"spec.containers{{{container}}}")


def build() -> Story:
    s = Story(
        id=ID, title="Farm box changes not saving for some customers", now=NOW,
        report="""\
Customers say they can't save changes to next week's farm box (swapping veg, skipping a
week) - it spins and then errors, then sometimes works later. Started around 13:20-13:30.
Cut-off for changes is tonight so this is urgent.
""",
        truth=truth(
            "node_failure", "Node", "", "ip-10-88-2-141.eu-west-1.compute.internal",
            ["MemoryPressure", "Evicted", "The node was low on resource: memory"],
            "Node ip-10-88-2-141 has been under MemoryPressure since about 13:19 (memory "
            "taken outside the pods, in the host's system.slice); the kubelet evicts "
            "box-builder and delivery-routes pods there. Cordon and drain the node and "
            "replace it (or find the host process that grows), then check the replacements."),
        hours=3.0)
    c = s.cluster
    onset = NOW - timedelta(minutes=46, seconds=5)
    t0 = onset.timestamp()
    node_list = base(s, [NS, "cms", "billing"], 4, subnet=88, instance="m6i.xlarge",
                     series=False)
    bad = node_list[1]
    bad_name = "ip-10-88-2-141.eu-west-1.compute.internal"
    bad["metadata"]["name"] = bad_name
    bad["metadata"]["labels"]["kubernetes.io/hostname"] = bad_name
    bad["status"]["addresses"] = [{"type": "InternalIP", "address": "10.88.2.141"},
                                  {"type": "Hostname", "address": bad_name}]
    for pod in c.objects_of("Pod"):
        if pod["spec"].get("nodeName", "").startswith("ip-10-88-2-"):
            pod["spec"]["nodeName"] = bad_name
            pod["status"]["hostIP"] = "10.88.2.141"
            pod["status"]["hostIPs"] = [{"ip": "10.88.2.141"}]
    for cond in bad["status"]["conditions"]:
        if cond["type"] == "MemoryPressure":
            cond.update(status="True", reason="KubeletHasInsufficientMemory",
                        message="kubelet has insufficient memory available",
                        lastTransitionTime=iso(onset))
    bad["spec"]["taints"] = [{"effect": "NoSchedule", "key": "node.kubernetes.io/memory-pressure",
                              "timeAdded": iso(onset + timedelta(seconds=1))}]
    c.event(bad, "NodeHasInsufficientMemory", f"Node {bad_name} status is now: "
            "NodeHasInsufficientMemory", first=onset, host=bad_name)
    c.event(bad, "EvictionThresholdMet", "Attempting to reclaim memory",
            first=onset + timedelta(seconds=12), last=NOW - timedelta(minutes=2, seconds=40),
            count=9, type_="Warning", host=bad_name)
    node_conditions(s, node_list, {(bad_name, "MemoryPressure"): lambda t: t >= t0})
    for node in node_list:
        name = node["metadata"]["name"]
        gauge(s, "node_memory_MemTotal_bytes", {"instance": name, "node": name},
              const(16_069_644_288), "Memory information field MemTotal_bytes.")
    for node in node_list:
        name = node["metadata"]["name"]
        if node is bad:
            def avail(t: int) -> float:
                if t < t0 - 5400:
                    return 5.1 * GIB
                if t < t0:
                    return 5.1 * GIB - 4.95 * GIB * (t - t0 + 5400) / 5400
                return (0.09 + 0.35 * ((t - t0) % 900 < 120)) * GIB
        else:
            def avail(t: int, b: float = s.rng.uniform(4.6, 6.2)) -> float:
                return b * GIB - (0.6 * GIB if t >= t0 + 90 else 0.0)
        gauge(s, "node_memory_MemAvailable_bytes", {"instance": name, "node": name}, avail,
              "Memory information field MemAvailable_bytes.", jitter=0.01)
    gauge(s, "container_memory_working_set_bytes", {"id": "/system.slice", "node": bad_name},
          lambda t: (1.4 + 4.9 * min(1.0, max(0.0, (t - t0 + 5400) / 5400))) * GIB,
          "Current working set of the container in bytes", jitter=0.005)

    # ---- box-builder: two pods on the bad node evicted, replaced elsewhere
    ctr = Ctr("box-builder", f"{REG}/box-builder:4.6.1", port=8080,
              requests={"cpu": "250m", "memory": "256Mi"}, limits={"memory": "768Mi"},
              env={"SUBSCRIPTIONS_URL": "http://subscription-api.farmbox.svc",
                   "CACHE_URL": "redis://box-cache.farmbox.svc:6379"},
              readiness=http_probe("/ready", delay=10), liveness=http_probe("/live", delay=20))
    deployed = s.ago(days=5, hours=6)
    work = c.workload("Deployment", NS, "box-builder", Template([ctr],
                      service_account="box-builder"), replicas=4, created=s.ago(days=300))
    rs = c.revision(work, 19, deployed, replicas=4)
    c.service(NS, "box-builder", {"app.kubernetes.io/name": "box-builder"},
              created=s.ago(days=300))
    others = [n for n in node_list if n is not bad]
    old_oom = running(s.ago(days=4, hours=22), restarts=1, last=ended(
        "OOMKilled", 137, deployed + timedelta(seconds=40), s.ago(days=4, hours=22,
                                                                  seconds=11)))
    survivors = [c.pod(work, rs, node=others[0], created=deployed + timedelta(seconds=20),
                       statuses={"box-builder": old_oom}),
                 c.pod(work, rs, node=others[1], created=deployed + timedelta(seconds=50),
                       statuses={"box-builder": running(deployed + timedelta(seconds=61))})]
    evictions = [onset + timedelta(minutes=4, seconds=31), onset + timedelta(minutes=22,
                                                                             seconds=8)]
    victims, fresh = [], []
    for k, when in enumerate(evictions):
        born = deployed + timedelta(seconds=80 + 30 * k)
        pod = c.pod(work, rs, node=bad, created=born,
                    statuses={"box-builder": running(born + timedelta(seconds=11))})
        _evict(s, pod, "box-builder", when, s.rng.randrange(402_000, 471_000), "256Mi")
        victims.append(pod)
        made = when + timedelta(seconds=1)
        new = c.pod(work, rs, node=others[2 - k], created=made,
                    statuses={"box-builder": running(made + timedelta(seconds=12))},
                    ready_since=made + timedelta(seconds=58))
        c.event(rs, "SuccessfulCreate", f"Created pod: {new['metadata']['name']}", first=made,
                component="replicaset-controller", host="")
        c.event(new, "Scheduled", f"Successfully assigned {NS}/{new['metadata']['name']} to "
                f"{new['spec']['nodeName']}", first=made, component="default-scheduler",
                host="")
        field_ = "spec.containers{box-builder}"
        for i, (reason, msg) in enumerate((
                ("Pulling", f'Pulling image "{ctr.image}"'),
                ("Pulled", f'Successfully pulled image "{ctr.image}" in 4.02s (4.02s including '
                 "waiting). Image size: 121877310 bytes."),
                ("Created", "Created container: box-builder"),
                ("Started", "Started container box-builder"))):
            c.event(new, reason, msg, first=made + timedelta(seconds=2 + 3 * i),
                    field_path=field_)
        fresh.append(new)
    deployment_metrics(s, work, available=lambda t: 4.0 - sum(
        1 for w in evictions if w.timestamp() <= t < w.timestamp() + 60))

    def hot(t: int) -> float:  # the evicted pods' memory grows under the pressure's churn
        return 330 + (90 if t >= t0 else 0)

    for pod in survivors + fresh:
        level = s.rng.uniform(300, 360) * MIB
        restarts = pod["status"]["containerStatuses"][0]["restartCount"]
        container_metrics(s, pod, "box-builder", memory=lambda t, b=level: b,
                          cpu=const(0.11), restart_base=restarts, limit_memory=768 * MIB)
        http_metrics(s, "box-builder", pod, rps=const(1.4), codes={
            "200": const(0.99), "503": lambda t: 0.001 if t < t0 else 0.004},
            median=lambda t: 0.12 if t < t0 else 0.19)
    for pod, when in zip(victims, evictions, strict=True):
        pod["metadata"]["_deleted"] = int(when.timestamp()) + 30
        container_metrics(s, pod, "box-builder", memory=lambda t: hot(t) * MIB * 1.2,
                          cpu=const(0.12), limit_memory=768 * MIB)
        http_metrics(s, "box-builder", pod, rps=const(1.4), codes={
            "200": const(0.99), "503": lambda t: 0.001 if t < t0 else 0.02},
            median=lambda t: 0.12 if t < t0 else 0.6)
        del pod["metadata"]["_deleted"]
        s.metrics.gauge("kube_pod_status_reason", {"namespace": NS, "pod": pod["metadata"][
            "name"], "reason": "Evicted"}, [(t, 1.0 if t >= when.timestamp() + 30 else 0.0)
                                            for t in s.times],
            "The pod status reasons")
    chatter(s, survivors + victims, "box-builder", "box-builder", [
        ("info", "box b_30212 saved: swap 'kale' -> 'chard', week 30", {}),
        ("info", "box b_30219 skipped week 30 on request", {}),
        ("warn", "ALERT cache miss rate 34% above 25% for key prefix box:menu:w30", {}),
    ], 200, end=onset)
    chatter(s, survivors + fresh, "box-builder", "box-builder", [
        ("info", "box b_30251 saved: add 'sourdough loaf', week 30", {}),
        ("error", "PUT /v1/boxes/b_30260 503 upstream connection reset during save",
         {"http.response.status_code": 503}),
        ("warn", "ALERT cache miss rate 41% above 25% for key prefix box:menu:w30", {}),
        ("info", "box-builder 4.6.1 warming menu cache (week 30: 212 items)", {}),
    ], 120, start=onset)

    # ---- delivery-routes: one pod evicted from the bad node
    dctr = Ctr("delivery-routes", f"{REG}/delivery-routes:1.12.0", port=8080,
               requests={"cpu": "200m", "memory": "512Mi"}, limits={"memory": "1536Mi"})
    dwork, dpods = simple_deployment(s, NS, "delivery-routes", dctr.image, replicas=2,
                                     node_list=[bad, others[0]], revision=8, ctr=dctr,
                                     rollout=s.ago(days=2, hours=20))
    when = onset + timedelta(minutes=9, seconds=44)
    _evict(s, dpods[0], "delivery-routes", when, 1_204_112, "512Mi")
    made = when + timedelta(seconds=1)
    dnew = c.pod(dwork, dwork.revisions[-1], node=others[1], created=made,
                 statuses={"delivery-routes": running(made + timedelta(seconds=9))})
    c.event(dwork.revisions[-1], "SuccessfulCreate", f"Created pod: {dnew['metadata']['name']}",
            first=made, component="replicaset-controller", host="")
    for pod in (dpods[1], dnew):
        container_metrics(s, pod, "delivery-routes", memory=const(980 * MIB))
    deployment_metrics(s, dwork)

    # ---- subscription-api: rolled out 41 min before the onset, healthy
    def sub(version: str) -> Ctr:
        return Ctr("subscription-api", f"{REG}/subscription-api:{version}", port=8080,
                   requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"},
                   readiness=http_probe("/ready"))
    roll = rollout(s, NS, "subscription-api", sub, old="2.8.4", new="2.9.0",
                   at=onset - timedelta(minutes=41, seconds=20), revision=52, replicas=2,
                   node_list=others)
    for pod in roll.new_pods + roll.old_pods:
        level = s.rng.uniform(180, 210) * MIB
        container_metrics(s, pod, "subscription-api", memory=lambda t, b=level: b)
        http_metrics(s, "subscription-api", pod, rps=const(2.2),
                     codes={"200": const(0.995), "404": const(0.005)}, median=const(0.03))
    chatter(s, roll.new_pods, "subscription-api", "subscription-api", [
        ("info", "subscription-api 2.9.0 started, migrations: none pending", {}),
        ("info", "GET /v1/subscriptions/s_8812 200 14ms", {}),
        ("warn", "deprecated field 'delivery_window' used by client box-builder/4.6.1", {}),
    ], 60, start=onset - timedelta(minutes=41))

    # ---- recipe-cards: NotReady during the CMS maintenance window (harmless)
    rctr = Ctr("recipe-cards", f"{REG}/recipe-cards:0.9.7", port=8080,
               requests={"cpu": "50m", "memory": "96Mi"}, limits={"memory": "192Mi"},
               readiness=http_probe("/ready", delay=5, period=20))
    maint = s.ago(hours=1, minutes=30)
    up = s.ago(days=6)
    _, rpods = simple_deployment(s, NS, "recipe-cards", rctr.image, replicas=1,
                                 node_list=[others[2]], revision=4, rollout=up, ctr=rctr,
                                 restarts={0: not_ready(up + timedelta(seconds=40))})
    probe_events(s, rpods[0], "recipe-cards", "HTTP probe failed with statuscode: 503",
                 since=maint + timedelta(seconds=25), period=20)
    chatter(s, rpods, "recipe-cards", "recipe-cards", [
        ("warn", "CMS cms.acre-and-crate.internal in maintenance until 15:00, serving cached "
         "cards and reporting not ready", {}),
    ], 20, start=maint)
    neighbour(s, "cms", "cms-editor", f"{REG}/cms-editor:12.1.0", others, replicas=1,
              memory_mib=520)
    readiness_blip(s, "billing", "invoice-portal", f"{REG}/invoice-portal:3.3.3", others,
                   minutes_ago=27)
    return s
