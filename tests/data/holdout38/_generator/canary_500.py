"""Pinecrest Retail: one canary pod of eight breaks one endpoint.

catalog-api-canary runs 4.13.0-rc2 as one pod behind the same Service as the seven stable
pods. Its new availability aggregation raises NoMethodError when a product has no
warehouse rows, so GET /api/v2/products/:id/availability answers 500 from that pod only:
about 1 request in 8 of that endpoint, 3-4% of the service. At the edge the errors look
random; a database failover yesterday is the favourite theory.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout38._generator import kube as k
from tests.data.holdout38._generator.story import Story

NOW = datetime(2026, 11, 22, 13, 45, 0)
NS = "storefront"
APP = "catalog-api"
CANARY = "catalog-api-canary"
REPO = "registry.gitlab.com/pinecrest/storefront/catalog-api"
INVENTORY_DB = "inventory-db.cluster-ro-c9x2.us-east-1.rds.amazonaws.com"
CANARY_SINCE = NOW - timedelta(hours=2, minutes=12)
HANDLERS = (("/api/v2/products/:id", 0.38), ("/api/v2/products/:id/availability", 0.29),
            ("/api/v2/search", 0.21), ("/api/v2/categories/:slug", 0.12))


def build() -> Story:
    story = Story(
        id="catalog-canary-availability-500",
        title="catalog-api 5xx at a few percent, looks random",
        now=NOW,
        report="""
catalog 5xx has been sitting at ~3-4% since around lunch. looks random across requests,
nothing stands out on the dashboards, latency is normal. inventory-db had a failover
yesterday evening, could the connection pools still be messed up?
""",
        truth={"category": "bad_rollout",
               "culprit": {"kind": "Deployment", "namespace": NS, "name": CANARY},
               "evidence": ["4.13.0-rc2", "NoMethodError", "/availability"],
               "fix": "Scale catalog-api-canary to 0 (abort the canary) and fix the nil "
                      "warehouses case in 4.13.0's availability aggregation before retrying."})
    made = NOW - timedelta(days=700)
    story.add(k.namespace(NS, made, {"team": "catalog"}), k.namespace("default", made),
              k.namespace("ingress-nginx", made), k.namespace("data", made))
    nodes = [f"ip-172-31-{a}-{b}.ec2.internal" for a, b in ((18, 5), (33, 91), (50, 140),
                                                            (18, 210))]
    for i, name in enumerate(nodes):
        story.add(k.node(name, NOW - timedelta(days=6, hours=5 * i), cpu="7910m",
                         memory="30Gi", heartbeat=NOW - timedelta(seconds=12),
                         labels={"eks.amazonaws.com/nodegroup": "storefront-c6i",
                                 "topology.kubernetes.io/zone": f"us-east-1{'abcd'[i]}"}))

    def api(version: str) -> dict[str, object]:
        return k.container(APP, f"{REPO}:{version}", cpu="1", memory="1Gi",
                           memory_limit="1536Mi",
                           ports=[{"containerPort": 3000, "name": "http"}],
                           env=[{"name": "RAILS_ENV", "value": "production"},
                                {"name": "WEB_CONCURRENCY", "value": "4"},
                                {"name": "RAILS_MAX_THREADS", "value": "5"},
                                {"name": "DATABASE_URL", "valueFrom": {"secretKeyRef": {
                                    "name": "catalog-db", "key": "url"}}},
                                {"name": "INVENTORY_DB_HOST", "value": INVENTORY_DB}],
                           readinessProbe=k.http_probe("/up", 3000),
                           livenessProbe=k.http_probe("/up", 3000, initialDelaySeconds=30))

    stable_rolled = NOW - timedelta(days=5, hours=1)
    stable = k.workload("Deployment", NS, APP, made, [api("4.12.0")], replicas=7,
                        labels={"app": APP, "track": "stable"}, pod_labels={"app": APP,
                                                                            "track": "stable"},
                        annotations={"deployment.kubernetes.io/revision": "212"},
                        status=k.deployment_status(7, 7, 7, at=stable_rolled))
    canary = k.workload("Deployment", NS, CANARY, CANARY_SINCE, [api("4.13.0-rc2")], replicas=1,
                        labels={"app": APP, "track": "canary"}, pod_labels={"app": APP,
                                                                            "track": "canary"},
                        annotations={"deployment.kubernetes.io/revision": "1",
                                     "pinecrest.io/release": "catalog-api 4.13.0-rc2 canary "
                                                             "(pipeline 88412)"},
                        status=k.deployment_status(1, 1, 1, at=CANARY_SINCE))
    stable_hash, canary_hash = k.pod_hash(NS, APP, "212"), k.pod_hash(NS, CANARY, "1")
    stable_rs = k.replicaset(stable, stable_hash, 212, stable_rolled, [api("4.12.0")],
                             replicas=7, ready=7)
    canary_rs = k.replicaset(canary, canary_hash, 1, CANARY_SINCE, [api("4.13.0-rc2")],
                             replicas=1, ready=1)
    story.add(stable, canary, stable_rs, canary_rs)
    pods, addresses = [], []
    for i in range(8):
        is_canary = i == 5
        rs, pod_hash = (canary_rs, canary_hash) if is_canary else (stable_rs, stable_hash)
        owner = CANARY if is_canary else APP
        name = f"{owner}-{pod_hash}-{k.suffix(owner, str(i))}"
        started = CANARY_SINCE if is_canary else stable_rolled + timedelta(seconds=30 * i)
        ip = f"172.31.{(18, 33, 50, 18)[i % 4]}.{100 + 7 * i}"
        story.add(k.pod(rs, name, nodes[i % 4], started, {APP: k.running(
            started + timedelta(seconds=12))}, ip=ip))
        pods.append((name, ip, is_canary, started))
        addresses.append((ip, name, nodes[i % 4]))
    story.add(k.service(NS, APP, made, {"app": APP},
                        [{"name": "http", "port": 80, "targetPort": 3000}], "10.100.41.7"),
              k.endpoints(NS, APP, addresses, [], [{"name": "http", "port": 3000}]))
    for name, ip, is_canary, started in pods:
        _rails_logs(story, name, ip, is_canary, started)
    _bystanders(story, made, nodes)
    _metrics(story, pods)
    return story


def _handler(story: Story) -> str:
    roll, total = story.rng.random(), 0.0
    for handler, share in HANDLERS:
        total += share
        if roll < total:
            return handler
    return HANDLERS[-1][0]


def _rails_logs(story: Story, pod: str, ip: str, is_canary: bool, started: datetime) -> None:
    rng = story.rng
    moment = max(started + timedelta(seconds=20), NOW - timedelta(minutes=100))
    lines: list[str] = []
    edge: list[tuple[datetime, str, int]] = []
    while moment < NOW:
        handler = _handler(story)
        path = handler.replace(":id", str(rng.randint(10**5, 10**6))).replace(
            ":slug", rng.choice(["kitchen", "garden", "lighting", "bath"]))
        request = f"{rng.getrandbits(32):08x}-{rng.getrandbits(16):04x}"
        stamp = moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{rng.randint(0, 999999):06d}"
        fails = is_canary and handler.endswith("/availability") and rng.random() < 0.9
        lines.append(f"I, [{stamp} #{rng.randint(20, 60)}]  INFO -- : [{request}] Started GET "
                     f"\"{path}\" for 10.100.0.{rng.randint(2, 60)} at "
                     f"{moment:%Y-%m-%d %H:%M:%S} +0000")
        if fails:
            lines += [f"E, [{stamp} #{rng.randint(20, 60)}] ERROR -- : [{request}] ",
                      f"E, [{stamp} #{rng.randint(20, 60)}] ERROR -- : [{request}] "
                      "NoMethodError (undefined method `sum' for nil:NilClass):",
                      f"E, [{stamp} #{rng.randint(20, 60)}] ERROR -- : [{request}]   "
                      "app/services/availability/aggregate.rb:47:in `block in call'",
                      f"I, [{stamp} #{rng.randint(20, 60)}]  INFO -- : [{request}] Completed "
                      f"500 Internal Server Error in {rng.randint(8, 30)}ms"]
            story.doc(moment, "NoMethodError (undefined method `sum' for nil:NilClass): "
                      "app/services/availability/aggregate.rb:47", level="error", service=APP,
                      ns=NS, pod=pod, container=APP, http__response__status_code=500,
                      url__path=path, trace__id=request, error__type="NoMethodError")
            edge.append((moment, path, 500))
        else:
            took = rng.randint(9, 140)
            lines.append(f"I, [{stamp} #{rng.randint(20, 60)}]  INFO -- : [{request}] Completed "
                         f"200 OK in {took}ms (Views: {took // 3}.1ms | ActiveRecord: "
                         f"{took // 2}.4ms)")
            if rng.random() < 0.04:
                edge.append((moment, path, 200))
            if rng.random() < 0.25:
                story.doc(moment, f"Completed 200 OK in {took}ms GET {path}", level="info",
                          service=APP, ns=NS, pod=pod, container=APP,
                          http__response__status_code=200, url__path=path, trace__id=request)
        if rng.random() < 0.01:
            lines.append(f"W, [{stamp} #{rng.randint(20, 60)}]  WARN -- : [{request}] "
                         "ActiveRecord::ConnectionTimeoutError retried: could not obtain a "
                         "connection from the pool within 5.000 seconds (inventory replica)")
            story.doc(moment, "ActiveRecord::ConnectionTimeoutError retried: could not obtain "
                      "a connection from the pool within 5.000 seconds (inventory replica)",
                      level="warn", service=APP, ns=NS, pod=pod, container=APP)
        moment += timedelta(seconds=rng.uniform(4.0, 12.0))
    story.log(NS, pod, APP, lines)
    _edge_logs(story, ip, edge)


def _edge_logs(story: Story, upstream: str, edge: list[tuple[datetime, str, int]]) -> None:
    """ingress-nginx's access log for the 500s this pod answered (and a sample of the 200s)."""
    rng = story.rng
    for at, path, code in edge:
        client = ".".join(str(rng.randint(24, 254)) for _ in range(4))
        story.doc(at, f'{client} - - "GET {path} HTTP/2.0" {code} {rng.randint(200, 9000)} '
                  f'"-" "Mozilla/5.0" rt={rng.uniform(0.01, 0.15):.3f} '
                  f"upstream={upstream}:3000 [storefront-catalog-api-80]",
                  level="info" if code == 200 else "error",
                  service="ingress-nginx", ns="ingress-nginx",
                  pod="ingress-nginx-controller-6b9d8c7f5-tq2wd", container="controller",
                  http__response__status_code=code, url__domain="www.pinecrest.com")


def _bystanders(story: Story, made: datetime, nodes: list[str]) -> None:
    story.add(*k.healthy_deployment(
        NS, "cart-api", "registry.gitlab.com/pinecrest/storefront/cart-api:9.1.3", made,
        NOW - timedelta(days=2, hours=2), nodes, ["172.31.33.12", "172.31.50.12",
                                                  "172.31.18.12", "172.31.33.13"],
        replicas=4, cpu="500m", memory="768Mi", port=8080, revision=140))
    story.add(*k.healthy_deployment(
        "data", "inventory-sync", "registry.gitlab.com/pinecrest/data/inventory-sync:3.3.0",
        made, NOW - timedelta(hours=20), nodes[2:], ["172.31.50.77"], replicas=1, cpu="250m",
        memory="512Mi", port=8080, revision=27))
    story.add(k.event("data", "Pod", story.objects[-3]["metadata"]["name"], "Unhealthy",
                      "Readiness probe failed: Get \"http://172.31.50.77:8080/healthz\": "
                      "context deadline exceeded (Client.Timeout exceeded while awaiting "
                      "headers)", NOW - timedelta(minutes=28), NOW - timedelta(minutes=27),
                      count=2, type_="Warning", host=nodes[2]))


def _metrics(story: Story, pods: list[tuple[str, str, bool, datetime]]) -> None:
    rng = story.rng
    for name, _ip, is_canary, started in pods:
        totals: dict[tuple[str, str], float] = {}
        start = max(NOW - timedelta(hours=3), started + timedelta(seconds=30))
        for at in story.steps(start, NOW, timedelta(minutes=2)):
            for handler, share in HANDLERS:
                rate = 120 * 31 * share * rng.uniform(0.85, 1.15)
                broken = is_canary and handler.endswith("/availability")
                for code, part in (("200", 0.1 if broken else 0.999),
                                   ("500", 0.9 if broken else 0.0),
                                   ("404", 0.0 if broken else 0.001)):
                    if part == 0.0:
                        continue
                    key = (handler, code)
                    totals[key] = totals.get(key, 0.0) + rate * part
                    story.sample("http_requests_total", "counter",
                                 {"namespace": NS, "pod": name, "service": APP,
                                  "handler": handler, "method": "GET", "code": code}, at,
                                 round(totals[key]))
