"""6. dependency_failure: the geocoding provider answers 200 with an error body (monthly quota
spent)."""

from __future__ import annotations

import random
from datetime import timedelta

from ._kit import (
    Container,
    Scenario,
    app,
    cumulate,
    env,
    event,
    hist_points,
    http_probe,
    meta,
    namespace,
    parse,
    resources,
    sport,
    std_nodes,
    terminated,
    times,
    ts_dt,
)

SID = "geocoder-quota-ok-status"


def build() -> Scenario:
    rng = random.Random(4906)
    now = parse("2026-12-29T09:40:00Z")
    sc = Scenario(
        id=SID,
        title="Address validation failing for new orders",
        now=now,
        report=(
            "dispatch can't validate delivery addresses since about 08:30, every new order "
            "lands in the manual-review queue. address-validator pods are up, and GeoPlotter "
            "answers 200 OK on every call, so the provider is fine. courier-tracker was "
            "deployed just before, maybe it broke something shared?\n"
        ),
        truth={
            "category": "dependency_failure",
            "culprit": {"kind": "Deployment", "namespace": "delivery", "name": "address-validator"},
            "evidence": [
                "OVER_QUERY_LIMIT",
                "You have exceeded your monthly request quota",
                "Field required [type=missing",
                '"HTTP/1.1 200 OK"',
            ],
            "fix": (
                "Raise the GeoPlotter plan's monthly quota (or switch to the backup "
                "key/provider) until it resets on 2027-01-01; make address-validator check the "
                "body's status field and fail over instead of parsing."
            ),
        },
    )
    nodes_objs, nodes = std_nodes(
        "10.88.4", [19, 76, 141], "eu-west-2", now, cpu="4", memory_ki=16203840
    )
    sc.add(*nodes_objs)
    for ns in ("delivery", "courier", "platform"):
        sc.add(namespace(ns, now - timedelta(days=380)))
    broke = now - timedelta(minutes=69)

    av_c = Container(
        "address-validator",
        "ghcr.io/wayfarer-logistics/address-validator:2.7.1",
        ports=[{"containerPort": 8000, "name": "http", "protocol": "TCP"}],
        env=[
            *env(
                GEOCODER_BASE_URL="https://api.geoplotter.io/v2",
                GEOCODER_TIMEOUT_S="3",
                OTEL_EXPORTER_OTLP_ENDPOINT="http://otel-collector.platform.svc:4317",
                REDIS_URL="redis://geo-cache.delivery.svc:6379/0",
            ),
            {
                "name": "GEOCODER_API_KEY",
                "valueFrom": {"secretKeyRef": {"name": "geoplotter", "key": "api-key"}},
            },
        ],
        resources=resources("200m", "256Mi", None, "512Mi"),
        readiness=http_probe("/healthz", "http"),
        liveness=http_probe("/livez", "http", period=20),
    )
    av_start = now - timedelta(days=4, hours=6)
    ava = app(
        rng,
        "address-validator",
        "delivery",
        [av_c],
        created=now - timedelta(days=380),
        rs_created=av_start,
        replicas=3,
        nodes=nodes,
        pod_cidr="10.88.5",
        revision=33,
        svc_ports=[sport(80, "http")],
        restarts={1: (1, terminated("Error", 137, av_start, now - timedelta(days=3, hours=1)))},
    )
    sc.add(*ava.objects)
    sc.add(
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": meta("address-validator-egress", "delivery", now - timedelta(days=200)),
            "spec": {
                "podSelector": {"matchLabels": {"app": "address-validator"}},
                "policyTypes": ["Egress"],
                "egress": [
                    {"ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}]},
                    {
                        "ports": [{"port": 443, "protocol": "TCP"}],
                        "to": [
                            {
                                "ipBlock": {
                                    "cidr": "0.0.0.0/0",
                                    "except": ["10.0.0.0/8", "172.16.0.0/12"],
                                }
                            }
                        ],
                    },
                    {
                        "ports": [{"port": 6379, "protocol": "TCP"}],
                        "to": [{"podSelector": {"matchLabels": {"app": "geo-cache"}}}],
                    },
                    {
                        "ports": [{"port": 4317, "protocol": "TCP"}],
                        "to": [
                            {
                                "namespaceSelector": {
                                    "matchLabels": {"kubernetes.io/metadata.name": "platform"}
                                }
                            }
                        ],
                    },
                ],
            },
        }
    )
    gc_c = Container(
        "redis",
        "docker.io/library/redis:7.4.1",
        ports=[{"containerPort": 6379, "name": "redis", "protocol": "TCP"}],
        resources=resources("100m", "256Mi", None, "512Mi"),
    )
    gca = app(
        rng,
        "geo-cache",
        "delivery",
        [gc_c],
        created=now - timedelta(days=380),
        rs_created=now - timedelta(days=6),
        replicas=1,
        nodes=nodes[2:],
        pod_cidr="10.88.5",
        revision=4,
        svc_ports=[sport(6379, "redis", name="redis")],
    )
    sc.add(*gca.objects)

    # courier: dispatch-api (caller) and courier-tracker (harmless rollout)
    da_c = Container(
        "dispatch-api",
        "ghcr.io/wayfarer-logistics/dispatch-api:9.1.0",
        ports=[{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        env=env(ADDRESS_VALIDATOR_URL="http://address-validator.delivery.svc.cluster.local"),
        resources=resources("250m", "512Mi", None, "1Gi"),
        readiness=http_probe("/health", "http"),
    )
    daa = app(
        rng,
        "dispatch-api",
        "courier",
        [da_c],
        created=now - timedelta(days=380),
        rs_created=now - timedelta(days=2, hours=4),
        replicas=2,
        nodes=nodes,
        pod_cidr="10.88.6",
        revision=71,
        svc_ports=[sport(80, "http")],
    )
    sc.add(*daa.objects)
    ct_c = Container(
        "courier-tracker",
        "ghcr.io/wayfarer-logistics/courier-tracker:4.0.2",
        ports=[{"containerPort": 8080, "name": "http", "protocol": "TCP"}],
        resources=resources("100m", "256Mi", None, "512Mi"),
        readiness=http_probe("/health", "http"),
    )
    ct_roll = now - timedelta(minutes=74)
    cta = app(
        rng,
        "courier-tracker",
        "courier",
        [ct_c],
        created=now - timedelta(days=150),
        rs_created=ct_roll,
        replicas=2,
        nodes=nodes[1:],
        pod_cidr="10.88.6",
        revision=12,
        svc_ports=[sport(80, "http")],
        old_rs=[("9c4d7f8b65", now - timedelta(days=9), 11)],
    )
    sc.add(*cta.objects)
    # events older than an hour have expired: only the pods' readiness is left of that rollout
    # platform: otel-collector with an old restart (decoy for the exporter warnings)
    ot_c = Container(
        "otel-collector",
        "docker.io/otel/opentelemetry-collector-contrib:0.114.0",
        ports=[{"containerPort": 4317, "name": "otlp-grpc", "protocol": "TCP"}],
        resources=resources("200m", "512Mi", None, "1Gi"),
    )
    ot_start = now - timedelta(days=5)
    ota = app(
        rng,
        "otel-collector",
        "platform",
        [ot_c],
        created=now - timedelta(days=380),
        rs_created=ot_start,
        replicas=1,
        nodes=nodes[:1],
        pod_cidr="10.88.7",
        revision=18,
        svc_ports=[sport(4317, "otlp-grpc", name="otlp-grpc")],
        restarts={0: (2, terminated("OOMKilled", 137, ot_start, now - timedelta(minutes=58)))},
    )
    sc.add(*ota.objects)
    otp = ota.pods[0]["metadata"]["name"]
    host = ota.pods[0]["spec"]["nodeName"]
    sc.add(
        event(
            "platform",
            "Pod",
            otp,
            "Pulled",
            f'Container image "{ot_c.image}" already present on machine',
            now - timedelta(minutes=58),
            now - timedelta(minutes=58),
            host=host,
            field_path="spec.containers{otel-collector}",
        ),
        event(
            "platform",
            "Pod",
            otp,
            "Started",
            "Started container otel-collector",
            now - timedelta(minutes=58),
            now - timedelta(minutes=58),
            host=host,
            field_path="spec.containers{otel-collector}",
        ),
    )

    # ---------------------------------------------------------------- metrics
    ts = times(now, 3)
    m = sc.metrics
    b = int(broke.timestamp())

    def bad(t: int) -> float:
        return 1.0 if t >= b else 0.0

    for pn in ava.pod_names:
        base = {"namespace": "delivery", "pod": pn, "service": "address-validator"}
        m.counter(
            "geocoder_upstream_responses",
            "Responses from the geocoding provider, by HTTP status.",
            base | {"provider": "geoplotter", "code": "200"},
            cumulate(ts, lambda t: 1.9, start=9.2e5),
        )
        m.counter(
            "geocoder_upstream_responses",
            "Responses from the geocoding provider, by HTTP status.",
            base | {"provider": "geoplotter", "code": "429"},
            cumulate(ts, lambda t: 0.0, start=14),
        )
        m.counter(
            "address_validations",
            "Address validations, by result.",
            base | {"result": "valid"},
            cumulate(ts, lambda t: 1.7 * (1 - bad(t)), start=8.1e5),
        )
        m.counter(
            "address_validations",
            "Address validations, by result.",
            base | {"result": "invalid"},
            cumulate(ts, lambda t: 0.2 * (1 - bad(t)), start=9.0e4),
        )
        m.counter(
            "address_validations",
            "Address validations, by result.",
            base | {"result": "error"},
            cumulate(ts, lambda t: 1.9 * bad(t) + 0.0005, start=63),
        )
        m.counter(
            "http_requests",
            "Requests served.",
            base | {"route": "/v1/validate", "code": "200"},
            cumulate(ts, lambda t: 1.9 * (1 - bad(t)), start=9.1e5),
        )
        m.counter(
            "http_requests",
            "Requests served.",
            base | {"route": "/v1/validate", "code": "502"},
            cumulate(ts, lambda t: 1.9 * bad(t), start=40),
        )
    buckets = [0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5]
    m.histogram(
        "geocoder_upstream_duration_seconds",
        "Latency of calls to the geocoding provider.",
        {"namespace": "delivery", "service": "address-validator", "provider": "geoplotter"},
        buckets,
        hist_points(
            ts[::2],
            buckets,
            lambda t: 5.7,
            lambda t: (0.031, 0.07) if t >= b else (0.164, 0.52),
            rng,
        ),
    )
    m.counter(
        "http_requests",
        "Requests served.",
        {"namespace": "courier", "service": "dispatch-api", "route": "/v1/orders", "code": "201"},
        cumulate(ts, lambda t: 1.4, start=3.3e5),
    )
    m.gauge(
        "dispatch_manual_review_queue",
        "Orders waiting for manual address review.",
        {"namespace": "courier", "service": "dispatch-api"},
        [(t, int(3 + (t - b) / 60 * 84 if t >= b else 3 + rng.randint(0, 2))) for t in ts],
    )

    # ---------------------------------------------------------------- logs
    L = sc.logs
    streets = [
        "14 Harrow Lane, Leeds LS6 2QT",
        "221 Kingsway, Manchester M19 1BB",
        "7 Quay St, Bristol BS1 4DB",
        "88 Carver Road, Sheffield S10 3JF",
        "3 Marsh Court, Norwich NR2 1TG",
        "51 Elm Row, Edinburgh EH7 4AH",
    ]
    body = (
        "{'status': 'OVER_QUERY_LIMIT', 'error_message': 'You have exceeded your monthly "
        "request quota for this API key. Quota resets on 2027-01-01T00:00:00Z.'}"
    )
    for _i, pn in enumerate(ava.pod_names):
        lines = []
        t = ts[0]
        while t < ts[-1]:
            for _ in range(1):
                at = ts_dt(t) + timedelta(seconds=rng.randint(0, 59))
                addr = rng.choice(streets)
                oid = f"ord_{rng.randint(10**7, 10**8 - 1)}"
                q = addr.replace(" ", "+").replace(",", "%2C")
                m1 = (
                    f"HTTP Request: GET https://api.geoplotter.io/v2/geocode?address={q}&"
                    'region=gb "HTTP/1.1 200 OK"'
                )
                if t >= b - 1800 or rng.random() < 0.3:
                    L.add(
                        at,
                        "address-validator",
                        "delivery",
                        pn,
                        "address-validator",
                        "info",
                        m1,
                        **{"log.logger": "httpx"},
                    )
                rec = [f"{at.strftime('%Y-%m-%d %H:%M:%S,%f')[:-3]} INFO httpx: {m1}"]
                if t >= b:
                    m2 = (
                        f"geocode failed for order {oid}: 1 validation error for "
                        "GeocodeResponse\nresults\n  Field required [type=missing, "
                        f"input_value={body}, input_type=dict]"
                    )
                    L.add(
                        at + timedelta(milliseconds=3),
                        "address-validator",
                        "delivery",
                        pn,
                        "address-validator",
                        "error",
                        m2,
                        **{
                            "log.logger": "app.geocode",
                            "error.type": "pydantic_core._pydantic_core.ValidationError",
                        },
                    )
                    m3 = f'10.88.6.{rng.randint(10, 250)}:0 - "POST /v1/validate HTTP/1.1" 502'
                    L.add(
                        at + timedelta(milliseconds=5),
                        "address-validator",
                        "delivery",
                        pn,
                        "address-validator",
                        "info",
                        m3,
                        **{"log.logger": "uvicorn.access", "http.response.status_code": 502},
                    )
                    rec.append(
                        f"{at.strftime('%Y-%m-%d %H:%M:%S,%f')[:-3]} ERROR app.geocode: {m2}"
                    )
                    rec.append(f"INFO:     {m3}")
                else:
                    m3 = f'10.88.6.{rng.randint(10, 250)}:0 - "POST /v1/validate HTTP/1.1" 200'
                    L.add(
                        at + timedelta(milliseconds=5),
                        "address-validator",
                        "delivery",
                        pn,
                        "address-validator",
                        "info",
                        m3,
                        **{"log.logger": "uvicorn.access", "http.response.status_code": 200},
                    )
                    rec.append(f"INFO:     {m3}")
                if at > now - timedelta(minutes=10):
                    lines.extend(rec)
            if rng.random() < 0.08:
                at = ts_dt(t) + timedelta(seconds=rng.randint(0, 59))
                m4 = (
                    "Transient error StatusCode.UNAVAILABLE encountered while exporting traces "
                    "to otel-collector.platform.svc:4317, retrying in "
                    f"{rng.choice([1, 2, 4, 8])}s."
                )
                L.add(
                    at,
                    "address-validator",
                    "delivery",
                    pn,
                    "address-validator",
                    "warn",
                    m4,
                    **{"log.logger": "opentelemetry.exporter.otlp.proto.grpc.exporter"},
                )
                if at > now - timedelta(minutes=10):
                    lines.append(
                        f"{at.strftime('%Y-%m-%d %H:%M:%S,%f')[:-3]} WARNING opentelemetry.export"
                        f"er.otlp.proto.grpc.exporter: {m4}"
                    )
            t += 60
        sc.pod_log("delivery", pn, "address-validator", lines)
    for p in daa.pods:
        pn = p["metadata"]["name"]
        t = b
        while t < ts[-1]:
            at = ts_dt(t) + timedelta(seconds=rng.randint(0, 59))
            L.add(
                at,
                "dispatch-api",
                "courier",
                pn,
                "dispatch-api",
                "warn",
                "address validation unavailable (502 from address-validator) for order "
                f"ord_{rng.randint(10**7, 10**8 - 1)}; routed to manual review",
            )
            t += 60
    for p in cta.pods:
        pn = p["metadata"]["name"]
        st = parse(p["metadata"]["creationTimestamp"]) + timedelta(seconds=4)
        for k, msg in enumerate(
            [
                "courier-tracker 4.0.2 started",
                "subscribed to topic courier.positions (partitions 0-11)",
                "websocket gateway listening on :8080",
            ]
        ):
            L.add(
                st + timedelta(seconds=k),
                "courier-tracker",
                "courier",
                pn,
                "courier-tracker",
                "info",
                msg,
            )
    return sc
