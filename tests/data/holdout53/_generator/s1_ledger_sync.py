"""crash_loop: a one-shot backfill script as a Deployment's command exits 0, CrashLoopBackOff."""

from __future__ import annotations

from pathlib import Path

from . import _kit as k

SID = "ledger-sync-restarts-after-upgrade"
NOW = "2026-04-21T14:20:00Z"
NODES = [
    "ip-10-0-21-114.ec2.internal",
    "ip-10-0-38-201.ec2.internal",
    "ip-10-0-52-77.ec2.internal",
    "ip-10-0-60-9.ec2.internal",
]
ROLLOUT = 27.0
IMG_OLD = "registry.internal/finance/ledger-sync:2.3.7"
IMG_NEW = "registry.internal/finance/ledger-sync:2.4.0"


def build(root: Path) -> None:
    sc = k.Scenario(SID, NOW, seed=5301)
    created = "2025-01-14T09:00:00Z"
    sc.add(*(k.namespace(n, created) for n in
             ("finance", "platform", "kube-system", "monitoring")))
    k.add_nodes(sc, NODES, "2026-04-02T06:12:00Z")

    # ----------------------------------------------------------- bystanders
    inv = k.AppSpec("finance", "invoice-api", "registry.internal/finance/invoice-api:5.8.2", 3,
                    NODES, revision=41, rs_age_min=41, rps=22,
                    routes=("/v2/invoices", "/v2/invoices/{id}", "/v2/invoices/{id}/pdf"))
    inv_refs = k.add_app(sc, inv)
    sc.event("finance", "Deployment", "invoice-api", "ScalingReplicaSet",
             f"Scaled up replica set {inv_refs.replicaset['metadata']['name']} to 3 from 2",
             first=40, component="deployment-controller", api="apps/v1")
    for r in inv_refs.refs:
        sc.log(40.5, r, "info", "invoice-api 5.8.2 listening on :8080 (pdf renderer pool=4)")
    gw = k.AppSpec("finance", "payments-gateway", "registry.internal/finance/payments-gw:1.19.0",
                   2, NODES[1:], revision=12, rps=9, routes=("/pay", "/refund", "/status"))
    gw_refs = k.add_app(sc, gw)
    for m in sc.spread(58, 0, 4.5):
        sc.log(m, sc.rng.choice(gw_refs.refs), "warn",
               "upstream acquirer sandbox returned 429, retrying in 250ms (non-prod merchant)")
    cache = k.AppSpec("finance", "ledger-cache", "redis:7.2.5-alpine", 1, NODES[2:], revision=2,
                      port=6379, readiness=None, kind="worker", mem_lim="1Gi", mem_mb=310,
                      worker_lines=("DB saved on disk", "Background saving started by pid {n}",
                                    "100 changes in 300 seconds. Saving..."), log_every=6)
    cache_refs = k.add_app(sc, cache)
    cst = cache_refs.pods[0]["status"]["containerStatuses"][0]
    cst["restartCount"] = 1
    cst["lastState"] = {"terminated": {"exitCode": 1, "reason": "Error",
                                       "startedAt": "2026-04-15T02:10:44Z",
                                       "finishedAt": "2026-04-18T03:02:19Z"}}
    ing = k.AppSpec("platform", "ingress-nginx-controller",
                    "registry.k8s.io/ingress-nginx/controller:v1.11.2", 2, NODES,
                    revision=9, rps=60, routes=("/",), log_every=1.0)
    ing_refs = k.add_app(sc, ing)
    for m in sc.spread(60, 0, 7):
        sc.log(m, sc.rng.choice(ing_refs.refs), "warn",
               'Error obtaining Endpoints for Service "finance/ledger-admin": no object matching '
               'key "finance/ledger-admin" in local store')
    dns = k.AppSpec("kube-system", "coredns", "registry.k8s.io/coredns/coredns:v1.11.3", 2,
                    NODES[:2], revision=1, port=53, readiness=None, kind="none", service=False)
    k.add_app(sc, dns)
    k.add_daemonset(sc, "monitoring", "node-exporter", "quay.io/prometheus/node-exporter:v1.8.2",
                    NODES)
    prom = k.AppSpec("monitoring", "kube-state-metrics",
                     "registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.13.0", 1,
                     NODES[3:], revision=6, kind="none")
    k.add_app(sc, prom)

    # ----------------------------------------------------------- the culprit
    spec = k.AppSpec("finance", "ledger-sync", IMG_NEW, 3, NODES, mem_lim="512Mi", mem_req="256Mi",
                     cpu_req="200m")
    env = [{"name": "LEDGER_DB_URL", "value": "postgres://ledger-db.finance.svc:5432/ledger"},
           {"name": "BANK_FEED_URL", "value": "https://feeds.bankhub.example/v3"}]
    probe_l = k.http_probe("/healthz", delay=20, period=10, failures=3)
    probe_r = k.http_probe("/ready", delay=5, period=10, failures=3)
    old_c = k.container("ledger-sync", IMG_OLD, cpu_req="200m", mem_req="256Mi",
                        mem_lim="512Mi", command=["/opt/ledger/bin/ledger-sync"],
                        args=["serve", "--port=8080", "--feed-interval=60s"], env=env,
                        readiness=probe_r, liveness=probe_l)
    new_c = k.container("ledger-sync", IMG_NEW, cpu_req="200m", mem_req="256Mi",
                        mem_lim="512Mi", command=["/bin/sh", "-c"],
                        args=["/opt/ledger/bin/sync-once.sh --since=24h"], env=env,
                        readiness=probe_r, liveness=probe_l)
    def run_starts(i: int) -> list[float]:
        # back-off between runs: 10s, 20s, 40s, 80s, 160s, then 300s; each run takes 38s
        out: list[float] = []
        m = ROLLOUT - i * 0.3 - 0.3
        backoff = 10.0
        while m > 0.5:
            out.append(m)
            m -= (38 + backoff) / 60
            backoff = min(300.0, backoff * 2)
        return out

    all_runs = [run_starts(0), run_starts(1)]
    restarts = [len(r) - 1 for r in all_runs]

    def crashing(i: int) -> k.NewPod:
        def f(created: str) -> k.NewPod:
            fin = sc.ago(all_runs[i][-1] - 38 / 60)
            start = fin.timestamp() - 38
            st = k.cstatus("ledger-sync", IMG_NEW, {"waiting": {
                "reason": "CrashLoopBackOff",
                "message": "back-off 5m0s restarting failed container=ledger-sync "
                           "pod=ledger-sync-pending(uid)"}},
                ready=False, restarts=restarts[i], started=False,
                last={"terminated": {"exitCode": 0, "reason": "Completed",
                                     "startedAt": k.iso(k.datetime.fromtimestamp(start, k.UTC)),
                                     "finishedAt": k.iso(fin)}})
            conds = [
                {"type": "PodReadyToStartContainers", "status": "True",
                 "lastTransitionTime": created},
                {"type": "Initialized", "status": "True", "lastTransitionTime": created},
                {"type": "Ready", "status": "False", "reason": "ContainersNotReady",
                 "message": "containers with unready status: [ledger-sync]",
                 "lastTransitionTime": created},
                {"type": "ContainersReady", "status": "False", "reason": "ContainersNotReady",
                 "message": "containers with unready status: [ledger-sync]",
                 "lastTransitionTime": created},
                {"type": "PodScheduled", "status": "True", "lastTransitionTime": created},
            ]
            return k.NewPod(NODES[(i + 1) % 4], "Running", [st], False, conds)
        return f

    dep_conds = [
        k.cond("Available", "True", "MinimumReplicasAvailable",
               "Deployment has minimum availability.", sc.t(60 * 24 * 5 + 190)),
        k.cond("Progressing", "False", "ProgressDeadlineExceeded",
               'ReplicaSet "ledger-sync-NEW" has timed out progressing.', sc.t(ROLLOUT - 10.1)),
    ]
    ro = k.add_rollout(
        sc, spec, [old_c], [new_c], old_rev=6, new_rev=7, rollout_min=ROLLOUT, old_count=2,
        new_pods=[crashing(0), crashing(1)], dep_conditions=dep_conds,
        strategy={"type": "RollingUpdate",
                  "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 1}},
        change_cause="helm upgrade ledger-sync 2.4.0: nightly backfill of bank feed gaps",
        old_rs_age_min=60 * 24 * 5 + 200,
    )
    new_rs_name = ro.new_rs["metadata"]["name"]
    ro.deployment["status"]["conditions"][1]["message"] = (
        f'ReplicaSet "{new_rs_name}" has timed out progressing.')
    for p in ro.new_pods:
        cs = p["status"]["containerStatuses"][0]
        cs["state"]["waiting"]["message"] = (
            f"back-off 5m0s restarting failed container=ledger-sync "
            f"pod={p['metadata']['name']}_finance({p['metadata']['uid']})")
    sel = {"app.kubernetes.io/name": "ledger-sync", "app.kubernetes.io/instance": "ledger-sync"}
    sc.add(k.service(sc, "finance", "ledger-sync", sel, 80, "http"),
           k.endpoints("finance", "ledger-sync", ro.old_refs, ro.new_refs, 8080))
    old_rs_name = ro.old_rs["metadata"]["name"]
    sc.event("finance", "Deployment", "ledger-sync", "ScalingReplicaSet",
             f"Scaled up replica set {new_rs_name} to 1", first=ROLLOUT,
             component="deployment-controller", api="apps/v1")
    sc.event("finance", "Deployment", "ledger-sync", "ScalingReplicaSet",
             f"Scaled down replica set {old_rs_name} to 2 from 3", first=ROLLOUT - 0.05,
             component="deployment-controller", api="apps/v1")
    sc.event("finance", "Deployment", "ledger-sync", "ScalingReplicaSet",
             f"Scaled up replica set {new_rs_name} to 2 from 1", first=ROLLOUT - 0.3,
             component="deployment-controller", api="apps/v1")

    # runs of the one-shot script in each new pod
    for i, (ref, p) in enumerate(zip(ro.new_refs, ro.new_pods, strict=True)):
        pn = p["metadata"]["name"]
        ip = ref.ip
        sc.event("finance", "Pod", pn, "Scheduled",
                 f"Successfully assigned finance/{pn} to {ref.node}", first=ROLLOUT - i * 0.3,
                 component="default-scheduler")
        sc.event("finance", "Pod", pn, "Pulling", f'Pulling image "{IMG_NEW}"',
                 first=ROLLOUT - i * 0.3 - 0.02, host=ref.node)
        sc.event("finance", "Pod", pn, "Pulled",
                 f'Container image "{IMG_NEW}" already present on machine',
                 count=restarts[i], first=ROLLOUT - i * 0.3 - 1, last=all_runs[i][-1],
                 host=ref.node)
        sc.event("finance", "Pod", pn, "Created", "Created container ledger-sync",
                 count=restarts[i] + 1, first=ROLLOUT - i * 0.3 - 0.3, last=all_runs[i][-1],
                 host=ref.node)
        sc.event("finance", "Pod", pn, "Started", "Started container ledger-sync",
                 count=restarts[i] + 1, first=ROLLOUT - i * 0.3 - 0.3, last=all_runs[i][-1],
                 host=ref.node)
        sc.event("finance", "Pod", pn, "Unhealthy",
                 f'Liveness probe failed: Get "http://{ip}:8080/healthz": dial tcp {ip}:8080: '
                 "connect: connection refused", type_="Warning", count=2 * restarts[i] + 1,
                 first=ROLLOUT - i * 0.3 - 0.7, last=all_runs[i][-1] - 0.35, host=ref.node)
        sc.event("finance", "Pod", pn, "Unhealthy",
                 f'Readiness probe failed: Get "http://{ip}:8080/ready": dial tcp {ip}:8080: '
                 "connect: connection refused", type_="Warning", count=3 * restarts[i] + 2,
                 first=ROLLOUT - i * 0.3 - 0.5, last=all_runs[i][-1] - 0.45, host=ref.node)
        sc.event("finance", "Pod", pn, "BackOff",
                 "Back-off restarting failed container ledger-sync in pod "
                 f"{pn}_finance({p['metadata']['uid']})", type_="Warning",
                 count=4 * restarts[i] + 3, first=ROLLOUT - i * 0.3 - 1.2, last=0.3 + i * 0.2,
                 host=ref.node)
        # run start times: back-off 10s, 20s, 40s, 80s, 160s, 300s, 300s ...
        runs = all_runs[i]
        last_lines: list[list[str]] = []
        for r0 in runs:
            n = sc.rng.randint(1500, 2100)
            lines = [
                (0.0, "info", "sync-once: starting one-shot ledger backfill (since=24h)"),
                (0.04, "info", "sync-once: connected to ledger-db.finance.svc:5432 (pool=2)"),
                (0.2, "info", f"sync-once: fetched {n} entries from bank feed v3"),
                (0.5, "info", f"sync-once: upserted {n} entries, 0 conflicts"),
                (0.62, "info", "sync-once: backfill complete, exiting 0"),
            ]
            run_text: list[str] = []
            for dm, lvl, msg in lines:
                sc.log(r0 - dm, ref, lvl, msg)
                run_text.append(f"{k.iso_ms(sc.ago(r0 - dm))} {lvl.upper():5} {msg}")
            last_lines.append(run_text)
        sc.pod_log("finance", pn, "ledger-sync", last_lines[-1], previous=False)
        sc.pod_log("finance", pn, "ledger-sync", last_lines[-2], previous=True)
        k.restarts_series(sc, {"namespace": "finance", "pod": pn, "container": "ledger-sync"},
                          lambda mm, rr=runs: None if mm > ROLLOUT else
                          float(sum(1 for x in rr[1:] if x >= mm)))
        lab = {"namespace": "finance", "pod": pn, "container": "ledger-sync"}
        sc.gauge("kube_pod_container_status_waiting_reason",
                 "Describes the reason the container is currently in waiting state.",
                 {**lab, "reason": "CrashLoopBackOff"},
                 lambda mm: None if mm > ROLLOUT - 1 else 1.0)
        sc.gauge("kube_pod_container_status_last_terminated_reason",
                 "Describes the last reason the container was in terminated state.",
                 {**lab, "reason": "Completed"}, lambda mm: None if mm > ROLLOUT - 1 else 1.0)
        sc.gauge("kube_pod_container_status_last_terminated_exitcode",
                 "Describes the exit code for the last container in terminated state.",
                 lab, lambda mm: None if mm > ROLLOUT - 1 else 0.0)

    for ref in ro.old_refs:
        for m in sc.spread(60, 0, 1.0):
            n = sc.rng.randint(0, 30)
            sc.log(m, ref, "info", f"feed loop: applied {n} entries from bank feed v3 "
                                   f"(lag={sc.rng.randint(1, 9)}s)")
        for m in sc.spread(60, 0, 5.0):
            sc.log(m, ref, "debug", "GET /healthz 200 0.4ms",
                   **{"http.response.status_code": 200, "url.path": "/healthz"})
        k.healthy_metrics(sc, spec, ref)
    k.deployment_available(sc, "finance", "ledger-sync",
                           lambda mm: 3.0 if mm > ROLLOUT else 2.0)
    for app in (inv, gw, ing):
        k.deployment_available(sc, app.ns, app.name, lambda mm, a=app: float(a.replicas))

    sc.write(root, {
        "id": SID,
        "title": "ledger-sync 2.4.0 rollout stuck, new pods restarting",
        "now": NOW,
        "report": (
            "ledger-sync 2.4.0 rollout is stuck in finance, the new pods keep restarting. "
            "Events are full of 'Liveness probe failed ... connection refused' so I think the "
            "liveness probe is killing them before the app is up. Can we just bump "
            "initialDelaySeconds? invoice-api also went out around the same time fwiw."
        ),
        "truth": {
            "category": "crash_loop",
            "culprit": {"kind": "Deployment", "namespace": "finance", "name": "ledger-sync"},
            "evidence": ["Completed", "sync-once.sh", "sync-once: backfill complete, exiting 0",
                         "CrashLoopBackOff"],
            "fix": (
                "Restore ledger-sync's long-running command (/opt/ledger/bin/ledger-sync serve) "
                "in the Deployment and run the one-shot sync-once.sh backfill as a Job or "
                "CronJob; the container exits 0 (Completed) and restartPolicy Always restarts "
                "it, the liveness probe never kills it."
            ),
        },
    })
