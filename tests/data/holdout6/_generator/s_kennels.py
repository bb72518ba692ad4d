"""Pet boarding: the platform team re-labelled the ingress-nginx namespace 36 minutes ago
(network-zone: dmz -> network-zone: public-edge, by Argo CD). The kennels namespace admits
traffic to its web app only through the NetworkPolicy allow-ingress-controller, whose
namespaceSelector still asks for network-zone: dmz; together with the default-deny policy
every connection from the controller to kennel-booking-web is dropped and users get 504s
after nginx's 10 s connect timeout. The app's pods are Ready (kubelet probes come from the
node) but receive no traffic. Red herrings: kennel-booking-web 2.8.0 rolled out ~2.5 h ago
(plausible alternative), CoreDNS upstream timeouts, a payment-provider webhook retrying."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import set_times
from tests.data.holdout2._generator.kit import app_counter, requests
from tests.data.holdout3._generator.kit3 import chatter, quiet, steady
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe

from .kit6 import Incident, NodeKind, managed, provider_nodes

ID = "kennel-bookings-gateway-timeouts"
NOW = datetime.fromisoformat("2027-04-11T08:26:00+00:00")
NS = "kennels"
REG = "europe-west4-docker.pkg.dev/pawhaven-prod/apps"
HOST = "book.pawhaven.nl"
POLICY = "allow-ingress-controller"


def build() -> Incident:
    s = Incident(
        id=ID, title="Boarding booking site returns gateway timeouts", now=NOW,
        report="""\
book.pawhaven.nl has been giving "504 Gateway Time-out" for about half an hour, the
uptime checker is red too. The booking pods in kennels all say Running and Ready.
""",
        truth=truth(
            "network", "NetworkPolicy", NS, POLICY,
            ["network-zone: dmz", "network-zone: public-edge",
             "upstream timed out (110: Operation timed out) while connecting to upstream",
             POLICY],
            "The ingress-nginx namespace was re-labelled at 07:50 (network-zone: dmz became "
            "public-edge). The NetworkPolicy kennels/allow-ingress-controller still selects "
            "namespaces with network-zone: dmz, so with default-deny-ingress nothing from the "
            "ingress controller reaches kennel-booking-web and nginx answers 504. Update the "
            "policy's namespaceSelector (e.g. kubernetes.io/metadata.name: ingress-nginx) or "
            "restore the label."))
    set_times(s, 2.75, 60)
    c = s.cluster
    relabel = NOW - timedelta(minutes=36, seconds=14)
    for name, days in (("default", 701), ("kube-system", 701), ("gke-connect", 701),
                       ("kennels", 533), ("pawhaven-payments", 402)):
        c.namespace(name, s.ago(days=days))
    edge = c.namespace("ingress-nginx", s.ago(days=701), {
        "network-zone": "public-edge", "app.kubernetes.io/managed-by": "argocd",
        "platform.pawhaven.nl/owner": "edge-team"})
    managed(edge, "argocd-controller", relabel, {"f:metadata": {"f:labels": {
        "f:network-zone": {}, "f:platform.pawhaven.nl/owner": {}}}})
    kind = NodeKind("dell-r650-32c", "32", "131585152Ki", "31500m", "127260288Ki",
                    "v1.30.5-gke.1014001", "5.15.0-1063-gke", "Ubuntu 22.04.5 LTS",
                    runtime="containerd://1.7.22-gke.0")
    nodes = provider_nodes(s, "gdc", 3, kind, days=6.4)

    # ---- the policies of the namespace
    for name, spec, days, mgr in (
            ("default-deny-ingress", {"podSelector": {}, "policyTypes": ["Ingress"]}, 533,
             "kubectl-client-side-apply"),
            (POLICY, {"podSelector": {"matchLabels": {
                "app.kubernetes.io/name": "kennel-booking-web"}},
                "policyTypes": ["Ingress"], "ingress": [{"from": [{
                    "namespaceSelector": {"matchLabels": {"network-zone": "dmz"}},
                    "podSelector": {"matchLabels": {"app.kubernetes.io/name": "ingress-nginx"}}
                }], "ports": [{"port": 3000, "protocol": "TCP"}]}]}, 388, "argocd-controller"),
            ("allow-same-namespace", {"podSelector": {}, "policyTypes": ["Ingress"],
                                      "ingress": [{"from": [{"podSelector": {}}]}]}, 533,
             "kubectl-client-side-apply")):
        pol = c.add({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
                     "metadata": c.meta("NetworkPolicy", name, NS, s.ago(days=days),
                                        {"app.kubernetes.io/part-of": "kennels"},
                                        generation=1),
                     "spec": spec})
        managed(pol, mgr, s.ago(days=days), {"f:spec": {".": {}}})

    # ---- the web app, rolled out before the incident (healthy afterwards)
    web = Ctr("kennel-booking-web", f"{REG}/kennel-booking-web:2.8.0", port=3000,
              requests={"cpu": "250m", "memory": "384Mi"}, limits={"memory": "768Mi"},
              env={"NODE_ENV": "production", "API_BASE": "http://booking-api.kennels.svc"},
              readiness=http_probe("/healthz", delay=5, period=10),
              liveness=http_probe("/healthz", delay=20, period=20))
    roll = NOW - timedelta(hours=2, minutes=31)
    _, webs = steady(s, NS, "kennel-booking-web", [web], nodes=nodes, replicas=3,
                     revision=64, rollout=roll, service=80,
                     old=(63, s.ago(days=8), [Ctr("kennel-booking-web",
                                                  f"{REG}/kennel-booking-web:2.7.3",
                                                  port=3000)]))
    cut = relabel.timestamp()
    for pod in webs:
        quiet(s, [pod], "kennel-booking-web", 260)
        requests(s, pod, "kennel-booking-web", rps=lambda t: 0.0 if t >= cut else 9.5,
                 codes={"200": lambda t: 0.985, "404": lambda t: 0.015})
    chatter(s, webs, "kennel-booking-web", "kennel-booking-web", [
        ("info", "GET /book/stay?from=2027-04-18&to=2027-04-25 200 84ms", {}),
        ("info", "GET /api/slots?kennel=utrecht-west 200 41ms", {}),
        ("info", "POST /api/bookings 201 212ms", {}),
        ("warn", "GET /dogs/photo/88231.jpg 404 3ms", {}),
    ], 130, end=relabel)
    chatter(s, webs, "kennel-booking-web", "kennel-booking-web", [
        ("info", "next.js ready on http://0.0.0.0:3000", {}),
    ], 3, start=roll, end=roll + timedelta(minutes=3))
    api = Ctr("booking-api", f"{REG}/booking-api:5.1.4", port=8080,
              requests={"cpu": "200m", "memory": "512Mi"}, limits={"memory": "1Gi"},
              readiness=http_probe("/ready", delay=5))
    _, apis = steady(s, NS, "booking-api", [api], nodes=nodes, replicas=2, revision=102,
                     rollout=s.ago(days=3, hours=4), offset=1)
    quiet(s, apis, "booking-api", 410)
    chatter(s, apis, "booking-api", "booking-api", [
        ("info", "availability computed for kennel utrecht-west (42 runs) in 18ms", {}),
        ("info", "booking BK-2027-118204 confirmed", {}),
    ], 60, end=relabel)

    # ---- the ingress controller
    ctl = Ctr("controller", "registry.k8s.io/ingress-nginx/controller:v1.11.3", port=80,
              requests={"cpu": "100m", "memory": "90Mi"}, limits={"memory": "512Mi"},
              readiness=http_probe("/healthz", 10254, delay=10),
              liveness=http_probe("/healthz", 10254, delay=10))
    _, ctls = steady(s, "ingress-nginx", "ingress-nginx-controller", [ctl], nodes=nodes,
                     replicas=2, revision=11, rollout=s.ago(days=5, hours=2), service=None,
                     labels={"app.kubernetes.io/name": "ingress-nginx",
                             "app.kubernetes.io/component": "controller"})
    c.service("ingress-nginx", "ingress-nginx-controller",
              {"app.kubernetes.io/name": "ingress-nginx"}, port=80, kind="LoadBalancer",
              created=s.ago(days=701), labels={"app.kubernetes.io/name": "ingress-nginx"})
    c.add({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
           "metadata": c.meta("Ingress", "kennel-booking-web", NS, s.ago(days=533),
                              {"app.kubernetes.io/name": "kennel-booking-web"},
                              annotations={"nginx.ingress.kubernetes.io/proxy-connect-timeout":
                                           "10"}, generation=1),
           "spec": {"ingressClassName": "nginx", "rules": [{"host": HOST, "http": {"paths": [
               {"path": "/", "pathType": "Prefix", "backend": {"service": {
                   "name": "kennel-booking-web", "port": {"number": 80}}}}]}}],
                    "tls": [{"hosts": [HOST], "secretName": "book-pawhaven-nl-tls"}]},
           "status": {"loadBalancer": {"ingress": [{"ip": "10.200.0.240"}]}}})
    quiet(s, ctls, "controller", 180)
    for pod in ctls:
        base = {"controller_pod": pod["metadata"]["name"], "ingress": "kennel-booking-web",
                "namespace": NS, "service": "kennel-booking-web", "host": HOST}
        for status, rate in (("200", lambda t: 0.0 if t >= cut else 13.9),
                             ("404", lambda t: 0.0 if t >= cut else 0.2),
                             ("504", lambda t: 1.9 if t >= cut + 10 else 0.0),
                             ("499", lambda t: 6.1 if t >= cut + 10 else 0.0)):
            app_counter(s, "nginx_ingress_controller_requests", {**base, "status": status},
                        s.times, rate, "The total number of client requests")
    ips = [w["status"]["podIP"] for w in webs]
    paths = ["/book/stay", "/api/slots?kennel=utrecht-west", "/", "/api/slots?kennel="
             "amersfoort", "/account/pets"]
    for i in range(70):
        pod = ctls[i % 2]
        when = relabel + timedelta(seconds=12 + (NOW - relabel).total_seconds() * i / 71)
        path = paths[i % len(paths)]
        ip = ips[i % 3]
        client = f"84.{80 + i % 7}.{(i * 37) % 250}.{(i * 11) % 250}"
        s.logs.add(when, "error", f"upstream timed out (110: Operation timed out) while "
                   f"connecting to upstream, client: {client}, server: {HOST}, request: "
                   f"\"GET {path} HTTP/2.0\", upstream: \"http://{ip}:3000{path}\", host: "
                   f"\"{HOST}\"", namespace="ingress-nginx", pod=pod["metadata"]["name"],
                   container="controller", service="ingress-nginx",
                   node=pod["spec"]["nodeName"])
        s.logs.add(when + timedelta(milliseconds=2), "info", f"{client} - - \"GET {path} "
                   f"HTTP/2.0\" 504 160 \"-\" \"Mozilla/5.0\" 412 10.001 [kennels-kennel-"
                   f"booking-web-80] [] {ip}:3000 0 10.001 504",
                   namespace="ingress-nginx", pod=pod["metadata"]["name"],
                   container="controller", service="ingress-nginx",
                   node=pod["spec"]["nodeName"], http__response__status_code=504)
    chatter(s, ctls, "controller", "ingress-nginx", [
        ("info", "84.83.17.201 - - \"GET /book/stay HTTP/2.0\" 200 18211 \"-\" \"Mozilla/5.0\""
         f" 388 0.087 [kennels-kennel-booking-web-80] [] {ips[0]}:3000 18211 0.086 200", {}),
    ], 60, end=relabel)

    # ---- red herrings
    dns = Ctr("coredns", "registry.k8s.io/coredns/coredns:v1.11.3", port=53, port_name="dns",
              requests={"cpu": "100m", "memory": "70Mi"}, limits={"memory": "170Mi"})
    _, dnss = steady(s, "kube-system", "coredns", [dns], nodes=nodes, replicas=2, revision=4,
                     rollout=s.ago(days=6), service=None,
                     labels={"app.kubernetes.io/name": "coredns", "k8s-app": "kube-dns"})
    chatter(s, dnss, "coredns", "coredns", [
        ("error", "[ERROR] plugin/errors: 2 api.mollie.com. AAAA: read udp "
         "192.168.2.14:49811->10.200.0.2:53: i/o timeout", {}),
        ("info", "[INFO] 192.168.0.23:51124 - 4412 \"A IN booking-api.kennels.svc.cluster.local."
         " udp 58 false 512\" NOERROR qr,aa,rd 110 0.000131s", {}),
    ], 30, start=s.ago(minutes=55))
    c.event(dnss[1], "Unhealthy", "Readiness probe failed: HTTP probe failed with statuscode: "
            "503", first=s.ago(minutes=52), last=s.ago(minutes=51), count=2, type_="Warning",
            field_path="spec.containers{coredns}")
    pay = Ctr("payment-webhooks", f"{REG}/payment-webhooks:1.3.0", port=8080,
              requests={"cpu": "50m", "memory": "128Mi"}, limits={"memory": "256Mi"})
    _, pays = steady(s, "pawhaven-payments", "payment-webhooks", [pay], nodes=nodes,
                     replicas=1, revision=21, rollout=s.ago(days=2, hours=7), offset=2)
    chatter(s, pays, "payment-webhooks", "payment-webhooks", [
        ("warn", "mollie webhook tr_WDqYK6vllg retried (attempt 3): booking lookup returned "
         "409", {}),
        ("info", "payment tr_7UhSN1zuXS paid, booking BK-2027-118177", {}),
    ], 25)
    return s
