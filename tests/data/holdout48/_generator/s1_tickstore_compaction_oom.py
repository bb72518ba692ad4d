"""1. oom_killed: a memory-mapped tick store OOM-killed only during its two-hourly compaction."""

from __future__ import annotations

import datetime as dt

from ._kit import (
    Cluster,
    Scenario,
    configmap,
    container,
    endpoints,
    env,
    hexid,
    http_probe,
    iso,
    iso_ms,
    namespace,
    node,
    pod,
    running,
    service,
    suffix,
    template,
    terminated,
    uid,
)

SID = "tickstore-compaction-oom"

GI = 1024**3
LIMIT = 4 * GI


def build() -> Scenario:
    sc = Scenario(
        SID,
        "Quotes API returning 503s in bursts; tickstore pods restarting",
        "2026-03-10T13:25:00Z",
        "quotes-api is throwing 503s in bursts again (13:00ish, 11:00ish, earlier too), "
        "tickstore pods in marketdata keep restarting. Volumes have been crazy since the market "
        "opened, I think the traffic spike is just too much for tickstore. Can we scale it out "
        "or rate-limit quotes-api?\n",
        {
            "category": "oom_killed",
            "culprit": {"kind": "StatefulSet", "namespace": "marketdata", "name": "tickstore"},
            "evidence": [
                "OOMKilled",
                "exitCode: 137",
                "compaction started",
                "4Gi",
                "tickstore_compaction_in_progress",
            ],
            "fix": "Give tickstore memory headroom for its compaction (raise the 4Gi limit, "
            "e.g. to 7Gi) or cap the compaction's merge fan-in / stagger the two replicas' "
            "schedules; the ingest rate is not the cause.",
        },
    )
    now = sc.now
    long_ago = parse_days(now, 210)
    for ns, lab in (
        ("marketdata", {"team": "market-data"}),
        ("quotes", {"team": "quotes"}),
        ("kube-system", {}),
        ("default", {}),
    ):
        sc.add(namespace(ns, long_ago, lab))

    nodes = []
    for i, (s, ip) in enumerate(
        (
            ("9x2k", "10.128.0.21"),
            ("b7qm", "10.128.0.22"),
            ("f4tn", "10.128.0.23"),
            ("m2wd", "10.128.0.24"),
        )
    ):
        name = f"gke-halyard-prod-default-7c1f0a2e-{s}"
        nodes.append((name, ip, i + 1))
        sc.add(
            node(
                name,
                created=now - dt.timedelta(days=19, hours=i),
                now=now,
                cpu="8",
                memory="32876516Ki",
                alloc_cpu="7910m",
                alloc_memory="29103588Ki",
                internal_ip=ip,
                labels={
                    "cloud.google.com/gke-nodepool": "default",
                    "node.kubernetes.io/instance-type": "n2-standard-8",
                    "topology.kubernetes.io/zone": "europe-west1-" + "bcd"[i % 3],
                },
                provider_id=f"gce://halyard-prod/europe-west1-{'bcd'[i % 3]}/{name}",
            )
        )
    cl = Cluster(sc, "10.40")

    # ------------------------------------------------------------------ compaction and OOM timeline
    comp_hours = [now.replace(hour=h, minute=0, second=0) for h in (9, 11, 13)]
    pods = ["tickstore-0", "tickstore-1"]
    offsets = {"tickstore-0": 0, "tickstore-1": 3}
    base = {"tickstore-0": 3.06 * GI, "tickstore-1": 2.97 * GI}
    ooms: dict[str, list[dt.datetime]] = {p: [] for p in pods}
    for p in pods:
        for c in comp_hours:
            start = c + dt.timedelta(seconds=1 + offsets[p])
            ooms[p].append(start + dt.timedelta(seconds=131 + 7 * offsets[p] + (c.hour % 3)))

    def mem(p: str):
        def f(t: dt.datetime) -> float:
            b = base[p] + 0.012 * GI * (hash_unit(p + iso(t)) - 0.5)
            for c, o in zip(comp_hours, ooms[p], strict=False):
                start = c + dt.timedelta(seconds=1 + offsets[p])
                if start <= t < o:
                    frac = (t - start).total_seconds() / (o - start).total_seconds()
                    return min(LIMIT - 3 * 1024**2, b + frac * (LIMIT - b))
                if o <= t < o + dt.timedelta(minutes=7):
                    # restarted: re-mapping segments, page cache warming back to the plateau
                    k = (t - o).total_seconds() / 420
                    return 0.35 * GI + k * (b - 0.35 * GI)
            return b

        return f

    def mapped(p: str, t: dt.datetime) -> float:
        b = base[p] * 0.83
        for c, o in zip(comp_hours, ooms[p], strict=False):
            start = c + dt.timedelta(seconds=1 + offsets[p])
            if start <= t < o:
                # the merge's heap grows and the kernel reclaims mapped pages to make room
                frac = (t - start).total_seconds() / (o - start).total_seconds()
                return b - frac * (b - 1.2 * GI)
            if o <= t < o + dt.timedelta(minutes=7):
                k = (t - o).total_seconds() / 420
                return 0.2 * GI + k * (b - 0.2 * GI)
        return b

    def compacting(p: str):
        def f(t: dt.datetime) -> float:
            for c, o in zip(comp_hours, ooms[p], strict=False):
                if c <= t < o:
                    return 1
            return 0

        return f

    grid = sc.grid(6)
    m = sc.metrics
    for p in pods:
        lab = {"namespace": "marketdata", "pod": p, "container": "tickstore"}
        working_set = mem(p)
        m.gauge(
            "container_memory_working_set_bytes",
            "Current working set of the container in bytes",
            lab,
            grid,
            lambda t, f=working_set: round(f(t)),
        )
    for p in pods:
        lab = {"namespace": "marketdata", "pod": p, "container": "tickstore"}
        m.gauge(
            "container_memory_mapped_file",
            "Size of memory mapped files in bytes.",
            lab,
            grid,
            lambda t, pp=p: round(mapped(pp, t)),
        )
    for p in pods:
        lab = {"namespace": "marketdata", "pod": p, "container": "tickstore"}
        m.gauge(
            "container_spec_memory_limit_bytes",
            "Memory limit for the container.",
            lab,
            grid,
            lambda t: LIMIT,
        )
    for p in pods:
        restarts_before = 9
        lab = {
            "namespace": "marketdata",
            "pod": p,
            "uid": uid(f"marketdata/pod/{p}"),
            "container": "tickstore",
        }
        m.cumulative(
            "kube_pod_container_status_restarts_total",
            "The number of container restarts per container.",
            lab,
            grid,
            lambda t, pp=p, rb=restarts_before: (
                rb + sum(1 for o in ooms[pp] if o + dt.timedelta(seconds=2) <= t)
            ),
        )
    for p in pods:
        m.gauge(
            "tickstore_compaction_in_progress",
            "Whether a scheduled compaction is running (1) or not (0).",
            {"namespace": "marketdata", "pod": p},
            grid,
            compacting(p),
        )
    for p in pods:

        def ingest_rate(t: dt.datetime) -> float:
            r = 5200 if t.hour >= 8 else 1400
            return r * (0.95 + 0.1 * hash_unit("i" + iso(t)))

        restarts = [o for o in ooms[p]]
        m.counter(
            "tickstore_ingested_points",
            "Points accepted by the ingest path since start.",
            {"namespace": "marketdata", "pod": p},
            grid,
            ingest_rate,
            start=51_220_000,
            resets=restarts,
        )

    def req_rate(code: str):
        def f(t: dt.datetime) -> float:
            down = any(
                min(ooms[p][i] for p in pods)
                <= t
                < max(ooms[p][i] for p in pods) + dt.timedelta(seconds=95)
                for i in range(3)
            )
            base_r = 90 if t.hour < 8 else 265
            base_r *= 0.95 + 0.1 * hash_unit("r" + iso(t))
            if code == "200":
                return base_r * (0.12 if down else 0.999)
            if code == "503":
                return base_r * (0.88 if down else 0.0)
            return base_r * 0.001

        return f

    for code in ("200", "404", "503"):
        m.counter(
            "http_requests_total".removesuffix("_total"),
            "Total HTTP requests handled.",
            {"namespace": "quotes", "service": "quotes-api", "code": code},
            grid,
            req_rate(code),
            start={"200": 38_114_020, "404": 40_113, "503": 9_870}[code],
        )

    # ------------------------------------------------------------------ tickstore objects
    sts_created = now - dt.timedelta(days=96)
    sts_rollout = now - dt.timedelta(days=5, hours=3, minutes=12)
    image = "registry.halyard.io/platform/tickstore:1.19.4"
    labels = {"app": "tickstore", "app.kubernetes.io/name": "tickstore"}
    ts_c = container(
        "tickstore",
        image,
        ports=[7400, 9100],
        requests={"cpu": "2", "memory": "4Gi"},
        limits={"memory": "4Gi"},
        args=[
            "--data-dir=/var/lib/tickstore",
            "--listen=:7400",
            "--metrics-listen=:9100",
            "--mmap-segments=true",
            "--compaction-schedule=0 */2 * * *",
            "--compaction-max-inputs=48",
            "--memtable-flush-interval=5m",
        ],
        env=env(
            GOMEMLIMIT="3400MiB",
            TICKSTORE_CLUSTER_PEERS="tickstore-0.tickstore,tickstore-1.tickstore",
        ),
        readiness=http_probe("/ready", 9100, delay=10),
        liveness=http_probe("/healthz", 9100, delay=30, period=20, failure=3),
        mounts=[{"name": "data", "mountPath": "/var/lib/tickstore"}],
    )
    tpl = template(
        labels,
        [ts_c],
        security={"runAsUser": 10001, "runAsGroup": 10001, "fsGroup": 10001},
        service_account="tickstore",
        grace=60,
    )
    rev = "tickstore-" + suffix("tickstore-rev7", 10)
    sts = {
        "apiVersion": "apps/v1",
        "kind": "StatefulSet",
        "metadata": {
            "name": "tickstore",
            "namespace": "marketdata",
            "uid": uid("marketdata/sts/tickstore"),
            "generation": 7,
            "creationTimestamp": iso(sts_created),
            "labels": dict(labels),
        },
        "spec": {
            "replicas": 2,
            "serviceName": "tickstore",
            "podManagementPolicy": "Parallel",
            "selector": {"matchLabels": {"app": "tickstore"}},
            "template": tpl,
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}},
            "revisionHistoryLimit": 10,
            "persistentVolumeClaimRetentionPolicy": {
                "whenDeleted": "Retain",
                "whenScaled": "Retain",
            },
            "volumeClaimTemplates": [
                {
                    "apiVersion": "v1",
                    "kind": "PersistentVolumeClaim",
                    "metadata": {"name": "data"},
                    "spec": {
                        "accessModes": ["ReadWriteOnce"],
                        "storageClassName": "premium-rwo",
                        "resources": {"requests": {"storage": "200Gi"}},
                        "volumeMode": "Filesystem",
                    },
                }
            ],
        },
        "status": {
            "observedGeneration": 7,
            "replicas": 2,
            "readyReplicas": 2,
            "currentReplicas": 2,
            "updatedReplicas": 2,
            "availableReplicas": 2,
            "currentRevision": rev,
            "updateRevision": rev,
            "collisionCount": 0,
        },
    }
    sc.add(sts)
    sc.add(
        {
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {
                "name": "premium-rwo",
                "uid": uid("sc/premium-rwo"),
                "creationTimestamp": iso(long_ago),
            },
            "provisioner": "pd.csi.storage.gke.io",
            "parameters": {"type": "pd-ssd"},
            "reclaimPolicy": "Delete",
            "volumeBindingMode": "WaitForFirstConsumer",
            "allowVolumeExpansion": True,
        }
    )
    pod_ips = {"tickstore-0": "10.40.2.14", "tickstore-1": "10.40.3.19"}
    pod_nodes = {"tickstore-0": nodes[1], "tickstore-1": nodes[2]}
    for i, p in enumerate(pods):
        sc.add(
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {
                    "name": f"data-{p}",
                    "namespace": "marketdata",
                    "uid": uid(f"pvc/{p}"),
                    "creationTimestamp": iso(sts_created),
                    "labels": {"app": "tickstore"},
                    "annotations": {
                        "pv.kubernetes.io/bind-completed": "yes",
                        "volume.kubernetes.io/storage-provisioner": "pd.csi.storage.gke.io",
                        "volume.kubernetes.io/selected-node": pod_nodes[p][0],
                    },
                },
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "premium-rwo",
                    "resources": {"requests": {"storage": "200Gi"}},
                    "volumeName": f"pvc-{uid('pv/' + p)}",
                    "volumeMode": "Filesystem",
                },
                "status": {
                    "phase": "Bound",
                    "accessModes": ["ReadWriteOnce"],
                    "capacity": {"storage": "200Gi"},
                },
            }
        )
        last_oom = ooms[p][-1]
        prev_oom = ooms[p][-2]
        restarted = last_oom + dt.timedelta(seconds=2)
        tspec = template(
            labels,
            [ts_c],
            security={"runAsUser": 10001, "runAsGroup": 10001, "fsGroup": 10001},
            service_account="tickstore",
            grace=60,
            volumes=[{"name": "data", "persistentVolumeClaim": {"claimName": f"data-{p}"}}],
        )
        tspec["metadata"]["labels"]["controller-revision-hash"] = rev
        tspec["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] = p
        tspec["metadata"]["labels"]["apps.kubernetes.io/pod-index"] = str(i)
        st = running(
            "tickstore",
            image,
            restarted,
            restarts=12,
            last=terminated("OOMKilled", 137, prev_oom + dt.timedelta(seconds=2), last_oom, p),
        )
        po = pod(
            "marketdata",
            p,
            tpl=tspec,
            owner=("StatefulSet", "tickstore"),
            node_name=pod_nodes[p][0],
            created=sts_rollout + dt.timedelta(seconds=40 * i),
            statuses=[st],
            ip=pod_ips[p],
            host_ip=pod_nodes[p][1],
            ready_since=restarted + dt.timedelta(seconds=74),
            spec_override={"hostname": p, "subdomain": "tickstore"},
        )
        sc.add(po)
        # kubelet re-pull/create/start series (aggregated) and the kernel OOM kill on the node
        for reason, msg in (
            ("Pulled", f'Container image "{image}" already present on machine'),
            ("Created", "Created container tickstore"),
            ("Started", "Started container tickstore"),
        ):
            sc.event(
                "Pod",
                "marketdata",
                p,
                reason,
                msg,
                count=12,
                first=now - dt.timedelta(hours=22, minutes=22),
                last=restarted + dt.timedelta(seconds=1),
                host=pod_nodes[p][0],
                obj_uid=uid(f"marketdata/pod/{p}"),
                field_path="spec.containers{tickstore}",
            )
        pid = 2_300_000 + 1731 * (i + 3)
        sc.event(
            "Node",
            "",
            pod_nodes[p][0],
            "OOMKilling",
            f"Memory cgroup out of memory: Killed process {pid} (tickstore) total-vm:21843396kB, "
            "anon-rss:2871204kB, file-rss:1290416kB, shmem-rss:0kB, UID:10001 pgtables:9744kB "
            "oom_score_adj:-997",
            type_="Warning",
            count=12,
            first=now - dt.timedelta(hours=22, minutes=22),
            last=last_oom,
            component="kernel-monitor",
            host=pod_nodes[p][0],
        )
        sc.event(
            "Pod",
            "marketdata",
            p,
            "Unhealthy",
            f'Readiness probe failed: Get "http://{pod_ips[p]}:9100/ready": '
            f"dial tcp {pod_ips[p]}:9100: connect: connection refused",
            type_="Warning",
            count=37,
            first=now - dt.timedelta(hours=22, minutes=21),
            last=restarted + dt.timedelta(seconds=61),
            host=pod_nodes[p][0],
            obj_uid=uid(f"marketdata/pod/{p}"),
            field_path="spec.containers{tickstore}",
        )

    sc.add(
        service(
            "marketdata",
            "tickstore",
            selector={"app": "tickstore"},
            ports=[("grpc", 7400, 7400), ("metrics", 9100, 9100)],
            cluster_ip="None",
            created=sts_created,
        )
    )
    sc.objects[-1]["spec"]["clusterIPs"] = ["None"]
    sc.objects[-1]["spec"]["publishNotReadyAddresses"] = False
    sc.add(
        endpoints(
            "marketdata",
            "tickstore",
            ready=[(pod_ips[p], p, pod_nodes[p][0]) for p in pods],
            ports=[("grpc", 7400), ("metrics", 9100)],
            created=sts_created,
        )
    )

    # ------------------------------------------------------------------ other workloads
    fh = cl.healthy(
        "marketdata",
        "feed-handler",
        image="registry.halyard.io/platform/feed-handler:2.4.0",
        nodes=[nodes[0]],
        replicas=1,
        created=long_ago,
        rollout=now - dt.timedelta(days=4, hours=6),
        revision=14,
        port=9100,
        requests={"cpu": "500m", "memory": "512Mi"},
        limits={"memory": "1Gi"},
        env_=env(TICKSTORE_ADDR="tickstore.marketdata.svc:7400", FEEDS="xetra,euronext,lse"),
        svc=False,
    )
    qa_roll = now - dt.timedelta(days=2, hours=1, minutes=48)
    qa = cl.healthy(
        "quotes",
        "quotes-api",
        image="registry.halyard.io/quotes/quotes-api:3.7.2",
        nodes=nodes,
        replicas=4,
        created=long_ago,
        rollout=qa_roll,
        revision=41,
        port=8080,
        requests={"cpu": "500m", "memory": "256Mi"},
        limits={"memory": "512Mi"},
        env_=env(
            TICKSTORE_ADDR="tickstore.marketdata.svc:7400",
            CACHE_ADDR="quotes-cache.quotes.svc:6379",
        ),
        annotations={"kubernetes.io/change-cause": "3.7.2: add ISIN lookup endpoint"},
    )
    qpod = qa["pods"][0]["metadata"]["name"]
    m.gauge(
        "container_memory_working_set_bytes",
        "Current working set of the container in bytes",
        {"namespace": "quotes", "pod": qpod, "container": "quotes-api"},
        grid,
        lambda t: round(0.31 * GI + 0.01 * GI * hash_unit("q" + iso(t))),
    )
    cache = cl.healthy(
        "quotes",
        "quotes-cache",
        image="redis:7.2.5-alpine",
        nodes=[nodes[3]],
        replicas=1,
        created=long_ago,
        rollout=now - dt.timedelta(days=6, hours=2),
        revision=3,
        port=6379,
        requests={"cpu": "250m", "memory": "1Gi"},
        limits={"memory": "1Gi"},
        restarts={
            0: (
                1,
                terminated(
                    "Error",
                    1,
                    now - dt.timedelta(days=6, hours=2),
                    now - dt.timedelta(days=3, hours=7, minutes=12),
                    "redis-old",
                ),
            )
        },
    )
    cache["pods"][0]["status"]["containerStatuses"][0]["state"]["running"]["startedAt"] = iso(
        now - dt.timedelta(days=3, hours=7, minutes=11)
    )
    cache["pods"][0]["spec"]["containers"][0].pop("readinessProbe", None)
    cl.healthy(
        "kube-system",
        "coredns",
        image="registry.k8s.io/coredns/coredns:v1.11.1",
        nodes=nodes[:2],
        replicas=2,
        created=long_ago,
        rollout=now - dt.timedelta(days=6, hours=20),
        revision=2,
        port=53,
        svc=False,
        probe_path="/ready",
        extra_labels={"k8s-app": "kube-dns"},
    )
    sc.add(
        configmap(
            "marketdata",
            "tickstore-retention",
            {"retention.yaml": "raw: 14d\nrollup_1m: 90d\nrollup_1h: 3y\n"},
            sts_created,
        )
    )

    # ------------------------------------------------------------------ logs
    win0 = sc.ago(hours=6)
    segs = {"tickstore-0": 1342, "tickstore-1": 1329}

    def tlog(p: str, t: dt.datetime, level: str, msg: str, kv: str = "") -> str:
        line = f'time={iso_ms(t)} level={level.upper()} msg="{msg}"' + (f" {kv}" if kv else "")
        sc.log(t, "marketdata", p, "tickstore", "tickstore", level, line)
        return line

    for p in pods:
        current: list[str] = []
        previous: list[str] = []
        previous: list[str] = []
        # periodic memtable flushes every 5 minutes outside the compaction windows
        events: list[tuple[dt.datetime, str, str, str]] = []
        t = win0.replace(second=7 + offsets[p])
        while t <= now:
            points = (1_560_000 if t.hour >= 8 else 420_000) + int(30_000 * hash_unit(p + iso(t)))
            events.append(
                (
                    t,
                    "info",
                    "memtable flushed",
                    f"points={points} segment=seg-{t.strftime('%Y%m%d%H%M')} "
                    f"bytes={int(9.1e6 + 2e6 * hash_unit('b' + p + iso(t)))}",
                )
            )
            t += dt.timedelta(minutes=5)
        for c, o in zip(comp_hours, ooms[p], strict=False):
            s = c + dt.timedelta(seconds=1 + offsets[p])
            w_end = c - dt.timedelta(hours=2)
            events.append(
                (
                    s,
                    "info",
                    "compaction started",
                    'schedule="0 */2 * * *" '
                    f"window={iso(w_end - dt.timedelta(hours=2))}/{iso(w_end)} level=2 inputs=48 "
                    "input_bytes=6.1GiB",
                )
            )
            events.append(
                (
                    s + dt.timedelta(seconds=2),
                    "info",
                    "mapping compaction inputs",
                    "segments=48 index_bytes=1.2GiB mmap=true",
                )
            )
            events.append(
                (
                    s + dt.timedelta(seconds=41),
                    "info",
                    "merging series",
                    "done_series=412000 total_series=1910000",
                )
            )
            events.append(
                (
                    s + dt.timedelta(seconds=97),
                    "info",
                    "merging series",
                    "done_series=1136000 total_series=1910000",
                )
            )
            r = o + dt.timedelta(seconds=2)
            events.append((o, "__killed__", "", ""))
            events.append(
                (
                    r + dt.timedelta(milliseconds=120),
                    "info",
                    "tickstore starting",
                    "version=1.19.4 commit=7be21c0 go=go1.22.5 GOMEMLIMIT=3400MiB",
                )
            )
            events.append(
                (
                    r + dt.timedelta(seconds=1),
                    "warn",
                    "removing incomplete compaction output",
                    f'dir=/var/lib/tickstore/.compact-{c.strftime("%Y%m%dT%H%M")} reason="no '
                    'commit marker"',
                )
            )
            events.append(
                (
                    r + dt.timedelta(seconds=6),
                    "info",
                    "replayed write-ahead log",
                    f"records={180_000 + int(20_000 * hash_unit(p + 'wal' + iso(c)))} elapsed=4.8s",
                )
            )
            events.append(
                (
                    r + dt.timedelta(seconds=71),
                    "info",
                    "segments opened",
                    f"count={segs[p]} mapped_bytes=2.6GiB elapsed=1m5s",
                )
            )
            events.append(
                (r + dt.timedelta(seconds=72), "info", "serving", "grpc=:7400 metrics=:9100")
            )
            nxt = c + dt.timedelta(hours=2)
            events.append(
                (
                    r + dt.timedelta(seconds=72, milliseconds=300),
                    "info",
                    "next compaction scheduled",
                    f"at={iso(nxt)}",
                )
            )
        events.sort(key=lambda e: e[0])
        busy = [
            (c, o + dt.timedelta(seconds=75)) for c, o in zip(comp_hours, ooms[p], strict=False)
        ]
        cur_start = ooms[p][-1] + dt.timedelta(seconds=2)
        prev_start = ooms[p][-2] + dt.timedelta(seconds=2)
        for t, lvl, msg, kv in events:
            if lvl == "__killed__":
                continue  # the OOM kill leaves no line in the container's output
            if msg == "memtable flushed" and any(a <= t < b for a, b in busy):
                continue
            line = tlog(p, t, lvl, msg, kv)
            if t >= cur_start:
                current.append(line)
            elif t >= prev_start:
                previous.append(line)
        sc.pod_log("marketdata", p, "tickstore", current)
        sc.pod_log("marketdata", p, "tickstore", previous, previous=True)

    # quotes-api: errors while both replicas of tickstore are down, plus normal noise
    qpods = [p_["metadata"]["name"] for p_ in qa["pods"]]
    for i in range(3):
        lo = min(ooms[p][i] for p in pods)
        hi = max(ooms[p][i] for p in pods) + dt.timedelta(seconds=95)
        t = lo + dt.timedelta(milliseconds=300)
        k = 0
        while t < hi:
            qp = qpods[k % 4]
            tgt = pod_ips[pods[k % 2]]
            msg = (
                f'{{"level":"error","ts":"{iso_ms(t)}","logger":"tickstore-client",'
                '"msg":"query failed","method":"/tickstore.v1.Query/LastQuote",'
                '"error":"rpc error: code = Unavailable desc = connection error: desc = '
                f'\\"transport: Error while dialing: dial tcp {tgt}:7400: connect: connection '
                'refused\\""}'
            )
            sc.log(
                t,
                "quotes",
                qp,
                "quotes-api",
                "quotes-api",
                "error",
                msg,
                **{"error.type": "Unavailable"},
            )
            if k % 3 == 0:
                sc.log(
                    t + dt.timedelta(milliseconds=4),
                    "quotes",
                    qp,
                    "quotes-api",
                    "quotes-api",
                    "warn",
                    f'{{"level":"warn","ts":"{iso_ms(t)}","msg":"request '
                    'failed","path":"/v2/quotes/last","status":503,"duration_ms":2}',
                    **{"http.response.status_code": 503},
                )
            t += dt.timedelta(seconds=2.5)
            k += 1
    t = win0 + dt.timedelta(seconds=33)
    k = 0
    while t < now:
        qp = qpods[k % 4]
        sc.log(
            t,
            "quotes",
            qp,
            "quotes-api",
            "quotes-api",
            "info",
            f'{{"level":"info","ts":"{iso_ms(t)}","msg":"stats","rps":{180 if t.hour < 8 else 265},'
            f'"p99_ms":{14 + k % 5},"cache_hit_ratio":0.9{k % 7}}}',
        )
        if k % 9 == 4:
            sc.log(
                t + dt.timedelta(seconds=3),
                "quotes",
                qp,
                "quotes-api",
                "quotes-api",
                "warn",
                f'{{"level":"warn","ts":"{iso_ms(t)}","msg":"unknown '
                f'ISIN","isin":"XS2{k:07d}","status":404}}',
                **{"http.response.status_code": 404},
            )
        t += dt.timedelta(minutes=2)
        k += 1
    # feed handler: buffering while tickstore is down; busy market open
    fpod = fh["pods"][0]["metadata"]["name"]
    for i in range(3):
        lo = min(ooms[p][i] for p in pods)
        sc.log(
            lo + dt.timedelta(seconds=1),
            "marketdata",
            fpod,
            "feed-handler",
            "feed-handler",
            "warn",
            '{"level":"warn","msg":"tickstore write failed, '
            f'buffering","buffered":{8200 + i * 300},"error":"connection refused"}}',
        )
        sc.log(
            lo + dt.timedelta(seconds=160),
            "marketdata",
            fpod,
            "feed-handler",
            "feed-handler",
            "info",
            '{"level":"info","msg":"tickstore reachable again, flushed '
            f'buffer","flushed":{910_000 + i * 12_000}}}',
        )
    sc.log(
        now.replace(hour=8, minute=0, second=2),
        "marketdata",
        fpod,
        "feed-handler",
        "feed-handler",
        "info",
        '{"level":"info","msg":"session open","venues":["xetra","euronext","lse"]}',
    )
    return sc


def hash_unit(s: str) -> float:
    return int(hexid(s, 8), 16) / 0xFFFFFFFF


def parse_days(now: dt.datetime, days: int) -> dt.datetime:
    return now - dt.timedelta(days=days)
