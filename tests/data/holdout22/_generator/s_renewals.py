"""Sports club federation: membership renewals fail after the card is charged. At 10:48 the
platform team's Argo CD app added the NetworkPolicy members-db-ingress in data-stores, which
admits PostgreSQL clients only from the namespaces portal, reporting and data-stores: the
renewal-api in members was forgotten, so its new connections to members-db time out
("dial tcp ...:5432: i/o timeout") while the database itself is up and serves the club
portal. Red herrings: the database looks guilty (the report suspects it, and it logs
checkpoint warnings), renewal-mailer 4.2.0 rolled out 36 min before the onset in the same
namespace, payment captures still succeed in the victim's logs, and a certificate-expiry
warning of the club portal's ingress that is weeks away."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import aks_nodes, gauge, set_times
from tests.data.holdout2._generator.kit import cpu_seconds, deploy, requests, statefulset
from tests.data.holdout3._generator.kit3 import (
    chatter,
    ksm_deployment,
    namespaces,
    quiet,
    service_range,
)
from tests.data.holdout4._generator.kit4 import ramp
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, Template, http_probe, tcp_probe

from .kit22 import Incident, mins, rolled

ID = "club-membership-renewals-not-saved"
NOW = datetime.fromisoformat("2028-06-09T11:37:00+00:00")
NS = "members"
DB_NS = "data-stores"
ACR = "crsportfed.azurecr.io"
POLICY_AT = datetime.fromisoformat("2028-06-09T10:48:37+00:00")


def build() -> Incident:
    s = Incident(
        id=ID, title="Membership renewals charged but not saved", now=NOW,
        report="""\
Membership renewals are broken since ~10:50: members pay, the card gets charged, and then the
app says "Something went wrong" and the renewal never shows up. Is the members database
down? The club portal still loads member lists fine so not sure. Finance wants to know how
many people were charged.
""",
        truth=truth(
            "network", "NetworkPolicy", DB_NS, "members-db-ingress",
            ["i/o timeout", "members-db-ingress", "kubernetes.io/metadata.name",
             "members-db.data-stores.svc"],
            "The NetworkPolicy members-db-ingress, created at 10:48 in data-stores, only "
            "admits port 5432 from the namespaces portal, reporting and data-stores, so "
            "renewal-api in members can no longer reach members-db (i/o timeout) although "
            "the database is healthy. Add the members namespace to the policy's "
            "namespaceSelector; then reconcile the renewals charged since 10:48."))
    set_times(s, 3.0, 30)
    c = s.cluster
    namespaces(s, {"default": 700, "kube-system": 700, NS: 655, DB_NS: 655, "portal": 640,
                   "reporting": 402})
    nodes = aks_nodes(s, 4, pool="apps", region="germanywestcentral",
                      instance="Standard_D4as_v5", kubelet="v1.31.7", cpu="4",
                      memory="16370412Ki", alloc_cpu="3860m", alloc_memory="12892908Ki",
                      subscription="5f0c6a41-92d3-4d8e-b1c7-3a6d0e2f9b18",
                      group="rg-sportfed-prod_aks-sportfed-prod_germanywestcentral", days=5.2)

    # ---- the policy
    spec = {"podSelector": {"matchLabels": {"app.kubernetes.io/name": "members-db"}},
            "policyTypes": ["Ingress"],
            "ingress": [{"from": [{"namespaceSelector": {"matchExpressions": [{
                "key": "kubernetes.io/metadata.name", "operator": "In",
                "values": ["portal", "reporting", DB_NS]}]}}],
                "ports": [{"port": 5432, "protocol": "TCP"}]},
                {"from": [{"namespaceSelector": {"matchLabels": {
                    "kubernetes.io/metadata.name": "monitoring"}}}],
                 "ports": [{"port": 9187, "protocol": "TCP"}]}]}
    meta = c.meta("NetworkPolicy", "members-db-ingress", DB_NS, POLICY_AT, {
        "app.kubernetes.io/managed-by": "argocd", "app.kubernetes.io/part-of": "netpol-baseline",
        "argocd.argoproj.io/instance": "netpol-baseline-data-stores"}, generation=1)
    meta["annotations"] = {"argocd.argoproj.io/tracking-id":
                           "netpol-baseline-data-stores:networking.k8s.io/NetworkPolicy:"
                           "data-stores/members-db-ingress"}
    c.add({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy", "metadata": meta,
           "spec": spec})

    # ---- members-db: healthy PostgreSQL
    pg = Ctr("postgres", "docker.io/library/postgres:16.4-bookworm", port=5432,
             port_name="postgres", requests={"cpu": "1", "memory": "4Gi"},
             limits={"memory": "4Gi"}, env={"PGDATA": "/var/lib/postgresql/data/pgdata",
                                            "POSTGRES_DB": "members"},
             readiness=tcp_probe("postgres", delay=10), liveness=tcp_probe("postgres",
                                                                           delay=30),
             mounts=[{"name": "data", "mountPath": "/var/lib/postgresql/data"}])
    tpl = Template([pg], service_account="members-db")
    db_since = s.ago(days=5, hours=6, minutes=3)
    _, dbs = statefulset(s, DB_NS, "members-db", tpl, replicas=1, nodes=nodes[3:],
                               revisions=[(3, s.ago(days=61), tpl)], pod_revision=lambda i: 3,
                               born=lambda i: db_since, claim=("data", "128Gi", "managed-csi"),
                               created=s.ago(days=610))
    svc = c.service(DB_NS, "members-db", {"app.kubernetes.io/name": "members-db"}, port=5432,
                    target="postgres", created=s.ago(days=610))
    svc["spec"]["clusterIP"] = "10.0.148.211"
    svc["spec"]["clusterIPs"] = ["10.0.148.211"]
    service_range(s, lambda third, fourth: f"10.0.{third}.{fourth}")
    quiet(s, dbs, "postgres", 2870)
    cpu_seconds(s, dbs[0], "postgres", lambda t: 0.34 - 0.06 * ramp(t, POLICY_AT, 2))
    gauge(s, "pg_up", {"namespace": DB_NS, "pod": dbs[0]["metadata"]["name"]}, lambda t: 1.0,
          "Whether the last scrape of metrics from PostgreSQL was able to connect to the "
          "server (1 for yes, 0 for no).")
    for user, before, after in (("renewals", 12.0, 0.0), ("portal", 9.0, 9.0),
                                ("reporting", 2.0, 2.0)):
        gauge(s, "pg_stat_activity_count", {"namespace": DB_NS,
                                            "pod": dbs[0]["metadata"]["name"],
                                            "datname": "members", "usename": user,
                                            "state": "idle"},
              lambda t, b=before, a=after: b + (a - b) * ramp(t, POLICY_AT, 6),
              "number of connections in this state")
    chatter(s, dbs, "postgres", "members-db", [
        ("info", 'connection authorized: user=portal database=members application_name='
         'club-portal SSL enabled (protocol=TLSv1.3)', {}),
        ("info", "checkpoint complete: wrote 1893 buffers (11.6%); 0 WAL file(s) added, "
         "1 removed", {}),
        ("warn", 'checkpoints are occurring too frequently (24 seconds apart)', {}),
        ("info", 'connection authorized: user=reporting database=members', {}),
    ], 120)
    chatter(s, dbs, "postgres", "members-db", [
        ("info", 'connection authorized: user=renewals database=members application_name='
         'renewal-api SSL enabled (protocol=TLSv1.3)', {}),
    ], 40, end=POLICY_AT)

    # ---- renewal-api: healthy pods, every new DB connection times out
    api = Ctr("renewal-api", f"{ACR}/members/renewal-api:7.11.3", port=8080,
              requests={"cpu": "300m", "memory": "384Mi"}, limits={"memory": "512Mi"},
              env={"DATABASE_HOST": "members-db.data-stores.svc", "DATABASE_POOL_MAX": "4",
                   "DATABASE_CONNECT_TIMEOUT": "5s", "STRIPE_ACCOUNT": "acct_sportfed_de"},
              readiness=http_probe("/healthz/ready"), liveness=http_probe("/healthz/live",
                                                                            delay=20))
    _, apis = deploy(s, NS, "renewal-api", [api], replicas=3, nodes=nodes, revision=58,
                     rollout=s.ago(days=2, hours=20, minutes=41),
                     old=(57, s.ago(days=9), [Ctr("renewal-api",
                                                  f"{ACR}/members/renewal-api:7.11.2")]))
    ksm_deployment(s, NS, "renewal-api", lambda t: 3.0, lambda t: 3.0)

    def fail(t: int) -> float:
        return 0.93 * ramp(t, POLICY_AT + timedelta(seconds=40), 4)
    for pod in apis:
        quiet(s, [pod], "renewal-api", 260)
        cpu_seconds(s, pod, "renewal-api", lambda t: 0.06)
        requests(s, pod, "renewal-api", rps=lambda t: 0.8, codes={
            "200": lambda t: 0.97 * (1 - fail(t)), "500": lambda t: 0.97 * fail(t),
            "402": lambda t: 0.03}, median=lambda t: 0.18 + 4.9 * fail(t),
            buckets=(0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0))
    chatter(s, apis, "renewal-api", "renewal-api", [
        ("info", "renewal RN-2028-338104 saved for member 440917 (TSV Oberhaching)", {}),
        ("info", "payment pi_3PQx8t2eZvKYlo2C1 captured: 64.00 EUR", {}),
        ("warn", "stripe webhook retried (evt_1PQx7L2eZvKYlo2C): handler took 2.4s", {}),
    ], 120, end=POLICY_AT)
    chatter(s, apis, "renewal-api", "renewal-api", [
        ("info", "payment pi_3PQz1c2eZvKYlo2C0 captured: 48.00 EUR", {}),
        ("error", 'failed to connect to `host=members-db.data-stores.svc user=renewals '
         'database=members`: dial error (dial tcp 10.0.148.211:5432: i/o timeout)',
         {"error.type": "pgconn.ConnectError"}),
        ("error", "POST /v2/renewals 500 save renewal for member 512003: acquire connection: "
         "context deadline exceeded after 5s", {"http.response.status_code": 500}),
        ("warn", "renewal RN-2028-338597 paid but not persisted, queued for manual review", {}),
        ("info", "GET /v2/renewals/pricing 200 (cached)", {}),
    ], 260, start=POLICY_AT + timedelta(seconds=40))

    # ---- the club portal still reaches the database
    portal = Ctr("club-portal", f"{ACR}/portal/club-portal:12.4.0", port=3000,
                 requests={"cpu": "200m", "memory": "320Mi"}, limits={"memory": "512Mi"},
                 env={"DATABASE_HOST": "members-db.data-stores.svc"},
                 readiness=http_probe("/api/health"))
    _, portals = deploy(s, "portal", "club-portal", [portal], replicas=2, nodes=nodes,
                        revision=88, rollout=s.ago(days=3, hours=2), offset=1)
    for pod in portals:
        quiet(s, [pod], "club-portal", 290)
        requests(s, pod, "club-portal", rps=lambda t: 3.4, codes={
            "200": lambda t: 0.993, "304": lambda t: 0.005, "500": lambda t: 0.002})
    chatter(s, portals, "club-portal", "club-portal", [
        ("info", "GET /clubs/4471/members 200 84ms", {}),
        ("info", "GET /clubs/1190/fixtures 200 41ms", {}),
        ("warn", "TLS certificate for portal.sportfed.de expires in 24 days (cert-manager "
         "will renew)", {}),
    ], 90)

    # ---- renewal-mailer rolled 36 min before the onset, in the same namespace
    def mailer(tag: str) -> Ctr:
        return Ctr("renewal-mailer", f"{ACR}/members/renewal-mailer:{tag}", port=8080,
                   requests={"cpu": "100m", "memory": "128Mi"}, limits={"memory": "256Mi"},
                   env={"SMTP_RELAY": "smtp.eu.sparkpost.com:587"},
                   readiness=http_probe("/ready"))
    roll = mins(POLICY_AT, -36)
    _, mailers, _ = rolled(s, NS, "renewal-mailer", mailer, old="4.1.7", new="4.2.0", at=roll,
                           revision=23, replicas=2, nodes=nodes[1:], old_since=s.ago(days=13))
    quiet(s, mailers, "renewal-mailer", 95)
    chatter(s, mailers, "renewal-mailer", "renewal-mailer", [
        ("info", "renewal-mailer 4.2.0 started, template set 2028-summer", {}),
        ("info", "reminder batch 2028-06-09T10 sent: 1214 mails", {}),
        ("warn", "bounce from mx.t-online.de for member 300121: mailbox full", {}),
    ], 40, start=roll)
    return s
