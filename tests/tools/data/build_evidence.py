"""Write the `evidence-shop` scenario the evidence tools' tests read (run it again after editing).

One namespace, `evidence`, holding one case for each evidence tool, each with a bystander:
- `worker` declares no resources and runs with the LimitRange's default memory limit
  (and is OOM-killed); the CronJob `nightly-report` asks for more than the LimitRange's
  max, so its Job gets no pod;
- the StatefulSet `ledger-db` names a StorageClass that no longer exists (its third
  replica's claim stays Pending), and `orders-db`'s volume is nearly full;
- `payments-client` mounts the ConfigMap `trust-bundle`, changed after its pods started,
  whose bundle holds an expired root CA beside a valid one, and a Secret by name;
- the Service `cart` selects `tier=web` while its pods say `tier=backend`, and
  `orders-db`'s Service targets a port its pod does not open, behind a NetworkPolicy that
  admits nothing.

The certificates are made here with `cryptography` (fresh keys on each run: the committed
files are what the tests read). Everything else is fixed.

    .venv/bin/python tests/tools/data/build_evidence.py
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

HERE = Path(__file__).parent / "evidence-shop"
NOW = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
NS = "evidence"
GI = 2**30


def ts(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def meta(name: str, namespace: str | None = NS, age: timedelta = timedelta(days=30),
         **extra: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"name": name, "uid": f"uid-{name}",
                            "creationTimestamp": ts(NOW - age)}
    if namespace:
        data["namespace"] = namespace
    data.update(extra)
    return data


def owner(kind: str, name: str) -> list[dict[str, Any]]:
    group = "batch/v1" if kind in ("Job", "CronJob") else "apps/v1"
    return [{"apiVersion": group, "kind": kind, "name": name, "controller": True,
             "uid": f"uid-{name}"}]


def running(name: str, *, ready: bool = True, started: datetime = NOW - timedelta(days=3),
            ip: str = "10.244.0.10", **container: Any) -> dict[str, Any]:
    return {"phase": "Running", "startTime": ts(started), "podIP": ip,
            "conditions": [{"type": "Ready", "status": str(ready)},
                           {"type": "PodScheduled", "status": "True"}],
            "containerStatuses": [{"name": name, "ready": ready, "restartCount": 0,
                                   "image": f"shop/{name}:1.0",
                                   "state": {"running": {"startedAt": ts(started)}},
                                   **container}]}


def event(obj_kind: str, obj: str, reason: str, message: str, count: int = 1,
          minutes_ago: int = 5) -> dict[str, Any]:
    last = NOW - timedelta(minutes=minutes_ago)
    return {"apiVersion": "v1", "kind": "Event",
            "metadata": {"name": f"{obj}.{reason.lower()}", "namespace": NS},
            "involvedObject": {"kind": obj_kind, "name": obj, "namespace": NS},
            "reason": reason, "message": message, "type": "Warning", "count": count,
            "firstTimestamp": ts(last - timedelta(minutes=30 if count > 1 else 0)),
            "lastTimestamp": ts(last), "source": {"component": "controller"}}


def limits() -> list[dict[str, Any]]:
    worker_container = {"name": "worker", "image": "shop/worker:1.0"}
    admitted = dict(worker_container, resources={
        "limits": {"cpu": "500m", "memory": "128Mi"},
        "requests": {"cpu": "100m", "memory": "64Mi"}})
    report = {"name": "report", "image": "shop/report:1.0",
              "resources": {"limits": {"memory": "2Gi", "cpu": "1"}}}
    return [
        {"apiVersion": "v1", "kind": "LimitRange", "metadata": meta("container-defaults"),
         "spec": {"limits": [{"type": "Container",
                              "default": {"cpu": "500m", "memory": "128Mi"},
                              "defaultRequest": {"cpu": "100m", "memory": "64Mi"},
                              "max": {"cpu": "2", "memory": "1Gi"}}]}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("worker"),
         "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "worker"}},
                  "template": {"metadata": {"labels": {"app": "worker"}},
                               "spec": {"containers": [worker_container]}}},
         "status": {"replicas": 1, "readyReplicas": 0}},
        {"apiVersion": "apps/v1", "kind": "ReplicaSet",
         "metadata": meta("worker-5d8f7c9b6", ownerReferences=owner("Deployment", "worker"),
                          labels={"app": "worker", "pod-template-hash": "5d8f7c9b6"}),
         "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "worker"}},
                  "template": {"metadata": {"labels": {"app": "worker"}},
                               "spec": {"containers": [worker_container]}}}},
        {"apiVersion": "v1", "kind": "Pod",
         "metadata": meta("worker-5d8f7c9b6-k2x9p", age=timedelta(hours=2),
                          labels={"app": "worker", "pod-template-hash": "5d8f7c9b6"},
                          annotations={"kubernetes.io/limit-ranger": (
                              "LimitRanger plugin set: cpu, memory request for container "
                              "worker; cpu, memory limit for container worker")},
                          ownerReferences=owner("ReplicaSet", "worker-5d8f7c9b6")),
         "spec": {"containers": [admitted]},
         "status": running("worker", ready=False, started=NOW - timedelta(hours=2),
                           ip="10.244.0.11", restartCount=6, lastState={"terminated": {
                               "reason": "OOMKilled", "exitCode": 137,
                               "startedAt": ts(NOW - timedelta(minutes=8)),
                               "finishedAt": ts(NOW - timedelta(minutes=4))}})},
        {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": meta("nightly-report"),
         "spec": {"schedule": "0 2 * * *", "jobTemplate": {"spec": {"template": {
             "spec": {"restartPolicy": "Never", "containers": [report]}}}}}},
        {"apiVersion": "batch/v1", "kind": "Job",
         "metadata": meta("nightly-report-29410920", age=timedelta(minutes=40),
                          ownerReferences=owner("CronJob", "nightly-report")),
         "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [report]}}},
         "status": {}},
        event("Job", "nightly-report-29410920", "FailedCreate",
              'Error creating: pods "nightly-report-29410920-7xk2m" is forbidden: maximum '
              "memory usage per Container is 1Gi, but limit is 2Gi", count=6),
    ]


def claim(name: str, storage_class: str, phase: str, age: timedelta) -> dict[str, Any]:
    status: dict[str, Any] = {"phase": phase}
    if phase == "Bound":
        status |= {"capacity": {"storage": "10Gi"}, "accessModes": ["ReadWriteOnce"]}
    return {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta(name, age=age),
            "spec": {"accessModes": ["ReadWriteOnce"], "storageClassName": storage_class,
                     "resources": {"requests": {"storage": "10Gi"}},
                     **({"volumeName": f"pv-{name}"} if phase == "Bound" else {})},
            "status": status}


def database_pod(name: str, set_name: str, ip: str, *, pending: bool = False) -> dict[str, Any]:
    spec = {"containers": [{"name": "postgres", "image": "postgres:16",
                            "ports": [{"containerPort": 5432, "name": "pg"}],
                            "volumeMounts": [{"name": "data",
                                              "mountPath": "/var/lib/postgresql"}]}],
            "volumes": [{"name": "data", "persistentVolumeClaim": {"claimName": f"data-{name}"}}]}
    status: dict[str, Any] = running("postgres", ip=ip)
    if pending:
        status = {"phase": "Pending", "conditions": [{
            "type": "PodScheduled", "status": "False", "reason": "Unschedulable",
            "message": "0/3 nodes are available: pod has unbound immediate "
                       "PersistentVolumeClaims."}]}
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": meta(name, age=timedelta(minutes=20 if pending else 3 * 24 * 60),
                             labels={"app": set_name}, ownerReferences=owner("StatefulSet",
                                                                              set_name)),
            "spec": spec, "status": status}


def statefulset(name: str, replicas: int, storage_class: str) -> dict[str, Any]:
    template = {"metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "postgres", "image": "postgres:16"}]}}
    return {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": meta(name),
            "spec": {"replicas": replicas, "serviceName": name,
                     "selector": {"matchLabels": {"app": name}}, "template": template,
                     "volumeClaimTemplates": [{
                         "metadata": {"name": "data"},
                         "spec": {"accessModes": ["ReadWriteOnce"],
                                  "storageClassName": storage_class,
                                  "resources": {"requests": {"storage": "10Gi"}}}}]},
            "status": {"replicas": replicas, "readyReplicas": replicas - (name == "ledger-db")}}


def storage() -> list[dict[str, Any]]:
    return [
        {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
         "metadata": meta("standard", None, annotations={
             "storageclass.kubernetes.io/is-default-class": "true"}),
         "provisioner": "rancher.io/local-path", "volumeBindingMode": "WaitForFirstConsumer",
         "reclaimPolicy": "Delete"},
        statefulset("ledger-db", 3, "fast-ssd"),
        claim("data-ledger-db-0", "fast-ssd", "Bound", timedelta(days=60)),
        claim("data-ledger-db-1", "fast-ssd", "Bound", timedelta(days=60)),
        claim("data-ledger-db-2", "fast-ssd", "Pending", timedelta(minutes=20)),
        database_pod("ledger-db-0", "ledger-db", "10.244.0.20"),
        database_pod("ledger-db-1", "ledger-db", "10.244.0.21"),
        database_pod("ledger-db-2", "ledger-db", "", pending=True),
        event("PersistentVolumeClaim", "data-ledger-db-2", "ProvisioningFailed",
              'storageclass.storage.k8s.io "fast-ssd" not found', count=12),
        statefulset("orders-db", 1, "standard"),
        claim("data-orders-db-0", "standard", "Bound", timedelta(days=90)),
        database_pod("orders-db-0", "orders-db", "10.244.0.30"),
    ]


def certificate(common_name: str, not_before: datetime, not_after: datetime) -> str:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Shop")])
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(not_before).not_valid_after(not_after)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM).decode()


def trust() -> list[dict[str, Any]]:
    bundle = (certificate("Shop Root CA 2024", NOW - timedelta(days=700),
                          NOW - timedelta(days=2))
              + certificate("Shop Root CA 2026", NOW - timedelta(days=30),
                            NOW + timedelta(days=3650)))
    changed = NOW - timedelta(hours=2)
    container = {
        "name": "client", "image": "shop/payments-client:4.2",
        "env": [{"name": "SSL_CERT_FILE", "value": "/etc/ssl/trust/ca.crt"},
                {"name": "PAYMENTS_URL", "value": "https://payments.evidence:8443"},
                {"name": "DB_PASSWORD", "valueFrom": {"secretKeyRef": {
                    "name": "payments-db", "key": "password"}}},
                {"name": "REGION", "valueFrom": {"configMapKeyRef": {
                    "name": "client-settings", "key": "region"}}}],
        "volumeMounts": [{"name": "trust", "mountPath": "/etc/ssl/trust/ca.crt",
                          "subPath": "ca.crt"},
                         {"name": "tls", "mountPath": "/etc/client-tls"}]}
    template = {"metadata": {"labels": {"app": "payments-client"}},
                "spec": {"containers": [container], "volumes": [
                    {"name": "trust", "configMap": {"name": "trust-bundle"}},
                    {"name": "tls", "secret": {"secretName": "payments-client-tls"}}]}}
    return [
        {"apiVersion": "v1", "kind": "ConfigMap",
         "metadata": meta("trust-bundle", age=timedelta(days=400), managedFields=[
             {"manager": "kubectl-client-side-apply", "operation": "Update",
              "time": ts(changed), "apiVersion": "v1"}]),
         "data": {"ca.crt": bundle}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta("client-settings"),
         "data": {"zone": "eu-west-1a"}},
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("payments-client"),
         "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "payments-client"}},
                  "template": template},
         "status": {"replicas": 2, "readyReplicas": 2}},
        {"apiVersion": "apps/v1", "kind": "ReplicaSet",
         "metadata": meta("payments-client-7f9c8d6b5",
                          ownerReferences=owner("Deployment", "payments-client"),
                          labels={"app": "payments-client", "pod-template-hash": "7f9c8d6b5"}),
         "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "payments-client"}},
                  "template": template}},
        *({"apiVersion": "v1", "kind": "Pod",
           "metadata": meta(f"payments-client-7f9c8d6b5-{suffix}", age=timedelta(days=3),
                            labels={"app": "payments-client",
                                    "pod-template-hash": "7f9c8d6b5"},
                            ownerReferences=owner("ReplicaSet", "payments-client-7f9c8d6b5")),
           "spec": template["spec"], "status": running("client", ip=ip)}
          for suffix, ip in (("a1b2c", "10.244.0.40"), ("d3e4f", "10.244.0.41"))),
    ]


def services() -> list[dict[str, Any]]:
    cart_labels = {"app": "cart", "tier": "backend"}
    cart = [{"apiVersion": "v1", "kind": "Pod",
             "metadata": meta(f"cart-6c5d4b3a2-{suffix}", age=timedelta(days=1),
                              labels=cart_labels | {"pod-template-hash": "6c5d4b3a2"},
                              ownerReferences=owner("ReplicaSet", "cart-6c5d4b3a2")),
             "spec": {"containers": [{"name": "cart", "image": "shop/cart:3.0",
                                      "ports": [{"containerPort": 8080, "name": "http"}]}]},
             "status": running("cart", ip=ip)}
            for suffix, ip in (("p1q2r", "10.244.0.50"), ("s3t4u", "10.244.0.51"))]
    return [
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta("cart"),
         "spec": {"replicas": 2, "selector": {"matchLabels": cart_labels},
                  "template": {"metadata": {"labels": cart_labels},
                               "spec": cart[0]["spec"]}},
         "status": {"replicas": 2, "readyReplicas": 2}},
        {"apiVersion": "apps/v1", "kind": "ReplicaSet",
         "metadata": meta("cart-6c5d4b3a2", ownerReferences=owner("Deployment", "cart"),
                          labels=cart_labels | {"pod-template-hash": "6c5d4b3a2"}),
         "spec": {"replicas": 2, "selector": {"matchLabels": cart_labels},
                  "template": {"metadata": {"labels": cart_labels}, "spec": cart[0]["spec"]}}},
        *cart,
        {"apiVersion": "v1", "kind": "Service", "metadata": meta("cart"),
         "spec": {"selector": {"app": "cart", "tier": "web"},
                  "ports": [{"name": "http", "port": 80, "targetPort": "http"}]}},
        {"apiVersion": "v1", "kind": "Endpoints", "metadata": meta("cart"), "subsets": []},
        {"apiVersion": "v1", "kind": "Service", "metadata": meta("orders-db"),
         "spec": {"selector": {"app": "orders-db"},
                  "ports": [{"name": "pg", "port": 5432, "targetPort": 5433}]}},
        {"apiVersion": "v1", "kind": "Endpoints", "metadata": meta("orders-db"),
         "subsets": [{"addresses": [{"ip": "10.244.0.30", "targetRef": {
             "kind": "Pod", "name": "orders-db-0", "namespace": NS}}],
                      "ports": [{"name": "pg", "port": 5433}]}]},
        {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
         "metadata": meta("orders-db-lockdown", age=timedelta(minutes=30)),
         "spec": {"podSelector": {"matchLabels": {"app": "orders-db"}},
                  "policyTypes": ["Ingress"]}},
        {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
         "metadata": meta("ledger-db-clients"),
         "spec": {"podSelector": {"matchLabels": {"app": "ledger-db"}},
                  "policyTypes": ["Ingress"],
                  "ingress": [{"from": [{"podSelector": {"matchLabels": {"app": "ledger"}}}],
                               "ports": [{"protocol": "TCP", "port": 5432}]}]}},
        {"apiVersion": "v1", "kind": "Service", "metadata": meta("ledger-db"),
         "spec": {"selector": {"app": "ledger-db"},
                  "ports": [{"name": "pg", "port": 5432, "targetPort": "pg"}]}},
        {"apiVersion": "v1", "kind": "Endpoints", "metadata": meta("ledger-db"),
         "subsets": [{"addresses": [
             {"ip": "10.244.0.20", "targetRef": {"kind": "Pod", "name": "ledger-db-0"}},
             {"ip": "10.244.0.21", "targetRef": {"kind": "Pod", "name": "ledger-db-1"}}],
             "ports": [{"name": "pg", "port": 5432}]}]},
    ]


def metrics() -> str:
    """Volume stats for the two databases' claims: orders-db fills, ledger-db is calm."""
    lines = ["# HELP kubelet_volume_stats_used_bytes Number of used bytes in the volume",
             "# TYPE kubelet_volume_stats_used_bytes gauge"]
    used = {"data-orders-db-0": (8.6, 9.75), "data-ledger-db-0": (2.0, 2.1)}
    start = NOW - timedelta(minutes=70)
    for claim_name, (first, last) in used.items():
        for minute in range(0, 71, 1):
            value = (first + (last - first) * minute / 70) * GI
            stamp = int((start + timedelta(minutes=minute)).timestamp())
            lines.append(f'kubelet_volume_stats_used_bytes{{namespace="{NS}",'
                         f'persistentvolumeclaim="{claim_name}"}} {value:.0f} {stamp}')
    lines += ["# HELP kubelet_volume_stats_capacity_bytes Capacity in bytes of the volume",
              "# TYPE kubelet_volume_stats_capacity_bytes gauge"]
    for claim_name in used:
        for minute in range(0, 71, 5):
            stamp = int((start + timedelta(minutes=minute)).timestamp())
            lines.append(f'kubelet_volume_stats_capacity_bytes{{namespace="{NS}",'
                         f'persistentvolumeclaim="{claim_name}"}} {10 * GI} {stamp}')
    return "\n".join([*lines, "# EOF"]) + "\n"


def hashed(obj: dict[str, Any]) -> dict[str, Any]:
    """A ReplicaSet selects and stamps its pod-template-hash, as the Deployment controller
    makes it."""
    if obj["kind"] == "ReplicaSet":
        label = {"pod-template-hash": obj["metadata"]["name"].rsplit("-", 1)[1]}
        spec = obj["spec"]
        spec["selector"] = {"matchLabels": spec["selector"]["matchLabels"] | label}
        template = spec["template"]
        template["metadata"] = {"labels": template["metadata"]["labels"] | label}
    return obj


def main() -> None:
    HERE.mkdir(exist_ok=True)
    objects = [{"apiVersion": "v1", "kind": "Namespace",
                "metadata": meta(NS, None, labels={"kubernetes.io/metadata.name": NS})},
               *limits(), *storage(), *trust(), *services()]
    objects = [hashed(json.loads(json.dumps(obj))) for obj in objects]  # no shared parts
    (HERE / "cluster.yaml").write_text(yaml.safe_dump_all(objects, sort_keys=False))
    (HERE / "metrics.om").write_text(metrics())
    (HERE / "scenario.yaml").write_text(yaml.safe_dump({
        "id": "evidence-shop", "title": "One case per evidence tool (test fixture)",
        "now": ts(NOW), "report": "worker keeps restarting and ledger-db-2 never starts",
        "truth": {"category": "oom_killed",
                  "culprit": {"kind": "Deployment", "namespace": NS, "name": "worker"},
                  "evidence": ["OOMKilled", "128Mi"],
                  "fix": "Declare the worker's memory limit instead of the namespace default"},
    }, sort_keys=False))


if __name__ == "__main__":
    main()
