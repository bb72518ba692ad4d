"""Quillmate: the external identity provider's token and JWKS endpoints turned slow. Logins
through auth-gateway take seconds and some hit the gateway's 5s upstream timeout; the gateway
itself (CPU, memory, its session store, its own handlers) is healthy."""

from __future__ import annotations

import json
import random
from datetime import timedelta

from .kube import at, endpoints, event, healthy_deployment, ms, namespace, node, service, ts
from .write import Metrics, Scenario, counter, doc, gauge, histogram

NOW = at("2026-11-27T14:25:00Z")
ID = "login-slow-idp"
NS = "edge"
START = NOW - timedelta(minutes=38)  # the IdP turns slow
IDP = "https://quillmate.eu.idp-cloud.example.com"


def _idp_latency(rng: random.Random, t, endpoint: str) -> float:
    if t < START:
        return rng.uniform(0.06, 0.19) if endpoint == "token" else rng.uniform(0.03, 0.09)
    ramp = min(1.0, (t - START).total_seconds() / 600)
    base = 1.2 + 3.4 * ramp * rng.random()
    return min(5.0, base + (rng.uniform(0, 2.5) if rng.random() < 0.3 * ramp else 0))


def build() -> Scenario:
    rng = random.Random(2)
    s = Scenario(
        id=ID,
        title="Logins slow and timing out on the web app",
        now=ts(NOW),
        report=(
            'logins are super slow since lunch, some students get "Something went wrong, try '
            'again" on the sign in page. support has 30+ tickets. auth-gateway was deployed '
            "on tuesday, could that be it? redis for sessions was also upgraded this week\n"
        ),
        truth={
            "category": "dependency_failure",
            "culprit": {"kind": "Deployment", "namespace": NS, "name": "auth-gateway"},
            "evidence": [
                "context deadline exceeded",
                "jwks refresh slow",
                "oidc_client_request_duration_seconds",
            ],
            "fix": (
                "The external identity provider's token/JWKS endpoints are slow (open a "
                "ticket with the IdP, check its status page); meanwhile cache JWKS longer "
                "and raise or tune the gateway's upstream timeout. The gateway is healthy."
            ),
        },
    )
    nodes = [(f"gke-qm-prod-pool-2-8c1d{n}", f"10.128.0.{40 + n}") for n in range(3)]
    s.objects += [
        namespace(NS, NOW - timedelta(days=500)),
        namespace("web", NOW - timedelta(days=500)),
        namespace("data", NOW - timedelta(days=450)),
    ]
    for n, ip in nodes:
        s.objects.append(
            node(
                n,
                NOW - timedelta(days=19),
                address=ip,
                kubelet="v1.30.5-gke.1014001",
                image="Container-Optimized OS from Google",
                labels={"cloud.google.com/gke-nodepool": "pool-2"},
                heartbeat=NOW - timedelta(seconds=17),
            )
        )
    gw_image = "europe-docker.pkg.dev/quillmate/edge/auth-gateway:v4.12.0"
    objs, gw = healthy_deployment(
        NS,
        "auth-gateway",
        gw_image,
        replicas=3,
        created=NOW - timedelta(days=420),
        rolled=NOW - timedelta(days=2, hours=3),
        revision=88,
        nodes=nodes,
        ip_prefix="10.52.1",
        requests={"cpu": "250m", "memory": "256Mi"},
        limits={"memory": "512Mi"},
        env=[
            {"name": "OIDC_ISSUER", "value": IDP + "/oauth2/default"},
            {"name": "OIDC_HTTP_TIMEOUT", "value": "5s"},
            {"name": "SESSION_REDIS_ADDR", "value": "session-store.data:6379"},
            {"name": "JWKS_CACHE_TTL", "value": "5m"},
        ],
    )
    s.objects += objs
    s.objects += [
        service(
            NS,
            "auth-gateway",
            NOW - timedelta(days=420),
            {"app": "auth-gateway"},
            80,
            8080,
            "10.56.3.12",
        ),
        endpoints(
            NS,
            "auth-gateway",
            NOW - timedelta(days=420),
            [(p, f"10.52.1.{20 + i * 7}") for i, p in enumerate(gw)],
            [],
            8080,
        ),
    ]
    objs, web = healthy_deployment(
        "web",
        "learner-web",
        "europe-docker.pkg.dev/quillmate/web/learner-web:2026.47.3",
        replicas=4,
        created=NOW - timedelta(days=480),
        rolled=NOW - timedelta(hours=20),
        revision=412,
        nodes=nodes,
        ip_prefix="10.52.2",
        port=3000,
    )
    s.objects += objs
    objs, redis = healthy_deployment(
        "data",
        "session-store",
        "docker.io/library/redis:7.4.1-alpine",
        replicas=1,
        created=NOW - timedelta(days=450),
        rolled=NOW - timedelta(days=3, hours=6),
        revision=9,
        nodes=nodes[1:],
        ip_prefix="10.52.3",
        port=6379,
    )
    s.objects += objs
    objs, courses = healthy_deployment(
        NS,
        "course-api",
        "europe-docker.pkg.dev/quillmate/edge/course-api:1.88.2",
        replicas=2,
        created=NOW - timedelta(days=390),
        rolled=NOW - timedelta(days=6),
        revision=140,
        nodes=nodes,
        ip_prefix="10.52.4",
    )
    s.objects += objs
    s.objects.append(
        event(
            "web",
            "Pod",
            web[2],
            "Unhealthy",
            "Readiness probe failed: HTTP probe failed with statuscode: 503",
            first=NOW - timedelta(minutes=47),
            last=NOW - timedelta(minutes=47),
            type_="Warning",
            host=nodes[2][0],
        )
    )
    s.objects.append(
        event(
            "data",
            "Pod",
            redis[0],
            "Pulled",
            'Container image "docker.io/library/redis:7.4.1-alpine" already present on machine',
            first=NOW - timedelta(minutes=55),
            last=NOW - timedelta(minutes=55),
            host=nodes[1][0],
        )
    )

    # logs: gateway structured JSON (zap), per login phase
    t = NOW - timedelta(minutes=90)
    i = 0
    lines: dict[str, list[str]] = {p: [] for p in gw}
    while t < NOW:
        p = gw[i % 3]
        token = _idp_latency(rng, t, "token")
        jwks = _idp_latency(rng, t, "jwks") if i % 7 == 0 else 0.0
        redis_ms = rng.uniform(0.4, 1.6)
        timed_out = token >= 5.0
        trace = f"{rng.getrandbits(64):016x}"
        if timed_out:
            msg = (
                f'idp token exchange failed: Post "{IDP}/oauth2/default/v1/token": '
                "context deadline exceeded (Client.Timeout exceeded while awaiting headers)"
            )
            entry = {
                "level": "error",
                "ts": ms(t),
                "caller": "oidc/exchange.go:118",
                "msg": msg,
                "trace_id": trace,
                "phase": "token",
                "elapsed": "5.000s",
            }
            s.docs.append(
                doc(
                    ms(t),
                    msg,
                    "error",
                    "auth-gateway",
                    NS,
                    p,
                    "auth-gateway",
                    trace__id=trace,
                    error__type="context.deadlineExceededError",
                    http__response__status_code=502,
                    event__duration=5_000_000_000,
                )
            )
        else:
            total = token + jwks + redis_ms / 1000 + rng.uniform(0.002, 0.006)
            msg = "login completed"
            entry = {
                "level": "info",
                "ts": ms(t),
                "caller": "handlers/callback.go:77",
                "msg": msg,
                "trace_id": trace,
                "idp_token_ms": round(token * 1000),
                "session_write_ms": round(redis_ms, 2),
                "total_ms": round(total * 1000),
            }
            if jwks:
                entry["jwks_refresh_ms"] = round(jwks * 1000)
            s.docs.append(
                doc(
                    ms(t),
                    f"login completed idp_token_ms={round(token * 1000)} "
                    f"session_write_ms={redis_ms:.2f} total_ms={round(total * 1000)}",
                    "info",
                    "auth-gateway",
                    NS,
                    p,
                    "auth-gateway",
                    trace__id=trace,
                    http__response__status_code=302,
                    event__duration=int(total * 1e9),
                )
            )
            if jwks > 1.0:
                warn = f"jwks refresh slow: GET {IDP}/oauth2/default/v1/keys took {jwks:.2f}s"
                s.docs.append(
                    doc(
                        ms(t - timedelta(milliseconds=int(jwks * 1000))),
                        warn,
                        "warn",
                        "auth-gateway",
                        NS,
                        p,
                        "auth-gateway",
                    )
                )
                lines[p].append(
                    json.dumps(
                        {"level": "warn", "ts": ms(t), "caller": "oidc/jwks.go:64", "msg": warn}
                    )
                )
        if t > NOW - timedelta(minutes=25):
            lines[p].append(json.dumps(entry))
        if i % 9 == 0:
            s.docs.append(
                doc(
                    ms(t + timedelta(seconds=2)),
                    "GET /api/v1/courses 200",
                    "info",
                    "course-api",
                    NS,
                    courses[i % 2],
                    "course-api",
                    http__response__status_code=200,
                    event__duration=int(rng.uniform(8, 40) * 1e6),
                )
            )
        if i % 13 == 0 and t > START:
            s.docs.append(
                doc(
                    ms(t + timedelta(seconds=1)),
                    "sign-in callback failed, showing retry page (upstream 502 from auth-gateway)",
                    "warn",
                    "learner-web",
                    "web",
                    web[i % 4],
                    "learner-web",
                    http__response__status_code=502,
                )
            )
        if i % 40 == 0:
            s.docs.append(
                doc(
                    ms(t),
                    "DEPRECATION: punycode module is deprecated",
                    "warn",
                    "learner-web",
                    "web",
                    web[(i // 40) % 4],
                    "learner-web",
                )
            )
        t += timedelta(seconds=rng.uniform(6, 14))
        i += 1
    for p in gw:
        s.log(NS, p, "auth-gateway", lines[p])
    s.log(
        "data",
        redis[0],
        "session-store",
        [
            f"1:M {(NOW - timedelta(minutes=m)).strftime('%d %b %Y %H:%M:%S.000')} * 10000 changes in 60 seconds. Saving..."
            for m in range(30, 0, -6)
        ]
        + ["1:M * Background saving terminated with success"],
    )

    # metrics, per minute over two hours
    m = Metrics()
    start = NOW - timedelta(hours=2)
    for p in gw:
        login_steps, token_steps, jwks_steps, health_steps, cpu_steps, mem_steps = (
            [],
            [],
            [],
            [],
            [],
            [],
        )
        cpu = 0.0
        for k in range(61):
            when = start + timedelta(minutes=2 * k)
            unix = int(when.timestamp())
            n = 80 + rng.randint(0, 24)
            toks = [_idp_latency(rng, when, "token") for _ in range(n)]
            token_steps.append((unix, toks))
            jwks_steps.append((unix, [_idp_latency(rng, when, "jwks") for _ in range(2)]))
            login_steps.append((unix, [min(5.004, x + rng.uniform(0.003, 0.01)) for x in toks]))
            health_steps.append((unix, [rng.uniform(0.0005, 0.002) for _ in range(6)]))
            cpu += 120 * rng.uniform(0.035, 0.06)
            cpu_steps.append((unix, 60 * 0.0 + 0.0))
            cpu_steps[-1] = (unix, cpu)
            mem_steps.append((unix, float(int(61e6 + rng.uniform(0, 3e6)))))
        pl = {"namespace": NS, "pod": p, "service": "auth-gateway"}
        for code, failed in (("302", False), ("502", True)):
            counter(
                m,
                "http_requests",
                "HTTP requests served.",
                {**pl, "handler": "/oauth/callback", "code": code},
                [(u, float(sum((x >= 5.0) == failed for x in xs))) for u, xs in token_steps],
            )
        histogram(
            m,
            "http_request_duration_seconds",
            "Latency of HTTP requests.",
            {**pl, "handler": "/oauth/callback", "method": "GET"},
            login_steps,
        )
        histogram(
            m,
            "http_request_duration_seconds",
            "Latency of HTTP requests.",
            {**pl, "handler": "/healthz", "method": "GET"},
            health_steps,
        )
        histogram(
            m,
            "oidc_client_request_duration_seconds",
            "Latency of outbound requests to the OIDC provider.",
            {**pl, "endpoint": "token", "host": "quillmate.eu.idp-cloud.example.com"},
            token_steps,
        )
        histogram(
            m,
            "oidc_client_request_duration_seconds",
            "Latency of outbound requests to the OIDC provider.",
            {**pl, "endpoint": "keys", "host": "quillmate.eu.idp-cloud.example.com"},
            jwks_steps,
        )
        cl = {"namespace": NS, "pod": p, "container": "auth-gateway"}
        counter(
            m,
            "container_cpu_usage_seconds",
            "Cumulative cpu time consumed.",
            cl,
            [(u, 0.0) for u, _ in cpu_steps[:1]]
            + [
                (cpu_steps[j][0], cpu_steps[j][1] - cpu_steps[j - 1][1])
                for j in range(1, len(cpu_steps))
            ],
        )
        gauge(m, "container_memory_working_set_bytes", "Current working set.", cl, mem_steps)
    for k in range(61):
        when = start + timedelta(minutes=2 * k)
        gauge(
            m,
            "redis_commands_latency_p99_seconds",
            "p99 command latency (redis_exporter).",
            {"namespace": "data", "pod": redis[0], "cmd": "set"},
            [(int(when.timestamp()), round(rng.uniform(0.0002, 0.0006), 6))],
        )
    s.metrics = m
    return s
