"""dependency_failure: an outside IdP moved its JWKS URL during a key rotation; every token 401s."""

from __future__ import annotations

from pathlib import Path

from . import _kit as k

SID = "members-logged-out-401"
NOW = "2026-07-15T16:10:00Z"
NODES = [
    "ip-10-3-20-51.ec2.internal",
    "ip-10-3-37-118.ec2.internal",
    "ip-10-3-54-240.ec2.internal",
]
IMG_OLD = "registry.internal/members/member-api:5.12.0"
IMG_NEW = "registry.internal/members/member-api:5.12.1"
ROLLOUT = 52.0
ROTATE = 29.0
JWKS = "https://login.northwind-id.com/.well-known/jwks.json"


def share_new_kid(m: float) -> float:
    """Fraction of incoming tokens signed with the new key (access tokens live 15 minutes)."""
    if m > ROTATE:
        return 0.0
    return min(1.0, (ROTATE - m) / 15.0)


def build(root: Path) -> None:
    sc = k.Scenario(SID, NOW, seed=5304)
    created = "2025-02-01T09:00:00Z"
    sc.add(*(k.namespace(n, created) for n in ("default", "members", "web", "data",
                                                "kube-system")))
    k.add_nodes(sc, NODES, "2026-07-10T02:00:00Z")

    # ------------------------------------------------------------- bystanders
    worker = k.AppSpec("members", "member-worker", "registry.internal/members/member-worker:5.12.0",
                       2, NODES, revision=27, kind="worker", port=None, log_every=2.0,
                       worker_lines=("sent {n} welcome emails", "expired {n} stale sessions",
                                     "synced {n} loyalty balances in {ms}ms"))
    w = k.add_app(sc, worker)
    cs = w.pods[1]["status"]["containerStatuses"][0]
    cs["restartCount"] = 1
    cs["lastState"] = {"terminated": {"exitCode": 137, "reason": "Error",
                                      "startedAt": sc.t(60 * 24 * 4 + 50),
                                      "finishedAt": sc.t(60 * 24 * 4)}}
    pgb = k.AppSpec("data", "pgbouncer-members", "bitnami/pgbouncer:1.23.1", 2, NODES[1:],
                    revision=4, port=6432, readiness=None, kind="worker", log_every=4.0,
                    worker_lines=("stats: {n} xacts/s, {n} queries/s, in 91 B/s, out 1204 B/s, "
                                  "xact 812 us, query 644 us, wait 3 us",))
    pg = k.add_app(sc, pgb)
    for m in sc.spread(60, 0, 6):
        sc.log(m, sc.rng.choice(pg.refs), "warn",
               f"C-0x{sc.hash(6)}: members/app@10.244.2.{sc.rng.randint(2, 90)}:"
               f"4{sc.rng.randint(1000, 9999)} closing because: client unexpected eof (age=0s)")
    dns = k.AppSpec("kube-system", "coredns", "registry.k8s.io/coredns/coredns:v1.11.3", 2,
                    NODES[:2], revision=1, port=53, readiness=None, kind="none", service=False)
    k.add_app(sc, dns)

    # ------------------------------------------------------------- member-api
    spec = k.AppSpec("members", "member-api", IMG_NEW, 3, NODES, cpu_req="250m", mem_req="256Mi",
                     mem_lim="512Mi", rps=0)
    env_from = [{"configMapRef": {"name": "member-api-config"}}]

    def ma(img: str) -> dict[str, object]:
        c = k.container("member-api", img, cpu_req="250m", mem_req="256Mi", mem_lim="512Mi",
                        readiness=k.http_probe("/healthz"),
                        liveness=k.http_probe("/healthz", delay=15, period=20))
        c["envFrom"] = env_from
        return c

    def ok(i: int) -> k.Callable[[str], k.NewPod]:
        def f(created: str) -> k.NewPod:
            st = k.cstatus("member-api", IMG_NEW,
                           {"running": {"startedAt": sc.t(ROLLOUT - 0.15 - i * 0.5)}}, ready=True)
            return k.NewPod(NODES[i], "Running", [st], True)
        return f

    conds = [
        k.cond("Available", "True", "MinimumReplicasAvailable",
               "Deployment has minimum availability.", sc.t(ROLLOUT - 1)),
        k.cond("Progressing", "True", "NewReplicaSetAvailable", "x", sc.t(ROLLOUT - 1.5)),
    ]
    ro = k.add_rollout(sc, spec, [ma(IMG_OLD)], [ma(IMG_NEW)], old_rev=30, new_rev=31,
                       rollout_min=ROLLOUT, old_count=0, new_pods=[ok(i) for i in range(3)],
                       dep_conditions=conds, old_rs_age_min=60 * 24 * 5 + 40,
                       change_cause="5.12.1: bump structured logging lib (zap 1.27.0)")
    ro.deployment["status"]["conditions"][1]["message"] = (
        f'ReplicaSet "{ro.new_rs["metadata"]["name"]}" has successfully progressed.')
    sel = {"app.kubernetes.io/name": "member-api", "app.kubernetes.io/instance": "member-api"}
    sc.add(k.service(sc, "members", "member-api", sel, 80, "http"),
           k.endpoints("members", "member-api", ro.new_refs, [], 8080))
    sc.add({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "member-api-config", "namespace": "members",
                     "creationTimestamp": "2025-02-01T09:30:00Z",
                     "labels": {"app.kubernetes.io/name": "member-api"}},
        "data": {"OIDC_ISSUER": "https://login.northwind-id.com",
                 "OIDC_AUDIENCE": "member-api",
                 "JWKS_URL": JWKS,
                 "JWKS_CACHE_TTL": "15m",
                 "DB_HOST": "pgbouncer-members.data.svc",
                 "LOG_LEVEL": "info"},
    })
    old_rs = ro.old_rs["metadata"]["name"]
    new_rs = ro.new_rs["metadata"]["name"]
    for j, ev in enumerate((f"Scaled up replica set {new_rs} to 1",
                            f"Scaled down replica set {old_rs} to 2 from 3",
                            f"Scaled up replica set {new_rs} to 2 from 1",
                            f"Scaled down replica set {old_rs} to 1 from 2",
                            f"Scaled up replica set {new_rs} to 3 from 2",
                            f"Scaled down replica set {old_rs} to 0 from 1")):
        sc.event("members", "Deployment", "member-api", "ScalingReplicaSet", ev,
                 first=ROLLOUT - j * 0.25, component="deployment-controller", api="apps/v1")
    routes = ("/v1/me", "/v1/me/orders", "/v1/me/addresses", "/v1/loyalty")
    for i, r in enumerate(ro.new_refs):
        t0 = ROLLOUT - 0.15 - i * 0.5
        sc.log(t0 - 0.02, r, "info", "member-api 5.12.1 starting (go1.22.5, zap 1.27.0)")
        sc.log(t0 - 0.04, r, "info", f"jwks: fetched 2 keys from {JWKS} "
                                     "(kids: nw-2026-04a, nw-2026-07a), cache ttl 15m")
        sc.log(t0 - 0.05, r, "info", "listening on :8080")
        refreshed = False
        for m in sc.spread(t0 - 0.1, 0, 0.4):
            route = sc.rng.choice(routes)
            if sc.rng.random() < share_new_kid(m):
                if not refreshed or sc.rng.random() < 0.25:
                    refreshed = True
                    sc.log(m + 0.0005, r, "warn", 'jwks: kid "nw-2026-07b" not in cached key '
                                                  "set, refreshing")
                    sc.log(m + 0.0003, r, "error",
                           f"unable to fetch JWKS: 404 Not Found (GET {JWKS}) body="
                           '{"error":"not_found","detail":"signing keys are served at '
                           '/oauth2/v2/keys, see /.well-known/openid-configuration"}',
                           **{"error.type": "jwks.FetchError", "http.response.status_code": 404,
                              "url.full": JWKS})
                sc.log(m + 0.0001, r, "warn", 'token verification failed: no key for kid '
                                              '"nw-2026-07b"', **{"error.type": "jwt.KeyError"})
                sc.log(m, r, "info", f"GET {route} 401 {sc.rng.randint(1, 4)}ms",
                       **{"http.response.status_code": 401, "url.path": route})
            else:
                sc.log(m, r, "info", f"GET {route} 200 {sc.rng.randint(6, 60)}ms",
                       **{"http.response.status_code": 200, "url.path": route})
        for m in (14.0 - i * 0.3, 0.5 + i * 0.2):
            if m < t0:
                sc.log(m, r, "warn", f"jwks: cache expired and refresh failed, keeping stale "
                                     f"key set (age {int(t0 - m)}m, kids: nw-2026-04a, "
                                     "nw-2026-07a)")
        k.healthy_metrics(sc, spec, r, since=t0)
        for code, f in (("200", lambda m: 1 - share_new_kid(m)), ("401", share_new_kid)):
            sc.counter("http_requests_total", "Total HTTP requests handled.",
                       {"namespace": "members", "service": "member-api", "pod": r.name,
                        "code": code}, lambda m, f=f: sc.noisy(14 * f(m) + 0.02, 0.1), since=t0)
        sc.counter("auth_jwks_refresh_total", "JWKS refresh attempts by outcome.",
                   {"namespace": "members", "pod": r.name, "outcome": "http_404"},
                   lambda m: 0.0 if m > ROTATE else 0.2, since=t0)
        sc.counter("auth_token_verifications_total", "JWT verifications by result.",
                   {"namespace": "members", "pod": r.name, "result": "unknown_kid"},
                   lambda m: 14 * share_new_kid(m), since=t0)
        sc.counter("auth_token_verifications_total", "JWT verifications by result.",
                   {"namespace": "members", "pod": r.name, "result": "ok"},
                   lambda m: 14 * (1 - share_new_kid(m)), since=t0)
    # the replaced pods: fine until the rollout
    for i in range(3):
        gone = k.PodRef("members", f"{old_rs}-{sc.hash(5)}", NODES[i], sc.pod_ip(NODES[i]),
                        ["member-api"], "member-api", sc.ago(60 * 24 * 5))
        for m in sc.spread(60, ROLLOUT - i * 0.5, 0.5):
            route = sc.rng.choice(routes)
            sc.log(m, gone, "info", f"GET {route} 200 {sc.rng.randint(6, 60)}ms",
                   **{"http.response.status_code": 200, "url.path": route})
        sc.log(ROLLOUT - i * 0.5 - 0.01, gone, "info", "shutdown: draining connections")
    k.deployment_available(sc, "members", "member-api", lambda m: 3.0)

    # ------------------------------------------------------------- the symptom upstream
    gw = k.AppSpec("web", "web-gateway", "registry.internal/web/web-gateway:2.31.0", 2, NODES,
                   revision=76, rps=50, routes=("/", "/shop", "/static/app.js"), log_every=1.2)
    g = k.add_app(sc, gw)
    for r in g.refs:
        for m in sc.spread(ROTATE - 1, 0, 0.5):
            if sc.rng.random() < share_new_kid(m):
                path = sc.rng.choice(("/account", "/account/orders", "/checkout"))
                sc.log(m, r, "warn", f"upstream member-api returned 401 for {path}, "
                                     "redirecting to /login",
                       **{"http.response.status_code": 302})
    sc.write(root, {
        "id": SID,
        "title": "Members logged out, member-api answering 401",
        "now": NOW,
        "report": (
            "customers keep getting kicked to /login, member-api answers 401 for basically "
            "everything since ~15:40. member-api 5.12.1 went out at 15:18, pretty sure it's "
            "that (logging lib bump, maybe it broke the auth middleware?). rollback?"
        ),
        "truth": {
            "category": "dependency_failure",
            "culprit": {"kind": "Deployment", "namespace": "members", "name": "member-api"},
            "evidence": ["unable to fetch JWKS: 404", 'no key for kid "nw-2026-07b"', JWKS],
            "fix": (
                "Point member-api's JWKS_URL at the identity provider's new key endpoint "
                "(https://login.northwind-id.com/oauth2/v2/keys, or read jwks_uri from "
                "/.well-known/openid-configuration) and restart; the IdP rotated to kid "
                "nw-2026-07b and moved the JWKS, the 5.12.1 rollout is unrelated."
            ),
        },
    })
