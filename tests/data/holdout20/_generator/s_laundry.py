"""Laundromat chain: paying for a third of the machines fails since 18:41.

Node ip-10-62-1-15.us-east-2 stopped posting status at 18:41 (kubelet gone: the instance hung).
The node controller marks it NotReady/Unknown, taints it unreachable and, 300 s later, marks
its pods for deletion. machine-ledger-2 (shard 2 of the StatefulSet) sat on that node: a
StatefulSet does not replace a pod that is stuck Terminating on an unreachable node, so the
shard stays down. machine-pay first times out dialling the shard, then, once the pod left
the headless Service, gets "no such host" for its DNS name. Culprit: the node.
Red herrings: the DNS errors (the report blames DNS); a NetworkPolicy created 39 minutes
before the onset in the same namespace (additive, allows Prometheus scraping); promo-engine
4.0.2 rolled out 41 minutes before the onset; wallet-api sees a few payment-provider
timeouts.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.scenario_tools.common import (
    MIB,
    Story,
    container_metrics,
    http_metrics,
    kube_system,
    namespaces,
    node_conditions,
    nodes,
    simple_deployment,
    truth,
)
from tests.scenario_tools.kube import Ctr, Obj, Template, iso, running, tcp_probe
from tests.scenario_tools.parts import neighbour, rollout

from .kit import lines

ID = "laundromat-machine-payments-failing"
NOW = datetime.fromisoformat("2029-09-21T19:08:00+00:00")
NS = "washhub"
REG = "483920175566.dkr.ecr.us-east-2.amazonaws.com/washhub"


def _down(pod: Obj, since: datetime, deleted: datetime | None) -> None:
    """What the node lifecycle controller does to a pod of an unreachable node."""
    for cond in pod["status"]["conditions"]:
        if cond["type"] == "Ready":
            cond["status"] = "False"
            cond["lastTransitionTime"] = iso(since)
            cond.pop("reason", None)
            cond.pop("message", None)
    pod["spec"]["tolerations"] = [
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300},
        {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute",
         "tolerationSeconds": 300}]
    if deleted is not None:
        pod["metadata"]["deletionTimestamp"] = iso(deleted + timedelta(seconds=30))
        pod["metadata"]["deletionGracePeriodSeconds"] = 30


def build() -> Story:
    s = Story(
        id=ID, title="Laundromat machine payments failing", now=NOW,
        report="""\
Since about 18:40 customers in our laundromats can't pay for a lot of the washers and dryers
in the app ("Connection to machine lost, try again"). Seems to be roughly a third of the
machines, in every store. machine-pay logs are full of "no such host" errors, is cluster DNS
broken again?
""",
        truth=truth(
            "node_failure", "Node", "", "",
            ["NodeNotReady", "Kubelet stopped posting node status.",
             "node.kubernetes.io/unreachable", "Marking for deletion Pod washhub/machine-ledger-2"],
            "Node {node} stopped posting status at 18:41 and is NotReady (Unknown); the "
            "node controller tainted it unreachable and marked its pods for deletion. "
            "machine-ledger-2, the ledger shard for a third of the machines, is stuck "
            "Terminating on it and the StatefulSet will not recreate it, so machine-pay "
            "cannot reach that shard (timeouts, then no such host once it left the headless "
            "Service). Recover or terminate the instance (delete the Node object / force "
            "delete machine-ledger-2 so it is rescheduled); DNS is fine."))
    c = s.cluster
    namespaces(s, NS, "monitoring")
    pool = nodes(s, 4, subnet=62, region="us-east-2", instance="m6a.xlarge", days=3.6)
    dead = pool[3]
    dead_name = dead["metadata"]["name"]
    s.truth["culprit"]["name"] = dead_name
    s.truth["fix"] = s.truth["fix"].format(node=dead_name)
    kube_system(s, pool)
    down = NOW - timedelta(minutes=26, seconds=28)
    evict = down + timedelta(seconds=300)
    beat = down - timedelta(seconds=41)
    for cond in dead["status"]["conditions"]:
        cond.update({"status": "Unknown", "reason": "NodeStatusUnknown",
                     "message": "Kubelet stopped posting node status.",
                     "lastHeartbeatTime": iso(beat), "lastTransitionTime": iso(down)})
    dead["spec"]["taints"] = [
        {"key": "node.kubernetes.io/unreachable", "effect": "NoSchedule",
         "timeAdded": iso(down)},
        {"key": "node.kubernetes.io/unreachable", "effect": "NoExecute",
         "timeAdded": iso(down + timedelta(seconds=5))}]
    c.event(dead, "NodeNotReady", f"Node {dead_name} status is now: NodeNotReady",
            first=down, component="node-controller", host="")
    node_conditions(s, pool, override={(dead_name, "Ready"):
                                       lambda t: None if t >= down.timestamp() else True})

    # ---- machine-ledger: one shard per pod, shard 2 on the dead node
    ledger = Ctr("machine-ledger", f"{REG}/machine-ledger:3.11.0", port=7400, port_name="grpc",
                 requests={"cpu": "250m", "memory": "512Mi"}, limits={"memory": "768Mi"},
                 env={"SHARD_COUNT": "3", "LEDGER_DB": "/var/lib/ledger"},
                 readiness=tcp_probe("grpc"), liveness=tcp_probe("grpc", delay=20, period=20))
    sts = c.workload("StatefulSet", NS, "machine-ledger", Template(
        [ledger], service_account="machine-ledger"), replicas=3, created=s.ago(days=240))
    rev = c.revision(sts, 9, s.ago(days=3, hours=1))
    ledgers = []
    for i, node in enumerate((pool[0], pool[1], dead)):
        born = datetime.fromisoformat(node["metadata"]["creationTimestamp"]
                                      .replace("Z", "+00:00")) + timedelta(minutes=4 + i)
        pod = c.pod(sts, rev, node=node, created=born,
                    statuses={"machine-ledger": running(born + timedelta(seconds=9))})
        ledgers.append(pod)
        container_metrics(s, pod, "machine-ledger", memory=lambda t, k=i: (
            None if k == 2 and t >= down.timestamp() else (402 + 15 * k) * MIB))
    c.service(NS, "machine-ledger", {"app.kubernetes.io/name": "machine-ledger"}, port=7400,
              target="grpc", created=s.ago(days=240))
    c.objects_of("Service")[-1]["spec"]["clusterIP"] = "None"
    c.objects_of("Service")[-1]["spec"]["clusterIPs"] = ["None"]
    gone = ledgers[2]
    _down(gone, down + timedelta(seconds=6), evict)
    c.event(gone, "NodeNotReady", "Node is not ready", first=down + timedelta(seconds=6),
            type_="Warning", component="node-controller", host="")
    c.event(gone, "TaintManagerEviction", f"Marking for deletion Pod {NS}/"
            f"{gone['metadata']['name']}", first=evict, component="taint-eviction-controller",
            host="")
    shard_ip = gone["status"]["podIP"]

    # ---- machine-pay: 3 replicas, the one on the dead node was replaced
    pay_ctr = Ctr("machine-pay", f"{REG}/machine-pay:5.6.3", port=8080,
                  requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "384Mi"},
                  env={"LEDGER_HEADLESS": "machine-ledger.washhub.svc.cluster.local:7400",
                       "LEDGER_SHARDS": "3", "DIAL_TIMEOUT": "2s"},
                  readiness=tcp_probe("http"))
    pay, pays = simple_deployment(s, NS, "machine-pay", "", replicas=3,
                                  node_list=[pool[0], pool[1], dead], revision=28,
                                  template=Template([pay_ctr], service_account="machine-pay"),
                                  rollout=s.ago(days=2, hours=20))
    _down(pays[2], down + timedelta(seconds=6), evict)
    c.event(pays[2], "NodeNotReady", "Node is not ready", first=down + timedelta(seconds=6),
            type_="Warning", component="node-controller", host="")
    c.event(pays[2], "TaintManagerEviction", f"Marking for deletion Pod {NS}/"
            f"{pays[2]['metadata']['name']}", first=evict, component="taint-eviction-controller",
            host="")
    rs = pay.revisions[-1]
    made = evict + timedelta(seconds=1)
    fresh = c.pod(pay, rs, node=pool[2], created=made,
                  statuses={"machine-pay": running(made + timedelta(seconds=6))})
    fname = fresh["metadata"]["name"]
    c.event(rs, "SuccessfulCreate", f"Created pod: {fname}", first=made,
            component="replicaset-controller", host="")
    c.event(fresh, "Scheduled", f"Successfully assigned {NS}/{fname} to "
            f"{pool[2]['metadata']['name']}", first=made, component="default-scheduler",
            host="")
    for k, (reason, msg) in enumerate((
            ("Pulled", f'Container image "{pay_ctr.image}" already present on machine'),
            ("Created", "Created container: machine-pay"),
            ("Started", "Started container machine-pay"))):
        c.event(fresh, reason, msg, first=made + timedelta(seconds=3 + k),
                field_path="spec.containers{machine-pay}")
    failing = lambda t: 0.33 if t >= down.timestamp() else 0.0  # noqa: E731
    for pod in (*pays[:2], fresh):
        container_metrics(s, pod, "machine-pay", memory=lambda t: 188 * MIB)
        http_metrics(s, "machine-pay", pod, rps=lambda t: 2.6,
                     codes={"200": lambda t: 0.995 - failing(t),
                            "502": lambda t: 0.001 + failing(t), "402": lambda t: 0.004},
                     median=lambda t: 0.07 + 2.0 * failing(t), histogram=True)
    http_metrics(s, "machine-pay", pays[2], rps=lambda t: 2.6,
                 codes={"200": lambda t: 0.995, "502": lambda t: 0.001,
                        "402": lambda t: 0.004}, median=lambda t: 0.07)
    for pod in (*pays[:2], fresh, pays[2]):
        start = s.ago(hours=3) if pod is not fresh else made + timedelta(seconds=8)
        lines(s, pod, "machine-pay", "machine-pay", start, min(down, NOW)
              if pod is pays[2] else NOW, 26 if pod is pays[2] else 30, [
                  ("info", "payment PM-77120 store 014 dryer D-06 started, 2.40 EUR", {}),
                  ("info", "payment PM-77131 store 003 washer W-11 started, 4.90 EUR", {}),
                  ("warn", "machine W-02 store 021 reported door open, start refused", {}),
              ])
    for pod in (*pays[:2], fresh):
        start = max(down, s.ago(hours=3)) if pod is not fresh else made + timedelta(seconds=8)
        lines(s, pod, "machine-pay", "machine-pay", start, min(evict, NOW)
              if pod is not fresh else made, 0 if pod is fresh else 14, [
                  ("error", f"ledger shard 2 reserve failed: dial tcp {shard_ip}:7400: "
                            "i/o timeout", {"error.type": "DialTimeout",
                                            "http.response.status_code": 502}),
              ])
        lines(s, pod, "machine-pay", "machine-pay", max(start, evict), NOW, 40, [
            ("error", "ledger shard 2 reserve failed: dial tcp: lookup machine-ledger-2."
                      "machine-ledger.washhub.svc.cluster.local on 172.20.0.10:53: no such "
                      "host", {"error.type": "DNSError", "http.response.status_code": 502}),
            ("info", "payment PM-77402 store 009 washer W-04 started, 4.90 EUR", {}),
            ("info", "payment PM-77415 store 017 dryer D-01 started, 2.40 EUR", {}),
        ])
    for pod in ledgers:
        end = down - timedelta(seconds=45) if pod is gone else NOW
        lines(s, pod, "machine-ledger", "machine-ledger", s.ago(hours=3), end, 25, [
            ("info", "reserve machine W-11 store 003 ok (seq 9921044)", {}),
            ("info", "compaction of segment 000771 done in 412ms", {}),
        ])
    for pod in c.objects_of("Pod"):
        if pod["spec"].get("nodeName") == dead_name and pod not in (gone, pays[2]):
            _down(pod, down + timedelta(seconds=6), None)
            pod["spec"]["tolerations"] = [{"operator": "Exists"}]

    # ---- red herrings
    c.add({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
           "metadata": c.meta("NetworkPolicy", "allow-washhub-internal", NS, s.ago(days=180)),
           "spec": {"podSelector": {}, "policyTypes": ["Ingress"],
                    "ingress": [{"from": [{"podSelector": {}}]}]}})
    c.add({"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
           "metadata": c.meta("NetworkPolicy", "allow-prometheus-scrape", NS,
                              down - timedelta(minutes=39, seconds=12),
                              {"app.kubernetes.io/managed-by": "argocd"}),
           "spec": {"podSelector": {}, "policyTypes": ["Ingress"],
                    "ingress": [{"from": [{"namespaceSelector": {"matchLabels": {
                        "kubernetes.io/metadata.name": "monitoring"}}}],
                        "ports": [{"port": 9102, "protocol": "TCP"}]}]}})

    def promo(version: str) -> Ctr:
        return Ctr("promo-engine", f"{REG}/promo-engine:{version}", port=8080,
                   requests={"cpu": "100m", "memory": "192Mi"}, limits={"memory": "256Mi"},
                   readiness=tcp_probe("http"))
    roll = rollout(s, NS, "promo-engine", promo, old="4.0.1", new="4.0.2",
                   at=down - timedelta(minutes=41, seconds=30), revision=19, replicas=2,
                   node_list=pool[:3])
    for pod in roll.new_pods:
        container_metrics(s, pod, "promo-engine", memory=lambda t: 131 * MIB)
        lines(s, pod, "promo-engine", "promo-engine", down - timedelta(minutes=41), NOW, 18, [
            ("info", "promo-engine 4.0.2 up, 12 active campaigns", {}),
            ("info", "campaign 'autumn-duvet-week' applied to basket B-55102", {}),
        ])
    neighbour(s, NS, "wallet-api", f"{REG}/wallet-api:2.2.9", pool[:3], replicas=2,
              memory_mib=170, n_logs=36, rps=3.1, codes={"200": 0.997, "504": 0.003}, logs=[
                  ("info", "wallet top-up W-188204 10.00 EUR captured", {}),
                  ("warn", "adyen /payments timed out after 10s, retrying (idempotency key "
                           "kept)", {"error.type": "Timeout"}),
                  ("info", "wallet balance read W-188211", {}),
              ])
    for pod in c.objects_of("Pod"):
        if pod["metadata"]["namespace"] == "kube-system" and "coredns" in pod["metadata"]["name"]:
            lines(s, pod, "coredns", "coredns", s.ago(hours=3), NOW, 12, [
                ("info", "[INFO] Reloading complete", {}),
                ("info", '[INFO] 10.62.1.44:41231 - 52344 "AAAA IN api.adyen.com.washhub.svc.'
                         'cluster.local. udp 72 false 512" NXDOMAIN qr,aa,rd 165 0.000112s',
                 {}),
            ])
    return s
