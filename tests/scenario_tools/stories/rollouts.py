"""bad_rollout stories: a new revision that serves but errs, and one that serves slowly."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.scenario_tools.common import (
    MIB,
    Story,
    const,
    container_metrics,
    deployment_metrics,
    http_metrics,
    kube_system,
    namespaces,
    nodes,
    story,
    truth,
)
from tests.scenario_tools.kube import Ctr, Obj, ended, http_probe, running
from tests.scenario_tools.parts import neighbour, readiness_blip, rollout

GHCR = "ghcr.io/acme-retail"


def _java_line(when: datetime, level: str, logger: str, message: str, thread: str) -> str:
    stamp = when.strftime("%Y-%m-%dT%H:%M:%S.") + f"{when.microsecond // 1000:03d}Z"
    return f"{stamp} {level:>5} 1 --- [orders-api] [{thread}] {logger:<40} : {message}"


NPE = ('java.lang.NullPointerException: Cannot invoke "com.acme.orders.promo.Promotion.getRate()"'
       ' because "promotion" is null')
TRACE = ["\tat com.acme.orders.pricing.PriceCalculator.applyPromotions(PriceCalculator.java:142)",
         "\tat com.acme.orders.pricing.PriceCalculator.total(PriceCalculator.java:88)",
         "\tat com.acme.orders.api.OrderController.create(OrderController.java:61)",
         "\tat java.base/jdk.internal.reflect.DirectMethodHandleAccessor.invoke(Unknown Source)"]


@story
def orders_bad_release() -> Story:
    s = Story("orders-bad-release", "Order placement failing for part of the traffic",
              datetime(2026, 12, 3, 14, 20, tzinfo=UTC),
              "lots of 500s on POST /orders since about 13:30, roughly one order in five "
              "fails. support is getting tickets. orders-api in prod",
              truth("bad_rollout", "Deployment", "orders", "orders-api",
                    ["4.12.0", "NullPointerException", "revision 32"],
                    "Roll orders-api back to 4.11.3 (kubectl rollout undo) and fix the null "
                    "promotion handling in PriceCalculator before re-releasing 4.12.0"),
              hours=2.5)
    namespaces(s, "orders", "analytics")
    node_list = nodes(s, 4, subnet=32, instance="m6i.2xlarge", cpu="8", memory="32Gi",
                      allocatable_cpu="7910m", allocatable_memory="30310Mi")
    kube_system(s, node_list)
    at = s.ago(minutes=49)

    def ctr(version: str) -> Ctr:
        return Ctr("orders-api", f"{GHCR}/orders-api:{version}",
                   requests={"cpu": "500m", "memory": "768Mi"},
                   limits={"cpu": "2", "memory": "1Gi"},
                   env={"SPRING_PROFILES_ACTIVE": "prod", "JAVA_TOOL_OPTIONS":
                        "-XX:MaxRAMPercentage=70", "INVENTORY_URL":
                        "http://inventory.orders.svc.cluster.local"},
                   readiness=http_probe("/actuator/health/readiness", delay=20, period=5),
                   liveness=http_probe("/actuator/health/liveness", delay=60, period=10))

    roll = rollout(s, "orders", "orders-api", ctr, old="4.11.3", new="4.12.0", at=at,
                   revision=32, replicas=3, node_list=node_list)
    deployment_metrics(s, roll.work)
    rps = const(14.0)
    for pod in roll.old_pods:
        container_metrics(s, pod, "orders-api", memory=lambda t: 610 * MIB, cpu=const(0.42),
                          limit_memory=1024 * MIB, limit_cpu=2.0)
        http_metrics(s, "orders-api", pod, rps=rps, codes={
            "200": const(0.62), "201": const(0.35), "409": const(0.028), "500": const(0.002)},
            median=const(0.085), histogram=True)
    for pod in roll.new_pods:
        container_metrics(s, pod, "orders-api", memory=lambda t: 640 * MIB, cpu=const(0.45),
                          limit_memory=1024 * MIB, limit_cpu=2.0)
        http_metrics(s, "orders-api", pod, rps=rps, codes={
            "200": const(0.62), "201": const(0.17), "409": const(0.028), "500": const(0.182)},
            median=const(0.08), histogram=True)
    _orders_logs(s, roll.old_pods, roll.new_pods, at)
    _orders_neighbours(s, node_list)
    return s


def _orders_logs(s: Story, old: list[Obj], new: list[Obj], at: datetime) -> None:
    start = s.ago(hours=s.hours)
    for pods, begin, end in ((old, start, at), (new, at + timedelta(minutes=2), s.now)):
        minutes = (end - begin).total_seconds() / 60
        for pod in pods:
            for _ in range(int(minutes / 5)):
                when = begin + timedelta(seconds=s.rng.uniform(0, minutes * 60))
                code = s.rng.choice([200, 201, 201, 409])
                level = "warn" if code == 409 else "info"
                msg = ("order rejected: duplicate idempotency key" if code == 409 else
                       "order created")
                s.logs.add(when, level, msg, namespace="orders", pod=pod["metadata"]["name"],
                           container="orders-api", service="orders-api",
                           node=pod["spec"]["nodeName"], http__response__status_code=code,
                           log__logger="com.acme.orders.api.OrderController")
    for pod in new:
        for _ in range(38):
            when = at + timedelta(minutes=2, seconds=s.rng.uniform(0, (s.now - at).seconds - 150))
            s.logs.add(when, "error", "Servlet.service() for servlet [dispatcherServlet] threw "
                       f"exception: {NPE}", namespace="orders", pod=pod["metadata"]["name"],
                       container="orders-api", service="orders-api",
                       node=pod["spec"]["nodeName"], http__response__status_code=500,
                       error__type="java.lang.NullPointerException",
                       error__stack_trace="\n".join([NPE, *TRACE]),
                       log__logger="o.a.c.c.C.[.[localhost].[/].[dispatcherServlet]")
    for pod in new:
        started = datetime.fromisoformat(pod["status"]["containerStatuses"][0]["state"][
            "running"]["startedAt"].replace("Z", "+00:00"))
        lines = [_java_line(started + timedelta(seconds=1), "INFO", "c.a.orders.OrdersApplication",
                            "Starting OrdersApplication v4.12.0 using Java 21.0.5", "main"),
                 _java_line(started + timedelta(seconds=14), "INFO",
                            "o.s.b.w.embedded.tomcat.TomcatWebServer",
                            "Tomcat started on port 8080 (http) with context path '/'", "main"),
                 _java_line(started + timedelta(seconds=15), "INFO",
                            "c.a.orders.OrdersApplication",
                            "Started OrdersApplication in 14.2 seconds", "main")]
        for k in range(6):
            when = started + timedelta(minutes=6 + 6 * k, seconds=s.rng.uniform(0, 50))
            thread = f"http-nio-8080-exec-{s.rng.randrange(1, 40)}"
            lines.append(_java_line(when, "INFO", "c.a.orders.api.OrderController",
                                    "order created", thread))
            lines.append(_java_line(when + timedelta(seconds=2), "ERROR",
                                    "o.a.c.c.C.[.[localhost].[/].[dispatcherServlet]",
                                    "Servlet.service() for servlet [dispatcherServlet] in context"
                                    f" with path [] threw exception\n{NPE}", thread))
            lines.extend(TRACE)
        s.pod_log(pod, "orders-api", lines)


def _orders_neighbours(s: Story, node_list: list[Obj]) -> None:
    """The worker warns about Kafka rebalances; inventory logs slow queries; analytics blips."""
    neighbour(s, "orders", "orders-worker", f"{GHCR}/orders-worker:4.11.3", node_list, logs=[
        ("warn", "[Consumer clientId=orders-worker-1, groupId=orders] Request joining group due "
         "to: group is already rebalancing", {}),
        ("info", "order event processed", {}), ("info", "order event processed", {}),
        ("info", "order event processed", {}),
    ], n_logs=40, memory_mib=420, revision=29)
    neighbour(s, "orders", "inventory", f"{GHCR}/inventory:2.8.0", node_list, logs=[
        ("warn", "slow query: SELECT * FROM stock_levels WHERE sku = ANY($1) took 812ms", {}),
        ("info", "stock reserved", {}), ("info", "stock reserved", {}),
        ("error", "reservation expired before confirm", {"error.type": "ReservationExpired"}),
    ], n_logs=40, rps=30.0, codes={"200": 0.995, "404": 0.005}, revision=12,
        restarts={0: _old_restart(s)})
    readiness_blip(s, "analytics", "superset", "docker.io/apache/superset:4.1.1", node_list,
                   port=8088, path="/health", minutes_ago=37)


def _old_restart(s: Story) -> Obj:
    back = s.ago(days=3, hours=5, minutes=20)
    return running(back, restarts=1, last=ended("Error", 143, s.ago(days=5), back))


@story
def query_api_slow_release() -> Story:
    s = Story("query-api-slow-release", "Search got slow after lunch",
              datetime(2026, 12, 19, 14, 15, tzinfo=UTC),
              "search got slow after lunch, query-api p95 is above a second (normally "
              "~150ms). nothing is down, just slow",
              truth("bad_rollout", "Deployment", "discovery", "query-api",
                    ["3.7.0", "revision 44", "slow query", "facet"],
                    "query-api 3.7.0 loads facets with one query per facet: roll back to "
                    "3.6.2 (kubectl rollout undo) and batch the facet queries before "
                    "re-releasing"),
              hours=2.5, nested_logs=True)
    namespaces(s, "discovery", "catalog")
    node_list = nodes(s, 4, subnet=41, region="us-west-2", instance="c6i.2xlarge", cpu="8",
                      memory="16Gi", allocatable_cpu="7910m")
    kube_system(s, node_list)
    at = s.ago(hours=1, minutes=12)

    def ctr(version: str) -> Ctr:
        return Ctr("query-api", f"{GHCR}/query-api:{version}",
                   requests={"cpu": "500m", "memory": "512Mi"}, limits={"memory": "1Gi"},
                   env={"PG_POOL_SIZE": "40", "FACETS_ENABLED": "true"},
                   readiness=http_probe("/readyz"), liveness=http_probe("/livez", delay=10))

    roll = rollout(s, "discovery", "query-api", ctr, old="3.6.2", new="3.7.0", at=at,
                   revision=44, replicas=4, node_list=node_list)
    deployment_metrics(s, roll.work)
    for pods, median, cpu in ((roll.old_pods, 0.045, 0.31), (roll.new_pods, 0.42, 0.38)):
        for pod in pods:
            container_metrics(s, pod, "query-api", memory=lambda t: 290 * MIB, cpu=const(cpu),
                              limit_memory=1024 * MIB)
            http_metrics(s, "query-api", pod, rps=const(55.0), codes={
                "200": const(0.992), "400": const(0.006), "504": const(0.002 if median < 0.1
                                                                        else 0.004)},
                median=const(median), histogram=True)
    for pod in roll.new_pods:
        for _ in range(22):
            when = at + timedelta(seconds=s.rng.uniform(90, (s.now - at).total_seconds()))
            took = int(s.rng.uniform(700, 2400))
            s.logs.add(when, "warn", f"slow query ({took}ms): SELECT value, count(*) FROM "
                       "product_facets WHERE facet_id = $1 AND product_id = ANY($2) GROUP BY "
                       "value", namespace="discovery", pod=pod["metadata"]["name"],
                       container="query-api", service="query-api",
                       node=pod["spec"]["nodeName"], event__duration=took * 1_000_000)
        noise_logs_for(s, pod, "loaded 38 facets for query", 10, at)
    for pod in roll.old_pods:
        noise_logs_for(s, pod, "search served from index", 10, s.ago(hours=3), at)
    neighbour(s, "discovery", "autocomplete", f"{GHCR}/autocomplete:1.9.0", node_list,
              memory_mib=380, logs=[("warn", "redis GET timeout after 50ms, falling back to "
                                     "prefix index", {}), ("info", "GET /v1/suggest 200", {})],
              n_logs=30, rps=120, codes={"200": 0.995, "400": 0.005}, revision=23)
    neighbour(s, "catalog", "catalog-api", f"{GHCR}/catalog-api:12.4.0", node_list,
              memory_mib=520, logs=[("warn", "GET /v2/products/sku-0 404", {}),
                                    ("error", "client disconnected before response "
                                     "(context canceled)", {})], n_logs=30,
              restarts={1: _old_restart(s)})
    readiness_blip(s, "catalog", "pim-sync", f"{GHCR}/pim-sync:0.4.1", node_list, port=8080,
                   path="/ready", minutes_ago=26)
    return s


def noise_logs_for(s: Story, pod: Obj, message: str, count: int, start: datetime,
                   end: datetime | None = None) -> None:
    end = end or s.now
    for _ in range(count):
        when = start + timedelta(seconds=s.rng.uniform(0, (end - start).total_seconds()))
        s.logs.add(when, "info", message, namespace=pod["metadata"]["namespace"],
                   pod=pod["metadata"]["name"], container="query-api", service="query-api",
                   node=pod["spec"]["nodeName"])
