"""Scenario 7: the KEDA trigger for order-worker still watches the renamed queue.

This morning orders-api 7.2.0 and order-worker moved to ``order-events.v2``; the
ScaledObject's rabbitmq trigger still reads ``order-events``, which is now empty, so the
HPA that KEDA generated sees 0 and holds the worker at its minimum of 2 while the real
queue's backlog grows all afternoon.
"""

from __future__ import annotations

import json
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
from ._kit import Obj, Story, accumulate, at, grid, iso, mins

NS = "orders"
REG = "ghcr.io/acme-retail"
METRIC = "s0-rabbitmq-order-events"
SELECTOR = {"matchLabels": {"scaledobject.keda.sh/name": "order-worker"}}


def build() -> Story:
    """Build the scenario."""
    now = at("2026-11-04T16:30:00Z")
    switch = at("2026-11-04T09:10:00Z")
    s = Story(
        "order-emails-late", "Order confirmation emails one to two hours late", now,
        "customers say order confirmation emails arrive 1-2 hours late today. rabbit looks "
        "fine to me (no alarms). maybe the new orders-api release this morning? order-worker "
        "pods are all green.",
        "autoscaling_limit", {"kind": "Deployment", "namespace": NS, "name": "order-worker"},
        [METRIC, "keda-hpa-order-worker", "order-events.v2",
         "rabbitmq_queue_messages_ready", "currentReplicas: 2"],
        "Point the order-worker ScaledObject's rabbitmq trigger at queueName order-events.v2 "
        "(it still watches the retired order-events queue, which reads 0), then let KEDA scale "
        "the worker out to drain the backlog.",
        seed=5807)
    rng = s.rng
    for ns in (NS, "keda", "rabbitmq", "default"):
        s.add(namespace(s, ns, now - timedelta(days=600)))
    ips: dict[str, str] = {}
    for i in range(6):
        n = f"aks-general-31458770-vmss{i:06d}"
        ips[n] = f"10.224.0.{4 + i}"
        s.add(node(s, n, now - timedelta(days=15 + i), ip=ips[n], cpu="8",
                   os_image="Ubuntu 22.04.4 LTS", kernel="5.15.0-1071-azure",
                   kubelet="v1.29.7", runtime="containerd://1.7.20-1",
                   labels={"kubernetes.azure.com/agentpool": "general",
                           "topology.kubernetes.io/zone": f"westeurope-{1 + i % 3}"}))
    nodes = list(ips)
    s.add({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": meta("order-worker-config", NS, now - timedelta(days=400), s.uid(),
                            {"app": "order-worker"}),
           "data": {"QUEUE_NAME": "order-events.v2", "PREFETCH": "20",
                    "AMQP_HOST": "rabbitmq.rabbitmq.svc", "EMAIL_TOPIC": "notifications"}})
    img = f"{REG}/order-worker:5.4.0"
    cs = [container("order-worker", img, port=9090, cpu="500m", memory="512Mi",
                    cpu_limit="1", probe_path="/healthz",
                    env=[{"name": "QUEUE_NAME", "valueFrom": {"configMapKeyRef": {
                        "name": "order-worker-config", "key": "QUEUE_NAME"}}}])]
    rolled = switch - mins(5)
    d, duid = deployment(s, NS, "order-worker", labels={"app": "order-worker"}, containers=cs,
                         replicas=2, ready=2, created=now - timedelta(days=400), revision=45,
                         generation=1290, changed=rolled)
    rs, rsuid = replicaset(s, NS, "order-worker", duid, "84c6f9d7b5", containers=cs, replicas=2,
                           ready=2, revision=45, created=rolled, app="order-worker")
    s.add(d, rs)
    workers = []
    for i in range(2):
        pn = f"order-worker-84c6f9d7b5-{s.suffix()}"
        s.add(pod(s, NS, pn, PodSpecBits(cs, {"app": "order-worker",
                                              "pod-template-hash": "84c6f9d7b5"}),
                  node_name=nodes[i], ip=f"10.244.{i + 2}.{rng.randint(2, 250)}",
                  start=rolled + mins(i), host_ip=ips[nodes[i]],
                  owner=owner_ref("ReplicaSet", rs["metadata"]["name"], rsuid)))
        workers.append(pn)
    s.chatter(NS, workers, "order-worker", "order-worker", now - timedelta(hours=9), now, 12.0, [
        (9, "info", "consumed order.created {id} from order-events.v2, confirmed in {ms}ms"),
        (1, "info", "published order.confirmed {id} to notifications")])
    s.add(_hpa(s, switch))
    _keda(s, switch, nodes, ips)
    _others(s, nodes, ips, switch)
    _metrics(s, switch)
    return s


def _hpa(s: Story, switch: datetime) -> Obj:
    """The HPA that KEDA generated for the ScaledObject, held at its minimum."""
    ext = {"metric": {"name": METRIC, "selector": SELECTOR}}
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
            "metadata": meta("keda-hpa-order-worker", NS, s.now - timedelta(days=200), s.uid(),
                             {"app.kubernetes.io/managed-by": "keda-operator",
                              "app.kubernetes.io/name": "keda-hpa-order-worker",
                              "app.kubernetes.io/part-of": "order-worker",
                              "scaledobject.keda.sh/name": "order-worker"}),
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                        "name": "order-worker"},
                     "minReplicas": 2, "maxReplicas": 40,
                     "metrics": [{"type": "External", "external": {
                         **ext, "target": {"type": "AverageValue", "averageValue": "500"}}}]},
            "status": {"currentReplicas": 2, "desiredReplicas": 2,
                       "lastScaleTime": iso(at("2026-11-04T08:52:00Z")),
                       "currentMetrics": [{"type": "External", "external": {
                           **ext, "current": {"averageValue": "0"}}}],
                       "conditions": [
                           {"type": "AbleToScale", "status": "True",
                            "reason": "ReadyForNewScale",
                            "message": "recommended size matches current size",
                            "lastTransitionTime": iso(switch)},
                           {"type": "ScalingActive", "status": "True",
                            "reason": "ValidMetricFound", "lastTransitionTime": iso(switch),
                            "message": "the HPA was able to successfully calculate a replica "
                                       f"count from external metric {METRIC}(&LabelSelector{{"
                                       "MatchLabels:map[string]string{scaledobject.keda.sh/"
                                       "name: order-worker,},MatchExpressions:[]"
                                       "LabelSelectorRequirement{},})"},
                           {"type": "ScalingLimited", "status": "True",
                            "reason": "TooFewReplicas",
                            "lastTransitionTime": iso(switch + mins(20)),
                            "message": "the desired replica count is less than the minimum "
                                       "replica count"}]}}


def _keda(s: Story, switch: datetime, nodes: list[str], ips: dict[str, str]) -> None:
    """keda-operator and metrics-apiserver output."""
    now = s.now
    op = app(s, "keda", "keda-operator", "ghcr.io/kedacore/keda:2.14.0", replicas=1,
             nodes=nodes[2:], node_ips=ips, created=now - timedelta(days=200),
             rolled=now - timedelta(days=6), svc=False).pods
    ms = app(s, "keda", "keda-operator-metrics-apiserver",
             "ghcr.io/kedacore/keda-metrics-apiserver:2.14.0", replicas=1, nodes=nodes[3:],
             node_ips=ips, created=now - timedelta(days=200), rolled=now - timedelta(days=6),
             port=6443).pods
    t = now - timedelta(hours=9)
    lines = []
    while t < now:
        rec = {"level": "info", "ts": iso(t), "logger": "controllers.ScaledObject",
               "msg": "Reconciling ScaledObject",
               "ScaledObject": {"name": "order-worker", "namespace": NS}}
        lines.append(json.dumps(rec))
        s.log(t, "keda", op[0], "keda-operator", "keda-operator", "info",
              "Reconciling ScaledObject", ScaledObject__name="order-worker")
        if t > switch:
            m = {"level": "info", "ts": iso(t), "logger": "scaleexecutor",
                 "msg": "Successfully set ScaleTarget replicas count to ScaledObject "
                        "minReplicaCount",
                 "scaledobject.Name": "order-worker", "scaledObject.Namespace": NS,
                 "scaleTarget.Name": "order-worker", "Original Replicas Count": 2,
                 "New Replicas Count": 2}
            lines.append(json.dumps(m))
            s.log(t + timedelta(seconds=1), "keda", op[0], "keda-operator", "keda-operator",
                  "info", str(m["msg"]), scaledobject__Name="order-worker")
        t += mins(5)
    s.pod_log("keda", op[0], "keda-operator", lines)
    s.chatter("keda", ms, "keda-metrics-apiserver", "keda-operator-metrics-apiserver",
              now - timedelta(hours=9), now, 120.0, [
        (4, "info", f"GetExternalMetric: namespace=orders metric={METRIC} "
                    "scaledobject=order-worker"),
        (1, "warning", "http: TLS handshake error from 10.244.0.1:{id}: EOF")])


def _others(s: Story, nodes: list[str], ips: dict[str, str], switch: datetime) -> None:
    """orders-api release, rabbitmq, notifications, payment callbacks, Pending pod."""
    now = s.now
    oa = app(s, NS, "orders-api", f"{REG}/orders-api:7.2.0", replicas=3, nodes=nodes,
             node_ips=ips, created=now - timedelta(days=400), rolled=switch, revision=88)
    s.chatter(NS, oa.pods, "orders-api", "orders-api", now - timedelta(hours=9), switch, 15.0, [
        (8, "info", "POST /orders 201 {ms}ms published order.created to order-events")])
    s.chatter(NS, oa.pods, "orders-api", "orders-api", switch, now, 15.0, [
        (8, "info", "POST /orders 201 {ms}ms published order.created to order-events.v2"),
        (1, "warning", "POST /orders 422 {ms}ms invalid postcode")])
    rb = [f"rabbitmq-{i}" for i in range(3)]
    s.chatter("rabbitmq", rb, "rabbitmq", "rabbitmq", now - timedelta(hours=9), now, 200.0, [
        (3, "warning", "closing AMQP connection <0.{id}.0> ({ip}:{id} -> 10.244.5.9:5672): "
                       "client unexpectedly closed TCP connection"),
        (3, "info", "accepting AMQP connection <0.{id}.0> ({ip}:{id} -> 10.244.5.9:5672)")])
    s.log(switch - mins(1), "rabbitmq", "rabbitmq-0", "rabbitmq", "rabbitmq", "info",
          "queue 'order-events.v2' in vhost '/': declared, type quorum")
    nt = app(s, NS, "notification-service", f"{REG}/notification-service:2.0.9", replicas=2,
             nodes=nodes, node_ips=ips, created=now - timedelta(days=400),
             rolled=now - timedelta(days=4))
    s.chatter(NS, nt.pods, "notification-service", "notification-service",
              now - timedelta(hours=9), now, 18.0, [
        (8, "info", "sent order confirmation for {id} via sendgrid"),
        (1, "warning", "sendgrid 429 rate limited, retry in {n}s")])
    pc = app(s, NS, "payment-callback", f"{REG}/payment-callback:1.12.0", replicas=2,
             nodes=nodes, node_ips=ips, created=now - timedelta(days=400),
             rolled=now - timedelta(days=6))
    s.chatter(NS, pc.pods, "payment-callback", "payment-callback", switch + mins(90), now, 15.0, [
        (4, "error", "capture webhook for order {id}: order not CONFIRMED yet (state=PLACED), "
                     "will retry"),
        (2, "info", "capture webhook for order {id} applied")])
    rbc = container("rabbitmq", "docker.io/library/rabbitmq:3.13.7-management", port=5672,
                    memory="4Gi", probe_path=None)
    p = pod(s, "rabbitmq", "rabbitmq-1", PodSpecBits([rbc], {"app": "rabbitmq"}),
            node_name=nodes[4], ip="10.244.5.9", start=now - timedelta(days=5),
            host_ip=ips[nodes[4]], owner=None)
    last = old_restart("Error", 137, now - timedelta(days=6), now - timedelta(days=5))
    last["terminated"].pop("finishedAt_dt")
    p["status"]["containerStatuses"][0].update(restartCount=1, lastState=last)
    s.add(p)
    pn = f"invoice-pdf-7b8c9d6f5-{s.suffix()}"
    s.add(pod(s, NS, pn, PodSpecBits([container("invoice-pdf", f"{REG}/invoice-pdf:0.8.1",
                                                memory="40Gi")], {"app": "invoice-pdf"}),
              node_name=None, ip=None, start=s.ago(300), owner=None, phase="Pending",
              ready=False, conditions=[{"type": "PodScheduled", "status": "False",
                                        "reason": "Unschedulable",
                                        "lastTransitionTime": iso(s.ago(300)),
                                        "message": "0/6 nodes are available: 6 Insufficient "
                                                   "memory."}]))
    s.event(NS, "Pod", pn, "FailedScheduling", "0/6 nodes are available: 6 Insufficient memory. "
            "preemption: 0/6 nodes are available: 6 No preemption victims found for incoming "
            "pod.", type_="Warning", count=88, first=s.ago(59), last=s.ago(2),
            component="default-scheduler")


def _metrics(s: Story, switch: datetime) -> None:
    """Two days of queue depth, KEDA's metric value and the HPA's replicas."""
    now, rng = s.now, s.rng
    ts = grid(now - timedelta(days=2), now, 300)

    def load(t: datetime) -> float:
        h = t.hour + t.minute / 60
        return 10.0 + (12.0 if 8 <= h < 21 else 0.0) + 6.0 * (12 <= h < 14)
    old, new, rep_series, keda = [], [], [], []
    depth_new = 0.0
    for t in ts:
        if t < switch:
            d_old = max(0.0, (load(t) - 10) * 60 * (0.8 + 0.4 * rng.random()))
            old.append((t, d_old))
            keda.append((t, d_old))
            rep_series.append((t, float(max(2, min(40, round(d_old / 500 + 1))))))
        else:
            old.append((t, 0.0))
            keda.append((t, 0.0))
            rep_series.append((t, 2.0))
            depth_new = max(0.0, depth_new + (load(t) - 18.0) * 300)
            new.append((t, depth_new))
    q = {"namespace": "rabbitmq", "vhost": "/"}
    s.metrics.gauge("rabbitmq_queue_messages_ready", "ready messages", q | {
        "queue": "order-events"}, old)
    s.metrics.gauge("rabbitmq_queue_messages_ready", "ready messages", q | {
        "queue": "order-events.v2"}, new)
    s.metrics.gauge("rabbitmq_queue_consumers", "consumers", q | {"queue": "order-events.v2"},
                    [(t, 2.0) for t, _ in new])
    s.metrics.gauge("keda_scaler_metrics_value", "KEDA scaler metric", {
        "namespace": NS, "scaledObject": "order-worker", "scaler": "rabbitMQScaler",
        "scalerIndex": "0", "metric": METRIC, "type": "scaledobject"}, keda)
    s.metrics.gauge("kube_horizontalpodautoscaler_status_current_replicas", "HPA replicas", {
        "namespace": NS, "horizontalpodautoscaler": "keda-hpa-order-worker"}, rep_series)
    s.metrics.gauge("kube_horizontalpodautoscaler_spec_max_replicas", "HPA max", {
        "namespace": NS, "horizontalpodautoscaler": "keda-hpa-order-worker"},
        [(t, 40.0) for t in ts])
    s.metrics.counter("container_cpu_usage_seconds_total", "cpu", {
        "namespace": NS, "container": "order-worker"},
        accumulate([t for t in ts if t >= switch - mins(5)], lambda t: 1.88))
    s.metrics.counter("order_worker_messages_processed_total", "processed", {
        "namespace": NS, "queue": "order-events.v2"},
        accumulate([t for t in ts if t >= switch], lambda t: 18.0 * (0.95 + 0.1 * rng.random())))
