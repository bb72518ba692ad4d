"""network and certificate stories: a NetworkPolicy that blocks a caller, a Service whose
selector matches no pod, a serving certificate that expired."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from tests.scenario_tools.common import (
    MIB,
    Story,
    const,
    container_metrics,
    http_metrics,
    kube_system,
    namespaces,
    nodes,
    simple_deployment,
    story,
    truth,
)
from tests.scenario_tools.kube import Ctr, Obj, Template, ended, http_probe, iso, running
from tests.scenario_tools.parts import app, neighbour, readiness_blip


def _errors(s: Story, pods: Sequence[Obj], container: str, messages: Sequence[str], count: int,
            start: datetime, **fields: object) -> None:
    """`count` error documents spread over the pods from `start` to now."""
    span = (s.now - start).total_seconds()
    for i in range(count):
        pod = pods[i % len(pods)]
        when = start + timedelta(seconds=s.rng.uniform(3, span))
        s.logs.add(when, "error", s.rng.choice(messages), namespace=pod["metadata"]["namespace"],
                   pod=pod["metadata"]["name"], container=container, service=container,
                   node=pod["spec"]["nodeName"], **fields)


def _info(s: Story, pods: Sequence[Obj], container: str, messages: Sequence[str],
          count: int, end: datetime | None = None) -> None:
    start, end = s.ago(hours=s.hours), end or s.now
    for i in range(count):
        pod = pods[i % len(pods)]
        when = start + timedelta(seconds=s.rng.uniform(0, (end - start).total_seconds()))
        s.logs.add(when, "info", s.rng.choice(messages), namespace=pod["metadata"]["namespace"],
                   pod=pod["metadata"]["name"], container=container, service=container,
                   node=pod["spec"]["nodeName"])


def network_policy(s: Story, namespace: str, name: str, created: datetime, spec: Obj) -> Obj:
    return s.cluster.add({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                          "metadata": s.cluster.meta("NetworkPolicy", name, namespace, created,
                                                     {"app.kubernetes.io/managed-by": "Helm"}),
                          "spec": spec})


@story
def payments_netpol() -> Story:
    s = Story("payments-netpol", "Checkout cannot reach payments",
              datetime(2026, 12, 15, 14, 35, tzinfo=UTC),
              "checkout can't reach payments since ~14:05, every payment call times out and "
              "customers see 'payment failed'. payments team says their service is green",
              truth("network", "NetworkPolicy", "payments", "restrict-ingress",
                    ["i/o timeout", "NetworkPolicy", "restrict-ingress", "ingress-nginx"],
                    "The new NetworkPolicy payments/restrict-ingress admits only ingress-nginx: "
                    "add a rule allowing pods of the shop namespace (checkout) on port 8080"),
              hours=2.0, interventions=[{"after_step": 2, "text": "stay out of kube-system "
                                         "please, platform is mid-upgrade there"}])
    namespaces(s, "payments", "shop", "ingress-nginx", "monitoring")
    node_list = nodes(s, 3, subnet=19, region="eu-west-1")
    kube_system(s, node_list)
    blocked = s.ago(minutes=31)
    before = blocked.timestamp()
    _, payments = app(s, "payments", "payments-api", "ghcr.io/acme-pay/payments-api:9.4.0",
                      node_list, replicas=3, revision=63, rps=lambda t: 34.0 if t < before
                      else 3.1, codes={"200": const(0.96), "402": const(0.035),
                                       "400": const(0.005)},
                      median=const(0.12), cpu=lambda t: 0.3 if t < before else 0.04,
                      memory_mib=350, histogram=False)
    network_policy(s, "payments", "restrict-ingress", blocked, {
        "podSelector": {}, "policyTypes": ["Ingress"],
        "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {
            "kubernetes.io/metadata.name": "ingress-nginx"}}}],
            "ports": [{"protocol": "TCP", "port": 8080}]}]})
    network_policy(s, "payments", "allow-prometheus", s.ago(days=240), {
        "podSelector": {"matchLabels": {"app.kubernetes.io/name": "payments-api"}},
        "policyTypes": ["Ingress"],
        "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {
            "kubernetes.io/metadata.name": "monitoring"}}}],
            "ports": [{"protocol": "TCP", "port": 9090}]}]})
    _, checkout = app(s, "shop", "checkout", "ghcr.io/acme-pay/checkout:2.9.1", node_list,
                      replicas=3, revision=118, rps=const(36.0),
                      codes={"200": lambda t: 0.97 if t < before else 0.08,
                             "402": lambda t: 0.03 if t < before else 0.0,
                             "504": lambda t: 0.0 if t < before else 0.92},
                      median=lambda t: 0.16 if t < before else 10.0, cpu=const(0.2),
                      memory_mib=300)
    svc_ip = "172.20.44.17"
    _errors(s, checkout, "checkout", [
        f'payment authorization failed: Post "http://payments-api.payments.svc.cluster.local/'
        f'v1/charges": dial tcp {svc_ip}:80: i/o timeout',
        'payment authorization failed: context deadline exceeded (Client.Timeout exceeded '
        'while awaiting headers)'], 70, blocked + timedelta(seconds=10),
        error__type="net/http: timeout", http__response__status_code=504)
    _info(s, checkout, "checkout", ["payment authorized", "order placed"], 30, blocked)
    _info(s, payments, "payments-api", ["POST /v1/charges 200", "charge captured"], 30,
          blocked)
    _errors(s, payments, "payments-api", ["webhook signature verification failed: "
                                          "timestamp outside tolerance"], 12,
            s.ago(hours=2), http__response__status_code=400)
    neighbour(s, "payments", "ledger-writer", "ghcr.io/acme-pay/ledger-writer:1.2.0",
              node_list, replicas=1, memory_mib=180, logs=[
                  ("warn", "kafka producer retry: NOT_ENOUGH_REPLICAS", {}),
                  ("info", "ledger entry written", {})], n_logs=12,
              restarts={0: running(s.ago(days=1, hours=2), restarts=1, last=ended(
                  "Error", 137, s.ago(days=3), s.ago(days=1, hours=2, seconds=9)))})
    neighbour(s, "ingress-nginx", "ingress-nginx-controller", "registry.k8s.io/ingress-nginx/"
              "controller:v1.12.1", node_list, replicas=2, memory_mib=160, port=80, logs=[
                  ("warn", "Error getting SSL certificate \"shop/legacy-tls\": local SSL "
                   "certificate shop/legacy-tls was not found. Using default certificate", {})],
              n_logs=8)
    readiness_blip(s, "monitoring", "alertmanager", "quay.io/prometheus/alertmanager:v0.28.0",
                   node_list, port=9093, path="/-/ready", minutes_ago=55)
    return s


@story
def cart_service_selector() -> Story:
    s = Story("cart-service-selector", "Add to cart failing for everyone",
              datetime(2026, 11, 28, 19, 10, tzinfo=UTC),
              "add to cart fails for everyone since a few minutes, frontend says cart is "
              "unreachable. the cart pods are all up and healthy",
              truth("network", "Service", "shop", "cart",
                    ["connection refused", "no endpoints", "selector"],
                    "The cart Service now selects app.kubernetes.io/component=api, a label the "
                    "cart pods do not carry, so it has no endpoints: fix the selector (or the "
                    "pod labels) in the cart chart"),
              hours=2.0, nested_logs=True)
    namespaces(s, "shop", "monitoring")
    node_list = nodes(s, 3, subnet=17, region="us-east-1", instance="m7i.xlarge")
    kube_system(s, node_list)
    changed = s.ago(minutes=17)
    before = changed.timestamp()
    c = s.cluster
    ctr = Ctr("cart", "ghcr.io/acme-shop/cart:6.2.0", requests={"cpu": "200m", "memory":
              "256Mi"}, limits={"memory": "384Mi"}, readiness=http_probe("/ready"),
              liveness=http_probe("/healthz", delay=10))
    work, carts = simple_deployment(s, "shop", "cart", "", replicas=3, node_list=node_list,
                                    revision=71, service=False, template=Template(
                                        [ctr], service_account="cart"))
    work.obj["metadata"]["labels"]["helm.sh/chart"] = "cart-1.9.3"
    svc = c.service("shop", "cart", {"app.kubernetes.io/name": "cart",
                                     "app.kubernetes.io/component": "api"},
                    created=s.ago(days=500), labels={
                        "app.kubernetes.io/name": "cart", "app.kubernetes.io/managed-by": "Helm",
                        "helm.sh/chart": "cart-2.0.0"})
    svc["metadata"]["annotations"] = {"meta.helm.sh/release-name": "cart",
                                      "meta.helm.sh/release-namespace": "shop"}
    for pod in carts:
        container_metrics(s, pod, "cart", memory=lambda t: 150 * MIB, cpu=lambda t: 0.16
                          if t < before else 0.01)
        http_metrics(s, "cart", pod, rps=lambda t: 25.0 if t < before else 0.2, codes={
            "200": const(0.99), "409": const(0.01)}, median=const(0.02))
    _, frontends = app(s, "shop", "frontend", "ghcr.io/acme-shop/frontend:5.13.0", node_list,
                       replicas=3, revision=42, rps=const(120.0), port=3000,
                       codes={"200": lambda t: 0.985 if t < before else 0.82,
                              "404": const(0.01),
                              "502": lambda t: 0.0 if t < before else 0.165},
                       median=const(0.09), cpu=const(0.25), memory_mib=310, histogram=False)
    _errors(s, frontends, "frontend", [
        'POST /api/cart/items 502: upstream cart: connect ECONNREFUSED 172.20.91.6:80',
        'GET /api/cart 502: upstream cart: connect ECONNREFUSED 172.20.91.6:80'], 80,
        changed + timedelta(seconds=5), error__type="ECONNREFUSED",
        http__response__status_code=502)
    _info(s, carts, "cart", ["cart updated", "GET /api/cart 200"], 40, changed)
    _info(s, frontends, "frontend", ["GET / 200", "GET /product/[id] 200"], 40)
    neighbour(s, "shop", "wishlist", "ghcr.io/acme-shop/wishlist:1.4.4", node_list,
              memory_mib=120, logs=[("warn", "dynamodb throttled request, retry 1/3", {}),
                                    ("info", "wishlist saved", {})], n_logs=20,
              restarts={1: running(s.ago(days=4), restarts=1, last=ended(
                  "Error", 2, s.ago(days=5, hours=1), s.ago(days=4, seconds=7)))})
    readiness_blip(s, "monitoring", "grafana", "docker.io/grafana/grafana:11.3.0", node_list,
                   port=3000, path="/api/health", minutes_ago=44)
    return s


@story
def inventory_cert_expired() -> Story:
    s = Story("inventory-cert-expired", "order-router cannot call inventory-api",
              datetime(2026, 12, 16, 3, 40, tzinfo=UTC),
              "order-router can't talk to inventory-api since about 03:00, every stock check "
              "fails and orders are stuck in 'routing'",
              truth("certificate", "Deployment", "warehouse", "inventory-api",
                    ["x509: certificate has expired", "is after 2026-12-16T03:00:00Z",
                     "bad certificate"],
                    "inventory-api's serving certificate expired at 03:00: renew it (and fix "
                    "the renewal that did not run), then restart inventory-api to load it"),
              hours=2.0, interventions=[{"after_step": 1, "text": "ignore the label-printer "
                                         "warnings, the printers are offline at night"}])
    namespaces(s, "warehouse", "fulfilment")
    node_list = nodes(s, 3, subnet=33, region="eu-north-1", instance="m6g.xlarge")
    kube_system(s, node_list)
    expiry = datetime(2026, 12, 16, 3, 0, tzinfo=UTC)
    cut = expiry.timestamp()
    mount = [{"name": "tls", "mountPath": "/etc/tls", "readOnly": True}]
    _, inventory = app(s, "warehouse", "inventory-api", "ghcr.io/acme-ops/inventory-api:3.0.2",
                       node_list, replicas=2, revision=22, port=8443,
                       rps=lambda t: 40.0 if t < cut else 0.3,
                       codes={"200": const(0.99), "404": const(0.01)}, median=const(0.03),
                       cpu=lambda t: 0.2 if t < cut else 0.03, memory_mib=260,
                       histogram=False,
                       readiness=http_probe("/ready", 8081), liveness=http_probe("/healthz",
                                                                               8081),
                       mounts=mount, volumes=[{"name": "tls", "secret": {
                           "secretName": "inventory-api-tls", "defaultMode": 420}}])
    _, routers = app(s, "fulfilment", "order-router", "ghcr.io/acme-ops/order-router:5.1.0",
                     node_list, replicas=2, revision=37, rps=const(15.0),
                     codes={"200": lambda t: 0.99 if t < cut else 0.02,
                            "503": lambda t: 0.01 if t < cut else 0.98},
                     median=const(0.06), cpu=const(0.1), memory_mib=190, histogram=False)
    when = iso(expiry + timedelta(minutes=12, seconds=44))
    _errors(s, routers, "order-router", [
        'stock check failed: Get "https://inventory-api.warehouse.svc:8443/v2/stock?sku='
        'A-10442": tls: failed to verify certificate: x509: certificate has expired or is not '
        f'yet valid: current time {when} is after 2026-12-16T03:00:00Z'], 60,
        expiry + timedelta(seconds=20), error__type="x509.CertificateInvalidError")
    _errors(s, inventory, "inventory-api", [
        "http: TLS handshake error from 10.33.2.71:51812: remote error: tls: bad certificate",
        "http: TLS handshake error from 10.33.1.19:40266: remote error: tls: bad certificate"],
        30, expiry + timedelta(seconds=20))
    _info(s, routers, "order-router", ["order routed to warehouse DE-2", "stock reserved"], 30,
          expiry)
    target = {"instance": "https://inventory-api.warehouse.svc:8443/ready",
              "job": "blackbox-https"}
    s.metrics.gauge("probe_ssl_earliest_cert_expiry", target,
                    [(t, cut) for t in s.times], "Returns last SSL chain expiry in unixtime")
    s.metrics.gauge("probe_success", target, [(t, 1 if t < cut else 0) for t in s.times],
                    "Displays whether or not the probe was a success")
    neighbour(s, "warehouse", "label-printer", "ghcr.io/acme-ops/label-printer:0.7.3",
              node_list, replicas=1, memory_mib=80, logs=[
                  ("warn", "printer zebra-dock-4 unreachable (offline), queueing label", {})],
              n_logs=15)
    neighbour(s, "fulfilment", "carrier-sync", "ghcr.io/acme-ops/carrier-sync:2.2.1", node_list,
              replicas=1, memory_mib=140, logs=[
                  ("error", "carrier API returned 429 Too Many Requests, backing off", {}),
                  ("info", "synced 120 tracking updates", {})], n_logs=14,
              restarts={0: running(s.ago(days=2, hours=9), restarts=1, last=ended(
                  "Error", 1, s.ago(days=3), s.ago(days=2, hours=9, seconds=6)))})
    return s
