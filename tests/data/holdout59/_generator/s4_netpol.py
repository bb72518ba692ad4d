"""billing-db-timeouts: an egress policy lets the database through only by its ClusterIP.

billing has a default-deny egress policy; allow-db-egress opens port 5432 to an ipBlock
holding the billing-pg Service's ClusterIP. Policies are enforced after kube-proxy's DNAT,
so the packets carry the postgres pod IP and that rule matches nothing. It worked only
because a legacy policy allowed the whole pod CIDR; a GitOps cleanup pruned that legacy
policy 34 minutes ago and connections to the database now time out.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from ._base import iso, uid
from ._kit import Container, Workload
from ._scene import Line, Scene, switch
from ._signals import restarted

SID = "billing-db-timeouts"
NODES = [f"ip-10-30-{a}-{b}.eu-central-1.compute.internal"
         for a, b in ((4, 12), (5, 230), (6, 91))]


def _policy(ns: str, name: str, created: datetime, spec: dict[str, object],
            annotations: dict[str, str] | None = None) -> dict[str, object]:
    meta: dict[str, object] = {"name": name, "namespace": ns, "uid": uid("np", ns, name),
                               "creationTimestamp": iso(created), "generation": 1,
                               "labels": {"app.kubernetes.io/managed-by": "argocd",
                                          "argocd.argoproj.io/instance": "billing-platform"}}
    if annotations:
        meta["annotations"] = annotations
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": meta,
            "spec": spec}


def build(root: Path) -> None:
    """Write the scenario."""
    s = Scene(SID, "2026-06-09T11:05:00Z", seed=5904)
    prune = s.ago(34)
    s.nodes(NODES)
    s.namespaces("billing", "db", "reporting", "argocd", "kube-system")
    for ns in ("billing", "db", "reporting", "argocd", "kube-system"):
        s.find("Namespace", "", ns)["metadata"]["labels"]["kubernetes.io/metadata.name"] = ns

    pg_c = Container("postgres", "docker.io/bitnami/postgresql:16.4.0-debian-12-r14", port=5432,
                     probe_path=None, cpu_req="2", cpu_lim="4", mem_req="8Gi", mem_lim="8Gi")
    pg = s.cluster.workload(Workload(
        "db", "billing-pg", [pg_c], NODES[2:], s.ago(60 * 24 * 700), replicas=1,
        kind="StatefulSet", service_port=5432, pod_started=[s.ago(60 * 24 * 5 + 30)],
        spec_extra={"serviceName": "billing-pg"}))
    pg_ip = s.find("Service", "db", "billing-pg")["spec"]["clusterIP"]
    inv_roll = s.ago(190)
    inv = s.cluster.workload(Workload(
        "billing", "invoice-api",
        [Container("invoice-api", "harbor.fin.example.net/billing/invoice-api:2024.6.3",
                   env={"DATABASE_URL": "postgres://billing@billing-pg.db.svc.cluster.local:5432"
                        "/billing?sslmode=require&connect_timeout=5"})],
        NODES, s.ago(60 * 24 * 800), replicas=3, revision=212, rollout_at=inv_roll,
        previous_images={"invoice-api": "harbor.fin.example.net/billing/invoice-api:2024.6.2"}))

    def worker_pod(i: int, pod: dict[str, object]) -> None:
        restarted(pod, count=3, finished=s.ago(60 * 24 * 2 + 70), reason="Error", exit_code=2)

    worker = s.cluster.workload(Workload(
        "billing", "dunning-worker",
        [Container("dunning-worker", "harbor.fin.example.net/billing/dunning-worker:1.9.0",
                   port=None)], NODES[1:2], s.ago(60 * 24 * 500), replicas=1,
        rollout_at=s.ago(60 * 24 * 6), mutate_pod=worker_pod, service_port=None))
    rep = s.cluster.workload(Workload(
        "reporting", "revenue-dash",
        [Container("revenue-dash", "harbor.fin.example.net/bi/revenue-dash:3.2.1")],
        NODES[:1], s.ago(60 * 24 * 300), replicas=1, rollout_at=s.ago(60 * 24 * 3)))
    s.pending_pod("reporting", "month-close-export-29152080-9tmkd", "month-close-export",
                  "harbor.fin.example.net/bi/exporter:0.8.0", cpu="6", memory="40Gi",
                  since=s.ago(75), message="0/3 nodes are available: 3 Insufficient memory. "
                  "preemption: 0/3 nodes are available: 3 No preemption victims found for "
                  "incoming pod.")

    old = s.ago(60 * 24 * 420)
    s.cluster.add(_policy("billing", "default-deny-egress", old,
                          {"podSelector": {}, "policyTypes": ["Egress"]}))
    s.cluster.add(_policy("billing", "allow-dns", old, {
        "podSelector": {}, "policyTypes": ["Egress"],
        "egress": [{"to": [{"namespaceSelector": {"matchLabels": {
            "kubernetes.io/metadata.name": "kube-system"}}, "podSelector": {"matchLabels": {
                "k8s-app": "kube-dns"}}}],
            "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]}]}))
    s.cluster.add(_policy("billing", "allow-db-egress", s.ago(60 * 24 * 140), {
        "podSelector": {"matchLabels": {"app.kubernetes.io/name": "invoice-api"}},
        "policyTypes": ["Egress"],
        "egress": [{"to": [{"ipBlock": {"cidr": f"{pg_ip}/32"}}],
                    "ports": [{"protocol": "TCP", "port": 5432}]}]},
        {"description": "invoice-api -> billing-pg (db/billing-pg service)"}))
    s.cluster.add(_policy("billing", "allow-payments-egress", s.ago(60 * 24 * 140), {
        "podSelector": {"matchLabels": {"app.kubernetes.io/name": "invoice-api"}},
        "policyTypes": ["Egress"],
        "egress": [{"to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8",
                                                                          "172.16.0.0/12"]}}],
                    "ports": [{"protocol": "TCP", "port": 443}]}]}))
    s.cluster.add(_policy("db", "billing-pg-ingress", old, {
        "podSelector": {"matchLabels": {"app.kubernetes.io/name": "billing-pg"}},
        "policyTypes": ["Ingress"],
        "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {
            "kubernetes.io/metadata.name": ns}}} for ns in ("billing", "reporting")],
            "ports": [{"protocol": "TCP", "port": 5432}]}]}))
    argo = s.cluster.workload(Workload(
        "argocd", "argocd-application-controller",
        [Container("argocd-application-controller", "quay.io/argoproj/argocd:v2.13.2",
                   port=8082, probe_path=None)], NODES[:1], s.ago(60 * 24 * 365), replicas=1,
        kind="StatefulSet", rollout_at=s.ago(60 * 24 * 6)))

    # --- events
    for i, ref in enumerate(inv):
        s.cluster.event("billing", "Pod", ref.pod, "Unhealthy", "Readiness probe failed: HTTP "
                        "probe failed with statuscode: 503", first=s.ago(32 - i),
                        last=s.ago(24 - i), count=4 - i, type_="Warning", host=ref.node)

    # --- logs
    s.logs.add(prune, argo[0], "info", "Pruned resource NetworkPolicy billing/"
               "legacy-allow-cluster-egress: application=billing-platform revision=9f3c2e1 "
               "(PR #1418 'remove legacy netpols')",
               **{"log.logger": "appcontroller"})
    s.logs.add(prune + timedelta(seconds=1), argo[0], "info", "Sync operation to 9f3c2e1 "
               "succeeded: application=billing-platform, 1 pruned, 0 updated",
               **{"log.logger": "appcontroller"})

    def argo_line(t: datetime) -> Line | None:
        app = s.pick(["billing-platform", "reporting", "ingress", "observability"])
        return ("info", f"Reconciliation completed application={app} dedup_ms=0 "
                f"diff_ms={s.rng.randrange(1, 40)} comparison-level=1", {})

    s.chatter(argo[0], argo_line, every_s=25, minutes=150)

    def inv_line(t: datetime) -> Line | None:
        r = s.rng.random()
        if t >= prune:
            if r < 0.55:
                return ("error", "failed to connect to `host=billing-pg.db.svc.cluster.local "
                        "user=billing database=billing`: dial error (dial tcp "
                        f"{pg_ip}:5432: i/o timeout)",
                        {"error.type": "*pgconn.ConnectError", "http.response.status_code": 503})
            if r < 0.7:
                return ("warn", "pgxpool: acquire conn timeout after 5s, "
                        f"{s.rng.randrange(0, 2)} idle / 20 max", {})
        if r < 0.85:
            inv_no = f"INV-2026-{s.rng.randrange(100000, 999999)}"
            return ("info", f"POST /v1/invoices 201 {inv_no} {s.rng.randrange(18, 90)}ms",
                    {"http.response.status_code": 201})
        if r < 0.93:
            return ("warn", "stripe webhook signature timestamp older than 240s, accepted with "
                    "tolerance", {})
        return ("info", "exchange rates refreshed from ECB (31 currencies)", {})

    for ref in inv:
        s.chatter(ref, inv_line, every_s=11, minutes=150)
    s.chatter(worker[0], lambda t: s.pick([
        ("error", "smtp relay 421 4.7.0 Try again later, requeueing reminder", {}),
        ("info", f"dunning batch: {s.rng.randrange(0, 30)} reminders queued", {})]),
        every_s=60, minutes=160)
    s.chatter(rep[0], lambda t: ("info", f"refreshed mv_daily_revenue in "
                                 f"{s.rng.randrange(300, 900)}ms (billing-pg)", {}),
              every_s=120, minutes=160)

    def pg_line(t: datetime) -> Line | None:
        if s.rng.random() < 0.6:
            return ("info", "checkpoint complete: wrote "
                    f"{s.rng.randrange(200, 4000)} buffers; distance={s.rng.randrange(1, 90)} kB",
                    {})
        return ("info", "connection authorized: user=bi_reader database=billing "
                "application_name=revenue-dash SSL enabled (protocol=TLSv1.3)", {})

    s.chatter(pg[0], pg_line, every_s=45, minutes=160)

    # --- metrics
    for ref in inv:
        s.http(ref, "/v1/invoices", lambda t: 6.0, lambda t: 0.9 if t >= prune else 0.001,
               lambda t: 5.0 if t >= prune else 0.05, method="POST")
        s.usage(ref, 0.12, 180e6, cpu_limit=1)
    s.gauge("pg_up", "Whether the last scrape of metrics from PostgreSQL was able to connect.",
            {"namespace": "db", "pod": pg[0].pod}, lambda t: 1)
    for user, n_before, n_after in (("billing", 38, 0), ("bi_reader", 3, 3)):
        s.gauge("pg_stat_activity_count", "number of connections in this state",
                {"namespace": "db", "pod": pg[0].pod, "datname": "billing", "usename": user,
                 "state": "idle"},
                switch(prune + timedelta(minutes=3), n_before, n_after))
    s.usage(pg[0], 0.9, 5.1e9, cpu_limit=4)

    s.write(root, title="Invoices fail with database timeouts",
            report="billing is down - invoice creation is failing for half an hour, "
            "timeouts to postgres everywhere. Is billing-pg dead? Nobody touched invoice-api "
            "since this morning's release.",
            category="network", culprit=("NetworkPolicy", "billing", "allow-db-egress"),
            evidence=[f"{pg_ip}/32", f"dial tcp {pg_ip}:5432: i/o timeout",
                      "Pruned resource NetworkPolicy billing/legacy-allow-cluster-egress"],
            fix="Rewrite billing/allow-db-egress to select the database pods (namespaceSelector "
            "db + podSelector app.kubernetes.io/name=billing-pg, port 5432) instead of the "
            "Service ClusterIP ipBlock.")
