"""Building permits: decision letters arrive hours late. The city's quarter-end deadline
for renovation subsidies brought a surge of permit applications from 13:14; every decision
is rendered to a signed PDF by permit-renderer, which consumes the RabbitMQ queue
permit.render. Its HPA (autoscaling/v2, external metric rabbitmq_queue_messages_ready via
prometheus-adapter, target 25 messages a pod, plus CPU) scaled it from 2 to its maximum of
6 by 13:30 and has been limited there since (ScalingLimited TooManyReplicas), while the
queue keeps growing to thousands of messages. Every renderer pod is healthy and busy; the
nodes have plenty of room. Red herrings: permit-portal 5.2.0 rolled out 52 min ago
(plausible alternative), RabbitMQ memory watermark warnings without an alarm, an old OOM
of gis-lookup, font fallback warnings of the renderer."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import gauge, set_times
from tests.data.holdout2._generator.kit import (
    app_counter,
    cpu_seconds,
    deploy,
    requests,
    start_events,
)
from tests.data.holdout3._generator.kit3 import chatter, ksm_deployment, namespaces, quiet, steady
from tests.data.holdout4._generator.kit4 import hpa, ramp
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, http_probe

from .kit8 import Incident, NodeKind, provider_nodes

ID = "permit-letters-delayed"
NOW = datetime.fromisoformat("2028-03-31T14:12:00+00:00")
NS = "building-permits"
MQ = "messaging"
REG = "registry.stadt-intern.de/bauamt"
QUEUE = "permit.render"
PER_POD = 0.3  # letters a second one renderer pod finishes


def build() -> Incident:
    s = Incident(
        id=ID, title="Permit decision letters delayed", now=NOW,
        report="""\
Applicants say their permit decision letters haven't arrived: the portal shows "decision
taken, letter in preparation" for twenty minutes and longer now. Nothing is down that we
can see. It's the last day for the subsidy applications so volume is high, but this
should still work. Started early afternoon.
""",
        truth=truth(
            "autoscaling_limit", "Deployment", NS, "permit-renderer",
            ["ScalingLimited", "TooManyReplicas", "maxReplicas", "permit.render",
             "rabbitmq_queue_messages_ready"],
            "permit-renderer's HPA sits at its maxReplicas of 6 since 13:30 (ScalingLimited "
            "TooManyReplicas) while the permit.render queue keeps growing (the subsidy "
            "deadline tripled the applications); all six renderers are healthy and busy and "
            "the nodes have room. Raise the HPA's maxReplicas (to about 20) so the backlog "
            "drains, and size it for deadline days."))
    set_times(s, 2.0, 60)
    c = s.cluster
    namespaces(s, {"default": 930, "kube-system": 930, NS: 812, MQ: 812, "geo": 640})
    kind = NodeKind("m2c.4xlarge", "16", "65843964Ki", "15890m", "62595836Ki", "v1.31.6",
                    "6.8.0-51-generic", "Ubuntu 24.04.1 LTS", runtime="containerd://1.7.24")
    nodes = provider_nodes(s, "metakube", 5, kind, days=6.3, group="prod-md")
    surge = NOW.replace(hour=13, minute=14, second=0)
    ups = [(surge + timedelta(minutes=4, seconds=12), 2, 4),
           (surge + timedelta(minutes=9, seconds=27), 4, 5),
           (surge + timedelta(minutes=16, seconds=3), 5, 6)]

    def arrivals(t: int) -> float:  # letters a second into permit.render
        return 0.48 + 2.1 * ramp(t, surge, 12)

    def replicas(t: int) -> float:
        n = 2.0
        for when, _, to in ups:
            if t >= when.timestamp() + 20:
                n = float(to)
        return n

    def backlog(t: int) -> float:  # integral of arrivals minus service
        out, x = 14.0, surge.timestamp() - 3600
        while x < t:
            out = max(14.0, out + 60 * (arrivals(int(x)) - min(arrivals(int(x)) * 1.02,
                                                              PER_POD * replicas(int(x)))))
            x += 60
        return out

    # ---- permit-renderer: at its maximum
    ctr = Ctr("permit-renderer", f"{REG}/permit-renderer:3.7.1", port=8080,
              requests={"cpu": "1", "memory": "1536Mi"}, limits={"memory": "2Gi"},
              env={"AMQP_URL": "amqps://rabbitmq.messaging.svc:5671/permits",
                   "AMQP_QUEUE": QUEUE, "AMQP_PREFETCH": "2", "RENDER_WORKERS": "2",
                   "SIGNING_URL": "https://siegel.stadt-intern.de/api/v1/sign"},
              readiness=http_probe("/actuator/health/readiness", delay=25),
              liveness=http_probe("/actuator/health/liveness", delay=60, period=20))
    rollout = s.ago(days=4, hours=7, minutes=31)

    def born(i: int) -> datetime:
        if i < 2:
            return rollout + timedelta(seconds=8 + 23 * i)
        if i < 4:
            return ups[0][0] + timedelta(seconds=1 + i)
        return ups[i - 3][0] + timedelta(seconds=1)
    work, pods = deploy(s, NS, "permit-renderer", [ctr], replicas=6, nodes=nodes,
                        revision=26, rollout=rollout, born=born, service=8080,
                        old=(25, s.ago(days=11), [Ctr("permit-renderer",
                                                     f"{REG}/permit-renderer:3.7.0")]))
    rs = work.revisions[-1]
    for when, a, b in ups:
        c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set {rs['metadata']['name']}"
                f" from {a} to {b}", first=when + timedelta(seconds=0.4),
                component="deployment-controller", host="")
    for i, pod in enumerate(pods[2:]):
        created = born(i + 2)
        c.event(rs, "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}",
                first=created, component="replicaset-controller", host="")
        start_events(s, pod, scheduled=created + timedelta(seconds=0.5),
                     started=created + timedelta(seconds=6 + i))
    hpa_obj = hpa(s, work, min_=2, max_=6, metrics=[
        {"type": "External", "external": {
            "metric": {"name": "rabbitmq_queue_messages_ready", "selector": {
                "matchLabels": {"queue": QUEUE, "vhost": "permits"}}},
            "target": {"type": "AverageValue", "averageValue": "25"}}},
        {"type": "Resource", "resource": {"name": "cpu", "target": {
            "type": "Utilization", "averageUtilization": 75}}}],
        current=[{"type": "External", "external": {
            "metric": {"name": "rabbitmq_queue_messages_ready", "selector": {
                "matchLabels": {"queue": QUEUE, "vhost": "permits"}}},
            "current": {"averageValue": f"{int(backlog(int(NOW.timestamp())) / 6)}"}}},
            {"type": "Resource", "resource": {"name": "cpu", "current": {
                "averageUtilization": 91, "averageValue": "914m"}}}],
        replicas=6, desired=6, created=s.ago(days=400), last_scale=ups[-1][0], conditions=[
            ("AbleToScale", "True", "ReadyForNewScale", "recommended size matches current "
             "size", ups[-1][0] + timedelta(minutes=5)),
            ("ScalingActive", "True", "ValidMetricFound", "the HPA was able to successfully "
             "calculate a replica count from external metric rabbitmq_queue_messages_ready("
             f"&LabelSelector{{MatchLabels:map[string]string{{queue: {QUEUE},vhost: permits,}},"
             "MatchExpressions:[]LabelSelectorRequirement{},})", s.ago(days=6)),
            ("ScalingLimited", "True", "TooManyReplicas", "the desired replica count is more "
             "than the maximum replica count", ups[-1][0] + timedelta(minutes=1))])
    hpa_obj["metadata"]["labels"] = {"app.kubernetes.io/name": "permit-renderer",
                                     "app.kubernetes.io/managed-by": "Helm"}
    for when, _, b in ups:
        c.event(hpa_obj, "SuccessfulRescale", f"New size: {b}; reason: external metric "
                "rabbitmq_queue_messages_ready(&LabelSelector{MatchLabels:map[string]string{"
                f"queue: {QUEUE},vhost: permits,}},MatchExpressions:[]"
                "LabelSelectorRequirement{},}) above target", first=when,
                component="horizontal-pod-autoscaler", host="")
    hl = {"namespace": NS, "horizontalpodautoscaler": "permit-renderer"}
    gauge(s, "kube_horizontalpodautoscaler_spec_max_replicas", hl, lambda t: 6.0,
          "Upper limit for the number of pods that can be set by the autoscaler; cannot be "
          "smaller than MinReplicas.")
    gauge(s, "kube_horizontalpodautoscaler_status_current_replicas", hl, replicas,
          "Current number of replicas of pods managed by this autoscaler.")
    gauge(s, "kube_horizontalpodautoscaler_status_desired_replicas", hl,
          lambda t: min(6.0, max(2.0, backlog(t) / 25 // 1 + 1)),
          "Desired number of replicas of pods managed by this autoscaler.")
    gauge(s, "kube_horizontalpodautoscaler_status_condition",
          {**hl, "condition": "ScalingLimited", "status": "true"},
          lambda t: 1.0 if t >= ups[-1][0].timestamp() + 60 else 0.0,
          "The condition of this autoscaler.")
    ksm_deployment(s, NS, "permit-renderer", replicas, replicas)
    for pod in pods:
        quiet(s, [pod], "permit-renderer", 1120)
        cpu_seconds(s, pod, "permit-renderer",
                    lambda t: 0.92 if t > surge.timestamp() + 240 else 0.31)
        app_counter(s, "permit_letters_rendered_total", {"namespace": NS,
                                                         "pod": pod["metadata"]["name"],
                                                         "result": "ok"}, [
            t for t in s.times if t >= pod_time(pod) + 30],
            lambda t: min(PER_POD, arrivals(t) / replicas(t)) * 0.998,
            "Decision letters rendered and signed.")
        requests(s, pod, "permit-renderer", rps=lambda t: 0.2, codes={"200": lambda t: 1.0})
    gauge(s, "permit_render_oldest_message_age_seconds", {"namespace": NS, "queue": QUEUE},
          lambda t: 40.0 if backlog(t) < 20 else backlog(t) / (PER_POD * 6) * 0.9 + 40,
          "Age of the oldest unacknowledged message seen by the renderers.")
    chatter(s, pods, "permit-renderer", "permit-renderer", [
        ("info", "rendered decision BA-2028-11842 (4 pages) and signed in 4.6s", {}),
        ("info", "rendered decision BA-2028-11907 (6 pages) and signed in 4.9s", {}),
        ("warn", "font 'Frutiger Next' not found, falling back to 'DejaVu Sans'", {}),
        ("info", "rendered decision BA-2028-12013 (3 pages) and signed in 4.1s", {}),
    ], 300)

    # ---- RabbitMQ, the queue
    mq = Ctr("rabbitmq", "docker.io/library/rabbitmq:3.13.7-management", port=5671,
             port_name="amqps", requests={"cpu": "1", "memory": "4Gi"},
             limits={"memory": "4Gi"})
    _, mqs = steady(s, MQ, "rabbitmq", [mq], nodes=nodes, replicas=3, revision=12,
                    rollout=s.ago(days=5, hours=11), service=5671, target="amqps", offset=2)
    for pod in mqs:
        quiet(s, [pod], "rabbitmq", 2150)
    ql = {"namespace": MQ, "queue": QUEUE, "vhost": "permits"}
    gauge(s, "rabbitmq_queue_messages_ready", ql, backlog, "Messages ready to be delivered "
          "to consumers.")
    gauge(s, "rabbitmq_queue_messages_unacked", ql, lambda t: 2.0 * 2 * replicas(t),
          "Messages delivered to consumers but not yet acknowledged.")
    gauge(s, "rabbitmq_queue_consumers", ql, lambda t: 2.0 * replicas(t),
          "Consumers on a queue.")
    app_counter(s, "rabbitmq_queue_messages_published_total", ql, s.times, arrivals,
                "Total number of messages published to queues.")
    chatter(s, mqs, "rabbitmq", "rabbitmq", [
        ("warn", "memory resource usage is approaching the high watermark (0.38 of 0.40)", {}),
        ("info", "accepting AMQP connection 10.244.3.41:48812 -> 10.244.1.17:5671", {}),
    ], 24, start=surge + timedelta(minutes=20))

    # ---- red herrings
    roll = NOW - timedelta(minutes=52)
    portal = Ctr("permit-portal", f"{REG}/permit-portal:5.2.0", port=8080,
                 requests={"cpu": "300m", "memory": "768Mi"}, limits={"memory": "1Gi"},
                 readiness=http_probe("/health"))
    _, portals = steady(s, NS, "permit-portal", [portal], nodes=nodes, replicas=3,
                        revision=88, rollout=roll, offset=1,
                        old=(87, s.ago(days=3), [Ctr("permit-portal",
                                                     f"{REG}/permit-portal:5.1.9")]))
    for pod in portals:
        quiet(s, [pod], "permit-portal", 640)
        requests(s, pod, "permit-portal", rps=lambda t: 6 + 11 * ramp(t, surge, 12), codes={
            "200": lambda t: 0.993, "422": lambda t: 0.006, "500": lambda t: 0.001})
    chatter(s, portals, "permit-portal", "permit-portal", [
        ("info", "application BA-2028-12288 submitted (Sanierungszuschuss)", {}),
        ("info", "status page for BA-2028-11790: decision taken, letter in preparation", {}),
        ("warn", "upload of floor plan rejected: file larger than 25 MB",
         {"http.response.status_code": 422}),
    ], 90, start=roll)
    gis = Ctr("gis-lookup", f"{REG}/gis-lookup:1.8.2", port=8080,
              requests={"cpu": "200m", "memory": "1Gi"}, limits={"memory": "1280Mi"})
    _, giss = steady(s, "geo", "gis-lookup", [gis], nodes=nodes, replicas=2, revision=9,
                     rollout=s.ago(days=5, hours=1), offset=3,
                     restarted={1: (s.ago(days=1, hours=19), "OOMKilled", 137)})
    quiet(s, giss, "gis-lookup", 830)
    chatter(s, giss, "gis-lookup", "gis-lookup", [
        ("info", "parcel lookup Flur 12 Flurstück 331/4: zone WA, monument protection no", {}),
    ], 20)
    return s


def pod_time(pod: dict) -> float:
    return datetime.fromisoformat(pod["metadata"]["creationTimestamp"].replace(
        "Z", "+00:00")).timestamp()
