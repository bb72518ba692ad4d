"""E-learning: enrolment and course pages fail from 15:32. The platform team's Argo CD app
synced a baseline egress NetworkPolicy (egress-baseline) into lms at 15:31: DNS, the
namespace itself, the cluster ranges and HTTPS to the internet are allowed, but not the
private network of the managed PostgreSQL (172.16.8.0/22). New connections to the database
time out; pooled ones die as they are recycled. The database is fine and reachable from
other namespaces."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gauge, logs_for, set_times
from tests.scenario_tools.common import truth
from tests.scenario_tools.failures import image_pull_events
from tests.scenario_tools.kube import Ctr, Obj, ended, http_probe, running, waiting

from .kit import (
    Incident,
    NodeKind,
    after,
    app_counter,
    deploy,
    node,
    plain,
    requests,
)

ID = "lms-enrolment-errors"
NOW = datetime.fromisoformat("2027-03-16T15:58:00+00:00")
NS = "lms"
REG = "rg.fr-par.scw.cloud/campusly"
DB_IP = "172.16.8.4"
DB_HOST = "lms-pg-prod.pg.fr-par.internal.campusly.example"


def build() -> Incident:
    s = Incident(
        id=ID,
        title="Students cannot enrol or open courses",
        now=NOW,
        report="""\
Students can't enrol or open their courses since ~15:32, the LMS shows "Something went
wrong" (HTTP 500). Grades aren't syncing either and the course reminder e-mails stopped.
The database looks healthy in the Scaleway console (CPU low, plenty of connections left).
No app deploys today. Please help, it's exam registration week.
""",
        truth=truth(
            "network", "NetworkPolicy", NS, "egress-baseline",
            ["egress-baseline", f"connect ETIMEDOUT {DB_IP}:5432",
             "timeout exceeded when trying to connect", "POLICY_DENIED", "policyTypes"],
            "The egress NetworkPolicy egress-baseline (synced at 15:31 by the platform "
            "baseline app) allows no traffic to the database's private network: add an egress "
            "rule to 172.16.8.0/22 port 5432 (and the SMTP relay on 587), or remove the "
            "policy from lms until it does; the pods recover by themselves."))
    set_times(s, 2.0, 30)
    c = s.cluster
    for ns, days in (("default", 560), ("kube-system", 560), (NS, 520), ("lms-staging", 300),
                     ("traefik", 540), ("db-monitoring", 410)):
        c.namespace(ns, s.ago(days=days))
    kind = NodeKind("PRO2-M", "8", "32863236Ki", "7910m", "30196228Ki", "v1.31.4",
                    "5.15.0-124-generic", "Ubuntu 22.04.5 LTS",
                    runtime="containerd://1.7.24", storage="122978652Ki",
                    alloc_storage="113335683542")
    pool = c.uid("pool", "general")
    nodes: list[Obj] = []
    for i in range(3):
        server = c.uid("server", str(i))
        name = f"scw-lms-prod-pool-general-{c.hexid('scw', str(i), length=32)}"
        nodes.append(node(s, name, ip=f"172.16.12.{5 + i * 4}", kind=kind,
                          created=s.ago(days=6.0 - i * 0.4), region="fr-par",
                          zone="fr-par-1",
                          labels={"k8s.scaleway.com/managed": "true",
                                  "k8s.scaleway.com/node": c.uid("node", name),
                                  "k8s.scaleway.com/pool": pool,
                                  "k8s.scaleway.com/pool-name": "general",
                                  "k8s.scaleway.com/runtime": "containerd"},
                          provider_id=f"scaleway://instance/fr-par-1/{server}",
                          pod_cidr=f"100.64.{i}.0/24"))
    t0 = NOW - timedelta(minutes=26, seconds=48)  # 15:31:12
    edge = t0.timestamp()

    # ---- the policies of the namespace
    baseline_labels = {"app.kubernetes.io/managed-by": "argocd",
                       "app.kubernetes.io/part-of": "platform-baseline-policies",
                       "policy.campusly.io/tier": "baseline"}
    c.add({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
           "metadata": c.meta("NetworkPolicy", "egress-baseline", NS, t0, baseline_labels,
                              generation=1, annotations={
                                  "argocd.argoproj.io/tracking-id":
                                  "platform-baseline-policies:networking.k8s.io/NetworkPolicy:"
                                  "lms/egress-baseline"}),
           "spec": {"podSelector": {}, "policyTypes": ["Egress"], "egress": [
               {"to": [{"namespaceSelector": {"matchLabels": {
                   "kubernetes.io/metadata.name": "kube-system"}},
                   "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
                "ports": [{"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}]},
               {"to": [{"podSelector": {}}]},
               {"to": [{"ipBlock": {"cidr": "100.64.0.0/15"}},
                       {"ipBlock": {"cidr": "10.32.0.0/20"}}]},
               {"to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": [
                   "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "100.64.0.0/10"]}}],
                "ports": [{"port": 443, "protocol": "TCP"}]}]}})
    c.add({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
           "metadata": c.meta("NetworkPolicy", "allow-ingress-from-traefik", NS,
                              s.ago(days=212), {"app.kubernetes.io/part-of": "lms"},
                              generation=2),
           "spec": {"podSelector": {"matchLabels": {"campusly.io/exposed": "true"}},
                    "policyTypes": ["Ingress"], "ingress": [{"from": [
                        {"namespaceSelector": {"matchLabels": {
                            "kubernetes.io/metadata.name": "traefik"}}}],
                        "ports": [{"port": 3000, "protocol": "TCP"},
                                  {"port": 8080, "protocol": "TCP"}]}]}})
    c.add({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": c.meta("ConfigMap", "enrolment-api", NS, s.ago(days=520),
                              {"app.kubernetes.io/name": "enrolment-api"}),
           "data": {"PGHOST": DB_HOST, "PGPORT": "5432", "PGDATABASE": "lms",
                    "PG_POOL_MAX": "10", "PG_CONNECT_TIMEOUT_MS": "5000",
                    "PG_MAX_LIFETIME_S": "300"}})

    # ---- enrolment-api: fine until the policy, then every new DB connection times out
    api = Ctr("enrolment-api", f"{REG}/enrolment-api:2.31.0", port=8080,
              requests={"cpu": "250m", "memory": "384Mi"}, limits={"memory": "768Mi"},
              env={"NODE_ENV": "production", "UV_THREADPOOL_SIZE": "8"},
              env_from=[{"configMapRef": {"name": "enrolment-api"}}],
              readiness=http_probe("/healthz", delay=5), liveness=http_probe("/healthz",
                                                                             delay=15))
    old = s.ago(days=3, hours=2, minutes=47)

    def api_states(i: int, name: str, started: datetime) -> dict[str, Obj]:
        return {"enrolment-api": running(old, restarts=1, last=ended(
            "Error", 1, started, old - timedelta(seconds=3)))} if i == 1 else {}
    _, apis = deploy(s, NS, "enrolment-api", [api], replicas=3, nodes=nodes, revision=64,
                     rollout=s.ago(days=4, hours=1), statuses=api_states,
                     template_labels={"campusly.io/exposed": "true"},
                     labels={"app.kubernetes.io/name": "enrolment-api",
                             "app.kubernetes.io/part-of": "lms"})

    def failing(t: int) -> float:
        """Share of requests that need a new connection: pooled ones live up to 300 s."""
        if t < edge:
            return 0.0
        return min(0.97, 0.25 + 0.72 * (t - edge) / 300)
    for k, pod in enumerate(apis):
        name = pod["metadata"]["name"]
        plain(s, pod, "enrolment-api", 212, restarts=1 if k == 1 else 0)
        requests(s, pod, "enrolment-api", rps=lambda t: 9.0, codes={
            "200": lambda t: 1 - failing(t), "500": failing})
        app_counter(s, "pg_pool_connect_errors_total", {"namespace": NS, "pod": name},
                    s.times, lambda t: 0.0 if t < edge else 1.6,
                    "Connection attempts to PostgreSQL that failed.", start=0)
    start = NOW - timedelta(hours=2)
    logs_for(s, apis, "enrolment-api", "enrolment-api", [
        ("info", "GET /v1/courses/CS-101/modules 200 18ms", {"http.response.status_code": 200}),
        ("info", "POST /v1/enrolments 201 student=s_20881 course=MATH-204 41ms",
         {"http.response.status_code": 201}),
        ("warn", "GET /v1/courses/HIST-999 404", {"http.response.status_code": 404}),
    ], 120, start=start, end=t0)
    logs_for(s, apis, "enrolment-api", "enrolment-api", [
        ("error", "POST /v1/enrolments 500 Error: timeout exceeded when trying to connect",
         {"http.response.status_code": 500, "error.type": "Error"}),
        ("error", f"pg pool: new client failed: Error: connect ETIMEDOUT {DB_IP}:5432",
         {"error.type": "Error", "error.code": "ETIMEDOUT"}),
        ("error", "GET /v1/courses/CS-101/modules 500 Error: Connection terminated due to "
         "connection timeout", {"http.response.status_code": 500}),
        ("info", "GET /v1/courses/BIO-110/modules 200 16ms (pooled connection)",
         {"http.response.status_code": 200}),
    ], 156, start=t0 + timedelta(seconds=6), end=NOW)

    # ---- the other users of the database and the outside world
    gw = Ctr("grading-worker", f"{REG}/grading-worker:1.8.4", port=None,
             requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"},
             env_from=[{"configMapRef": {"name": "enrolment-api"}}])
    _, gws = deploy(s, NS, "grading-worker", [gw], replicas=1, nodes=nodes, revision=22,
                    rollout=s.ago(days=5, hours=3), offset=2, service=None)
    plain(s, gws[0], "grading-worker", 166)
    app_counter(s, "grading_sync_runs_total", {"namespace": NS, "pod":
                                               gws[0]["metadata"]["name"], "result": "ok"},
                s.times, lambda t: 0.0 if t >= edge else 1 / 60, "Grade sync runs.")
    app_counter(s, "grading_sync_runs_total", {"namespace": NS, "pod":
                                               gws[0]["metadata"]["name"],
                                               "result": "error"},
                s.times, after(edge, 0.0, 1 / 60), "Grade sync runs.", start=4)
    logs_for(s, gws, "grading-worker", "grading-worker", [
        ("info", "synced 84 grades from moodle-bridge to lms.grades", {}),
        ("info", "grade sync run finished in 2.1s", {}),
    ], 36, start=start, end=t0)
    logs_for(s, gws, "grading-worker", "grading-worker", [
        ("error", f"grade sync run failed: Error: connect ETIMEDOUT {DB_IP}:5432",
         {"error.code": "ETIMEDOUT"}),
    ], 16, start=t0 + timedelta(seconds=30), end=NOW)
    ml = Ctr("notification-mailer", f"{REG}/notification-mailer:0.12.0", port=None,
             requests={"cpu": "50m", "memory": "128Mi"}, limits={"memory": "256Mi"},
             env={"SMTP_HOST": "smtp.tem.scw.cloud", "SMTP_PORT": "587"})
    _, mls = deploy(s, NS, "notification-mailer", [ml], replicas=1, nodes=nodes, revision=9,
                    rollout=s.ago(days=2, hours=8), service=None, offset=1)
    logs_for(s, mls, "notification-mailer", "notification-mailer", [
        ("info", "sent 'exam registration closes Friday' to 412 students", {}),
        ("warn", "recipient s_19921@student.example bounced (mailbox full)", {}),
    ], 24, start=start, end=t0)
    logs_for(s, mls, "notification-mailer", "notification-mailer", [
        ("error", "smtp send failed: Error: Connection timeout (connect ETIMEDOUT "
         "51.159.99.31:587), 38 mails requeued", {"error.code": "ETIMEDOUT"}),
    ], 12, start=t0 + timedelta(seconds=40), end=NOW)
    cs = Ctr("course-search", f"{REG}/course-search:3.2.1", port=8080,
             requests={"cpu": "100m", "memory": "192Mi"}, limits={"memory": "384Mi"},
             env={"ALGOLIA_APP_ID": "K7Q2ZX9P1M", "ALGOLIA_INDEX": "courses_prod"},
             readiness=http_probe("/ready", delay=5))
    _, css = deploy(s, NS, "course-search", [cs], replicas=2, nodes=nodes, revision=30,
                    rollout=s.ago(days=1, hours=20), offset=1,
                    template_labels={"campusly.io/exposed": "true"})
    for pod in css:
        requests(s, pod, "course-search", rps=lambda t: 4.0, codes={"200": lambda t: 1.0})
    logs_for(s, css, "course-search", "course-search", [
        ("info", "GET /v1/search?q=linear+algebra 200 (algolia 23ms)", {}),
        ("warn", "algolia query took 812ms (K7Q2ZX9P1M-dsn.algolia.net)", {}),
    ], 48, start=start, end=NOW)
    fe = Ctr("lms-frontend", f"{REG}/lms-frontend:2027.11.0", port=3000,
             requests={"cpu": "200m", "memory": "384Mi"}, limits={"memory": "768Mi"},
             env={"ENROLMENT_API": "http://enrolment-api.lms.svc"},
             readiness=http_probe("/api/health", delay=5))
    _, fes = deploy(s, NS, "lms-frontend", [fe], replicas=2, nodes=nodes, revision=150,
                    rollout=s.ago(days=1, hours=3), offset=2,
                    template_labels={"campusly.io/exposed": "true"})
    logs_for(s, fes, "lms-frontend", "lms-frontend", [
        ("error", "GET /courses/CS-101 failed: enrolment-api responded 500 "
         "(timeout exceeded when trying to connect)", {"http.response.status_code": 500}),
        ("info", "GET /search?q=statistics 200", {"http.response.status_code": 200}),
    ], 54, start=t0 + timedelta(seconds=10), end=NOW)

    # ---- the dataplane's view: drops by policy
    app_counter(s, "hubble_drop_total", {"namespace": "kube-system", "reason":
                                         "POLICY_DENIED", "protocol": "TCP"},
                s.times, lambda t: 0.02 if t < edge else 14.5,
                "Number of drops", start=1812)
    for n in nodes:
        app_counter(s, "cilium_drop_count_total", {"node": n["metadata"]["name"],
                                                   "reason": "Policy denied",
                                                   "direction": "EGRESS"},
                    s.times[::2], lambda t: 0.0 if t < edge else 4.8, "Total dropped packets, "
                    "tagged by drop reason and ingress/egress direction", start=37)
    gauge(s, "pg_up", {"namespace": "db-monitoring", "instance": f"{DB_HOST}:5432"},
          lambda t: 1.0, "Whether the last scrape of metrics from PostgreSQL was able to "
          "connect to the server (1 for yes, 0 for no).")
    gauge(s, "pg_stat_database_numbackends", {"namespace": "db-monitoring", "datname": "lms",
                                              "instance": f"{DB_HOST}:5432"},
          lambda t: 31 + s.rng.randrange(-2, 3) if t < edge else max(
              4.0, 31 - 27 * (t - edge) / 300) + s.rng.randrange(0, 2),
          "Number of backends currently connected to this database.")
    pe = Ctr("postgres-exporter", "quay.io/prometheuscommunity/postgres-exporter:v0.16.0",
             port=9187, port_name="metrics", requests={"cpu": "20m", "memory": "32Mi"},
             limits={"memory": "128Mi"}, env={"DATA_SOURCE_URI": f"{DB_HOST}:5432/lms?"
                                                                 "sslmode=require"})
    deploy(s, "db-monitoring", "postgres-exporter", [pe], replicas=1, nodes=nodes,
           revision=5, rollout=s.ago(days=5, hours=1), service=9187, target="metrics")

    # ---- red herrings
    tr = Ctr("traefik", "docker.io/traefik:v3.2.3", port=8000, port_name="web",
             requests={"cpu": "100m", "memory": "128Mi"}, limits={"memory": "256Mi"},
             readiness=http_probe("/ping", 9000, delay=2))
    _, trs = deploy(s, "traefik", "traefik", [tr], replicas=2, nodes=nodes, revision=11,
                    rollout=s.ago(days=5, hours=6), service=None,
                    labels={"app.kubernetes.io/name": "traefik"})
    logs_for(s, trs, "traefik", "traefik", [
        ("info", '81.64.12.7 - - "GET /courses/CS-101 HTTP/2.0" 200 18211 "lms-lms-frontend-'
         '3000@kubernetes" 41ms', {}),
        ("warn", '90.3.118.2 - - "GET /courses/CS-101/lectures/7/video HTTP/2.0" 499 0 '
         '"lms-lms-frontend-3000@kubernetes" 1203ms', {}),
    ], 48, start=start, end=NOW)
    qb_image = f"{REG}/quiz-builder:pr-1182"
    qb = Ctr("quiz-builder", qb_image, port=8080, requests={"cpu": "100m", "memory": "256Mi"},
             limits={"memory": "512Mi"}, readiness=http_probe("/ready", delay=5))
    since = NOW - timedelta(minutes=48, seconds=10)
    _, qbs = deploy(s, "lms-staging", "quiz-builder", [qb], replicas=1, nodes=nodes,
                    revision=57, rollout=since, born=lambda i: since,
                    statuses=lambda i, name, started: {"quiz-builder": waiting(
                        "ImagePullBackOff", f'Back-off pulling image "{qb_image}"')})
    image_pull_events(s, qbs[0], "quiz-builder", qb_image,
                      f'rpc error: code = NotFound desc = failed to pull and unpack image '
                      f'"{qb_image}": failed to resolve reference "{qb_image}": '
                      f"{qb_image}: not found", since=since + timedelta(seconds=1))
    gauge(s, "kube_pod_container_status_waiting_reason",
          {"namespace": "lms-staging", "pod": qbs[0]["metadata"]["name"],
           "container": "quiz-builder", "reason": "ImagePullBackOff"}, lambda t: 1.0,
          "Describes the reason the container is currently in waiting state.",
          times=[t for t in s.times if t >= since.timestamp() + 30])
    return s
