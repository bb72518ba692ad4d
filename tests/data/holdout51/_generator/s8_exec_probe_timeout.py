"""An exec liveness probe with timeoutSeconds: 1 times out once the database got slower."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

from ._kit import (
    CState,
    PState,
    Story,
    access,
    ctr,
    deployment,
    event,
    fix_host_ips,
    http_probe,
    namespace,
    node,
    platform,
    service,
)

SID = "order-worker-restart-storm"
NOW = "2026-04-15T07:45:00Z"
SLOW_AT = 52.0  # the database's storage maintenance began
CMD = ["/app/bin/order-worker", "healthcheck", "--deep"]
PROBE_FAIL = f'Liveness probe failed: command "{" ".join(CMD)}" timed out'


def build(root: Path) -> None:
    st = Story(SID, NOW, 5108)
    zones = ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
    nodes = [f"ip-10-0-{a}-{b}.eu-west-1.compute.internal"
             for a, b in [(5, 90), (20, 14), (38, 177), (11, 250)]]
    for i, n in enumerate(nodes):
        st.add(node(st, n, zone=zones[i % 3], age_days=18 + i))
    platform(st, nodes)
    for ns in ("orders", "messaging", "web"):
        st.add(namespace(st, ns))

    live = {"exec": {"command": CMD}, "initialDelaySeconds": 20, "periodSeconds": 10,
            "timeoutSeconds": 1, "successThreshold": 1, "failureThreshold": 3}
    wctr = ctr("order-worker", "ghcr.io/example/order-worker:6.4.2", port=9090, cpu="500m",
               mem="512Mi", mem_limit="1Gi", liveness=live,
               readiness=http_probe("/ready", 9090, 10, 2),
               env=[{"name": "DATABASE_HOST",
                     "value": "orders-db.cluster-c8xk2lq0abcd.eu-west-1.rds.amazonaws.com"},
                    {"name": "AMQP_URL", "value": "amqp://rabbitmq.messaging.svc:5672/orders"}])
    restarts = [9, 7, 8, 6]
    last_kill = [3.2, 7.9, 1.4, 11.0]
    states = [PState(containers=[CState(ready=True, restarts=r, started_min=k - 0.1,
                                        last=("Error", 137, k + 4.5, k))])
              for r, k in zip(restarts, last_kill, strict=True)]
    states[2] = PState(containers=[CState(
        ready=False, restarts=8, waiting=("CrashLoopBackOff", "back-off 1m20s restarting "
                                                              "failed container"),
        last=("Error", 137, 5.8, 1.4))])
    w = deployment(st, "orders", "order-worker", [wctr], nodes, age_days=400, revision=29,
                   rollout_min=8 * 1440, states=states)
    for p, k in zip(w.pods, last_kill, strict=True):
        event(st, "orders", "Pod", p.name, "Unhealthy", PROBE_FAIL, type_="Warning",
              count=st.rng.randint(25, 32), first_min=SLOW_AT - 6, last_min=k + 0.2,
              field_path="spec.containers{order-worker}", host=p.node)
        event(st, "orders", "Pod", p.name, "Killing",
              "Container order-worker failed liveness probe, will be restarted",
              count=restarts[w.pods.index(p)], first_min=SLOW_AT - 7, last_min=k,
              field_path="spec.containers{order-worker}", host=p.node)
        event(st, "orders", "Pod", p.name, "Pulled",
              'Container image "ghcr.io/example/order-worker:6.4.2" already present on machine',
              count=restarts[w.pods.index(p)], first_min=SLOW_AT - 7, last_min=k - 0.05,
              field_path="spec.containers{order-worker}", host=p.node)
    event(st, "orders", "Pod", w.pods[2].name, "BackOff",
          "Back-off restarting failed container order-worker in pod "
          f"{w.pods[2].name}_orders({st.uid('Pod', 'orders', w.pods[2].name)})",
          type_="Warning", count=5, first_min=20, last_min=0.5,
          field_path="spec.containers{order-worker}", host=w.pods[2].node)
    # the worker itself is fine: it processes orders, slower since the DB slowed down
    for i, p in enumerate(w.pods):
        t = st.at(60) + timedelta(seconds=st.rng.uniform(0, 10))
        while t < st.now:
            m = (st.now - t).total_seconds() / 60
            slow = m < SLOW_AT
            ms = int(st.rng.uniform(280, 650) if slow else st.rng.uniform(35, 90))
            st.log(t, p, "info", f"order processed order_id=ord_{st.rng.getrandbits(40):010x} "
                                 f"items={st.rng.randint(1, 6)} db_ms={ms} status=confirmed")
            t += timedelta(seconds=st.rng.uniform(15, 26) * (1.6 if slow else 1.0))
        for k in range(restarts[i]):
            km = last_kill[i] + k * 4.6
            if km > SLOW_AT - 7:
                break
            st.log(st.at(km), p, "info", "received SIGTERM, draining in-flight orders")
            st.log(st.at(km - 0.05), p, "info",
                   "order-worker 6.4.2 started consumers=8 prefetch=20")
        st.chatter([p], lambda r: ("info", f"healthcheck --deep ok db_ping={r.randint(880, 1450)}"
                                           f"ms amqp_ping={r.randint(3, 9)}ms"),
                   every_s=240, start_min=SLOW_AT - 1)
        st.chatter([p], lambda r: ("info", f"healthcheck --deep ok db_ping={r.randint(30, 70)}"
                                           f"ms amqp_ping={r.randint(3, 9)}ms"),
                   every_s=240, start_min=60, end_min=SLOW_AT)
    st.pod_log(w.pods[2], [
        "2026-04-15T07:42:07Z INFO order-worker 6.4.2 started consumers=8 prefetch=20",
        "2026-04-15T07:42:08Z INFO connected to orders-db (pool 4/20) in 812ms",
        "2026-04-15T07:42:09Z INFO order processed order_id=ord_8c1f22a0e1 items=2 "
        "db_ms=431 status=confirmed",
        "2026-04-15T07:43:30Z INFO order processed order_id=ord_91aa0c7d33 items=1 "
        "db_ms=377 status=confirmed",
        "2026-04-15T07:43:35Z INFO received SIGTERM, draining in-flight orders",
        "2026-04-15T07:43:36Z INFO drained 3 orders, bye"], previous=True)
    st.pod_log(w.pods[2], [])
    st.pod_log(w.pods[0], [
        "2026-04-15T07:41:51Z INFO order-worker 6.4.2 started consumers=8 prefetch=20",
        "2026-04-15T07:41:53Z INFO connected to orders-db (pool 4/20) in 944ms",
        "2026-04-15T07:42:40Z INFO order processed order_id=ord_0be1c5d7a2 items=3 "
        "db_ms=512 status=confirmed"])

    # bystanders and the red herring: order-api shipped this morning, healthy
    api = deployment(st, "orders", "order-api",
                     [ctr("order-api", "ghcr.io/example/order-api:3.12.0", cpu="300m",
                          mem="384Mi", readiness=http_probe("/ready"))], nodes[:3],
                     age_days=400, revision=77, rollout_min=95)
    service(st, "orders", "order-api", {"app.kubernetes.io/name": "order-api"}, 80, 8080,
            pods=api.pods)
    st.chatter(api.pods, access(["+/v1/orders", "/v1/orders/ord_18a2", "/ready"], "order-api",
                                60), every_s=30)
    st.chatter(api.pods[:1], lambda r: ("warn", "pool orders-db: acquire took 240ms "
                                               "(threshold 200ms)"),
               every_s=300, start_min=SLOW_AT)
    rmq = deployment(st, "messaging", "rabbitmq",
                     [ctr("rabbitmq", "docker.io/library/rabbitmq:3.13-management", port=5672,
                          cpu="500m", mem="1Gi", mem_limit="2Gi")], nodes[3:4], replicas=1,
                     age_days=300,
                     states=[PState(containers=[CState(restarts=1, started_min=4 * 1440,
                                                       last=("OOMKilled", 137, 6 * 1440,
                                                             4 * 1440))])])
    st.chatter(rmq.pods, lambda r: ("warn", f"closing AMQP connection <0.{r.randint(100, 999)}"
                                            ".0> (10.0.20.44:40122 -> 10.0.11.9:5672, vhost: "
                                            "'orders', user: 'worker'): client unexpectedly "
                                            "closed TCP connection"), every_s=200)
    web = deployment(st, "web", "shop-web",
                     [ctr("shop-web", "ghcr.io/example/shop-web:12.9.0", port=3000, cpu="300m",
                          mem="512Mi", readiness=http_probe("/healthz", 3000))], nodes,
                     age_days=700, revision=150)
    st.chatter(web.pods, access(["/", "/checkout", "/orders"], "shop-web", 70), every_s=40)

    # metrics
    for i, p in enumerate(w.pods):
        kills = [last_kill[i] + k * 4.6 for k in range(restarts[i])
                 if last_kill[i] + k * 4.6 < SLOW_AT - 7]
        st.pod_metrics(p, cpu=0.35, mem_mib=380, resets=kills,
                       restarts=lambda m, ks=kills, r=restarts[i]: r - sum(1 for k in ks
                                                                          if k < m))
        st.gauge("order_worker_db_ping_seconds", "Duration of the last database ping.",
                 {"namespace": "orders", "pod": p.name},
                 lambda m: round(st.rng.uniform(0.9, 1.45) if m < SLOW_AT
                                 else st.rng.uniform(0.03, 0.07), 3))
        st.counter("orders_processed_total", "Orders processed.",
                   {"namespace": "orders", "pod": p.name, "status": "confirmed"},
                   lambda m: 0.05 if m < SLOW_AT else 0.08, start=250000.0)
        st.counter("orders_processed_total", "Orders processed.",
                   {"namespace": "orders", "pod": p.name, "status": "failed"},
                   lambda m: 0.0, start=14.0)
    for p in [*api.pods, *rmq.pods, *web.pods]:
        st.pod_metrics(p, cpu=0.15, mem_mib=260,
                       restarts=(lambda m: 1) if p in rmq.pods else None)
    st.gauge("rabbitmq_queue_messages_ready", "Messages ready to be delivered to consumers.",
             {"namespace": "messaging", "queue": "orders.created", "vhost": "orders"},
             lambda m: 40 + max(0.0, SLOW_AT - m) * 26 + st.rng.uniform(-10, 10))
    st.gauge("aws_rds_read_latency_average", "CloudWatch metric AWS/RDS ReadLatency",
             {"job": "cloudwatch", "dbinstance_identifier": "orders-db-instance-1"},
             lambda m: round(st.rng.uniform(0.018, 0.03) if m < SLOW_AT
                             else st.rng.uniform(0.001, 0.002), 4))
    st.gauge("aws_rds_database_connections_average", "CloudWatch metric AWS/RDS "
             "DatabaseConnections", {"job": "cloudwatch",
                                     "dbinstance_identifier": "orders-db-instance-1"},
             lambda m: st.rng.randint(70, 95))
    st.http("orders", "order-api", 12.0, lambda m: 0.002)
    fix_host_ips(st.objects)
    st.write(root, "order-worker restart storm, orders queue backing up",
             "order-worker pods keep restarting since ~07:00 and orders.created is backing up. "
             "The DB team\ndid storage maintenance on orders-db this morning, is the database "
             "down? Should we fail over\nto the replica?\n",
             {"category": "probe_failure",
              "culprit": {"kind": "Deployment", "namespace": "orders", "name": "order-worker"},
              "evidence": [PROBE_FAIL,
                           "Container order-worker failed liveness probe, will be restarted",
                           "timeoutSeconds: 1"],
              "fix": "Give order-worker's exec liveness probe a realistic timeoutSeconds (5+) "
                     "and make it shallow (no database ping in liveness; keep the deep check "
                     "for readiness); the database is slower but up, no failover needed."})
