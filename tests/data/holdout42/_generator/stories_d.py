# ruff: noqa: E501 - story data: log lines and messages are kept whole, as the tools print them
"""Stories 7 and 8: an egress NetworkPolicy left behind by a database move; an HPA whose
new pods a ResourceQuota refuses."""

from __future__ import annotations

import random
from datetime import timedelta

from tests.data.holdout42._generator import kit
from tests.data.holdout42._generator.kit import Series, Story, parse


def egress_policy_after_db_move() -> Story:
    """Parcelwise: the database team moved the orders Postgres from namespace `orders` to a
    shared `databases` namespace and repointed the `orders-db` Service (now ExternalName) at
    it. fulfillment-api's egress NetworkPolicy still allows 5432 only to pods labelled
    app=orders-db by a bare podSelector, i.e. in its own namespace, so connections to the new
    pods are dropped and time out. DNS works; the database is healthy for its other clients."""
    now = parse("2026-11-23T13:35:00Z")
    rnd = random.Random(7)
    ns, dns = "orders", "databases"
    moved = now - timedelta(hours=1, minutes=48)
    s = Story("fulfillment-egress-policy-db-moved", "Orders stuck awaiting fulfillment", now,
              "orders are stuck in 'awaiting fulfillment' since around lunch, fulfillment-api answers 500 "
              "on /v1/fulfil. DB team says postgres is healthy and billing-export is writing to it fine. "
              "no deploy of fulfillment today",
              {"category": "network",
               "culprit": {"kind": "NetworkPolicy", "namespace": ns, "name": "fulfillment-api-egress"},
               "evidence": ["timeout exceeded when trying to connect", "fulfillment-api-egress",
                            "orders-pg.databases.svc.cluster.local"],
               "fix": "Add a namespaceSelector for the databases namespace (with the podSelector "
                      "app=orders-pg) to fulfillment-api-egress's 5432 rule."})
    old = now - timedelta(days=350)
    s.objects += [kit.namespace(ns, old, {"team": "orders"}), kit.namespace(dns, now - timedelta(days=20), {"team": "dba"}),
                  kit.namespace("finance", old, {"team": "finance"}), kit.namespace("kube-system", old),
                  kit.namespace("ingress-nginx", old)]
    nodes = [f"node-pool-a-{i}" for i in range(1, 4)]
    for i, n in enumerate(nodes):
        s.objects.append(kit.node(n, now - timedelta(days=5, hours=i), now, ip=f"10.2.0.{21 + i}",
                                  labels={"topology.kubernetes.io/zone": f"fr-par-{i + 1}"}))
    _, _, fpods = kit.app(s, ns, "fulfillment-api", "rg.fr-par.scw.cloud/parcelwise/fulfillment-api:6.7.3", nodes,
                          replicas=3, revision=58, port=3000, rolled=timedelta(days=3, hours=4),
                          env_vars={"PGHOST": "orders-db.orders.svc.cluster.local", "PGDATABASE": "orders",
                                    "PGCONNECT_TIMEOUT": "5", "NODE_ENV": "production"},
                          requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"})
    # the old database StatefulSet, scaled to zero, and the Service now pointing elsewhere
    pg_tmpl = kit.template({"app": "orders-db"}, [kit.container("postgres", "postgres:15.8", ports=[5432],
                                                                requests={"cpu": "1", "memory": "2Gi"})])
    s.objects.append({"apiVersion": "apps/v1", "kind": "StatefulSet",
                      "metadata": kit.metadata("orders-db", ns, old, labels={"app": "orders-db"}, generation=14),
                      "spec": {"replicas": 0, "serviceName": "orders-db-hl", "selector": {"matchLabels": {"app": "orders-db"}},
                               "template": pg_tmpl},
                      "status": {"replicas": 0, "availableReplicas": 0, "observedGeneration": 14,
                                 "currentRevision": "orders-db-7f8c9d6b5", "updateRevision": "orders-db-7f8c9d6b5"}})
    svc = kit.service(ns, "orders-db", old, None, [("postgres", 5432, 5432)],
                      external_name="orders-pg.databases.svc.cluster.local")
    svc["metadata"]["annotations"] = {"dba.parcelwise.io/migrated": kit.iso(moved)}
    s.objects.append(svc)
    # policies in orders
    s.objects.append({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                      "metadata": kit.metadata("default-deny", ns, old),
                      "spec": {"podSelector": {}, "policyTypes": ["Ingress", "Egress"]}})
    s.objects.append({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                      "metadata": kit.metadata("fulfillment-api-egress", ns, old + timedelta(days=40)),
                      "spec": {"podSelector": {"matchLabels": {"app": "fulfillment-api"}}, "policyTypes": ["Egress"],
                               "egress": [
                                   {"to": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "kube-system"}},
                                            "podSelector": {"matchLabels": {"k8s-app": "kube-dns"}}}],
                                    "ports": [{"protocol": "UDP", "port": 53}, {"protocol": "TCP", "port": 53}]},
                                   {"to": [{"podSelector": {"matchLabels": {"app": "orders-db"}}}],
                                    "ports": [{"protocol": "TCP", "port": 5432}]},
                                   {"to": [{"podSelector": {"matchLabels": {"app": "label-printer"}}}],
                                    "ports": [{"protocol": "TCP", "port": 8080}]},
                                   {"to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8", "172.16.0.0/12"]}}],
                                    "ports": [{"protocol": "TCP", "port": 443}]}]}})
    s.objects.append({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                      "metadata": kit.metadata("fulfillment-api-ingress", ns, old + timedelta(days=40)),
                      "spec": {"podSelector": {"matchLabels": {"app": "fulfillment-api"}}, "policyTypes": ["Ingress"],
                               "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": "ingress-nginx"}}},
                                                     {"podSelector": {}}],
                                            "ports": [{"protocol": "TCP", "port": 3000}]}]}})
    s.objects.append({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                      "metadata": kit.metadata("label-printer-ingress", ns, old + timedelta(days=40)),
                      "spec": {"podSelector": {"matchLabels": {"app": "label-printer"}}, "policyTypes": ["Ingress"],
                               "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "fulfillment-api"}}}],
                                            "ports": [{"protocol": "TCP", "port": 8080}]}]}})
    _, _, lpods = kit.app(s, ns, "label-printer", "rg.fr-par.scw.cloud/parcelwise/label-printer:1.12.0", nodes[1:],
                          replicas=1, revision=9, port=8080, rolled=timedelta(days=2))
    # the database in its new namespace
    ptmpl = kit.template({"app": "orders-pg", "cnpg.io/cluster": "orders-pg"}, [kit.container(
        "postgres", "ghcr.io/cloudnative-pg/postgresql:15.8", ports=[5432], requests={"cpu": "1", "memory": "4Gi"},
        limits={"memory": "4Gi"})])
    s.objects.append({"apiVersion": "apps/v1", "kind": "StatefulSet",
                      "metadata": kit.metadata("orders-pg", dns, moved - timedelta(hours=3), labels={"app": "orders-pg"}, generation=2),
                      "spec": {"replicas": 2, "serviceName": "orders-pg", "selector": {"matchLabels": {"app": "orders-pg"}},
                               "template": ptmpl},
                      "status": {"replicas": 2, "readyReplicas": 2, "currentReplicas": 2, "updatedReplicas": 2,
                                 "availableReplicas": 2, "observedGeneration": 2}})
    pgpods = []
    for i in range(2):
        p = kit.pod(dns, f"orders-pg-{i}", moved - timedelta(hours=3) + timedelta(minutes=i * 2), ptmpl,
                    owner=("StatefulSet", "orders-pg"), node_name=nodes[i],
                    statuses=[kit.running("postgres", moved - timedelta(hours=3), image="ghcr.io/cloudnative-pg/postgresql:15.8")],
                    ip=f"10.2.{31 + i}.7", extra_labels={"statefulset.kubernetes.io/pod-name": f"orders-pg-{i}"})
        pgpods.append(p)
        s.objects.append(p)
    s.objects.append(kit.service(dns, "orders-pg", moved - timedelta(hours=3), {"app": "orders-pg"}, [("postgres", 5432, 5432)],
                                 cluster_ip="10.32.118.9"))
    s.objects.append(kit.endpoints(dns, "orders-pg", moved - timedelta(hours=3), pgpods[:1], [("postgres", 5432)]))
    _, _, bpods = kit.app(s, "finance", "billing-export", "rg.fr-par.scw.cloud/parcelwise/billing-export:2.3.0", nodes,
                          replicas=1, revision=30, port=8080, rolled=timedelta(days=4),
                          env_vars={"DATABASE_URL_HOST": "orders-pg.databases.svc.cluster.local"})
    # logs: postgres sees billing-export, never fulfillment-api after the move
    pg_lines = []
    at = now - timedelta(hours=3)
    while at < now:
        stamp = at.strftime("%Y-%m-%d %H:%M:%S.") + f"{at.microsecond // 1000:03d} UTC"
        if at < moved:
            client = rnd.choice(["10.2.40.11", "10.2.40.12"])
            pg_lines.append(f"{stamp} [{rnd.randint(2000, 9000)}] LOG:  connection authorized: user=replicator database=orders application_name=pg_basebackup host={client}")
            at += timedelta(minutes=rnd.randint(4, 9))
            continue
        r = rnd.random()
        if r < 0.6:
            bip = bpods[0]["status"]["podIP"]
            pg_lines.append(f"{stamp} [{rnd.randint(2000, 9000)}] LOG:  connection authorized: user=billing_export database=orders application_name=billing-export host={bip}")
        elif r < 0.8:
            pg_lines.append(f"{stamp} [{rnd.randint(100, 200)}] LOG:  checkpoint complete: wrote {rnd.randint(100, 3000)} buffers ({rnd.random() * 2:.1f}%); 0 WAL file(s) added, 0 removed, 1 recycled")
        else:
            pg_lines.append(f"{stamp} [{rnd.randint(2000, 9000)}] LOG:  duration: {rnd.randint(1000, 4000)}.{rnd.randint(100, 999)} ms  statement: SELECT * FROM invoices_export_v WHERE period = '2026-11'")
        at += timedelta(minutes=rnd.randint(1, 5))
    s.log(dns, "orders-pg-0", "postgres", pg_lines)
    for line in pg_lines[::2]:
        stamp = kit.parse(line[:19].replace(" ", "T") + "Z")
        s.docs.append(kit.log_doc(stamp, line.split("LOG:  ", 1)[1], "info", "orders-pg", dns, "orders-pg-0", "postgres"))
    for _idx, p in enumerate(fpods):
        name = p["metadata"]["name"]
        lines = []
        at = now - timedelta(hours=3)
        while at < now:
            ms = int(at.timestamp() * 1000)
            req = kit.suffix(f"{name}{ms}", 8)
            if at < moved + timedelta(seconds=30):
                lines.append(f'{{"level":30,"time":{ms},"pid":1,"hostname":"{name}","reqId":"{req}","msg":"fulfilment created","orderId":"PW-{rnd.randint(10**6, 10**7)}","carrier":"{rnd.choice(["colissimo", "dpd", "ups"])}","responseTime":{rnd.randint(40, 220)}}}')
                s.docs.append(kit.log_doc(at, "fulfilment created", "info", "fulfillment-api", ns, name, "fulfillment-api",
                                          http__response__status_code=201))
                at += timedelta(seconds=rnd.randint(20, 60))
                continue
            r = rnd.random()
            if r < 0.55:
                msg = "timeout exceeded when trying to connect"
                lines.append(f'{{"level":50,"time":{ms},"pid":1,"hostname":"{name}","reqId":"{req}","err":{{"type":"Error","message":"{msg}","stack":"Error: {msg}\\n    at /app/node_modules/pg-pool/index.js:45:11\\n    at async OrdersRepo.lockForFulfilment (/app/dist/repo/orders.js:88:20)"}},"msg":"fulfil failed","orderId":"PW-{rnd.randint(10**6, 10**7)}"}}')
                s.docs.append(kit.log_doc(at, f"fulfil failed: {msg}", "error", "fulfillment-api", ns, name, "fulfillment-api",
                                          error__type="Error", error__message=msg, http__response__status_code=500))
                lines.append(f'{{"level":30,"time":{ms + 3},"pid":1,"hostname":"{name}","reqId":"{req}","res":{{"statusCode":500}},"responseTime":{5000 + rnd.randint(2, 40)},"msg":"request completed"}}')
            elif r < 0.7:
                msg = "connect ETIMEDOUT 10.2.31.7:5432"
                lines.append(f'{{"level":50,"time":{ms},"pid":1,"hostname":"{name}","err":{{"type":"Error","message":"{msg}","code":"ETIMEDOUT","errno":-110,"syscall":"connect","address":"10.2.31.7","port":5432}},"msg":"pg pool idle client error"}}')
                s.docs.append(kit.log_doc(at, f"pg pool idle client error: {msg}", "error", "fulfillment-api", ns, name, "fulfillment-api",
                                          error__type="Error", error__message=msg))
            elif r < 0.8:
                lines.append(f'{{"level":40,"time":{ms},"pid":1,"hostname":"{name}","msg":"carrier webhook retry","carrier":"dpd","attempt":{rnd.randint(1, 3)}}}')
                s.docs.append(kit.log_doc(at, "carrier webhook retry", "warn", "fulfillment-api", ns, name, "fulfillment-api"))
            else:
                lines.append(f'{{"level":30,"time":{ms},"pid":1,"hostname":"{name}","req":{{"method":"GET","url":"/healthz"}},"res":{{"statusCode":200}},"responseTime":1,"msg":"request completed"}}')
            at += timedelta(seconds=rnd.randint(15, 45))
        s.log(ns, name, "fulfillment-api", lines)
    kit.chatter(s, ns, "label-printer", lpods, "label-printer",
                lambda at, r: ("info", f"label rendered format=zpl parcels={r.randint(1, 4)}"), seed=71, every=(90, 300))
    kit.chatter(s, "finance", "billing-export", bpods, "billing-export",
                lambda at, r: ("info", f"exported {r.randint(20, 400)} rows to ledger period=2026-11"), seed=72, every=(60, 200))
    s.objects.append(kit.event(dns, "Pod", "orders-pg-1", "Unhealthy",
                               "Readiness probe failed: HTTP probe failed with statuscode: 500",
                               now - timedelta(minutes=58), now - timedelta(minutes=3), count=118, type_="Warning"))
    s.log(dns, "orders-pg-1", "postgres", [
        f"{(now - timedelta(minutes=m)).strftime('%Y-%m-%d %H:%M:%S')}.101 UTC [77] LOG:  waiting for WAL to become available at 0/5E000108"
        for m in range(60, 0, -6)])
    # metrics: request codes on fulfillment-api
    reqs = Series("http_requests_total", "counter", "Requests handled")
    times = kit.steps(now - timedelta(hours=3), now, timedelta(minutes=1))
    for p in fpods:
        base = {"namespace": ns, "pod": p["metadata"]["name"], "route": "/v1/fulfil"}
        kit.counter_walk(reqs, {**base, "code": "201"}, times, lambda at: 0.6 + rnd.uniform(-0.1, 0.1) if at < moved else 0.0, start=3.3e5)
        kit.counter_walk(reqs, {**base, "code": "500"}, times, lambda at: 0.5 + rnd.uniform(-0.1, 0.1) if at > moved else 0.0, start=41)
    s.metrics.append(reqs)
    return s


def hpa_blocked_by_quota() -> Story:
    """Kettle & Co: at the evening peak catalog-api's HPA asks for 16 replicas, but the
    storefront namespace's ResourceQuota caps requests.cpu at 6 and the namespace already
    uses all of it with 9 catalog pods and the other services. The ReplicaSet's creates are
    forbidden ("exceeded quota"), the replicas stay at 9 while CPU and latency climb."""
    now = parse("2026-11-29T19:25:00Z")
    rnd = random.Random(8)
    ns = "storefront"
    peak = now - timedelta(minutes=40)
    s = Story("catalog-hpa-quota-exceeded", "Catalog slow at peak, autoscaling not kicking in", now,
              "catalog pages very slow since the evening peak started, p99 around 3s. grafana shows the "
              "catalog pods at high cpu but the autoscaler doesn't seem to add any? maybe the HPA is broken "
              "or we hit max replicas",
              {"category": "quota_exceeded",
               "culprit": {"kind": "Deployment", "namespace": ns, "name": "catalog-api"},
               "evidence": ["exceeded quota: storefront-compute", "requests.cpu=6", "FailedCreate"],
               "fix": "Raise the storefront-compute ResourceQuota's requests.cpu (and limits) to cover "
                      "the HPA's maximum, or lower catalog-api's per-pod request."})
    old = now - timedelta(days=180)
    s.objects += [kit.namespace(n, old) for n in (ns, "payments", "kube-system")]
    nodes = [f"gke-kettle-prod-default-{kit.suffix(f'k{i}', 8)}-{kit.suffix(f'kk{i}', 4)}" for i in range(5)]
    for i, n in enumerate(nodes):
        s.objects.append(kit.node(n, now - timedelta(days=4, hours=i * 3), now, cpu="8", memory="32Gi",
                                  allocatable_cpu="7910m", allocatable_memory="29Gi", ip=f"10.132.0.{60 + i}",
                                  labels={"cloud.google.com/gke-nodepool": "default"}))
    image = "eu.gcr.io/kettle-prod/catalog-api:2026.11.24-3"
    labels = {"app": "catalog-api"}
    tmpl = kit.template(labels, [kit.container(
        "catalog-api", image, ports=[8000], requests={"cpu": "500m", "memory": "768Mi"},
        limits={"cpu": "1", "memory": "1Gi"}, env=kit.env(WEB_CONCURRENCY="3", SEARCH_URL="http://search-proxy"),
        readiness=kit.http_probe("/health/ready", 8000), liveness=kit.http_probe("/health/live", 8000, delay=20))])
    rolled = now - timedelta(days=5, hours=1)
    dep = kit.deployment(ns, "catalog-api", old, tmpl, replicas=16, revision=96, ready=9, updated=9, available=9,
                         unavailable=7, changed=peak + timedelta(minutes=6))
    rs, h = kit.replicaset(ns, "catalog-api", 96, rolled, tmpl, replicas=16, ready=9)
    rs["status"]["replicas"] = 9
    rs["status"]["fullyLabeledReplicas"] = 9
    rsname = rs["metadata"]["name"]
    quota_msg = (f'pods "{rsname}-{kit.suffix("q1")}" is forbidden: exceeded quota: storefront-compute, '
                 "requested: requests.cpu=500m, used: requests.cpu=6, limited: requests.cpu=6")
    rs["status"]["conditions"] = [{"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
                                   "message": quota_msg, "lastTransitionTime": kit.iso(peak + timedelta(minutes=6))}]
    dep["status"]["conditions"].append({"type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
                                        "message": quota_msg, "lastUpdateTime": kit.iso(peak + timedelta(minutes=6)),
                                        "lastTransitionTime": kit.iso(peak + timedelta(minutes=6))})
    dep["status"]["replicas"] = 9
    s.objects += [dep, rs]
    pods = []
    for i in range(9):
        started = rolled if i < 6 else peak + timedelta(minutes=3, seconds=i)
        name = f"catalog-api-{h}-{kit.suffix(f'cat{i}')}"
        p = kit.pod(ns, name, started, tmpl, owner=("ReplicaSet", rsname), node_name=nodes[i % 5],
                    statuses=[kit.running("catalog-api", started, image=image)])
        pods.append(p)
        s.objects.append(p)
    s.objects.append(kit.service(ns, "catalog-api", old, labels, [("http", 80, 8000)], cluster_ip="10.12.40.77"))
    s.objects.append(kit.endpoints(ns, "catalog-api", old, pods, [("http", 8000)]))
    hpa = {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
           "metadata": kit.metadata("catalog-api", ns, old),
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "catalog-api"},
                    "minReplicas": 6, "maxReplicas": 24,
                    "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                        "type": "Utilization", "averageUtilization": 65}}}]},
           "status": {"currentReplicas": 9, "desiredReplicas": 16,
                      "lastScaleTime": kit.iso(peak + timedelta(minutes=6)),
                      "currentMetrics": [{"type": "Resource", "resource": {"name": "cpu", "current": {
                          "averageUtilization": 178, "averageValue": "891m"}}}],
                      "conditions": [
                          {"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale",
                           "message": "recommended size matches current size",
                           "lastTransitionTime": kit.iso(peak + timedelta(minutes=6))},
                          {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound",
                           "message": "the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)",
                           "lastTransitionTime": kit.iso(old)},
                          {"type": "ScalingLimited", "status": "False", "reason": "DesiredWithinRange",
                           "message": "the desired count is within the acceptable range",
                           "lastTransitionTime": kit.iso(peak + timedelta(minutes=6))}]}}
    s.objects.append(hpa)
    s.objects.append({"apiVersion": "v1", "kind": "ResourceQuota",
                      "metadata": kit.metadata("storefront-compute", ns, old + timedelta(days=30)),
                      "spec": {"hard": {"requests.cpu": "6", "requests.memory": "16Gi", "limits.cpu": "14",
                                        "limits.memory": "24Gi", "pods": "40"}},
                      "status": {"hard": {"requests.cpu": "6", "requests.memory": "16Gi", "limits.cpu": "14",
                                          "limits.memory": "24Gi", "pods": "40"},
                                 "used": {"requests.cpu": "6", "requests.memory": "9216Mi", "limits.cpu": "12",
                                          "limits.memory": "13824Mi", "pods": "15"}}})
    s.objects.append({"apiVersion": "v1", "kind": "LimitRange",
                      "metadata": kit.metadata("storefront-defaults", ns, old + timedelta(days=30)),
                      "spec": {"limits": [{"type": "Container", "default": {"cpu": "500m", "memory": "512Mi"},
                                           "defaultRequest": {"cpu": "100m", "memory": "128Mi"}}]}})
    # the other users of the quota: cart-api, search-proxy and web-bff, 2 x 250m each: 1.5 + 9 x 500m = 6
    _, _, cart = kit.app(s, ns, "cart-api", "eu.gcr.io/kettle-prod/cart-api:2026.11.20-1", nodes, replicas=2, revision=71,
                         port=8000, rolled=timedelta(days=3), requests={"cpu": "250m", "memory": "512Mi"},
                         limits={"cpu": "500m", "memory": "1Gi"})
    _, _, _search = kit.app(s, ns, "search-proxy", "eu.gcr.io/kettle-prod/search-proxy:1.9.4", nodes[2:], replicas=2,
                           revision=14, port=8080, rolled=timedelta(days=6), requests={"cpu": "250m", "memory": "256Mi"},
                           limits={"cpu": "500m", "memory": "512Mi"})
    _, _, bff = kit.app(s, ns, "web-bff", "eu.gcr.io/kettle-prod/web-bff:2026.11.28-2", nodes[1:], replicas=2, revision=203,
                        port=3000, rolled=timedelta(hours=22), requests={"cpu": "250m", "memory": "384Mi"},
                        limits={"cpu": "500m", "memory": "768Mi"})
    # events
    s.objects.append(kit.event(ns, "HorizontalPodAutoscaler", "catalog-api", "SuccessfulRescale",
                               "New size: 16; reason: cpu resource utilization (percentage of request) above target",
                               peak + timedelta(minutes=6), peak + timedelta(minutes=6), source="horizontal-pod-autoscaler"))
    s.objects.append(kit.event(ns, "HorizontalPodAutoscaler", "catalog-api", "SuccessfulRescale",
                               "New size: 9; reason: cpu resource utilization (percentage of request) above target",
                               peak + timedelta(minutes=2), peak + timedelta(minutes=2), source="horizontal-pod-autoscaler"))
    s.objects.append(kit.event(ns, "Deployment", "catalog-api", "ScalingReplicaSet",
                               f"Scaled up replica set {rsname} to 16 from 9", peak + timedelta(minutes=6),
                               peak + timedelta(minutes=6), source="deployment-controller"))
    s.objects.append(kit.event(ns, "ReplicaSet", rsname, "FailedCreate", f"Error creating: {quota_msg}",
                               peak + timedelta(minutes=6), now - timedelta(minutes=1), count=47, type_="Warning",
                               source="replicaset-controller"))
    s.objects.append(kit.event(ns, "Pod", bff[0]["metadata"]["name"], "Unhealthy",
                               "Readiness probe failed: Get \"http://10.80.3.14:3000/healthz\": context deadline exceeded",
                               now - timedelta(minutes=12), now - timedelta(minutes=11), count=2, type_="Warning"))
    # logs: gunicorn access + slow warnings
    for p in pods:
        name = p["metadata"]["name"]
        lines = []
        at = max(now - timedelta(hours=2), parse(p["metadata"]["creationTimestamp"]) + timedelta(seconds=20))
        while at < now:
            busy = at > peak
            lat = rnd.randint(900, 3600) if busy and rnd.random() < 0.4 else rnd.randint(30, 220)
            path = rnd.choice(["/v2/products/{sku}", "/v2/categories/{id}/products", "/v2/promotions/active", "/v2/products/search"])
            lines.append(f'10.80.{rnd.randint(0, 5)}.{rnd.randint(2, 250)} - - [{at.strftime("%d/%b/%Y:%H:%M:%S +0000")}] "GET {path} HTTP/1.1" 200 {rnd.randint(800, 40000)} "-" "web-bff/2026.11.28" {lat}ms')
            if busy and rnd.random() < 0.08:
                lines.append(f"[{at.strftime('%Y-%m-%d %H:%M:%S +0000')}] [1] [WARNING] Worker timeout budget low: request queue depth {rnd.randint(12, 60)}")
                s.docs.append(kit.log_doc(at, f"request queue depth {rnd.randint(12, 60)}, worker timeout budget low", "warning",
                                          "catalog-api", ns, name, "catalog-api"))
            if rnd.random() < 0.25:
                s.docs.append(kit.log_doc(at, f"GET {path} 200 {lat}ms", "info", "catalog-api", ns, name, "catalog-api",
                                          http__response__status_code=200, event__duration=lat * 1_000_000))
            at += timedelta(seconds=rnd.randint(10, 40) if busy else rnd.randint(30, 90))
        s.log(ns, name, "catalog-api", lines)
    kit.chatter(s, ns, "cart-api", cart, "cart-api",
                lambda at, r: ("info", f"cart updated items={r.randint(1, 30)} took={r.randint(8, 60)}ms"), seed=81)
    kit.chatter(s, ns, "web-bff", bff, "web-bff",
                lambda at, r: ("warn" if at > peak and r.random() < 0.2 else "info",
                               f"upstream catalog-api slow {r.randint(1200, 3400)}ms" if at > peak and r.random() < 0.2
                               else f"render /c/{r.choice(['fruit', 'bakery', 'dairy', 'drinks'])} 200"), seed=82)
    # metrics: cpu usage, throttling, latency histogram, replicas
    cpu = Series("container_cpu_usage_seconds_total", "counter", "Cumulative cpu time consumed")
    thr = Series("container_cpu_cfs_throttled_periods_total", "counter", "Number of throttled period intervals")
    per = Series("container_cpu_cfs_periods_total", "counter", "Number of elapsed enforcement period intervals")
    hist = kit.Histogram("http_request_duration_seconds", "Request latency")
    replicas = Series("kube_deployment_status_replicas", "gauge", "The number of replicas per deployment")
    desired = Series("kube_horizontalpodautoscaler_status_desired_replicas", "gauge", "Desired number of replicas of pods managed by this autoscaler")
    times = kit.steps(now - timedelta(hours=2), now, timedelta(minutes=1))
    for p in pods:
        name = p["metadata"]["name"]
        born = parse(p["metadata"]["creationTimestamp"])
        ptimes = [t for t in times if t >= born]
        lab = {"namespace": ns, "pod": name, "container": "catalog-api"}
        load = lambda at: 0.92 + rnd.uniform(-0.05, 0.06) if at > peak else 0.28 + rnd.uniform(-0.04, 0.04)  # noqa: E731
        kit.counter_walk(cpu, lab, ptimes, load, start=4.0e4 if born < peak else 0)
        kit.counter_walk(per, lab, ptimes, lambda at: 10.0, start=4.3e6 if born < peak else 0)
        kit.counter_walk(thr, lab, ptimes, lambda at: 2.1 + rnd.uniform(0, 0.6) if at > peak else 0.05, start=1.1e4 if born < peak else 0)
    edges = ["0.1", "0.25", "0.5", "1", "2.5", "5", "+Inf"]
    totals = {e: 0.0 for e in edges}
    count = total = 0.0
    hb = {"namespace": ns, "service": "catalog-api"}
    prev = None
    for at in times:
        if prev is not None:
            busy = at > peak
            n = 60 * (95 if busy else 40)
            share = {"0.1": 0.2, "0.25": 0.35, "0.5": 0.5, "1": 0.62, "2.5": 0.9, "5": 0.99, "+Inf": 1.0} if busy else \
                {"0.1": 0.55, "0.25": 0.93, "0.5": 0.985, "1": 0.997, "2.5": 1.0, "5": 1.0, "+Inf": 1.0}
            for e in edges:
                totals[e] += n * share[e]
            count += n
            total += n * (0.95 if busy else 0.11)
        hist.add(hb, at, {e: round(totals[e]) for e in edges}, round(count), round(total, 3))
        prev = at
    s.metrics += [cpu, per, thr, hist]
    for at in times:
        replicas.add({"namespace": ns, "deployment": "catalog-api"}, at, 9 if at > peak + timedelta(minutes=3) else 6)
        desired.add({"namespace": ns, "horizontalpodautoscaler": "catalog-api"}, at,
                    16 if at > peak + timedelta(minutes=6) else 9 if at > peak + timedelta(minutes=2) else 6)
    s.metrics += [replicas, desired]
    return s

