"""5. resource_exhaustion: a file-descriptor leak; only the long-running pods fail."""

from __future__ import annotations

import json
from datetime import timedelta

from . import _kit as k

SID = "resizer-fd-exhaustion"
NOW = "2026-12-11T18:45:00Z"
NS = "media"
IMG = "registry.quillmark.io/media/image-resizer:2.14.0"
MAXFD = 65536


def build() -> None:
    s = k.Scn(SID, NOW, 4405)
    now = s.now
    grid = k.grid(s.ago(hours=5), now, 120)
    old = s.ago(days=600)
    nodes = [
        k.node(
            "ip-10-70-4-201.eu-west-1.compute.internal",
            "eu-west-1a",
            s.ago(days=16),
            s.ago(seconds=11),
            instance="c6i.2xlarge",
            cpu="8",
            alloc_cpu="7910m",
            memory="16009012Ki",
            alloc_mem="14972212Ki",
        ),
        k.node(
            "ip-10-70-23-65.eu-west-1.compute.internal",
            "eu-west-1b",
            s.ago(days=16),
            s.ago(seconds=30),
            instance="c6i.2xlarge",
            cpu="8",
            alloc_cpu="7910m",
            memory="16009012Ki",
            alloc_mem="14972212Ki",
        ),
        k.node(
            "ip-10-70-38-12.eu-west-1.compute.internal",
            "eu-west-1c",
            s.ago(days=16),
            s.ago(seconds=5),
            instance="c6i.2xlarge",
            cpu="8",
            alloc_cpu="7910m",
            memory="16009012Ki",
            alloc_mem="14972212Ki",
        ),
        k.node(
            "ip-10-70-50-12.eu-west-1.compute.internal",
            "eu-west-1c",
            s.ago(hours=3, minutes=18),
            s.ago(seconds=17),
            instance="c6i.2xlarge",
            cpu="8",
            alloc_cpu="7910m",
            memory="16009012Ki",
            alloc_mem="14972212Ki",
        ),
    ]
    nn = [n["metadata"]["name"] for n in nodes]
    s.add(*(k.namespace(n, old) for n in (NS, "web", "batch")))
    s.add(*nodes)

    roll = s.ago(hours=53, minutes=41)
    c = k.container(
        "image-resizer",
        IMG,
        ports=[
            {"name": "http", "containerPort": 8080, "protocol": "TCP"},
            {"name": "metrics", "containerPort": 9100, "protocol": "TCP"},
        ],
        env=[
            {"name": "ORIGINALS_BUCKET", "value": "media-originals"},
            {"name": "AWS_REGION", "value": "eu-west-1"},
            {"name": "TMPDIR", "value": "/scratch"},
            {"name": "GOMAXPROCS", "value": "2"},
        ],
        resources=k.res("1", "768Mi", "2", "1536Mi"),
        readiness=k.http_probe("/healthz", "http", period=10, timeout=2),
        liveness=k.http_probe("/healthz", "http", period=20, timeout=5, failure=6),
        volumeMounts=[{"name": "scratch", "mountPath": "/scratch"}],
    )
    tm = k.template(
        {"app.kubernetes.io/name": "image-resizer"},
        [c],
        annotations={"prometheus.io/scrape": "true", "prometheus.io/port": "9100"},
        volumes=[{"name": "scratch", "emptyDir": {"sizeLimit": "4Gi"}}],
    )
    dep = k.deployment(
        "image-resizer",
        NS,
        s.ago(days=590),
        tm,
        6,
        19,
        {"replicas": 6, "updatedReplicas": 6, "readyReplicas": 6, "availableReplicas": 6},
        [],
    )
    h = s.rs_hash()
    rs = k.replicaset(dep, h, roll, 19, tm, 6)
    rs_prev = k.replicaset(dep, s.rs_hash(), s.ago(days=24), 18, tm, 0)
    rs_prev["spec"]["template"]["spec"]["containers"][0]["image"] = (
        "registry.quillmark.io/media/image-resizer:2.13.2"
    )
    dep["status"]["conditions"] = k.dep_conditions(
        s.ago(hours=3, minutes=9), roll + timedelta(minutes=2), rs["metadata"]["name"]
    )
    s.add(dep, rs, rs_prev)

    # 4 pods from the rollout 3 days ago survive on the old nodes; 2 were recreated 3 h ago when the
    # node that held them was replaced (AMI upgrade).
    fresh = s.ago(hours=3, minutes=11)
    plan = [
        (nn[0], roll + timedelta(seconds=30)),
        (nn[1], roll + timedelta(seconds=62)),
        (nn[2], roll + timedelta(seconds=95)),
        (nn[0], roll + timedelta(seconds=128)),
        (nn[3], fresh),
        (nn[3], fresh + timedelta(seconds=4)),
    ]
    pods = []
    for node_name, created in plan:
        pn = f"image-resizer-{h}-{s.pod_suffix()}"
        p = k.pod(
            s,
            rs,
            pn,
            node_name,
            k.pod_ip(s, node_name),
            created,
            [k.cs_running(c, created + timedelta(seconds=3))],
            True,
            ready_since=created + timedelta(seconds=9),
        )
        pods.append(p)
        s.add(p)

    # fd model: leak per request served (unclosed object-store response bodies)
    # fds leaked per hour at today's traffic: the old pods reach the limit 97, 71, 52 and 26
    # minutes ago
    targets = [97, 71, 52, 26]
    rates = []
    for i in range(6):
        st = k.parse(pods[i]["status"]["startTime"]).timestamp()
        if i < 4:
            rates.append((MAXFD - 38) / ((now.timestamp() - targets[i] * 60 - st) / 3600))
        else:
            rates.append(1248.0 + 9 * i)

    def fds(i, t):
        st = k.parse(pods[i]["status"]["startTime"]).timestamp()
        age_h = (t - st) / 3600
        return min(MAXFD, int(38 + rates[i] * age_h))

    hit = []
    for i in range(6):
        st = k.parse(pods[i]["status"]["startTime"]).timestamp()
        hit.append(st + (MAXFD - 38) / rates[i] * 3600)

    # ---- neighbours
    gd, grs, _gpods = k.healthy_deployment(
        s,
        nn,
        "gallery-ui",
        "web",
        "registry.quillmark.io/web/gallery-ui:8.1.0",
        2,
        s.ago(days=500),
        port=3000,
        rollout=s.ago(minutes=44),
        revision=77,
    )
    gold = k.replicaset(
        gd, s.rs_hash(), s.ago(days=4), 76, json.loads(json.dumps(grs["spec"]["template"])), 0
    )
    gold["spec"]["template"]["spec"]["containers"][0]["image"] = (
        "registry.quillmark.io/web/gallery-ui:8.0.9"
    )
    s.add(gold)
    _md, _mrs, mpods = k.healthy_deployment(
        s,
        nn[:3],
        "metadata-indexer",
        NS,
        "registry.quillmark.io/media/metadata-indexer:1.4.2",
        2,
        s.ago(days=300),
        port=8080,
        rollout=s.ago(days=5),
    )
    _bd, _brs, _bpods = k.healthy_deployment(
        s,
        nn[:3],
        "exif-backfill",
        "batch",
        "registry.quillmark.io/batch/exif-backfill:0.3.1",
        1,
        s.ago(days=30),
        port=8080,
        rollout=s.ago(days=2, hours=3),
        restarts=(
            2,
            k.terminated("Error", 2, s.ago(days=2, hours=1), s.ago(days=1, hours=22), "exifbf"),
        ),
    )
    s.add(
        k.service(
            "image-resizer",
            NS,
            s.ago(days=590),
            {"app.kubernetes.io/name": "image-resizer"},
            [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": "http"}],
            "172.20.71.8",
        )
    )
    s.add(
        k.endpoints(
            "image-resizer",
            NS,
            s.ago(days=590),
            pods,
            [{"name": "http", "port": 8080, "protocol": "TCP"}],
        )
    )

    # ---- events
    evs = []
    roll_g = s.ago(minutes=44)
    evs.append(
        k.event(
            "web",
            gd,
            "ScalingReplicaSet",
            f"Scaled up replica set {grs['metadata']['name']} to 1",
            roll_g,
            roll_g,
            1,
            "Normal",
            "deployment-controller",
        )
    )
    evs.append(
        k.event(
            "web",
            gd,
            "ScalingReplicaSet",
            f"Scaled down replica set {gold['metadata']['name']} to 0 from 1",
            roll_g + timedelta(seconds=48),
            roll_g + timedelta(seconds=48),
            1,
            "Normal",
            "deployment-controller",
        )
    )
    for i in range(4):
        p = pods[i]
        if hit[i] < now.timestamp():
            first = max(
                k.datetime.fromtimestamp(hit[i], k.UTC) + timedelta(minutes=4),
                s.ago(minutes=58),
            )
            evs.append(
                k.event(
                    NS,
                    p,
                    "Unhealthy",
                    f'Readiness probe failed: Get "http://{p["status"]["podIP"]}:8080/healthz": '
                    "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
                    first,
                    s.ago(minutes=s.rng.randint(2, 9)),
                    s.rng.randint(2, 4),
                    "Warning",
                    "kubelet",
                    p["spec"]["nodeName"],
                    "spec.containers{image-resizer}",
                )
            )
    s.add(*evs)

    # ---- logs
    lt0 = s.ago(minutes=110)
    podlines = {p["metadata"]["name"]: [] for p in pods}
    t = lt0
    while t < now:
        i = s.rng.randint(0, 5)
        p = pods[i]
        pn = p["metadata"]["name"]
        img = f"{k.sha(str(t))[:2]}/{k.sha(str(t), 'k')[:24]}.jpg"
        w = s.rng.choice([320, 640, 1080, 1600])
        full = fds(i, t.timestamp()) >= MAXFD - 4
        if full and s.rng.random() < 0.92:
            kind = s.rng.random()
            if kind < 0.5:
                line = (
                    f'{{"time":"{k.ts_ms(t)}","level":"ERROR","msg":"resize '
                    f'failed","key":"{img}","width":{w},'
                    '"error":"fetch original: Get \\"https://media-originals.s3.eu-west-1.amazona'
                    f'ws.com/{img}\\": '
                    f"dial tcp 52.218.{s.rng.randint(0, 255)}.{s.rng.randint(1, 254)}:443: "
                    f'socket: too many open files"}}'
                )
                err = "socket: too many open files"
            elif kind < 0.8:
                line = (
                    f'{{"time":"{k.ts_ms(t)}","level":"ERROR","msg":"resize '
                    f'failed","key":"{img}","width":{w},'
                    f'"error":"create temp: open /scratch/resize-{s.rng.randint(10**6, 10**7)}.web'
                    f'p: too many open files"}}'
                )
                err = "too many open files"
            else:
                line = (
                    f"{t.strftime('%Y/%m/%d %H:%M:%S')} http: Accept error: accept tcp [::]:8080: "
                    "accept4: "
                    "too many open files; retrying in 1s"
                )
                err = "accept4: too many open files"
            s.log(
                t,
                NS,
                pn,
                "image-resizer",
                "image-resizer",
                "error",
                line,
                **{"error.message": err, "http.response.status_code": 500},
            )
        else:
            line = (
                f'{{"time":"{k.ts_ms(t)}","level":"INFO","msg":"resized","key":"{img}","width":{w},'
                f'"format":"webp","bytes":{s.rng.randint(9000, 240000)},"dur_ms":'
                f"{s.rng.randint(18, 140)}}}"
            )
            s.log(
                t,
                NS,
                pn,
                "image-resizer",
                "image-resizer",
                "info",
                line,
                **{"http.response.status_code": 200},
            )
        podlines[pn].append(line)
        if s.rng.random() < 0.012:
            sl = (
                f'{{"time":"{k.ts_ms(t)}","level":"WARN","msg":"object store throttled, '
                f'retrying","key":"{img}",'
                f'"error":"SlowDown: Please reduce your request rate.","attempt":1}}'
            )
            s.log(
                t + timedelta(milliseconds=30), NS, pn, "image-resizer", "image-resizer", "warn", sl
            )
            podlines[pn].append(sl)
        t += timedelta(seconds=s.rng.uniform(6, 13))
    for p in pods:
        pn = p["metadata"]["name"]
        st = k.parse(p["status"]["startTime"])
        head = [
            f'{{"time":"{k.ts_ms(st + timedelta(seconds=3))}","level":"INFO","msg":"image-resizer '
            'starting",'
            f'"version":"2.14.0","rlimit_nofile":{MAXFD}}}',
            (
                f'{{"time":"{k.ts_ms(st + timedelta(seconds=3))}","level":"INFO","msg":"listening"'
                f',"addr":":8080"}}'
            ),
        ]
        s.podlog(NS, pn, "image-resizer", head + podlines[pn][-150:])
        if st > lt0:
            s.log(
                st + timedelta(seconds=3),
                NS,
                pn,
                "image-resizer",
                "image-resizer",
                "info",
                f"image-resizer starting version=2.14.0 rlimit_nofile={MAXFD}",
            )
    for p in mpods:
        t = lt0 + timedelta(minutes=s.rng.randint(0, 7))
        while t < now:
            s.log(
                t,
                NS,
                p["metadata"]["name"],
                "metadata-indexer",
                "metadata-indexer",
                "warn",
                "elasticsearch bulk request partially rejected, retrying 12 items: "
                "es_rejected_execution_exception (429)",
            )
            t += timedelta(minutes=s.rng.randint(6, 15))

    # ---- metrics
    m = s.metrics
    for i, p in enumerate(pods):
        pn = p["metadata"]["name"]
        st = k.parse(p["status"]["startTime"]).timestamp()
        pts = [t for t in grid if t >= st]
        lab = {"namespace": NS, "pod": pn, "job": "image-resizer"}
        m.series(
            "process_open_fds",
            "gauge",
            "Number of open file descriptors.",
            lab,
            [(t, fds(i, t) - (s.rng.randint(0, 6) if fds(i, t) >= MAXFD else 0)) for t in pts],
        )
        m.series(
            "process_max_fds",
            "gauge",
            "Maximum number of open file descriptors.",
            lab,
            [(t, MAXFD) for t in pts][::3],
        )
        m.series(
            "go_goroutines",
            "gauge",
            "Number of goroutines that currently exist.",
            lab,
            [(t, 24 + fds(i, t) // 2 + s.rng.randint(0, 8)) for t in pts],
        )
        ok_rate = 1 / 4.5 / 6 * 60 / 60 * 6  # ~0.22 rps per pod of served resizes

        def okf(t, i=i):
            return 1.9 * (0.06 if fds(i, t) >= MAXFD - 4 else 1.0)

        def errf(t, i=i):
            return 1.9 * (0.94 if fds(i, t) >= MAXFD - 4 else 0.002)

        _ = ok_rate
        m.series(
            "http_requests",
            "counter",
            "Total HTTP requests by code.",
            dict(lab, handler="/resize", code="200"),
            k.counter_points(
                pts,
                okf,
                start=0.0 if i >= 4 else float(s.rng.randint(4 * 10**5, 5 * 10**5)),
                jitter=lambda: s.rng.uniform(0.85, 1.15),
            ),
        )
        m.series(
            "http_requests",
            "counter",
            "Total HTTP requests by code.",
            dict(lab, handler="/resize", code="500"),
            k.counter_points(
                pts,
                errf,
                start=0.0 if i >= 4 else float(s.rng.randint(100, 900)),
                jitter=lambda: s.rng.uniform(0.85, 1.15),
            ),
        )
        m.series(
            "container_memory_working_set_bytes",
            "gauge",
            "Current working set of the container in bytes",
            {"namespace": NS, "pod": pn, "container": "image-resizer"},
            [(t, round(3.1e8 + fds(i, t) * 2100 + s.rng.uniform(-1e7, 1e7))) for t in pts][::2],
        )
    for p in mpods:
        m.series(
            "process_open_fds",
            "gauge",
            "Number of open file descriptors.",
            {"namespace": NS, "pod": p["metadata"]["name"], "job": "metadata-indexer"},
            [(t, 61 + s.rng.randint(0, 12)) for t in grid][::2],
        )

    s.write(
        "image-resizer returning 500s",
        "image-resizer is failing about 2 in 3 resize requests for the last hour or so (500s, "
        "broken thumbnails on the "
        "gallery). no restarts, all 6 pods Ready. I see S3 SlowDown warnings in the logs - is S3 "
        "throttling us again? "
        "gallery-ui also deployed ~45 min ago.\n",
        {
            "category": "resource_exhaustion",
            "culprit": {"kind": "Deployment", "namespace": NS, "name": "image-resizer"},
            "evidence": ["too many open files", "process_open_fds", "65536"],
            "fix": "image-resizer 2.14.0 leaks file descriptors (~1,250 an hour); the four pods "
            "up for ~3 days sit at the "
            "65536 limit and fail with 'too many open files' while the two pods recreated 3 h ago "
            "are fine. "
            "Restart the old pods now (rollout restart) and fix the leak (close object-store "
            "response bodies and "
            "temp files).",
        },
    )
