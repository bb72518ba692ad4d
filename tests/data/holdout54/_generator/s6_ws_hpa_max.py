"""Shape 6, autoscaling_limit: ws-gateway's HPA is pinned at maxReplicas during a match."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

from ._kit import (
    Ctr,
    Line,
    Rev,
    Scenario,
    deployment,
    endpoints,
    event,
    iso,
    job,
    lines,
    make_pending,
    meta,
    namespace,
    pod,
    service,
    standard_bystanders,
    statefulset,
    worker_nodes,
)

SID = "live-scores-websocket-503"
REG = "europe-docker.pkg.dev/scoreline/apps"
MAX_CONN = 10000


def build(root: Path) -> None:
    sc = Scenario(SID, "2026-11-15T20:40:00Z", seed=5406)
    old = sc.ago(days=260)
    nodes = worker_nodes(sc, [f"ip-10-90-{a}-{b}.ec2.internal"
                              for a, b in ((1, 33), (2, 150), (3, 8), (1, 97), (2, 214),
                                           (3, 176))])
    standard_bystanders(sc, nodes, ["ws-gateway.realtime.svc.cluster.local",
                                    "match-feed.realtime.svc.cluster.local",
                                    "redis.realtime.svc.cluster.local"])
    for ns in ("realtime", "web", "analytics"):
        namespace(sc, ns, old)
    kickoff = sc.ago(minutes=55)
    capped = sc.ago(minutes=44)

    def demand(t: datetime) -> float:
        """Connections the fans would open in total."""
        if t < kickoff:
            return 21000.0
        m = (t - kickoff).total_seconds() / 60
        return 21000.0 + min(m, 25) * 2100 + max(0.0, m - 25) * 180

    def replicas(t: datetime) -> int:
        if t < sc.ago(minutes=50):
            return 4
        if t < sc.ago(minutes=47):
            return 5
        return 6

    def per_pod(t: datetime) -> float:
        return min(float(MAX_CONN), demand(t) / replicas(t))

    ctr = Ctr("ws-gateway", f"{REG}/ws-gateway:1.22.3", port=8080,
              env={"MAX_CONNECTIONS": str(MAX_CONN), "REDIS_URL": "redis://redis:6379/0",
                   "PING_INTERVAL": "25s"}, cpu_req="1", cpu_lim="2", mem_req="1Gi",
              mem_lim="2Gi")
    start_of = {4: sc.ago(minutes=50) + timedelta(seconds=30),
                5: sc.ago(minutes=47) + timedelta(seconds=30)}
    gw = statefulset(sc, "realtime", "ws-gateway", [ctr], replicas=6, nodes=nodes, created=old,
                     at=sc.ago(days=3, hours=5), service_name="ws-gateway-headless",
                     pod_hook=lambda i: {"started": start_of[i]} if i in start_of else {})
    sc.add({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": meta(sc, "ws-gateway", "realtime", old, {"app": "ws-gateway"}),
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "StatefulSet",
                                        "name": "ws-gateway"},
                     "minReplicas": 3, "maxReplicas": 6,
                     "metrics": [{"type": "Pods", "pods": {
                         "metric": {"name": "websocket_active_connections"},
                         "target": {"type": "AverageValue", "averageValue": "7k"}}}],
                     "behavior": {"scaleDown": {"stabilizationWindowSeconds": 600}}},
            "status": {"currentReplicas": 6, "desiredReplicas": 6,
                       "lastScaleTime": iso(sc.ago(minutes=47)),
                       "currentMetrics": [{"type": "Pods", "pods": {
                           "metric": {"name": "websocket_active_connections"},
                           "current": {"averageValue": "9987"}}}],
                       "conditions": [
                           {"type": "AbleToScale", "status": "True",
                            "lastTransitionTime": iso(sc.ago(minutes=47)),
                            "reason": "ReadyForNewScale",
                            "message": "recommended size matches current size"},
                           {"type": "ScalingActive", "status": "True",
                            "lastTransitionTime": iso(sc.ago(days=3)),
                            "reason": "ValidMetricFound",
                            "message": "the HPA was able to successfully calculate a replica "
                                       "count from pods metric websocket_active_connections"},
                           {"type": "ScalingLimited", "status": "True",
                            "lastTransitionTime": iso(sc.ago(minutes=44)),
                            "reason": "TooManyReplicas",
                            "message": "the desired replica count is more than the maximum "
                                       "replica count"}]}})
    for n, at in ((5, sc.ago(minutes=50)), (6, sc.ago(minutes=47))):
        event(sc, "realtime", "HorizontalPodAutoscaler", "ws-gateway", "SuccessfulRescale",
              f"New size: {n}; reason: pods metric websocket_active_connections above target",
              first=at, last=at, component="horizontal-pod-autoscaler",
              api="autoscaling/v2")
    event(sc, "realtime", "StatefulSet", "ws-gateway", "SuccessfulCreate",
          "create Pod ws-gateway-5 in StatefulSet ws-gateway successful",
          first=sc.ago(minutes=47), last=sc.ago(minutes=47), component="statefulset-controller",
          api="apps/v1")
    lb = service(sc, "realtime", "ws-gateway", selector={"app": "ws-gateway"},
                 ports=[("wss", 443, 8080)], created=old, stype="LoadBalancer",
                 annotations={"service.beta.kubernetes.io/aws-load-balancer-type": "external",
                              "service.beta.kubernetes.io/aws-load-balancer-nlb-target-type":
                                  "ip"},
                 extra_spec={"externalTrafficPolicy": "Local"})
    lb["status"] = {"loadBalancer": {"ingress": [
        {"hostname": "k8s-realtime-wsgatewa-4e1c9a77b2-0a8f3c.elb.eu-west-1.amazonaws.com"}]}}
    service(sc, "realtime", "ws-gateway-headless", selector={"app": "ws-gateway"},
            ports=[("http", 8080, 8080)], created=old,
            extra_spec={"clusterIP": "None", "clusterIPs": ["None"]})
    endpoints(sc, "realtime", "ws-gateway", gw.pods, 8080, old, port_name="wss")
    event(sc, "realtime", "Service", "ws-gateway", "EnsuringLoadBalancer",
          "Ensuring load balancer", first=sc.ago(minutes=26), last=sc.ago(minutes=26),
          component="service-controller")
    event(sc, "realtime", "Service", "ws-gateway", "UpdatedLoadBalancer",
          "Updated load balancer with new hosts", first=sc.ago(minutes=26),
          last=sc.ago(minutes=25), component="service-controller")

    for i, p in enumerate(gw.pods):
        since = start_of.get(i)

        def gen(rng: random.Random, t: datetime) -> Line:
            c = int(per_pod(t)) - rng.randint(0, 15)
            if per_pod(t) >= MAX_CONN and rng.random() < 0.7:
                ip = f"{rng.choice(['81.2', '86.15', '92.40', '5.64'])}.{rng.randint(1, 250)}." \
                     f"{rng.randint(1, 250)}"
                return ("warn", f"rejecting websocket upgrade from {ip}: connection limit "
                                f"reached ({MAX_CONN}/{MAX_CONN}), responding 503",
                        {"http.response.status_code": 503})
            return ("info", f"stats: active_connections={max(c, 0)} "
                            f"msgs_out_per_s={rng.randint(800, 2400)} redis_lag_ms="
                            f"{rng.randint(1, 9)}", {})

        sc.chatter(p.ref, gen, 2.2, start=since)
        if i == 3:
            sc.log(sc.ago(hours=0, minutes=58), p.ref, "warn",
                   "redis pubsub reconnect after 1 missed heartbeat (recovered in 210ms)")
        sc.usage(p, lambda t: 0.25 + 1.1 * per_pod(t) / MAX_CONN, lambda t: 350e6 +
                 per_pod(t) * 60e3, since=since, ksm=True)
        labels = {"namespace": "realtime", "pod": p.ref.pod}
        sc.gauge("websocket_active_connections", "Open websocket connections.", labels,
                 lambda t: float(int(per_pod(t))), since=since)
        sc.counter("websocket_upgrades_rejected_total", "Upgrades refused at the limit.",
                   labels, lambda t: (demand(t) / replicas(t) - MAX_CONN) / 120.0
                   if demand(t) / replicas(t) > MAX_CONN else 0.0, since=since,
                   start=0.0 if since else float(sc.rng.randint(0, 30)))
    for name, fn in (("kube_horizontalpodautoscaler_status_current_replicas", replicas),
                     ("kube_horizontalpodautoscaler_status_desired_replicas", replicas),
                     ("kube_horizontalpodautoscaler_spec_max_replicas", lambda t: 6),
                     ("kube_horizontalpodautoscaler_spec_min_replicas", lambda t: 3)):
        sc.gauge(name, "kube-state-metrics HPA replicas.",
                 {"namespace": "realtime", "horizontalpodautoscaler": "ws-gateway"},
                 lambda t, f=fn: float(f(t)))
    sc.gauge("aws_nlb_healthy_host_count", "Healthy targets behind the NLB (cloudwatch "
             "exporter).", {"load_balancer": "k8s-realtime-wsgatewa-4e1c9a77b2",
                           "target_group": "k8s-realtim-wsgatewa-81f0"},
             lambda t: float(replicas(t)))
    _others(sc, nodes, old, capped)
    sc.write(root, title="Live scores: websocket connections failing with 503",
             report="users can't connect to live scores during the match, websocket connects "
                    "fail with 503 or just hang. feels like the NLB is dropping connections (the "
                    "LB service got updated ~25 min ago). anyone checked the AWS status page?\n",
             truth={"category": "autoscaling_limit",
                    "culprit": {"kind": "StatefulSet", "namespace": "realtime",
                                "name": "ws-gateway"},
                    "evidence": ["ScalingLimited",
                                 "the desired replica count is more than the maximum replica "
                                 "count", f"connection limit reached ({MAX_CONN}/{MAX_CONN})"],
                    "fix": "Raise ws-gateway's HPA maxReplicas (e.g. to 12) so the StatefulSet "
                           "can scale past 6 pods, or raise MAX_CONNECTIONS per pod with the "
                           "resources to match; the NLB is healthy and only forwards the "
                           "gateways' 503s."})


def _others(sc: Scenario, nodes: list[str], old: datetime, capped: datetime) -> None:
    feed = deployment(sc, "realtime", "match-feed", [
        Rev([Ctr("match-feed", f"{REG}/match-feed:4.3.0")], sc.ago(days=2), 2)],
        nodes=nodes, created=old, first_rev=35)
    for p in feed.pods:
        sc.chatter(p.ref, lines([("info", "published score update m_{id} to redis (fanout "
                                          "{n} channels)"),
                                 ("warn", "provider opta delayed event by {ms}0ms")]), 1.2)
        sc.usage(p, 0.2, 150e6)
    web = deployment(sc, "web", "live-scores-web", [
        Rev([Ctr("live-scores-web", f"{REG}/live-scores-web:8.0.1", port=3000)],
            sc.ago(days=1, hours=4), 3)], nodes=nodes, created=old, first_rev=120)

    def web_gen(rng: random.Random, t: datetime) -> Line:
        if t >= capped and rng.random() < 0.35:
            return ("warn", "client beacon: ws connect failed wss://live.scoreline.tv/socket "
                            "status=503 retry_in=4s", {})
        return ("info", f"GET /match/{rng.randint(1000, 9999)} 200 {rng.randint(15, 90)}ms",
                {"http.response.status_code": 200})

    for p in web.pods:
        sc.chatter(p.ref, web_gen, 1.2)
        sc.usage(p, 0.15, 230e6)
    created = sc.ago(minutes=18)
    j = job(sc, "analytics", "match-report-29384710", created)
    ctr = Ctr("spark-driver", f"{REG}/match-report:0.9.4", port=None, cpu_req="6",
              mem_req="20Gi", mem_lim="20Gi")
    j["spec"]["template"]["spec"]["containers"] = [ctr.spec()]
    p = pod(sc, ns="analytics", name=f"match-report-29384710-{sc.suffix()}",
            labels={"app": "match-report", "job-name": "match-report-29384710"},
            node_name=nodes[0], node_index=1, ctrs=[ctr], owner=j, started=created)
    msg = ("0/6 nodes are available: 6 Insufficient cpu, 6 Insufficient memory. preemption: "
           "0/6 nodes are available: 6 No preemption victims found for incoming pod.")
    make_pending(sc, p, msg, created)
    event(sc, "analytics", "Pod", p.ref.pod, "FailedScheduling", msg, etype="Warning", count=6,
          first=created, last=sc.ago(minutes=3), component="default-scheduler")
    event(sc, "analytics", "Pod", p.ref.pod, "NotTriggerScaleUp",
          "pod didn't trigger scale-up: 2 max node group size reached",
          first=created, last=sc.ago(minutes=4), component="cluster-autoscaler")
