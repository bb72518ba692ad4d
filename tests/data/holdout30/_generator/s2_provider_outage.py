"""Shape 2: an external payment provider times out and answers 503; payment-gateway retries
each charge up to five times, so its CPU, latency and pod count rise. The caller looks
sick; the cause is outside the cluster. A harmless checkout rollout eleven minutes
earlier is the obvious suspect."""

from __future__ import annotations

from datetime import datetime, timedelta

from .k8s import (
    GiB,
    MiB,
    PodState,
    Revision,
    backends,
    container,
    cpu_hpa_current,
    cpu_hpa_metric,
    deployment,
    hpa,
    http_probe,
    ingress,
    namespace,
    node,
    service,
)
from .kit import World, iso_ms, parse
from .signals import Http, access_logs, bystander, daily, ramp, revision_metrics, timeline


def build() -> World:
    now = parse("2026-11-27T19:40:00Z")
    outage = now - timedelta(minutes=47)
    checkout_deploy = now - timedelta(minutes=58)
    w = World(
        "checkout-payments-failing",
        "Checkout payments failing on Black Friday evening",
        now,
        "checkout is crawling and a lot of customers get 'payment failed, try again'. "
        "payment-gateway pods are pegged on CPU and the HPA keeps adding pods. checkout "
        "shipped 2.31.0 at 18:42, could that be it? roll back?",
        {"category": "dependency_failure",
         "culprit": {"kind": "Deployment", "namespace": "payments", "name": "payment-gateway"},
         "evidence": ["HTTP 503 Service Unavailable", "api.paynova.example",
                      "failed after 5 attempts", "context deadline exceeded"],
         "fix": "The external provider Paynova is failing (503s and timeouts since 18:53): "
                "fail over to the secondary acquirer or open the circuit, and cap "
                "payment-gateway's retries (5 attempts with 200ms back-off multiply the load); "
                "rolling back checkout would not help."},
        seed=3002,
    )
    long_ago = parse("2024-10-02T11:00:00Z")
    for ns in ("payments", "shop", "ingress-nginx"):
        namespace(w, ns, long_ago)
    nodes = [f"ip-10-30-{n}.eu-central-1.compute.internal" for n in
             ("11-40", "12-9", "27-166", "38-201", "44-12")]
    for i, name in enumerate(nodes):
        node(w, name, now - timedelta(days=4, hours=i), zone=f"eu-central-1{'abcab'[i]}",
             memory="32Gi", allocatable_memory="31100Mi", cpu="8")
    failing = ramp(outage, 3)

    # payment-gateway: four pods from two days ago, three added by the HPA since the outage.
    gw_image = "ghcr.io/acme-retail/payment-gateway:5.12.3"
    env = [{"name": "PAYNOVA_BASE_URL", "value": "https://api.paynova.example/v3"},
           {"name": "PAYNOVA_TIMEOUT", "value": "8s"},
           {"name": "PAYNOVA_MAX_ATTEMPTS", "value": "5"},
           {"name": "PAYNOVA_RETRY_BACKOFF", "value": "200ms"}]
    started = now - timedelta(days=2, hours=5)
    pods = [PodState(node=nodes[i], created=started + timedelta(seconds=35 * i))
            for i in range(4)]
    for k, minutes in enumerate((38, 38, 24)):
        pods.append(PodState(node=nodes[(k + 2) % 5], created=now - timedelta(minutes=minutes)
                             + timedelta(seconds=7 * k)))
    gw = Revision(41, started, [container(
        "payment-gateway", gw_image, cpu="500m", cpu_limit="1", memory="1Gi", env=env,
        liveness=http_probe("/livez", 8080, delay=15),
        readiness=http_probe("/readyz", 8080, delay=5))], pods=pods)
    deployment(w, "payments", "payment-gateway", long_ago, [gw], replicas=7, team="payments")
    service(w, "payments", "payment-gateway", long_ago, target=8080,
            backends=backends(w, "payments", [gw]))
    w.add({"apiVersion": "v1", "kind": "Service",
           "metadata": {"name": "paynova-api", "namespace": "payments",
                        "creationTimestamp": "2024-10-02T11:00:00Z"},
           "spec": {"type": "ExternalName", "externalName": "api.paynova.example"},
           "status": {"loadBalancer": {}}})
    hpa(w, "payments", "payment-gateway", long_ago, target="payment-gateway", minimum=4,
        maximum=12, current=7, desired=7, metrics=[cpu_hpa_metric(70)],
        current_metrics=[cpu_hpa_current(96, 481)], last_scale=now - timedelta(minutes=24),
        conditions=[("AbleToScale", "True", "ReadyForNewScale",
                     "recommended size matches current size"),
                    ("ScalingActive", "True", "ValidMetricFound",
                     "the HPA was able to successfully calculate a replica count from cpu "
                     "resource utilization (percentage of request)"),
                    ("ScalingLimited", "False", "DesiredWithinRange",
                     "the desired count is within the acceptable range")])
    for first, size in ((now - timedelta(minutes=38), 6), (now - timedelta(minutes=24), 7)):
        w.event("payments", "HorizontalPodAutoscaler", "payment-gateway", "SuccessfulRescale",
                f"New size: {size}; reason: cpu resource utilization (percentage of request) "
                "above target", first=first, component="horizontal-pod-autoscaler")
    for name, state in zip(gw.pod_names[4:], gw.pods[4:], strict=True):
        w.event("payments", "Pod", name, "Scheduled",
                f"Successfully assigned payments/{name} to {state.node}", first=state.created,
                component="default-scheduler")
        w.event("payments", "Pod", name, "Started", "Started container payment-gateway",
                first=state.created + timedelta(seconds=9), host=state.node,
                field_path="spec.containers{payment-gateway}")

    def gw_rate(t: datetime) -> float:
        live = 4 if t < outage + timedelta(minutes=9) else (6 if t < now - timedelta(minutes=24)
                                                            else 7)
        return 95 * daily(t) / live
    revision_metrics(
        w, "payments", "payment-gateway", [gw],
        memory=lambda t: (390 + 170 * failing(t)) * MiB,
        cpu=lambda t: 0.31 + 0.52 * failing(t), memory_limit=1 * GiB, cpu_limit=1.0,
        throttle=lambda t: 0.01 + 0.13 * failing(t),
        http=Http(rate=gw_rate, errors=lambda t: 0.002 + 0.21 * failing(t),
                  latency=lambda t: 0.32 + 3.9 * failing(t), handler="/v1/charges",
                  error_code="502"))
    for pod_name, state in zip(gw.pod_names, gw.pods, strict=True):
        labels = {"namespace": "payments", "pod": pod_name, "client_name": "paynova",
                  "uri": "/v3/charges", "method": "POST"}
        times = w.steps(start=max(state.created, now - timedelta(hours=3)), step=60)
        w.counter("http_client_requests_total", {**labels, "status": "200"}, times,
                  lambda t: gw_rate(t) * (1 - 0.6 * failing(t)))
        w.counter("http_client_requests_total", {**labels, "status": "503"}, times,
                  lambda t: gw_rate(t) * 2.1 * failing(t))
        w.counter("http_client_requests_total", {**labels, "status": "CLIENT_ERROR"},
                  times, lambda t: gw_rate(t) * (0.0005 + 0.9 * failing(t)))

    # payment-gateway's logs: the retries.
    for moment in timeline(w, now - timedelta(hours=3), 13):
        pod = w.rng.choice([n for n, s in zip(gw.pod_names, gw.pods, strict=True)
                            if s.created < moment])
        charge = f"ch_{w.rng.getrandbits(48):012x}"
        if moment < outage or w.rng.random() < 0.35:
            attempt = 1 if moment < outage else w.rng.choice((2, 3, 4))
            took = w.rng.randint(180, 520) if attempt == 1 else w.rng.randint(900, 9000)
            w.log(moment, "payments", pod, "payment-gateway", "payment-gateway", "info",
                  f"charge {charge} authorised by paynova in {took}ms (attempt {attempt}/5)",
                  trace__id=f"{w.rng.getrandbits(64):016x}")
            continue
        offset = 0.0
        for attempt in range(1, 6):
            if w.rng.random() < 0.55:
                w.log(moment + timedelta(seconds=offset), "payments", pod, "payment-gateway",
                      "payment-gateway", "warn",
                      f"paynova POST /v3/charges attempt {attempt}/5 failed: HTTP 503 Service "
                      f"Unavailable (upstream api.paynova.example), retrying in "
                      f"{200 * attempt}ms", error__type="UpstreamUnavailable")
                offset += 0.3 + 0.2 * attempt
            else:
                w.log(moment + timedelta(seconds=offset + 8), "payments", pod, "payment-gateway",
                      "payment-gateway", "warn",
                      f"paynova POST /v3/charges attempt {attempt}/5 failed: context deadline "
                      f"exceeded (Client.Timeout 8s) dialing api.paynova.example:443, "
                      f"retrying in {200 * attempt}ms", error__type="Timeout")
                offset += 8.2 + 0.2 * attempt
        w.log(moment + timedelta(seconds=offset), "payments", pod, "payment-gateway",
              "payment-gateway", "error",
              f"charge {charge} failed after 5 attempts: paynova unavailable; answering 502 "
              "PAYMENT_PROVIDER_UNAVAILABLE", error__type="ProviderUnavailable",
              http__response__status_code=502)
    for moment in timeline(w, now - timedelta(hours=3), 600):
        pod = w.rng.choice(gw.pod_names[:4])
        w.log(moment, "payments", pod, "payment-gateway", "payment-gateway", "info",
              f"token refresh for merchant account acme-eu ok, expires in {w.rng.randint(40, 59)}m")
    for pod_name, state in zip(gw.pod_names, gw.pods, strict=True):
        w.pod_log("payments", pod_name, "payment-gateway", [
            f"{iso_ms(m)} {'WARN ' if m > outage else 'INFO '} " + (
                f"paynova POST /v3/charges attempt {w.rng.randint(1, 5)}/5 failed: HTTP 503 "
                "Service Unavailable (upstream api.paynova.example), retrying"
                if m > outage else "charge authorised by paynova in "
                f"{w.rng.randint(180, 520)}ms (attempt 1/5)")
            for m in timeline(w, max(state.created, now - timedelta(minutes=70)), 45)])

    # checkout: the caller of payment-gateway, redeployed just before the outage.
    ck_old = Revision(88, now - timedelta(days=3), [container(
        "checkout", "ghcr.io/acme-retail/checkout:2.30.4", cpu="300m", memory="768Mi",
        liveness=http_probe("/healthz", 8080, delay=20),
        readiness=http_probe("/ready", 8080))], pods=[], replicas=0)
    ck_new = Revision(89, checkout_deploy, [container(
        "checkout", "ghcr.io/acme-retail/checkout:2.31.0", cpu="300m", memory="768Mi",
        liveness=http_probe("/healthz", 8080, delay=20),
        readiness=http_probe("/ready", 8080))], pods=[
        PodState(node=nodes[i % 5], created=checkout_deploy + timedelta(seconds=30 * i))
        for i in range(5)])
    deployment(w, "shop", "checkout", long_ago, [ck_old, ck_new], replicas=5, team="shop")
    service(w, "shop", "checkout", long_ago, target=8080, backends=backends(w, "shop", [ck_new]))
    revision_metrics(w, "shop", "checkout", [ck_new], memory=lambda t: 410 * MiB,
                     cpu=lambda t: 0.18 + 0.03 * failing(t), memory_limit=768 * MiB,
                     http=Http(rate=lambda t: 26 * daily(t),
                               errors=lambda t: 0.003 + 0.17 * failing(t),
                               latency=lambda t: 0.35 + 3.5 * failing(t),
                               handler="/api/checkout/pay"))
    for moment in timeline(w, checkout_deploy, 25):
        pod = w.rng.choice(ck_new.pod_names)
        if moment > outage and w.rng.random() < 0.6:
            took = w.rng.uniform(8.5, 29.0)
            w.log(moment, "shop", pod, "checkout", "checkout", "error",
                  f"POST payment-gateway.payments.svc:80/v1/charges -> 502 Bad Gateway after "
                  f"{took:.1f}s: PAYMENT_PROVIDER_UNAVAILABLE", http__response__status_code=502)
        else:
            w.log(moment, "shop", pod, "checkout", "checkout", "info",
                  f"order {w.rng.randint(10**7, 10**8)} placed, payment authorised")
    for pod_name, state in zip(ck_new.pod_names, ck_new.pods, strict=True):
        w.log(state.created + timedelta(seconds=8), "shop", pod_name, "checkout", "checkout",
              "info", "checkout 2.31.0 ready: gift-card banner experiment enabled (5%)")
        w.event("shop", "Pod", pod_name, "Started", "Started container checkout",
                first=state.created + timedelta(seconds=6), host=state.node,
                field_path="spec.containers{checkout}")
    w.event("shop", "Deployment", "checkout", "ScalingReplicaSet",
            f"Scaled up replica set checkout-{ck_new.hash} to 5 from 3",
            first=checkout_deploy + timedelta(seconds=40), component="deployment-controller")
    w.event("shop", "Deployment", "checkout", "ScalingReplicaSet",
            f"Scaled down replica set checkout-{ck_old.hash} to 0 from 2",
            first=checkout_deploy + timedelta(seconds=150), component="deployment-controller")

    # Bystanders, the ingress, one unrelated warning.
    bystander(w, "payments", "fraud-scorer", replicas=3, nodes=nodes[2:],
              image="ghcr.io/acme-retail/fraud-scorer:1.44.0", created=long_ago,
              rev_created=now - timedelta(days=4, hours=3), memory_mib=1400,
              memory_limit="2Gi", cpu_cores=0.4, rps=30, median_s=0.012, team="payments",
              messages=[("scored transaction risk=0.0{n} model=gbm-2026-11", "debug")])
    ledger = bystander(w, "payments", "ledger-writer", replicas=2, nodes=nodes[:2],
                       image="ghcr.io/acme-retail/ledger-writer:3.2.1", created=long_ago,
                       rev_created=now - timedelta(days=6), memory_mib=250,
                       memory_limit="512Mi", cpu_cores=0.05, rps=6, median_s=0.02,
                       team="payments",
                       messages=[("appended {n} entries to ledger batch", "info")])
    w.event("payments", "Pod", ledger.pod_names[0], "Unhealthy",
            "Readiness probe failed: HTTP probe failed with statuscode: 500",
            first=now - timedelta(minutes=56), last=now - timedelta(minutes=55), count=2,
            type_="Warning", host=ledger.pods[0].node, field_path="spec.containers{ledger-writer}")
    bystander(w, "shop", "catalog", replicas=3, nodes=nodes, image=
              "ghcr.io/acme-retail/catalog:7.3.0", created=long_ago,
              rev_created=now - timedelta(days=1, hours=22), memory_mib=700, memory_limit="1Gi",
              cpu_cores=0.3, rps=140, median_s=0.02, team="shop")
    ingress(w, "shop", "storefront", long_ago, "shop.acme-retail.example",
            [("/api/checkout", "checkout", 80), ("/api/catalog", "catalog", 80)])
    nginx = bystander(w, "ingress-nginx", "ingress-nginx-controller", replicas=2,
                      nodes=nodes[3:], image="registry.k8s.io/ingress-nginx/controller:v1.11.3",
                      created=long_ago, rev_created=now - timedelta(days=5), memory_mib=300,
                      memory_limit="1Gi", cpu_cores=0.2, rps=0, median_s=0.01, team="infra",
                      port=80)

    def status(t: datetime, upstream: str) -> int:
        if "checkout" in upstream and t > outage and w.rng.random() < 0.3:
            return w.rng.choice((502, 502, 504))
        return 200
    access_logs(w, "ingress-nginx", nginx.pod_names[0], host="shop.acme-retail.example",
                upstreams=["shop-checkout-80", "shop-catalog-80"], rate_per_min=20,
                status=status, paths={"shop-checkout-80": ["/api/checkout/pay"],
                                      "shop-catalog-80": ["/api/catalog/items", "/api/catalog/"
                                                          "search"]})
    return w
