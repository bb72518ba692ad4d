"""1. dependency_failure: a third-party duty API slows down on the international quote path only."""

from __future__ import annotations

from datetime import timedelta

from ._kit import (
    Cluster,
    Metrics,
    Scenario,
    _lognorm_cdf,
    add_nodes,
    configmap,
    container,
    endpoints,
    event,
    http_probe,
    iso,
    jitter,
    namespace,
    ramp,
    rng,
    service,
    terminated,
)

SID = "intl-quotes-duty-api-slow"
NOW = "2026-11-24T10:40:00Z"


def build() -> Scenario:
    sc = Scenario(SID, NOW)
    ck = sc.clock
    cl = Cluster(sc)
    for ns in ("logistics", "storefront", "batch"):
        sc.add(namespace(ns, ck.t(days=190)))
    nodes = add_nodes(
        cl,
        ck,
        "eu-central-1",
        [("14.73", "a", "10"), ("27.140", "b", "11"), ("33.18", "c", "12"), ("14.201", "a", "13")],
    )

    # ---------------------------------------------------- logistics/rates-api (the caller)
    rates_img = "registry.ferrolane.io/logistics/rates-api:3.12.1"
    rates_c = container(
        "rates-api",
        rates_img,
        cpu_req="250m",
        mem_req="256Mi",
        cpu_lim="1",
        mem_lim="512Mi",
        ports=[("http", 8080), ("metrics", 9090)],
        env_from=[{"configMapRef": {"name": "rates-api-config"}}],
        readiness=http_probe("/readyz", "http", period=5),
        liveness=http_probe("/healthz", "http", delay=10, period=10),
    )
    old_c = container(
        "rates-api",
        "registry.ferrolane.io/logistics/rates-api:3.12.0",
        cpu_req="250m",
        mem_req="256Mi",
        cpu_lim="1",
        mem_lim="512Mi",
        ports=[("http", 8080), ("metrics", 9090)],
        env_from=[{"configMapRef": {"name": "rates-api-config"}}],
        readiness=http_probe("/readyz", "http", period=5),
        liveness=http_probe("/healthz", "http", delay=10, period=10),
    )
    rates = cl.deployment(
        "logistics",
        "rates-api",
        [rates_c],
        replicas=4,
        created=ck.t(days=160),
        rs_created=ck.t(days=3, hours=2.3),
        revision=27,
        hash_="6f8d9c7b54",
        change_cause="rates-api 3.12.1: fix rounding of fuel surcharge on pallets",
        old=[("7b94f5d8c6", ck.t(days=9), 26, [old_c], 0)],
        pod_annotations={"prometheus.io/scrape": "true", "prometheus.io/port": "9090"},
    )
    sc.add(
        configmap(
            "logistics",
            "rates-api-config",
            ck.t(days=40),
            {
                "LOG_LEVEL": "info",
                "DOMESTIC_RATES_DSN_HOST": "rates-db.logistics.svc.cluster.local",
                "TARIFFLY_BASE_URL": "https://api.tariffly.com",
                "TARIFFLY_DUTY_PATH": "/v2/duty-estimates",
                "TARIFFLY_TIMEOUT": "5s",
                "TARIFFLY_MAX_RETRIES": "0",
                "SLOW_UPSTREAM_THRESHOLD": "1s",
            },
            labels={"app": "rates-api"},
        )
    )
    svc_rates = service(
        "logistics",
        "rates-api",
        ck.t(days=160),
        selector={"app": "rates-api"},
        ports=[("http", 80, "http")],
        cluster_ip="172.20.41.118",
    )
    sc.add(svc_rates, endpoints(svc_rates, rates["pods"]))

    # rates-db (in-cluster postgres for domestic rate tables), healthy
    db_c = container(
        "postgres",
        "docker.io/library/postgres:16.4",
        cpu_req="500m",
        mem_req="1Gi",
        cpu_lim="2",
        mem_lim="2Gi",
        ports=[("postgres", 5432)],
    )
    from ._kit import cstatus, pod, pod_template, statefulset

    db_tpl = pod_template({"app": "rates-db"}, [db_c])
    db_sts = statefulset(
        "logistics",
        "rates-db",
        ck.t(days=160),
        db_tpl,
        replicas=1,
        ready=1,
        service="rates-db",
        revision_hash="5c7d8b9f6d",
        volume_claims=[
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": "data"},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "gp3",
                    "resources": {"requests": {"storage": "50Gi"}},
                },
            }
        ],
    )
    db_pod = pod(
        db_sts,
        "rates-db-0",
        ck.t(days=5.1),
        db_tpl,
        node_name=nodes[2],
        pod_ip=cl.pod_ip(nodes[2]),
        host_ip=cl.host_ip(nodes[2]),
        statuses=[
            cstatus("postgres", db_c["image"], running_since=ck.t(days=5.1), pod_seed="rates-db-0")
        ],
        labels_extra={
            "controller-revision-hash": "rates-db-5c7d8b9f6d",
            "statefulset.kubernetes.io/pod-name": "rates-db-0",
        },
    )
    svc_db = service(
        "logistics",
        "rates-db",
        ck.t(days=160),
        selector={"app": "rates-db"},
        ports=[("postgres", 5432, "postgres")],
        headless=True,
    )
    sc.add(db_sts, db_pod, svc_db, endpoints(svc_db, [db_pod]))

    # label-printer: harmless rollout 52 minutes ago (decoy)
    lp_new = container(
        "label-printer",
        "registry.ferrolane.io/logistics/label-printer:1.9.0",
        cpu_req="100m",
        mem_req="128Mi",
        cpu_lim="500m",
        mem_lim="256Mi",
        ports=[("http", 8080)],
        readiness=http_probe("/healthz", "http"),
    )
    lp_old = dict(lp_new, image="registry.ferrolane.io/logistics/label-printer:1.8.4")
    t_lp = ck.ago(minutes=52)
    lp = cl.deployment(
        "logistics",
        "label-printer",
        [lp_new],
        replicas=2,
        created=ck.t(days=120),
        rs_created=iso(t_lp),
        revision=14,
        hash_="5d4c8f7b9",
        change_cause="label-printer 1.9.0: ZPL templates for DHL Express waybills",
        old=[("84b6d9f5c7", ck.t(days=12), 13, [lp_old], 0)],
        pod_status=lambda i, n, nd: {"created": iso(t_lp + timedelta(seconds=40 * i))},
        status=None,
    )
    svc_lp = service(
        "logistics",
        "label-printer",
        ck.t(days=120),
        selector={"app": "label-printer"},
        ports=[("http", 80, "http")],
        cluster_ip="172.20.87.9",
    )
    sc.add(svc_lp, endpoints(svc_lp, lp["pods"]))
    lp_rs_new, lp_rs_old = lp["current_rs"], lp["rs"][0]
    dep_lp = lp["deployment"]
    sc.add(
        event(
            dep_lp,
            "ScalingReplicaSet",
            f"Scaled up replica set {lp_rs_new['metadata']['name']} to 1",
            first=iso(t_lp),
            component="deployment-controller",
        ),
        event(
            dep_lp,
            "ScalingReplicaSet",
            f"Scaled down replica set {lp_rs_old['metadata']['name']} to 1 from 2",
            first=iso(t_lp + timedelta(seconds=19)),
            component="deployment-controller",
        ),
        event(
            dep_lp,
            "ScalingReplicaSet",
            f"Scaled up replica set {lp_rs_new['metadata']['name']} to 2 from 1",
            first=iso(t_lp + timedelta(seconds=19)),
            component="deployment-controller",
            seed="b",
        ),
        event(
            dep_lp,
            "ScalingReplicaSet",
            f"Scaled down replica set {lp_rs_old['metadata']['name']} to 0 from 1",
            first=iso(t_lp + timedelta(seconds=41)),
            component="deployment-controller",
        ),
    )
    for i, p in enumerate(lp["pods"]):
        t0 = t_lp + timedelta(seconds=40 * i)
        nd = p["spec"]["nodeName"]
        pn = p["metadata"]["name"]
        sc.add(
            event(
                p,
                "Scheduled",
                f"Successfully assigned logistics/{pn} to {nd}",
                first=iso(t0),
                component="default-scheduler",
            ),
            event(
                p,
                "Pulling",
                f'Pulling image "{lp_new["image"]}"',
                first=iso(t0 + timedelta(seconds=1)),
                component="kubelet",
                host=nd,
                field_path="spec.containers{label-printer}",
            ),
            event(
                p,
                "Pulled",
                f'Successfully pulled image "{lp_new["image"]}" in 3.412s (3.412s including '
                "waiting). Image size: 48211934 bytes.",
                first=iso(t0 + timedelta(seconds=4)),
                component="kubelet",
                host=nd,
                field_path="spec.containers{label-printer}",
            ),
            event(
                p,
                "Created",
                "Created container label-printer",
                first=iso(t0 + timedelta(seconds=4)),
                component="kubelet",
                host=nd,
                field_path="spec.containers{label-printer}",
            ),
            event(
                p,
                "Started",
                "Started container label-printer",
                first=iso(t0 + timedelta(seconds=5)),
                component="kubelet",
                host=nd,
                field_path="spec.containers{label-printer}",
            ),
        )

    # tracking-poller: an old restart two days ago (decoy)
    tp_c = container(
        "tracking-poller",
        "registry.ferrolane.io/logistics/tracking-poller:2.3.7",
        cpu_req="100m",
        mem_req="192Mi",
        cpu_lim="500m",
        mem_lim="384Mi",
    )
    t_tp_restart = ck.ago(days=2, hours=5.2)
    cl.deployment(
        "logistics",
        "tracking-poller",
        [tp_c],
        replicas=1,
        created=ck.t(days=100),
        rs_created=ck.t(days=6),
        revision=9,
        hash_="c9f7d6b85",
        pod_status=lambda i, n, nd: {
            "containers": {
                "tracking-poller": {
                    "restarts": 1,
                    "running_since": iso(t_tp_restart),
                    "last_terminated": terminated(
                        "Error", 2, ck.t(days=6), iso(t_tp_restart - timedelta(seconds=2)), seed=n
                    ),
                }
            }
        },
    )

    # ---------------------------------------------------- storefront/checkout-web (reporter's view)
    cw_c = container(
        "checkout-web",
        "registry.ferrolane.io/storefront/checkout-web:5.40.2",
        cpu_req="300m",
        mem_req="384Mi",
        cpu_lim="1",
        mem_lim="768Mi",
        ports=[("http", 3000)],
        env=[
            {"name": "RATES_API_URL", "value": "http://rates-api.logistics.svc.cluster.local"},
            {"name": "RATES_API_TIMEOUT_MS", "value": "8000"},
        ],
        readiness=http_probe("/api/health", "http"),
    )
    cw = cl.deployment(
        "storefront",
        "checkout-web",
        [cw_c],
        replicas=3,
        created=ck.t(days=300),
        rs_created=ck.t(days=4, hours=6),
        revision=88,
        hash_="78d5b6c9f4",
    )
    svc_cw = service(
        "storefront",
        "checkout-web",
        ck.t(days=300),
        selector={"app": "checkout-web"},
        ports=[("http", 80, "http")],
        cluster_ip="172.20.5.201",
    )
    sc.add(svc_cw, endpoints(svc_cw, cw["pods"]))

    # ---------------------------------------------------- batch: a Pending pod (decoy)
    rb_c = container(
        "report-builder",
        "registry.ferrolane.io/batch/report-builder:0.14.0",
        cpu_req="2",
        mem_req="6Gi",
        cpu_lim="4",
        mem_lim="8Gi",
    )
    t_rb = ck.ago(hours=3, minutes=12)
    rb = cl.deployment(
        "batch",
        "report-builder",
        [rb_c],
        replicas=1,
        created=ck.t(days=30),
        rs_created=iso(t_rb),
        revision=5,
        hash_="6b7f49d8c5",
        node_selector={"ferrolane.io/nodegroup": "batch-large"},
        change_cause="move report-builder to the batch-large node group",
        status=None,
        pod_status=lambda i, n, nd: {
            "scheduled": False,
            "phase": "Pending",
            "sched_message": (
                "0/4 nodes are available: 4 node(s) didn't match Pod's node affinity/selector. "
                "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling."
            ),
        },
    )
    from ._kit import deploy_status

    rb["deployment"]["status"] = {
        "observedGeneration": 5,
        **deploy_status(
            1,
            0,
            available=0,
            rs_name=rb["current_rs"]["metadata"]["name"],
            progress_time=iso(t_rb + timedelta(minutes=10)),
            available_time=iso(t_rb),
            progressing=("False", "ProgressDeadlineExceeded", None),
            available_cond=("False", "MinimumReplicasUnavailable"),
        ),
    }
    rb["current_rs"]["status"] = {"replicas": 1, "fullyLabeledReplicas": 1, "observedGeneration": 1}
    rbp = rb["pods"][0]
    rbp["status"].pop("containerStatuses", None)
    sc.add(
        event(
            rbp,
            "FailedScheduling",
            rbp["status"]["conditions"][0]["message"],
            first=iso(t_rb),
            last=ck.t(minutes=4),
            count=37,
            type_="Warning",
            component="default-scheduler",
        )
    )

    # ---------------------------------------------------- the story in numbers
    start = ck.ago(minutes=120)
    m = Metrics(start, ck.now, 60)
    T = lambda mins: int(ck.ago(minutes=mins).timestamp())  # noqa: E731
    t_slow0, t_slow1, t_slow2 = T(95), T(45), T(25)

    def tariff_med(t):
        if t <= t_slow0:
            return 0.28
        if t <= t_slow1:
            return ramp(t, t_slow0, t_slow1, 0.28, 2.6)
        if t <= t_slow2:
            return ramp(t, t_slow1, t_slow2, 2.6, 4.4)
        return ramp(t, t_slow2, T(0), 4.4, 4.9)

    SIG = 0.32
    p_timeout = lambda t: 1 - _lognorm_cdf(5.0, tariff_med(t), SIG)  # noqa: E731
    traffic = lambda t: 1.0 + 0.18 * (t - m.start) / (m.end - m.start)  # noqa: E731  (morning ramp)
    intl_rate = lambda t: 6.2 * traffic(t)  # noqa: E731
    dom_rate = lambda t: 31.0 * traffic(t)  # noqa: E731
    buckets = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]
    lbl = {"namespace": "logistics", "service": "rates-api"}
    m.histogram(
        "http_request_duration_seconds",
        "Duration of HTTP requests served.",
        {**lbl, "route": "/v1/quotes/domestic"},
        buckets,
        dom_rate,
        lambda t: (0.034, 0.35),
        step=120,
    )
    m.histogram(
        "http_request_duration_seconds",
        "Duration of HTTP requests served.",
        {**lbl, "route": "/v1/quotes/international"},
        buckets,
        intl_rate,
        lambda t: (min(tariff_med(t), 5.0) + 0.04, SIG),
        step=120,
    )
    m.histogram(
        "http_client_request_duration_seconds",
        "Duration of outgoing HTTP requests.",
        {**lbl, "host": "api.tariffly.com", "method": "POST"},
        buckets,
        intl_rate,
        lambda t: (tariff_med(t), SIG),
        step=120,
    )
    pods = rates["pods"]
    for p in pods:
        pn = p["metadata"]["name"]
        pl = {"namespace": "logistics", "pod": pn, "service": "rates-api"}
        m.counter(
            "http_requests",
            "Total HTTP requests served.",
            {**pl, "route": "/v1/quotes/domestic", "code": "200"},
            lambda t: dom_rate(t) / 4,
        )
        m.counter(
            "http_requests",
            "Total HTTP requests served.",
            {**pl, "route": "/v1/quotes/international", "code": "200"},
            lambda t: intl_rate(t) / 4 * (1 - p_timeout(t)),
        )
        m.counter(
            "http_requests",
            "Total HTTP requests served.",
            {**pl, "route": "/v1/quotes/international", "code": "504"},
            lambda t: intl_rate(t) / 4 * p_timeout(t),
        )
    for p in pods:
        pn = p["metadata"]["name"]
        m.counter(
            "rates_upstream_errors",
            "Upstream call failures by upstream and kind.",
            {"namespace": "logistics", "pod": pn, "upstream": "tariffly", "kind": "timeout"},
            lambda t: intl_rate(t) / 4 * p_timeout(t),
        )
    for k, p in enumerate(pods):
        pn = p["metadata"]["name"]
        cl_ = {
            "namespace": "logistics",
            "pod": pn,
            "container": "rates-api",
            "node": p["spec"]["nodeName"],
        }
        j = jitter(pn, 0.02)
        m.counter(
            "container_cpu_usage_seconds",
            "Cumulative cpu time consumed in seconds.",
            cl_,
            lambda t, j=j: 0.21 * traffic(t) + j(t),
            start_value=61234.5 + 800 * k,
        )
        jm = jitter(pn + "m", 3e6)
        m.gauge(
            "container_memory_working_set_bytes",
            "Current working set in bytes.",
            cl_,
            lambda t, jm=jm: (
                186e6 + 9e6 * min(1, p_timeout(t) * 3 + (tariff_med(t) - 0.28) / 10) + jm(t)
            ),
        )
    for p in cw["pods"]:
        pn = p["metadata"]["name"]
        pl = {"namespace": "storefront", "pod": pn, "service": "checkout-web"}
        m.counter(
            "http_requests",
            "Total HTTP requests served.",
            {**pl, "route": "/checkout/shipping", "code": "200"},
            lambda t: (intl_rate(t) * (1 - p_timeout(t)) + dom_rate(t)) / 3 * 0.8,
        )
        m.counter(
            "http_requests",
            "Total HTTP requests served.",
            {**pl, "route": "/checkout/shipping", "code": "502"},
            lambda t: intl_rate(t) * p_timeout(t) / 3 * 0.8,
        )
    for p in lp["pods"]:
        pn = p["metadata"]["name"]
        born = int(ck.ago(minutes=52).timestamp())
        m.gauge(
            "container_memory_working_set_bytes",
            "Current working set in bytes.",
            {
                "namespace": "logistics",
                "pod": pn,
                "container": "label-printer",
                "node": p["spec"]["nodeName"],
            },
            lambda t, b=born: (71e6 + (t - b) * 200) if t >= b + 60 else None,
        )
    tp_pod = next(
        o
        for o in sc.objects
        if o["kind"] == "Pod" and o["metadata"]["name"].startswith("tracking-poller")
    )
    m.counter_values(
        "kube_pod_container_status_restarts",
        "The number of container restarts per container.",
        {
            "namespace": "logistics",
            "pod": tp_pod["metadata"]["name"],
            "container": "tracking-poller",
        },
        lambda t: 1,
    )

    sc.metrics = m

    # ---------------------------------------------------- logs
    r = rng(SID)
    L = sc.logs
    for minute in range(120, -1, -1):
        t0 = ck.ago(minutes=minute)
        ts = int(t0.timestamp())
        for k, p in enumerate(pods):
            pn = p["metadata"]["name"]
            if minute % 4 == 0:
                d_ok = int(dom_rate(ts) / 4 * 240)
                i_fail = int(intl_rate(ts) / 4 * 240 * p_timeout(ts))
                i_ok = int(intl_rate(ts) / 4 * 240) - i_fail
                med = min(tariff_med(ts), 5.0)
                L.add(
                    t0 + timedelta(seconds=k * 3 + 1),
                    "logistics",
                    pn,
                    "rates-api",
                    "rates-api",
                    "info",
                    f"quote stats window=240s domestic_ok={d_ok} international_ok={i_ok} "
                    f"international_failed={i_fail} p95_ms_domestic={int(61 + r.random() * 8)} "
                    f"p95_ms_international={int(min(med * 1.7, 5.0) * 1000 + 40)}",
                )
            if r.random() < 0.06:
                L.add(
                    t0 + timedelta(seconds=r.randint(0, 59)),
                    "logistics",
                    pn,
                    "rates-api",
                    "rates-api",
                    "warn",
                    f"http: TLS handshake error from 10.20.{r.choice([14, 27, 33])}."
                    f"{r.randint(2, 250)}:{r.randint(30000, 60999)}: EOF",
                )
        med = tariff_med(ts)
        p_slow = 1 - _lognorm_cdf(1.0, med, SIG)
        n_slow = min(3, round(p_slow * 3 + 0.2)) if p_slow > 0.02 else 0
        for _ in range(n_slow):
            d = min(r.lognormvariate(0, SIG) * med, 4.999)
            if d < 1.0:
                d = 1.0 + r.random() * 0.3
            p = pods[r.randrange(4)]
            L.add(
                t0 + timedelta(seconds=r.randint(0, 59), milliseconds=r.randint(0, 999)),
                "logistics",
                p["metadata"]["name"],
                "rates-api",
                "rates-api",
                "warn",
                "slow upstream call upstream=tariffly method=POST "
                "url=https://api.tariffly.com/v2/duty-estimates "
                f"status=200 duration_ms={int(d * 1000)} threshold_ms=1000",
                event__duration=int(d * 1e9),
            )
        pt = p_timeout(ts)
        n_to = min(3, round(intl_rate(ts) * 60 * pt)) if pt > 0.004 else 0
        for _ in range(n_to):
            p = pods[r.randrange(4)]
            tid = f"{r.getrandbits(128):032x}"
            when = t0 + timedelta(seconds=r.randint(0, 59), milliseconds=r.randint(0, 999))
            L.add(
                when,
                "logistics",
                p["metadata"]["name"],
                "rates-api",
                "rates-api",
                "error",
                "duty estimate failed route=/v1/quotes/international upstream=tariffly "
                'err="Post \\"https://api.tariffly.com/v2/duty-estimates\\": context deadline '
                "exceeded "
                '(Client.Timeout exceeded while awaiting headers)" elapsed_ms=5001',
                error__type="*url.Error",
                trace__id=tid,
                http__response__status_code=504,
            )
            cwp = cw["pods"][r.randrange(3)]
            L.add(
                when + timedelta(milliseconds=12),
                "storefront",
                cwp["metadata"]["name"],
                "checkout-web",
                "checkout-web",
                "error",
                "POST http://rates-api.logistics.svc.cluster.local/v1/quotes/international -> 504 "
                "Gateway Timeout "
                "(5013 ms); rendering 'shipping unavailable' for the cart",
                trace__id=tid,
                http__response__status_code=504,
            )
        if minute % 5 == 0:
            for cwp in cw["pods"]:
                L.add(
                    t0 + timedelta(seconds=r.randint(0, 59)),
                    "storefront",
                    cwp["metadata"]["name"],
                    "checkout-web",
                    "checkout-web",
                    "info",
                    f"GET /api/health 200 {r.randint(1, 4)}ms",
                )
        if minute % 10 == 3:
            L.add(
                t0 + timedelta(seconds=7),
                "logistics",
                tp_pod["metadata"]["name"],
                "tracking-poller",
                "tracking-poller",
                "info",
                f"polled 4 carriers: {r.randint(900, 1300)} tracking updates, 0 failures",
            )
    # label-printer start-up and its noisy printer warning
    for i, p in enumerate(lp["pods"]):
        t0 = t_lp + timedelta(seconds=40 * i + 6)
        pn = p["metadata"]["name"]
        for off, lvl, msg in (
            (0, "info", "label-printer 1.9.0 starting (templates=42, printers=11)"),
            (1, "info", "loaded ZPL template dhl-express-waybill-v3"),
            (2, "info", "listening on :8080"),
        ):
            L.add(
                t0 + timedelta(seconds=off),
                "logistics",
                pn,
                "label-printer",
                "label-printer",
                lvl,
                msg,
            )
        for minute in range(0, 50, 4):
            L.add(
                t0 + timedelta(minutes=minute, seconds=30),
                "logistics",
                pn,
                "label-printer",
                "label-printer",
                "warn",
                "printer zebra-fra-07 (10.88.4.57:9100) unreachable: dial tcp 10.88.4.57:9100: "
                "i/o timeout; retrying in 30s",
            )

    sc.meta = {
        "title": "International shipping quotes fail at checkout",
        "report": (
            "checkout can't get shipping quotes for international orders since ~10:00, customers "
            "get 'shipping "
            "unavailable'. domestic looks fine. label-printer was deployed right before this, can "
            "that have broken "
            "rates-api? pls check\n"
        ),
        "truth": {
            "category": "dependency_failure",
            "culprit": {"kind": "Deployment", "namespace": "logistics", "name": "rates-api"},
            "evidence": [
                "api.tariffly.com",
                "Client.Timeout exceeded while awaiting headers",
                "slow upstream call upstream=tariffly",
                "TARIFFLY_TIMEOUT",
            ],
            "fix": (
                "The external duty API (api.tariffly.com) has slowed from ~0.3 s to ~5 s and now "
                "times out; "
                "raise it with Tariffly, and in rates-api fall back to cached duty tables or a "
                "circuit breaker "
                "on the international path. rates-api itself (pods, CPU, memory, release 3.12.1) "
                "is healthy; "
                "the label-printer rollout is unrelated."
            ),
        },
    }
    return sc
