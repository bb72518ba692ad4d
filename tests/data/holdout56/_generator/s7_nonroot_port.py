"""A hardening change runs help-center as a non-root user; it cannot bind port 80."""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from pathlib import Path

from . import _kit as k

SID = "h56-help-center-crashloop"
NOW = "2026-12-21T15:00:00Z"

NODES = [
    ("ip-10-4-16-31.ca-central-1.compute.internal", "ca-central-1a"),
    ("ip-10-4-32-112.ca-central-1.compute.internal", "ca-central-1b"),
    ("ip-10-4-48-9.ca-central-1.compute.internal", "ca-central-1d"),
    ("ip-10-4-16-240.ca-central-1.compute.internal", "ca-central-1a"),
    ("ip-10-4-32-67.ca-central-1.compute.internal", "ca-central-1b"),
]
IMAGE = "quay.io/lumenfield/help-center:4.6.0"
OLD_IMAGE = "quay.io/lumenfield/help-center:4.5.2"
HARDEN = "SEC-2291: run web tier as non-root (runAsNonRoot, drop ALL capabilities)"


def _app(image: str, hardened: bool) -> k.Obj:
    c = k.container(
        "help-center",
        image,
        "200m",
        "256Mi",
        "1",
        "512Mi",
        [("http", 80)],
        env=[
            ("HTTP_ADDR", ":80"),
            ("CONTENT_DIR", "/srv/content"),
            ("SEARCH_URL", "http://search-lite.web.svc:7700"),
        ],
        readiness=k.http_probe("/healthz", "http"),
        liveness=k.http_probe("/healthz", "http", period=20, delay=10),
    )
    if hardened:
        c["securityContext"] = {
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "readOnlyRootFilesystem": True,
        }
    return c


def _pod_security(hardened: bool) -> k.Obj:
    if not hardened:
        return {}
    return {
        "securityContext": {
            "runAsNonRoot": True,
            "runAsUser": 10001,
            "runAsGroup": 10001,
            "fsGroup": 10001,
            "seccompProfile": {"type": "RuntimeDefault"},
        }
    }


def build(root: Path) -> None:
    sc = k.Scenario(SID, NOW, seed=5607)
    node_names = [n for n, _ in NODES]
    for i, (name, zone) in enumerate(NODES):
        sc.add(
            k.node(
                name,
                zone,
                sc.ago(days=12 + 2 * i),
                sc.ago(minutes=0.2),
                region="ca-central-1",
                runtime="containerd://1.7.20",
            )
        )
    plat = k.platform(sc, node_names)
    for ns in ("web", "accounts"):
        sc.add(k.namespace(ns, sc.ago(days=310)))
    morning = sc.ago(hours=5, minutes=48)  # 09:12, 4.6.0
    hardened_at = sc.ago(minutes=36, seconds=20)  # 14:23:40
    start = sc.ago(minutes=60)

    # ---------------- web/help-center ----------------
    labels = {"app.kubernetes.io/name": "help-center"}
    vols = {"volumes": [{"name": "tmp", "emptyDir": {}}]}
    t_old = k.template(labels, [_app(IMAGE, False)], extra_spec=vols)
    t_new = k.template(
        labels,
        [_app(IMAGE, True)],
        extra_spec={**vols, **_pod_security(True)},
    )
    t_older = k.template(labels, [_app(OLD_IMAGE, False)], extra_spec=vols)
    d_uid = sc.uid()
    h_older, h_old, h_new = sc.rs_hash(), sc.rs_hash(), sc.rs_hash()
    rs_new_name = f"help-center-{h_new}"
    dep = k.deployment_obj(
        "web",
        "help-center",
        d_uid,
        sc.ago(days=300),
        4,
        t_new,
        31,
        ready=3,
        updated=2,
        available=3,
        unavailable=2,
        generation=44,
        annotations={"kubernetes.io/change-cause": HARDEN},
        labels=labels,
        progressing=(
            "False",
            "ProgressDeadlineExceeded",
            f'ReplicaSet "{rs_new_name}" has timed out progressing.',
            hardened_at + timedelta(minutes=10, seconds=2),
        ),
        available_cond=(
            "True",
            "MinimumReplicasAvailable",
            "Deployment has minimum availability.",
            morning + timedelta(minutes=1),
        ),
    )
    dep["status"]["replicas"] = 5
    sc.add(dep)
    rs_older = k.replicaset_obj(
        "web", "help-center", d_uid, h_older, sc.uid(), sc.ago(days=6), t_older, 29, 0
    )
    rs_old = k.replicaset_obj(
        "web",
        "help-center",
        d_uid,
        h_old,
        sc.uid(),
        morning,
        t_old,
        30,
        3,
        change_cause="release 4.6.0 (article feedback widget, search-lite client)",
    )
    rs_new = k.replicaset_obj(
        "web",
        "help-center",
        d_uid,
        h_new,
        sc.uid(),
        hardened_at,
        t_new,
        31,
        2,
        ready=0,
        change_cause=HARDEN,
    )
    sc.add(rs_older, rs_old, rs_new)
    old_refs: list[k.PodRef] = []
    for i in range(3):
        node_name = node_names[i]
        name = f"help-center-{h_old}-{sc.pod_suffix()}"
        ip = sc.pod_ip(node_name)
        started = morning + timedelta(seconds=15 * i + 5)
        sc.add(
            k.pod(
                "web",
                name,
                sc.uid(),
                k.owner("ReplicaSet", rs_old["metadata"]["name"], rs_old["metadata"]["uid"]),
                rs_old["spec"]["template"],
                node_name,
                ip,
                k.node_ip(node_name),
                started,
                [k.running_status("help-center", IMAGE, started + timedelta(seconds=3))],
            )
        )
        old_refs.append(k.PodRef(name, ip, node_name, ""))
    new_refs: list[k.PodRef] = []
    for i in range(2):
        node_name = node_names[3 + i]
        name = f"{rs_new_name}-{sc.pod_suffix()}"
        ip = sc.pod_ip(node_name)
        uid = sc.uid()
        created = hardened_at + timedelta(seconds=i)
        restarts = 10 - i
        last_start = sc.ago(minutes=sc.rng.randint(1, 3), seconds=sc.rng.randint(0, 59))
        last = k.terminated("Error", 1, last_start, last_start + timedelta(milliseconds=420))
        last["finishedAt"] = k.iso(last_start + timedelta(seconds=1))
        status = k.waiting_status(
            "help-center",
            IMAGE,
            "CrashLoopBackOff",
            f"back-off 5m0s restarting failed container=help-center pod={name}_web({uid})",
            restarts,
            last,
        )
        sc.add(
            k.pod(
                "web",
                name,
                uid,
                k.owner("ReplicaSet", rs_new_name, rs_new["metadata"]["uid"]),
                rs_new["spec"]["template"],
                node_name,
                ip,
                k.node_ip(node_name),
                created,
                [status],
                conditions=k.pod_conditions(created, created, False, "ContainersNotReady"),
            )
        )
        new_refs.append(k.PodRef(name, ip, node_name, uid))
        sc.event(
            "web",
            "Pod",
            name,
            "Scheduled",
            f"Successfully assigned web/{name} to {node_name}",
            created,
        )
        sc.event(
            "web",
            "Pod",
            name,
            "Pulled",
            f'Container image "{IMAGE}" already present on machine',
            created + timedelta(seconds=1),
            last_start,
            count=restarts + 1,
        )
        sc.event(
            "web",
            "Pod",
            name,
            "Created",
            "Created container help-center",
            created + timedelta(seconds=1),
            last_start,
            count=restarts + 1,
        )
        sc.event(
            "web",
            "Pod",
            name,
            "Started",
            "Started container help-center",
            created + timedelta(seconds=2),
            last_start,
            count=restarts + 1,
        )
        sc.event(
            "web",
            "Pod",
            name,
            "BackOff",
            f"Back-off restarting failed container help-center in pod {name}_web({uid})",
            created + timedelta(seconds=4),
            sc.ago(seconds=sc.rng.randint(5, 40)),
            count=sc.rng.randint(140, 170),
            etype="Warning",
            field_path="spec.containers{help-center}",
        )
        # previous instance output and every crash in the log store
        crash = created + timedelta(seconds=2)
        back = 10
        crashes: list[datetime] = []
        while crash <= last_start:
            crashes.append(crash)
            crash += timedelta(seconds=back + 1)
            back = min(300, back * 2)
        crashes = crashes[-(restarts + 1) :]
        crashes[-1] = last_start
        for c in crashes:
            lines = _crash_lines(sc, c)
            for when, level, text in lines:
                sc.log(when, "web", name, "help-center", "help-center", level, text, node_name)
            if c == crashes[-1]:
                for when, _level, text in lines:
                    sc.pod_log("web", name, "help-center", when, text, previous=True)
    sc.event(
        "web",
        "Deployment",
        "help-center",
        "ScalingReplicaSet",
        f"Scaled up replica set {rs_new_name} to 1",
        hardened_at,
        api_version="apps/v1",
    )
    sc.event(
        "web",
        "Deployment",
        "help-center",
        "ScalingReplicaSet",
        f"Scaled down replica set {rs_old['metadata']['name']} to 3 from 4",
        hardened_at,
        api_version="apps/v1",
    )
    sc.event(
        "web",
        "Deployment",
        "help-center",
        "ScalingReplicaSet",
        f"Scaled up replica set {rs_new_name} to 2 from 1",
        hardened_at + timedelta(seconds=1),
        api_version="apps/v1",
    )
    sc.add(*k.service_and_endpoints(sc, "web", "help-center", labels, 80, old_refs, new_refs))

    # a sibling that got the same hardening and runs fine: it listens on 8080
    status_c = k.container(
        "status-page",
        "quay.io/lumenfield/status-page:2.2.1",
        "100m",
        "128Mi",
        "500m",
        "256Mi",
        [("http", 8080)],
        env=[("HTTP_ADDR", ":8080")],
        security={
            "allowPrivilegeEscalation": False,
            "capabilities": {"drop": ["ALL"]},
            "readOnlyRootFilesystem": True,
        },
    )
    status_page = k.simple_deployment(
        sc,
        "web",
        "status-page",
        [status_c],
        node_names,
        2,
        created=sc.ago(days=200),
        rolled=sc.ago(minutes=41),
        revision=12,
        port=8080,
        extra_spec=_pod_security(True),
    )
    status_rs = k.replicaset_names(sc, "web", "status-page")[-1]
    for obj in sc.objects:
        if obj["kind"] == "ReplicaSet" and obj["metadata"]["name"] == status_rs:
            obj["metadata"]["annotations"]["kubernetes.io/change-cause"] = HARDEN
    sc.event(
        "web",
        "Deployment",
        "status-page",
        "ScalingReplicaSet",
        f"Scaled up replica set {status_rs} to 2",
        sc.ago(minutes=41),
        api_version="apps/v1",
    )
    search = k.simple_deployment(
        sc,
        "web",
        "search-lite",
        [
            k.container(
                "meilisearch",
                "getmeili/meilisearch:v1.11.3",
                "200m",
                "512Mi",
                "1",
                "1Gi",
                [("http", 7700)],
            )
        ],
        node_names[1:2],
        1,
        created=sc.ago(days=90),
        rolled=sc.ago(days=20),
        revision=3,
        port=7700,
        restarts={0: (1, k.terminated("OOMKilled", 137, sc.ago(days=20), sc.ago(days=5, hours=2)))},
    )
    accounts = k.simple_deployment(
        sc,
        "accounts",
        "accounts-web",
        [
            k.container(
                "accounts-web",
                "quay.io/lumenfield/accounts-web:7.8.0",
                "300m",
                "384Mi",
                "1",
                "768Mi",
                [("http", 8080)],
            )
        ],
        node_names,
        3,
        created=sc.ago(days=300),
        rolled=sc.ago(days=2),
        revision=77,
        port=8080,
    )

    # ---------------- metrics ----------------
    for p in old_refs:
        sc.metrics.gauge(
            "kube_pod_container_status_restarts_total",
            {"namespace": "web", "pod": p.name, "container": "help-center"},
            lambda _t: 0,
            help_text="The number of container restarts per container.",
        )
    for i, p in enumerate(new_refs):
        restarts = 10 - i

        def count(t: datetime, r: int = restarts) -> float | None:
            if t < hardened_at:
                return None
            mins = (t - hardened_at).total_seconds() / 60
            return float(min(r, int(mins / 3.3) if mins > 10 else int(mins / 1.4)))

        sc.metrics.gauge(
            "kube_pod_container_status_restarts_total",
            {"namespace": "web", "pod": p.name, "container": "help-center"},
            count,
        )
    for p in new_refs:
        sc.metrics.gauge(
            "kube_pod_container_status_waiting_reason",
            {
                "namespace": "web",
                "pod": p.name,
                "container": "help-center",
                "reason": "CrashLoopBackOff",
            },
            lambda t: (
                None if t < hardened_at else (1 if t > hardened_at + timedelta(seconds=30) else 0)
            ),
            help_text="Describes the reason the container is currently in waiting state.",
        )
    for metric, fn in (
        ("kube_deployment_status_replicas_available", lambda t: 3 if t > hardened_at else 4),
        ("kube_deployment_status_replicas_unavailable", lambda t: 2 if t > hardened_at else 0),
        ("kube_deployment_spec_replicas", lambda _t: 4),
    ):
        sc.metrics.gauge(metric, {"namespace": "web", "deployment": "help-center"}, fn)
    k.container_metrics(
        sc, "web", old_refs, "help-center", lambda t: 0.14 if t < hardened_at else 0.19, 120 * k.MI
    )
    k.container_metrics(sc, "web", status_page.pods, "status-page", 0.02, 40 * k.MI)
    k.container_metrics(sc, "accounts", accounts.pods, "accounts-web", 0.11, 250 * k.MI)
    for code, fn in (
        ("200", lambda _t: 38.0),
        ("404", lambda _t: 1.3),
        ("502", lambda t: 0.3 if hardened_at < t < hardened_at + timedelta(minutes=3) else 0.0),
    ):
        sc.metrics.counter(
            "nginx_ingress_controller_requests",
            {
                "namespace": "web",
                "ingress": "help-center",
                "service": "help-center",
                "status": code,
            },
            k.noisy(sc, fn, 0.08),
            start=sc.rng.randint(10_000, 9_000_000),
            integer=True,
            help_text="The total number of client requests",
        )

    # ---------------- logs ----------------
    for p in old_refs:
        for t in sc.poisson_times(start, sc.now, lambda _t: 1.5):
            slug = sc.rng.choice(_SLUGS)
            sc.log(
                t,
                "web",
                p.name,
                "help-center",
                "help-center",
                "info",
                json.dumps(
                    {
                        "level": "info",
                        "ts": k.iso_ms(t),
                        "msg": "request",
                        "method": "GET",
                        "path": f"/articles/{slug}",
                        "status": 200,
                        "dur_ms": sc.rng.randint(2, 40),
                    }
                ),
                p.node,
            )
        for t in sc.poisson_times(start, sc.now, lambda _t: 0.15):
            sc.log(
                t,
                "web",
                p.name,
                "help-center",
                "help-center",
                "error",
                json.dumps(
                    {
                        "level": "error",
                        "ts": k.iso_ms(t),
                        "msg": "article not found",
                        "path": f"/articles/{sc.hexid(6)}",
                        "status": 404,
                    }
                ),
                p.node,
            )
        for t in sc.poisson_times(start, sc.now, lambda _t: 0.1):
            sc.log(
                t,
                "web",
                p.name,
                "help-center",
                "help-center",
                "warn",
                json.dumps(
                    {
                        "level": "warn",
                        "ts": k.iso_ms(t),
                        "msg": "search-lite slow response",
                        "dur_ms": sc.rng.randint(300, 900),
                    }
                ),
                p.node,
            )
    for p in status_page.pods:
        sc.log(
            sc.ago(minutes=40, seconds=50),
            "web",
            p.name,
            "status-page",
            "status-page",
            "info",
            'level=info msg="status-page 2.2.1 listening" addr=:8080 uid=10001',
            p.node,
        )
    k.background_logs(
        sc,
        "web",
        status_page.pods,
        "status-page",
        "status-page",
        0.2,
        [("info", 'level=info msg="component check ok" checks={n}', 1)],
    )
    k.background_logs(
        sc,
        "web",
        search.pods,
        "meilisearch",
        "search-lite",
        0.3,
        [
            (
                "info",
                'actix_web::middleware::logger: {ip} "POST /indexes/articles/'
                'search HTTP/1.1" 200 {n} "-" "help-center/4.6.0" 0.00{ms}',
                1,
            )
        ],
    )
    k.background_logs(
        sc,
        "accounts",
        accounts.pods,
        "accounts-web",
        "accounts-web",
        0.6,
        [
            ("info", "GET /account/settings 200 {ms}ms", 10),
            ("warn", "session cookie without SameSite from legacy client", 1),
        ],
    )
    for t in sc.poisson_times(start, sc.now, lambda _t: 2.0):
        p = sc.rng.choice(plat.ingress.pods)
        target = sc.rng.choice(old_refs)
        sc.log(
            t,
            "ingress-nginx",
            p.name,
            "controller",
            "ingress-nginx",
            "info",
            k.ingress_line(
                sc,
                t,
                "GET",
                f"/articles/{sc.rng.choice(_SLUGS)}",
                200,
                sc.rng.uniform(0.004, 0.05),
                "web",
                "help-center",
                80,
                target.ip,
            ),
            p.node,
            http__response__status_code=200,
        )

    sc.write(
        root,
        title="help-center pods crash-looping",
        report="""
KubePodCrashLooping for help-center in web since ~14:25. two new pods keep restarting, the old
ones still serve so the site is up but the rollout is stuck. this morning we shipped 4.6.0 (new
search-lite client) so I assume that image is broken; should I roll back to 4.5.2?
""",
        category="crash_loop",
        culprit=("Deployment", "web", "help-center"),
        evidence=["bind: permission denied", "runAsNonRoot", "CrashLoopBackOff"],
        fix=(
            "Revision 31 (SEC-2291) runs help-center as UID 10001 with all capabilities dropped, "
            "so it cannot bind port 80. Make it listen on an unprivileged port (HTTP_ADDR=:8080, "
            "containerPort/targetPort 8080) or add NET_BIND_SERVICE; 4.6.0 itself is fine (it "
            "has served since 09:12) and rolling back to 4.5.2 would keep crashing."
        ),
    )


_SLUGS = ["reset-password", "billing-faq", "export-data", "sso-setup", "api-limits", "mobile-app"]


def _crash_lines(sc: k.Scenario, at: datetime) -> list[tuple[datetime, str, str]]:
    t1 = at + timedelta(milliseconds=sc.rng.randint(20, 60))
    t2 = t1 + timedelta(milliseconds=sc.rng.randint(150, 300))
    t3 = t2 + timedelta(milliseconds=sc.rng.randint(3, 12))
    return [
        (
            t1,
            "info",
            json.dumps(
                {
                    "level": "info",
                    "ts": k.iso_ms(t1),
                    "msg": "help-center 4.6.0 starting",
                    "commit": "9f1c2ab",
                    "addr": ":80",
                }
            ),
        ),
        (
            t2,
            "info",
            json.dumps(
                {
                    "level": "info",
                    "ts": k.iso_ms(t2),
                    "msg": "loaded articles",
                    "count": 1284,
                    "dir": "/srv/content",
                }
            ),
        ),
        (
            t3,
            "fatal",
            json.dumps(
                {
                    "level": "fatal",
                    "ts": k.iso_ms(t3),
                    "msg": "http server failed",
                    "error": "listen tcp :80: bind: permission denied",
                }
            ),
        ),
    ]
