"""Bakery chain web shop: a share of shoppers get connection errors at checkout. At 15:07 the
platform team started a rolling update of the edge-gateway DaemonSet (Envoy on the host
network of the three edge nodes) from 1.31.2-r1 to 1.32.0-r1, pushed to a Harbor project
whose robot account behind the pull secret harbor-robot-edge no longer has access. The
DaemonSet controller deleted the old pod on the first edge node (maxUnavailable 1) and the
new one cannot pull: "401 Unauthorized", ImagePullBackOff. The update halts with that
node's gateway down, while the load balancer still sends it a third of the traffic. The
old image stays cached on the other nodes, which is why only one fails. Signal: events and
pod state, with the synthetic checkout probe failing about a third of the time. Red
herrings: storefront rolled out 82 min ago, an old OOM restart of order-queue two days ago,
noisy cert-manager messages, and clients aborting a few requests (499) in storefront."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import PCtr, gauge, parse
from tests.data.holdout2._generator.kit import cpu_seconds, drift, requests, working_set
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.scenario_tools.common import kube_system, truth
from tests.scenario_tools.failures import image_pull_events
from tests.scenario_tools.kube import Ctr, Obj, Template, http_probe, running, waiting

from .kit11 import Incident, apps_pool, secs

ID = "web-shop-checkout-connection-errors"
NOW = datetime.fromisoformat("2028-07-21T15:31:00+00:00")
NS = "edge"
HARBOR = "harbor.crumbco.io"
OLD = f"{HARBOR}/platform/edge-gateway:1.31.2-r1"
NEW = f"{HARBOR}/platform/edge-gateway:1.32.0-r1"
UPDATE = NOW - timedelta(minutes=24, seconds=7)
PULL_ERR = (f'failed to pull and unpack image "{NEW}": failed to resolve reference "{NEW}": '
            f"unexpected status from HEAD request to https://{HARBOR}/v2/platform/"
            "edge-gateway/manifests/1.32.0-r1: 401 Unauthorized")


def gateway(image: str) -> Ctr:
    return PCtr("envoy", image, port=None,
                requests={"cpu": "1", "memory": "1Gi"}, limits={"memory": "1Gi"},
                args=["--config-path", "/etc/envoy/envoy.yaml", "--log-level", "info"],
                readiness=http_probe("/ready", 9901, delay=3, period=5),
                liveness=http_probe("/server_info", 9901, delay=10, period=10),
                mounts=[{"name": "config", "mountPath": "/etc/envoy", "readOnly": True}],
                ports=[("https", 443, "TCP"), ("http", 80, "TCP"), ("admin", 9901, "TCP")])


def build() -> Incident:
    s = Incident(
        id=ID, title="Web shop checkout failing with connection errors for some shoppers",
        now=NOW,
        report="""\
Customer service has a stream of complaints that the web shop "can't connect" when people
press Pay or reload the basket, it works on retry. Our checkout uptime check is red on
and off since about 15:10. Shop pods look fine to me. Can someone have a look?
""",
        truth=truth(
            "image_pull", "DaemonSet", NS, "edge-gateway",
            ["ImagePullBackOff", "401 Unauthorized", "edge-gateway:1.32.0-r1"],
            "The rolling update of edge-gateway to 1.32.0-r1 replaced the gateway on the first "
            "edge node with a pod that cannot pull its image: Harbor answers 401 Unauthorized "
            "for the harbor-robot-edge pull credentials, so the node has no gateway while the "
            "load balancer still routes to it. Roll the DaemonSet back to 1.31.2-r1 (kubectl "
            "rollout undo daemonset/edge-gateway -n edge), then renew the Harbor robot "
            "account and its pull secret before retrying the update."))
    namespaces(s, {"default": 830, "kube-system": 830, NS: 790, "shop": 790,
                   "cert-manager": 640})
    apps = apps_pool(s, 3, region="us-east-2", subnet=72, pool="apps-m7i", days=6.6)
    edges = apps_pool(s, 3, region="us-east-2", subnet=73, pool="edge-c7i",
                      instance="c7i.xlarge", cpu="4", memory="7902548Ki",
                      alloc_cpu="3920m", alloc_memory="7034196Ki", days=6.1)
    for n in edges:
        n["metadata"]["labels"]["crumbco.io/role"] = "edge"
    kube_system(s, apps + edges)
    c = s.cluster

    # ---- edge-gateway: a DaemonSet halfway into an update that cannot pull
    def template(image: str) -> Template:
        return Template([gateway(image)], service_account="edge-gateway",
                        node_selector={"crumbco.io/role": "edge"},
                        tolerations=[{"operator": "Exists", "effect": "NoSchedule"}],
                        volumes=[{"name": "config", "configMap": {"name": "edge-gateway-envoy",
                                                                  "defaultMode": 420}}],
                        image_pull_secrets=["harbor-robot-edge"],
                        labels={"app.kubernetes.io/name": "edge-gateway"})
    old_tpl, new_tpl = template(OLD), template(NEW)
    work = c.workload("DaemonSet", NS, "edge-gateway", new_tpl, created=s.ago(days=420))
    work.obj["metadata"]["generation"] = 12
    work.obj["spec"]["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {
        "maxSurge": 0, "maxUnavailable": 1}}
    work.obj["spec"]["revisionHistoryLimit"] = 10
    old_since = s.ago(days=5, hours=22, minutes=4)
    old_rev = c.revision(work, 11, old_since, old_tpl)
    new_rev = c.revision(work, 12, UPDATE, new_tpl)
    pods: list[Obj] = []
    for i, n in enumerate(edges):
        fresh = i == 0
        rev = new_rev if fresh else old_rev
        born = secs(UPDATE, 1.3) if fresh else max(
            secs(old_since, 31 * i), parse(n["metadata"]["creationTimestamp"]) +
            timedelta(seconds=40))
        state = (waiting("ImagePullBackOff", f'Back-off pulling image "{NEW}"') if fresh
                 else running(born + timedelta(seconds=6)))
        pod = c.pod(work, rev, node=n, created=born, statuses={"envoy": state})
        pod["metadata"]["labels"]["controller-revision-hash"] = \
            rev["metadata"]["name"].rsplit("-", 1)[1]
        pod["metadata"]["labels"]["pod-template-generation"] = "12" if fresh else "11"
        pod["spec"]["hostNetwork"] = True
        pod["spec"]["dnsPolicy"] = "ClusterFirstWithHostNet"
        pod["status"]["podIP"] = pod["status"]["hostIP"]
        pod["status"]["podIPs"] = [{"ip": pod["status"]["hostIP"]}]
        pod["spec"]["affinity"] = {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
                "matchFields": [{"key": "metadata.name", "operator": "In",
                                 "values": [n["metadata"]["name"]]}]}]}}}
        pods.append(pod)
    stuck = pods[0]
    old_name = f"edge-gateway-{c.token(5)}"
    c.event(work.obj, "SuccessfulDelete", f"Deleted pod: {old_name}", first=UPDATE,
            component="daemonset-controller", host="")
    c.event(work.obj, "SuccessfulCreate", f"Created pod: {stuck['metadata']['name']}",
            first=secs(UPDATE, 1.3), component="daemonset-controller", host="")
    c.event(stuck, "Scheduled", f"Successfully assigned {NS}/{stuck['metadata']['name']} to "
            f"{stuck['spec']['nodeName']}", first=secs(UPDATE, 1.5),
            component="default-scheduler", host="")
    image_pull_events(s, stuck, "envoy", NEW, PULL_ERR, since=secs(UPDATE, 2.2))

    def fix(objects: list[Obj]) -> None:
        for obj in objects:
            if obj["kind"] == "DaemonSet" and obj["metadata"]["name"] == "edge-gateway":
                obj["status"].update({"updatedNumberScheduled": 1, "observedGeneration": 12})
    s.fixes.append(fix)
    c.add({"apiVersion": "v1", "kind": "ConfigMap", "metadata": c.meta(
        "ConfigMap", "edge-gateway-envoy", NS, s.ago(days=61)), "data": {
        "envoy.yaml": "static_resources:\n  listeners:\n  - name: https\n    address:\n"
        "      socket_address: {address: 0.0.0.0, port_value: 443}\n  clusters:\n"
        "  - name: storefront\n    type: STRICT_DNS\n    load_assignment:\n"
        "      cluster_name: storefront\n      endpoints:\n      - lb_endpoints:\n"
        "        - endpoint: {address: {socket_address: {address: storefront.shop.svc, "
        "port_value: 80}}}\n"}})

    # ---- metrics
    cut = UPDATE.timestamp()
    ds = {"namespace": NS, "daemonset": "edge-gateway"}
    for metric, value, help_ in (
            ("kube_daemonset_status_desired_number_scheduled", lambda t: 3.0,
             "The number of nodes that should be running the daemon pod."),
            ("kube_daemonset_status_number_available", lambda t: 3.0 if t < cut else 2.0,
             "The number of nodes that should be running the daemon pod and have one or more "
             "of the daemon pod running and available"),
            ("kube_daemonset_status_number_unavailable", lambda t: 0.0 if t < cut else 1.0,
             "The number of nodes that should be running the daemon pod and have none of the "
             "daemon pod running and available"),
            ("kube_daemonset_status_updated_number_scheduled", lambda t: 3.0 if t < cut
             else 1.0, "The total number of nodes that are running updated daemon pod")):
        gauge(s, metric, ds, value, help_)
    gauge(s, "kube_pod_container_status_waiting_reason",
          {"namespace": NS, "pod": stuck["metadata"]["name"], "container": "envoy",
           "reason": "ImagePullBackOff"}, lambda t: 1.0, "Describes the reason the container "
          "is currently in waiting state.", times=[t for t in s.times if t >= cut + 45])
    for pod in pods[1:]:
        working_set(s, pod, "envoy", drift(s, 310 * 1024 * 1024))
        cpu_seconds(s, pod, "envoy", lambda t: 0.42)
    for target in ("https://shop.crumbco.io/checkout/health", "https://shop.crumbco.io/basket"):
        def ok(t: int) -> float:
            if t < cut + 20:
                return 1.0
            return 0.0 if s.rng.random() < 0.34 else 1.0
        gauge(s, "probe_success", {"job": "blackbox", "instance": target, "module":
                                   "http_2xx"}, ok, "Displays whether or not the probe was a "
              "success")
    chatter(s, pods[1:], "envoy", "edge-gateway", [
        ("info", '"POST /checkout/pay HTTP/2" 200 - 1822 211 '
         '184 183 "storefront"', {}),
        ("info", '"GET /basket HTTP/2" 200 - 0 9312 41 40 "storefront"', {}),
        ("warn", "upstream connect error or disconnect/reset before headers. reset reason: "
         "connection timeout (cluster=storefront, 1 of 4211 requests in last 60s)", {}),
    ], 160)

    # ---- the shop and the red herrings
    sf_at = NOW - timedelta(hours=1, minutes=22)
    shop_reg = f"{HARBOR}/shop"
    _, fronts = steady(s, "shop", "storefront", [Ctr(
        "storefront", f"{shop_reg}/storefront:2028.29.1", port=8080,
        requests={"cpu": "500m", "memory": "768Mi"}, limits={"memory": "1Gi"},
        readiness=http_probe("/health/ready"))], nodes=apps, replicas=4, revision=211,
        rollout=sf_at, old=(210, s.ago(days=3, hours=2), [Ctr(
            "storefront", f"{shop_reg}/storefront:2028.28.4")]), pull_secrets=["harbor-shop"])
    for pod in fronts:
        requests(s, pod, "storefront", rps=lambda t: 11.0, codes={
            "200": lambda t: 0.986, "302": lambda t: 0.008, "499": lambda t: 0.004,
            "500": lambda t: 0.002})
        working_set(s, pod, "storefront", drift(s, 640 * 1024 * 1024))
    chatter(s, fronts, "storefront", "storefront", [
        ("info", "order CB-7781203 paid (card, 23.40 EUR, store=Aarhus-C)", {}),
        ("info", "basket b_91ac2 updated: +1 rugbrød, +2 kanelsnegl", {}),
        ("warn", "client closed request before response (499) path=/basket", {
            "http.response.status_code": 499}),
    ], 180)
    _, queues = steady(s, "shop", "order-queue", [Ctr(
        "order-queue", f"{shop_reg}/order-queue:5.2.0", port=8080,
        requests={"cpu": "200m", "memory": "384Mi"}, limits={"memory": "512Mi"})],
        nodes=apps, replicas=2, revision=48, rollout=s.ago(days=4, hours=7),
        restarted={0: (s.ago(days=2, hours=1, minutes=40), "OOMKilled", 137)},
        pull_secrets=["harbor-shop"], offset=1)
    quiet(s, queues, "order-queue", 350)
    _, certs = steady(s, "cert-manager", "cert-manager", [Ctr(
        "cert-manager-controller", "quay.io/jetstack/cert-manager-controller:v1.18.2",
        port=9402, port_name="http-metrics", requests={"cpu": "50m", "memory": "128Mi"},
        limits={"memory": "256Mi"})], nodes=apps, replicas=1, revision=9,
        rollout=s.ago(days=6, hours=1), service=None)
    quiet(s, certs, "cert-manager-controller", 90)
    chatter(s, certs, "cert-manager-controller", "cert-manager", [
        ("info", 'certificate "shop/shop-crumbco-io" scheduled for renewal in 29d', {}),
        ("warn", 're-queuing item due to optimistic locking on resource: Operation cannot be '
         'fulfilled on certificates.cert-manager.io "edge-wildcard"', {}),
    ], 40)
    return s
