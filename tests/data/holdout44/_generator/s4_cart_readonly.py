"""4. dependency_failure: a managed Redis failed over; the client still writes to the old
primary."""

from __future__ import annotations

import json
from datetime import timedelta

from . import _kit as k

SID = "cart-cache-readonly-replica"
NOW = "2026-12-10T11:20:00Z"
NS = "cart"
REDIS = "master.cart-cache.qm7x2k.euw1.cache.amazonaws.com"
OLD_PRIMARY_IP = "10.60.140.23"


def build() -> None:
    s = k.Scn(SID, NOW, 4404)
    now = s.now
    grid = k.grid(s.ago(hours=2), now)
    old = s.ago(days=450)
    nodes = [
        k.node(
            "ip-10-60-2-33.eu-west-1.compute.internal",
            "eu-west-1a",
            s.ago(days=15),
            s.ago(seconds=8),
        ),
        k.node(
            "ip-10-60-19-81.eu-west-1.compute.internal",
            "eu-west-1b",
            s.ago(days=15),
            s.ago(seconds=21),
        ),
        k.node(
            "ip-10-60-35-140.eu-west-1.compute.internal",
            "eu-west-1c",
            s.ago(days=3),
            s.ago(seconds=35),
        ),
    ]
    nn = [n["metadata"]["name"] for n in nodes]
    s.add(*(k.namespace(n, old) for n in (NS, "web", "ops")))
    s.add(*nodes)

    failover = s.ago(minutes=32, seconds=40)
    env = [
        {"name": "REDIS_URL", "value": f"rediss://{REDIS}:6379/0"},
        {"name": "REDIS_KEY_PREFIX", "value": "cart:v3:"},
        {"name": "NODE_ENV", "value": "production"},
        {"name": "PORT", "value": "8080"},
    ]
    _cd, _crs, cpods = k.healthy_deployment(
        s,
        nn,
        "cart-service",
        NS,
        "registry.quillmark.io/cart/cart-service:4.7.1",
        4,
        s.ago(days=440),
        port=8080,
        req_cpu="250m",
        req_mem="256Mi",
        lim_mem="512Mi",
        env=env,
        rollout=s.ago(days=3, hours=4),
        revision=41,
        probe_path="/healthz",
    )
    xd, xrs, xpods = k.healthy_deployment(
        s,
        nn,
        "checkout-api",
        "web",
        "registry.quillmark.io/web/checkout-api:9.3.0",
        3,
        s.ago(days=700),
        port=8080,
        req_mem="256Mi",
        lim_mem="512Mi",
        env=[{"name": "CART_URL", "value": "http://cart-service.cart.svc:8080"}],
        rollout=s.ago(minutes=14, seconds=5),
        revision=122,
    )
    xold = k.replicaset(
        xd,
        s.rs_hash(),
        s.ago(days=1, hours=6),
        121,
        json.loads(json.dumps(xrs["spec"]["template"])),
        0,
    )
    xold["spec"]["template"]["spec"]["containers"][0]["image"] = (
        "registry.quillmark.io/web/checkout-api:9.2.7"
    )
    s.add(xold)
    _wd, _wrs, wpods = k.healthy_deployment(
        s,
        nn,
        "web-frontend",
        "web",
        "registry.quillmark.io/web/web-frontend:12.0.4",
        3,
        s.ago(days=700),
        port=3000,
    )
    _ed, _ers, epods = k.healthy_deployment(
        s,
        nn,
        "aws-events-forwarder",
        "ops",
        "registry.quillmark.io/ops/aws-events-forwarder:0.6.0",
        1,
        s.ago(days=200),
        port=8080,
    )
    _yd, _yrs, ypods = k.healthy_deployment(
        s,
        nn,
        "yace",
        "ops",
        "ghcr.io/nerdswords/yet-another-cloudwatch-exporter:v0.61.2",
        1,
        s.ago(days=200),
        port=5000,
        cname="yace",
    )
    s.add(
        k.service(
            "cart-service",
            NS,
            s.ago(days=440),
            {"app.kubernetes.io/name": "cart-service"},
            [{"name": "http", "port": 8080, "protocol": "TCP", "targetPort": "http"}],
            "172.20.33.70",
        )
    )
    s.add(
        k.endpoints(
            "cart-service",
            NS,
            s.ago(days=440),
            cpods,
            [{"name": "http", "port": 8080, "protocol": "TCP"}],
        )
    )
    s.add(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {
                "name": "cart-redis",
                "namespace": NS,
                "uid": k.uid("svc", NS, "cart-redis"),
                "creationTimestamp": k.ts(s.ago(days=440)),
            },
            "spec": {"type": "ExternalName", "externalName": REDIS, "sessionAffinity": "None"},
            "status": {"loadBalancer": {}},
        }
    )
    s.add(
        {
            "apiVersion": "networking.k8s.io/v1",
            "kind": "NetworkPolicy",
            "metadata": {
                "name": "cart-egress",
                "namespace": NS,
                "uid": k.uid("np", NS, "cart-egress"),
                "generation": 3,
                "creationTimestamp": k.ts(s.ago(days=90)),
                "annotations": {
                    "quillmark.io/changed": "2026-12-09 add 10.60.128.0/18 for new cache subnet"
                },
            },
            "spec": {
                "podSelector": {"matchLabels": {"app.kubernetes.io/name": "cart-service"}},
                "policyTypes": ["Egress"],
                "egress": [
                    {
                        "to": [{"ipBlock": {"cidr": "10.60.128.0/18"}}],
                        "ports": [{"protocol": "TCP", "port": 6379}],
                    },
                    {
                        "to": [
                            {
                                "namespaceSelector": {
                                    "matchLabels": {"kubernetes.io/metadata.name": "kube-system"}
                                },
                                "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}},
                            }
                        ],
                        "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}],
                    },
                ],
            },
        }
    )
    s.add(
        k.configmap(
            "cart-service-flags",
            NS,
            s.ago(days=100),
            {
                "flags.json": json.dumps(
                    {
                        "cart.reservations": True,
                        "cart.redisReconnectOnReadonly": False,
                        "cart.saveForLater": True,
                    }
                )
            },
        )
    )

    # ---- events: only the harmless checkout rollout
    roll = s.ago(minutes=14, seconds=5)
    s.add(
        k.event(
            "web",
            xd,
            "ScalingReplicaSet",
            f"Scaled up replica set {xrs['metadata']['name']} to 1",
            roll,
            roll,
            1,
            "Normal",
            "deployment-controller",
        ),
        k.event(
            "web",
            xd,
            "ScalingReplicaSet",
            f"Scaled down replica set {xold['metadata']['name']} to 0 from 1",
            roll + timedelta(seconds=70),
            roll + timedelta(seconds=70),
            1,
            "Normal",
            "deployment-controller",
        ),
    )
    for p in xpods:
        cr = k.parse(p["metadata"]["creationTimestamp"])
        s.add(
            k.event(
                "web",
                p,
                "Pulled",
                'Successfully pulled image "registry.quillmark.io/web/checkout-api:9.3.0" '
                "in 1.872s (1.872s including waiting)",
                cr + timedelta(seconds=2),
                cr + timedelta(seconds=2),
                1,
                "Normal",
                "kubelet",
                p["spec"]["nodeName"],
                "spec.containers{checkout-api}",
            )
        )

    # ---- logs
    lt0 = s.ago(minutes=100)
    ep = epods[0]["metadata"]["name"]
    for dt, msg in [
        (
            -timedelta(seconds=95),
            "Failover from primary node cart-cache-001 to replica node cart-cache-002 started",
        ),
        (
            timedelta(seconds=0),
            "Failover from primary node cart-cache-001 to replica node cart-cache-002 completed",
        ),
        (timedelta(seconds=40), "Failover to replica node cart-cache-002 completed"),
        (timedelta(minutes=6), "Recovering cache nodes 0001"),
        (timedelta(minutes=11), "Finished recovery for cache nodes 0001"),
    ]:
        s.log(
            failover + dt,
            "ops",
            ep,
            "aws-events-forwarder",
            "aws-events-forwarder",
            "info",
            f'ElastiCache event source=cart-cache source_type=replication-group message="{msg}"',
            **{"cloud.provider": "aws", "cloud.region": "eu-west-1"},
        )
    t = lt0
    while t < now:
        s.log(
            t,
            "ops",
            ep,
            "aws-events-forwarder",
            "aws-events-forwarder",
            "info",
            'RDS event source=reporting-replica source_type=db-instance message="Backtrack window '
            'check completed"',
        )
        t += timedelta(minutes=37)
    cp = [p["metadata"]["name"] for p in cpods]
    t = lt0

    def sku():
        return f"sku_{s.rng.randint(10000, 99999)}"

    podlines = {n: [] for n in cp}
    while t < now:
        pn = cp[s.rng.randint(0, 3)]
        cid = f"c_{k.sha(str(t))[:10]}"
        r = s.rng.random()
        if r < 0.55:
            msg, lvl, code = (
                (
                    f'{{"level":30,"msg":"request completed","req":{{"method":"GET","url":"/v1/car'
                    f'ts/{cid}"}},'
                    f'"res":{{"statusCode":200}},"responseTime":{s.rng.randint(2, 14)}}}'
                ),
                "info",
                200,
            )
        elif t < failover:
            msg, lvl, code = (
                (
                    f'{{"level":30,"msg":"request completed","req":{{"method":"POST","url":"/v1/ca'
                    f'rts/{cid}/items"}},'
                    f'"res":{{"statusCode":201}},"responseTime":{s.rng.randint(3, 20)}}}'
                ),
                "info",
                201,
            )
        else:
            path = s.rng.choice(
                [
                    f"/v1/carts/{cid}/items",
                    f"/v1/carts/{cid}/items/{sku()}",
                    f"/v1/carts/{cid}/reserve",
                ]
            )
            method = "DELETE" if path.count("/") == 5 and "reserve" not in path else "POST"
            err = (
                '{"level":50,"msg":"cart write failed","err":{"type":"ReplyError","message":"READO'
                "NLY You can't write "
                'against a read only replica.","stack":"ReplyError: READONLY You can\'t write '
                "against a read only replica.\\n"
                "    at parseError (/app/node_modules/redis-parser/lib/parser.js:179:12)\\n    at "
                "parseType "
                '(/app/node_modules/redis-parser/lib/parser.js:302:14)","command":{"name":"hset","args":["cart:v3:'
                + cid
                + '","[...]"]}},"redis":{"host":"'
                + REDIS
                + '","remoteAddress":"'
                + OLD_PRIMARY_IP
                + '"}}'
            )
            s.log(
                t,
                NS,
                pn,
                "cart-service",
                "cart-service",
                "error",
                err,
                **{
                    "error.type": "ReplyError",
                    "error.message": "READONLY You can't write against a read only replica.",
                },
            )
            podlines[pn].append(err)
            msg, lvl, code = (
                (
                    f'{{"level":30,"msg":"request completed","req":{{"method":"{method}","url":"'
                    f'{path}"}},'
                    f'"res":{{"statusCode":500}},"responseTime":{s.rng.randint(2, 9)}}}'
                ),
                "info",
                500,
            )
        s.log(
            t + timedelta(milliseconds=5),
            NS,
            pn,
            "cart-service",
            "cart-service",
            lvl,
            msg,
            **{"http.response.status_code": code},
        )
        podlines[pn].append(msg)
        if code == 500 and s.rng.random() < 0.5:
            xp = xpods[s.rng.randint(0, 2)]
            s.log(
                t + timedelta(milliseconds=12),
                "web",
                xp["metadata"]["name"],
                "checkout-api",
                "checkout-api",
                "error",
                f"cart reservation failed: upstream cart-service responded 500 (cart_id={cid})",
                **{"http.response.status_code": 502},
            )
        t += timedelta(seconds=s.rng.randint(6, 15))
    for p in cpods:
        pn = p["metadata"]["name"]
        st = k.parse(p["status"]["startTime"])
        head = [
            f'{{"level":30,"msg":"connected to redis","host":"{REDIS}","remoteAddress":"'
            f'{OLD_PRIMARY_IP}",'
            f'"role":"master","time":{int(st.timestamp() * 1000) + 900}}}',
            (
                f'{{"level":30,"msg":"cart-service 4.7.1 listening","port":8080,"time":'
                f"{int(st.timestamp() * 1000) + 1200}}}"
            ),
        ]
        s.podlog(NS, pn, "cart-service", head + podlines[pn][-220:])
    for p in wpods:
        t = lt0 + timedelta(minutes=s.rng.randint(0, 9))
        while t < now:
            s.log(
                t,
                "web",
                p["metadata"]["name"],
                "web-frontend",
                "web-frontend",
                "warn",
                'Warning: Each child in a list should have a unique "key" prop. Check the render '
                "method of `PromoStrip`.",
            )
            t += timedelta(minutes=s.rng.randint(9, 20))

    # ---- metrics
    m = s.metrics
    for p in cpods:
        pn = p["metadata"]["name"]
        for method, route, code, rate in [
            ("GET", "/v1/carts/:id", "200", 1.6),
            ("POST", "/v1/carts/:id/items", "201", 0.9),
            ("POST", "/v1/carts/:id/items", "500", 0.9),
        ]:

            def fn(t, code=code, rate=rate):
                after = t >= failover.timestamp()
                if code == "201":
                    return 0 if after else rate
                if code == "500":
                    return rate if after else 0.0
                return rate

            m.series(
                "http_requests",
                "counter",
                "Total number of HTTP requests",
                {
                    "namespace": NS,
                    "pod": pn,
                    "service": "cart-service",
                    "method": method,
                    "route": route,
                    "code": code,
                },
                k.counter_points(
                    grid,
                    fn,
                    start=0.0 if code == "500" else float(s.rng.randint(10**5, 10**6)),
                    jitter=lambda: s.rng.uniform(0.8, 1.2),
                ),
            )
        m.series(
            "cart_redis_command_errors",
            "counter",
            "Redis command errors by reply prefix",
            {"namespace": NS, "pod": pn, "error": "READONLY"},
            k.counter_points(
                grid,
                lambda t: 0.9 if t >= failover.timestamp() else 0.0,
                jitter=lambda: s.rng.uniform(0.8, 1.2),
            ),
        )
        m.series(
            "container_cpu_usage_seconds",
            "counter",
            "Cumulative cpu time consumed by the container in core-seconds",
            {"namespace": NS, "pod": pn, "container": "cart-service"},
            k.counter_points(
                grid,
                lambda t: 0.11,
                start=float(s.rng.randint(20000, 30000)),
                jitter=lambda: s.rng.uniform(0.8, 1.2),
            )[::2],
        )
        m.series(
            "container_memory_working_set_bytes",
            "gauge",
            "Current working set of the container in bytes",
            {"namespace": NS, "pod": pn, "container": "cart-service"},
            [(t, round(1.9e8 + s.rng.uniform(-5e6, 5e6))) for t in grid][::2],
        )
    yp = ypods[0]["metadata"]["name"]
    for node_id, before, after in [("cart-cache-001", 1, 0), ("cart-cache-002", 0, 1)]:
        m.series(
            "aws_elasticache_is_master_average",
            "gauge",
            "Help is not implemented yet.",
            {
                "namespace": "ops",
                "pod": yp,
                "name": f"arn:aws:elasticache:eu-west-1:418273645512:cluster:{node_id}",
                "dimension_CacheClusterId": node_id,
                "region": "eu-west-1",
            },
            [
                (t, before if t < failover.timestamp() + 60 else after)
                for t in grid
                if int(t) % 300 == 0
            ],
        )
    m.series(
        "aws_elasticache_replication_lag_average",
        "gauge",
        "Help is not implemented yet.",
        {
            "namespace": "ops",
            "pod": yp,
            "dimension_CacheClusterId": "cart-cache-001",
            "region": "eu-west-1",
        },
        [(t, 0.0) for t in grid if int(t) % 300 == 0 and t > failover.timestamp() + 700],
    )

    s.write(
        "Add-to-cart failing for customers",
        "customers can't add items to cart since ~10:50, checkout-api shows 500s from "
        "cart-service. viewing carts works. "
        "cart-service pods are all green. probably the redis connection pool again, or the egress "
        "netpol change "
        "from yesterday? nothing was deployed on cart.\n",
        {
            "category": "dependency_failure",
            "culprit": {"kind": "Deployment", "namespace": NS, "name": "cart-service"},
            "evidence": [
                "READONLY You can't write against a read only replica.",
                (
                    "Failover from primary node cart-cache-001 to replica node cart-cache-002 "
                    "completed"
                ),
            ],
            "fix": "The managed Redis (cart-cache) failed over at 10:47; cart-service's "
            "connections still point at the old "
            "primary, now a replica, so every write is refused with READONLY. Restart "
            "cart-service so it reconnects "
            "to the primary endpoint, and enable reconnect-on-READONLY in the client.",
        },
    )
