"""Supermarket self-checkout: tills freeze mid-basket now and then. Node
ip-10-63-2-117.eu-north-1.compute.internal is an old node of the pool with a 20 GiB root
volume; its image store is full and the kubelet's image garbage collection finds nothing to
free, so the node flaps into DiskPressure since 10:22 and the kubelet evicts pods
(ephemeral-storage). Each eviction of a till-gateway pod drops the baskets it holds: two
waves so far, the third took a printer bridge; the node is under pressure again now.
Red herrings: loyalty-points 5.0.0 rolled out 50 minutes before the onset in
the same namespace, till-gateway's own "printer paper low" ERROR lines, an old OOM restart of
shelf-labels, and a slow-but-normal price-feed dependency warning."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.scenario_tools.common import (
    Story,
    const,
    http_metrics,
    kube_system,
    namespaces,
    node_conditions,
    nodes,
    simple_deployment,
    truth,
)
from tests.scenario_tools.kube import Ctr, Template, ended, http_probe, iso, running
from tests.scenario_tools.parts import neighbour, rollout
from tests.scenario_tools.telemetry import spread

from .kit19 import lines

ID = "self-checkout-tills-freezing"
NOW = datetime.fromisoformat("2027-10-09T09:12:00+00:00")
REG = "nexus.fjordmart.internal:5000/stores"
NS = "stores"
BAD = "ip-10-63-2-117.eu-north-1.compute.internal"
GC = ("Failed to garbage collect required amount of images. Attempted to free 5368709120 "
      "bytes, but only found 0 bytes eligible to free.")


def evicted_message(ctr: str, used: str) -> str:
    return (f"The node was low on resource: ephemeral-storage. Threshold quantity: 2147483648, "
            f"available: 1824112Ki. Container {ctr} was using {used}, request is 0, has larger "
            "consumption of ephemeral-storage. ")


def build() -> Story:
    s = Story(
        id=ID, title="Self-checkout tills freezing mid-basket", now=NOW,
        report="""\
Stores in the Stockholm region report self-checkout tills freezing in the middle of a
basket since ~10:20 local, customers have to call staff and start over. Card terminals
themselves are fine and the staffed tills work. Not all the time, comes in waves. Loyalty
team released something this morning, could be related?
""",
        truth=truth(
            "node_failure", "Node", "", BAD,
            ["DiskPressure", "ephemeral-storage", "Evicted", "eligible to free",
             "NodeHasDiskPressure"],
            f"Node {BAD} (an old node with a 20 GiB root volume) runs out of disk: image "
            "garbage collection cannot free anything, so it flaps into DiskPressure and the "
            "kubelet evicts pods, among them till-gateway pods, which drops the baskets they "
            "hold. Cordon and drain the node and replace it with one of the pool's 80 GiB "
            "nodes (or grow its root volume)."))
    c = s.cluster
    namespaces(s, NS, "store-devices", "monitoring")
    good = nodes(s, 3, subnet=63, region="eu-north-1", instance="m6i.2xlarge", days=2.4)
    old_born = s.ago(days=6, hours=20)
    onset = NOW - timedelta(minutes=50)
    flips = [onset, onset + timedelta(minutes=14), onset + timedelta(minutes=21),
             onset + timedelta(minutes=38), NOW - timedelta(minutes=6)]
    # pressure on [flips[0], flips[1]), [flips[2], flips[3]) and since flips[4]
    bad = c.node(BAD, created=old_born, zone="eu-north-1b", instance="m6i.2xlarge",
                 conditions={"DiskPressure": ("True", "KubeletHasDiskPressure",
                                              "kubelet has disk pressure", flips[4])},
                 taints=[{"key": "node.kubernetes.io/disk-pressure", "effect": "NoSchedule",
                          "timeAdded": iso(flips[4] + timedelta(seconds=1))}])
    bad["status"]["capacity"]["ephemeral-storage"] = "20959212Ki"
    bad["status"]["allocatable"]["ephemeral-storage"] = "18242267924"
    for n in good:
        n["status"]["capacity"]["ephemeral-storage"] = "83873772Ki"
    pool = [*good, bad]
    kube_system(s, pool)

    def pressure(t: int) -> bool:
        on = [f.timestamp() for f in flips]
        return on[0] <= t < on[1] or on[2] <= t < on[3] or t >= on[4]

    node_conditions(s, pool, {(BAD, "DiskPressure"): pressure})
    for n in pool:
        name = n["metadata"]["name"]
        size = 21_461_999_616 if name == BAD else 85_886_742_528

        def avail(t: int, nm: str = name, sz: int = size) -> float:
            if nm != BAD:
                return sz * 0.71
            return 1.71e9 if pressure(t) else (2.6e9 if t >= onset.timestamp() else
                                               max(2.9e9, 4.9e9 - (t - s.times[0]) * 1.6e5))
        s.metrics.gauge("node_filesystem_avail_bytes",
                        {"instance": name, "mountpoint": "/", "device": "/dev/nvme0n1p1",
                         "fstype": "xfs"},
                        [(t, round(avail(t) * s.rng.uniform(0.995, 1.005))) for t in s.times],
                        "Filesystem space available to non-root users in bytes.")
        s.metrics.gauge("node_filesystem_size_bytes",
                        {"instance": name, "mountpoint": "/", "device": "/dev/nvme0n1p1",
                         "fstype": "xfs"}, [(t, size) for t in s.times],
                        "Filesystem size in bytes.")
    c.event(bad, "NodeHasDiskPressure", f"Node {BAD} status is now: NodeHasDiskPressure",
            first=flips[0], last=flips[4], count=3, type_="Normal", host=BAD)
    c.event(bad, "NodeHasNoDiskPressure", f"Node {BAD} status is now: NodeHasNoDiskPressure",
            first=flips[1], last=flips[3], count=2, host=BAD)
    c.event(bad, "EvictionThresholdMet", "Attempting to reclaim ephemeral-storage",
            first=flips[0] + timedelta(seconds=9), last=NOW - timedelta(minutes=2),
            count=9, type_="Warning", host=BAD)
    c.event(bad, "FreeDiskSpaceFailed", GC, first=flips[0] - timedelta(minutes=4),
            last=NOW - timedelta(minutes=1, seconds=20), count=11, type_="Warning", host=BAD)
    c.event(bad, "ImageGCFailed", GC, first=flips[0] - timedelta(minutes=4),
            last=NOW - timedelta(minutes=1, seconds=20), count=11, type_="Warning", host=BAD)

    # ---- till-gateway: two pods on healthy nodes, the rest keeps landing on the bad node
    ctr = Ctr("till-gateway", f"{REG}/till-gateway:8.2.5", port=8443, port_name="http",
              requests={"cpu": "300m", "memory": "384Mi"}, limits={"memory": "512Mi"},
              env={"PRICE_FEED_URL": "http://price-feed.stores.svc.cluster.local",
                   "SESSION_STORE": "memory"},
              readiness=http_probe("/ready"), liveness=http_probe("/live", delay=20, period=20))
    tpl = Template([ctr], service_account="till-gateway",
                   labels={"fjordmart.se/team": "checkout-systems"})
    work, pods = simple_deployment(s, NS, "till-gateway", "", replicas=4,
                                   node_list=[good[0], good[1], good[2], good[0]],
                                   revision=33, template=tpl,
                                   rollout=s.ago(days=4, hours=3))
    rs = work.revisions[-1]
    for gone in pods[2:]:
        c.remove(gone)
        work.pods.remove(gone)
    keep = pods[:2]

    def evicted(created: datetime, at: datetime, used: str) -> dict:
        started = created + timedelta(seconds=9)
        return {"till-gateway": {"state": ended("Error", 137, started, at + timedelta(
            seconds=30)), "ready": False, "started": False, "restartCount": 0,
            "lastState": {}}}

    roll_at = s.ago(days=4, hours=3)
    lives = [(roll_at + timedelta(seconds=71), flips[0] + timedelta(minutes=2), "1684Ki",
              good[2]),
             (roll_at + timedelta(seconds=96), flips[2] + timedelta(minutes=1, seconds=40),
              "1544Ki", good[0])]
    victims = []
    repl = []
    for created, at, used, home in lives:
        pod = c.pod(work, rs, node=bad, created=created, statuses=evicted(created, at, used),
                    phase="Failed", reason="Evicted",
                    message=evicted_message("till-gateway", used))
        victims.append((pod, at))
        when = at + timedelta(seconds=2)
        new = c.pod(work, rs, node=home, created=when,
                    statuses={"till-gateway": running(when + timedelta(seconds=8))})
        repl.append(new)
        if at < NOW - timedelta(hours=1):
            continue
        c.event(pod, "Evicted", evicted_message("till-gateway", used), first=at,
                type_="Warning", host=BAD)
        c.event(pod, "Killing", "Stopping container till-gateway", first=at + timedelta(
            seconds=1), host=BAD, field_path="spec.containers{till-gateway}")
        c.event(rs, "SuccessfulCreate", f"Created pod: {new['metadata']['name']}",
                first=when, component="replicaset-controller", host="")
        c.event(new, "Scheduled", f"Successfully assigned {NS}/{new['metadata']['name']} to "
                f"{home['metadata']['name']}", first=when, component="default-scheduler",
                host="")
    live = keep + repl
    for pod in live:
        http_metrics(s, "till-gateway", pod, rps=const(6.5),
                     codes={"200": const(0.996), "409": const(0.004)},
                     median=const(0.045))
    for pod, at in victims:
        s.metrics.gauge("kube_pod_status_reason",
                        {"namespace": NS, "pod": pod["metadata"]["name"], "reason": "Evicted"},
                        [(t, 1.0) for t in s.times if t >= at.timestamp() + 30],
                        "The pod status reasons")
    drops = []
    for pod, at in victims:
        for when in spread(s.rng, at - timedelta(seconds=40), at + timedelta(seconds=25), 6):
            till = f"TILL-{s.rng.choice(['SOL', 'KUN', 'TAB', 'NAC'])}-{s.rng.randrange(1, 19):02d}"
            drops.append(when)
            s.logs.add(when, "warn", f"basket session {till}/{s.cluster.token(8)} lost: "
                       "upstream connection reset by peer (gateway pod going away)",
                       namespace="store-devices", pod="till-edge-proxy-6d9f8b7c5-q2lwx",
                       container="envoy", service="till-edge-proxy",
                       node=good[1]["metadata"]["name"], http__response__status_code=502)
        s.logs.add(at + timedelta(seconds=1), "info", "received SIGTERM, draining 14 open "
                   "basket sessions (grace 30s)", namespace=NS, pod=pod["metadata"]["name"],
                   container="till-gateway", service="till-gateway", node=BAD)
    lines(s, live, "till-gateway", "till-gateway", [
        ("info", "basket TILL-SOL-07/8841 closed, 23 items, paid by card", {}),
        ("info", "basket TILL-KUN-12/5512 closed, 4 items, paid by swish", {}),
        ("error", "ALERT device PRN-TILL-TAB-03 receipt printer paper low", {}),
        ("warn", "price-feed lookup for EAN 7310865004703 took 820ms (slow, served)", {}),
    ], 150)

    # ---- the third wave: a BestEffort bridge of the store devices, evicted first
    bridge_ctr = Ctr("label-printer-bridge", f"{REG}/label-printer-bridge:0.7.4", port=9100,
                     port_name="http", requests={}, limits={})
    bw, bpods = simple_deployment(s, "store-devices", "label-printer-bridge", "", replicas=1,
                                  node_list=[bad], revision=9,
                                  template=Template([bridge_ctr],
                                                    service_account="label-printer-bridge"),
                                  rollout=s.ago(days=5, hours=1), service=False)
    brs = bw.revisions[-1]
    c.remove(bpods[0])
    bw.pods.remove(bpods[0])
    b_created = s.ago(days=5, hours=1) + timedelta(seconds=40)
    b_at = flips[4] + timedelta(seconds=48)
    bmsg = evicted_message("label-printer-bridge", "96Mi")
    gone = c.pod(bw, brs, node=bad, created=b_created, phase="Failed", reason="Evicted",
                 message=bmsg, statuses={"label-printer-bridge": {
                     "state": ended("Error", 137, b_created + timedelta(seconds=9),
                                    b_at + timedelta(seconds=30)),
                     "ready": False, "started": False, "restartCount": 0, "lastState": {}}})
    c.event(gone, "Evicted", bmsg, first=b_at, type_="Warning", host=BAD)
    b_when = b_at + timedelta(seconds=2)
    back = c.pod(bw, brs, node=good[1], created=b_when,
                 statuses={"label-printer-bridge": running(b_when + timedelta(seconds=6))})
    c.event(brs, "SuccessfulCreate", f"Created pod: {back['metadata']['name']}", first=b_when,
            component="replicaset-controller", host="")
    lines(s, [back], "label-printer-bridge", "label-printer-bridge", [
        ("info", "spooled shelf label batch 0142-A (88 labels)", {}),
    ], 5, start=b_when + timedelta(seconds=10))

    # ---- red herring: loyalty-points rolled out 50 minutes before the onset
    def loyalty(version: str) -> Ctr:
        return Ctr("loyalty-points", f"{REG}/loyalty-points:{version}", port=8080,
                   requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"},
                   readiness=http_probe("/ready"),
                   liveness=http_probe("/healthz", delay=15, period=20))
    roll = rollout(s, NS, "loyalty-points", loyalty, old="4.9.3", new="5.0.0",
                   at=onset - timedelta(minutes=50), revision=61, replicas=2, node_list=good)
    lines(s, roll.new_pods, "loyalty-points", "loyalty-points", [
        ("info", "loyalty-points 5.0.0 started (double points weekend campaign)", {}),
        ("warn", "member M-0047712 not found for card token, treating as guest", {}),
        ("info", "awarded 48 points to M-0019921 for basket TILL-SOL-07/8841", {}),
    ], 70, start=onset - timedelta(minutes=49))

    # ---- red herrings: price-feed with a few slow lookups, an old OOM of shelf-labels
    neighbour(s, NS, "price-feed", f"{REG}/price-feed:3.3.0", good, replicas=2,
              memory_mib=610, rps=14.0, codes={"200": 0.999, "504": 0.001},
              logs=[("info", "price list 2027-10-09 v3 active (48211 EAN)", {}),
                    ("warn", "lookup timed out after 800ms against pricing-db replica 2, "
                     "served from cache", {"error.type": "Timeout"})], n_logs=40)
    oom_at = s.ago(days=4, hours=6)
    neighbour(s, NS, "shelf-labels", f"{REG}/shelf-labels:1.12.0", good, replicas=1,
              memory_mib=700, restarts={0: running(oom_at + timedelta(seconds=12), restarts=1,
                                                   last=ended("OOMKilled", 137, oom_at
                                                              - timedelta(hours=30), oom_at))},
              logs=[("info", "pushed 311 e-ink label updates to store 0142", {})], n_logs=12)
    return s
