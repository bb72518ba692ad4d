"""Shape 2, bad_rollout: pricing-api 3.8.0 gzips every JSON response; a legacy client breaks."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

from ._kit import (
    Ctr,
    Gen,
    Line,
    Ref,
    Rev,
    Scenario,
    access_log,
    deployment,
    event,
    gone_pods,
    lines,
    namespace,
    service,
    standard_bystanders,
    worker_nodes,
)

SID = "invoice-batch-pricing-decode-errors"
REG = "123456789012.dkr.ecr.eu-west-1.amazonaws.com"


def build(root: Path) -> None:
    sc = Scenario(SID, "2026-07-14T09:35:00Z", seed=5402)
    old = sc.ago(days=410)
    nodes = worker_nodes(sc, [f"ip-10-8-{a}-{b}.eu-west-1.compute.internal"
                              for a, b in ((0, 31), (1, 118), (2, 77), (0, 164), (1, 9))])
    standard_bystanders(sc, nodes, ["pricing-api.pricing.svc.cluster.local",
                                    "postgres-billing.billing.svc.cluster.local",
                                    "quote-service.shop.svc.cluster.local"])
    for ns in ("pricing", "billing", "shop"):
        namespace(sc, ns, old)
    rollout = sc.ago(minutes=42)

    base_env = {"SPRING_PROFILES_ACTIVE": "prod", "JAVA_OPTS": "-XX:MaxRAMPercentage=70"}
    new_env = {**base_env, "SERVER_COMPRESSION_ENABLED": "true",
               "SERVER_COMPRESSION_MIME_TYPES": "application/json",
               "SERVER_COMPRESSION_MIN_RESPONSE_SIZE": "512"}
    pricing = deployment(sc, "pricing", "pricing-api", [
        Rev([Ctr("pricing-api", f"{REG}/pricing/pricing-api:3.7.4", env=base_env,
                 cpu_req="500m", mem_req="1Gi", mem_lim="1536Mi")], sc.ago(days=4, hours=6), 0,
            "deploy pricing-api 3.7.4 (PRICE-2250 fx rounding)"),
        Rev([Ctr("pricing-api", f"{REG}/pricing/pricing-api:3.8.0", env=new_env,
                 cpu_req="500m", mem_req="1Gi", mem_lim="1536Mi")], rollout, 4,
            "deploy pricing-api 3.8.0 (PRICE-2291 cut egress: compress JSON responses)"),
    ], nodes=nodes, created=old, first_rev=52)
    old_refs = gone_pods(sc, pricing, 0, 4, nodes)
    for i, r in enumerate(old_refs):
        sc.usage(r, 0.4, 900e6, until=rollout + timedelta(seconds=60 + 30 * i))
    event(sc, "pricing", "Deployment", "pricing-api", "ScalingReplicaSet",
          f"Scaled up replica set {pricing.sets[1]['metadata']['name']} to 1",
          first=rollout, last=rollout, component="deployment-controller")
    event(sc, "pricing", "Deployment", "pricing-api", "ScalingReplicaSet",
          f"Scaled down replica set {pricing.sets[0]['metadata']['name']} to 0 from 1",
          first=rollout + timedelta(minutes=3), last=rollout + timedelta(minutes=3),
          component="deployment-controller")

    clients = {"invoice-batch": "invoice-batch/1.4.2 python-httplib2/0.9.2",
               "checkout-web": "node-fetch/3.3.2", "quote-service": "Go-http-client/2.0"}

    def pricing_log(compress: bool) -> Gen:
        def gen(rng: random.Random, t: datetime) -> Line:
            client = rng.choices(list(clients), weights=[2, 5, 3])[0]
            size = rng.randint(600, 4200)
            enc = "gzip" if compress else "-"
            sent = size // 5 if compress else size
            sku = rng.randint(10000, 99999)
            msg = (f'{t:%d/%b/%Y:%H:%M:%S} +0000 "GET /v3/quotes?sku={sku}&currency=EUR '
                   f'HTTP/1.1" 200 {sent} "{clients[client]}" rt={rng.randint(6, 38)}ms '
                   f"ce={enc}")
            return "info", msg, {"http.response.status_code": 200,
                                 "user_agent.original": clients[client],
                                 "http.response.body.bytes": sent}
        return gen

    for i, r in enumerate(old_refs):
        sc.chatter(r, pricing_log(False), 1.6, end=rollout + timedelta(seconds=60 + 30 * i))
    for p in pricing.pods:
        start = datetime.fromisoformat(
            p.obj["status"]["containerStatuses"][0]["state"]["running"]["startedAt"]
            .replace("Z", "+00:00"))
        boot = [
            ("info", "Starting PricingApiApplication v3.8.0 using Java 17.0.11 with PID 1"),
            ("info", "The following 1 profile is active: \"prod\""),
            ("info", "Response compression: gzip enabled for [application/json] responses "
                     ">= 512 bytes (server.compression.enabled=true, default since 3.8.0)"),
            ("info", "Tomcat started on port 8080 (http) with context path '/'"),
            ("info", "Started PricingApiApplication in 11.84 seconds (process running for 12.6)"),
        ]
        for k, (lvl, msg) in enumerate(boot):
            sc.log(start + timedelta(seconds=1 + k * 3), p.ref, lvl, msg)
        sc.chatter(p.ref, pricing_log(True), 1.6, start=start + timedelta(seconds=15))
        sc.chatter(p.ref, lines([
            ("warn", "HikariPool-1 - Thread starvation or clock leap detected (housekeeper delta"
                     "=1m{n}ms)."),
            ("info", "fx rates refreshed from ecb: 31 currencies in {ms}ms")]), 0.12,
            start=start + timedelta(seconds=20))
        sc.usage(p, 0.42, 930e6, since=start)
    for i, r in enumerate(old_refs + [p.ref for p in pricing.pods]):
        is_old = i < len(old_refs)
        until = rollout + timedelta(seconds=60 + 30 * i) if is_old else None
        since = None if is_old else rollout + timedelta(seconds=40)
        for code, rate in (("200", 9.0), ("500", 0.01)):
            sc.counter("http_requests_total", "Total HTTP requests.",
                       {"namespace": "pricing", "service": "pricing-api", "pod": r.pod,
                        "code": code}, lambda t, v=rate: v * random.Random(int(t.timestamp()))
                       .uniform(0.8, 1.2), start=sc.rng.uniform(1e4, 1e5) if is_old else 0.0,
                       since=since, until=until)
    service(sc, "pricing", "pricing-api", selector={"app": "pricing-api"},
            ports=[("http", 80, 8080)], created=old)

    _invoice_batch(sc, nodes, old, rollout)
    _shop(sc, nodes, old)
    sc.write(root, title="invoice-batch cannot decode pricing responses",
             report="invoice-batch has been failing basically every pricing call for ~40 min "
                    "with decode errors, invoices for the July run are piling up. billing team, "
                    "did you ship something to invoice-batch? pricing-api dashboards are all "
                    "green, zero 5xx there.\n",
             truth={"category": "bad_rollout",
                    "culprit": {"kind": "Deployment", "namespace": "pricing",
                                "name": "pricing-api"},
                    "evidence": ["invalid gzip header", "SERVER_COMPRESSION_ENABLED",
                                 "pricing-api:3.8.0"],
                    "fix": "Roll pricing-api back to 3.7.4 (or set "
                           "SERVER_COMPRESSION_ENABLED=false) so responses are no longer "
                           "gzipped by default; re-enable compression only once it is "
                           "negotiated per client and invoice-batch's HTTP client is upgraded."})


def _invoice_batch(sc: Scenario, nodes: list[str], old: datetime, rollout: datetime) -> None:
    last = {"terminated": {"exitCode": 137, "reason": "Error",
                           "startedAt": "2026-07-11T02:00:04Z",
                           "finishedAt": "2026-07-12T03:14:51Z"}}
    inv = deployment(sc, "billing", "invoice-batch", [
        Rev([Ctr("invoice-batch", f"{REG}/billing/invoice-batch:1.4.2", port=9102,
                 env={"PRICING_URL": "http://pricing-api.pricing.svc/v3",
                      "PRICING_TIMEOUT": "5"}, mem_lim="768Mi")],
            sc.ago(days=5, hours=1), 2, "deploy invoice-batch 1.4.2 (config: new pricing "
                                        "timeout key)")],
        nodes=nodes, created=old, first_rev=12,
        pod_hook=lambda r, i: {"restarts": 1, "last_state": last} if i == 1 else {})
    broke = rollout + timedelta(seconds=75)

    def gen(rng: random.Random, t: datetime) -> Line:
        inv_id = f"INV-2026-07-{rng.randint(100000, 999999)}"
        if t < broke:
            return ("info", f"priced {inv_id}: {rng.randint(1, 40)} lines, total "
                            f"{rng.randint(20, 9000)}.{rng.randint(10, 99)} EUR", {})
        if rng.random() < 0.06:
            return ("info", f"priced {inv_id}: 1 lines, total {rng.randint(5, 90)}.00 EUR "
                            "(small response, uncompressed)", {})
        return ("error", f"pricing quote decode failed for {inv_id}: invalid gzip header "
                         f"(Content-Encoding: gzip, {rng.randint(120, 840)} bytes); retry "
                         f"{rng.randint(1, 3)}/3 in 5s",
                {"error.type": "zlib.error", "error.message": "invalid gzip header"})

    for p in inv.pods:
        sc.chatter(p.ref, gen, 2.4)
        sc.chatter(p.ref, lines([
            ("warn", "config key 'pricing.timeout' is deprecated, use PRICING_TIMEOUT"),
            ("info", "heartbeat: queue depth invoices.pending={n}")]), 0.3)
        sc.usage(p, 0.1, 400e6, restarts=1 if p is inv.pods[1] else 0)
        for outcome in ("success", "decode_error"):
            def rate(t: datetime, o: str = outcome) -> float:
                bad = t >= broke
                if o == "success":
                    return 0.2 if bad else 2.4
                return 2.3 if bad else 0.0
            sc.counter("pricing_client_requests_total",
                       "Pricing API calls by outcome (invoice-batch client).",
                       {"namespace": "billing", "service": "invoice-batch", "pod": p.ref.pod,
                        "outcome": outcome}, rate, start=sc.rng.uniform(5e4, 2e5))
    # a failed batch summary every ten minutes
    for k in range(4):
        t = broke + timedelta(minutes=2 + 10 * k)
        sc.log(t, inv.pods[0].ref, "error",
               f"invoice run 2026-07 batch {31 + k} failed: {290 + 7 * k}/{300 + 7 * k} quotes "
               "undecodable, batch re-queued")
    service(sc, "billing", "invoice-batch", selector={"app": "invoice-batch"},
            ports=[("metrics", 9102, 9102)], created=old)


def _shop(sc: Scenario, nodes: list[str], old: datetime) -> None:
    qs = deployment(sc, "shop", "quote-service", [
        Rev([Ctr("quote-service", f"{REG}/shop/quote-service:2.0.8")], sc.ago(days=3), 0),
        Rev([Ctr("quote-service", f"{REG}/shop/quote-service:2.1.0")], sc.ago(minutes=95), 3,
            "deploy quote-service 2.1.0 (bundle discounts)"),
    ], nodes=nodes, created=old, first_rev=40)
    web = deployment(sc, "shop", "checkout-web", [
        Rev([Ctr("checkout-web", f"{REG}/shop/checkout-web:5.22.1", port=3000)],
            sc.ago(days=2, hours=7), 3)], nodes=nodes, created=old, first_rev=210)
    for p in qs.pods:
        sc.chatter(p.ref, lines([
            ("info", "quote q_{id} built: 3 items, pricing-api 200 in {ms}ms"),
            ("info", "bundle discount applied to q_{id}"),
            ("warn", "pricing-api slow: {ms}0ms for sku batch of 40")]), 1.0)
        sc.usage(p, 0.12, 90e6)
    for p in web.pods:
        sc.chatter(p.ref, access_log(["/checkout", "/checkout/review", "/api/cart/price"],
                                     ms=(30, 180)), 1.2)
        sc.usage(p, 0.2, 260e6)
    refs: list[Ref] = [p.ref for p in qs.pods + web.pods]
    for r in refs:
        sc.counter("http_client_requests_total", "Outgoing HTTP calls.",
                   {"namespace": "shop", "service": r.service, "pod": r.pod,
                    "target": "pricing-api", "outcome": "success"}, lambda t: 4.0,
                   start=sc.rng.uniform(1e4, 1e5))
    event(sc, "shop", "Deployment", "quote-service", "ScalingReplicaSet",
          f"Scaled down replica set {qs.sets[0]['metadata']['name']} to 0 from 1",
          first=sc.ago(minutes=58), last=sc.ago(minutes=58), component="deployment-controller")
    for name, port in (("quote-service", 8080), ("checkout-web", 3000)):
        service(sc, "shop", name, selector={"app": name}, ports=[("http", 80, port)],
                created=old)
