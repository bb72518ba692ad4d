"""Shape 6: a rollout of service A changes its response format; caller B fails.

inventory 3.4.0 (rolled out 14:02-14:05) turns on stock reservations: the `available`
field of GET /v2/stock becomes an object ({"quantity", "reserved"}) instead of an
integer. inventory itself answers 200 as fast as before. cart decodes the old shape and
fails every add-to-cart with a JSON unmarshal error (500). cart has not changed in a
week. Category and culprit by the format's rules: the deepest cause the data shows is
inventory's new revision, which runs and serves but makes requests fail (bad_rollout);
the object to fix (roll back or make the change backward compatible) is inventory.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

from . import kube
from .emit import Scenario, steps
from .fleet import (
    App,
    app,
    basic_signals,
    chatter,
    cpu_series,
    http_series,
    make_nodes,
    memory_series,
    platform,
    simple,
)

ID = "cart-500s-no-deploy"
NOW = datetime.fromisoformat("2026-11-25T14:40:00+00:00")
ROLLOUT = datetime.fromisoformat("2026-11-25T14:02:31+00:00")
NS = "shop"
OLD = "ghcr.io/acme-shop/inventory:3.3.2"
NEW = "ghcr.io/acme-shop/inventory:3.4.0"


def new_share(at: datetime) -> float:
    """Share of inventory pods on 3.4.0: one more every ~45 s from 14:02:50."""
    if at < ROLLOUT + timedelta(seconds=19):
        return 0.0
    return min(1.0, (1 + int((at - ROLLOUT - timedelta(seconds=19)).total_seconds() // 45)) / 4)


def build() -> Scenario:
    rng = random.Random(31_06)
    sc = Scenario(
        id=ID, title="Cart 500s since 14:00, no cart deploy", now=NOW,
        report=(
            "cart is throwing 500s since ~14:00, customers can't add items to the basket. "
            "cart hasn't been deployed in a week (nothing in #deploys for it). is it the "
            "redis again? please look asap, conversion is tanking\n"),
        truth={"category": "bad_rollout",
               "culprit": {"kind": "Deployment", "namespace": NS, "name": "inventory"},
               "evidence": ["json: cannot unmarshal object into Go struct field "
                            "StockResponse.available of type int", "inventory:3.4.0",
                            "FEATURE_STOCK_RESERVATIONS"],
               "fix": "Roll inventory back to 3.3.2 (or turn FEATURE_STOCK_RESERVATIONS off "
                      "/ version the stock response) until cart understands the new shape."})
    created = NOW - timedelta(days=700)
    sc.add(kube.namespace(NS, created, {"team": "shop"}))
    nodes = make_nodes(sc, [f"shop-prod-np1-{s}" for s in ("a1k3", "c9d2", "f4q8", "m2x7", "t6p1")],
                       created=NOW - timedelta(days=22), cpu="8", memory="32Gi",
                       labels={"doks.digitalocean.com/node-pool": "shop-prod-np1",
                               "node.kubernetes.io/instance-type": "s-8vcpu-32gb"})
    since = NOW - timedelta(days=6, hours=5)
    platform(sc, rng, nodes, created, since=since)

    def inventory_containers(image: str) -> list[dict]:
        env = {"DB_HOST": "inventory-pg.shop.svc", "CACHE_TTL": "15s"}
        if image == NEW:
            env["FEATURE_STOCK_RESERVATIONS"] = "true"
        return [kube.container("inventory", image, requests={"cpu": "250m", "memory": "384Mi"},
                               limits={"memory": "768Mi"}, port=8080, env=env,
                               readiness="/readyz", liveness="/livez")]

    inventory = app(sc, rng, "inventory", NS, replicas=4, nodes=nodes, created=created,
                    images=[("ghcr.io/acme-shop/inventory:3.3.0", NOW - timedelta(days=21)),
                            (OLD, NOW - timedelta(days=9, hours=3)), (NEW, ROLLOUT)],
                    containers=inventory_containers)
    for index, pod_obj in enumerate(inventory.pods):
        _started(pod_obj, ROLLOUT + timedelta(seconds=4 + 45 * index))
    cart = app(sc, rng, "cart", NS, replicas=4, nodes=nodes, created=created,
               images=[("ghcr.io/acme-shop/cart:2.19.0", NOW - timedelta(days=30)),
                       ("ghcr.io/acme-shop/cart:2.19.1", NOW - timedelta(days=7, hours=2))],
               pod_started=since,
               containers=simple("cart", cpu="200m", memory="256Mi", limit_memory="512Mi",
                                 probe="/healthz",
                                 env={"INVENTORY_URL": "http://inventory.shop.svc/v2",
                                      "REDIS_ADDR": "cart-redis.shop.svc:6379"}))
    page = app(sc, rng, "product-page", NS, replicas=3, nodes=nodes, created=created,
               images=[("ghcr.io/acme-shop/product-page:8.2.4", NOW - timedelta(days=2, hours=6))],
               containers=simple("product-page", port=3000, cpu="200m", memory="384Mi",
                                 limit_memory="768Mi", probe="/health",
                                 env={"INVENTORY_URL": "http://inventory.shop.svc/v2"}))
    redis = app(sc, rng, "cart-redis", NS, replicas=1, nodes=nodes, created=created, port=6379,
                images=[("docker.io/library/redis:7.2.5", NOW - timedelta(days=60))],
                pod_started=since,
                containers=simple("redis", port=6379, cpu="100m", memory="256Mi",
                                  limit_memory="512Mi", probe=None))
    sync = app(sc, rng, "warehouse-sync", NS, replicas=1, nodes=nodes, created=created,
               images=[("ghcr.io/acme-shop/warehouse-sync:1.5.2", NOW - timedelta(days=15))],
               pod_started=since, port=None, service=False,
               containers=simple("warehouse-sync", port=None, probe=None))
    old_hash = inventory.replicasets[-2]["metadata"]["labels"]["pod-template-hash"]
    old_pods = [f"inventory-{old_hash}-{kube.suffix(rng)}" for _ in range(4)]
    _events(sc, inventory)
    _signals(sc, inventory, cart, page, old_pods)
    _logs(sc, rng, inventory, cart, page, redis, sync, old_pods)
    return sc


def _started(pod_obj: dict, at: datetime) -> None:
    pod_obj["metadata"]["creationTimestamp"] = kube.ts(at)
    pod_obj["status"]["startTime"] = kube.ts(at + timedelta(seconds=1))
    for condition in pod_obj["status"]["conditions"]:
        condition["lastTransitionTime"] = kube.ts(at + timedelta(seconds=15))
    for status in pod_obj["status"]["containerStatuses"]:
        status["state"]["running"]["startedAt"] = kube.ts(at + timedelta(seconds=2))


def _events(sc: Scenario, inventory: App) -> None:
    new_rs = inventory.replicasets[-1]["metadata"]["name"]
    old_rs = inventory.replicasets[-2]["metadata"]["name"]
    for step in range(4):
        at = ROLLOUT + timedelta(seconds=45 * step)
        sc.add(kube.event(NS, kind="Deployment", name="inventory", reason="ScalingReplicaSet",
                          component="deployment-controller", api="apps/v1",
                          message=f"Scaled up replica set {new_rs} to {step + 1} from {step}",
                          first=at, last=at),
               kube.event(NS, kind="Deployment", name="inventory", reason="ScalingReplicaSet",
                          component="deployment-controller", api="apps/v1",
                          message=f"Scaled down replica set {old_rs} to {3 - step} from {4 - step}",
                          first=at + timedelta(seconds=19), last=at + timedelta(seconds=19)))
    pod_obj = inventory.pods[2]
    ip = pod_obj["status"]["podIP"]
    sc.add(kube.event(NS, kind="Pod", name=pod_obj["metadata"]["name"], reason="Unhealthy",
                      type="Warning", host=pod_obj["spec"]["nodeName"],
                      field_path="spec.containers{inventory}",
                      message=f'Readiness probe failed: Get "http://{ip}:8080/readyz": dial tcp '
                              f"{ip}:8080: connect: connection refused",
                      first=ROLLOUT + timedelta(seconds=96), last=ROLLOUT + timedelta(seconds=96)))


def _signals(sc: Scenario, inventory: App, cart: App, page: App, old_pods: list[str]) -> None:
    start = NOW - timedelta(hours=3)
    times = steps(start, NOW, timedelta(minutes=2))
    inv_times = [t for t in times if t >= ROLLOUT]
    for pod_obj in inventory.pods:
        name = pod_obj["metadata"]["name"]
        http_series(sc, NS, name, "inventory", inv_times, lambda _at: 30.0, lambda _at: 0.0003,
                    lambda _at: 0.011)
        cpu_series(sc, NS, name, "inventory", inv_times, lambda _at: 0.11)
        memory_series(sc, NS, name, "inventory", inv_times, lambda _at: 231 * 2**20,
                      limit=768 * 2**20)
    for index, name in enumerate(old_pods):
        gone = ROLLOUT + timedelta(seconds=19 + 45 * index)
        old_times = [t for t in times if t <= gone]
        http_series(sc, NS, name, "inventory", old_times, lambda _at: 30.0, lambda _at: 0.0003,
                    lambda _at: 0.012)
        cpu_series(sc, NS, name, "inventory", old_times, lambda _at: 0.1)
        memory_series(sc, NS, name, "inventory", old_times, lambda _at: 240 * 2**20,
                      limit=768 * 2**20)
    for pod_obj in cart.pods:
        name = pod_obj["metadata"]["name"]
        http_series(sc, NS, name, "cart", times, lambda _at: 16.0,
                    lambda at: 0.001 + 0.62 * new_share(at),
                    lambda at: 0.03 - 0.012 * new_share(at))
        cpu_series(sc, NS, name, "cart", times, lambda _at: 0.06)
        memory_series(sc, NS, name, "cart", times, lambda _at: 118 * 2**20, limit=512 * 2**20)
    basic_signals(sc, page, start, NOW, rps=25.0, cores=0.15, mem_mib=290, median=0.06)


def _logs(sc: Scenario, rng: random.Random, inventory: App, cart: App, page: App, redis: App,
          sync: App, old_pods: list[str]) -> None:
    start = NOW - timedelta(hours=4)
    for index, pod_name in enumerate(old_pods):
        at = start + timedelta(seconds=rng.randint(0, 30))
        gone = ROLLOUT + timedelta(seconds=19 + 45 * index)
        while at < gone:
            caller = rng.choice(["cart", "cart", "product-page", "product-page", "warehouse-sync"])
            sc.doc(at, service="inventory", ns=NS, pod=pod_name, container="inventory",
                   level="info", message=f"GET /v2/stock?sku={rng.randint(10000, 99999)} 200 "
                   f"{rng.randint(3, 19)}ms caller={caller}")
            at += timedelta(seconds=rng.randint(15, 45))
        sc.doc(gone, service="inventory", ns=NS, pod=pod_name, container="inventory",
               level="info", message="received SIGTERM, draining connections (grace 30s)")
    for index, pod_obj in enumerate(inventory.pods):
        pod_name = pod_obj["metadata"]["name"]
        boot = ROLLOUT + timedelta(seconds=6 + 45 * index)
        for offset, line in enumerate(("inventory 3.4.0 (commit 9f1c2ab) listening on :8080",
                                       "features: stock_reservations=on bulk_lookup=on",
                                       "connected to inventory-pg.shop.svc:5432 pool=20")):
            sc.both(boot + timedelta(seconds=offset), service="inventory", ns=NS, pod=pod_name,
                    container="inventory", level="info", message=line)
        at = boot + timedelta(seconds=20)
        while at < NOW:
            caller = rng.choice(["cart", "cart", "product-page", "product-page", "warehouse-sync"])
            sc.both(at, service="inventory", ns=NS, pod=pod_name, container="inventory",
                    level="info", message=f"GET /v2/stock?sku={rng.randint(10000, 99999)} 200 "
                    f"{rng.randint(3, 19)}ms caller={caller}")
            at += timedelta(seconds=rng.randint(15, 45))
    for pod_obj in cart.pods:
        pod_name = pod_obj["metadata"]["name"]
        at = start + timedelta(seconds=rng.randint(0, 30))
        while at < NOW:
            sku = rng.randint(10000, 99999)
            if rng.random() < 0.35:
                sc.both(at, service="cart", ns=NS, pod=pod_name, container="cart", level="info",
                        message=f"GET /cart 200 items={rng.randint(0, 9)} {rng.randint(4, 30)}ms")
            elif rng.random() < new_share(at):
                trace = f"{rng.getrandbits(64):016x}"
                sc.both(at, service="cart", ns=NS, pod=pod_name, container="cart", level="error",
                        message=f"POST /cart/items 500 sku={sku}: stock lookup: decode "
                        "inventory response: json: cannot unmarshal object into Go struct "
                        "field StockResponse.available of type int",
                        http__response__status_code=500, trace__id=trace)
            else:
                sc.both(at, service="cart", ns=NS, pod=pod_name, container="cart", level="info",
                        message=f"POST /cart/items 200 sku={sku} qty={rng.randint(1, 3)} "
                        f"{rng.randint(12, 60)}ms")
            at += timedelta(seconds=rng.randint(20, 60))
    chatter(sc, page, start, NOW, timedelta(minutes=2), [
        ("info", "GET /p/{n} 200 {ms}ms"),
        ("info", "GET /p/{n} 200 {ms}ms stock=in_stock"),
        ("warn", "image CDN slow for /p/{n}: {ms}0ms"),
    ], rng, container="product-page")
    chatter(sc, redis, start, NOW, timedelta(minutes=20), [
        ("info", "1:M 25 Nov 2026 DB saved on disk"),
        ("info", "1:M 25 Nov 2026 100 changes in 300 seconds. Saving..."),
        ("warn", "1:M 25 Nov 2026 WARNING Memory overcommit must be enabled! Without it, a "
                 "background save or replication may fail under low memory condition."),
    ], rng, container="redis")
    chatter(sc, sync, start, NOW, timedelta(minutes=8), [
        ("info", "pushed {n} stock deltas to inventory (PUT /v2/stock/bulk 204)"),
        ("info", "warehouse feed WH-2 cursor advanced to {id}"),
    ], rng)
