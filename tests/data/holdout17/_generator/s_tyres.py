"""Tyre-fitting garage chain: customers cannot book fitting appointments. One EKS worker,
ip-10-31-33-204, was launched two days ago from an old launch template with a 20 GiB root
volume (the others have 80 GiB). Its image cache and container logs filled it; at 38 min
before now the kubelet reported DiskPressure, tainted the node and evicted two fitting-slots
pods and one invoice-pdf pod. Image garbage collection cannot free enough (every image is
in use). The two fitting-slots replacements stay Pending (the tainted node is the only one
with room for their 1200m CPU request), so the four remaining pods carry the load: queueing
and 503s. The node is the root cause. Red herrings: tyre-stock 7.4.0 rolled out 47 min before
the onset in the same namespace, an old OOM restart of wheel-hotel, an "[ALERT]" SMS-provider
retry line in fitting-slots, a readiness blip of the storefront in another namespace."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout2._generator.kit import deleted, requests
from tests.data.holdout3._generator.kit3 import (
    chatter,
    ksm_deployment,
    log_pod,
    namespaces,
    quiet,
    steady,
)
from tests.data.holdout4._generator.kit4 import ramp
from tests.scenario_tools.common import node_conditions, truth
from tests.scenario_tools.kube import Ctr, ended, http_probe, iso, running

from .kit17 import Incident, eks_nodes, fs_series, gauge, line

ID = "tyre-fitting-slots-failing"
NOW = datetime.fromisoformat("2028-03-14T11:52:00+00:00")
NS = "garage"
ECR = "318244017735.dkr.ecr.eu-central-1.amazonaws.com"
GIB = 1024 ** 3
BAD = "ip-10-31-33-204.eu-central-1.compute.internal"
EVICT_MSG = ("The node was low on resource: ephemeral-storage. Threshold quantity: "
             "2146223972, available: 1873412Ki. ")


def build() -> Incident:
    s = Incident(
        id=ID, title="Tyre fitting appointment booking failing", now=NOW,
        report="""\
Lots of customers can't book a tyre fitting slot on the website, the slot picker spins and
then says "please try again later". Maybe since 11:15? Buying tyres without fitting still
works. Stock team shipped something this morning, could be related?
""",
        truth=truth(
            "node_failure", "Node", "", BAD,
            ["DiskPressure", "ephemeral-storage", "Evicted", "FreeDiskSpaceFailed",
             "node.kubernetes.io/disk-pressure"],
            f"Node {BAD} has only a 20 GiB root volume (launched from an old launch template) "
            "and ran out of disk: the kubelet reports DiskPressure, cannot free space by image "
            "garbage collection, tainted the node and evicted two fitting-slots pods; their "
            "replacements cannot be scheduled elsewhere. Cordon and drain the node and replace "
            "it with one from the current 80 GiB launch template (or grow its volume), then "
            "the pending fitting-slots pods schedule again."))
    s.hours = 2.0
    c = s.cluster
    namespaces(s, {"default": 480, "kube-system": 480, NS: 455, "storefront": 455})
    nodes = eks_nodes(s, 3, region="eu-central-1", subnet=31, pool="workers-m6a",
                      instance="m6a.xlarge", kubelet="v1.32.9-eks-113cf36",
                      kernel="6.1.147-172.266.amzn2023.x86_64",
                      os_image="Amazon Linux 2023.8.20250915", cpu="4", memory="16106116Ki",
                      alloc_cpu="3920m", alloc_memory="15083140Ki", days=6.4)
    bad = c.node(BAD, created=s.ago(days=2, hours=3, minutes=11), zone="eu-central-1b",
                 pool="workers-m6a", instance="m6a.xlarge", memory="16106116Ki",
                 allocatable_memory="15083140Ki")
    onset = NOW - timedelta(minutes=38, seconds=14)
    bad["status"]["capacity"]["ephemeral-storage"] = "20959212Ki"
    bad["status"]["allocatable"]["ephemeral-storage"] = "19316009748"
    for cond in bad["status"]["conditions"]:
        if cond["type"] == "DiskPressure":
            cond.update({"status": "True", "reason": "KubeletHasDiskPressure",
                         "message": "kubelet has disk pressure",
                         "lastTransitionTime": iso(onset)})
    bad["spec"]["taints"] = [{"effect": "NoSchedule", "key": "node.kubernetes.io/disk-pressure",
                              "timeAdded": iso(onset + timedelta(seconds=1))}]
    for n in nodes:
        n["status"]["capacity"]["ephemeral-storage"] = "83873772Ki"
    everyone = [*nodes, bad]
    bad_name = BAD
    c.event(bad, "NodeHasDiskPressure", f"Node {bad_name} status is now: NodeHasDiskPressure",
            first=onset, host=bad_name)
    gc_runs = int((NOW - onset).total_seconds() // 300)
    c.event(bad, "FreeDiskSpaceFailed", "Failed to garbage collect required amount of images. "
            "Attempted to free 4319771238 bytes, but only found 0 bytes eligible to free.",
            first=onset - timedelta(minutes=4, seconds=40), last=NOW - timedelta(seconds=71),
            count=gc_runs + 1, type_="Warning", host=bad_name)
    c.event(bad, "EvictionThresholdMet", "Attempting to reclaim ephemeral-storage",
            first=onset + timedelta(seconds=2), last=NOW - timedelta(seconds=23),
            count=int((NOW - onset).total_seconds() // 10) - 3, type_="Warning",
            host=bad_name)

    # ---- fitting-slots: 6 replicas, 2 evicted from the bad node, 2 replacements pending
    image = f"{ECR}/garage/fitting-slots:3.18.2"
    ctr = Ctr("fitting-slots", image, port=8080,
              requests={"cpu": "1200m", "memory": "768Mi"}, limits={"memory": "1Gi"},
              env={"STOCK_URL": "http://tyre-stock.garage.svc", "SLOT_HORIZON_DAYS": "21",
                   "SMS_PROVIDER": "messagebird"},
              readiness=http_probe("/ready", delay=8), liveness=http_probe("/live", delay=20,
                                                                           period=15))
    rollout = s.ago(days=6, hours=2, minutes=40)
    work, pods = steady(s, NS, "fitting-slots", [ctr], nodes=nodes, replicas=4, revision=42,
                        rollout=rollout, service=80,
                        old=(41, s.ago(days=13), [Ctr("fitting-slots",
                                                      f"{ECR}/garage/fitting-slots:3.18.1")]))
    rs = work.revisions[-1]
    work.replicas = 6
    work.obj["spec"]["replicas"] = 6
    rs["spec"]["replicas"] = 6
    rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] = "6"
    rs["metadata"]["annotations"]["deployment.kubernetes.io/max-replicas"] = "8"
    evicted, pending = [], []
    for k in range(2):
        born = rollout + timedelta(seconds=90 + 21 * k)
        if k == 0:
            born = s.ago(days=2, hours=2, minutes=50)  # moved there when the node joined
        started = born + timedelta(seconds=9)
        when = onset + timedelta(seconds=14 + 9 * k)
        pod = c.pod(work, rs, node=bad, created=born, phase="Failed", reason="Evicted",
                    message=EVICT_MSG + f"Container fitting-slots was using {212 + 37 * k}Ki, "
                    "request is 0, has larger consumption of ephemeral-storage. ",
                    statuses={"fitting-slots": {
                        "state": ended("ContainerStatusUnknown", 137, started,
                                       when + timedelta(seconds=30),
                                       "The container could not be located when the pod "
                                       "was terminated"),
                        "ready": False, "started": False, "restartCount": 0,
                        "lastState": {}}})
        pod["status"]["conditions"].insert(0, {
            "type": "DisruptionTarget", "status": "True", "reason": "TerminationByKubelet",
            "message": EVICT_MSG.strip(), "lastProbeTime": None,
            "lastTransitionTime": iso(when)})
        evicted.append((pod, when))
        c.event(pod, "Evicted", EVICT_MSG.strip(), first=when, type_="Warning")
        c.event(pod, "Killing", "Stopping container fitting-slots", first=when +
                timedelta(seconds=1), field_path="spec.containers{fitting-slots}")
        gauge(s, "kube_pod_status_reason", {"namespace": NS, "pod": pod["metadata"]["name"],
                                            "reason": "Evicted"},
              lambda t, w=when: 1.0 if t >= w.timestamp() + 30 else 0.0,
              "The pod status reasons", times=[t for t in s.times if t >= born.timestamp()])
        rep = c.pod(work, rs, node=None, created=when + timedelta(seconds=1), statuses={},
                    scheduled_message="0/4 nodes are available: 1 node(s) had untolerated "
                    "taint {node.kubernetes.io/disk-pressure: }, 3 Insufficient cpu. "
                    "preemption: 0/4 nodes are available: 1 Preemption is not helpful for "
                    "scheduling, 3 No preemption victims found for incoming pod.")
        pending.append(rep)
        c.event(rs, "SuccessfulCreate", f"Created pod: {rep['metadata']['name']}",
                first=when + timedelta(seconds=1), component="replicaset-controller", host="")
        c.event(rep, "FailedScheduling", rep["status"]["conditions"][0]["message"],
                first=when + timedelta(seconds=2), last=NOW - timedelta(seconds=40 + 13 * k),
                count=9 + k, type_="Warning", component="default-scheduler", host="")
    work.availability_changed = evicted[0][1]
    ksm_deployment(s, NS, "fitting-slots", lambda t: 6.0,
                   lambda t: 6.0 if t < evicted[0][1].timestamp() else
                   (5.0 if t < evicted[1][1].timestamp() else 4.0),
                   lambda t: 0.0 if t < evicted[0][1].timestamp() else
                   (1.0 if t < evicted[1][1].timestamp() else 2.0))

    def load(t: int) -> float:
        return 1.0 + 0.5 * ramp(t, evicted[0][1], 2)

    for pod in pods:
        quiet(s, [pod], "fitting-slots", 540)
        requests(s, pod, "fitting-slots", rps=lambda t: 3.1 * load(t), codes={
            "200": lambda t: 0.994 - 0.16 * (load(t) - 1) * 2,
            "503": lambda t: 0.001 + 0.16 * (load(t) - 1) * 2,
            "404": lambda t: 0.005},
            median=lambda t: 0.12 + 1.1 * (load(t) - 1) * 2, buckets=(0.1, 0.25, 0.5, 1.0,
                                                                     2.5, 5.0))
    for pod, when in evicted:
        ghost = deleted(s, NS, pod["metadata"]["name"], BAD, datetime.fromisoformat(
            pod["metadata"]["creationTimestamp"].replace("Z", "+00:00")), when)
        requests(s, ghost, "fitting-slots", rps=lambda t: 3.1,
                 codes={"200": lambda t: 0.994, "503": lambda t: 0.001,
                        "404": lambda t: 0.005})
        log_pod(s, ghost, "fitting-slots", "fitting-slots", [
            ("info", "slot search garage=G-0212 date=2028-03-18 axle=4 -> 11 free slots "
             "in 96ms", {}),
            ("info", "booking BK-55120931 held for 600s at garage G-0419", {}),
        ], 30)
    ok = [
        ("info", "slot search garage=G-0212 date=2028-03-18 axle=4 -> 11 free slots in 96ms",
         {}),
        ("info", "booking BK-55121407 confirmed at garage G-0108 (winter->summer swap)", {}),
        ("info", "slot search garage=G-0733 date=2028-03-15 axle=4 -> 3 free slots in 131ms",
         {}),
    ]
    chatter(s, pods, "fitting-slots", "fitting-slots", ok, 120, end=evicted[0][1])
    chatter(s, pods, "fitting-slots", "fitting-slots", [
        *ok,
        ("warn", "request queue depth 57/64, shedding load soon", {}),
        ("error", "GET /v2/slots 503: worker queue full (64/64), rejected after 2000ms",
         {"http.response.status_code": 503}),
        ("warn", "slot search garage=G-0419 took 3.82s (budget 1.5s)", {}),
    ], 170, start=evicted[0][1] + timedelta(seconds=40))
    for k, pod in enumerate(pods):
        for j in range(3):
            line(s, pod, "fitting-slots", "fitting-slots",
                 s.ago(minutes=100 - 31 * j - 7 * k, seconds=13 * k), "warn",
                 "[ALERT] reminder SMS provider answered 429 Too Many Requests, retry in 30s "
                 f"(batch {8812 + 17 * j + k})")

    # ---- invoice-pdf: one pod evicted too, its replacement found room
    inv = Ctr("invoice-pdf", f"{ECR}/garage/invoice-pdf:2.6.0", port=8080,
              requests={"cpu": "250m", "memory": "384Mi"}, limits={"memory": "512Mi"},
              readiness=http_probe("/healthz"))
    iwork, ipods = steady(s, NS, "invoice-pdf", [inv], nodes=nodes, replicas=2, revision=17,
                          rollout=s.ago(days=4, hours=7), service=80, offset=1)
    irs = iwork.revisions[-1]
    iwhen = onset + timedelta(seconds=41)
    ip = c.pod(iwork, irs, node=bad, created=s.ago(days=2, hours=2, minutes=46),
               phase="Failed", reason="Evicted", message=EVICT_MSG + "Container invoice-pdf "
               "was using 18204Ki, request is 0, has larger consumption of ephemeral-storage. ",
               statuses={"invoice-pdf": {
                   "state": ended("ContainerStatusUnknown", 137, s.ago(days=2, hours=2,
                                                                        minutes=45),
                                  iwhen + timedelta(seconds=30), "The container could not be "
                                  "located when the pod was terminated"),
                   "ready": False, "started": False, "restartCount": 0, "lastState": {}}})
    c.event(ip, "Evicted", EVICT_MSG.strip(), first=iwhen, type_="Warning")
    c.event(ip, "Killing", "Stopping container invoice-pdf", first=iwhen +
            timedelta(seconds=1), field_path="spec.containers{invoice-pdf}")
    newp = c.pod(iwork, irs, node=nodes[2], created=iwhen + timedelta(seconds=1),
                 statuses={"invoice-pdf": running(iwhen + timedelta(seconds=9))})
    c.event(irs, "SuccessfulCreate", f"Created pod: {newp['metadata']['name']}",
            first=iwhen + timedelta(seconds=1), component="replicaset-controller", host="")
    c.event(newp, "Scheduled", f"Successfully assigned {NS}/{newp['metadata']['name']} to "
            f"{nodes[2]['metadata']['name']}", first=iwhen + timedelta(seconds=1),
            component="default-scheduler", host="")
    iwork.replicas = 3
    iwork.obj["spec"]["replicas"] = 3
    irs["spec"]["replicas"] = 3
    irs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] = "3"
    irs["metadata"]["annotations"]["deployment.kubernetes.io/max-replicas"] = "4"
    quiet(s, [*ipods, newp], "invoice-pdf", 290)
    chatter(s, [*ipods, newp], "invoice-pdf", "invoice-pdf", [
        ("info", "rendered invoice INV-2028-0311842 (2 pages) in 412ms", {}),
        ("warn", "font 'Garamond-Bold' missing, falling back to DejaVuSerif-Bold", {}),
    ], 40)

    # ---- red herrings
    roll = onset - timedelta(minutes=47)
    stock = Ctr("tyre-stock", f"{ECR}/garage/tyre-stock:7.4.0", port=8080,
                requests={"cpu": "500m", "memory": "512Mi"}, limits={"memory": "768Mi"},
                readiness=http_probe("/ready"))
    _, stocks = steady(s, NS, "tyre-stock", [stock], nodes=nodes, replicas=2, revision=88,
                       rollout=roll, service=80, offset=2,
                       old=(87, s.ago(days=9), [Ctr("tyre-stock",
                                                    f"{ECR}/garage/tyre-stock:7.3.2")]))
    quiet(s, stocks, "tyre-stock", 410)
    for pod in stocks:
        requests(s, pod, "tyre-stock", rps=lambda t: 5.2, codes={
            "200": lambda t: 0.997, "404": lambda t: 0.003})
    chatter(s, stocks, "tyre-stock", "tyre-stock", [
        ("info", "tyre-stock 7.4.0 started: EAN index 184 212 items, 64 warehouses", {}),
        ("info", "stock sync from supplier feed delta 2028-03-14T10 applied (1 204 rows)", {}),
        ("warn", "supplier feed contains 12 EANs without load index, skipped", {}),
    ], 50)
    hotel = Ctr("wheel-hotel", f"{ECR}/garage/wheel-hotel:1.9.4", port=8080,
                requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "384Mi"})
    _, hotels = steady(s, NS, "wheel-hotel", [hotel], nodes=nodes, replicas=2, revision=23,
                       rollout=s.ago(days=5, hours=1), service=80,
                       restarted={1: (s.ago(days=2, hours=20), "OOMKilled", 137)})
    quiet(s, hotels, "wheel-hotel", 250)
    chatter(s, hotels, "wheel-hotel", "wheel-hotel", [
        ("info", "stored set WH-99120 (4x 205/55 R16) at rack B-14", {}),
        ("warn", "rack C-02 scanner offline, falling back to manual entry", {}),
    ], 30)
    web = Ctr("storefront", f"{ECR}/web/storefront:12.40.1", port=3000,
              requests={"cpu": "300m", "memory": "512Mi"}, limits={"memory": "768Mi"},
              readiness=http_probe("/api/health", delay=10))
    _, webs = steady(s, "storefront", "storefront", [web], nodes=nodes, replicas=2,
                     revision=310, rollout=s.ago(days=1, hours=5), service=80)
    quiet(s, webs, "storefront", 470)
    wip = webs[0]["status"]["podIP"]
    first = s.ago(minutes=51)
    c.event(webs[0], "Unhealthy", f'Readiness probe failed: Get "http://{wip}:3000/api/health"'
            ": context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            first=first, last=first + timedelta(seconds=20), count=2, type_="Warning",
            field_path="spec.containers{storefront}")

    # ---- node telemetry
    node_conditions(s, everyone, {(bad_name, "DiskPressure"):
                                  lambda t: t >= onset.timestamp()})
    size = {n["metadata"]["name"]: 85886742528.0 for n in nodes}
    size[bad_name] = 21462233088.0
    free = {n["metadata"]["name"]: s.rng.uniform(48, 61) * GIB for n in nodes}

    def avail(n: dict, t: int) -> float:
        name = n["metadata"]["name"]
        if name != bad_name:
            return free[name] - (t - s.times[0]) * 900
        start = 3.9 * GIB
        before = start - (t - s.times[0]) / (onset.timestamp() - s.times[0]) * 2.05 * GIB
        return max(before, 1.72 * GIB + 0.08 * GIB * ((t // 60) % 3))
    fs_series(s, everyone, lambda n: size[n["metadata"]["name"]], avail)
    return s
