"""Kestrel Bank: a credential rotation renamed the Secret's keys under ledger-writer.

The nightly rotator moved ledger-db-credentials to its v2 key schema (`username`,
`password`); ledger-writer still reads `db-user` and `db-password` through secretKeyRef.
Running containers resolved their env at start and keep working (the old credential has a
48h grace), so nothing broke until the node-pool upgrade drained a node: the two pods
recreated on the new nodes cannot be started (CreateContainerConfigError), and the surge
upgrade looks like the culprit.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta
from typing import Any

from tests.data.holdout38._generator import kube as k
from tests.data.holdout38._generator.story import Story

NOW = datetime(2026, 11, 24, 7, 15, 0)
NS = "payments-core"
APP = "ledger-writer"
IMAGE = "europe-west3-docker.pkg.dev/kestrel-prod/payments/ledger-writer:v3.22.1"
SECRET = "ledger-db-credentials"
MISSING = f"couldn't find key db-user in Secret {NS}/{SECRET}"


def build() -> Story:
    story = Story(
        id="ledger-writer-secret-key-renamed",
        title="ledger-writer half down during the node-pool upgrade",
        now=NOW,
        report="""
the prod node pool upgrade (1.29 -> 1.30) has been stuck since ~06:40 and 2 of the 4
ledger-writer pods won't come up on the new nodes. the 2 on the old node are fine.
are the 1.30 nodes broken? thinking about rolling the pool back before the EU open
""",
        truth={"category": "crash_loop",
               "culprit": {"kind": "Deployment", "namespace": NS, "name": APP},
               "evidence": ["CreateContainerConfigError", MISSING],
               "fix": "Point ledger-writer's secretKeyRef entries at the v2 keys (username, "
                      "password) or restore db-user/db-password in ledger-db-credentials, then "
                      "let the pending pods start; the node pool is not at fault."})
    made = NOW - timedelta(days=220)
    story.add(k.namespace(NS, made, {"team": "ledger"}), k.namespace("default", made),
              k.namespace("payments-edge", made))
    old_pool = [f"gke-kestrel-prod-apps-v129-3f2a1b7c-{s}" for s in ("k2lm", "q9tx")]
    new_pool = [f"gke-kestrel-prod-apps-v130-8d1e4c2a-{s}" for s in ("b7rn", "h4wz", "x1cd")]
    for name in old_pool:
        story.add(k.node(name, NOW - timedelta(days=61), cpu="7910m", memory="28Gi",
                         kubelet="v1.29.9-gke.1496000", unschedulable=True,
                         heartbeat=NOW - timedelta(seconds=22),
                         taints=[{"key": "node.kubernetes.io/unschedulable",
                                  "effect": "NoSchedule"}],
                         labels={"cloud.google.com/gke-nodepool": "apps-v129",
                                 "topology.kubernetes.io/zone": "europe-west3-a"}))
    for i, name in enumerate(new_pool):
        story.add(k.node(name, NOW - timedelta(minutes=58 - 3 * i), cpu="7910m", memory="28Gi",
                         kubelet="v1.30.5-gke.1014001", heartbeat=NOW - timedelta(seconds=9),
                         labels={"cloud.google.com/gke-nodepool": "apps-v130",
                                 "topology.kubernetes.io/zone":
                                 f"europe-west3-{'abc'[i]}"}))
    for name, at in ((old_pool[0], 44), (old_pool[1], 43)):
        story.add(k.event("", "Node", name, "NodeNotSchedulable",
                          f"Node {name} status is now: NodeNotSchedulable",
                          NOW - timedelta(minutes=at), host=name))
    env: list[dict[str, Any]] = [{"name": "DB_HOST", "value": "10.88.0.14"},
           {"name": "DB_NAME", "value": "ledger"},
           {"name": "DB_USER", "valueFrom": {"secretKeyRef": {"name": SECRET, "key": "db-user"}}},
           {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {"name": SECRET,
                                                                   "key": "db-password"}}},
           {"name": "KAFKA_BROKERS", "value": "kafka-0.kafka.payments-edge:9092"},
           {"name": "GOMAXPROCS", "value": "2"}]
    app = k.container("ledger-writer", IMAGE, cpu="500m", memory="512Mi", memory_limit="512Mi",
                      ports=[{"containerPort": 8443, "name": "grpc"},
                             {"containerPort": 9102, "name": "metrics"}],
                      env=env, readinessProbe=k.http_probe("/readyz", 9102))
    rolled = NOW - timedelta(days=6, hours=4)
    deploy = k.workload("Deployment", NS, APP, made, [app], replicas=4,
                        annotations={"deployment.kubernetes.io/revision": "37"},
                        status=k.deployment_status(4, 2, 4, at=NOW - timedelta(minutes=43)))
    rs_hash = k.pod_hash(NS, APP, "37")
    rs = k.replicaset(deploy, rs_hash, 37, rolled, [app], replicas=4, ready=2)
    story.add(deploy, rs)
    kept = [(f"{APP}-{rs_hash}-{k.suffix(APP, s)}", ip) for s, ip in (("a", "10.44.1.23"),
                                                                      ("b", "10.44.1.57"))]
    for i, (name, ip) in enumerate(kept):
        story.add(k.pod(rs, name, old_pool[1], rolled, {APP: k.running(rolled + timedelta(
            seconds=30 + i * 11))}, ip=ip))
        _writer_logs(story, name)
    broken = [f"{APP}-{rs_hash}-{k.suffix(APP, s)}" for s in ("c", "d")]
    for i, name in enumerate(broken):
        created = NOW - timedelta(minutes=43, seconds=-5 * i)
        host = new_pool[i]
        story.add(k.pod(rs, name, host, created,
                        {APP: k.waiting("CreateContainerConfigError", MISSING)},
                        phase="Pending", ip=f"10.44.{6 + i}.{12 + i}"))
        story.add(k.event(NS, "Pod", name, "Scheduled",
                          f"Successfully assigned {NS}/{name} to {host}", created,
                          component="default-scheduler"),
                  k.event(NS, "Pod", name, "Pulling", f'Pulling image "{IMAGE}"',
                          created + timedelta(seconds=2), host=host),
                  k.event(NS, "Pod", name, "Pulled",
                          f'Successfully pulled image "{IMAGE}" in 3.412s (3.412s including '
                          'waiting). Image size: 31844017 bytes.',
                          created + timedelta(seconds=6), host=host),
                  k.event(NS, "Pod", name, "Failed", f"Error: {MISSING}",
                          created + timedelta(seconds=6), NOW - timedelta(seconds=40 + 9 * i),
                          count=198 - 3 * i, type_="Warning", host=host),
                  k.event(NS, "Pod", name, "Pulled",
                          f'Container image "{IMAGE}" already present on machine',
                          created + timedelta(seconds=20), NOW - timedelta(seconds=40 + 9 * i),
                          count=197 - 3 * i, host=host))
        story.add(k.event(NS, "ReplicaSet", rs["metadata"]["name"], "SuccessfulCreate",
                          f"Created pod: {name}", created, component="replicaset-controller"))
    _bystanders(story, made, [*new_pool, old_pool[1]])
    _rotator(story, made)
    return story


def _writer_logs(story: Story, pod: str) -> None:
    rng = story.rng
    start = NOW - timedelta(hours=6)
    moment = start
    while moment < NOW:
        batch = rng.randint(40, 420)
        entry = {"level": "info", "ts": moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z",
                 "caller": "ledger/writer.go:214", "msg": "batch committed",
                 "entries": batch, "partition": rng.randint(0, 11),
                 "duration_ms": rng.randint(6, 48)}
        if rng.random() < 0.03:
            entry = {"level": "warn", "ts": entry["ts"], "caller": "kafka/consumer.go:88",
                     "msg": "rebalance in progress, pausing fetch", "group": "ledger-writer"}
        line = json.dumps(entry, separators=(",", ":"))
        story.log(NS, pod, APP, [line])
        story.doc(moment, str(entry["msg"]), level=str(entry["level"]), service=APP, ns=NS,
                  pod=pod, container=APP, **{"log__logger": str(entry["caller"])})
        moment += timedelta(seconds=rng.randint(20, 80))


def _rotator(story: Story, made: datetime) -> None:
    """The CronJob that rotated the credential last night, and what its run logged."""
    image = "europe-west3-docker.pkg.dev/kestrel-prod/platform/cred-rotator:2.0.0"
    job_spec = {"template": {"spec": {"restartPolicy": "Never", "serviceAccountName":
                                      "cred-rotator", "containers": [k.container(
                                          "rotator", image, cpu="50m", memory="64Mi",
                                          args=["--secret=ledger-db-credentials",
                                                "--db-role=ledger_writer", "--grace=48h"])]}},
                "backoffLimit": 1}
    ran = NOW.replace(hour=0, minute=0)
    story.add({"apiVersion": "batch/v1", "kind": "CronJob",
               "metadata": {"name": "ledger-cred-rotator", "namespace": NS,
                            "creationTimestamp": k.ts(made),
                            "annotations": {"kestrel.io/rotator-schema": "v2"}},
               "spec": {"schedule": "0 0 * * 1", "concurrencyPolicy": "Forbid",
                        "jobTemplate": {"spec": job_spec}},
               "status": {"lastScheduleTime": k.ts(ran), "lastSuccessfulTime":
                          k.ts(ran + timedelta(seconds=41))}})
    job_name = "ledger-cred-rotator-29400480"
    story.add({"apiVersion": "batch/v1", "kind": "Job",
               "metadata": {"name": job_name, "namespace": NS, "creationTimestamp": k.ts(ran),
                            "ownerReferences": [{"apiVersion": "batch/v1", "kind": "CronJob",
                                                 "name": "ledger-cred-rotator",
                                                 "controller": True}]},
               "spec": {**job_spec, "completions": 1},
               "status": {"succeeded": 1, "startTime": k.ts(ran),
                          "completionTime": k.ts(ran + timedelta(seconds=41)),
                          "conditions": [{"type": "Complete", "status": "True",
                                          "lastTransitionTime":
                                          k.ts(ran + timedelta(seconds=41))}]}})
    pod = f"{job_name}-t8fq2"
    lines = [
        (0, "info", "cred-rotator 2.0.0 starting: secret=ledger-db-credentials role=ledger_writer"),
        (3, "info", "issued new password for role ledger_writer (pg-ledger-prod)"),
        (4, "info", "previous credential stays valid until 2026-11-26T00:00:04Z (grace 48h)"),
        (5, "warn", "secret ledger-db-credentials uses legacy key schema v1, migrating to v2"),
        (6, "info", "wrote secret payments-core/ledger-db-credentials keys=[password username] "
                    "schema=v2 resourceVersion=88145521"),
        (40, "info", "verified login with new credential; done"),
    ]
    for seconds, level, message in lines:
        story.doc(ran + timedelta(seconds=seconds), message, level=level,
                  service="ledger-cred-rotator", ns=NS, pod=pod, container="rotator")


def _bystanders(story: Story, made: datetime, nodes: list[str]) -> None:
    story.add(*k.healthy_deployment(
        NS, "ledger-reader", "europe-west3-docker.pkg.dev/kestrel-prod/payments/ledger-reader:"
        "v3.22.1", made, NOW - timedelta(minutes=42), nodes[:3],
        ["10.44.6.31", "10.44.7.8", "10.44.8.40"], replicas=3, cpu="250m", memory="256Mi",
        port=8080, revision=29))
    story.add(*k.healthy_deployment(
        "payments-edge", "payment-events-relay", "europe-west3-docker.pkg.dev/kestrel-prod/"
        "payments/events-relay:1.4.0", made, NOW - timedelta(minutes=41), nodes[:3],
        ["10.44.6.77", "10.44.8.5"], replicas=2, cpu="100m", memory="128Mi", port=8080,
        revision=12))
    story.add(k.event(NS, "HorizontalPodAutoscaler", "ledger-reader", "FailedGetResourceMetric",
                      "failed to get cpu utilization: unable to get metrics for resource cpu: "
                      "no metrics returned from resource metrics API",
                      NOW - timedelta(minutes=41), NOW - timedelta(minutes=37), count=5,
                      type_="Warning", component="horizontal-pod-autoscaler"))
    story.add({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler",
               "metadata": {"name": "ledger-reader", "namespace": NS,
                            "creationTimestamp": k.ts(made)},
               "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                           "name": "ledger-reader"},
                        "minReplicas": 3, "maxReplicas": 8,
                        "metrics": [{"type": "Resource", "resource": {
                            "name": "cpu", "target": {"type": "Utilization",
                                                      "averageUtilization": 65}}}]},
               "status": {"currentReplicas": 3, "desiredReplicas": 3,
                          "currentMetrics": [{"type": "Resource", "resource": {
                              "name": "cpu", "current": {"averageUtilization": 22}}}]}})
