"""The mesh's intermediate CA expired overnight; sidecar leaf certificates run out one by one."""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

from ._kit import (
    Pod,
    Story,
    access,
    ctr,
    deployment,
    event,
    fix_host_ips,
    http_probe,
    iso,
    namespace,
    node,
    platform,
    service,
)

SID = "orders-inventory-mtls-503"
NOW = "2026-11-03T08:25:00Z"
CA_EXPIRED_MIN = 14 * 60 + 1  # the intermediate's notAfter, minutes before now
CA_NAME = "Example Mesh Intermediate CA G2"
TLS_FAIL = ("upstream connect error or disconnect/reset before headers. reset reason: "
            "connection failure, transport failure reason: TLS error: 268435581:SSL routines:"
            "OPENSSL_internal:CERTIFICATE_VERIFY_FAILED")


def _proxy() -> dict[str, object]:
    return ctr("istio-proxy", "docker.io/istio/proxyv2:1.23.2", port=15090, cpu="100m",
               mem="128Mi", mem_limit="1Gi", readiness=http_probe("/healthz/ready", 15021, 15))


def build(root: Path) -> None:
    st = Story(SID, NOW, 5102)
    zones = ["eu-west-1a", "eu-west-1b", "eu-west-1c"]
    nodes = [f"ip-10-0-{a}-{b}.eu-west-1.compute.internal"
             for a, b in [(8, 14), (22, 93), (37, 201), (9, 160), (25, 48), (41, 77)]]
    for i, n in enumerate(nodes):
        st.add(node(st, n, zone=zones[i % 3], itype="m6i.2xlarge", cpu="8", mem="31758Mi",
                    age_days=9 + i))
    platform(st, nodes, busy=0.35)
    mesh = {"istio-injection": "enabled"}
    for ns, lab in [("istio-system", {}), ("shop", mesh), ("web", mesh),
                    ("cert-manager", {}), ("ingress-nginx", {})]:
        st.add(namespace(st, ns, labels=lab))
    expired_at = st.at(CA_EXPIRED_MIN)
    not_after = iso(expired_at - timedelta(seconds=49))

    istiod = deployment(st, "istio-system", "istiod",
                        [ctr("discovery", "docker.io/istio/pilot:1.23.2", port=15010,
                             cpu="500m", mem="2Gi", mem_limit="4Gi",
                             env=[{"name": "PILOT_CERT_PROVIDER", "value": "istiod"},
                                  {"name": "CA_TRUSTED_NODE_ACCOUNTS",
                                   "value": "istio-system/ztunnel"}],
                             readiness=http_probe("/ready", 8080, 3))],
                        nodes[:2], age_days=300, revision=14, rollout_min=26 * 1440)
    service(st, "istio-system", "istiod", {"app.kubernetes.io/name": "istiod"}, 15012, 15012,
            pods=istiod.pods, port_name="grpc-xds")
    # the CA refuses every CSR since its signing certificate ran out
    sign_fail = (f"failed to sign CSR: signing certificate \"{CA_NAME}\" is not valid at "
                 "the current time: x509: certificate has expired or is not yet valid: "
                 f"current time {{now}} is after {not_after}")
    for p in istiod.pods:
        t = expired_at + timedelta(minutes=st.rng.uniform(1, 6))
        while t < st.now:
            sa = st.rng.choice(["shop/sa/inventory", "shop/sa/orders", "shop/sa/pricing",
                                "web/sa/shop-web", "shop/sa/orders"])
            st.log(t, p, "error",
                   f"error\tca\tCSR signing error for spiffe://cluster.local/ns/{sa}: "
                   + sign_fail.format(now=iso(t)))
            t += timedelta(minutes=st.rng.uniform(8, 20))
        st.chatter([p], lambda r: ("info", f"info\tads\tXDS: Pushing Services:"
                                           f"{r.randint(140, 150)} ConnectedEndpoints:"
                                           f"{r.randint(20, 24)} Version:2026-11-03T06:12:40Z/"
                                           f"{r.randint(900, 990)}"),
                   every_s=240)
    event(st, "istio-system", "Pod", istiod.pods[0].name, "Unhealthy",
          "Readiness probe failed: Get \"http://10.0.8.77:8080/ready\": context deadline "
          "exceeded (Client.Timeout exceeded while awaiting headers)", type_="Warning",
          count=1, first_min=52, component="kubelet", host=istiod.pods[0].node)

    inv = deployment(st, "shop", "inventory",
                     [ctr("inventory", "ghcr.io/example/inventory:1.8.3", cpu="300m",
                          mem="384Mi", readiness=http_probe("/ready")), _proxy()],
                     nodes[1:4], age_days=420, revision=31, rollout_min=16 * 60 + 10)
    orders = deployment(st, "shop", "orders",
                        [ctr("orders", "ghcr.io/example/orders:7.2.0", cpu="400m",
                             mem="512Mi", readiness=http_probe("/ready")), _proxy()],
                        nodes[2:5], age_days=600, revision=88, rollout_min=3 * 1440)
    pricing = deployment(st, "shop", "pricing",
                         [ctr("pricing", "ghcr.io/example/pricing:2.0.4", cpu="200m",
                              mem="256Mi", readiness=http_probe("/ready")), _proxy()],
                         nodes[3:5], age_days=200, revision=12, rollout_min=5 * 1440)
    web = deployment(st, "web", "shop-web",
                     [ctr("shop-web", "ghcr.io/example/shop-web:12.4.1", port=3000, cpu="300m",
                          mem="512Mi", readiness=http_probe("/healthz", 3000)), _proxy()],
                     nodes[:3], age_days=700, revision=140, rollout_min=2 * 1440)
    for w, port in [(inv, 8080), (orders, 8080), (pricing, 8080), (web, 3000)]:
        service(st, w.ns, w.name, {"app.kubernetes.io/name": w.name}, 80, port, pods=w.pods)

    # when each sidecar's last leaf certificate runs out (minutes before now; <0: still valid)
    leaf_expiry = {inv.pods[0].name: 190, inv.pods[1].name: 44, inv.pods[2].name: -300,
                   pricing.pods[0].name: 350, pricing.pods[1].name: -120,
                   orders.pods[0].name: 12, orders.pods[1].name: -400,
                   orders.pods[2].name: 420, web.pods[0].name: -200, web.pods[1].name: 260,
                   web.pods[2].name: -30}

    def expired(p: Pod, m: float) -> bool:
        return leaf_expiry[p.name] >= m

    # sidecars: the renewal fails since the CA expired, then the peer rejects the old leaf
    for w in (inv, orders, pricing, web):
        for p in w.pods:
            sp = replace(p, container="istio-proxy")
            t = expired_at + timedelta(minutes=st.rng.uniform(30, 90))
            while t < st.now:
                st.log(t, sp, "warn",
                       "warn\tcache\tresource:default failed to generate secret for proxy "
                       "from remote: create certificate: rpc error: code = Unknown desc = "
                       + sign_fail.format(now=iso(t)))
                t += timedelta(minutes=st.rng.uniform(50, 100))
            left = -leaf_expiry[p.name]
            if left > 0:
                st.log(st.at(st.rng.uniform(1, 20)), sp, "warn",
                       f"warn\tsds\tworkload certificate expires in {left // 60}h{left % 60}m, "
                       "rotation keeps failing")

    def envoy_line(r: random.Random, stamp: str, src: str, dst: str, path: str) -> str:
        return (f'[{stamp}] "GET {path}{r.randint(1000, 9999)} HTTP/1.1" 503 UF,URX '
                "upstream_reset_before_response_started{connection_failure,"
                "TLS_error:|268435581:SSL_routines:OPENSSL_internal:"
                "CERTIFICATE_VERIFY_FAILED:TLS_error_end} - \"-\" 0 190 "
                f"{r.randint(1, 9)} - \"-\" \"{src}\" \"-\" \"{dst}.shop.svc."
                "cluster.local:80\" \"-\" outbound|80||"
                f"{dst}.shop.svc.cluster.local - - -")

    # callers: orders -> inventory, orders -> pricing, shop-web -> orders
    calls = [(orders, inv, "/v1/stock/sku-"), (orders, pricing, "/v1/price/sku-"),
             (web, orders, "/v1/orders/")]
    for caller, callee, path in calls:
        for p in caller.pods:
            sp = replace(p, container="istio-proxy")
            t = st.at(60)
            while t < st.now:
                m = (st.now - t).total_seconds() / 60
                peer = st.rng.choice(callee.pods)
                if expired(p, m) or expired(peer, m):
                    st.log(t, sp, "info",
                           envoy_line(st.rng, iso(t), caller.name, callee.name, path))
                    st.log(t + timedelta(milliseconds=12), p, "error",
                           f"call to {callee.name} failed: 503 {TLS_FAIL} "
                           f"(peer={peer.ip}:8080 attempt=3/3)",
                           {"error.type": "UpstreamError", "http.response.status_code": 503})
                t += timedelta(seconds=st.rng.uniform(70, 140))

    for w, paths, slow in [(inv, ["/v1/stock/sku-2231", "/ready"], 15),
                           (orders, ["+/v1/orders", "/v1/orders/991822", "/ready"], 70),
                           (pricing, ["/v1/price/sku-7781"], 9),
                           (web, ["/", "/checkout", "/product/4410"], 90)]:
        st.chatter(w.pods, access(paths, w.name, slow), every_s=70)

    # cert-manager renewing the public ingress certificate this morning: fine, unrelated
    cm = deployment(st, "cert-manager", "cert-manager",
                    [ctr("cert-manager-controller", "quay.io/jetstack/cert-manager-controller:"
                         "v1.15.3", port=9402, cpu="50m", mem="128Mi")],
                    nodes[4:5], age_days=500, revision=7, rollout_min=20 * 1440)
    cmp = cm.pods[0]
    for m, msg in [(85, 'msg="Certificate must be re-issued" key="web/shop-tls" '
                        'reason="Renewing" message="Renewing certificate as renewal was '
                        'scheduled at 2026-11-03 07:00:00 +0000 UTC"'),
                   (84.8, 'msg="Issuing certificate as Secret was previously issued by '
                          'Issuer.cert-manager.io/" key="web/shop-tls"'),
                   (84, 'msg="Certificate issued successfully" key="web/shop-tls" '
                        'resource_name="shop-tls-1"'),
                   (83.9, 'msg="certificate is up to date" key="web/shop-tls" '
                          'not_after="2027-02-01T06:59:12Z"')]:
        st.log(st.at(m), cmp, "info", f"I1103 cert-manager/certificates {msg}")
    ing = deployment(st, "ingress-nginx", "ingress-nginx-controller",
                     [ctr("controller", "registry.k8s.io/ingress-nginx/controller:v1.11.2",
                          port=80, cpu="200m", mem="256Mi")], nodes[3:5], age_days=300)
    st.chatter(ing.pods, lambda r: (
        "warn", "W1103 controller.go:1214] Error getting SSL certificate \"web/shop-tls-old\": "
                "local SSL certificate web/shop-tls-old was not found. Using default "
                "certificate"), every_s=900)

    # metrics
    chain_exp = float(int(expired_at.timestamp()) - 49)
    root_exp = float(int((st.now + timedelta(days=2900)).timestamp()))
    for p in istiod.pods:
        lab = {"namespace": "istio-system", "pod": p.name}
        st.gauge("citadel_server_cert_chain_expiry_timestamp",
                 "The unix timestamp, in seconds, when Citadel cert chain will expire.", lab,
                 lambda m: chain_exp)
        st.gauge("citadel_server_root_cert_expiry_timestamp",
                 "The unix timestamp, in seconds, when Citadel root cert will expire.", lab,
                 lambda m: root_exp)
        st.counter("citadel_server_csr_count_total", "The number of CSRs received by Citadel.",
                   lab, lambda m: 0.004, start=31000.0)
        st.counter("citadel_server_csr_sign_error_count_total",
                   "The number of errors occurred when signing the CSR.", lab,
                   lambda m: 0.004, start=190.0)
        st.counter("citadel_server_success_cert_issuance_count_total",
                   "The number of certificates issuances that have succeeded.", lab,
                   lambda m: 0.0, start=30811.0)
        st.pod_metrics(p, cpu=0.08, mem_mib=900)
    for w in (inv, orders, pricing, web):
        for p in w.pods:
            st.pod_metrics(p, cpu=0.15, mem_mib=300)
    frac = {w.name: (lambda m, w=w: sum(expired(p, m) for p in w.pods) / len(w.pods))
            for w in (inv, orders, pricing)}
    for callee in (inv, pricing):
        st.counter("istio_requests_total", "Total requests.",
                   {"reporter": "source", "source_workload": "orders",
                    "destination_workload": callee.name, "destination_service_namespace": "shop",
                    "response_code": "503", "response_flags": "UF,URX",
                    "connection_security_policy": "unknown"},
                   lambda m, c=callee.name: 6.0 * min(1.0, frac[c](m) + frac["orders"](m) / 2),
                   start=40000.0)
        st.counter("istio_requests_total", "Total requests.",
                   {"reporter": "source", "source_workload": "orders",
                    "destination_workload": callee.name, "destination_service_namespace": "shop",
                    "response_code": "200", "response_flags": "-",
                    "connection_security_policy": "mutual_tls"},
                   lambda m, c=callee.name: 6.0 * (1 - min(1.0, frac[c](m)
                                                           + frac["orders"](m) / 2)),
                   start=9.0e6)
    st.http("web", "shop-web", 20.0, lambda m: 0.25 * frac["orders"](m) + 0.05, "502")
    fix_host_ips(st.objects)
    st.write(root, "orders cannot reach inventory, 503s",
             "checkout is failing for a lot of users, orders gets 503s calling inventory "
             "and pricing since\nsometime this morning and it keeps getting worse. inventory "
             "pods are all Running and Ready.\nWe shipped inventory 1.8.3 yesterday evening - "
             "roll it back? cert-manager also did\nsomething with the shop cert this morning.\n",
             {"category": "certificate",
              "culprit": {"kind": "Deployment", "namespace": "istio-system", "name": "istiod"},
              "evidence": ["failed to sign CSR", "x509: certificate has expired or is not yet "
                           "valid", "CERTIFICATE_VERIFY_FAILED"],
              "fix": f"Rotate the mesh's plugged-in intermediate CA (\"{CA_NAME}\", notAfter "
                     f"{not_after}) in istio-system's cacerts and restart istiod so it signs "
                     "workload certificates again; sidecars then renew. No inventory rollback."})
