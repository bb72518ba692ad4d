"""5. node_failure: a node runs out of inodes (a thumbnail cache on a hostPath); DiskPressure and
evictions."""

from __future__ import annotations

import random
from datetime import timedelta

from ._kit import (
    Container,
    Scenario,
    app,
    cstatus,
    env,
    event,
    http_probe,
    iso,
    meta,
    namespace,
    node,
    parse,
    pod,
    resources,
    smooth,
    sport,
    template,
    terminated,
    times,
    token,
    ts_dt,
)

SID = "node-inodes-exhausted"


def build() -> Scenario:
    rng = random.Random(4905)
    now = parse("2026-12-14T03:30:00Z")
    bad = "ip-10-60-2-41.eu-north-1.compute.internal"
    sc = Scenario(
        id=SID,
        title="Pods evicted on prod while disk usage looks fine",
        now=now,
        report=(
            "pods keep getting evicted in prod since ~03:00 (checkout-web, image-resizer), "
            "checkout had a blip. it's not disk: the fullest node is at ~80% and nothing gets "
            "evicted there. fluent-bit got upgraded tonight, could the new version be killing "
            "pods?\n"
        ),
        truth={
            "category": "node_failure",
            "culprit": {"kind": "Node", "namespace": "", "name": bad},
            "evidence": [
                "DiskPressure",
                "The node was low on resource: inodes",
                "Attempting to reclaim inodes",
                "node_filesystem_files_free",
                "no space left on device",
            ],
            "fix": (
                f"Free inodes on {bad}: cordon it, clear /var/lib/thumbcache (millions of tiny "
                "thumbnail files written by thumbnail-cache's hostPath), and move that cache to "
                "a PVC or object storage with a size/file cap."
            ),
        },
    )
    spec = [
        ("ip-10-60-1-17.eu-north-1.compute.internal", "10.60.1.17", "eu-north-1a"),
        (bad, "10.60.2.41", "eu-north-1b"),
        ("ip-10-60-3-88.eu-north-1.compute.internal", "10.60.3.88", "eu-north-1c"),
        ("ip-10-60-1-203.eu-north-1.compute.internal", "10.60.1.203", "eu-north-1a"),
        ("ip-10-60-3-150.eu-north-1.compute.internal", "10.60.3.150", "eu-north-1c"),
    ]
    pressure_at = now - timedelta(minutes=34)
    nodes = []
    for i, (n, ip, z) in enumerate(spec):
        if n == bad:
            sc.add(
                node(
                    n,
                    now - timedelta(days=21),
                    now,
                    ip=ip,
                    zone=z,
                    cpu="8",
                    memory_ki=32386544,
                    instance_type="m6i.2xlarge",
                    kubelet="v1.30.4",
                    conditions={"DiskPressure": "True"},
                    pressure_since={"DiskPressure": pressure_at},
                    taints=[
                        {
                            "effect": "NoSchedule",
                            "key": "node.kubernetes.io/disk-pressure",
                            "timeAdded": iso(pressure_at),
                        }
                    ],
                )
            )
        else:
            sc.add(
                node(
                    n,
                    now - timedelta(days=14 + 2 * i),
                    now,
                    ip=ip,
                    zone=z,
                    cpu="8",
                    memory_ki=32386544,
                    instance_type="m6i.2xlarge",
                    kubelet="v1.30.4",
                )
            )
        nodes.append((n, ip))
    good = [x for x in nodes if x[0] != bad]
    for ns in ("default", "media", "web", "logging"):
        sc.add(namespace(ns, now - timedelta(days=250)))

    # thumbnail-cache: writes tiny files into a hostPath (the inode eater; victim of its own node)
    tc = Container(
        "thumbnail-cache",
        "ghcr.io/skerry-media/thumbnail-cache:2.4.0",
        ports=[{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        env=env(CACHE_DIR="/cache", CACHE_MAX_BYTES="40Gi", CACHE_SHARD_DEPTH="2"),
        resources=resources("500m", "512Mi", None, "1Gi"),
        readiness=http_probe("/healthz", "http"),
        volume_mounts=[{"mountPath": "/cache", "name": "thumbcache"}],
    )
    tca = app(
        rng,
        "thumbnail-cache",
        "media",
        [tc],
        created=now - timedelta(days=60),
        rs_created=now - timedelta(days=6, hours=11),
        replicas=2,
        nodes=[nodes[1], nodes[3]],
        pod_cidr="10.60.20",
        revision=7,
        svc_ports=[sport(80, "http")],
        tmpl_kw={
            "volumes": [
                {
                    "name": "thumbcache",
                    "hostPath": {"path": "/var/lib/thumbcache", "type": "DirectoryOrCreate"},
                }
            ]
        },
    )
    sc.add(*tca.objects)

    # workloads with one pod evicted from the bad node, replaced elsewhere
    evict_msg = (
        "The node was low on resource: inodes. Threshold quantity: 327680, available: {avail}. "
    )
    evictions = []

    def with_eviction(
        name: str,
        ns: str,
        c: Container,
        replicas: int,
        rs_age: timedelta,
        rev: int,
        evict_at: timedelta,
        avail: int,
    ) -> None:
        a = app(
            rng,
            name,
            ns,
            [c],
            created=now - timedelta(days=200),
            rs_created=now - rs_age,
            replicas=replicas,
            nodes=good,
            pod_cidr="10.60.21",
            revision=rev,
            svc_ports=[sport(80, "http")],
        )
        # the last pod is the replacement: created at the eviction
        ev_t = now - evict_at
        rep = a.pods[-1]
        rep["metadata"]["creationTimestamp"] = iso(ev_t + timedelta(seconds=1))
        rep["status"]["startTime"] = iso(ev_t + timedelta(seconds=2))
        for cs in rep["status"]["containerStatuses"]:
            cs["state"] = {"running": {"startedAt": iso(ev_t + timedelta(seconds=6))}}
        for cnd in rep["status"]["conditions"]:
            cnd["lastTransitionTime"] = iso(ev_t + timedelta(seconds=15))
        rs_name = a.rs[-1]["metadata"]["name"]
        pn = f"{rs_name}-{token(rng, 5)}"
        started = now - rs_age + timedelta(seconds=30)
        msg = evict_msg.format(avail=avail)
        ep = pod(
            pn,
            ns,
            "ReplicaSet",
            rs_name,
            a.rs[-1]["spec"]["template"],
            started,
            node_name=bad,
            pod_ip=None,
            host_ip="10.60.2.41",
            phase="Failed",
            statuses=[
                cstatus(
                    c,
                    ready=False,
                    state=terminated("Error", 137, started + timedelta(seconds=5), ev_t),
                    rng=rng,
                )
            ],
            conditions=[
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": iso(ev_t),
                    "message": msg,
                    "reason": "TerminationByKubelet",
                    "status": "True",
                    "type": "DisruptionTarget",
                },
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": iso(started + timedelta(seconds=2)),
                    "status": "True",
                    "type": "Initialized",
                },
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": iso(ev_t),
                    "reason": "PodFailed",
                    "status": "False",
                    "type": "Ready",
                },
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": iso(ev_t),
                    "reason": "PodFailed",
                    "status": "False",
                    "type": "ContainersReady",
                },
                {
                    "lastProbeTime": None,
                    "lastTransitionTime": iso(started),
                    "status": "True",
                    "type": "PodScheduled",
                },
            ],
            status_extra={"message": msg, "reason": "Evicted"},
        )
        for cnd in ep["status"]["conditions"]:
            if parse(cnd["lastTransitionTime"]) < now - timedelta(days=7):
                cnd["lastTransitionTime"] = iso(now - timedelta(days=6))
        sc.add(*a.objects, ep)
        evictions.append((ev_t, ns, pn, c.name, msg))
        sc.add(
            event(ns, "Pod", pn, "Evicted", msg, ev_t, ev_t, type_="Warning", host=bad),
            event(
                ns,
                "Pod",
                pn,
                "Killing",
                f"Stopping container {c.name}",
                ev_t,
                ev_t,
                host=bad,
                field_path=f"spec.containers{{{c.name}}}",
            ),
            event(
                ns,
                "ReplicaSet",
                rs_name,
                "SuccessfulCreate",
                f"Created pod: {rep['metadata']['name']}",
                ev_t + timedelta(seconds=1),
                ev_t + timedelta(seconds=1),
                component="replicaset-controller",
                api_version="apps/v1",
            ),
            event(
                ns,
                "Pod",
                rep["metadata"]["name"],
                "Scheduled",
                f"Successfully assigned {ns}/{rep['metadata']['name']} "
                f"to {rep['spec']['nodeName']}",
                ev_t + timedelta(seconds=1),
                ev_t + timedelta(seconds=1),
                component="default-scheduler",
            ),
        )

    def avail_at(ago: timedelta) -> int:
        frac = (timedelta(hours=3) - ago) / timedelta(hours=3)
        return int(6553600 * (0.152 - (0.152 - 0.0262) * frac))

    with_eviction(
        "checkout-web",
        "web",
        Container(
            "checkout-web",
            "ghcr.io/skerry-media/checkout-web:8.2.1",
            ports=[{"containerPort": 3000, "name": "http", "protocol": "TCP"}],
            resources=resources("250m", "384Mi", None, "768Mi"),
            readiness=http_probe("/healthz", "http"),
        ),
        3,
        timedelta(days=3, hours=2),
        64,
        timedelta(minutes=29),
        avail_at(timedelta(minutes=29)),
    )
    with_eviction(
        "image-resizer",
        "media",
        Container(
            "image-resizer",
            "ghcr.io/skerry-media/image-resizer:5.0.3",
            ports=[{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
            resources=resources("1", "1Gi", None, "2Gi"),
            readiness=http_probe("/healthz", "http"),
        ),
        3,
        timedelta(days=5),
        22,
        timedelta(minutes=22),
        avail_at(timedelta(minutes=22)),
    )
    with_eviction(
        "session-api",
        "web",
        Container(
            "session-api",
            "ghcr.io/skerry-media/session-api:1.12.0",
            ports=[{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
            resources=resources("100m", "256Mi", None, "512Mi"),
            readiness=http_probe("/healthz", "http"),
        ),
        2,
        timedelta(days=4),
        15,
        timedelta(minutes=9),
        avail_at(timedelta(minutes=9)),
    )
    sc.add(
        event(
            "",
            "Node",
            bad,
            "NodeHasDiskPressure",
            f"Node {bad} status is now: NodeHasDiskPressure",
            pressure_at,
            pressure_at,
            host=bad,
        ),
        event(
            "",
            "Node",
            bad,
            "EvictionThresholdMet",
            "Attempting to reclaim inodes",
            pressure_at,
            now - timedelta(minutes=1),
            count=17,
            type_="Warning",
            host=bad,
        ),
    )

    # fluent-bit DaemonSet: rolled out 48 minutes ago (harmless decoy)
    fb_roll = now - timedelta(minutes=48)
    fbc = Container(
        "fluent-bit",
        "cr.fluentbit.io/fluent/fluent-bit:3.2.2",
        ports=[{"containerPort": 2020, "name": "http", "protocol": "TCP"}],
        resources=resources("50m", "64Mi", None, "128Mi"),
        readiness=http_probe("/api/v1/health", "http"),
        volume_mounts=[{"mountPath": "/var/log", "name": "varlog", "readOnly": True}],
    )
    fbt = template(
        {"app.kubernetes.io/name": "fluent-bit", "app.kubernetes.io/instance": "fluent-bit"},
        [fbc],
        volumes=[{"name": "varlog", "hostPath": {"path": "/var/log", "type": ""}}],
        annotations={
            "checksum/config": "a91c2e0f3b7d48e5c6f1029384756abcdef0123456789abcdef0123456789ab"
        },
    )
    fbt["spec"]["priorityClassName"] = "system-node-critical"
    sc.add(
        {
            "apiVersion": "apps/v1",
            "kind": "DaemonSet",
            "metadata": meta(
                "fluent-bit",
                "logging",
                now - timedelta(days=250),
                {"app.kubernetes.io/name": "fluent-bit"},
                {"deprecated.daemonset.template.generation": "14"},
            )
            | {"generation": 14},
            "spec": {
                "revisionHistoryLimit": 10,
                "selector": {
                    "matchLabels": {
                        "app.kubernetes.io/instance": "fluent-bit",
                        "app.kubernetes.io/name": "fluent-bit",
                    }
                },
                "template": fbt,
                "updateStrategy": {
                    "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1},
                    "type": "RollingUpdate",
                },
            },
            "status": {
                "currentNumberScheduled": 5,
                "desiredNumberScheduled": 5,
                "numberAvailable": 5,
                "numberMisscheduled": 0,
                "numberReady": 5,
                "observedGeneration": 14,
                "updatedNumberScheduled": 5,
            },
        }
    )
    fb_pods = []
    for i, (n, ip) in enumerate(nodes):
        pn = f"fluent-bit-{token(rng, 5)}"
        pc = fb_roll + timedelta(seconds=20 * i)
        p = pod(
            pn,
            "logging",
            "DaemonSet",
            "fluent-bit",
            fbt,
            pc,
            node_name=n,
            pod_ip=ip,
            host_ip=ip,
            statuses=[
                cstatus(
                    fbc,
                    ready=True,
                    state={"running": {"startedAt": iso(pc + timedelta(seconds=3))}},
                    rng=rng,
                )
            ],
            extra_labels={
                "controller-revision-hash": "6d8f5c7b9d",
                "pod-template-generation": "14",
            },
        )
        fb_pods.append(p)
        sc.add(p)
        sc.add(
            event(
                "logging",
                "DaemonSet",
                "fluent-bit",
                "SuccessfulCreate",
                f"Created pod: {pn}",
                pc,
                pc,
                component="daemonset-controller",
                api_version="apps/v1",
            )
        )

    # ---------------------------------------------------------------- metrics
    ts = times(now, 3)
    m = sc.metrics
    files_total = 6553600
    size = 107361579008
    free_pct = {
        nodes[0][0]: (0.91, 0.91),
        bad: (0.152, 0.0262),
        nodes[2][0]: (0.88, 0.88),
        nodes[3][0]: (0.61, 0.553),
        nodes[4][0]: (0.93, 0.93),
    }
    avail_frac = {
        nodes[0][0]: 0.63,
        bad: 0.57,
        nodes[2][0]: 0.19,
        nodes[3][0]: 0.66,
        nodes[4][0]: 0.71,
    }
    for n, ip in nodes:
        lab = {
            "instance": f"{ip}:9100",
            "job": "node-exporter",
            "node": n,
            "device": "/dev/nvme0n1p1",
            "fstype": "ext4",
            "mountpoint": "/",
        }
        a, b = free_pct[n]
        if n == bad:

            def ff(t: int, a: float = a, b: float = b) -> float:
                # the kubelet's reclaim (dead containers, images) wins back a little at each attempt
                base = smooth(t, ts[0], ts[-1], a, b)
                return base + (
                    0.0031
                    if (t - int(pressure_at.timestamp())) % 600 < 120
                    and t > pressure_at.timestamp()
                    else 0
                )
        else:

            def ff(t: int, a: float = a, b: float = b) -> float:
                return smooth(t, ts[0], ts[-1], a, b)

        m.gauge(
            "node_filesystem_files_free",
            "Filesystem total free file nodes.",
            lab,
            [(t, int(files_total * ff(t))) for t in ts],
        )
        m.gauge(
            "node_filesystem_files",
            "Filesystem total file nodes.",
            lab,
            [(t, files_total) for t in ts[::5]],
        )
        m.gauge(
            "node_filesystem_avail_bytes",
            "Filesystem space available to non-root users in bytes.",
            lab,
            [
                (
                    t,
                    int(
                        size * (avail_frac[n] - (0.004 if n == bad else 0) * (t - ts[0]) / 10800)
                        + rng.randint(-(2**24), 2**24)
                    ),
                )
                for t in ts
            ],
        )
        m.gauge(
            "node_filesystem_size_bytes",
            "Filesystem size in bytes.",
            lab,
            [(t, size) for t in ts[::5]],
        )
        m.gauge(
            "kube_node_status_condition",
            "The condition of a cluster node.",
            {"node": n, "condition": "DiskPressure", "status": "true"},
            [(t, 1 if (n == bad and t >= pressure_at.timestamp()) else 0) for t in ts[::2]],
        )
    m.counter(
        "kubelet_evictions",
        "Cumulative number of pod evictions by eviction signal",
        {"instance": "10.60.2.41:10250", "node": bad, "eviction_signal": "nodefs.inodesFree"},
        [(t, sum(1 for e in evictions if e[0].timestamp() <= t)) for t in ts],
    )
    for p in tca.pods:
        pn = p["metadata"]["name"]
        on_bad = p["spec"]["nodeName"] == bad
        m.gauge(
            "thumbcache_files",
            "Files in the local thumbnail cache.",
            {"namespace": "media", "pod": pn},
            [
                (
                    t,
                    int(
                        (5.3e6 if on_bad else 2.3e6)
                        + (2.75e5 if on_bad else 1.25e5) * (t - ts[0]) / 3600
                    ),
                )
                for t in ts[::2]
            ],
        )
        m.gauge(
            "thumbcache_bytes",
            "Bytes in the local thumbnail cache.",
            {"namespace": "media", "pod": pn},
            [(t, int((7.4e9 if on_bad else 3.3e9) + 1.3e8 * (t - ts[0]) / 3600)) for t in ts[::2]],
        )

    # ---------------------------------------------------------------- logs
    L = sc.logs
    for p in tca.pods:
        pn = p["metadata"]["name"]
        on_bad = p["spec"]["nodeName"] == bad
        lines = []
        t = ts[0]
        files = 5.3e6 if on_bad else 2.3e6
        while t < ts[-1]:
            at = ts_dt(t) + timedelta(seconds=rng.randint(0, 59))
            full = on_bad and t > int((now - timedelta(minutes=40)).timestamp())
            if t % 300 == 0:
                files += (2.75e5 if on_bad else 1.25e5) / 12
                msg = (
                    f"cache stats: files={int(files)} "
                    f"bytes={(7.4 if on_bad else 3.3) + 0.13 * (t - ts[0]) / 3600:.1f}GiB "
                    f"hit_ratio=0.{rng.randint(71, 79)} evicted=0 (limit 40Gi by bytes)"
                )
                L.add(at, "thumbnail-cache", "media", pn, "thumbnail-cache", "info", msg)
                if at > now - timedelta(minutes=30):
                    lines.append(f"{at.isoformat().replace('+00:00', 'Z')} INFO  {msg}")
            if full:
                for _ in range(rng.randint(2, 4)):
                    h = "".join(rng.choice("0123456789abcdef") for _ in range(24))
                    a2 = at + timedelta(seconds=rng.randint(0, 40))
                    size = rng.choice(["96x96", "160x160", "320x320"])
                    msg = (
                        f"store thumbnail failed: open /cache/{h[:2]}/{h[2:4]}/{h}-{size}.webp: "
                        "no space left on device"
                    )
                    L.add(
                        a2,
                        "thumbnail-cache",
                        "media",
                        pn,
                        "thumbnail-cache",
                        "error",
                        msg,
                        **{"error.type": "ENOSPC"},
                    )
                    if a2 > now - timedelta(minutes=30):
                        lines.append(f"{a2.isoformat().replace('+00:00', 'Z')} ERROR {msg}")
            t += 60
        sc.pod_log("media", pn, "thumbnail-cache", sorted(lines))
    for p in fb_pods:
        pn = p["metadata"]["name"]
        st = parse(p["metadata"]["creationTimestamp"]) + timedelta(seconds=3)
        for k, (lvl, msg) in enumerate(
            [
                ("info", "[fluent bit] version=3.2.2, commit=a59c867924, pid=1"),
                (
                    "info",
                    "[storage] ver=1.5.2, type=memory, sync=normal, checksum=off, "
                    "max_chunks_up=128",
                ),
                (
                    "warn",
                    "[input:tail:tail.0] multiline parser 'java' not found, falling back to "
                    "'docker'",
                ),
                ("info", "[output:es:es.0] worker #0 started"),
            ]
        ):
            L.add(st + timedelta(seconds=k), "fluent-bit", "logging", pn, "fluent-bit", lvl, msg)
    return sc
