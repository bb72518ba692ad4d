"""Scenario 8: partner-sync 3.6.0 stopped sending SNI to the shared ingress.

3.6.0 moved its HTTP client to a pooled connection manager that dials the ingress load
balancer's pre-resolved address; sockets created from an InetAddress carry no server name,
so ingress-nginx answers with its default certificate (the internal-CA wildcard for
``*.ams1.acme.io``, trusted but for another name) and the client's hostname verification
fails after the handshake. Every SNI-capable client (browsers, the blackbox
probe) still gets the valid partner-hub certificate.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from ._k8s import (
    PodSpecBits,
    app,
    container,
    deployment,
    meta,
    namespace,
    node,
    old_restart,
    owner_ref,
    pod,
    replicaset,
)
from ._kit import Story, accumulate, at, grid, iso, mins

NS = "integrations"
REG = "harbor.acme.io/integrations"
HOST = "partner-hub.internal.acme.io"
LB = "10.20.14.30"
ERR = (f"javax.net.ssl.SSLPeerUnverifiedException: Certificate for <{HOST}> doesn't match any "
       "of the subject alternative names: [*.ams1.acme.io, ams1.acme.io]")


def build() -> Story:
    """Build the scenario."""
    now = at("2026-12-02T11:15:00Z")
    release = at("2026-12-01T16:40:00Z")
    s = Story(
        "partner-stock-feed-stale", "Partner stock feed stale since yesterday", now,
        "partners are complaining our stock levels on partner-hub haven't moved since "
        "yesterday afternoon. cert-manager renewed the partner-hub certificate yesterday, "
        "maybe the new cert is broken? partner-hub itself answers fine in the browser.",
        "certificate", {"kind": "Deployment", "namespace": NS, "name": "partner-sync"},
        ["doesn't match any of the subject alternative names: [*.ams1.acme.io, ams1.acme.io]",
         "PARTNER_HUB_CONNECT_ADDRESS", "(pre-resolved)", "partner-sync:3.6.0",
         "--default-ssl-certificate=ingress-nginx/ams1-wildcard-tls"],
        "Make partner-sync send SNI again: build its TLS sockets with the hostname (layered "
        "socket with host name, or drop PARTNER_HUB_CONNECT_ADDRESS and dial by name), or roll "
        "back to 3.5.2. Adding partner-hub.internal.acme.io to ingress-nginx's default "
        "certificate would only hide it.",
        seed=5808)
    rng = s.rng
    for ns in (NS, "ingress-nginx", "cert-manager", "partner-hub", "inventory", "default"):
        s.add(namespace(s, ns, now - timedelta(days=700)))
    ips: dict[str, str] = {}
    for i in range(6):
        n = f"prod-k8s-node-{i + 1:02d}"
        ips[n] = f"10.20.8.{21 + i}"
        s.add(node(s, n, now - timedelta(days=90 + i), ip=ips[n],
                   os_image="Rocky Linux 9.4 (Blue Onyx)",
                   kernel="5.14.0-427.22.1.el9_4.x86_64", kubelet="v1.30.5",
                   runtime="containerd://1.7.22",
                   labels={"node-role.kubernetes.io/worker": "", "site": "ams1"}))
    nodes = list(ips)
    img = f"{REG}/partner-sync:3.6.0"
    env = [{"name": "PARTNER_HUB_URL", "value": f"https://{HOST}"},
           {"name": "PARTNER_HUB_CONNECT_ADDRESS", "value": LB},
           {"name": "SYNC_INTERVAL", "value": "5m"},
           {"name": "JAVA_TOOL_OPTIONS", "value": "-XX:MaxRAMPercentage=75"}]
    cs = [container("partner-sync", img, port=8080, cpu="250m", memory="768Mi", env=env,
                    probe_path="/actuator/health/liveness")]
    d, duid = deployment(
        s, NS, "partner-sync", labels={"app": "partner-sync"}, containers=cs, replicas=2,
        ready=2, created=now - timedelta(days=500), revision=27, generation=27, changed=release,
        annotations={"kubernetes.io/change-cause": "3.6.0: partner-hub client on pooled "
                     "connection manager with pre-resolved LB address (PARTNERHUB-218)"})
    rs, rsuid = replicaset(s, NS, "partner-sync", duid, "6d9b7f5c8f", containers=cs, replicas=2,
                           ready=2, revision=27, created=release, app="partner-sync")
    old_cs = [container("partner-sync", f"{REG}/partner-sync:3.5.2", port=8080, cpu="250m",
                        memory="768Mi", env=env[:1] + env[2:])]
    rs_old, _ = replicaset(s, NS, "partner-sync", duid, "5c7f8b6d9c", containers=old_cs,
                           replicas=0, ready=0, revision=26, app="partner-sync",
                           created=now - timedelta(days=6))
    s.add(d, rs, rs_old)
    for i in range(2):
        pn = f"partner-sync-6d9b7f5c8f-{s.suffix()}"
        ip = f"10.244.3.{51 + i * 17}"
        st = release + mins(i)
        s.add(pod(s, NS, pn, PodSpecBits(cs, {"app": "partner-sync",
                                              "pod-template-hash": "6d9b7f5c8f"}),
                  node_name=nodes[i * 2], ip=ip, start=st, host_ip=ips[nodes[i * 2]],
                  owner=owner_ref("ReplicaSet", rs["metadata"]["name"], rsuid)))
        head = [f"{iso(st)} INFO  c.a.i.p.Application - partner-sync 3.6.0 starting (Java "
                "17.0.12, Spring Boot 3.2.9)",
                f"{iso(st)} INFO  c.a.i.p.http.HubClientFactory - connection manager ready: "
                f"maxTotal=50, target {HOST} via {LB}:443 (pre-resolved)"]
        body = []
        t = st + mins(1)
        while t < now:
            body.append(f"{iso(t)} ERROR c.a.i.p.SyncJob - stock sync to partner-hub failed: "
                        f"{ERR}")
            s.log(t, NS, pn, "partner-sync", "partner-sync", "error",
                  f"stock sync to partner-hub failed: {ERR}", error__type=ERR.split(":")[0])
            if rng.random() < 0.3:
                s.log(t + timedelta(seconds=1), NS, pn, "partner-sync", "partner-sync",
                      "warning", "sync run aborted, 0 of 1843 SKUs pushed, next run in 5m")
            t += mins(5)
        s.pod_log(NS, pn, "partner-sync", head + body[-120:])
        for ln in head:
            s.log(st, NS, pn, "partner-sync", "partner-sync", "info", ln.split(" - ", 1)[1])
    old = [f"partner-sync-5c7f8b6d9c-{s.suffix()}" for _ in range(2)]
    s.chatter(NS, old, "partner-sync", "partner-sync", now - timedelta(days=2), release, 150.0, [
        (6, "info", "stock sync pushed 1843 SKUs to partner-hub in 2.{n}s"),
        (1, "warning", "partner-hub answered 429, backing off {n}s")])
    _ingress(s, nodes, ips, release)
    _noise(s, nodes, ips, release)
    _metrics(s, release)
    return s


def _ingress(s: Story, nodes: list[str], ips: dict[str, str], release: datetime) -> None:
    """ingress-nginx (default certificate: the ams1 wildcard), partner-hub, cert-manager."""
    now, rng = s.now, s.rng
    args = ["/nginx-ingress-controller",
            "--publish-service=$(POD_NAMESPACE)/ingress-nginx-controller",
            "--election-id=ingress-nginx-leader", "--controller-class=k8s.io/ingress-nginx",
            "--ingress-class=nginx", "--configmap=$(POD_NAMESPACE)/ingress-nginx-controller",
            "--default-ssl-certificate=ingress-nginx/ams1-wildcard-tls",
            "--enable-ssl-passthrough=false"]
    ic = app(s, "ingress-nginx", "ingress-nginx-controller",
             "registry.k8s.io/ingress-nginx/controller:v1.11.2", replicas=2, nodes=nodes[4:],
             node_ips=ips, created=now - timedelta(days=400), rolled=now - timedelta(days=5),
             port=443, restarts={0: old_restart("OOMKilled", 137, now - timedelta(days=5),
                                                now - timedelta(days=3, hours=2))})
    for o in s.objects:
        if o["kind"] in ("Deployment", "ReplicaSet") and o["metadata"]["name"].startswith(
                "ingress-nginx-controller"):
            o["spec"]["template"]["spec"]["containers"][0]["args"] = args
    st = (now - timedelta(days=3, hours=2)).strftime("%H:%M:%S")
    boot = [f'I1129 {st}.118       7 main.go:205] "Creating API client" '
            'host="https://10.96.0.1:443"',
            f'I1129 {st}.402       7 ssl.go:535] "loading tls certificate" '
            'path="/usr/local/certificates/cert" key="/usr/local/certificates/key"',
            f'I1129 {st}.611       7 nginx.go:271] "Starting NGINX Ingress controller"',
            f'I1129 {st}.955       7 controller.go:213] "Backend successfully reloaded"',
            f'I1129 {st}.957       7 controller.go:1211] "Using default SSL certificate" '
            'secret="ingress-nginx/ams1-wildcard-tls" cn="*.ams1.acme.io"',
            f'I1129 {st}.956       7 main.go:110] "SSL fake certificate created" '
            'file="/etc/ingress-controller/ssl/default-fake-certificate.pem"']
    s.pod_log("ingress-nginx", ic.pods[0], "ingress-nginx-controller", boot)
    s.chatter("ingress-nginx", ic.pods, "ingress-nginx", "ingress-nginx-controller",
              now - timedelta(hours=20), now, 30.0, [
        (6, "info", '{ip} - - "GET /api/v2/stock/{id} HTTP/2.0" 200 {n}12 "-" "Mozilla/5.0" '
                    f'{{n}} 0.0{{n}} [partner-hub-partner-hub-api-80] host={HOST}'),
        (4, "info", '{ip} - - "GET /api/orders/{id} HTTP/1.1" 200 {n}45 "-" "okhttp/4.12.0" '
                    '{n} 0.0{n} [shop-orders-api-80] host=orders.internal.acme.io'),
        (1, "warning", '{ip} - - "GET /wp-login.php HTTP/1.1" 404 146 "-" "curl/7.88" 0 0.000 '
                       '[upstream-default-backend] host=-')])
    t = now - timedelta(hours=20)
    while t < release:
        s.log(t + timedelta(seconds=rng.randint(0, 20)), "ingress-nginx", rng.choice(ic.pods),
              "ingress-nginx-controller", "ingress-nginx", "info",
              f'10.244.3.{rng.choice([14, 88])} - - "PUT /api/v2/stock/bulk HTTP/1.1" 200 '
              f'{rng.randint(60, 99)} "-" "Apache-HttpClient/5.2.1 (Java/17.0.12)" '
              f'{rng.randint(180000, 260000)} {rng.uniform(1.8, 2.9):.3f} '
              f'[partner-hub-partner-hub-api-80] host={HOST}')
        t += mins(5)
    hub = app(s, "partner-hub", "partner-hub-api", "harbor.acme.io/partner/partner-hub-api:4.3.1",
              replicas=2, nodes=nodes[:3], node_ips=ips, created=now - timedelta(days=500),
              rolled=now - timedelta(days=6))
    s.chatter("partner-hub", hub.pods, "partner-hub-api", "partner-hub-api",
              now - timedelta(hours=20), now, 60.0, [
        (6, "info", "GET /api/v2/stock/{id} 200 {ms}ms partner=p-{n}"),
        (1, "info", "PUT /api/v2/stock/bulk 200 {ms}ms partner=globex skus={id}")])
    s.add({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
           "metadata": meta("partner-hub-api", "partner-hub", now - timedelta(days=500), s.uid(),
                            annotations={"cert-manager.io/cluster-issuer": "acme-internal-ca"}),
           "spec": {"ingressClassName": "nginx",
                    "tls": [{"hosts": [HOST], "secretName": "partner-hub-tls"}],
                    "rules": [{"host": HOST, "http": {"paths": [{
                        "path": "/", "pathType": "Prefix", "backend": {"service": {
                            "name": "partner-hub-api", "port": {"number": 80}}}}]}}]},
           "status": {"loadBalancer": {"ingress": [{"ip": LB}]}}})
    cm = app(s, "cert-manager", "cert-manager", "quay.io/jetstack/cert-manager-controller:v1.15.3",
             replicas=1, nodes=nodes[3:], node_ips=ips, created=now - timedelta(days=600),
             rolled=now - timedelta(days=6), port=9402, svc=False)
    renew = at("2026-12-01T14:02:11Z")
    for k, m in enumerate([
            'certificates-trigger "msg"="Certificate must be re-issued" "key"="partner-hub/'
            'partner-hub-tls" "reason"="Renewing" "message"="Renewing certificate as renewal was '
            'scheduled at 2026-12-01 14:02:11 +0000 UTC"',
            'certificates-issuing "msg"="Issued certificate" "key"="partner-hub/partner-hub-tls" '
            '"resource_name"="partner-hub-tls" "not_after"="2027-03-01T14:02:11Z"']):
        s.log(renew + timedelta(seconds=4 * k), "cert-manager", cm.pods[0], "cert-manager",
              "cert-manager", "info", m)


def _noise(s: Story, nodes: list[str], ips: dict[str, str], release: datetime) -> None:
    """Stale-feed warnings, webhook-relay deploy, cert expiry warning, Pending pod."""
    now = s.now
    inv = app(s, "inventory", "inventory-api", "harbor.acme.io/inventory/inventory-api:10.4.0",
              replicas=3, nodes=nodes, node_ips=ips, created=now - timedelta(days=600),
              rolled=now - timedelta(days=4))
    s.chatter("inventory", inv.pods, "inventory-api", "inventory-api", now - timedelta(hours=20),
              now, 45.0, [(8, "info", "GET /stock/{id} 200 {ms}ms"),
                          (1, "info", "stock movement {id} applied")])
    s.chatter("inventory", inv.pods, "inventory-api", "inventory-api", release + mins(60), now,
              300.0, [(1, "warning", "partner feed export: last successful partner-sync run "
                                     f"{{n}}h ago (since {release.strftime('%H:%M')} UTC)")])
    wr = app(s, NS, "webhook-relay", f"{REG}/webhook-relay:2.1.0", replicas=2, nodes=nodes,
             node_ips=ips, created=now - timedelta(days=300), rolled=s.ago(40), revision=14)
    s.event(NS, "Deployment", "webhook-relay", "ScalingReplicaSet",
            f"Scaled up replica set {wr.pods[0].rsplit('-', 1)[0]} to 2 from 0",
            component="deployment-controller", last=s.ago(40), api="apps/v1")
    s.chatter(NS, wr.pods, "webhook-relay", "webhook-relay", s.ago(40), now, 30.0, [
        (5, "info", "relayed webhook {hex} to carrier-dhl in {ms}ms"),
        (1, "error", "carrier-ups webhook 502 from upstream, retry {n}/5")])
    s.chatter(NS, ["cert-expiry-checker-28885680-k2x9d"], "cert-expiry-checker", "checker",
              now - timedelta(hours=20), now, 1800.0, [
        (1, "warning", "x509: certificate for legacy-ftp-gw.acme.io will expire in 9 days "
                       "(2026-12-11T08:00:00Z)")])
    pn = f"edi-translator-7f5c6b8d9-{s.suffix()}"
    s.add(pod(s, NS, pn, PodSpecBits([container("edi-translator", f"{REG}/edi-translator:1.0.3")],
                                     {"app": "edi-translator"}, {"nodeSelector": {
                                         "site": "fra2"}}),
              node_name=None, ip=None, start=s.ago(120), owner=None, phase="Pending",
              ready=False, conditions=[{
                  "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
                  "lastTransitionTime": iso(s.ago(120)),
                  "message": "0/6 nodes are available: 6 node(s) didn't match Pod's node "
                             "affinity/selector."}]))
    s.event(NS, "Pod", pn, "FailedScheduling", "0/6 nodes are available: 6 node(s) didn't match "
            "Pod's node affinity/selector. preemption: 0/6 nodes are available: 6 Preemption is "
            "not helpful for scheduling.", type_="Warning", count=26, first=s.ago(59),
            last=s.ago(3), component="default-scheduler")


def _metrics(s: Story, release: datetime) -> None:
    """Sync results, ingress requests per host, blackbox TLS probes."""
    now, rng = s.now, s.rng
    ts = grid(now - timedelta(days=2), now, 300)
    for result in ("success", "failure"):
        def runs(t: datetime, r: str = result) -> float:
            return 2 / 300 if (t >= release) == (r == "failure") else 0.0
        s.metrics.counter("partner_sync_runs_total", "sync runs", {
            "namespace": NS, "service": "partner-sync", "result": result}, accumulate(ts, runs))
    for host, base in ((HOST, 1.6), ("orders.internal.acme.io", 9.0)):
        def reqs(t: datetime, h: str = host, r: float = base) -> float:
            return r * (0.8 + 0.4 * rng.random()) * (0.55 if h == HOST and t >= release else 1.0)
        s.metrics.counter("nginx_ingress_controller_requests", "requests", {
            "namespace": "ingress-nginx", "host": host, "status": "200"}, accumulate(ts, reqs))
    renewed = at("2026-12-01T14:02:11Z")
    for inst, expiry in ((f"https://{HOST}/healthz", at("2027-03-01T14:02:11Z")),
                         ("https://legacy-ftp-gw.acme.io", at("2026-12-11T08:00:00Z"))):
        lab = {"job": "blackbox", "module": "https_2xx", "instance": inst}
        s.metrics.gauge("probe_success", "probe success", lab, [(t, 1.0) for t in ts])
        s.metrics.gauge("probe_ssl_earliest_cert_expiry", "cert expiry", lab, [
            (t, float((expiry if (t >= renewed or "legacy" in inst) else
                       at("2026-12-30T14:02:11Z")).timestamp())) for t in ts])
