"""Shape 4: profile-service 4.0.0 listens on 9000 instead of 8080 (its chart changed the
container port); the Service, kept in another repository, still sends traffic to
targetPort 8080. Endpoints exist, pods are Ready on their own port, connections are
refused and the ingress answers 502."""

from __future__ import annotations

from datetime import datetime, timedelta

from .k8s import (
    MiB,
    PodState,
    Revision,
    backends,
    container,
    cpu_hpa_current,
    cpu_hpa_metric,
    deployment,
    hpa,
    http_probe,
    ingress,
    namespace,
    node,
    service,
)
from .kit import World, iso_ms, parse
from .signals import access_logs, bystander, daily, revision_metrics, timeline


def build() -> World:
    now = parse("2026-11-26T10:58:00Z")
    rollout = now - timedelta(minutes=22)
    cutover = rollout + timedelta(minutes=2, seconds=30)   # the last 3.3.1 pod gone
    w = World(
        "profile-page-502",
        "Profile page answers 502 after a green rollout",
        now,
        "accounts.example.com profile page gives 502 for everyone since ~10:40. "
        "profile-service pods all Running and Ready, zero restarts. the 4.0.0 rollout went "
        "green in argo so not sure it's that, maybe the ingress controller? it was upgraded "
        "on monday",
        {"category": "network",
         "culprit": {"kind": "Service", "namespace": "accounts", "name": "profile-service"},
         "evidence": ["targetPort 8080", "containerPort: 9000",
                      "connect() failed (111: Connection refused)",
                      "listening on 0.0.0.0:9000"],
         "fix": "Point the profile-service Service's targetPort at 9000 (or at the named port "
                "http) to match the 4.0.0 pods; until then roll back to 3.3.1."},
        seed=3004,
    )
    long_ago = parse("2024-05-14T13:00:00Z")
    for ns in ("accounts", "ingress-nginx"):
        namespace(w, ns, long_ago)
    nodes = [f"aks-system-2941{n}-vmss0000{k}" for n, k in (("7", "0c"), ("7", "0d"), ("8", "12"),
                                                             ("8", "13"))]
    for i, name in enumerate(nodes):
        node(w, name, now - timedelta(days=3, hours=5 * i), zone=f"westeurope-{i % 3 + 1}")

    def profile(tag: str, port: int) -> dict[str, object]:
        env = [{"name": "SERVER_PORT", "value": str(port)}] if port != 8080 else []
        env += [{"name": "PROFILE_DB_HOST", "value": "accounts-pg.postgres.database.azure.com"},
                {"name": "SESSION_STORE", "value": "redis://session-store.accounts.svc:6379"}]
        return container("profile-service", f"acmeprod.azurecr.io/accounts/profile-service:{tag}",
                         port=port, cpu="250m", memory="512Mi", env=env,
                         liveness=http_probe("/health/live", "http", delay=15),
                         readiness=http_probe("/health/ready", "http", delay=5))
    old = Revision(8, now - timedelta(days=6, hours=2), [profile("3.3.1", 8080)], pods=[],
                   replicas=0)
    new = Revision(9, rollout, [profile("4.0.0", 9000)], pods=[
        PodState(node=nodes[i], created=rollout + timedelta(seconds=35 * i)) for i in range(4)])
    deployment(w, "accounts", "profile-service", long_ago, [old, new], replicas=4,
               team="identity")
    service(w, "accounts", "profile-service", long_ago, target=8080,
            backends=backends(w, "accounts", [new]))
    for k, (name, state) in enumerate(zip(new.pod_names, new.pods, strict=True)):
        boot = state.created + timedelta(seconds=7)
        lines = [
            f"{iso_ms(boot)} INFO  profile-service 4.0.0 (go1.23.3) starting",
            f"{iso_ms(boot + timedelta(milliseconds=120))} INFO  connected to postgres "
            "accounts-pg.postgres.database.azure.com:5432/profiles (pool 15)",
            f"{iso_ms(boot + timedelta(milliseconds=180))} INFO  session store "
            "redis://session-store.accounts.svc:6379 ok",
            f"{iso_ms(boot + timedelta(milliseconds=200))} INFO  http server listening on "
            "0.0.0.0:9000",
        ]
        for text in lines:
            w.log(boot, "accounts", name, "profile-service", "profile-service", "info",
                  text.split("  ", 1)[1])
        w.pod_log("accounts", name, "profile-service", lines + [
            f"{iso_ms(m)} DEBUG GET /health/ready 200 0.4ms"
            for m in timeline(w, boot + timedelta(seconds=5), 60)])
        w.event("accounts", "Pod", name, "Scheduled",
                f"Successfully assigned accounts/{name} to {state.node}", first=state.created,
                component="default-scheduler")
        w.event("accounts", "Pod", name, "Pulled",
                'Successfully pulled image "acmeprod.azurecr.io/accounts/profile-service:4.0.0" '
                f"in 2.{w.rng.randint(100, 999)}s", first=state.created + timedelta(seconds=4),
                host=state.node, field_path="spec.containers{profile-service}")
        w.event("accounts", "Pod", name, "Started", "Started container profile-service",
                first=state.created + timedelta(seconds=6), host=state.node,
                field_path="spec.containers{profile-service}")
        w.event("accounts", "Deployment", "profile-service", "ScalingReplicaSet",
                f"Scaled up replica set profile-service-{new.hash} to {k + 1}"
                + (f" from {k}" if k else ""), first=state.created,
                component="deployment-controller")
        w.event("accounts", "Deployment", "profile-service", "ScalingReplicaSet",
                f"Scaled down replica set profile-service-{old.hash} to {3 - k} from {4 - k}",
                first=state.created + timedelta(seconds=20), component="deployment-controller")
    # Requests reach the old pods until the cut-over; the new ones only see their probes.
    for i in range(4):
        w.counter("http_requests_total", {"namespace": "accounts", "pod":
                  f"profile-service-{old.hash}-{w.suffix()}", "service": "profile-service",
                  "handler": "/api/profile", "method": "GET", "code": "200"},
                  w.steps(start=now - timedelta(hours=3),
                          end=rollout + timedelta(seconds=35 * i + 20)),
                  lambda t: 11 * daily(t))
    revision_metrics(w, "accounts", "profile-service", [new], memory=lambda t: 61 * MiB,
                     cpu=lambda t: 0.004, memory_limit=512 * MiB)

    # Callers: the web BFF and the ingress.
    web = bystander(w, "accounts", "account-web", replicas=3, nodes=nodes,
                    image="acmeprod.azurecr.io/accounts/account-web:12.8.0", created=long_ago,
                    rev_created=now - timedelta(days=3, hours=1), memory_mib=280,
                    memory_limit="512Mi", cpu_cores=0.12, rps=0, median_s=0.05, port=3000,
                    team="identity")
    for moment in timeline(w, now - timedelta(hours=3), 20):
        pod = w.rng.choice(web.pod_names)
        if moment > cutover:
            w.log(moment, "accounts", pod, "account-web", "account-web", "error",
                  "GET /me failed: request to http://profile-service.accounts.svc/api/profile/me "
                  "failed, reason: connect ECONNREFUSED 172.20.14.88:80",
                  error__type="FetchError")
        else:
            w.log(moment, "accounts", pod, "account-web", "account-web", "info",
                  f"GET /me 200 {w.rng.randint(20, 90)}ms")
    bystander(w, "accounts", "session-store", replicas=1, nodes=nodes[2:],
              image="docker.io/library/redis:7.4.1-alpine", created=long_ago,
              rev_created=now - timedelta(days=6, hours=20), memory_mib=190,
              memory_limit="1Gi", cpu_cores=0.03, rps=0, median_s=0.001, port=6379,
              team="identity")
    bystander(w, "accounts", "avatar-resizer", replicas=2, nodes=nodes[:2],
                       image="acmeprod.azurecr.io/accounts/avatar-resizer:0.9.4",
                       created=long_ago, rev_created=now - timedelta(days=4), memory_mib=150,
                       memory_limit="256Mi", cpu_cores=0.02, rps=1.5, median_s=0.12,
                       team="identity")
    hpa(w, "accounts", "avatar-resizer", long_ago, target="avatar-resizer", minimum=2,
        maximum=6, current=2, desired=2, metrics=[cpu_hpa_metric(75)],
        current_metrics=[cpu_hpa_current(18, 45)], last_scale=now - timedelta(days=2),
        conditions=[("AbleToScale", "True", "ReadyForNewScale",
                     "recommended size matches current size"),
                    ("ScalingActive", "True", "ValidMetricFound",
                     "the HPA was able to successfully calculate a replica count from cpu "
                     "resource utilization (percentage of request)")])
    w.event("accounts", "HorizontalPodAutoscaler", "avatar-resizer", "FailedGetResourceMetric",
            "failed to get cpu utilization: unable to get metrics for resource cpu: unable to "
            "fetch metrics from resource metrics API: the server is currently unable to handle "
            "the request (get pods.metrics.k8s.io)", first=now - timedelta(minutes=44),
            last=now - timedelta(minutes=41), count=3, type_="Warning",
            component="horizontal-pod-autoscaler")
    ingress(w, "accounts", "accounts-web", long_ago, "accounts.example.com",
            [("/api/profile", "profile-service", 80), ("/", "account-web", 80)])
    nginx = bystander(w, "ingress-nginx", "ingress-nginx-controller", replicas=2,
                      nodes=nodes[1:3], image="registry.k8s.io/ingress-nginx/controller:v1.12.1",
                      created=long_ago, rev_created=now - timedelta(days=2, hours=23),
                      memory_mib=260, memory_limit="1Gi", cpu_cores=0.15, rps=0, median_s=0.01,
                      team="infra", port=80)
    ips = [s.ip for s in new.pods]

    def status(t: datetime, upstream: str) -> int:
        return 502 if upstream.startswith("accounts-profile") and t > cutover else 200
    access_logs(w, "ingress-nginx", nginx.pod_names[0], host="accounts.example.com",
                upstreams=["accounts-profile-service-80", "accounts-account-web-80"],
                rate_per_min=24, status=status,
                paths={"accounts-profile-service-80": ["/api/profile/me", "/api/profile/prefs"],
                       "accounts-account-web-80": ["/", "/settings", "/static/app.js"]},
                duration=lambda t, u, c: 0.001 if c == 502 else w.rng.uniform(0.02, 0.2))
    for moment in timeline(w, cutover, 9):
        ip = w.rng.choice(ips)
        path = w.rng.choice(("/api/profile/me", "/api/profile/prefs"))
        w.log(moment, "ingress-nginx", nginx.pod_names[w.rng.randint(0, 1)], "controller",
              "ingress-nginx", "error",
              f"[error] 41#41: *{w.rng.randint(100000, 999999)} connect() failed (111: "
              f"Connection refused) while connecting to upstream, client: {w.ip('10.0')}, "
              f'server: accounts.example.com, request: "GET {path} HTTP/2.0", upstream: '
              f'"http://{ip}:8080{path}", host: "accounts.example.com"')
    return w
