"""Shape 3, network: an Ingress path's pathType went from Prefix to Exact; every sub-path gets
the controller's default-backend 404 while / still works; the backend's rollout is blamed."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from . import _kit as k

SID = "partner-api-404-everywhere"
HOST = "partners.example.com"
SANDBOX = "sandbox.partners.example.com"


def _ingress(s: k.Story, ns: str, name: str, host: str, svc: str, path_type: str,
             created: datetime, generation: int, chart: str) -> k.Obj:
    return s.add({
        "apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
        "metadata": k.meta(name, ns, created, s.uid(), generation=generation,
                           labels={"app.kubernetes.io/managed-by": "Helm",
                                   "app.kubernetes.io/instance": chart.rsplit("-", 1)[0],
                                   "helm.sh/chart": chart},
                           annotations={"cert-manager.io/cluster-issuer": "letsencrypt-prod",
                                        "meta.helm.sh/release-name": chart.rsplit("-", 1)[0],
                                        "meta.helm.sh/release-namespace": ns,
                                        "nginx.ingress.kubernetes.io/proxy-body-size": "8m",
                                        "nginx.ingress.kubernetes.io/proxy-read-timeout":
                                        "30"}),
        "spec": {
            "ingressClassName": "nginx",
            "tls": [{"hosts": [host], "secretName": host.replace(".", "-") + "-tls"}],
            "rules": [{"host": host, "http": {"paths": [
                {"path": "/", "pathType": path_type,
                 "backend": {"service": {"name": svc, "port": {"number": 8080}}}}]}}],
        },
        "status": {"loadBalancer": {"ingress": [{
            "hostname": "k8s-ingressn-ingressn-5e1f0c2b7a-3f9d8e41c2a7b6d0.elb.eu-west-1."
                        "amazonaws.com"}]}},
    })


def build(root: Path) -> None:
    s = k.Story(SID, "2026-06-02T13:05:00Z", seed=5503)
    old = s.ago(days=400)
    nodes = k.eks_nodes(s, [
        ("eu-west-1a", "m6i.xlarge", "4", "16011004Ki", "general-a"),
        ("eu-west-1b", "m6i.xlarge", "4", "16011004Ki", "general-b"),
        ("eu-west-1c", "m6i.xlarge", "4", "16011004Ki", "general-c"),
        ("eu-west-1a", "m6i.xlarge", "4", "16011004Ki", "general-a"),
    ], old, s.ago(days=6, hours=8))
    k.standard_cluster(s, nodes, old, s.ago(days=6, hours=7))
    for ns, team in (("partner-gateway", "integrations"), ("partner-sandbox", "integrations"),
                     ("orders", "orders"), ("ingress-nginx", "platform"),
                     ("cert-manager", "platform")):
        k.namespace(s, ns, old, {"team": team})
    reg = "482913307715.dkr.ecr.eu-west-1.amazonaws.com"
    app_roll = s.ago(31, seconds=40)
    edge_change = s.ago(28, seconds=5)

    def api(tag: str) -> k.Obj:
        return k.container(
            "partner-api", f"{reg}/integrations/partner-api:{tag}", port=8080, cpu="250m",
            mem="384Mi", mem_limit="768Mi",
            env=[{"name": "SPRING_PROFILES_ACTIVE", "value": "prod"},
                 {"name": "ORDERS_URL", "value": "http://orders-service.orders.svc:8080"}],
            readiness=k.http_probe("/healthz/ready", 8080, delay=10, period=5),
            liveness=k.http_probe("/healthz/live", 8080, delay=40, period=10))

    lab = {"app.kubernetes.io/name": "partner-api"}
    pa = k.deployment(
        s, "partner-gateway", "partner-api", [api("3.4.0")], replicas=3, nodes=nodes[:3],
        created=old, pods_since=app_roll, revision=42, labels=lab,
        old_revisions=[(41, s.ago(days=6), [api("3.3.2")])], cpu=0.2, mem=420 * k.MiB,
        annotations={"meta.helm.sh/release-name": "partner-api"},
        rollout_done=app_roll + timedelta(seconds=95))
    new_h = pa.rs[-1]["metadata"]["name"].rsplit("-", 1)[1]
    old_h = pa.rs[0]["metadata"]["name"].rsplit("-", 1)[1]
    for i, msg in enumerate([
            f"Scaled up replica set partner-api-{new_h} to 1",
            f"Scaled down replica set partner-api-{old_h} to 2 from 3",
            f"Scaled up replica set partner-api-{new_h} to 2 from 1",
            f"Scaled down replica set partner-api-{old_h} to 1 from 2",
            f"Scaled up replica set partner-api-{new_h} to 3 from 2",
            f"Scaled down replica set partner-api-{old_h} to 0 from 1"]):
        s.event("Deployment", "partner-gateway", "partner-api", "ScalingReplicaSet", msg,
                first=app_roll + timedelta(seconds=31 * i), component="deployment-controller")
    k.service(s, "partner-gateway", "partner-api", lab, 8080, 8080, old, pods=pa.pods)
    _ingress(s, "partner-gateway", "partner-api", HOST, "partner-api", "Exact", old, 9,
             "partner-edge-1.6.0")
    s.event("Ingress", "partner-gateway", "partner-api", "Sync", "Scheduled for sync",
            first=edge_change, count=2, component="nginx-ingress-controller",
            api_version="networking.k8s.io/v1")

    # sandbox: same 3.4.0 since yesterday, Prefix ingress, working
    sb = k.deployment(
        s, "partner-sandbox", "partner-api", [api("3.4.0")], replicas=1, nodes=nodes[3:],
        created=old, pods_since=s.ago(hours=22), revision=57, labels=lab,
        old_revisions=[(56, s.ago(days=6), [api("3.3.2")])], cpu=0.05, mem=390 * k.MiB)
    k.service(s, "partner-sandbox", "partner-api", lab, 8080, 8080, old, pods=sb.pods)
    _ingress(s, "partner-sandbox", "partner-api", SANDBOX, "partner-api", "Prefix", old, 8,
             "partner-edge-1.5.3")

    # ----- orders (internal backend of partner-api) and its client job -----
    osvc = k.deployment(
        s, "orders", "orders-service",
        [k.container("orders", f"{reg}/orders/orders-service:8.2.1", port=8080, cpu="500m",
                     mem="768Mi", mem_limit="1536Mi", readiness=k.http_probe("/ready", 8080))],
        replicas=3, nodes=nodes, created=old, pods_since=s.ago(days=3), cpu=0.3,
        mem=900 * k.MiB)
    k.service(s, "orders", "orders-service", {"app.kubernetes.io/name": "orders-service"},
              8080, 8080, old, pods=osvc.pods)
    k.http_logs(s, osvc, "orders-service", s.ago(65), s.now, 70.0, [
        ("GET", "/internal/orders/{id}", 200, 50), ("POST", "/internal/orders", 201, 20),
        ("GET", "/internal/orders/{id}", 404, 2)],
        fmt="{method} {path} {status} {ms}ms")
    # a Pending reporting pod waiting on a PVC that never binds
    s.add({"apiVersion": "v1", "kind": "PersistentVolumeClaim",
           "metadata": k.meta("orders-report-scratch", "orders", s.ago(50), s.uid()),
           "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": "gp3-encrypted",
                    "resources": {"requests": {"storage": "200Gi"}}, "volumeMode": "Filesystem"},
           "status": {"phase": "Pending"}})
    rep = k.deployment(
        s, "orders", "orders-report",
        [k.container("report", f"{reg}/orders/orders-report:1.2.0", cpu="1", mem="2Gi",
                     mounts=[{"name": "scratch", "mountPath": "/scratch"}])],
        replicas=1, nodes=nodes[:1], created=s.ago(50), pods_since=s.ago(50),
        volumes=[{"name": "scratch",
                  "persistentVolumeClaim": {"claimName": "orders-report-scratch"}}])
    rp = rep.pods[0]
    rp["spec"].pop("nodeName")
    msg = ("0/4 nodes are available: pod has unbound immediate PersistentVolumeClaims. "
           "preemption: 0/4 nodes are available: 4 Preemption is not helpful for scheduling.")
    rp["status"] = {"phase": "Pending", "qosClass": "Burstable", "conditions": [
        {"type": "PodScheduled", "status": "False", "reason": "Unschedulable",
         "message": msg, "lastTransitionTime": k.iso(s.ago(50))}]}
    rep.recs[0].metrics = False
    rep.obj["status"].update({"readyReplicas": 0, "availableReplicas": 0,
                              "unavailableReplicas": 1})
    rep.obj["status"]["conditions"][0].update(
        {"status": "False", "reason": "MinimumReplicasUnavailable",
         "message": "Deployment does not have minimum availability."})
    rep.rs[-1]["status"].update({"readyReplicas": 0, "availableReplicas": 0})
    s.event("Pod", "orders", rp["metadata"]["name"], "FailedScheduling", msg, first=s.ago(50),
            last=s.ago(5), count=10, type_="Warning", component="default-scheduler")
    s.event("PersistentVolumeClaim", "orders", "orders-report-scratch", "ProvisioningFailed",
            'storageclass.storage.k8s.io "gp3-encrypted" not found', first=s.ago(50),
            last=s.ago(2), count=202, type_="Warning",
            component="persistentvolume-controller")

    # ----- cert-manager with an old restart -----
    cm = k.deployment(
        s, "cert-manager", "cert-manager",
        [k.container("cert-manager-controller", "quay.io/jetstack/cert-manager-controller:"
                     "v1.15.3", port=9402, cpu="50m", mem="128Mi")],
        replicas=1, nodes=nodes[1:2], created=old, pods_since=s.ago(days=5), cpu=0.01,
        mem=90 * k.MiB)
    cst = cm.pods[0]["status"]["containerStatuses"][0]
    cst["restartCount"] = 2
    cst["lastState"] = {"terminated": k.terminated("Error", 1, s.ago(days=5),
                                                   s.ago(days=3, hours=2))}
    cst["state"] = {"running": {"startedAt": k.iso(s.ago(days=3, hours=2, seconds=-20))}}
    cm.recs[0].restarts = 2
    k.lines(s, cm, "cert-manager", s.ago(65), s.now, 400.0, [
        ("info", 'certificates-trigger: Certificate does not need re-issuance '
                 'resource_name="partners-example-com-tls"', 1),
        ("error", 'error ensuring Challenge resource: Operation cannot be fulfilled on '
                  'orders.acme.cert-manager.io "legacy-example-net-1-2719452118": the object '
                  'has been modified; please apply your changes to the latest version', 1),
    ])

    # ----- ingress-nginx controller -----
    ing = k.deployment(
        s, "ingress-nginx", "ingress-nginx-controller",
        [k.container("controller", "registry.k8s.io/ingress-nginx/controller:v1.11.2",
                     port=80, cpu="200m", mem="256Mi", mem_limit="1Gi",
                     args=["/nginx-ingress-controller", "--publish-service="
                           "$(POD_NAMESPACE)/ingress-nginx-controller",
                           "--election-id=ingress-nginx-leader",
                           "--controller-class=k8s.io/ingress-nginx",
                           "--ingress-class=nginx"])],
        replicas=2, nodes=nodes[:2], created=old, pods_since=s.ago(days=4), cpu=0.15,
        mem=260 * k.MiB, labels={"app.kubernetes.io/name": "ingress-nginx",
                                 "app.kubernetes.io/component": "controller"})
    for p in ing.pods:
        pn = p["metadata"]["name"]
        t0 = edge_change + timedelta(milliseconds=s.rng.randint(40, 400))
        for i, m in enumerate([
            'store.go:440] "Found valid IngressClass" ingress="partner-gateway/partner-api" '
            'ingressclass="nginx"',
            'event.go:377] Event(v1.ObjectReference{Kind:"Ingress", '
            'Namespace:"partner-gateway", Name:"partner-api", APIVersion:"networking.k8s.io/v1"'
            ', ResourceVersion:"318842077", FieldPath:""}): type: \'Normal\' reason: \'Sync\' '
            'Scheduled for sync',
            'controller.go:193] "Configuration changes detected, backend reload required"',
            'controller.go:213] "Backend successfully reloaded"',
            'event.go:377] Event(v1.ObjectReference{Kind:"Pod", Namespace:"ingress-nginx", '
            f'Name:"{pn}", ...}}): type: \'Normal\' reason: \'RELOAD\' NGINX reload triggered '
            'due to a change in configuration',
        ]):
            t = t0 + timedelta(milliseconds=180 * i)
            s.log(t, "ingress-nginx", pn, "controller", "ingress-nginx", "info",
                  f"I{t.strftime('%m%d %H:%M:%S.%f')}       7 {m}")

    routes = [("GET", "/v1/orders?status=open&page={n}", 30), ("GET", "/v1/orders/{id}", 25),
              ("GET", "/v1/shipments/{id}/tracking", 18), ("POST", "/v1/webhooks/ack", 8),
              ("PUT", "/v1/orders/{id}/status", 6), ("GET", "/v1/catalog/items?since={id}", 6),
              ("GET", "/", 3)]
    agents = ["acme-logistics-sync/4.1", "python-requests/2.32.3", "Go-http-client/2.0",
              "parcelhub-connector/2.7.0", "okhttp/4.12.0"]
    ready_ips = [p["status"]["podIP"] for p in pa.pods]
    n404 = 0
    n200 = 0
    for t in s.spread(s.ago(65), s.now, 9.0):
        method, path, _ = s.rng.choices(routes, [r[2] for r in routes])[0]
        path = path.format(n=s.rng.randint(1, 40), id=s.rng.randint(100000, 999999))
        ua = s.rng.choice(agents)
        client = f"{s.rng.choice([52, 18, 34, 3])}.{s.rng.randint(1, 250)}." \
                 f"{s.rng.randint(1, 250)}.{s.rng.randint(1, 250)}"
        ctrl = s.rng.choice(ing.pods)["metadata"]["name"]
        rt = s.rng.lognormvariate(-3.2, 0.5)
        stamp = t.strftime("%d/%b/%Y:%H:%M:%S +0000")
        if t >= edge_change and path != "/":
            status = 404
            n404 += 1
            tail = "0.000 [upstream-default-backend] [] 127.0.0.1:8181 146 0.000 404"
            rt = 0.0
            size = 146
        else:
            status = s.rng.choices([200, 401, 499], [95, 3, 1])[0]
            n200 += 1
            size = s.rng.randint(180, 9000)
            tail = (f"{rt:.3f} [partner-gateway-partner-api-8080] [] "
                    f"{s.rng.choice(ready_ips)}:8080 {size} {max(rt - 0.001, 0):.3f} {status}")
        line = (f'{client} - - [{stamp}] "{method} {path} HTTP/2.0" {status} {size} "-" '
                f'"{ua}" {s.rng.randint(40, 900)} {tail} {s.hexid(32)}')
        s.log(t, "ingress-nginx", ctrl, "controller", "ingress-nginx", "info", line,
              http__request__method=method, url__path=path.split("?")[0],
              http__response__status_code=status, url__domain=HOST)
    for t in s.spread(s.ago(65), s.now, 60.0):
        ctrl = s.rng.choice(ing.pods)["metadata"]["name"]
        stamp = t.strftime("%d/%b/%Y:%H:%M:%S +0000")
        path = s.rng.choice(["/v1/orders/123456", "/v1/shipments/777001/tracking", "/"])
        s.log(t, "ingress-nginx", ctrl, "controller", "ingress-nginx", "info",
              f'3.249.{s.rng.randint(1, 250)}.{s.rng.randint(1, 250)} - - [{stamp}] "GET '
              f'{path} HTTP/1.1" 200 {s.rng.randint(200, 3000)} "-" "sandbox-probe/1.0" 120 '
              f'0.021 [partner-sandbox-partner-api-8080] [] {sb.pods[0]["status"]["podIP"]}:'
              f'8080 812 0.020 200 {s.hexid(32)}', http__response__status_code=200,
              url__domain=SANDBOX)
    for t in s.spread(s.ago(65), s.now, 240.0):
        ctrl = s.rng.choice(ing.pods)["metadata"]["name"]
        s.log(t, "ingress-nginx", ctrl, "controller", "ingress-nginx", "warn",
              f'{t.strftime("%Y/%m/%d %H:%M:%S")} [error] 31#31: *{s.rng.randint(10**6, 10**7)}'
              ' upstream prematurely closed connection while reading response header from '
              'upstream, client: 10.20.33.7, server: shop.example.com, request: "GET /api/cart '
              'HTTP/1.1", upstream: "http://10.42.7.19:3000/api/cart", host: "shop.example.com"')

    # ----- partner-api application lines: only / and probes after the change -----
    for p in pa.pods:
        pn = p["metadata"]["name"]
        boot = k.parse(p["metadata"]["creationTimestamp"]) + timedelta(seconds=3)
        for i, m in enumerate([
            "Starting PartnerApiApplication v3.4.0 using Java 21.0.3 with PID 1",
            'The following 1 profile is active: "prod"',
            "Tomcat started on port 8080 (http) with context path '/'",
            "Started PartnerApiApplication in 14.882 seconds (process running for 15.61)",
        ]):
            s.log(boot + timedelta(seconds=4 * i), "partner-gateway", pn, "partner-api",
                  "partner-api", "info", m, service__version="3.4.0")
        for t in s.spread(k.parse(p["metadata"]["creationTimestamp"]) + timedelta(seconds=20),
                          s.now, 16.0):
            if t < edge_change:
                method, path = s.rng.choice([
                    ("GET", "/v1/orders"), ("GET", "/v1/orders/{id}"),
                    ("GET", "/v1/shipments/{id}/tracking"), ("POST", "/v1/webhooks/ack"),
                    ("PUT", "/v1/orders/{id}/status"), ("GET", "/v1/catalog/items")])
                status = 200
            else:
                if s.rng.random() < 0.85:
                    continue
                method, path, status = "GET", "/", 200
            s.log(t, "partner-gateway", pn, "partner-api", "partner-api", "info",
                  f'request completed method={method} uri="{path}" status={status} '
                  f"duration={s.rng.randint(4, 90)}ms "
                  f"partner={s.rng.choice(['acme', 'parcelhub'])}",
                  http__response__status_code=status, url__path=path,
                  service__version="3.4.0")
        k.lines(s, [p], "partner-api", app_roll, s.now, 420.0, [
            ("warn", "deprecated header X-Partner-Key used by client acme-logistics; switch to "
                     "Authorization: Bearer", 3),
            ("warn", "HikariPool-1 - Thread starvation or clock leap detected (housekeeper "
                     "delta=1m{n}ms).", 1),
        ])
    for t in s.spread(s.ago(65), s.now, 70.0):
        s.log(t, "partner-sandbox", sb.pods[0]["metadata"]["name"], "partner-api", "partner-api",
              "info", f'request completed method=GET uri="/v1/orders/{s.rng.randint(1, 9999)}" '
              f"status=200 duration={s.rng.randint(4, 60)}ms partner=sandbox",
              service__version="3.4.0")

    # ----- partner-sync in orders calls the public API and gets 404 -----
    ps = k.deployment(
        s, "orders", "partner-sync",
        [k.container("partner-sync", f"{reg}/orders/partner-sync:2.0.6", cpu="50m",
                     mem="128Mi",
                     env=[{"name": "PARTNER_API_BASE", "value": f"https://{HOST}"}])],
        replicas=1, nodes=nodes[2:3], created=old, pods_since=s.ago(days=2), cpu=0.02,
        mem=80 * k.MiB)
    pn = ps.pods[0]["metadata"]["name"]
    for t in s.spread(s.ago(65), s.now, 45.0):
        ident = s.rng.randint(100000, 999999)
        if t < edge_change:
            s.log(t, "orders", pn, "partner-sync", "partner-sync", "info",
                  f"pushed status update for order {ident} to partner parcelhub (200)")
        else:
            s.log(t, "orders", pn, "partner-sync", "partner-sync", "error",
                  f"partner API call failed: PUT https://{HOST}/v1/orders/{ident}/status -> "
                  "404 Not Found (body: <html><head><title>404 Not Found</title></head>...); "
                  "will retry", http__response__status_code=404, error__type="HTTPError")

    # ----- metrics -----
    s.pod_metrics()

    for p in ing.pods:
        base = {"controller_class": "k8s.io/ingress-nginx", "controller_namespace":
                "ingress-nginx", "controller_pod": p["metadata"]["name"], "host": HOST,
                "method": "GET"}
        s.counter("nginx_ingress_controller_requests_total",
                  "The total number of client requests",
                  {**base, "exported_namespace": "partner-gateway", "ingress": "partner-api",
                   "exported_service": "partner-api", "path": "/", "status": "200"},
                  lambda t: 0.75 if t < edge_change else 0.02)
        s.counter("nginx_ingress_controller_requests_total",
                  "The total number of client requests", {**base, "status": "404"},
                  lambda t: 0.75 if t >= edge_change else 0.0, start=12)
        s.counter("nginx_ingress_controller_requests_total",
                  "The total number of client requests",
                  {**base, "host": SANDBOX, "exported_namespace": "partner-sandbox",
                   "ingress": "partner-api", "exported_service": "partner-api", "path": "/",
                   "status": "200"}, lambda t: 0.01)
    for p in pa.pods:
        s.counter("http_server_requests_total",
                  "Total HTTP server requests handled",
                  {"namespace": "partner-gateway", "pod": p["metadata"]["name"],
                   "method": "GET", "status": "200", "uri": "/v1/orders/{id}",
                   "outcome": "SUCCESS"},
                  lambda t: 0.45 if t < edge_change else 0.0,
                  begin=k.parse(p["metadata"]["creationTimestamp"]))
        s.counter("http_server_requests_total",
                  "Total HTTP server requests handled",
                  {"namespace": "partner-gateway", "pod": p["metadata"]["name"],
                   "method": "GET", "status": "200", "uri": "/", "outcome": "SUCCESS"},
                  lambda t: 0.01, begin=k.parse(p["metadata"]["creationTimestamp"]))
    del n404, n200

    k.scenario(
        s, title="Partner API returns 404 for every call",
        report=(
            "partners are screaming: every call to partners.example.com returns 404 since about "
            "half an hour ago. partner-api 3.4.0 went out right before that, so I think the new "
            "version broke its routes (the / endpoint still answers with the version JSON). "
            "Can you check the partner-api rollout and whether we should roll back to 3.3.2?\n"
        ),
        category="network", kind="Service", ns="partner-gateway", name="partner-api",
        evidence=["pathType: Exact", "[upstream-default-backend]"],
        fix=("The partner-edge 1.6.0 values changed the partner-api Ingress path / from "
             "pathType Prefix to Exact, so only / matches and every /v1/... request falls to "
             "the controller's default backend (404). Set pathType back to Prefix (as the "
             "sandbox Ingress has) and re-sync; partner-api 3.4.0 is healthy."),
    )
    s.write(root)
    k.check_evidence(s, root)
