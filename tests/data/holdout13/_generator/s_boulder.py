"""Bouldering gyms: front-desk check-ins fail at every gym during the evening rush. The
security team's Argo CD app "netpol-baseline" added a default-deny-egress NetworkPolicy to
the bouldering namespace at 18:19: it lets pods reach only DNS and their own namespace, so
checkin-api can no longer open connections to the members database in member-data (dial
tcp ...:5432: i/o timeout). Probes still pass (ingress is untouched), the pods stay Ready.
Red herrings: route-board 4.6.0 rolled out in the same namespace 35 min before the onset,
the members database logs a few slow statements and autovacuum lines, a door-controller
heartbeat warning in checkin-api itself, a readiness blip of the marketing site."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.scenario_tools.common import (
    Story,
    const,
    kube_system,
    namespaces,
    nodes,
    truth,
)
from tests.scenario_tools.kube import Ctr, Template, http_probe, running, tcp_probe
from tests.scenario_tools.parts import app, readiness_blip, rollout

from .kit13 import chatter, gauge, line, network_policy, plain_metrics

ID = "boulder-checkins-rejected"
NOW = datetime(2028, 3, 9, 18, 42, tzinfo=UTC)
NS = "bouldering"
REG = "registry.gitlab.com/blocwerk/platform"


def build() -> Story:
    s = Story(ID, "Gym check-ins failing at the front desk", NOW, """\
Front desk can't check anyone in at all three gyms since about 18:20, the scanner says
"membership could not be verified". It's the evening rush and there are queues at the
door, staff are letting people in by hand. The booking website itself looks fine.
""", truth("network", "NetworkPolicy", NS, "default-deny-egress",
           ["i/o timeout", "default-deny-egress", "5432", "policyTypes"],
           "The NetworkPolicy bouldering/default-deny-egress, added at 18:19 by the netpol "
           "baseline, allows egress only to DNS and to the bouldering namespace, so "
           "checkin-api cannot reach members-db in member-data on 5432. Add an egress rule "
           "for member-data:5432 (or roll the policy back) and keep the pods as they are."),
        hours=2.0)
    namespaces(s, NS, "member-data", "marketing", "ingress-nginx")
    node_list = nodes(s, 3, subnet=41, region="eu-central-1", instance="m7i.large",
                      cpu="2", memory="8Gi", allocatable_cpu="1930m",
                      allocatable_memory="7032Mi", days=6.2)
    kube_system(s, node_list)
    onset = NOW - timedelta(minutes=23)
    cut = onset.timestamp()
    db_ip = "172.20.118.41"

    # ---- the new egress baseline and the older ingress policy
    network_policy(s, NS, "default-deny-egress", onset - timedelta(seconds=4), {
        "podSelector": {}, "policyTypes": ["Egress"],
        "egress": [
            {"to": [{"namespaceSelector": {"matchLabels": {
                "kubernetes.io/metadata.name": "kube-system"}},
                "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
             "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]},
            {"to": [{"podSelector": {}}]}]},
        labels={"app.kubernetes.io/managed-by": "argocd",
                "app.kubernetes.io/part-of": "netpol-baseline",
                "argocd.argoproj.io/instance": "netpol-baseline-bouldering"},
        annotations={"security.blocwerk.io/baseline": "v2",
                     "argocd.argoproj.io/sync-wave": "-1"})
    network_policy(s, NS, "allow-from-ingress-nginx", s.ago(days=214), {
        "podSelector": {}, "policyTypes": ["Ingress"],
        "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {
            "kubernetes.io/metadata.name": "ingress-nginx"}}}]},
            {"from": [{"podSelector": {}}]}]})

    # ---- checkin-api: Ready, but every lookup times out after the policy lands
    _, checkins = app(
        s, NS, "checkin-api", f"{REG}/checkin-api:2.14.3", node_list, replicas=3,
        revision=58, rollout_at=s.ago(days=4, hours=5), rps=lambda t: 1.2 if t < cut - 5400
        else 2.6, codes={"200": lambda t: 0.985 if t < cut else 0.04,
                         "404": const(0.01),
                         "503": lambda t: 0.005 if t < cut else 0.95},
        median=lambda t: 0.045 if t < cut else 5.1, cpu=const(0.08), memory_mib=140,
        limits={"memory": "384Mi"}, requests={"cpu": "100m", "memory": "192Mi"},
        env={"MEMBERS_DB_HOST": "members-db.member-data.svc.cluster.local",
             "MEMBERS_DB_CONNECT_TIMEOUT": "5s", "DOOR_CONTROLLER_URL":
             "http://door-bridge.bouldering.svc:8080"},
        readiness=http_probe("/healthz/ready", delay=3), liveness=http_probe(
            "/healthz/live", delay=10, period=20))
    chatter(s, checkins, "checkin-api", [
        ("info", "POST /v1/checkins 200 member=M-406113 gym=kreuzberg 38ms",
         {"http.response.status_code": 200}),
        ("info", "POST /v1/checkins 200 member=M-2281 gym=neukoelln 51ms",
         {"http.response.status_code": 200}),
        ("info", "GET /v1/members/M-7710/pass 200 22ms", {"http.response.status_code": 200}),
        ("info", "POST /v1/checkins 404 card 04:A2:19:7F unknown", {
            "http.response.status_code": 404}),
    ], 150, end=onset)
    chatter(s, checkins, "checkin-api", [
        ("warn", "door controller gym=wedding heartbeat missed (1/3), using cached state", {}),
    ], 14)
    chatter(s, checkins, "checkin-api", [
        ("error", "membership lookup failed: failed to connect to `host=members-db.member-data."
         f"svc.cluster.local user=checkin database=members`: dial error (dial tcp {db_ip}:5432:"
         " i/o timeout)", {"error.type": "pgconn.ConnectError"}),
        ("error", "POST /v1/checkins 503 membership could not be verified (5003ms)",
         {"http.response.status_code": 503}),
        ("error", "membership lookup failed: failed to connect to `host=members-db.member-data."
         f"svc.cluster.local user=checkin database=members`: dial error (dial tcp {db_ip}:5432:"
         " i/o timeout)", {"error.type": "pgconn.ConnectError"}),
        ("warn", "pgxpool: acquire conn attempt 3/3 failed, giving up", {}),
    ], 190, start=onset + timedelta(seconds=7))
    for pod in checkins:
        gauge(s, "pgxpool_total_conns", {"namespace": NS, "pod": pod["metadata"]["name"],
                                         "db": "members"},
              lambda t: 4.0 if t < cut + 300 else 0.0,
              "Total number of connections currently in the pool.")

    # ---- members-db in member-data: healthy; its checkin-api sessions go away
    c = s.cluster
    pg = Ctr("postgres", "docker.io/library/postgres:16.6-bookworm", port=5432,
             port_name="postgres", requests={"cpu": "500m", "memory": "1Gi"},
             limits={"memory": "2Gi"}, readiness=tcp_probe("postgres"),
             liveness=tcp_probe("postgres", delay=30))
    db = c.workload("StatefulSet", "member-data", "members-db",
                    Template([pg], service_account="members-db"), replicas=1,
                    created=s.ago(days=380))
    rev = c.revision(db, 3, s.ago(days=61))
    born = s.ago(days=5, hours=3)
    db_pod = c.pod(db, rev, node=node_list[2], created=born,
                   statuses={"postgres": running(born + timedelta(seconds=6))})
    svc = c.service("member-data", "members-db", {"app.kubernetes.io/name": "members-db"},
                    port=5432, target="postgres", created=s.ago(days=380))
    svc["spec"]["clusterIP"] = db_ip
    svc["spec"]["clusterIPs"] = [db_ip]
    plain_metrics(s, [db_pod], "postgres", 610, 0.12)
    gauge(s, "pg_stat_database_numbackends", {"namespace": "member-data",
                                             "pod": db_pod["metadata"]["name"],
                                             "datname": "members"},
          lambda t: 17.0 if t < cut + 240 else 5.0,
          "Number of backends currently connected to this database.")
    chatter(s, [db_pod], "postgres", [
        ("info", "checkpoint complete: wrote 412 buffers (2.5%); 0 WAL file(s) added", {}),
        ("info", 'automatic vacuum of table "members.public.visits": index scans: 1', {}),
        ("warn", "duration: 1834.221 ms  statement: SELECT gym_id, count(*) FROM visits "
         "WHERE visited_at > now() - interval '30 days' GROUP BY gym_id", {}),
    ], 40, service="members-db")
    chatter(s, [db_pod], "postgres", [
        ("warn", 'could not receive data from client: Connection reset by peer', {}),
    ], 3, start=onset - timedelta(minutes=70), end=onset - timedelta(minutes=20),
        service="members-db")
    sync_ctr = Ctr("billing-sync", f"{REG}/billing-sync:1.8.0", port=9102, port_name="metrics",
                   requests={"cpu": "50m", "memory": "96Mi"}, limits={"memory": "160Mi"})
    sync = c.workload("Deployment", "member-data", "billing-sync",
                      Template([sync_ctr], service_account="billing-sync"), replicas=1,
                      created=s.ago(days=300))
    srs = c.revision(sync, 12, s.ago(days=6, hours=1))
    sync_pod = c.pod(sync, srs, node=node_list[0], created=s.ago(days=6),
                     statuses={"billing-sync": running(s.ago(days=6) + timedelta(seconds=9))})
    plain_metrics(s, [sync_pod], "billing-sync", 70, 0.01)
    chatter(s, [sync_pod], "billing-sync", [
        ("info", "synced 14 membership payments from GoCardless", {}),
        ("info", "mandate MD00K3Q8 renewed for member M-5120", {}),
    ], 20)

    # ---- red herring: route-board rolled out 35 min before the onset, same namespace
    roll_at = onset - timedelta(minutes=35)

    def board(version: str) -> Ctr:
        return Ctr("route-board", f"{REG}/route-board:{version}", port=3000,
                   requests={"cpu": "50m", "memory": "128Mi"}, limits={"memory": "256Mi"},
                   readiness=http_probe("/", delay=2), liveness=http_probe("/", delay=10))
    roll = rollout(s, NS, "route-board", board, old="4.5.2", new="4.6.0", at=roll_at,
                   revision=23, replicas=2, node_list=node_list)
    plain_metrics(s, roll.new_pods + roll.old_pods, "route-board", 90, 0.01)
    chatter(s, roll.new_pods, "route-board", [
        ("info", "GET /walls/kreuzberg 200 12ms", {}),
        ("info", "route R-2209 'Zitronenfalter' (6b+) published by setter=jonas", {}),
        ("warn", "image upload for route R-2211 exceeded 2MB, resized", {}),
    ], 40, start=roll_at + timedelta(minutes=1))
    readiness_blip(s, "marketing", "gym-website", f"{REG}/gym-website:2026.11.3", node_list,
                   port=3000, path="/api/health", minutes_ago=52)
    line(s, checkins[0], "checkin-api", s.ago(hours=1, minutes=58), "info",
         "pgxpool: connected to members-db.member-data.svc.cluster.local:5432 (4 conns)")
    return s
