"""3. autoscaling_limit: an HPA on queue depth sits at maxReplicas while the queue grows; consumers
saturated."""

from __future__ import annotations

import math
from datetime import timedelta

from ._kit import (
    Cluster,
    Metrics,
    Scenario,
    add_nodes,
    container,
    cstatus,
    endpoints,
    event,
    http_probe,
    iso,
    jitter,
    namespace,
    pod,
    pod_template,
    ramp,
    rng,
    service,
    statefulset,
    terminated,
    uid,
)

SID = "enrich-queue-hpa-at-max"
NOW = "2026-11-27T11:30:00Z"
TARGET = 400
MAXR = 12
CAP = 118.0  # messages/s one consumer handles with its 16 workers busy
SELECTOR = (
    "rabbitmq_queue_messages_ready(&LabelSelector{MatchLabels:map[string]string{queue: "
    "events.enrich,},"
    "MatchExpressions:[]LabelSelectorRequirement{},})"
)


def simulate(ck):
    """Minute-by-minute: publish rate, replicas, backlog and ready depth over the last 120
    minutes."""
    start = int(ck.ago(minutes=120).timestamp())
    t_up0, t_up1 = int(ck.ago(minutes=80).timestamp()), int(ck.ago(minutes=30).timestamp())
    jit = jitter("pub", 18)
    rows = []
    reps, backlog = 7, 0.0
    for k in range(121):
        t = start + 60 * k
        pub = ramp(t, t_up0, t_up1, 700, 1530) + jit(t)
        ready = backlog + pub * 4
        desired = max(3, min(MAXR, math.ceil(ready / TARGET)))
        unlimited = max(3, math.ceil(ready / TARGET))
        cap = reps * CAP
        consumed = min(pub + backlog / 60, cap)
        rows.append(
            {
                "t": t,
                "pub": pub,
                "reps": reps,
                "ready": ready,
                "backlog": backlog,
                "consumed": consumed,
                "desired": desired,
                "unlimited": unlimited,
            }
        )
        backlog = max(0.0, backlog + (pub - consumed) * 60)
        if desired > reps:
            reps = desired
    return rows


def build() -> Scenario:
    sc = Scenario(SID, NOW)
    ck = sc.clock
    cl = Cluster(sc, pod_net="10.60")
    for ns in ("ingest", "mq", "web"):
        sc.add(namespace(ns, ck.t(days=330)))
    nodes = add_nodes(
        cl,
        ck,
        "us-east-1",
        [
            ("32.9", "a", "1"),
            ("33.120", "b", "2"),
            ("34.77", "c", "3"),
            ("32.201", "a", "4"),
            ("33.45", "b", "5"),
        ],
        itype="c6i.4xlarge",
        cpu="16",
        memory="32036312Ki",
        alloc_cpu="15890m",
        alloc_mem="30305660Ki",
    )
    rows = simulate(ck)
    by_t = {r["t"]: r for r in rows}
    final = rows[-1]

    def row(t):
        return by_t.get(t) or min(rows, key=lambda r: abs(r["t"] - t))

    # --------------------------------------- ingest/event-consumer + HPA
    ec_c = container(
        "event-consumer",
        "registry.parcelstream.dev/ingest/event-consumer:7.4.2",
        cpu_req="1",
        mem_req="768Mi",
        cpu_lim="2",
        mem_lim="1536Mi",
        ports=[("metrics", 9100)],
        env=[
            {"name": "AMQP_URL", "value": "amqp://rabbitmq.mq.svc.cluster.local:5672/%2F"},
            {"name": "QUEUE", "value": "events.enrich"},
            {"name": "WORKERS", "value": "16"},
            {"name": "PREFETCH", "value": "64"},
        ],
        readiness=http_probe("/ready", "metrics", period=10),
    )
    # scale-up times from the simulation
    scale_steps = []
    prev = rows[0]["reps"]
    for r_ in rows:
        if r_["reps"] != prev:
            scale_steps.append((r_["t"] - 45, prev, r_["reps"]))
            prev = r_["reps"]
    t_max = scale_steps[-1][0]
    t_lim = next(r_["t"] for r_ in rows if r_["unlimited"] > MAXR) - 30
    assert ck.now.timestamp() - t_max < 3600, "the last rescale must be within the event lifetime"
    rs_created = ck.ago(days=2, hours=3)
    births = [None] * 7
    for ts, a, b in scale_steps:
        births += [ts + 20] * (b - a)

    def ec_status(i, n, nd):
        if births[i] is None:
            return None
        c = iso(ck.ago(seconds=ck.now.timestamp() - births[i] - 3 * (i % 4)))
        return {"created": c}

    ec = cl.deployment(
        "ingest",
        "event-consumer",
        [ec_c],
        replicas=MAXR,
        created=ck.t(days=330),
        rs_created=iso(rs_created),
        revision=41,
        hash_="6d9b8c5f47",
        pod_status=ec_status,
        pod_annotations={"prometheus.io/scrape": "true", "prometheus.io/port": "9100"},
        change_cause="event-consumer 7.4.2: enrichment lookups via geo-cache",
    )
    dep = ec["deployment"]
    hpa = {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {
            "name": "event-consumer",
            "namespace": "ingest",
            "uid": uid("hpa", "ingest", "event-consumer"),
            "creationTimestamp": ck.t(days=300),
            "labels": {"app": "event-consumer"},
        },
        "spec": {
            "scaleTargetRef": {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "name": "event-consumer",
            },
            "minReplicas": 3,
            "maxReplicas": MAXR,
            "metrics": [
                {
                    "type": "External",
                    "external": {
                        "metric": {
                            "name": "rabbitmq_queue_messages_ready",
                            "selector": {"matchLabels": {"queue": "events.enrich"}},
                        },
                        "target": {"type": "AverageValue", "averageValue": str(TARGET)},
                    },
                }
            ],
            "behavior": {
                "scaleUp": {
                    "stabilizationWindowSeconds": 0,
                    "selectPolicy": "Max",
                    "policies": [
                        {"type": "Percent", "value": 100, "periodSeconds": 15},
                        {"type": "Pods", "value": 4, "periodSeconds": 15},
                    ],
                },
                "scaleDown": {
                    "stabilizationWindowSeconds": 300,
                    "selectPolicy": "Max",
                    "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}],
                },
            },
        },
        "status": {
            "currentReplicas": MAXR,
            "desiredReplicas": MAXR,
            "lastScaleTime": iso(ck.ago(seconds=ck.now.timestamp() - t_max)),
            "currentMetrics": [
                {
                    "type": "External",
                    "external": {
                        "metric": {
                            "name": "rabbitmq_queue_messages_ready",
                            "selector": {"matchLabels": {"queue": "events.enrich"}},
                        },
                        "current": {"averageValue": str(int(final["ready"] / MAXR))},
                    },
                }
            ],
            "conditions": [
                {
                    "type": "AbleToScale",
                    "status": "True",
                    "lastTransitionTime": ck.t(days=2, hours=3),
                    "reason": "ReadyForNewScale",
                    "message": "recommended size matches current size",
                },
                {
                    "type": "ScalingActive",
                    "status": "True",
                    "lastTransitionTime": ck.t(days=2, hours=3),
                    "reason": "ValidMetricFound",
                    "message": (
                        "the HPA was able to successfully calculate a replica count from "
                        f"external metric {SELECTOR}"
                    ),
                },
                {
                    "type": "ScalingLimited",
                    "status": "True",
                    "lastTransitionTime": iso(ck.ago(seconds=ck.now.timestamp() - t_lim)),
                    "reason": "TooManyReplicas",
                    "message": "the desired replica count is more than the maximum replica count",
                },
            ],
        },
    }
    sc.add(hpa)
    rs_name = ec["current_rs"]["metadata"]["name"]
    for ts, a, b in scale_steps:
        if ck.now.timestamp() - ts > 3600:
            continue
        when = iso(ck.ago(seconds=ck.now.timestamp() - ts))
        sc.add(
            event(
                hpa,
                "SuccessfulRescale",
                f"New size: {b}; reason: external metric {SELECTOR} above target",
                first=when,
                component="horizontal-pod-autoscaler",
            ),
            event(
                dep,
                "ScalingReplicaSet",
                f"Scaled up replica set {rs_name} to {b} from {a}",
                first=when,
                component="deployment-controller",
            ),
        )
    for i, p in enumerate(ec["pods"]):
        if births[i] is None or ck.now.timestamp() - births[i] > 3600:
            continue
        t0 = ck.ago(seconds=ck.now.timestamp() - births[i])
        nd, pn = p["spec"]["nodeName"], p["metadata"]["name"]
        fp = "spec.containers{event-consumer}"
        sc.add(
            event(
                p,
                "Scheduled",
                f"Successfully assigned ingest/{pn} to {nd}",
                first=iso(t0),
                component="default-scheduler",
            ),
            event(
                p,
                "Pulled",
                f'Container image "{ec_c["image"]}" already present on machine',
                first=iso(t0 + timedelta(seconds=1)),
                component="kubelet",
                host=nd,
                field_path=fp,
            ),
            event(
                p,
                "Created",
                "Created container event-consumer",
                first=iso(t0 + timedelta(seconds=1)),
                component="kubelet",
                host=nd,
                field_path=fp,
            ),
            event(
                p,
                "Started",
                "Started container event-consumer",
                first=iso(t0 + timedelta(seconds=2)),
                component="kubelet",
                host=nd,
                field_path=fp,
            ),
        )

    # ingest/webhook-relay: the unrelated rollout 25 minutes ago (decoy)
    t_wr = ck.ago(minutes=25)
    wr_c = container(
        "webhook-relay",
        "registry.parcelstream.dev/ingest/webhook-relay:1.6.1",
        cpu_req="200m",
        mem_req="256Mi",
        cpu_lim="1",
        mem_lim="512Mi",
        ports=[("http", 8080)],
        env=[
            {"name": "AMQP_URL", "value": "amqp://rabbitmq.mq.svc.cluster.local:5672/%2F"},
            {"name": "QUEUE", "value": "webhooks.outbound"},
        ],
        readiness=http_probe("/healthz", "http"),
    )
    wr_old = dict(wr_c, image="registry.parcelstream.dev/ingest/webhook-relay:1.6.0")
    wr = cl.deployment(
        "ingest",
        "webhook-relay",
        [wr_c],
        replicas=2,
        created=ck.t(days=200),
        rs_created=iso(t_wr),
        revision=17,
        hash_="58f7c9d6b",
        change_cause="webhook-relay 1.6.1: retry 429s with jitter",
        old=[("7c6b5d9f8", ck.t(days=20), 16, [wr_old], 0)],
        pod_status=lambda i, n, nd: {"created": iso(t_wr + timedelta(seconds=30 * i))},
    )
    d_wr = wr["deployment"]
    nrs, ors = wr["current_rs"]["metadata"]["name"], wr["rs"][0]["metadata"]["name"]
    sc.add(
        event(
            d_wr,
            "ScalingReplicaSet",
            f"Scaled up replica set {nrs} to 1",
            first=iso(t_wr),
            component="deployment-controller",
        ),
        event(
            d_wr,
            "ScalingReplicaSet",
            f"Scaled down replica set {ors} to 1 from 2",
            first=iso(t_wr + timedelta(seconds=28)),
            component="deployment-controller",
        ),
        event(
            d_wr,
            "ScalingReplicaSet",
            f"Scaled up replica set {nrs} to 2 from 1",
            first=iso(t_wr + timedelta(seconds=28)),
            component="deployment-controller",
            seed="x",
        ),
        event(
            d_wr,
            "ScalingReplicaSet",
            f"Scaled down replica set {ors} to 0 from 1",
            first=iso(t_wr + timedelta(seconds=59)),
            component="deployment-controller",
        ),
    )
    for i, p in enumerate(wr["pods"]):
        t0 = t_wr + timedelta(seconds=30 * i)
        nd, pn = p["spec"]["nodeName"], p["metadata"]["name"]
        fp = "spec.containers{webhook-relay}"
        sc.add(
            event(
                p,
                "Scheduled",
                f"Successfully assigned ingest/{pn} to {nd}",
                first=iso(t0),
                component="default-scheduler",
            ),
            event(
                p,
                "Pulling",
                f'Pulling image "{wr_c["image"]}"',
                first=iso(t0 + timedelta(seconds=1)),
                component="kubelet",
                host=nd,
                field_path=fp,
            ),
            event(
                p,
                "Pulled",
                f'Successfully pulled image "{wr_c["image"]}" in 2.871s (2.871s including '
                "waiting). Image size: 31877412 bytes.",
                first=iso(t0 + timedelta(seconds=4)),
                component="kubelet",
                host=nd,
                field_path=fp,
            ),
            event(
                p,
                "Created",
                "Created container webhook-relay",
                first=iso(t0 + timedelta(seconds=4)),
                component="kubelet",
                host=nd,
                field_path=fp,
            ),
            event(
                p,
                "Started",
                "Started container webhook-relay",
                first=iso(t0 + timedelta(seconds=5)),
                component="kubelet",
                host=nd,
                field_path=fp,
            ),
        )

    # --------------------------------------- mq/rabbitmq (healthy; rabbitmq-2 restarted 2 days ago)
    rmq_c = container(
        "rabbitmq",
        "docker.io/library/rabbitmq:3.13.7-management",
        cpu_req="2",
        mem_req="4Gi",
        cpu_lim="4",
        mem_lim="4Gi",
        ports=[("amqp", 5672), ("management", 15672), ("prometheus", 15692)],
        readiness=tcp_probe_amqp(),
    )
    rtpl = pod_template({"app": "rabbitmq"}, [rmq_c])
    rsts = statefulset(
        "mq",
        "rabbitmq",
        ck.t(days=330),
        rtpl,
        replicas=3,
        ready=3,
        service="rabbitmq-nodes",
        revision_hash="7f9c8d6b5d",
        volume_claims=[
            {
                "apiVersion": "v1",
                "kind": "PersistentVolumeClaim",
                "metadata": {"name": "data"},
                "spec": {
                    "accessModes": ["ReadWriteOnce"],
                    "storageClassName": "gp3",
                    "resources": {"requests": {"storage": "100Gi"}},
                },
            }
        ],
    )
    sc.add(rsts)
    rpods = []
    for i in range(3):
        pn = f"rabbitmq-{i}"
        nd = nodes[(i + 2) % 5]
        started = ck.t(days=5, hours=i)
        kw = {}
        if i == 2:
            t_r = ck.ago(days=2, hours=1.5)
            kw = {
                "restarts": 1,
                "last_terminated": terminated(
                    "Error", 137, started, iso(t_r - timedelta(seconds=1)), seed=pn
                ),
            }
            started_c = iso(t_r)
        else:
            started_c = started
        p = pod(
            rsts,
            pn,
            started,
            rtpl,
            node_name=nd,
            pod_ip=cl.pod_ip(nd),
            host_ip=cl.host_ip(nd),
            statuses=[
                cstatus("rabbitmq", rmq_c["image"], running_since=started_c, pod_seed=pn, **kw)
            ],
            labels_extra={
                "controller-revision-hash": "rabbitmq-7f9c8d6b5d",
                "statefulset.kubernetes.io/pod-name": pn,
            },
        )
        rpods.append(p)
        sc.add(p)
    rsvc = service(
        "mq",
        "rabbitmq",
        ck.t(days=330),
        selector={"app": "rabbitmq"},
        ports=[("amqp", 5672, "amqp"), ("prometheus", 15692, "prometheus")],
        cluster_ip="172.20.200.15",
    )
    sc.add(rsvc, endpoints(rsvc, rpods))

    # --------------------------------------- web/tracking-gateway (the traffic source, healthy)
    tg_c = container(
        "tracking-gateway",
        "registry.parcelstream.dev/web/tracking-gateway:3.30.0",
        cpu_req="500m",
        mem_req="512Mi",
        cpu_lim="2",
        mem_lim="1Gi",
        ports=[("http", 8080)],
        readiness=http_probe("/healthz", "http"),
    )
    tg = cl.deployment(
        "web",
        "tracking-gateway",
        [tg_c],
        replicas=4,
        created=ck.t(days=330),
        rs_created=ck.t(days=3, hours=5),
        revision=58,
        hash_="84d6f9b7c",
    )
    tsvc = service(
        "web",
        "tracking-gateway",
        ck.t(days=330),
        selector={"app": "tracking-gateway"},
        ports=[("http", 80, "http")],
        cluster_ip="172.20.31.7",
    )
    sc.add(tsvc, endpoints(tsvc, tg["pods"]))

    # --------------------------------------- metrics
    m = Metrics(ck.ago(minutes=120), ck.now, 60)
    q = {"namespace": "mq", "vhost": "/", "queue": "events.enrich"}
    qw = {"namespace": "mq", "vhost": "/", "queue": "webhooks.outbound"}
    jq = jitter("q", 60)
    m.gauge(
        "rabbitmq_queue_messages_ready",
        "Number of messages ready to be delivered to clients.",
        q,
        lambda t: round(row(t)["ready"] + jq(t)),
    )
    m.gauge(
        "rabbitmq_queue_messages_ready",
        "Number of messages ready to be delivered to clients.",
        qw,
        lambda t: round(40 + jq(t) / 4),
    )
    m.gauge(
        "rabbitmq_queue_messages_unacknowledged",
        "Number of messages delivered to clients but not yet acknowledged.",
        q,
        lambda t: row(t)["reps"] * 64,
    )
    m.gauge("rabbitmq_queue_consumers", "Number of consumers.", q, lambda t: row(t)["reps"])
    m.gauge("rabbitmq_queue_consumers", "Number of consumers.", qw, lambda t: 2)
    m.counter(
        "rabbitmq_queue_messages_published",
        "Count of messages published.",
        q,
        lambda t: row(t)["pub"],
        integer=True,
        age=86400,
    )
    m.counter(
        "rabbitmq_queue_messages_delivered",
        "Count of messages delivered.",
        q,
        lambda t: row(t)["consumed"],
        integer=True,
        age=86400,
    )
    m.counter(
        "rabbitmq_queue_messages_published",
        "Count of messages published.",
        qw,
        lambda t: 21.0,
        integer=True,
        age=86400,
    )
    hl = {"namespace": "ingest", "horizontalpodautoscaler": "event-consumer"}
    m.gauge(
        "kube_horizontalpodautoscaler_status_current_replicas",
        "Current number of replicas of pods managed by this autoscaler.",
        hl,
        lambda t: row(t)["reps"],
    )
    m.gauge(
        "kube_horizontalpodautoscaler_status_desired_replicas",
        "Desired number of replicas of pods managed by this autoscaler.",
        hl,
        lambda t: row(t)["desired"],
    )
    m.gauge(
        "kube_horizontalpodautoscaler_spec_max_replicas",
        "Upper limit for the number of pods that can be set by the autoscaler; cannot be smaller "
        "than MinReplicas.",
        hl,
        lambda t: MAXR,
    )
    m.gauge(
        "kube_horizontalpodautoscaler_status_condition",
        "The condition of this autoscaler.",
        {**hl, "condition": "ScalingLimited", "status": "true"},
        lambda t: 1 if row(t)["unlimited"] > MAXR else 0,
    )
    for i, p in enumerate(ec["pods"]):
        pn = p["metadata"]["name"]
        born = births[i]

        def alive(t, b=born):
            return b is None or t >= b + 60

        share = lambda t: row(t)["consumed"] / row(t)["reps"]  # noqa: E731
        j = jitter(pn, 2.0)
        m.counter(
            "enricher_messages_processed",
            "Messages enriched and acked.",
            {"namespace": "ingest", "pod": pn, "queue": "events.enrich"},
            lambda t, a=alive, j=j, share=share: (
                (max(0.0, share(t) + j(t) - (2.2 if share(t) > CAP - 1 else 0))) if a(t) else None
            ),
            integer=True,
            age=0 if born else 86400,
        )
        m.gauge(
            "enricher_worker_busy_ratio",
            "Fraction of the worker pool busy.",
            {"namespace": "ingest", "pod": pn},
            lambda t, a=alive, j=j, share=share: (
                round(min(1.0, share(t) / CAP + j(t) / 200), 3) if a(t) else None
            ),
        )
        jc = jitter(pn + "c", 0.04)
        m.counter(
            "container_cpu_usage_seconds",
            "Cumulative cpu time consumed in seconds.",
            {
                "namespace": "ingest",
                "pod": pn,
                "container": "event-consumer",
                "node": p["spec"]["nodeName"],
            },
            lambda t, a=alive, jc=jc, share=share: (
                (0.11 + 0.0066 * share(t) + jc(t)) if a(t) else None
            ),
            age=0 if born else 86400,
        )
    for p in tg["pods"]:
        m.counter(
            "http_requests",
            "Total HTTP requests served.",
            {
                "namespace": "web",
                "pod": p["metadata"]["name"],
                "service": "tracking-gateway",
                "route": "/v2/events",
                "code": "202",
            },
            lambda t: row(t)["pub"] / 4 * 0.98,
        )
    sc.metrics = m

    # --------------------------------------- logs
    r = rng(SID)
    L = sc.logs
    for minute in range(120, -1, -1):
        t0 = ck.ago(minutes=minute)
        ts = int(t0.timestamp())
        rw = row(ts)
        for i, p in enumerate(ec["pods"]):
            if births[i] is not None and ts < births[i] + 60:
                continue
            pn = p["metadata"]["name"]
            if minute % 5 == (i % 5):
                share = rw["consumed"] / rw["reps"]
                busy = min(16, round(16 * share / CAP))
                L.add(
                    t0 + timedelta(seconds=r.randint(0, 59)),
                    "ingest",
                    pn,
                    "event-consumer",
                    "event-consumer",
                    "info",
                    f"stats: processed={int(share * 300)} in 300s acked={int(share * 300)} "
                    "nacked=0 "
                    f"workers_busy={busy}/16 prefetch=64 avg_handle_ms={int(1000 * 16 / CAP)}",
                )
            if r.random() < 0.04:
                L.add(
                    t0 + timedelta(seconds=r.randint(0, 59)),
                    "ingest",
                    pn,
                    "event-consumer",
                    "event-consumer",
                    "warn",
                    f"slow enrichment lookup geo-cache key=postcode:{r.randint(10000, 99999)} "
                    f"took {r.randint(300, 700)}ms",
                )
            if rw["unlimited"] > MAXR and minute % 10 == (i % 10) and rw["backlog"] > 0:
                L.add(
                    t0 + timedelta(seconds=r.randint(0, 59)),
                    "ingest",
                    pn,
                    "event-consumer",
                    "event-consumer",
                    "warn",
                    "all 16 workers busy for the last 60s; prefetch window full (64 unacked)",
                )
        if minute % 15 == 0:
            L.add(
                t0 + timedelta(seconds=11),
                "mq",
                "rabbitmq-0",
                "rabbitmq",
                "rabbitmq",
                "info",
                f"accepting AMQP connection <0.{r.randint(20000, 29999)}.0> "
                f"(10.60.{r.randint(1, 5)}.{r.randint(10, 250)}:{r.randint(32768, 60999)} -> "
                "10.60.3.17:5672)",
            )
        if rw["backlog"] > 50000 and minute % 6 == 0:
            L.add(
                t0 + timedelta(seconds=3),
                "mq",
                "rabbitmq-1",
                "rabbitmq",
                "rabbitmq",
                "info",
                f"Queue 'events.enrich' in vhost '/': {int(rw['ready'])} messages ready, "
                f"{rw['reps']} consumers",
            )
        for p in tg["pods"]:
            if minute % 10 == 0:
                L.add(
                    t0 + timedelta(seconds=r.randint(0, 59)),
                    "web",
                    p["metadata"]["name"],
                    "tracking-gateway",
                    "tracking-gateway",
                    "info",
                    f"POST /v2/events: {int(rw['pub'] / 4 * 600)} accepted in 600s, p99 "
                    f"{r.randint(18, 31)}ms",
                )
    for i, p in enumerate(wr["pods"]):
        t0 = t_wr + timedelta(seconds=30 * i + 6)
        pn = p["metadata"]["name"]
        for off, msg in (
            (0, "webhook-relay 1.6.1 starting"),
            (1, "connected to amqp://rabbitmq.mq.svc.cluster.local:5672/%2F"),
            (2, "consuming webhooks.outbound with prefetch 20"),
        ):
            L.add(
                t0 + timedelta(seconds=off),
                "ingest",
                pn,
                "webhook-relay",
                "webhook-relay",
                "info",
                msg,
            )
        for k in range(0, 24, 3):
            L.add(
                t0 + timedelta(minutes=k, seconds=20),
                "ingest",
                pn,
                "webhook-relay",
                "webhook-relay",
                "warn",
                "POST https://hooks.shopmonkey-partner.com/parcel-events -> 429 Too Many "
                f"Requests, retry in {r.randint(2, 9)}s",
            )

    sc.meta = {
        "title": "Enrichment backlog keeps growing",
        "report": (
            "events.enrich queue is piling up (200k+ and climbing), tracking updates are 30 min "
            "late. "
            "someone rolled out webhook-relay in ingest just before, can we roll it back? or is "
            "rabbit sick?\n"
        ),
        "truth": {
            "category": "autoscaling_limit",
            "culprit": {"kind": "Deployment", "namespace": "ingest", "name": "event-consumer"},
            "evidence": [
                "ScalingLimited",
                "TooManyReplicas",
                "the desired replica count is more than the maximum replica count",
                "maxReplicas: 12",
                "workers_busy=16/16",
            ],
            "fix": (
                "The event-consumer HPA is pinned at maxReplicas 12 while Black Friday traffic "
                "publishes ~1,500 "
                "msg/s and 12 saturated consumers handle ~1,416 msg/s; raise maxReplicas (nodes "
                "have room) or "
                "raise per-pod throughput. webhook-relay's rollout came after the backlog started "
                "and uses "
                "another queue; RabbitMQ is healthy."
            ),
        },
    }
    return sc


def tcp_probe_amqp():
    return {
        "exec": {"command": ["rabbitmq-diagnostics", "-q", "check_port_connectivity"]},
        "initialDelaySeconds": 10,
        "periodSeconds": 30,
        "timeoutSeconds": 10,
        "successThreshold": 1,
        "failureThreshold": 3,
    }
