"""Auctions: bids on some lots fail during the evening auction. bid-journal is a 3-member
StatefulSet that appends every bid to segment files on its own 40Gi volume, lots hashed to a
member. The hot lots of tonight's classic-car auction live on member 2, whose volume filled
up at 21:52: appends fail with ENOSPC and the journal answers 507, so bid-api cannot record
bids for those lots. Nothing restarts; the other two members are fine."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime, timedelta

from tests.data.holdout._generator.base import (
    PCtr,
    add_endpoints,
    add_service,
    daemonset,
    gauge,
    logs_for,
    set_times,
)
from tests.scenario_tools.common import MIB, truth
from tests.scenario_tools.kube import Ctr, Obj, Template, ended, http_probe, iso, running

from .kit import (
    Incident,
    NodeKind,
    app_counter,
    deploy,
    node,
    plain,
    requests,
    restarts_series,
    statefulset,
    storage_class,
)

ID = "auction-bids-failing"
NOW = datetime.fromisoformat("2027-03-05T22:18:00+00:00")
NS = "auctions"
REG = "ghcr.io/hammerfall-auctions"
GIB = 1024 * MIB
CAPACITY = 41_972_088_832.0  # a 40Gi volume formatted ext4
RESERVED = 0.05 * CAPACITY


def build() -> Incident:
    s = Incident(
        id=ID,
        title="Bids failing on part of the lots in the evening auction",
        now=NOW,
        report="""\
Since ~21:53 a lot of bids fail in tonight's Classic Cars auction: bidders get "your bid
could not be placed, please retry". Not all lots, some work fine. The auction closes at
23:00 and we may have to extend it. bid-api pods are all up, no restarts. Can you find out
what's failing?
""",
        truth=truth(
            "resource_exhaustion", "StatefulSet", NS, "bid-journal",
            ["no space left on device", "journal-bid-journal-2",
             "kubelet_volume_stats_available_bytes", "507 Insufficient Storage"],
            "The 40Gi volume journal-bid-journal-2 of bid-journal-2 is full (tonight's hot lots "
            "are on that member): expand the claim (the StorageClass allows volume expansion, "
            "e.g. to 100Gi) or free space by archiving old segments, then check that the "
            "member accepts appends again; alert on kubelet_volume_stats_available_bytes."))
    set_times(s, 2.5, 60)
    c = s.cluster
    for ns, days in (("default", 620), ("kube-system", 620), (NS, 588), ("members", 540)):
        c.namespace(ns, s.ago(days=days))
    kind = NodeKind("g6-dedicated-8", "8", "16365460Ki", "8", "16263060Ki", "v1.31.5",
                    "6.1.0-31-cloud-amd64", "Debian GNU/Linux 12 (bookworm)",
                    runtime="containerd://1.7.25", storage="322222332Ki",
                    alloc_storage="296962606510")
    nodes: list[Obj] = []
    for i in range(4):
        name = f"lke231784-331902-{c.hexid('lke', str(i), length=8)}0000"
        nodes.append(node(s, name, ip=f"192.168.148.{37 + 11 * i}", kind=kind,
                          created=s.ago(days=6.6 - i * 0.25), region="eu-central", zone="",
                          labels={"lke.linode.com/pool-id": "331902"},
                          provider_id=f"linode://{67_400_000 + s.rng.randrange(1000, 99_999)}",
                          pod_cidr=f"10.2.{i}.0/24"))
    storage_class(s, "linode-block-storage-retain", "linodebs.csi.linode.com", {},
                  created=s.ago(days=620), mode="Immediate", default=True, reclaim="Retain")
    storage_class(s, "linode-block-storage", "linodebs.csi.linode.com", {},
                  created=s.ago(days=620), mode="Immediate")
    full_at = NOW - timedelta(minutes=25, seconds=20)  # 21:52:40
    auction = NOW.replace(hour=20, minute=30, second=0)

    # ---- bid-journal
    labels = {"app.kubernetes.io/name": "bid-journal", "app.kubernetes.io/part-of": "auctions"}
    jr = PCtr("bid-journal", f"{REG}/bid-journal:0.18.2", port=None,
              requests={"cpu": "1", "memory": "2Gi"}, limits={"memory": "2Gi"},
              env={"JOURNAL_DIR": "/var/lib/bid-journal", "SEGMENT_SIZE": "256MiB",
                   "MEMBERS": "3", "RUST_LOG": "info,bid_journal::compaction=debug",
                   "COMPACTION_MIN_AGE": "72h"},
              readiness=http_probe("/health", "http", delay=5, period=10),
              liveness=http_probe("/health", "http", delay=20, period=20),
              mounts=[{"mountPath": "/var/lib/bid-journal", "name": "journal"}],
              ports=[("http", 7070, "TCP"), ("metrics", 9464, "TCP")])
    tpl = Template([jr], service_account="bid-journal")
    born = [s.ago(days=4, hours=7, minutes=21 - 2 * i) for i in range(3)]
    crash = s.ago(days=3, hours=17, minutes=4)

    def states(i: int, started: datetime) -> dict[str, Obj]:
        return {"bid-journal": running(crash, restarts=1, last=ended(
            "Error", 101, started, crash - timedelta(seconds=3)))} if i == 0 else {}
    sts, jpods = statefulset(
        s, NS, "bid-journal", tpl, replicas=3, nodes=nodes[1:],
        revisions=[(6, s.ago(days=4, hours=7, minutes=30), tpl)], pod_revision=lambda i: 6,
        born=lambda i: born[i], statuses=states,
        claim=("journal", "40Gi", "linode-block-storage-retain"), labels=labels,
        created=s.ago(days=588))
    sts.obj["metadata"]["generation"] = 6
    svc = add_service(s, NS, "bid-journal", dict(sts.obj["spec"]["selector"]["matchLabels"]),
                      [{"name": "http", "port": 7070, "protocol": "TCP", "targetPort": "http"}],
                      created=s.ago(days=588), labels=labels, headless=True)
    add_endpoints(s, svc, jpods, [{"name": "http", "port": 7070, "protocol": "TCP"}])

    # volume use: members 0 and 1 grow slowly; member 2 takes the hot lots and fills up
    def hours(t: int) -> float:
        return (t - s.times[0]) / 3600
    edge = auction.timestamp()
    full = full_at.timestamp()

    def used2(t: int) -> float:
        if t >= full:
            return CAPACITY - RESERVED + s.rng.uniform(0, 4) * MIB
        if t < edge:
            return 33.7 * GIB + 0.75 * GIB * hours(t)
        base = 33.7 * GIB + 0.75 * GIB * hours(int(edge))
        top = CAPACITY - RESERVED
        return min(top, base + (top - base) * (t - edge) / (full - edge))

    bids = _bids(auction)
    users: dict[int, Rate] = {0: lambda t: 26.1 * GIB + 0.31 * GIB * hours(t) + (
        0.0 if t < edge else 0.8 * GIB * (t - edge) / 3600),
        1: lambda t: 24.4 * GIB + 0.28 * GIB * hours(t) + (
            0.0 if t < edge else 0.7 * GIB * (t - edge) / 3600), 2: used2}
    for i, pod in enumerate(jpods):
        claim = f"journal-bid-journal-{i}"
        vol = {"namespace": NS, "persistentvolumeclaim": claim}
        used = users[i]
        gauge(s, "kubelet_volume_stats_capacity_bytes", vol, lambda t: CAPACITY,
              "[ALPHA] Capacity in bytes of the volume")
        gauge(s, "kubelet_volume_stats_used_bytes", vol, used,
              "[ALPHA] Number of used bytes in the volume")
        gauge(s, "kubelet_volume_stats_available_bytes", vol, _available(used),
              "[ALPHA] Number of available bytes in the volume")
        plain(s, pod, "bid-journal", 610 + 40 * i, 0.3)
        restarts_series(s, pod, "bid-journal", 1 if i == 0 else 0, [])
        share = 0.56 if i == 2 else 0.22
        app_counter(s, "bid_journal_appends_total", {"namespace": NS, "pod": f"bid-journal-{i}",
                                                     "result": "ok"},
                    [t for t in s.times], _ok(bids, share, full if i == 2 else None),
                    "Records appended to the journal, by result.")
        if i == 2:
            app_counter(s, "bid_journal_appends_total", {"namespace": NS, "pod": "bid-journal-2",
                                                         "result": "enospc"},
                        [t for t in s.times], lambda t: 0.0 if t < full else bids(t) * 0.56,
                        "Records appended to the journal, by result.", start=0)
    start = NOW - timedelta(hours=2.5)
    logs_for(s, jpods, "bid-journal", "bid-journal", [
        ("info", "bid_journal::segment: rolled segment 00000000000000417986 (256.0 MiB, "
         "1904412 records)", {}),
        ("debug", "bid_journal::compaction: 2 segments eligible (older than 72h), 0 compacted "
         "this run: segments still referenced by open lots", {}),
        ("info", "bid_journal::api: GET /lots/{id}/bids 200", {}),
    ], 54, start=start, end=NOW)
    logs_for(s, [jpods[2]], "bid-journal", "bid-journal", [
        ("error", "bid_journal::api: POST /append 507 Insufficient Storage: write "
         "/var/lib/bid-journal/segments/00000000000000418213.seg: no space left on device "
         "(os error 28)", {"http.response.status_code": 507, "error.type": "StorageFull"}),
        ("warn", "bid_journal::segment: cannot pre-allocate next segment (256.0 MiB): no space "
         "left on device (os error 28)", {}),
        ("error", "bid_journal::compaction: compaction of 00000000000000417990.seg failed: no "
         "space left on device (os error 28) while writing scratch file", {}),
    ], 102, start=full_at, end=NOW)

    # ---- bid-api: records bids through the journal member of each lot
    api = Ctr("bid-api", f"{REG}/bid-api:5.4.0", port=8080,
              requests={"cpu": "500m", "memory": "512Mi"}, limits={"memory": "1Gi"},
              env={"JOURNAL_MEMBERS": "bid-journal-0.bid-journal,bid-journal-1.bid-journal,"
                   "bid-journal-2.bid-journal", "JOURNAL_PORT": "7070"},
              readiness=http_probe("/ready", delay=5), liveness=http_probe("/live", delay=15))
    _, apis = deploy(s, NS, "bid-api", [api], replicas=4, nodes=nodes, revision=140,
                     rollout=s.ago(days=2, hours=3))
    for pod in apis:
        plain(s, pod, "bid-api", 287)
        requests(s, pod, "bid-api", rps=lambda t: bids(t) / 4, codes={
            "201": lambda t: 0.93 if t < full else 0.41,
            "409": lambda t: 0.07,
            "500": lambda t: 0.0 if t < full else 0.52})
    logs_for(s, apis, "bid-api", "bid-api", [
        ("info", "POST /v1/lots/{id}/bids 201 amount=48500 EUR", {"http.response.status_code":
                                                                  201}),
        ("info", "POST /v1/lots/{id}/bids 409 outbid: current 51000 EUR",
         {"http.response.status_code": 409}),
        ("info", "GET /v1/lots/{id} 200", {"http.response.status_code": 200}),
    ], 132, start=start, end=NOW)
    logs_for(s, apis, "bid-api", "bid-api", [
        ("error", "POST /v1/lots/{id}/bids 500: could not record bid: journal member "
         "bid-journal-2 answered 507 Insufficient Storage", {"http.response.status_code": 500,
                                                            "error.type": "JournalError"}),
        ("warn", "lot 2027-CC-0143 (1967 Jaguar E-Type S1): 37 bids rejected in the last "
         "minute", {}),
    ], 120, start=full_at + timedelta(seconds=3), end=NOW)

    # ---- red herrings
    img = Ctr("lot-images", f"{REG}/lot-images:1.9.0", port=8080,
              requests={"cpu": "300m", "memory": "256Mi"}, limits={"memory": "512Mi"},
              readiness=http_probe("/ready", delay=5))
    work, imgs = deploy(s, NS, "lot-images", [img], replicas=5, nodes=nodes, revision=33,
                        rollout=s.ago(days=5, hours=1),
                        born=lambda i: s.ago(days=5, hours=1) + timedelta(seconds=20 * i) if i < 3
                        else NOW - timedelta(minutes=36, seconds=50 - i))
    scaled = NOW - timedelta(minutes=36, seconds=52)
    hpa = c.add({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
                 "metadata": c.meta("HorizontalPodAutoscaler", "lot-images", NS,
                                    s.ago(days=400), {"app.kubernetes.io/name": "lot-images"}),
                 "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                             "name": "lot-images"},
                          "minReplicas": 3, "maxReplicas": 10, "metrics": [{
                              "type": "Resource", "resource": {"name": "cpu", "target": {
                                  "type": "Utilization", "averageUtilization": 70}}}]},
                 "status": {"currentReplicas": 5, "desiredReplicas": 5,
                            "lastScaleTime": iso(scaled), "currentMetrics": [{
                                "type": "Resource", "resource": {"name": "cpu", "current": {
                                    "averageUtilization": 58, "averageValue": "174m"}}}],
                            "conditions": [
                                {"type": "AbleToScale", "status": "True",
                                 "reason": "ReadyForNewScale",
                                 "message": "recommended size matches current size",
                                 "lastTransitionTime": iso(scaled + timedelta(minutes=5))},
                                {"type": "ScalingActive", "status": "True",
                                 "reason": "ValidMetricFound", "message": "the HPA was able to "
                                 "successfully calculate a replica count from cpu resource "
                                 "utilization (percentage of request)",
                                 "lastTransitionTime": iso(s.ago(days=5))},
                                {"type": "ScalingLimited", "status": "False",
                                 "reason": "DesiredWithinRange", "message": "the desired count "
                                 "is within the acceptable range",
                                 "lastTransitionTime": iso(s.ago(days=5))}]}})
    c.event(hpa, "SuccessfulRescale", "New size: 5; reason: cpu resource utilization "
            "(percentage of request) above target", first=scaled,
            component="horizontal-pod-autoscaler")
    rs = work.revisions[-1]
    c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set {rs['metadata']['name']} "
            "from 3 to 5", first=scaled, component="deployment-controller")
    logs_for(s, imgs, "lot-images", "lot-images", [
        ("info", "GET /img/2027-CC-0143/1600x1200.webp 200 (cache hit)", {}),
        ("warn", "GET /img/2027-CC-0099/orig.jpg 404 (not uploaded)", {}),
    ], 36, start=start, end=NOW)
    wn = Ctr("watchlist-notifier", f"{REG}/watchlist-notifier:2.2.5", port=8080,
             requests={"cpu": "100m", "memory": "192Mi"}, limits={"memory": "384Mi"},
             readiness=http_probe("/ready", delay=5))
    old = s.ago(days=1, hours=22, minutes=14)

    def wn_states(i: int, name: str, started: datetime) -> dict[str, Obj]:
        return {"watchlist-notifier": running(old, restarts=1, last=ended(
            "Error", 1, started, old - timedelta(seconds=5)))}
    _, wns = deploy(s, "members", "watchlist-notifier", [wn], replicas=1, nodes=nodes,
                    revision=26, rollout=s.ago(days=3, hours=2), statuses=wn_states, offset=3,
                    service=None)
    plain(s, wns[0], "watchlist-notifier", 121, restarts=1)
    logs_for(s, wns, "watchlist-notifier", "watchlist-notifier", [
        ("info", "lot 2027-CC-0143 closing in 60 min: notified 412 watchers", {}),
        ("warn", "smtp.eu.sparkpost.example: 421 rate limited, backing off 30s", {}),
    ], 24, start=start, end=NOW)
    exp = Ctr("node-exporter", "quay.io/prometheus/node-exporter:v1.9.0", port=9100,
              port_name="metrics", requests={"cpu": "20m", "memory": "32Mi"},
              limits={"memory": "64Mi"})
    daemonset(s, "kube-system", "node-exporter", [exp], node_list=nodes, generation=3,
              since=s.ago(days=6.5), labels={"app.kubernetes.io/name": "node-exporter"})
    for i, n in enumerate(nodes):
        root = 329_945_001_984.0
        free = root * (0.17 if i == 1 else 0.52 + 0.05 * i)
        gauge(s, "node_filesystem_avail_bytes", {"instance": n["metadata"]["name"],
                                                 "mountpoint": "/", "fstype": "ext4",
                                                 "device": "/dev/sda"},
              _shrinking(free, s.times[0]),
              "Filesystem space available to non-root users in bytes.")
    return s


Rate = Callable[[int], float]


def _bids(auction: datetime) -> Rate:
    """Bids a second: a quiet evening, then the auction's rush from 20:30."""
    edge = auction.timestamp()

    def rate(t: int) -> float:
        if t < edge:
            return 6.0
        return 6.0 + 34.0 * min(1.0, (t - edge) / 1800)
    return rate


def _available(used: Rate) -> Rate:
    return lambda t: max(0.0, CAPACITY - RESERVED - used(t))


def _ok(bids: Rate, share: float, full: float | None) -> Rate:
    return lambda t: 0.0 if full is not None and t >= full else bids(t) * share


def _shrinking(free: float, start: int) -> Rate:
    return lambda t: free - 0.02 * GIB * (t - start) / 3600
