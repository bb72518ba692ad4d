"""Ticketing 5xx: every lookup through the cluster DNS times out. Someone edited the CoreDNS
Corefile to forward '.' to the kube-dns ClusterIP itself; the loop plugin makes every CoreDNS
instance exit a few seconds after it starts, so kube-dns has no ready endpoint."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

from tests.scenario_tools.common import MIB, Story, container_metrics, truth
from tests.scenario_tools.kube import Ctr, ended, http_probe, running
from tests.scenario_tools.sim import container_status, restart_events

from .base import (
    PCtr,
    add_endpoints,
    add_service,
    configmap,
    crash_runs,
    daemonset,
    deployment,
    eks_nodes,
    gauge,
    host_network,
    http_series,
    logs_for,
    quiet_container,
    running_at,
    set_times,
)

ID = "ticketing-checkout-5xx"
NOW = datetime.fromisoformat("2027-01-12T16:47:00+00:00")
REGION = "us-east-2"
ECR = f"602401143452.dkr.ecr.{REGION}.amazonaws.com/eks"
APPS = f"318926044715.dkr.ecr.{REGION}.amazonaws.com"
DNS_IP = "172.20.0.10"
BUCKETS = (0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)

COREFILE_OK = """.:53 {
    errors
    health {
        lameduck 5s
      }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
      pods insecure
      fallthrough in-addr.arpa ip6.arpa
    }
    prometheus :9153
    forward . /etc/resolv.conf
    cache 30
    loop
    reload
    loadbalance
}
"""
COREFILE_NOW = COREFILE_OK.replace("forward . /etc/resolv.conf", f"forward . {DNS_IP}") + """\
tessera-corp.net:53 {
    errors
    cache 30
    forward . 10.8.0.53 10.8.1.53
}
"""


def build() -> Story:
    s = Story(
        id="ticketing-checkout-5xx",
        title="Ticketing checkout and seat reservation failing",
        now=NOW,
        report="""\
ticketing prod is throwing a lot of 5xx since about 16:05 UTC, both checkout-web and
seat-reservation (grafana says 30-50% of requests). ticket confirmation emails seem stuck too.
nothing was deployed in ticketing today. can you take a look?
""",
        truth=truth(
            "network", "Deployment", "kube-system", "coredns",
            ["plugin/loop", "CrashLoopBackOff", "i/o timeout", DNS_IP,
             "forward . 172.20.0.10"],
            "Revert the forward line of the coredns ConfigMap to 'forward . /etc/resolv.conf' "
            "(the kube-dns ClusterIP forwards to CoreDNS itself, which the loop plugin "
            "detects and exits on); CoreDNS recovers on the next restart and lookups work "
            "again."))
    set_times(s, 3.0, 60)
    c = s.cluster
    t0 = NOW - timedelta(minutes=40, seconds=38)  # the reload that picked up the edit
    for ns, days in (("default", 410), ("kube-system", 410), ("ticketing", 233),
                     ("analytics", 121), ("monitoring", 302)):
        c.namespace(ns, s.ago(days=days))
    nodes = eks_nodes(s, 4, region=REGION, subnet=42, pool="apps-m6a", instance="m6a.2xlarge",
                      kubelet="v1.32.9-eks-5e0f2a3", kernel="6.1.147-172.266.amzn2023.x86_64",
                      os_image="Amazon Linux 2023.9.20251208", cpu="8", memory="32086636Ki",
                      alloc_cpu="7910m", alloc_memory="31069804Ki", pods="58", days=6.2)

    # ---- CoreDNS and the kube-dns Service
    configmap(s, "kube-system", "coredns", {"Corefile": COREFILE_NOW},
              created=s.ago(days=410), labels={"eks.amazonaws.com/component": "coredns",
                                               "k8s-app": "kube-dns"},
              edited=("kubectl-edit", t0 - timedelta(seconds=24)))
    dns_labels = {"k8s-app": "kube-dns", "eks.amazonaws.com/component": "coredns"}
    dns_ctr = PCtr("coredns", f"{ECR}/coredns:v1.11.3-eksbuild.2", port=None,
                   requests={"cpu": "100m", "memory": "70Mi"}, limits={"memory": "170Mi"},
                   args=["-conf", "/etc/coredns/Corefile"],
                   readiness=http_probe("/ready", 8181, delay=0, period=10, timeout=1),
                   liveness=http_probe("/health", 8080, delay=60, period=10, timeout=5,
                                       failures=5),
                   mounts=[{"mountPath": "/etc/coredns", "name": "config-volume",
                            "readOnly": True}],
                   ports=[("dns", 53, "UDP"), ("dns-tcp", 53, "TCP"), ("metrics", 9153, "TCP")])
    dns_rollout = s.ago(days=5, hours=20)
    runs_of: dict[str, list] = {}

    def dns_status(i: int, started: datetime) -> dict:
        return {}

    work, dns_pods = deployment(
        s, "kube-system", "coredns", [dns_ctr], replicas=2, node_list=nodes, revision=4,
        rollout=dns_rollout, labels={**dns_labels, "kubernetes.io/name": "CoreDNS"},
        selector=dns_labels, service=None, sa="coredns",
        tolerations=[{"key": "CriticalAddonsOnly", "operator": "Exists"},
                     {"effect": "NoSchedule", "key": "node-role.kubernetes.io/control-plane"}],
        volumes=[{"configMap": {"defaultMode": 420, "items": [{"key": "Corefile", "path":
                                                               "Corefile"}],
                                "name": "coredns"}, "name": "config-volume"}],
        created=s.ago(days=410), node_offset=1)
    work.obj["spec"]["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {
        "maxSurge": "25%", "maxUnavailable": 1}}
    work.availability_changed = t0 + timedelta(seconds=31)
    for k, pod in enumerate(dns_pods):
        name, ns = pod["metadata"]["name"], "kube-system"
        first = datetime.fromisoformat(pod["status"]["containerStatuses"][0]["state"]["running"]
                                       ["startedAt"].replace("Z", "+00:00"))
        runs = crash_runs(s, first, t0 + timedelta(seconds=1.5 * k),
                          lambda st: 2.6 + s.rng.uniform(0, 2.4))
        runs_of[name] = runs
        status = container_status(runs, name, ns, "coredns", reason="Error", code=1,
                                  uid=pod["metadata"]["uid"], ready=False)
        status["restartCount"] = len(runs) - 1  # the kubelet counts containers started
        pod["status"]["containerStatuses"][0].update(status)
        pod["status"]["containerStatuses"][0]["containerID"] = "containerd://" + c.hexid(
            "ctr", name, str(status["restartCount"]))
        last = pod["status"]["containerStatuses"][0]["lastState"]["terminated"]
        last["containerID"] = "containerd://" + c.hexid("ctr", name, str(status["restartCount"]
                                                                        - 1))
        for cond in pod["status"]["conditions"]:
            if cond["type"] in ("Ready", "ContainersReady"):
                cond.update({"status": "False", "reason": "ContainersNotReady",
                             "message": "containers with unready status: [coredns]",
                             "lastTransitionTime": _iso(t0 + timedelta(seconds=1.5 * k))})
        restart_events(s, pod, "coredns", runs, now=NOW, image=dns_ctr.image)
        ip = pod["status"]["podIP"]
        starts = [r.start for r in runs[1:] if r.start >= NOW - timedelta(hours=1)]
        c.event(pod, "Unhealthy", f'Readiness probe failed: Get "http://{ip}:8181/ready": dial '
                f"tcp {ip}:8181: connect: connection refused", first=starts[0] + timedelta(
                    seconds=1), last=starts[-1] + timedelta(seconds=1), count=len(starts) + 3,
                type_="Warning", field_path="spec.containers{coredns}")
        sha = c.hexid("sha", "new") + c.hexid("sha", "new2")
        old_sha = c.hexid("sha", "old") + c.hexid("sha", "old2")
        reload = [
            f"[INFO] plugin/reload: Running configuration SHA512 = {old_sha}",
            "CoreDNS-1.11.3", "linux/amd64, go1.22.8, a6338e9",
            "[INFO] Reloading",
            f"[INFO] plugin/reload: Running configuration SHA512 = {sha}",
            "[INFO] Reloading complete",
            f'[FATAL] plugin/loop: Loop (127.0.0.1:{s.rng.randrange(32768, 60999)} -> :53) '
            'detected for zone ".", see https://coredns.io/plugins/loop#troubleshooting. Query: '
            f'"HINFO {s.rng.randrange(10**18, 10**19)}.{s.rng.randrange(10**18, 10**19)}."']

        def crash(sha: str = sha) -> list[str]:
            return [".:53", "tessera-corp.net.:53",
                    f"[INFO] plugin/reload: Running configuration SHA512 = {sha}",
                    "CoreDNS-1.11.3", "linux/amd64, go1.22.8, a6338e9",
                    f'[FATAL] plugin/loop: Loop (127.0.0.1:{s.rng.randrange(32768, 60999)} -> '
                    ':53) detected for zone ".", see https://coredns.io/plugins/loop#'
                    f'troubleshooting. Query: "HINFO {s.rng.randrange(10**18, 10**19)}.'
                    f'{s.rng.randrange(10**18, 10**19)}."']
        s.pod_log(pod, "coredns", crash())
        s.pod_log(pod, "coredns", crash() if len(runs) > 2 else reload, previous=True)
        container_metrics(s, pod, "coredns",
                          memory=lambda t, r=runs: (19.5 + 2 * math.sin(t / 900)) * MIB
                          if running_at(r, t) else None,
                          cpu=lambda t, r=runs: 0.004 if running_at(r, t) else 0.0,
                          restarts=[int(r.start.timestamp()) for r in runs[1:]],
                          limit_memory=170 * MIB)
        gauge(s, "kube_pod_container_status_waiting_reason",
              {"namespace": ns, "pod": name, "container": "coredns",
               "reason": "CrashLoopBackOff"},
              lambda t, r=runs: 0.0 if t < t0.timestamp() + 40 or running_at(r, t) else 1.0,
              "Describes the reason the container is currently in waiting state.")
    svc_ports = [{"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
                 {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
                 {"name": "metrics", "port": 9153, "protocol": "TCP", "targetPort": 9153}]
    svc = add_service(s, "kube-system", "kube-dns", dns_labels, svc_ports,
                      created=s.ago(days=410), cluster_ip=DNS_IP,
                      labels={**dns_labels, "kubernetes.io/cluster-service": "true",
                              "kubernetes.io/name": "CoreDNS"})
    add_endpoints(s, svc, dns_pods, [{"name": "dns", "port": 53, "protocol": "UDP"},
                                     {"name": "dns-tcp", "port": 53, "protocol": "TCP"},
                                     {"name": "metrics", "port": 9153, "protocol": "TCP"}])
    for d in ("coredns",):
        gauge(s, "kube_deployment_status_replicas_available",
              {"namespace": "kube-system", "deployment": d},
              lambda t: 2.0 if t < t0.timestamp() + 20 else 0.0,
              "The number of available replicas per deployment.")

    # ---- kube-proxy and aws-node
    proxy = Ctr("kube-proxy", f"{ECR}/kube-proxy:v1.32.9-minimal-eksbuild.2", port=None,
                requests={"cpu": "100m"}, limits={},
                command=["kube-proxy", "--v=2", "--config=/var/lib/kube-proxy-config/config",
                         "--hostname-override=$(NODE_NAME)"])
    _, proxies = daemonset(s, "kube-system", "kube-proxy", [proxy], node_list=nodes,
                           generation=3, since=s.ago(days=6.3),
                           labels={"k8s-app": "kube-proxy", "eks.amazonaws.com/component":
                                   "kube-proxy"})
    node_ctr = Ctr("aws-node", f"{ECR}/amazon-k8s-cni:v1.19.2-eksbuild.1", port=61678,
                   port_name="metrics", requests={"cpu": "25m"}, limits={},
                   env={"AWS_VPC_K8S_CNI_LOGLEVEL": "DEBUG", "ENABLE_PREFIX_DELEGATION": "true",
                        "WARM_PREFIX_TARGET": "1"})
    _, cnis = daemonset(s, "kube-system", "aws-node", [node_ctr], node_list=nodes,
                        generation=7, since=s.ago(days=6.3),
                        labels={"k8s-app": "aws-node", "app.kubernetes.io/name": "aws-node"})
    host_network(proxies)
    for pod in proxies:
        quiet_container(s, pod, "kube-proxy", 24)
    host_network(cnis)
    for pod in cnis:
        quiet_container(s, pod, "aws-node", 58)

    # ---- ticketing
    edge = t0.timestamp()

    seat = Ctr("seat-reservation", f"{APPS}/ticketing/seat-reservation:2024.51.3", port=8080,
               requests={"cpu": "300m", "memory": "384Mi"}, limits={"memory": "768Mi"},
               env={"DB_HOST": "seatmap-db.cluster-c8d1xk2m3nqe.us-east-2.rds.amazonaws.com",
                    "PRICING_URL": "http://pricing-rules.ticketing.svc.cluster.local",
                    "GOMAXPROCS": "2"},
               readiness=http_probe("/readyz", delay=3, period=5),
               liveness=http_probe("/livez", delay=10, period=15))
    _, seats = deployment(s, "ticketing", "seat-reservation", [seat], replicas=3,
                          node_list=nodes, revision=41, rollout=s.ago(days=3, hours=5),
                          labels={"app.kubernetes.io/name": "seat-reservation",
                                  "app.kubernetes.io/part-of": "ticketing"})
    checkout = Ctr("checkout-web", f"{APPS}/ticketing/checkout-web:5.12.0", port=3000,
                   requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"},
                   env={"NODE_ENV": "production", "PSP_HOST": "checkout-live.adyen.com",
                        "SEATS_URL": "http://seat-reservation.ticketing.svc.cluster.local"},
                   readiness=http_probe("/health/ready", delay=5, period=10),
                   liveness=http_probe("/health/live", delay=20, period=20))
    _, checkouts = deployment(s, "ticketing", "checkout-web", [checkout], replicas=2,
                              node_list=nodes, revision=88, rollout=s.ago(days=1, hours=22),
                              labels={"app.kubernetes.io/name": "checkout-web",
                                      "app.kubernetes.io/part-of": "ticketing"},
                              node_offset=2)
    notifier = Ctr("notification-worker", f"{APPS}/ticketing/notification-worker:1.9.4",
                   port=None, requests={"cpu": "50m", "memory": "128Mi"},
                   limits={"memory": "256Mi"}, env={"SES_REGION": REGION, "QUEUE":
                                                    "ticketing-confirmations"})
    _, notifiers = deployment(s, "ticketing", "notification-worker", [notifier], replicas=1,
                              node_list=nodes, revision=17, rollout=s.ago(days=4, hours=2),
                              labels={"app.kubernetes.io/name": "notification-worker"},
                              service=None, node_offset=3)
    catalog = Ctr("event-catalog", f"{APPS}/ticketing/event-catalog:3.3.1", port=8080,
                  requests={"cpu": "250m", "memory": "1Gi"}, limits={"memory": "1536Mi"},
                  env={"JAVA_TOOL_OPTIONS": "-XX:MaxRAMPercentage=70"},
                  readiness=http_probe("/actuator/health/readiness", delay=20),
                  liveness=http_probe("/actuator/health/liveness", delay=60, period=20))
    _, catalogs = deployment(s, "ticketing", "event-catalog", [catalog], replicas=2,
                             node_list=nodes, revision=9, rollout=s.ago(days=5, hours=1),
                             labels={"app.kubernetes.io/name": "event-catalog"})
    pricing = Ctr("pricing-rules", f"{APPS}/ticketing/pricing-rules:0.31.2", port=8080,
                  requests={"cpu": "100m", "memory": "192Mi"}, limits={"memory": "384Mi"},
                  readiness=http_probe("/readyz", delay=3))
    _, pricings = deployment(s, "ticketing", "pricing-rules", [pricing], replicas=2,
                             node_list=nodes, revision=23, rollout=s.ago(days=2, hours=3),
                             labels={"app.kubernetes.io/name": "pricing-rules"}, node_offset=1)
    c.add({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
           "metadata": c.meta("Ingress", "checkout-web", "ticketing", s.ago(days=200), {
               "app.kubernetes.io/name": "checkout-web"}, annotations={
               "alb.ingress.kubernetes.io/scheme": "internet-facing",
               "alb.ingress.kubernetes.io/target-type": "ip",
               "alb.ingress.kubernetes.io/group.name": "ticketing-public"}),
           "spec": {"ingressClassName": "alb", "rules": [{"host": "tickets.tesseralive.com",
                    "http": {"paths": [{"path": "/", "pathType": "Prefix", "backend": {
                        "service": {"name": "checkout-web", "port": {"number": 80}}}}]}}]},
           "status": {"loadBalancer": {"ingress": [{"hostname":
                      "k8s-ticketingpublic-5c1e0f7a2b-1184562390.us-east-2.elb.amazonaws.com"}]}}})

    for pod in seats:
        quiet_container(s, pod, "seat-reservation", 212, cpu=0.21, limit_mib=768)
        http_series(s, pod, "seat-reservation", rps=lambda t: 38 * _day(t),
                    codes={"200": lambda t: 0.97 - (0.42 * min(1, (t - edge) / 1500)
                                                    if t >= edge else 0),
                           "409": lambda t: 0.025,
                           "503": lambda t: (0.03 + 0.39 * min(1, (t - edge) / 1500))
                           if t >= edge else 0.0005},
                    median=lambda t: 0.034 if t < edge else 0.9, buckets=BUCKETS)
    for pod in checkouts:
        quiet_container(s, pod, "checkout-web", 181, cpu=0.12, limit_mib=512)
        http_series(s, pod, "checkout-web", rps=lambda t: 21 * _day(t),
                    codes={"200": lambda t: 0.985 if t < edge else 0.42,
                           "302": lambda t: 0.01,
                           "502": lambda t: 0.0 if t < edge else 0.31,
                           "504": lambda t: 0.001 if t < edge else 0.26},
                    median=lambda t: 0.11 if t < edge else 2.6, buckets=BUCKETS)
    for pod in notifiers:
        quiet_container(s, pod, "notification-worker", 96, cpu=0.03, limit_mib=256)
    for pod in catalogs:
        quiet_container(s, pod, "event-catalog", 702, cpu=0.18, limit_mib=1536)
        http_series(s, pod, "event-catalog", rps=lambda t: 55 * _day(t),
                    codes={"200": lambda t: 0.995, "404": lambda t: 0.005},
                    median=lambda t: 0.018, buckets=BUCKETS, histogram=False)
    for pod in pricings:
        quiet_container(s, pod, "pricing-rules", 118, cpu=0.05, limit_mib=384)
        http_series(s, pod, "pricing-rules", rps=lambda t: 30 * _day(t) if t < edge else
                    30 * _day(t) * 0.62, codes={"200": lambda t: 1.0},
                    median=lambda t: 0.006, buckets=BUCKETS, histogram=False)

    # ---- logs: ordinary traffic before, lookups failing after t0
    start = NOW - timedelta(hours=3)
    before = t0
    logs_for(s, seats, "seat-reservation", "seat-reservation", [
        ("info", "seat hold created", {"event.dataset": "seat-reservation.app"}),
        ("info", "reservation confirmed", {"http.response.status_code": 200}),
        ("info", "seat hold expired, released 2 seats", {}),
        ("warn", "optimistic lock conflict on seat block B-114, retrying (attempt 2/3)", {}),
        ("warn", "optimistic lock conflict on seat block F-031, retrying (attempt 2/3)", {}),
        ("warn", "hold 7f3c2e refused: seats already taken", {"http.response.status_code": 409}),
        ("info", "GET /v1/events/{id}/availability 200", {"http.response.status_code": 200}),
    ], 150, start=start, end=NOW)
    logs_for(s, seats, "seat-reservation", "seat-reservation", [
        ("error", "pricing lookup failed: Get \"http://pricing-rules.ticketing.svc.cluster.local/"
         "v2/quote\": dial tcp: lookup pricing-rules.ticketing.svc.cluster.local on "
         f"{DNS_IP}:53: read udp {{ip}}:{{port}}->{DNS_IP}:53: i/o timeout",
         {"error.type": "*net.OpError", "http.response.status_code": 503}),
        ("error", "db: failed to open connection: dial tcp: lookup seatmap-db.cluster-"
         f"c8d1xk2m3nqe.us-east-2.rds.amazonaws.com on {DNS_IP}:53: read udp {{ip}}:{{port}}->"
         f"{DNS_IP}:53: i/o timeout", {"error.type": "*net.OpError"}),
        ("warn", "POST /v1/holds 503 (upstream pricing unavailable) took 5.004s",
         {"http.response.status_code": 503}),
    ], 140, start=before + timedelta(seconds=20), end=NOW)
    logs_for(s, checkouts, "checkout-web", "checkout-web", [
        ("info", "POST /api/orders 201", {"http.response.status_code": 201}),
        ("info", "GET /api/cart 200", {"http.response.status_code": 200}),
        ("warn", "payment session expired for basket, asking user to retry", {}),
        ("info", "adyen authorisation OK", {}),
    ], 90, start=start, end=NOW)
    logs_for(s, checkouts, "checkout-web", "checkout-web", [
        ("error", "payment request failed: getaddrinfo EAI_AGAIN checkout-live.adyen.com",
         {"error.type": "Error", "error.code": "EAI_AGAIN", "http.response.status_code": 502}),
        ("error", "request to http://seat-reservation.ticketing.svc.cluster.local/v1/holds failed, "
         "reason: getaddrinfo EAI_AGAIN seat-reservation.ticketing.svc.cluster.local",
         {"error.type": "FetchError", "http.response.status_code": 504}),
        ("warn", "POST /api/orders 502 in 5012ms", {"http.response.status_code": 502}),
    ], 110, start=before + timedelta(seconds=35), end=NOW)
    logs_for(s, notifiers, "notification-worker", "notification-worker", [
        ("info", "sent confirmation email", {}),
        ("info", "polled 10 messages from ticketing-confirmations", {}),
    ], 40, start=start, end=before)
    logs_for(s, notifiers, "notification-worker", "notification-worker", [
        ("error", "send failed, message returned to queue: Could not connect to the endpoint URL: "
         "\"https://email.us-east-2.amazonaws.com/\" (socket.gaierror: [Errno -3] Temporary "
         "failure in name resolution)", {"error.type": "EndpointConnectionError"}),
        ("warn", "receive_message failed, retrying in 5s: Could not connect to the endpoint URL: "
         "\"https://sqs.us-east-2.amazonaws.com/\"", {"error.type": "EndpointConnectionError"}),
    ], 45, start=before + timedelta(seconds=12), end=NOW)
    logs_for(s, catalogs, "event-catalog", "event-catalog", [
        ("info", "served event page from cache", {}),
        ("info", "refreshed 312 events from catalogue store", {}),
        ("warn", "Slow query (812 ms): select * from event_listing where venue_id = ?", {}),
    ], 70, start=start, end=NOW)
    logs_for(s, catalogs, "event-catalog", "event-catalog", [
        ("warn", "poster upload skipped: java.net.UnknownHostException: ticket-assets.s3."
         "us-east-2.amazonaws.com: Temporary failure in name resolution",
         {"error.type": "java.net.UnknownHostException"}),
    ], 8, start=before + timedelta(minutes=3), end=NOW)
    _fill_addresses(s)

    # ---- red herrings: an old OOM in analytics, a grafana probe blip, noisy neighbours
    mb = Ctr("metabase", "metabase/metabase:v0.51.9", port=3000,
             requests={"cpu": "500m", "memory": "1536Mi"}, limits={"memory": "2Gi"},
             env={"MB_DB_TYPE": "postgres", "JAVA_OPTS": "-Xmx1536m"},
             readiness=http_probe("/api/health", delay=60, period=10),
             liveness=http_probe("/api/health", delay=120, period=30))
    mb_start = s.ago(days=3, hours=2, minutes=40)

    def mb_states(i: int, started: datetime) -> dict:
        return {"metabase": running(mb_start, restarts=1, last=ended(
            "OOMKilled", 137, started, mb_start - timedelta(seconds=11)))}
    _, mbs = deployment(s, "analytics", "metabase", [mb], replicas=1, node_list=nodes,
                        revision=6, rollout=s.ago(days=5, hours=9), statuses=mb_states,
                        service=3000, node_offset=2)
    for pod in mbs:
        quiet_container(s, pod, "metabase", 1390, cpu=0.09, limit_mib=2048)
    logs_for(s, mbs, "metabase", "metabase", [
        ("info", "GET /api/card/412/query 202 [ASYNC: completed] 1.3 s", {}),
        ("warn", "Sync of Database 3 'warehouse' took 7.4 mins", {}),
        ("warn", "Query timed out after 60s for card 198 (Weekly sell-through)", {}),
    ], 30, start=start, end=NOW)
    graf = Ctr("grafana", "grafana/grafana:11.3.1", port=3000,
               requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "512Mi"},
               readiness=http_probe("/api/health", delay=10, period=10, timeout=1))
    _, grafs = deployment(s, "monitoring", "grafana", [graf], replicas=1, node_list=nodes,
                          revision=12, rollout=s.ago(days=4, hours=12), service=80,
                          target=3000, node_offset=3)
    gip = grafs[0]["status"]["podIP"]
    blip = NOW - timedelta(minutes=53, seconds=12)
    c.event(grafs[0], "Unhealthy", f'Readiness probe failed: Get "http://{gip}:3000/api/health":'
            " context deadline exceeded (Client.Timeout exceeded while awaiting headers)",
            first=blip, last=blip + timedelta(seconds=10), count=2, type_="Warning",
            field_path="spec.containers{grafana}")
    quiet_container(s, grafs[0], "grafana", 141)
    logs_for(s, grafs, "grafana", "grafana", [
        ("info", "Request Completed method=GET path=/api/ds/query status=200", {}),
        ("warn", "Dashboard provisioning: dashboard title is not unique in folder", {}),
        ("error", "Failed to evaluate queries error=\"context deadline exceeded\" "
         "datasource=athena-billing", {}),
        ("info", "Request Completed method=GET path=/api/dashboards/uid/tkt-overview "
         "status=200", {}),
    ], 25, start=start, end=NOW)
    return s


def _day(t: int) -> float:
    hour = (t % 86400) / 3600
    return 1 + 0.25 * math.cos((hour - 19) / 24 * 2 * math.pi)


def _iso(when: datetime) -> str:
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _fill_addresses(s: Story) -> None:
    """Give the 'read udp <pod ip>:<port>' messages the pod's own address."""
    ips = {p["metadata"]["name"]: p["status"].get("podIP", "")
           for p in s.cluster.objects_of("Pod")}
    for _, doc in s.logs.docs:
        msg = doc.get("message", "")
        if "{ip}" in msg:
            doc["message"] = msg.replace("{ip}", ips.get(doc["kubernetes.pod.name"], "")).replace(
                "{port}", str(s.rng.randrange(32768, 60999)))
