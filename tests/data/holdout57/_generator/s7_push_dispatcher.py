"""autoscaling_limit: the HPA's scaleUp policy adds one pod per five minutes during a spike."""

from __future__ import annotations

from pathlib import Path

from ._kit import App, Scenario, rollout_events, rs_hash, worker_nodes

SID = "notifications-push-delays"
NOW = "2026-10-19T18:40:00Z"
SPIKE = 27.0
ADDS = [26.0, 21.0, 16.0, 11.0, 6.0, 1.0]


def replicas(m: float) -> int:
    return 3 + sum(1 for a in ADDS if a >= m)


def build(root: Path) -> None:
    s = Scenario(SID, NOW, 5707)
    nodes = worker_nodes(s, 9, cpu="16", memory="64Gi", instance="m6i.4xlarge")
    s.background(nodes, ["notifications", "marketing"])
    push = s.app("notifications", "push-dispatcher",
                 "registry.internal/notifications/push-dispatcher:5.4.1",
                 [nodes[i % 9] for i in range(3 + len(ADDS))], cpu="500m", mem="512Mi",
                 revision=29, created_min=3 * 1440,
                 env=[{"name": "KAFKA_TOPIC", "value": "push-requests"},
                      {"name": "CONCURRENCY", "value": "200"}])
    for k, a in enumerate(ADDS):
        s.retime_pod(push.pods[3 + k], a - 0.4)
        s.event("notifications", "ReplicaSet", push.rs, "SuccessfulCreate",
                f"Created pod: {push.pods[3 + k]}", first=a, last=a,
                component="replicaset-controller")
    s.event("notifications", "HorizontalPodAutoscaler", "push-dispatcher", "SuccessfulRescale",
            f"New size: {3 + len(ADDS)}; reason: cpu resource utilization (percentage of "
            "request) above target", count=len(ADDS), first=ADDS[0], last=ADDS[-1],
            component="horizontal-pod-autoscaler")
    s.event("notifications", "Deployment", "push-dispatcher", "ScalingReplicaSet",
            f"Scaled up replica set {push.rs} to {3 + len(ADDS)} from {2 + len(ADDS)}",
            count=len(ADDS), first=ADDS[0], last=ADDS[-1], component="deployment-controller")
    s.add({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
           "metadata": s.meta("push-dispatcher", "notifications", 120 * 1440,
                              labels={"app": "push-dispatcher"}),
           "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                       "name": "push-dispatcher"},
                    "minReplicas": 3, "maxReplicas": 40,
                    "metrics": [{"type": "Resource", "resource": {
                        "name": "cpu", "target": {"type": "Utilization",
                                                  "averageUtilization": 60}}}],
                    "behavior": {
                        "scaleUp": {"stabilizationWindowSeconds": 0, "selectPolicy": "Max",
                                    "policies": [{"type": "Pods", "value": 1,
                                                  "periodSeconds": 300}]},
                        "scaleDown": {"stabilizationWindowSeconds": 600, "selectPolicy": "Max",
                                      "policies": [{"type": "Percent", "value": 10,
                                                    "periodSeconds": 60}]}}},
           "status": {"currentReplicas": 9, "desiredReplicas": 9,
                      "lastScaleTime": s.t(ADDS[-1]),
                      "currentMetrics": [{"type": "Resource", "resource": {
                          "name": "cpu", "current": {"averageUtilization": 178,
                                                     "averageValue": "890m"}}}],
                      "conditions": [
                          {"type": "AbleToScale", "status": "True", "reason": "SucceededRescale",
                           "message": "the HPA controller was able to update the target scale "
                                      "to 9", "lastTransitionTime": s.t(ADDS[-1])},
                          {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound",
                           "message": "the HPA was able to successfully calculate a replica "
                                      "count from cpu resource utilization (percentage of "
                                      "request)", "lastTransitionTime": s.t(3 * 1440)},
                          {"type": "ScalingLimited", "status": "True", "reason": "ScaleUpLimited",
                           "message": "the desired replica count is increasing faster than the "
                                      "maximum scale rate", "lastTransitionTime": s.t(ADDS[0])}]}})
    dep = s.find("Deployment", "push-dispatcher")
    dep["spec"]["replicas"] = 9

    def alive(i: int, m: float) -> bool:
        return i < 3 or ADDS[i - 3] - 0.4 >= m

    def util(m: float) -> float:
        if m > SPIKE:
            return 0.28
        return min(0.98, 0.28 + 0.7 * (SPIKE - m) / 2)

    def demand(m: float) -> float:
        return 900.0 if m > SPIKE else 9800.0
    capacity_per_pod = 320.0

    s.pod_basics(push, cpu=lambda m, i: util(m) if alive(i, m) else None,
                 mem_mb=lambda m, i: (250.0 + 200 * (m < SPIKE)) if alive(i, m) else None,
                 rps=lambda m, i: min(demand(m) / replicas(m), capacity_per_pod)
                 if alive(i, m) else None)
    s.gauge("kube_horizontalpodautoscaler_status_current_replicas", "Current replicas.",
            {"namespace": "notifications", "horizontalpodautoscaler": "push-dispatcher"},
            replicas)
    s.gauge("kube_horizontalpodautoscaler_status_desired_replicas", "Desired replicas.",
            {"namespace": "notifications", "horizontalpodautoscaler": "push-dispatcher"},
            replicas)
    s.gauge("kube_horizontalpodautoscaler_spec_max_replicas", "Max replicas.",
            {"namespace": "notifications", "horizontalpodautoscaler": "push-dispatcher"},
            lambda m: 40)
    s.gauge("kube_horizontalpodautoscaler_spec_min_replicas", "Min replicas.",
            {"namespace": "notifications", "horizontalpodautoscaler": "push-dispatcher"},
            lambda m: 3)
    s.gauge("kube_horizontalpodautoscaler_status_target_metric", "HPA observed metric.",
            {"namespace": "notifications", "horizontalpodautoscaler": "push-dispatcher",
             "metric_name": "cpu", "metric_target_type": "utilization"},
            lambda m: int(util(m) / 0.5 * 100 * (0.9 if m < 3 else 1)))

    def lag(m: float) -> float:
        if m > SPIKE:
            return 400.0
        total = 0.0
        t = SPIKE
        while t > m:
            total += (demand(t) - capacity_per_pod * replicas(t)) * 60
            t -= 1
        return max(400.0, total)
    s.gauge("kafka_consumergroup_lag", "Consumer group lag.",
            {"consumergroup": "push-dispatcher", "topic": "push-requests"}, lag)
    s.gauge("push_delivery_delay_seconds", "Age of the oldest undelivered push at dispatch.",
            {"namespace": "notifications", "quantile": "0.99"},
            lambda m: 2.1 if m > SPIKE else round(lag(m) / (capacity_per_pod * replicas(m)), 1))
    for i, p in enumerate(push.pods):
        m = (60.0 if i < 3 else ADDS[i - 3] - 0.4) - s.rng.uniform(0, 0.2)
        while m > 0:
            r = s.rng.random()
            if m < SPIKE and r < 0.12:
                s.log(s.ago(m), "warn", "push-dispatcher", "notifications", p, "push-dispatcher",
                      f"worker pool saturated: 200/200 sends in flight, partition "
                      f"{s.rng.randint(0, 47)} lag {int(lag(m) / 48)}")
            elif r < 0.2:
                s.log(s.ago(m), "warn", "push-dispatcher", "notifications", p, "push-dispatcher",
                      f"apns: device token {s.uid(str(m))[:13]} returned 410 Unregistered, "
                      "removing")
            elif r < 0.23:
                s.log(s.ago(m), "error", "push-dispatcher", "notifications", p,
                      "push-dispatcher", "fcm: send failed for 1 of 500 messages: "
                      "messaging/registration-token-not-registered")
            else:
                s.log(s.ago(m), "info", "push-dispatcher", "notifications", p, "push-dispatcher",
                      f"batch sent: 500 msgs apns={s.rng.randint(200, 300)} "
                      f"fcm={s.rng.randint(200, 300)} in {s.rng.randint(300, 900)}ms")
            m -= (20 if m > SPIKE else 9) / 60 * s.rng.uniform(0.6, 1.4)

    camp = s.app("marketing", "campaign-scheduler",
                 "registry.internal/marketing/campaign-scheduler:2.0.7", nodes[:1], revision=14,
                 created_min=4 * 1440)
    s.log(s.ago(SPIKE + 0.3), "info", "campaign-scheduler", "marketing", camp.pods[0],
          "campaign-scheduler", "campaign 'autumn-sale-push' started: audience 8.9M devices, "
          "enqueueing to push-requests")
    s.log(s.ago(SPIKE - 14), "info", "campaign-scheduler", "marketing", camp.pods[0],
          "campaign-scheduler", "campaign 'autumn-sale-push' enqueued 8912440 messages")
    s.chatter(camp, [("info", "next campaign window check: 0 due")], every_s=300)
    s.pod_basics(camp, cpu=lambda m, i: 0.02, mem_mb=lambda m, i: 90.0)
    email = s.app("notifications", "email-sender",
                  "registry.internal/notifications/email-sender:3.2.0", nodes[3:5],
                  revision=21, created_min=40,
                  prev_image="registry.internal/notifications/email-sender:3.1.9")
    rollout_events(s, "notifications", "email-sender", email.rs,
                   "email-sender-" + rs_hash("notificationsemail-sender20"), 40, 2)
    s.chatter(email, [("info", "sent template {n} via ses in {ms}ms"),
                      ("warn", "ses throttled, retrying in 200ms")], every_s=40)
    s.pod_basics(email, cpu=lambda m, i: 0.1, mem_mb=lambda m, i: 150.0, rps=lambda m, i: 3.0)
    prefs = s.app("notifications", "preferences-api",
                  "registry.internal/notifications/preferences-api:1.11.0", nodes[5:7],
                  revision=33, created_min=5 * 1440)
    s.chatter(prefs, [("info", "GET /v1/prefs/{id} 200 {ms}ms")], every_s=30)
    s.pod_basics(prefs, cpu=lambda m, i: 0.1, mem_mb=lambda m, i: 160.0, rps=lambda m, i: 12.0)
    assert isinstance(camp, App)

    s.scenario_yaml = {
        "id": SID,
        "title": "push notifications delayed during the campaign",
        "now": NOW,
        "report": "push notifications are arriving 15+ minutes late since the autumn-sale "
                  "campaign blast at ~18:13. The HPA on push-dispatcher is scaling up so I "
                  "guess it's just the volume plus APNs being slow (lots of 410s)? anything we "
                  "can do besides waiting?\n",
        "truth": {
            "category": "autoscaling_limit",
            "culprit": {"kind": "Deployment", "namespace": "notifications",
                        "name": "push-dispatcher"},
            "evidence": ["ScaleUpLimited", "periodSeconds: 300", "maxReplicas: 40",
                         "200/200 sends in flight"],
            "fix": "The HPA's behavior.scaleUp policy allows only one pod per 300 seconds, so "
                   "during the spike it crawls from 3 to 9 replicas while CPU sits near 180% of "
                   "target and the lag grows; maxReplicas (40) is far away. Scale "
                   "push-dispatcher up now by hand and loosen the scaleUp policy (e.g. 100% or "
                   "several pods per 60s); the APNs 410s are routine token cleanup.",
        },
    }
    s.write(root)
