"""5. oom_killed at the other hop: a Redis StatefulSet with no maxmemory grows into its limit and is
OOM-killed."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from ._kit import (
    Cluster,
    Metrics,
    Scenario,
    add_nodes,
    configmap,
    container,
    cstatus,
    deploy_status,
    endpoints,
    event,
    http_probe,
    iso,
    jitter,
    namespace,
    pod,
    pod_template,
    rng,
    service,
    statefulset,
    terminated,
)

SID = "session-cache-redis-oom"
NOW = "2026-11-21T09:50:00Z"
LIMIT = 3 * 1024**3
KILLS = [196, 124, 52]  # minutes before now
GROWTH = 0.36 * 1024**3 / 3600  # bytes per second
LOADED = 2.55 * 1024**3
LOAD_S = 38


def redis_ts(dt: datetime) -> str:
    return dt.strftime("%d %b %Y %H:%M:%S.") + f"{dt.microsecond // 1000:03d}"


def build() -> Scenario:
    sc = Scenario(SID, NOW)
    ck = sc.clock
    cl = Cluster(sc, pod_net="10.110")
    for ns in ("default", "shop", "cache", "ops"):
        sc.add(namespace(ns, ck.t(days=420)))
    nodes = add_nodes(
        cl,
        ck,
        "eu-north-1",
        [("60.17", "a", "30"), ("61.84", "b", "31"), ("62.203", "c", "32"), ("60.111", "a", "33")],
        itype="r6i.xlarge",
        cpu="4",
        memory="32329544Ki",
        alloc_cpu="3920m",
        alloc_mem="31312712Ki",
    )
    nowts = ck.now.timestamp()
    kill_ts = [nowts - k * 60 for k in KILLS]
    restart_ts = [k + 2 for k in kill_ts]

    # ------------------------------------------------------------ cache/session-cache (the culprit)
    sc.add(
        configmap(
            "cache",
            "session-cache-config",
            ck.t(days=380),
            {
                "redis.conf": (
                    "bind 0.0.0.0\nport 6379\nprotected-mode no\ntcp-keepalive 300\ndatabases 4\n"
                    "save 300 100\nsave 60 10000\ndbfilename dump.rdb\ndir /data\nappendonly no\n"
                    "# maxmemory <bytes>\nmaxmemory-policy allkeys-lru\nlazyfree-lazy-eviction "
                    "yes\n"
                )
            },
            labels={"app": "session-cache"},
        )
    )
    redis_c = container(
        "redis",
        "docker.io/library/redis:7.2.5",
        command=["redis-server", "/etc/redis/redis.conf"],
        cpu_req="1",
        mem_req="3Gi",
        cpu_lim="1",
        mem_lim="3Gi",
        ports=[("redis", 6379)],
        readiness={
            "exec": {"command": ["sh", "-c", "redis-cli ping | grep -q PONG"]},
            "initialDelaySeconds": 5,
            "periodSeconds": 5,
            "timeoutSeconds": 2,
            "successThreshold": 1,
            "failureThreshold": 3,
        },
        liveness={
            "tcpSocket": {"port": 6379},
            "initialDelaySeconds": 30,
            "periodSeconds": 10,
            "timeoutSeconds": 2,
            "successThreshold": 1,
            "failureThreshold": 6,
        },
        volume_mounts=[
            {"name": "data", "mountPath": "/data"},
            {"name": "config", "mountPath": "/etc/redis"},
        ],
    )
    exp_c = container(
        "redis-exporter",
        "docker.io/oliver006/redis_exporter:v1.62.0",
        cpu_req="50m",
        mem_req="64Mi",
        cpu_lim="50m",
        mem_lim="64Mi",
        ports=[("metrics", 9121)],
        env=[{"name": "REDIS_ADDR", "value": "redis://localhost:6379"}],
    )
    tpl = pod_template(
        {"app": "session-cache"},
        [redis_c, exp_c],
        volumes=[
            {"name": "config", "configMap": {"name": "session-cache-config", "defaultMode": 420}}
        ],
        annotations={"prometheus.io/scrape": "true", "prometheus.io/port": "9121"},
    )
    sts = statefulset(
        "cache",
        "session-cache",
        ck.t(days=380),
        tpl,
        replicas=1,
        ready=1,
        service="session-cache",
        revision_hash="6b8d9f7c5c",
        volume_claims=[
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": "data"},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "gp3",
                    "resources": {"requests": {"storage": "20Gi"}},
                },
            }
        ],
    )
    sc.add(sts)
    node_r = nodes[2]
    created = ck.t(days=4, hours=6)
    last_start = iso(ck.ago(seconds=nowts - restart_ts[-1]))
    rpod = pod(
        sts,
        "session-cache-0",
        created,
        tpl,
        node_name=node_r,
        pod_ip=cl.pod_ip(node_r),
        host_ip=cl.host_ip(node_r),
        ready_since=iso(ck.ago(seconds=nowts - restart_ts[-1] - LOAD_S - 4)),
        statuses=[
            cstatus(
                "redis",
                redis_c["image"],
                restarts=3,
                running_since=last_start,
                pod_seed="sc0",
                last_terminated=terminated(
                    "OOMKilled",
                    137,
                    iso(ck.ago(seconds=nowts - restart_ts[-2])),
                    iso(ck.ago(seconds=nowts - kill_ts[-1])),
                    seed="sc0",
                ),
            ),
            cstatus(
                "redis-exporter",
                exp_c["image"],
                running_since=iso(
                    datetime.fromisoformat(created[:-1]).replace(tzinfo=UTC) + timedelta(seconds=3)
                ),
                pod_seed="sc0",
            ),
        ],
        labels_extra={
            "controller-revision-hash": "session-cache-6b8d9f7c5c",
            "statefulset.kubernetes.io/pod-name": "session-cache-0",
        },
    )
    sc.add(rpod)
    rsvc = service(
        "cache",
        "session-cache",
        ck.t(days=380),
        selector={"app": "session-cache"},
        ports=[("redis", 6379, "redis"), ("metrics", 9121, "metrics")],
        cluster_ip="172.20.150.66",
    )
    sc.add(rsvc, endpoints(rsvc, [rpod]))
    sc.add(
        {
            "apiVersion": "v1",
            "kind": "PersistentVolumeClaim",
            "metadata": {
                "name": "data-session-cache-0",
                "namespace": "cache",
                "uid": "4f1c2b7e-9d3a-4c55-8e61-2a7b9c0d1e3f",
                "creationTimestamp": ck.t(days=380),
                "labels": {"app": "session-cache"},
                "annotations": {
                    "pv.kubernetes.io/bind-completed": "yes",
                    "volume.kubernetes.io/storage-provisioner": "ebs.csi.aws.com",
                },
            },
            "spec": {
                "accessModes": ["ReadWriteOnce"],
                "storageClassName": "gp3",
                "volumeMode": "Filesystem",
                "resources": {"requests": {"storage": "20Gi"}},
                "volumeName": "pvc-4f1c2b7e-9d3a-4c55-8e61-2a7b9c0d1e3f",
            },
            "status": {
                "phase": "Bound",
                "accessModes": ["ReadWriteOnce"],
                "capacity": {"storage": "20Gi"},
            },
        }
    )
    fp = "spec.containers{redis}"
    first_restart = ck.ago(seconds=nowts - restart_ts[0])
    sc.add(
        event(
            rpod,
            "Pulled",
            f'Container image "{redis_c["image"]}" already present on machine',
            first=iso(first_restart),
            last=last_start,
            count=3,
            component="kubelet",
            host=node_r,
            field_path=fp,
        ),
        event(
            rpod,
            "Created",
            "Created container redis",
            first=iso(first_restart),
            last=last_start,
            count=3,
            component="kubelet",
            host=node_r,
            field_path=fp,
        ),
        event(
            rpod,
            "Started",
            "Started container redis",
            first=iso(first_restart),
            last=last_start,
            count=3,
            component="kubelet",
            host=node_r,
            field_path=fp,
        ),
        event(
            rpod,
            "Unhealthy",
            "Readiness probe failed: LOADING Redis is loading the dataset in memory",
            first=iso(first_restart + timedelta(seconds=7)),
            last=iso(ck.ago(seconds=nowts - restart_ts[-1] - 33)),
            count=21,
            type_="Warning",
            component="kubelet",
            host=node_r,
            field_path=fp,
        ),
        event(
            cl.nodes[2],
            "OOMKilling",
            "Memory cgroup out of memory: Killed process 28417 (redis-server) total-vm:3488212kB, "
            "anon-rss:3141796kB, "
            "file-rss:2816kB, shmem-rss:0kB, UID:999 pgtables:6512kB oom_score_adj:-997",
            first=iso(ck.ago(seconds=nowts - kill_ts[0])),
            last=iso(ck.ago(seconds=nowts - kill_ts[-1])),
            count=3,
            type_="Warning",
            component="kernel-monitor",
            host=node_r,
        ),
    )

    # ------------------------------------------------------------ shop: the callers
    sf_c = container(
        "storefront",
        "registry.lingonberry.se/shop/storefront:8.2.0",
        cpu_req="500m",
        mem_req="512Mi",
        cpu_lim="2",
        mem_lim="1Gi",
        ports=[("http", 3000)],
        env=[
            {
                "name": "SESSION_REDIS_URL",
                "value": "redis://session-cache.cache.svc.cluster.local:6379/0",
            },
            {"name": "CART_API_URL", "value": "http://cart-api.shop.svc.cluster.local"},
        ],
        readiness=http_probe("/healthz", "http"),
    )
    sf_old = dict(sf_c, image="registry.lingonberry.se/shop/storefront:8.1.3")
    sf = cl.deployment(
        "shop",
        "storefront",
        [sf_c],
        replicas=3,
        created=ck.t(days=420),
        rs_created=ck.t(hours=14, minutes=20),
        revision=212,
        hash_="7d49c8b6f5",
        change_cause="storefront 8.2.0: gift-card checkout, new header",
        old=[("5f8c7b9d64", ck.t(days=6), 211, [sf_old], 0)],
    )
    ssvc = service(
        "shop",
        "storefront",
        ck.t(days=420),
        selector={"app": "storefront"},
        ports=[("http", 80, "http")],
        cluster_ip="172.20.3.30",
    )
    sc.add(ssvc, endpoints(ssvc, sf["pods"]))
    ca_c = container(
        "cart-api",
        "registry.lingonberry.se/shop/cart-api:3.5.1",
        cpu_req="250m",
        mem_req="256Mi",
        cpu_lim="1",
        mem_lim="512Mi",
        ports=[("http", 8080)],
        env=[
            {"name": "REDIS_ADDR", "value": "session-cache.cache.svc.cluster.local:6379"},
            {"name": "REDIS_DB", "value": "1"},
        ],
        readiness=http_probe("/healthz", "http"),
    )
    ca = cl.deployment(
        "shop",
        "cart-api",
        [ca_c],
        replicas=2,
        created=ck.t(days=420),
        rs_created=ck.t(days=3, hours=2),
        revision=45,
        hash_="6c8f5d7b9",
    )
    csvc = service(
        "shop",
        "cart-api",
        ck.t(days=420),
        selector={"app": "cart-api"},
        ports=[("http", 80, "http")],
        cluster_ip="172.20.3.81",
    )
    sc.add(csvc, endpoints(csvc, ca["pods"]))
    # shop/recommendations: an old liveness restart (decoy)
    rc_c = container(
        "recommendations",
        "registry.lingonberry.se/shop/recommendations:1.12.0",
        cpu_req="500m",
        mem_req="1Gi",
        cpu_lim="1",
        mem_lim="2Gi",
        ports=[("http", 8080)],
        liveness=http_probe("/healthz", "http", delay=30, period=10, timeout=2),
        readiness=http_probe("/healthz", "http"),
    )
    t_rc = ck.ago(days=1, hours=9)
    cl.deployment(
        "shop",
        "recommendations",
        [rc_c],
        replicas=1,
        created=ck.t(days=200),
        rs_created=ck.t(days=5),
        revision=30,
        hash_="84bc7f6d9",
        pod_status=lambda i, n, nd: {
            "containers": {
                "recommendations": {
                    "restarts": 1,
                    "running_since": iso(t_rc),
                    "last_terminated": terminated(
                        "Error", 143, ck.t(days=5), iso(t_rc - timedelta(seconds=1)), seed=n
                    ),
                }
            }
        },
    )
    # ops/log-compactor: Pending for memory (decoy)
    lc_c = container(
        "log-compactor",
        "registry.lingonberry.se/ops/log-compactor:0.9.2",
        cpu_req="1",
        mem_req="28Gi",
        cpu_lim="2",
        mem_lim="28Gi",
    )
    t_lc = ck.ago(minutes=47)
    msg = (
        "0/4 nodes are available: 4 Insufficient memory. preemption: 0/4 nodes are available: "
        "4 No preemption victims found for incoming pod."
    )
    lc = cl.deployment(
        "ops",
        "log-compactor",
        [lc_c],
        replicas=1,
        created=ck.t(days=20),
        rs_created=iso(t_lc),
        revision=3,
        hash_="59c6d8f7b",
        change_cause="log-compactor: bigger in-memory index (28Gi)",
        pod_status=lambda i, n, nd: {"scheduled": False, "phase": "Pending", "sched_message": msg},
    )
    lc["deployment"]["status"] = {
        "observedGeneration": 3,
        **deploy_status(
            1,
            0,
            available=0,
            rs_name=lc["current_rs"]["metadata"]["name"],
            progress_time=iso(t_lc + timedelta(minutes=10)),
            available_time=iso(t_lc),
            progressing=("False", "ProgressDeadlineExceeded", None),
            available_cond=("False", "MinimumReplicasUnavailable"),
        ),
    }
    lc["current_rs"]["status"] = {"replicas": 1, "fullyLabeledReplicas": 1, "observedGeneration": 1}
    lcp = lc["pods"][0]
    sc.add(
        event(
            lcp,
            "FailedScheduling",
            msg,
            first=iso(t_lc),
            last=ck.t(minutes=2),
            count=14,
            type_="Warning",
            component="default-scheduler",
        )
    )

    # ------------------------------------------------------------ memory model
    def mem(t: float) -> float | None:
        """redis used memory at t (None while the container is down)."""
        prev_start = None
        for k, s in zip(kill_ts, restart_ts, strict=False):
            if t < k:
                break
            prev_start = s
        if prev_start is None:  # before the first kill in view: growing towards it
            return LIMIT - 12e6 - (kill_ts[0] - t) * GROWTH
        if t < prev_start:
            return None
        since = t - prev_start
        if since < LOAD_S:
            return 40e6 + (LOADED - 40e6) * since / LOAD_S
        return LOADED + (since - LOAD_S) * GROWTH

    def used(t):
        v = mem(t)
        return None if v is None else min(v, LIMIT - 12e6)

    start = ck.ago(minutes=180)
    m = Metrics(start, ck.now, 60)
    labr = {"namespace": "cache", "pod": "session-cache-0", "container": "redis", "node": node_r}
    jw = jitter("wss", 4e6)
    m.gauge(
        "container_memory_working_set_bytes",
        "Current working set in bytes.",
        labr,
        lambda t: (
            None if used(t) is None else round(min(LIMIT - 2e6, used(t) * 1.012 + 9e6 + jw(t)))
        ),
    )
    m.gauge(
        "kube_pod_container_resource_limits",
        "The number of requested limit resource by a container.",
        {
            "namespace": "cache",
            "pod": "session-cache-0",
            "container": "redis",
            "node": node_r,
            "resource": "memory",
            "unit": "byte",
        },
        lambda t: LIMIT,
    )
    m.counter_values(
        "kube_pod_container_status_restarts",
        "The number of container restarts per container.",
        {"namespace": "cache", "pod": "session-cache-0", "container": "redis"},
        lambda t: sum(1 for s in restart_ts if s <= t),
    )
    m.gauge(
        "kube_pod_container_status_last_terminated_reason",
        "Describes the last reason the container was in terminated state.",
        {
            "namespace": "cache",
            "pod": "session-cache-0",
            "container": "redis",
            "reason": "OOMKilled",
        },
        lambda t: 1,
    )
    lab = {"namespace": "cache", "pod": "session-cache-0", "instance": "localhost:6379"}
    m.gauge(
        "redis_memory_used_bytes",
        "memory_used_bytes metric",
        lab,
        lambda t: None if used(t) is None else round(used(t)),
    )
    m.gauge("redis_memory_max_bytes", "memory_max_bytes metric", lab, lambda t: 0)
    m.gauge(
        "redis_up",
        "Information about the Redis instance",
        lab,
        lambda t: 0 if used(t) is None else 1,
    )
    m.gauge(
        "redis_db_keys",
        "Total number of keys by DB",
        {**lab, "db": "db0"},
        lambda t: None if used(t) is None else round(used(t) / 640),
    )
    m.gauge(
        "redis_connected_clients",
        "connected_clients metric",
        lab,
        lambda t: None if used(t) is None else 38 + int(jw(t) / 1e6),
    )

    def ev_rate(t):
        return 0.0

    for_reset = []
    m.counter(
        "redis_evicted_keys", "evicted_keys metric", lab, ev_rate, start_value=0.0, resets=for_reset
    )
    m.gauge(
        "redis_uptime_in_seconds",
        "uptime_in_seconds metric",
        lab,
        lambda t: (
            None
            if used(t) is None
            else round(t - max([s for s in restart_ts if s <= t] or [nowts - 4 * 86400 - 6 * 3600]))
        ),
    )

    def down(t):  # fraction of the minute before t when redis was unreachable
        for k, s in zip(kill_ts, restart_ts, strict=False):
            if k <= t <= s + LOAD_S + 60:
                return 1.0
        return 0.0

    for p in sf["pods"]:
        pl = {"namespace": "shop", "pod": p["metadata"]["name"], "service": "storefront"}
        m.counter(
            "http_requests",
            "Total HTTP requests served.",
            {**pl, "code": "200"},
            lambda t: 41.0 * (1 - 0.55 * down(t)),
        )
        m.counter(
            "http_requests",
            "Total HTTP requests served.",
            {**pl, "code": "500"},
            lambda t: 0.02 + 41.0 * 0.55 * down(t),
            start_value=300.0,
        )
        jm = jitter(p["metadata"]["name"], 5e6)
        m.gauge(
            "container_memory_working_set_bytes",
            "Current working set in bytes.",
            {
                "namespace": "shop",
                "pod": p["metadata"]["name"],
                "container": "storefront",
                "node": p["spec"]["nodeName"],
            },
            lambda t, jm=jm: 412e6 + jm(t),
        )
    for p in ca["pods"]:
        pl = {"namespace": "shop", "pod": p["metadata"]["name"], "service": "cart-api"}
        m.counter(
            "http_requests",
            "Total HTTP requests served.",
            {**pl, "code": "200"},
            lambda t: 18.0 * (1 - 0.7 * down(t)),
        )
        m.counter(
            "http_requests",
            "Total HTTP requests served.",
            {**pl, "code": "503"},
            lambda t: 18.0 * 0.7 * down(t),
            start_value=120.0,
        )
    sc.metrics = m

    # ------------------------------------------------------------ logs
    r = rng(SID)
    L = sc.logs
    rip = "172.20.150.66"

    def R(t: float) -> datetime:
        return ck.ago(seconds=nowts - t)

    def redis_lines(
        t_start: float, t_end: float, prev_kill_age: int
    ) -> list[tuple[datetime, str, str]]:
        """The redis-server output of one instance: start-up, RDB load, periodic saves."""
        out = []
        d0 = R(t_start)

        def c(dt, role, txt, lvl="info"):
            out.append((dt, f"1:{role} {redis_ts(dt)} {txt}", lvl))

        c(d0, "C", "# oO0OoO0OoO0Oo Redis is starting oO0OoO0OoO0Oo", "warn")
        c(
            d0,
            "C",
            "# Redis version=7.2.5, bits=64, commit=00000000, modified=0, pid=1, just started",
            "warn",
        )
        c(d0, "C", "# Configuration loaded", "warn")
        c(d0 + timedelta(milliseconds=1), "M", "* monotonic clock: POSIX clock_gettime")
        c(d0 + timedelta(milliseconds=2), "M", "* Running mode=standalone, port=6379.")
        c(
            d0 + timedelta(milliseconds=2),
            "M",
            "# WARNING Memory overcommit must be enabled! Without it, a background save or "
            "replication may fail under low memory condition. Being disabled, it can also cause "
            "failures without low memory condition, see "
            "https://github.com/jemalloc/jemalloc/issues/1328. To fix this issue add "
            "'vm.overcommit_memory = 1' to /etc/sysctl.conf and then reboot or run the command "
            "'sysctl vm.overcommit_memory=1' for this to take effect.",
            "warn",
        )
        c(d0 + timedelta(milliseconds=3), "M", "* Server initialized")
        c(d0 + timedelta(milliseconds=3), "M", "* Loading RDB produced by version 7.2.5")
        c(d0 + timedelta(milliseconds=3), "M", f"* RDB age {prev_kill_age} seconds")
        c(
            d0 + timedelta(milliseconds=3),
            "M",
            f"* RDB memory usage when created {LOADED / 1024**2:.2f} Mb",
        )
        keys = int(LOADED / 640)
        c(
            d0 + timedelta(seconds=LOAD_S, milliseconds=385),
            "M",
            f"* Done loading RDB, keys loaded: {keys}, keys expired: 0.",
        )
        c(
            d0 + timedelta(seconds=LOAD_S, milliseconds=385),
            "M",
            f"* DB loaded from disk: {LOAD_S}.385 seconds",
        )
        c(
            d0 + timedelta(seconds=LOAD_S, milliseconds=385),
            "M",
            "* Ready to accept connections tcp",
        )
        t = t_start + LOAD_S + 61
        while t < t_end:
            d = R(t)
            mb = (used(t) or 0) / 1024**2
            c(d, "M", "* 10000 changes in 60 seconds. Saving...")
            cpid = r.randint(200, 9000)
            c(d + timedelta(milliseconds=31), "M", f"* Background saving started by pid {cpid}")
            dt_save = 24 + mb / 200
            if t + dt_save < t_end:
                out.append(
                    (
                        d + timedelta(seconds=dt_save),
                        f"{cpid}:C {redis_ts(d + timedelta(seconds=dt_save))} * Fork CoW for RDB: "
                        f"current {r.randint(60, 140)} MB, peak {r.randint(140, 260)} MB, average "
                        f"{r.randint(50, 110)} MB",
                        "info",
                    )
                )
                ds = d + timedelta(seconds=dt_save - 0.05)
                out.append((ds, f"{cpid}:C {redis_ts(ds)} * DB saved on disk", "info"))
                c(
                    d + timedelta(seconds=dt_save, milliseconds=90),
                    "M",
                    "* Background saving terminated with success",
                )
            t += 300
        return sorted(out, key=lambda x: x[0])

    inst = []
    for i, s in enumerate(restart_ts):
        end = kill_ts[i + 1] if i + 1 < len(kill_ts) else nowts
        inst.append((s, end, redis_lines(s, end, 180 + 17 * i)))
    for _s, _end, lines in inst:
        for dt, txt, lvl in lines:
            if dt >= start:
                L.add(dt, "cache", "session-cache-0", "redis", "session-cache", lvl, txt)
    sc.pod_log("cache", "session-cache-0", "redis", [txt for _, txt, _ in inst[-1][2]])
    sc.pod_log(
        "cache", "session-cache-0", "redis", [txt for _, txt, _ in inst[-2][2]], previous=True
    )

    for k, _s in zip(kill_ts, restart_ts, strict=False):
        for p in sf["pods"]:
            pn = p["metadata"]["name"]
            L.add(
                R(k + r.uniform(0.01, 0.2)),
                "shop",
                pn,
                "storefront",
                "storefront",
                "error",
                "[ioredis] Unhandled error event: Error: read ECONNRESET\n    at TCP.onStreamRead "
                "(node:internal/stream_base_commons:217:20)",
                error__type="Error",
            )
            for j in range(int(LOAD_S / 4)):
                L.add(
                    R(k + 1 + j * 4 + r.random()),
                    "shop",
                    pn,
                    "storefront",
                    "storefront",
                    "error",
                    f"[ioredis] Unhandled error event: Error: connect ECONNREFUSED {rip}:6379"
                    if j == 0
                    else (
                        "session lookup failed: ReplyError: LOADING Redis is loading the dataset "
                        "in memory"
                    ),
                    error__type="Error",
                )
            for _j in range(6):
                L.add(
                    R(k + r.uniform(0, LOAD_S + 50)),
                    "shop",
                    pn,
                    "storefront",
                    "storefront",
                    "warn",
                    "GET /checkout 500: session store unavailable, user treated as signed out",
                    http__response__status_code=500,
                )
        for p in ca["pods"]:
            pn = p["metadata"]["name"]
            L.add(
                R(k + r.uniform(0.01, 0.2)),
                "shop",
                pn,
                "cart-api",
                "cart-api",
                "error",
                f"redis: GET cart:{r.randint(10**7, 10**8)}: read tcp "
                f"{p['status']['podIP']}:{r.randint(32768, 60999)}->{rip}:6379: read: connection "
                "reset by peer",
                http__response__status_code=503,
            )
            L.add(
                R(k + 1.5),
                "shop",
                pn,
                "cart-api",
                "cart-api",
                "error",
                f"redis: dial tcp {rip}:6379: connect: connection refused",
                http__response__status_code=503,
            )
            L.add(
                R(k + 12),
                "shop",
                pn,
                "cart-api",
                "cart-api",
                "error",
                "redis: LOADING Redis is loading the dataset in memory",
                http__response__status_code=503,
            )
    for minute in range(180, -1, -1):
        t0 = ck.ago(minutes=minute)
        if minute % 5 == 0:
            for p in sf["pods"]:
                L.add(
                    t0 + timedelta(seconds=r.randint(0, 59)),
                    "shop",
                    p["metadata"]["name"],
                    "storefront",
                    "storefront",
                    "info",
                    f"served {r.randint(11800, 12900)} requests in 300s, p95 "
                    f"{r.randint(90, 130)}ms",
                )
        if r.random() < 0.15:
            p = sf["pods"][r.randrange(3)]
            L.add(
                t0 + timedelta(seconds=r.randint(0, 59)),
                "shop",
                p["metadata"]["name"],
                "storefront",
                "storefront",
                "warn",
                "(node:1) Warning: Accessing non-existent property 'padLevels' of module exports "
                "inside circular dependency",
            )

    sc.meta = {
        "title": "Shoppers logged out, ECONNRESET from the session store",
        "report": (
            "since ~7am customers get randomly logged out and carts empty, storefront/cart-api "
            "logs are full of "
            "ECONNRESET / connection refused to redis. storefront 8.2.0 went out last night, roll "
            "back?\n"
        ),
        "truth": {
            "category": "oom_killed",
            "culprit": {"kind": "StatefulSet", "namespace": "cache", "name": "session-cache"},
            "evidence": [
                "OOMKilled",
                "Memory cgroup out of memory: Killed process 28417 (redis-server)",
                "redis_memory_max_bytes 0",
                "# maxmemory <bytes>",
                "3Gi",
            ],
            "fix": (
                "session-cache (Redis) has no maxmemory, so allkeys-lru never evicts; it grows "
                "into its 3Gi "
                "limit and the kernel kills it (three times), dropping sessions. Set maxmemory "
                "(e.g. 2400mb, "
                "below the limit with room for fork CoW) and/or raise the limit; storefront 8.2.0 "
                "is unrelated."
            ),
        },
    }
    return sc
