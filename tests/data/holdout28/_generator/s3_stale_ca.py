# ruff: noqa: E501  (log lines and messages are kept whole, as the systems print them)
"""Shape 3: inventory-api's certificate was re-issued by the 2026 internal CA at 10:12;
order-service still trusts only the 2025 CA from its own hand-made ConfigMap and fails
every handshake, while the clients on the shared trust bundle keep working."""

from __future__ import annotations

from datetime import datetime, timedelta

from . import _k8s as k
from ._common import access, app, chatter, nodes
from ._out import Scenario, accumulate, grid

NOW = datetime(2026, 5, 20, 10, 50, 0)
ROTATED = datetime(2026, 5, 20, 10, 12, 40)
PEM = "-----BEGIN CERTIFICATE-----\nMIIDdzCCAl+gAwIBAgIU{0}\n-----END CERTIFICATE-----\n"


def build() -> Scenario:
    sc = Scenario(
        id="orders-stock-reservation-failing",
        title="Orders cannot reserve stock",
        now=NOW,
        seed=303,
        report="inventory is broken since ~10:15, orders can't reserve stock and customers see "
        "'item unavailable' at checkout. inventory team deployed something this morning, "
        "can we just roll them back?",
        truth={
            "category": "certificate",
            "culprit": {"kind": "Deployment", "namespace": "orders", "name": "order-service"},
            "evidence": [
                "x509: certificate signed by unknown authority",
                "order-service-ca",
                "Platform Internal CA 2026",
            ],
            "fix": "Mount the shared platform-ca-bundle (or add the 2026 CA to order-service-ca) in "
            "order-service and restart it; do not roll back inventory-api.",
        },
    )
    nodes(sc)
    for ns in ("orders", "inventory", "web"):
        sc.add(k.namespace(ns, NOW - timedelta(days=300)))
    bundle_mount = [{"name": "ca", "mountPath": "/etc/ssl/internal", "readOnly": True}]
    shared = [{"name": "ca", "configMap": {"name": "platform-ca-bundle", "defaultMode": 420}}]
    own = [{"name": "ca", "configMap": {"name": "order-service-ca", "defaultMode": 420}}]
    env = [
        {"name": "SSL_CERT_FILE", "value": "/etc/ssl/internal/ca.crt"},
        {"name": "INVENTORY_URL", "value": "https://inventory-api.inventory.svc:8443"},
    ]

    def client(name: str, image: str, volumes: list) -> dict:
        return k.container(
            name,
            image,
            port=8080,
            env=env,
            mounts=bundle_mount,
            resources=k.res("200m", "256Mi", mem_lim="512Mi"),
            readiness=k.http_probe("/ready", 8080),
            liveness=k.http_probe("/live", 8080, delay=10),
        )

    orders, _ = app(
        sc,
        "order-service",
        "orders",
        "registry.internal/orders/order-service:4.2.0",
        replicas=3,
        containers=[client("order-service", "registry.internal/orders/order-service:4.2.0", own)],
        volumes=own,
        age_days=6,
    )
    fulfil, _ = app(
        sc,
        "fulfilment-worker",
        "orders",
        "registry.internal/orders/fulfilment-worker:2.8.1",
        containers=[
            client("fulfilment-worker", "registry.internal/orders/fulfilment-worker:2.8.1", shared)
        ],
        volumes=shared,
    )
    bff, _ = app(
        sc,
        "storefront-bff",
        "web",
        "registry.internal/web/storefront-bff:12.0.3",
        replicas=3,
        containers=[
            client("storefront-bff", "registry.internal/web/storefront-bff:12.0.3", shared)
        ],
        volumes=shared,
    )
    sc.add(
        k.configmap(
            "order-service-ca",
            "orders",
            {"ca.crt": "# Platform Internal CA 2025\n" + PEM.format("Kx2025q1bS8dPq7yU0wZl3gkR")},
            created=NOW - timedelta(days=290),
            labels={"app": "order-service"},
            annotations={
                "owner": "orders-team",
                "note": "copied from platform bundle, see ORD-311",
            },
        )
    )
    bundle = (
        "# Platform Internal CA 2025\n"
        + PEM.format("Kx2025q1bS8dPq7yU0wZl3gkR")
        + "# Platform Internal CA 2026\n"
        + PEM.format("Vb2026h7TrQm4Lc9Wn1aXe5oJ")
    )
    for ns in ("orders", "web", "inventory"):
        sc.add(
            k.configmap(
                "platform-ca-bundle",
                ns,
                {"ca.crt": bundle},
                created=NOW - timedelta(days=6, hours=4),
                labels={"trust.cert-manager.io/bundle": "platform-ca-bundle"},
                annotations={"trust.cert-manager.io/hash": "b81f0c6d2e"},
            )
        )
    # inventory-api: rolled at 10:12 to pick up the new certificate -----------------------------
    inv_mounts = [{"name": "tls", "mountPath": "/etc/tls", "readOnly": True}]
    inv_vols = [{"name": "tls", "secret": {"secretName": "inventory-api-tls"}}]
    inv = k.container(
        "inventory-api",
        "registry.internal/inventory/inventory-api:7.4.2",
        port=8443,
        port_name="https",
        mounts=inv_mounts,
        resources=k.res("500m", "512Mi", mem_lim="1Gi"),
        readiness=k.http_probe("/ready", 8443, scheme="HTTPS"),
    )
    inv_pods, rev = app(
        sc,
        "inventory-api",
        "inventory",
        "registry.internal/inventory/inventory-api:7.4.2",
        replicas=3,
        port=8443,
        containers=[inv],
        volumes=inv_vols,
        age_days=3,
    )
    # make the current revision the 10:12 restart (same image, new cert checksum)
    for obj in sc.objects:
        meta = obj.get("metadata", {})
        if obj["kind"] == "ReplicaSet" and meta.get("name") == rev.name:
            meta["creationTimestamp"] = k.stamp(ROTATED)
            obj["spec"]["template"]["metadata"]["annotations"] = {"checksum/tls": "9c41e07a"}
        if (
            obj["kind"] == "ReplicaSet"
            and meta.get("name", "").startswith("inventory-api-")
            and meta.get("name") != rev.name
        ):
            obj["spec"]["template"]["metadata"]["annotations"] = {"checksum/tls": "2d8b5f13"}
            obj["spec"]["template"]["spec"]["containers"][0]["image"] = inv["image"]
        if obj["kind"] == "Deployment" and meta.get("name") == "inventory-api":
            obj["spec"]["template"]["metadata"]["annotations"] = {"checksum/tls": "9c41e07a"}
            for c in obj["status"]["conditions"]:
                c["lastUpdateTime"] = k.stamp(ROTATED + timedelta(minutes=1))
        if obj["kind"] == "Pod" and meta.get("name") in inv_pods:
            i = inv_pods.index(meta["name"])
            t = ROTATED + timedelta(seconds=15 + 20 * i)
            meta["creationTimestamp"] = obj["status"]["startTime"] = k.stamp(t)
            meta["annotations"] = {"checksum/tls": "9c41e07a"}
            obj["status"]["containerStatuses"][0]["state"]["running"]["startedAt"] = k.stamp(
                t + timedelta(seconds=2)
            )
            for c in obj["status"]["conditions"]:
                c["lastTransitionTime"] = k.stamp(t + timedelta(seconds=6))
    sc.add(
        k.event(
            "inventory",
            "Deployment",
            "inventory-api",
            "ScalingReplicaSet",
            f"Scaled up replica set {rev.name} to 3",
            first=ROTATED,
            last=ROTATED + timedelta(seconds=40),
            count=3,
            component="deployment-controller",
        )
    )
    sc.doc(
        ROTATED + timedelta(seconds=18),
        "inventory-api",
        "inventory",
        inv_pods[0],
        "info",
        'serving certificate loaded subject=CN=inventory-api.inventory.svc issuer="CN=Platform Internal CA 2026" '
        "notAfter=2026-08-18T10:11:00Z",
    )
    order_ips = [f"10.0.{i + 1}.{40 + i}" for i in range(3)]
    for moment in sc.every(ROTATED + timedelta(seconds=60), NOW, 2.5):
        sc.doc(
            moment,
            "inventory-api",
            "inventory",
            sc.rng.choice(inv_pods),
            "info",
            f"http: TLS handshake error from {sc.rng.choice(order_ips)}:{sc.rng.randint(32768, 60999)}: "
            "remote error: tls: bad certificate",
            container="inventory-api",
        )
    access(
        sc,
        "inventory-api",
        "inventory",
        inv_pods,
        NOW - timedelta(hours=3),
        ["GET /v1/stock/{sku}", "POST /v1/reservations", "POST /v1/reservations/{id}/commit"],
        gap=1.2,
    )
    # order-service: can't verify the new certificate -------------------------------------------------
    for moment in sc.every(NOW - timedelta(hours=3), NOW, 3):
        pod = sc.rng.choice(orders)
        if moment < ROTATED + timedelta(seconds=60):
            sc.doc(
                moment,
                "order-service",
                "orders",
                pod,
                "info",
                "POST /orders 201 reserved=3 items",
                http__response__status_code=201,
            )
        else:
            sc.doc(
                moment,
                "order-service",
                "orders",
                pod,
                "error",
                'reserve stock failed: Post "https://inventory-api.inventory.svc:8443/v1/reservations": '
                "tls: failed to verify certificate: x509: certificate signed by unknown authority "
                '(possibly because of "crypto/rsa: verification error" while trying to verify candidate '
                'authority certificate "Platform Internal CA 2025")',
                http__response__status_code=503,
                error__type="x509.UnknownAuthorityError",
            )
    chatter(
        sc,
        "fulfilment-worker",
        "orders",
        fulfil,
        NOW - timedelta(hours=3),
        ["picked order batch from inventory, 14 lines", "shipment label created carrier=dhl"],
        gap=25,
    )
    chatter(
        sc,
        "storefront-bff",
        "web",
        bff,
        NOW - timedelta(hours=3),
        ["GET /api/pdp/{sku} 200 stock=from-inventory", "GET /api/cart 200"],
        gap=4,
    )
    chatter(
        sc,
        "storefront-bff",
        "web",
        bff,
        NOW - timedelta(hours=5),
        ["recommendations upstream slow (1.9s), serving cached rail"],
        gap=700,
        level="warn",
    )
    sc.add(
        k.event(
            "web",
            "Pod",
            bff[2],
            "Unhealthy",
            'Readiness probe failed: Get "http://10.0.3.61:8080/ready": context deadline exceeded',
            first=NOW - timedelta(minutes=52),
            last=NOW - timedelta(minutes=49),
            count=4,
            type="Warning",
            host="ip-10-0-3-88.eu-west-1.compute.internal",
            field_path="spec.containers{storefront-bff}",
        )
    )
    times = grid(NOW - timedelta(hours=3), NOW)
    cut = ROTATED.timestamp() + 60
    for pod in orders:
        for code, rate in (
            ("201", lambda t: 0.11 if t < cut else 0.0),
            ("503", lambda t: 0.0 if t < cut else 0.1),
        ):
            sc.counter(
                "http_requests_total",
                "HTTP requests served.",
                {
                    "namespace": "orders",
                    "pod": pod,
                    "service": "order-service",
                    "route": "/orders",
                    "code": code,
                },
                accumulate(times, rate, 500),
            )
    for pod in inv_pods:
        sc.counter(
            "http_requests_total",
            "HTTP requests served.",
            {"namespace": "inventory", "pod": pod, "service": "inventory-api", "code": "200"},
            accumulate(times, lambda t: 0.3 if t >= ROTATED.timestamp() + 30 else 0.0),
        )
    return sc
