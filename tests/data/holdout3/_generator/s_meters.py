"""Energy: smart meter readings pile up. reading-importer (Python, SQLAlchemy pool of 10 plus
5 overflow) leaks a pooled connection every time it rejects a meter exchange message: the
handler raises before it commits or closes the session, so the connection stays checked out,
idle in transaction. A bulk upload of meter exchanges by the field crews started at 04:31;
within half an hour every pod's pool is full and each batch waits 30 s for a connection and
fails. The consumer lag on meter-readings grows; the pods run, never restart, use little
CPU; the database has plenty of free connections. A Kafka leader election at 04:26 is a
red herring."""

from __future__ import annotations

from datetime import datetime, timedelta
from functools import partial

from tests.data.holdout._generator.base import daemonset, gauge, set_times
from tests.data.holdout2._generator.kit import NodeKind, app_counter, cpu_seconds
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, Obj, http_probe

from .kit3 import (
    Incident,
    chatter,
    namespaces,
    openshift_nodes,
    openshift_pod_ips,
    quiet,
    service_range,
    steady,
    times_of,
)

ID = "meter-readings-backlog"
NOW = datetime.fromisoformat("2027-05-11T07:22:00+00:00")
NS = "metering"
REG = "quay.enermet.lan/metering"
POOL, OVERFLOW = 10, 5


def _scc(pods: list[Obj]) -> None:
    for pod in pods:
        pod["metadata"].setdefault("annotations", {}).update({
            "openshift.io/scc": "restricted-v2",
            "seccomp.security.alpha.kubernetes.io/pod": "runtime/default"})


def build() -> Incident:
    s = Incident(
        id=ID,
        title="Smart meter readings backlog growing",
        now=NOW,
        report="""\
Smart meter readings are piling up: the backlog on the meter-readings topic has been growing
since about 07:00 local time (05:00 UTC) and the customer portal shows yesterday's
consumption for a lot of customers. The reading-importer pods are all running, no restarts,
CPU is low. Kafka had a broker hiccup early this morning, maybe that's related? Billing
export runs at 10:00 local and needs the readings.
""",
        truth=truth(
            "resource_exhaustion", "Deployment", NS, "reading-importer",
            ["QueuePool limit of size 10 overflow 5 reached", "idle in transaction",
             "sqlalchemy_pool_checkedout", "MeterExchangeValidationError"],
            "reading-importer leaks one pooled connection for every meter exchange it rejects "
            "(the session is neither rolled back nor closed on MeterExchangeValidationError), "
            "so each pod's pool of 10+5 connections is full of sessions idle in transaction and "
            "every batch times out waiting for one: restart the pods to release the "
            "connections, close the session in a finally block (or use a context manager), and "
            "set idle_in_transaction_session_timeout for the importer role."))
    set_times(s, 3.0, 60)
    service_range(s, lambda a, b: f"172.30.{a}.{b}")
    c = s.cluster
    namespaces(s, {"default": 699, "kube-system": 699, "openshift-dns": 699,
                   "openshift-ingress": 699, NS: 640, "metering-ops": 600,
                   "customer-portal": 520})
    kind = NodeKind("", "32", "263858280Ki", "31500m", "262707304Ki", "v1.30.10",
                    "5.14.0-427.55.1.el9_4.x86_64",
                    "Red Hat Enterprise Linux CoreOS 417.94.202502141425-0",
                    runtime="cri-o://1.30.10-2.rhaos4.17.git3c1e4a6.el9", pods="250",
                    storage="936038720Ki", alloc_storage="861562498403")
    nodes = openshift_nodes(s, [f"worker-0{i}.ocp4.enermet.lan" for i in range(1, 6)],
                            ips=[f"10.20.30.{21 + i}" for i in range(5)], kind=kind, days=6.8)
    for n in nodes:
        n["metadata"]["labels"].pop("node.kubernetes.io/instance-type", None)
        n["metadata"]["annotations"] = {
            "machineconfiguration.openshift.io/currentConfig": "rendered-worker-"
            "4f1c0b3e9d2a7e85c61f0a9b3d4e2c17",
            "machineconfiguration.openshift.io/state": "Done"}

    # ---- reading-importer
    imp = Ctr("reading-importer", f"{REG}/reading-importer:2.14.1", port=8000,
              port_name="metrics", requests={"cpu": "500m", "memory": "512Mi"},
              limits={"memory": "1Gi"},
              env={"KAFKA_BOOTSTRAP": "kafka01.enermet.lan:9093,kafka02.enermet.lan:9093,"
                   "kafka03.enermet.lan:9093", "KAFKA_TOPIC": "meter-readings",
                   "KAFKA_GROUP": "reading-importer", "DB_URL": "postgresql+psycopg://importer"
                   "@pg-metering.enermet.lan:5432/metering", "DB_POOL_SIZE": str(POOL),
                   "DB_MAX_OVERFLOW": str(OVERFLOW), "DB_POOL_TIMEOUT": "30",
                   "BATCH_SIZE": "50"},
              readiness=http_probe("/ready", "metrics", delay=5),
              liveness=http_probe("/live", "metrics", delay=10, period=30))
    _, imps = steady(s, NS, "reading-importer", [imp], nodes=nodes, replicas=4, revision=31,
                     rollout=s.ago(days=2, hours=20, minutes=12), service=None,
                     labels={"app": "reading-importer", "app.kubernetes.io/part-of":
                             "metering"})
    _scc(imps)
    t_bulk = datetime.fromisoformat("2027-05-11T04:31:37+00:00").timestamp()
    t_kafka = datetime.fromisoformat("2027-05-11T04:26:12+00:00")
    leaks_per_min = [0.44, 0.37, 0.31, 0.22]  # rejected meter exchanges a pod sees
    full_at: list[float] = []
    leak_times: list[list[float]] = []
    for rate in leaks_per_min:
        t, out = t_bulk, list[float]()
        while len(out) < POOL + OVERFLOW:
            t += s.rng.expovariate(rate / 60)
            out.append(t)
        leak_times.append(out)
        full_at.append(out[-1])

    def held(k: int, t: float) -> float:
        return float(sum(1 for x in leak_times[k] if x <= t))

    def in_use(k: int, t: int) -> float:
        leaked = held(k, t)
        if leaked >= POOL + OVERFLOW:
            return float(POOL + OVERFLOW)
        return min(POOL + OVERFLOW, leaked + s.rng.choice([0, 1, 1, 2]))

    def stalled(k: int, t: float) -> bool:
        return t >= full_at[k]

    def processed(k: int, result: str, t: int) -> float:
        if result == "ok":
            return 38.0 if not stalled(k, t) else 0.0
        return 0.05 if not stalled(k, t) else 50 / 31.0

    def timeouts(k: int, t: int) -> float:
        return 0.0 if not stalled(k, t) else 1 / 31.0

    def cores(k: int, t: int) -> float:
        return (0.31 if not stalled(k, t) else 0.012) * s.rng.uniform(0.85, 1.15)

    for k, pod in enumerate(imps):
        name = pod["metadata"]["name"]
        times = times_of(s, pod)
        gauge(s, "sqlalchemy_pool_checkedout", {"namespace": NS, "pod": name,
                                                "pool": "metering"},
              partial(in_use, k), "Connections checked out of the pool.", times=times)
        for result in ("ok", "failed"):
            app_counter(s, "readings_processed_total", {"namespace": NS, "pod": name,
                                                        "result": result}, times,
                        partial(processed, k, result),
                        "Meter readings processed, by result.")
        app_counter(s, "sqlalchemy_pool_checkout_timeouts_total", {"namespace": NS, "pod": name,
                                                                   "pool": "metering"},
                    times, partial(timeouts, k),
                    "Checkouts that timed out waiting for a connection.", start=0)
        cpu_seconds(s, pod, "reading-importer", partial(cores, k), times=times)
    for k, pod in enumerate(imps):
        name = pod["metadata"]["name"]
        where = pod["spec"]["nodeName"]

        def add(when: float, level: str, msg: str, pod_name: str = name, node: str = where,
                **extra: object) -> None:
            s.logs.add(datetime.fromtimestamp(when, NOW.tzinfo), level, msg, namespace=NS,
                       pod=pod_name, container="reading-importer", service="reading-importer",
                       node=node, **extra)
        t = NOW.timestamp() - 3 * 3600 + s.rng.uniform(0, 60)
        offset = 88_400_000 + k * 3_100_000
        while t < NOW.timestamp():
            if not stalled(k, t):
                offset += 50
                add(t, "info", f"stored batch partition={k * 3 + 1} offsets {offset - 49}-"
                    f"{offset} (50 readings) in {s.rng.uniform(0.9, 1.6):.2f}s")
                t += s.rng.uniform(60, 140)
            else:
                add(t, "error", "failed to store reading batch partition="
                    f"{k * 3 + 1} offset {offset + 1}: sqlalchemy.exc.TimeoutError: QueuePool "
                    f"limit of size {POOL} overflow {OVERFLOW} reached, connection timed out, "
                    "timeout 30.00 (Background on this error at: https://sqlalche.me/e/20/3o7r)",
                    **{"error.type": "sqlalchemy.exc.TimeoutError"})
                t += s.rng.uniform(90, 200)
        for x in leak_times[k]:
            mx = f"MX-2027-{s.rng.randrange(100000, 999999)}"
            add(x, "error", f"meter exchange {mx} rejected: final reading of removed meter "
                f"{s.rng.randrange(10**7, 10**8)} missing (MeterExchangeValidationError)",
                **{"error.type": "importer.errors.MeterExchangeValidationError"})
        for _ in range(3):
            x = full_at[k] + s.rng.uniform(600, NOW.timestamp() - full_at[k] - 60)
            mx = f"MX-2027-{s.rng.randrange(100000, 999999)}"
            add(x, "warn", f"meter exchange {mx} postponed: no database connection "
                "(QueuePool timeout)")
        for x in (full_at[k] + s.rng.uniform(300, 900), full_at[k] + s.rng.uniform(2400, 4000)):
            if x < NOW.timestamp():
                add(x, "warn", "Application maximum poll interval (300000ms) exceeded by "
                    f"{s.rng.randrange(1000, 30000)}ms, leaving group reading-importer")
                add(x + 31, "info", "Successfully joined group reading-importer with "
                    f"generation {s.rng.randrange(1800, 1900)}")
        kt = t_kafka.timestamp() + s.rng.uniform(0.2, 2)
        add(kt, "warn", "NotLeaderForPartitionError: topic meter-readings partition "
            f"{k * 3 + 1} leader changed (broker 2 -> broker 3), refreshing metadata")
        add(kt + 0.4, "info", "metadata refreshed, resuming fetch from broker 3")

    # ---- metering-ops: the Kafka and Postgres exporters
    kx = Ctr("kafka-exporter", "docker.io/danielqsj/kafka-exporter:v1.9.0", port=9308,
             port_name="metrics", requests={"cpu": "50m", "memory": "64Mi"},
             limits={"memory": "128Mi"},
             args=["--kafka.server=kafka01.enermet.lan:9093", "--tls.enabled",
                   "--group.filter=reading-importer|billing-export"])
    _, kxs = steady(s, "metering-ops", "metering-kafka-exporter", [kx], nodes=nodes, replicas=1,
                    revision=4, rollout=s.ago(days=6, hours=1), service=9308, target="metrics")
    _scc(kxs)
    produced = 148.0  # readings a second into the topic

    def lag(t: int) -> float:
        behind = sum(max(0.0, t - f) for f in full_at) / len(full_at)
        return 1800 + produced * behind * (len(full_at) / 4) + 200 * s.rng.uniform(-1, 1)

    gauge(s, "kafka_consumergroup_lag_sum", {"consumergroup": "reading-importer",
                                             "topic": "meter-readings"}, lag,
          "Current Approximate Lag of a ConsumerGroup at Topic for all partitions")
    gauge(s, "kafka_consumergroup_lag_sum", {"consumergroup": "billing-export",
                                             "topic": "meter-readings-daily"},
          lambda t: float(s.rng.randrange(0, 40)),
          "Current Approximate Lag of a ConsumerGroup at Topic for all partitions")
    gauge(s, "kafka_topic_partition_leader", {"topic": "meter-readings", "partition": "4"},
          lambda t: 2.0 if t < t_kafka.timestamp() else 3.0,
          "Leader Broker ID of this Topic/Partition")
    chatter(s, kxs, "kafka-exporter", "metering-kafka-exporter", [
        ("info", "Refreshing client metadata", {}),
    ], 6)
    pgx = Ctr("postgres-exporter", "quay.io/prometheuscommunity/postgres-exporter:v0.17.1",
              port=9187, port_name="metrics", requests={"cpu": "50m", "memory": "64Mi"},
              limits={"memory": "128Mi"},
              env={"DATA_SOURCE_URI": "pg-metering.enermet.lan:5432/metering?sslmode=require",
                   "DATA_SOURCE_USER": "monitoring"})
    _, pgxs = steady(s, "metering-ops", "metering-pg-exporter", [pgx], nodes=nodes, replicas=1,
                     revision=6, rollout=s.ago(days=6, hours=3), service=9187,
                     target="metrics", offset=2)
    _scc(pgxs)
    for state, usename, value in (
            ("idle in transaction", "importer",
             lambda t: sum(held(k, t) for k in range(4))),
            ("idle", "importer", lambda t: float(max(0, 4 * POOL - int(sum(
                held(k, t) for k in range(4)))))),
            ("active", "importer", lambda t: float(s.rng.randrange(1, 5))
             if t < min(full_at) else 0.0),
            ("idle", "portal", lambda t: float(s.rng.randrange(18, 24)))):
        gauge(s, "pg_stat_activity_count", {"datname": "metering", "state": state,
                                            "usename": usename, "server":
                                            "pg-metering.enermet.lan:5432"}, value,
              "number of connections in this state")
    gauge(s, "pg_settings_max_connections", {"server": "pg-metering.enermet.lan:5432"},
          lambda t: 400.0, "Sets the maximum number of concurrent connections.")
    gauge(s, "pg_stat_activity_max_tx_duration", {"datname": "metering", "usename": "importer",
                                                  "server": "pg-metering.enermet.lan:5432"},
          lambda t: max(0.4, t - leak_times[0][0]) if t >= leak_times[0][0] else 0.4,
          "max duration in seconds any active transaction has been running")
    chatter(s, pgxs, "postgres-exporter", "metering-pg-exporter", [
        ("info", "ts=2027-05-11 level=info msg=\"Established new database connection\" "
         "fingerprint=pg-metering.enermet.lan:5432", {}),
    ], 4)

    # ---- the other services of metering
    reg = Ctr("meter-registry-api", f"{REG}/meter-registry-api:5.0.2", port=8080,
              requests={"cpu": "250m", "memory": "768Mi"}, limits={"memory": "1Gi"},
              readiness=http_probe("/q/health/ready", "http", delay=10))
    _, regs = steady(s, NS, "meter-registry-api", [reg], nodes=nodes, replicas=2,
                     revision=44, rollout=s.ago(days=4, hours=6),
                     restarted={1: (s.ago(days=2, hours=3, minutes=2), "OOMKilled", 137)},
                     offset=1)
    _scc(regs)
    quiet(s, regs, "meter-registry-api", 690)
    chatter(s, regs, "meter-registry-api", "meter-registry-api", [
        ("info", "GET /meters/1ESY1161229886 200", {"http.response.status_code": 200}),
        ("warn", "meter 1APA0114552201 reported firmware 4.2 (outdated, min 4.5)", {}),
    ], 40)
    bex = Ctr("billing-export", f"{REG}/billing-export:1.9.0", port=8080,
              requests={"cpu": "200m", "memory": "512Mi"}, limits={"memory": "1Gi"},
              readiness=http_probe("/ready", "http", delay=5))
    _, bexs = steady(s, NS, "billing-export", [bex], nodes=nodes, replicas=1, revision=18,
                     rollout=s.ago(days=5, hours=2), offset=3)
    _scc(bexs)
    chatter(s, bexs, "billing-export", "billing-export", [
        ("warn", "contract 40012233 has no tariff for 2027-05, skipping preview", {}),
        ("info", "daily preview export scheduled for 08:00 Europe/Berlin", {}),
    ], 12)
    portal = Ctr("portal", f"{REG.rsplit('/', 1)[0]}/portal/portal:2027.19.2", port=8080,
                 requests={"cpu": "250m", "memory": "512Mi"}, limits={"memory": "1Gi"},
                 readiness=http_probe("/health", "http", delay=5))
    _, portals = steady(s, "customer-portal", "portal", [portal], nodes=nodes, replicas=2,
                        revision=133, rollout=s.ago(days=1, hours=5), offset=4)
    _scc(portals)
    openshift_pod_ips(s, nodes)
    blip = NOW - timedelta(minutes=17, seconds=48)
    c.event(portals[0], "Unhealthy", f'Readiness probe failed: Get "http://'
            f'{portals[0]["status"]["podIP"]}:8080/health": context deadline exceeded '
            "(Client.Timeout exceeded while awaiting headers)", first=blip,
            last=blip + timedelta(seconds=10), count=2, type_="Warning",
            field_path="spec.containers{portal}")
    chatter(s, portals, "portal", "portal", [
        ("info", "GET /verbrauch 200", {"http.response.status_code": 200}),
        ("warn", "consumption for contract 40018812 not updated since 2027-05-10", {}),
        ("warn", "GET /favicon.ico 404", {"http.response.status_code": 404}),
    ], 40)

    # ---- OpenShift's own: the ingress router and cluster DNS (pods get OVN addresses)
    router = Ctr("router", "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:"
                 + c.hexid("router"), port=80, requests={"cpu": "100m", "memory": "256Mi"},
                 limits={}, readiness=http_probe("/healthz/ready", 1936, delay=0))
    _, routers = steady(s, "openshift-ingress", "router-default", [router], nodes=nodes,
                        replicas=2, revision=3, rollout=s.ago(days=6, hours=6), service=None,
                        labels={"ingresscontroller.operator.openshift.io/deployment-"
                                "ingresscontroller": "default"})
    chatter(s, routers, "router", "router-default", [
        ("info", "I0511 router.go:665] template \"msg\"=\"router reloaded\" \"output\"=\" - "
         "Checking http://localhost:80 ...\\n - Health check ok : 0 retry attempt(s).\\n\"", {}),
        ("warn", "W0511 router.go:881] template \"msg\"=\"route has no endpoints\" "
         "\"route\"=\"customer-portal/portal-legacy\"", {}),
    ], 14)
    dns = Ctr("dns", "quay.io/openshift-release-dev/ocp-v4.0-art-dev@sha256:"
              + c.hexid("dns"), port=5353, port_name="dns",
              requests={"cpu": "50m", "memory": "70Mi"}, limits={},
              readiness=http_probe("/ready", 8181, delay=10))
    _, dnss = daemonset(s, "openshift-dns", "dns-default", [dns], node_list=nodes,
                        generation=2, since=s.ago(days=6.7), labels={"dns.operator.openshift.io/"
                                                                     "daemonset-dns": "default"})
    chatter(s, dnss, "dns", "dns-default", [
        ("info", "[INFO] 10.129.2.14:41822 - 22011 \"AAAA IN kafka01.enermet.lan.metering.svc."
         "cluster.local. udp 62 false 512\" NXDOMAIN qr,aa,rd 155 0.000081s", {}),
    ], 10)
    openshift_pod_ips(s, nodes)
    return s
