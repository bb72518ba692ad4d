"""1. oom_killed: the container limit of a JVM service was cut below its -Xmx."""

from __future__ import annotations

from datetime import timedelta

from . import _kit as k

SID = "ledger-heap-over-limit"
NOW = "2026-12-07T14:30:00Z"
NS = "payments"
IMG = "registry.quillmark.io/payments/ledger-api:5.9.2"
JAVA_OPTS = (
    "-Xms512m -Xmx1536m -XX:+UseG1GC -XX:MaxGCPauseMillis=200 "
    "-XX:+ParallelRefProcEnabled -Xlog:gc:stdout:time"
)
GI = 1073741824


def _ledger_template(limit: str) -> dict:
    c = k.container(
        "ledger-api",
        IMG,
        ports=[
            {"name": "http", "containerPort": 8080, "protocol": "TCP"},
            {"name": "management", "containerPort": 8081, "protocol": "TCP"},
        ],
        env=[
            {"name": "JAVA_OPTS", "value": JAVA_OPTS},
            {"name": "SPRING_PROFILES_ACTIVE", "value": "prod"},
            {
                "name": "LEDGER_DB_URL",
                "value": "jdbc:postgresql://ledger-db.payments.svc:5432/ledger",
            },
            {
                "name": "OTEL_EXPORTER_OTLP_ENDPOINT",
                "value": "http://otel-gateway.observability.svc:4317",
            },
        ],
        resources=k.res("500m", limit, "2", limit),
        readiness=k.http_probe("/actuator/health/readiness", 8081, period=10, initial=20),
        liveness=k.http_probe("/actuator/health/liveness", 8081, period=20, initial=60, failure=5),
    )
    return k.template(
        {"app.kubernetes.io/name": "ledger-api", "app.kubernetes.io/part-of": "payments"},
        [c],
        annotations={
            "prometheus.io/scrape": "true",
            "prometheus.io/port": "8081",
            "prometheus.io/path": "/actuator/prometheus",
        },
        serviceAccountName="ledger-api",
    )


def build() -> None:
    s = k.Scn(SID, NOW, 4401)
    now = s.now
    t0 = s.ago(hours=6)
    grid = k.grid(t0, now, 120)
    old = s.ago(days=200)
    nodes = [
        k.node(
            "ip-10-31-4-17.eu-west-1.compute.internal",
            "eu-west-1a",
            s.ago(days=19),
            s.ago(seconds=22),
        ),
        k.node(
            "ip-10-31-18-203.eu-west-1.compute.internal",
            "eu-west-1b",
            s.ago(days=19),
            s.ago(seconds=9),
        ),
        k.node(
            "ip-10-31-37-90.eu-west-1.compute.internal",
            "eu-west-1c",
            s.ago(days=12),
            s.ago(seconds=31),
        ),
        k.node(
            "ip-10-31-9-144.eu-west-1.compute.internal",
            "eu-west-1a",
            s.ago(days=6),
            s.ago(seconds=14),
        ),
    ]
    nn = [n["metadata"]["name"] for n in nodes]
    s.add(*(k.namespace(n, old) for n in (NS, "platform", "observability", "default")))
    s.add(*nodes)

    # ---- ledger-api: revision 23 (limit 1Gi) rolled out 5 h ago; revision 22 had 2Gi.
    rollout = s.ago(hours=5, minutes=4)
    t_new, t_old = _ledger_template("1Gi"), _ledger_template("2Gi")
    dep = k.deployment(
        "ledger-api",
        NS,
        s.ago(days=410),
        t_new,
        3,
        23,
        {"replicas": 3, "updatedReplicas": 3, "readyReplicas": 3, "availableReplicas": 3},
        [],
        annotations={
            "meta.helm.sh/release-name": "ledger-api",
            "meta.helm.sh/release-namespace": NS,
        },
        labels={
            "app.kubernetes.io/name": "ledger-api",
            "app.kubernetes.io/managed-by": "Helm",
            "helm.sh/chart": "ledger-api-3.14.0",
        },
    )
    h_new, h_old = s.rs_hash(), s.rs_hash()
    rs_new = k.replicaset(dep, h_new, rollout, 23, t_new, 3)
    rs_old = k.replicaset(dep, h_old, s.ago(days=23), 22, t_old, 0)
    dep["status"]["conditions"] = k.dep_conditions(
        s.ago(minutes=6), rollout + timedelta(minutes=3), rs_new["metadata"]["name"]
    )
    s.add(dep, rs_new, rs_old)

    mem = s.metrics
    pods, lives = [], []
    node_of = [nn[0], nn[1], nn[2]]
    for i in range(3):
        created = rollout + timedelta(seconds=40 + 75 * i)
        name = f"ledger-api-{h_new}-{s.pod_suffix()}"
        # simulate container lives: each grows until the cgroup limit is hit
        starts, kills = [created + timedelta(seconds=4)], []
        while True:
            life = timedelta(minutes=s.rng.uniform(41, 53))
            end = starts[-1] + life
            if end >= now:
                break
            kills.append(end)
            starts.append(end + timedelta(seconds=11))
        lives.append((name, starts, kills, node_of[i]))
    # make sure the pods are in different phases of their lives at `now`
    for name, starts, kills, node_name in lives:
        ip = k.pod_ip(s, node_name)
        c = t_new["spec"]["containers"][0]
        last = k.terminated("OOMKilled", 137, starts[-2], kills[-1], name + str(len(kills)))
        st = k.cs_running(c, starts[-1], True, len(kills), last)
        p = k.pod(
            s,
            rs_new,
            name,
            node_name,
            ip,
            starts[0] - timedelta(seconds=4),
            [st],
            True,
            ready_since=starts[-1] + timedelta(seconds=31),
        )
        pods.append(p)
        s.add(p)

    # old revision's pods (gone), for metrics before the rollout
    old_pods = [f"ledger-api-{h_old}-{s.pod_suffix()}" for _ in range(3)]

    # ---- metrics: ledger-api memory, limits, heap, gc, restarts
    def wss_life(frac: float) -> float:
        # container RSS: JVM base + heap committed expansion + native growth
        return 395e6 + frac * (GI - 395e6 - 4e6) + s.rng.uniform(-4e6, 4e6)

    for _idx, (name, starts, kills, _node_name) in enumerate(lives):
        lab = {"namespace": NS, "pod": name, "container": "ledger-api"}
        ws, heap_old, heap_eden, meta, lim, rest, gcc, gcs = [], [], [], [], [], [], [], []
        ends = [*kills, now + timedelta(hours=1)]
        n_gc, sum_gc = 0, 0.0
        restarts = 0
        for t in grid:
            if t < starts[0].timestamp():
                continue
            # which life?
            li = next((j for j, e in enumerate(ends) if t < e.timestamp()), len(ends) - 1)
            if li != restarts:
                restarts = li
                n_gc, sum_gc = 0, 0.0
            st, en = starts[li].timestamp(), ends[li].timestamp()
            if t < st:
                continue
            span = (kills[li].timestamp() - st) if li < len(kills) else 47 * 60
            frac = min((t - st) / span, 0.995)
            ws.append((t, round(wss_life(frac))))
            old_gen = 140e6 + frac * 430e6 + s.rng.uniform(-15e6, 15e6)
            eden = s.rng.uniform(30e6, 360e6)
            heap_old.append((t, round(old_gen)))
            heap_eden.append((t, round(eden)))
            meta.append((t, round(148e6 + min(frac * 4, 1) * 21e6)))
            lim.append((t, GI))
            rest.append((t, restarts))
            n_gc += s.rng.randint(1, 2)
            sum_gc += s.rng.uniform(0.025, 0.045) * 1.5
            gcc.append((t, n_gc))
            gcs.append((t, round(sum_gc, 4)))
        mem.series(
            "container_memory_working_set_bytes",
            "gauge",
            "Current working set of the container in bytes",
            lab,
            ws,
        )
        mem.series(
            "container_spec_memory_limit_bytes",
            "gauge",
            "Memory limit for the container.",
            lab,
            lim[::3],
        )
        mem.series(
            "kube_pod_container_status_restarts",
            "counter",
            "The number of container restarts per container.",
            {
                "namespace": NS,
                "pod": name,
                "container": "ledger-api",
                "uid": k.uid("pod", NS, name),
            },
            rest[::2],
        )
        jl = {"namespace": NS, "pod": name, "application": "ledger-api"}
        mem.series(
            "jvm_memory_used_bytes",
            "gauge",
            "The amount of used memory",
            dict(jl, area="heap", id="G1 Old Gen"),
            heap_old,
        )
        mem.series(
            "jvm_memory_used_bytes",
            "gauge",
            "The amount of used memory",
            dict(jl, area="heap", id="G1 Eden Space"),
            heap_eden,
        )
        mem.series(
            "jvm_memory_used_bytes",
            "gauge",
            "The amount of used memory",
            dict(jl, area="nonheap", id="Metaspace"),
            meta,
        )
        mem.series(
            "jvm_memory_max_bytes",
            "gauge",
            "The maximum amount of memory in bytes that can be used for memory management",
            dict(jl, area="heap", id="G1 Old Gen"),
            [(t, 1610612736) for t, _ in heap_old][::3],
        )
        mem.multi(
            "jvm_gc_pause_seconds",
            "summary",
            "Time spent in GC pause",
            dict(
                jl, action="end of minor GC", cause="G1 Evacuation Pause", gc="G1 Young Generation"
            ),
            {"_count": gcc, "_sum": gcs},
        )
        mem.series(
            "kube_pod_container_status_last_terminated_reason",
            "gauge",
            "Describes the last reason the container was in terminated state.",
            {
                "namespace": NS,
                "pod": name,
                "container": "ledger-api",
                "reason": "OOMKilled",
                "uid": k.uid("pod", NS, name),
            },
            [(t, 1) for t in grid if t >= kills[0].timestamp()][::3],
        )
    # old revision: 2Gi limit, steady ~1.55 GB, no restarts
    for name in old_pods:
        lab = {"namespace": NS, "pod": name, "container": "ledger-api"}
        pts = [
            (t, round(1.52e9 + s.rng.uniform(-3e7, 3e7)))
            for t in grid
            if t < rollout.timestamp() + 120
        ]
        mem.series(
            "container_memory_working_set_bytes",
            "gauge",
            "Current working set of the container in bytes",
            lab,
            pts,
        )
        mem.series(
            "container_spec_memory_limit_bytes",
            "gauge",
            "Memory limit for the container.",
            lab,
            [(t, 2 * GI) for t, _ in pts][::3],
        )

    # ---- neighbours
    def simple_dep(
        name,
        ns,
        image,
        replicas,
        created,
        port,
        req_mem,
        lim_mem,
        env=None,
        restarts=None,
        rev=4,
        days=30,
    ):
        c = k.container(
            name,
            image,
            ports=[{"name": "http", "containerPort": port, "protocol": "TCP"}],
            env=env,
            resources=k.res("100m", req_mem, None, lim_mem),
            readiness=k.http_probe("/healthz", port),
        )
        tm = k.template({"app.kubernetes.io/name": name}, [c])
        d = k.deployment(
            name,
            ns,
            created,
            tm,
            replicas,
            rev,
            {
                "replicas": replicas,
                "updatedReplicas": replicas,
                "readyReplicas": replicas,
                "availableReplicas": replicas,
            },
            [],
        )
        h = s.rs_hash()
        rs = k.replicaset(d, h, s.ago(days=days), rev, tm, replicas)
        d["status"]["conditions"] = k.dep_conditions(
            s.ago(days=min(days, 6)), s.ago(days=min(days, 6)), rs["metadata"]["name"]
        )
        s.add(d, rs)
        out = []
        for i in range(replicas):
            pn = f"{name}-{h}-{s.pod_suffix()}"
            node_name = nn[(i + len(name)) % len(nn)]
            started = s.ago(days=min(days, 5), hours=i)
            last = None
            rc = 0
            if restarts and i == 0:
                rc, last = restarts
            st = k.cs_running(
                c,
                started if not last else k.parse(last["finishedAt"]) + timedelta(seconds=2),
                True,
                rc,
                last,
            )
            p = k.pod(s, rs, pn, node_name, k.pod_ip(s, node_name), started, [st], True)
            s.add(p)
            out.append(p)
        return d, out

    _, gw_pods = simple_dep(
        "payment-gateway",
        NS,
        "registry.quillmark.io/payments/payment-gateway:2.31.0",
        2,
        s.ago(days=500),
        8080,
        "256Mi",
        "512Mi",
        env=[{"name": "LEDGER_URL", "value": "http://ledger-api.payments.svc:8080"}],
    )
    _, fx_pods = simple_dep(
        "fx-rates",
        NS,
        "registry.quillmark.io/payments/fx-rates:1.8.4",
        2,
        s.ago(days=300),
        8080,
        "128Mi",
        "256Mi",
    )
    cs_started = s.ago(days=3, hours=2, minutes=11)
    _, _cs_pods = simple_dep(
        "config-server",
        "platform",
        "registry.quillmark.io/platform/config-server:4.1.0",
        1,
        s.ago(days=700),
        8888,
        "384Mi",
        "768Mi",
        restarts=(1, k.terminated("Error", 143, s.ago(days=5), cs_started, "cfgsrv")),
        days=9,
    )
    _, otel_pods = simple_dep(
        "otel-gateway",
        "observability",
        "otel/opentelemetry-collector-contrib:0.104.0",
        2,
        s.ago(days=250),
        4318,
        "256Mi",
        "1Gi",
    )

    for p in gw_pods + fx_pods:
        lab = {
            "namespace": NS,
            "pod": p["metadata"]["name"],
            "container": p["spec"]["containers"][0]["name"],
        }
        base = 2.1e8 if "gateway" in lab["pod"] else 1.1e8
        mem.series(
            "container_memory_working_set_bytes",
            "gauge",
            "Current working set of the container in bytes",
            lab,
            [(t, round(base + s.rng.uniform(-6e6, 6e6))) for t in grid],
        )

    # services
    s.add(
        k.service(
            "ledger-api",
            NS,
            s.ago(days=410),
            {"app.kubernetes.io/name": "ledger-api"},
            [{"name": "http", "port": 8080, "protocol": "TCP", "targetPort": "http"}],
            "172.20.81.14",
        )
    )
    s.add(
        k.endpoints(
            "ledger-api",
            NS,
            s.ago(days=410),
            pods,
            [{"name": "http", "port": 8080, "protocol": "TCP"}],
        )
    )
    s.add(
        k.service(
            "payment-gateway",
            NS,
            s.ago(days=500),
            {"app.kubernetes.io/name": "payment-gateway"},
            [{"name": "http", "port": 8080, "protocol": "TCP", "targetPort": "http"}],
            "172.20.40.201",
        )
    )
    s.add(
        k.configmap(
            "ledger-api-gc-notes",
            NS,
            s.ago(days=90),
            {
                "README": "GC tuning history: G1 with MaxGCPauseMillis=200 since 5.2.0 "
                "(was ParallelGC). Humongous allocations come from statement exports."
            },
        )
    )

    # ---- events (last hour)
    evs = []
    for (name, _starts, kills, node_name), p in zip(lives, pods, strict=False):
        recent = [x for x in kills if x > s.ago(minutes=60)]
        for kt in recent:
            pid = 7 + s.rng.randint(0, 30)
            evs.append(
                k.event(
                    "default",
                    nodes[nn.index(node_name)],
                    "OOMKilling",
                    f"Memory cgroup out of memory: Killed process {pid} (java) "
                    f"total-vm:4817224kB, anon-rss:{1039880 + s.rng.randint(0, 6000)}kB, "
                    f"file-rss:24112kB, shmem-rss:0kB, UID:10001 pgtables:2744kB oom_score_adj:969",
                    kt,
                    kt,
                    1,
                    "Warning",
                    "kernel-monitor",
                    node_name,
                )
            )
        fp = "spec.containers{ledger-api}"
        if recent:
            first = recent[0]
            evs.append(
                k.event(
                    NS,
                    p,
                    "BackOff",
                    "Back-off restarting failed container ledger-api in pod "
                    f"{name}_{NS}({p['metadata']['uid']})",
                    first + timedelta(seconds=1),
                    recent[-1] + timedelta(seconds=1),
                    len(recent),
                    "Warning",
                    "kubelet",
                    node_name,
                    fp,
                )
            )
            evs.append(
                k.event(
                    NS,
                    p,
                    "Pulled",
                    f'Container image "{IMG}" already present on machine',
                    first + timedelta(seconds=11),
                    recent[-1] + timedelta(seconds=11),
                    len(recent),
                    "Normal",
                    "kubelet",
                    node_name,
                    fp,
                )
            )
            evs.append(
                k.event(
                    NS,
                    p,
                    "Created",
                    "Created container ledger-api",
                    first + timedelta(seconds=11),
                    recent[-1] + timedelta(seconds=11),
                    len(recent),
                    "Normal",
                    "kubelet",
                    node_name,
                    fp,
                )
            )
            evs.append(
                k.event(
                    NS,
                    p,
                    "Started",
                    "Started container ledger-api",
                    first + timedelta(seconds=12),
                    recent[-1] + timedelta(seconds=12),
                    len(recent),
                    "Normal",
                    "kubelet",
                    node_name,
                    fp,
                )
            )
            evs.append(
                k.event(
                    NS,
                    p,
                    "Unhealthy",
                    f'Readiness probe failed: Get "http://{p["status"]["podIP"]}:8081/actuator/hea'
                    'lth/readiness": '
                    f"dial tcp {p['status']['podIP']}:8081: connect: connection refused",
                    first + timedelta(seconds=31),
                    recent[-1] + timedelta(seconds=32),
                    2 * len(recent),
                    "Warning",
                    "kubelet",
                    node_name,
                    fp,
                )
            )
    fxp = fx_pods[0]
    evs.append(
        k.event(
            NS,
            fxp,
            "Unhealthy",
            f'Readiness probe failed: Get "http://{fxp["status"]["podIP"]}:8080/healthz": '
            "context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            s.ago(minutes=44),
            s.ago(minutes=44),
            1,
            "Warning",
            "kubelet",
            fxp["spec"]["nodeName"],
            "spec.containers{fx-rates}",
        )
    )
    s.add(*evs)

    # ---- logs
    lt0 = s.ago(hours=2)
    for name, starts, kills, _node_name in lives:
        ends = [*kills, now]
        for li, st in enumerate(starts):
            en = ends[li]
            if en < lt0:
                continue
            lines = _startup(st)
            t = st + timedelta(seconds=30)
            gc = 1
            while t < en - timedelta(seconds=20):
                frac = (t - st) / (en - st) if li < len(kills) else (t - st) / timedelta(minutes=47)
                committed = int(600 + frac * 640)
                before = int(committed * s.rng.uniform(0.62, 0.8))
                after = int(180 + frac * 420)
                ms = s.rng.uniform(18, 48)
                kind = "Pause Young (Normal) (G1 Evacuation Pause)"
                if s.rng.random() < 0.06:
                    kind = "Pause Young (Concurrent Start) (G1 Humongous Allocation)"
                    ms = s.rng.uniform(160, 260)
                lines.append(
                    (
                        t,
                        "INFO",
                        f"[{_jtime(t)}] GC({gc}) {kind} {before}M->{after}M({committed}M) "
                        f"{ms:.3f}ms",
                    )
                )
                if s.rng.random() < 0.25:
                    lines.append(
                        (
                            t + timedelta(seconds=3),
                            "INFO",
                            f"{_stime(t)}  INFO 1 --- [ledger-api] "
                            f"[nio-8080-exec-{s.rng.randint(1, 40)}] "
                            "c.q.ledger.api.EntryController      : posted batch "
                            f"size={s.rng.randint(20, 400)} "
                            f"account=acct_{s.rng.randint(10000, 99999)}",
                        )
                    )
                if s.rng.random() < 0.04:
                    lines.append(
                        (
                            t + timedelta(seconds=5),
                            "WARN",
                            f"{_stime(t)}  WARN 1 --- [ledger-api] "
                            f"[nio-8080-exec-{s.rng.randint(1, 40)}] "
                            "c.q.ledger.api.StatementExport      : statement export for "
                            f"acct_{s.rng.randint(10000, 99999)} "
                            f"took {s.rng.randint(1100, 1900)} ms",
                        )
                    )
                gc += 1
                t += timedelta(seconds=s.rng.randint(35, 70))
            for lt, lvl, msg in lines:
                if lt >= lt0:
                    s.log(lt, NS, name, "ledger-api", "ledger-api", lvl.lower(), msg)
            text = [m for _, _, m in lines]
            if li == len(starts) - 1:
                s.podlog(NS, name, "ledger-api", text)
            elif li == len(starts) - 2:
                s.podlog(NS, name, "ledger-api", text, previous=True)
        # payment-gateway sees resets at each kill
        for kt in kills:
            if kt < lt0:
                continue
            gp = gw_pods[s.rng.randint(0, 1)]["metadata"]["name"]
            for j in range(s.rng.randint(3, 7)):
                s.log(
                    kt + timedelta(seconds=j * 2 + 0.3),
                    NS,
                    gp,
                    "payment-gateway",
                    "payment-gateway",
                    "error",
                    "POST http://ledger-api.payments.svc:8080/v1/entries failed: read tcp "
                    f"10.31.{s.rng.randint(70, 90)}.{s.rng.randint(3, 250)}:"
                    f"{s.rng.randint(33000, 60000)}->"
                    f"172.20.81.14:8080: read: connection reset by peer",
                    **{"http.response.status_code": 502, "error.type": "ECONNRESET"},
                )
    t = lt0
    while t < now:
        fp = fx_pods[s.rng.randint(0, 1)]["metadata"]["name"]
        s.log(
            t,
            NS,
            fp,
            "fx-rates",
            "fx-rates",
            "warn",
            f"rate feed stale for EURGBP, serving cached rate (age {s.rng.randint(61, 95)}s)",
        )
        t += timedelta(seconds=s.rng.randint(240, 420))
    t = lt0
    while t < now:
        op = otel_pods[s.rng.randint(0, 1)]["metadata"]["name"]
        s.log(
            t,
            "observability",
            op,
            "otel-gateway",
            "otel-gateway",
            "info",
            'Exporting succeeded	{"kind": "exporter", "data_type": "metrics", "name": '
            '"prometheusremotewrite"}',
        )
        t += timedelta(minutes=10)

    s.write(
        "ledger-api restarting every ~45 minutes",
        "ledger-api in payments has been restarting roughly every 45 min since this morning and "
        "payment-gateway throws connection resets at each restart. GC logs show pauses over 200ms "
        "(humongous allocations), heap dashboards look OK though. I think G1 needs tuning, maybe "
        "we switch ledger to ZGC? Can you confirm it's GC?\n",
        {
            "category": "oom_killed",
            "culprit": {"kind": "Deployment", "namespace": NS, "name": "ledger-api"},
            "evidence": ["OOMKilled", "137", "1Gi", "-Xmx1536m"],
            "fix": "Revision 23 cut ledger-api's memory limit from 2Gi to 1Gi while JAVA_OPTS "
            "still sets "
            "-Xmx1536m: restore the 2Gi limit, or size the heap under the limit "
            "(e.g. -XX:MaxRAMPercentage=65 instead of a fixed -Xmx).",
        },
    )


def _startup(st) -> list:
    st2 = st + timedelta(seconds=1)
    return [
        (st, "INFO", f"[{_jtime(st)}] Using G1"),
        (
            st2,
            "INFO",
            f"{_stime(st2)}  INFO 1 --- [ledger-api] [           main] "
            "c.q.ledger.LedgerApiApplication          : "
            "Starting LedgerApiApplication v5.9.2 using Java 17.0.11 with PID 1 "
            "(/app/ledger-api.jar started by app in /app)",
        ),
        (
            st2,
            "INFO",
            f"{_stime(st2)}  INFO 1 --- [ledger-api] [           main] "
            "c.q.ledger.LedgerApiApplication          : "
            'The following 1 profile is active: "prod"',
        ),
        (
            st + timedelta(seconds=9),
            "INFO",
            f"{_stime(st + timedelta(seconds=9))}  INFO 1 --- [ledger-api] [           main] "
            "o.s.b.w.embedded.tomcat.TomcatWebServer  : Tomcat initialized with port 8080 (http)",
        ),
        (
            st + timedelta(seconds=14),
            "INFO",
            f"{_stime(st + timedelta(seconds=14))}  INFO 1 --- [ledger-api] [           main] "
            "com.zaxxer.hikari.HikariDataSource       : HikariPool-1 - Start completed.",
        ),
        (
            st + timedelta(seconds=22),
            "INFO",
            f"{_stime(st + timedelta(seconds=22))}  INFO 1 --- [ledger-api] [           main] "
            "o.s.b.w.embedded.tomcat.TomcatWebServer  : Tomcat started on port 8080 (http) with "
            "context path ''",
        ),
        (
            st + timedelta(seconds=23),
            "INFO",
            f"{_stime(st + timedelta(seconds=23))}  INFO 1 --- [ledger-api] [           main] "
            "c.q.ledger.LedgerApiApplication          : Started LedgerApiApplication in 21.384 "
            "seconds "
            "(process running for 23.017)",
        ),
    ]


def _jtime(t) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}+0000"


def _stime(t) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.") + f"{t.microsecond // 1000:03d}Z"
