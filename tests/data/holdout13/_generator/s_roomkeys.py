"""Hotel group: guests wait minutes for their mobile room key. At 21:48 AWS reclaimed the
spot node that ran two of room-keys' four pods. The ReplicaSet cannot replace them: three
hours earlier the platform team's namespace baseline added a LimitRange (container-limits,
max memory 1Gi per container) to the frontdesk namespace, and room-keys' pods ask for a
1536Mi limit, so every create is forbidden (FailedCreate). The two pods left carry the
evening check-in peak: slow key issuance and 503s. Culprit: the room-keys Deployment,
whose pods the LimitRange refuses. Red herrings: the spot interruption itself (a node that
vanished from the node list and the node metrics), housekeeping-board's pod recreated
on another node at the same time, guest-messaging 2.9.0 rolled out in the same namespace
half an hour before the onset, a vendor rate-limit warning in room-keys' own logs."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.scenario_tools.common import (
    MIB,
    Story,
    container_metrics,
    deployment_metrics,
    http_metrics,
    kube_system,
    namespaces,
    nodes,
    simple_deployment,
    truth,
)
from tests.scenario_tools.kube import Ctr, Template, http_probe, iso, running
from tests.scenario_tools.parts import ghost_pod, neighbour, rollout

from .kit13 import chatter, gauge, plain_metrics

ID = "mobile-room-keys-delayed"
NOW = datetime(2028, 5, 21, 22, 15, tzinfo=UTC)
NS = "frontdesk"
REG = "123456789012.dkr.ecr.eu-west-1.amazonaws.com/harbourline"


def build() -> Story:
    s = Story(ID, "Mobile room keys take minutes to arrive", NOW, """\
Guests arriving tonight are waiting several minutes for their mobile room key in the app,
some get "key could not be issued, please see reception". Reception at the Dublin and Cork
hotels has queues. Started a bit before quarter to ten (UTC) I think. Front desk systems.
""", truth("quota_exceeded", "Deployment", NS, "room-keys",
           ["FailedCreate", "maximum memory usage per Container is 1Gi",
            "but limit is 1536Mi", "container-limits"],
           "room-keys lost two of its four pods with the reclaimed spot node, and the "
           "ReplicaSet cannot recreate them: the frontdesk LimitRange container-limits (max "
           "memory 1Gi per container, added today) forbids room-keys' 1536Mi limit. Lower "
           "room-keys' memory limit to 1Gi or exempt it in the LimitRange; the two "
           "remaining pods are overloaded until then."),
        hours=2.0, nested_logs=True)
    namespaces(s, NS, "housekeeping", "loyalty")
    node_list = nodes(s, 3, subnet=26, region="eu-west-1", instance="m6i.xlarge", days=5.0)
    spot = nodes(s, 1, subnet=26, region="eu-west-1", instance="m6i.xlarge", days=1.2,
                 pool="spot-general")[0]
    spot["metadata"]["labels"]["eks.amazonaws.com/capacityType"] = "SPOT"
    kube_system(s, node_list)
    c = s.cluster
    lost = NOW - timedelta(minutes=27)
    cut = lost.timestamp()

    # ---- the namespace baseline: a LimitRange added this afternoon
    c.add({"apiVersion": "v1", "kind": "LimitRange",
           "metadata": c.meta("LimitRange", "container-limits", NS, NOW - timedelta(
               hours=3, minutes=6), {"app.kubernetes.io/managed-by": "Helm",
                                     "app.kubernetes.io/part-of": "namespace-baseline",
                                     "helm.sh/chart": "namespace-baseline-0.7.0"},
               annotations={"meta.helm.sh/release-name": "ns-baseline-frontdesk",
                            "meta.helm.sh/release-namespace": "platform"}),
           "spec": {"limits": [{"type": "Container",
                                "max": {"cpu": "2", "memory": "1Gi"},
                                "min": {"cpu": "10m", "memory": "16Mi"},
                                "default": {"cpu": "500m", "memory": "512Mi"},
                                "defaultRequest": {"cpu": "100m", "memory": "128Mi"}}]}})
    c.add({"apiVersion": "v1", "kind": "ResourceQuota",
           "metadata": c.meta("ResourceQuota", "frontdesk-compute", NS, s.ago(days=190)),
           "spec": {"hard": {"requests.cpu": "16", "requests.memory": "32Gi", "pods": "60"}},
           "status": {"hard": {"requests.cpu": "16", "requests.memory": "32Gi", "pods": "60"},
                      "used": {"requests.cpu": "2850m", "requests.memory": "5760Mi",
                               "pods": "9"}}})

    # ---- room-keys: four pods, two of them on the reclaimed spot node
    ctr = Ctr("room-keys", f"{REG}/room-keys:6.4.1", port=8080,
              requests={"cpu": "500m", "memory": "1Gi"}, limits={"memory": "1536Mi"},
              env={"LOCK_VENDOR_URL": "https://visionline-gw.harbourline.internal:8443",
                   "KEY_TTL": "36h"},
              readiness=http_probe("/ready", delay=10), liveness=http_probe(
                  "/healthz", delay=30, period=20))
    rolled = s.ago(days=1, hours=3)
    work, pods = simple_deployment(s, NS, "room-keys", "", replicas=4,
                                   node_list=[node_list[0], node_list[1], spot, spot],
                                   revision=14, rollout=rolled,
                                   template=Template([ctr], service_account="room-keys"))
    rs = work.revisions[-1]
    ghosts = []
    for pod in pods[2:]:
        work.pods.remove(pod)
        c.remove(pod)
        born = datetime.fromisoformat(pod["metadata"]["creationTimestamp"]
                                      .replace("Z", "+00:00"))
        ghost = ghost_pod(s, rs, spot, born, lost)
        ghost["metadata"]["name"] = pod["metadata"]["name"]
        ghosts.append(ghost)
    left = pods[:2]
    message = ('Error creating: pods "{}" is forbidden: maximum memory usage per Container is '
               "1Gi, but limit is 1536Mi")
    rs_name = rs["metadata"]["name"]
    for k in range(2):
        c.event(rs, "FailedCreate", message.format(f"{rs_name}-{c.token(5)}"),
                first=lost + timedelta(seconds=41 + k),
                last=NOW - timedelta(seconds=s.rng.randrange(20, 200)), count=17 - k,
                type_="Warning", component="replicaset-controller")
    work.availability_changed = lost + timedelta(seconds=40)
    work.extra_conditions.append({
        "type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
        "message": message.format(f"{rs_name}-{c.token(5)}").removeprefix("Error creating: "),
        "lastUpdateTime": iso(lost + timedelta(seconds=41)),
        "lastTransitionTime": iso(lost + timedelta(seconds=41))})
    deployment_metrics(s, work, lambda t: 4 if t < cut else 2)
    for pod in left + ghosts:
        container_metrics(s, pod, "room-keys",
                          memory=lambda t: 780 * MIB * s.rng.uniform(0.95, 1.05),
                          cpu=lambda t: 0.22 if t < cut else 0.61)
        http_metrics(s, "room-keys", pod, rps=lambda t: 1.1 if t < cut else 2.2,
                     codes={"200": lambda t: 0.994 if t < cut else 0.78,
                            "409": lambda t: 0.004,
                            "503": lambda t: 0.002 if t < cut else 0.22},
                     median=lambda t: 0.35 if t < cut else 7.5, histogram=True)
    chatter(s, left + ghosts, "room-keys", [
        ("info", "mobile key issued hotel=DUB-QUAY room=412 booking=HB-8812047 in 0.41s", {}),
        ("info", "mobile key issued hotel=ORK-LEE room=207 booking=HB-8811754 in 0.38s", {}),
        ("info", "key revoked on checkout hotel=DUB-QUAY room=118", {}),
    ], 150, end=lost)
    chatter(s, left, "room-keys", [
        ("warn", "lock vendor API rate limit 80% used (4000/5000 per hour), throttling "
         "non-urgent key refreshes", {}),
    ], 8)
    chatter(s, left, "room-keys", [
        ("warn", "issuance queue depth 140 (limit 150), key for booking HB-8813302 delayed "
         "38s", {}),
        ("error", "POST /v1/keys 503 issuance queue full, rejecting request",
         {"http.response.status_code": 503}),
        ("info", "mobile key issued hotel=DUB-QUAY room=509 booking=HB-8813377 in 41.2s", {}),
    ], 130, start=lost + timedelta(seconds=30))

    # ---- the spot interruption: a node that no longer exists
    spot_name = spot["metadata"]["name"]
    c.remove(spot)
    c.nodes.remove(spot)
    for node in node_list:
        name = node["metadata"]["name"]
        gauge(s, "kube_node_status_condition", {"node": name, "condition": "Ready",
                                               "status": "true"}, lambda t: 1.0,
              "The condition of a cluster node.")
    gauge(s, "kube_node_status_condition", {"node": spot_name, "condition": "Ready",
                                           "status": "true"},
          lambda t: 1.0 if t < cut - 40 else 0.0, "The condition of a cluster node.",
          times=[t for t in s.times if t <= cut])

    # ---- housekeeping-board: one pod moved off the spot node, fine again
    hk_ctr = Ctr("housekeeping-board", f"{REG}/housekeeping-board:2.2.0", port=3000,
                 requests={"cpu": "100m", "memory": "192Mi"}, limits={"memory": "384Mi"},
                 readiness=http_probe("/health", delay=5))
    hk, hk_pods = simple_deployment(s, "housekeeping", "housekeeping-board", "", replicas=1,
                                    node_list=[node_list[2]], revision=9,
                                    rollout=s.ago(days=3, hours=7),
                                    template=Template([hk_ctr],
                                                      service_account="housekeeping-board"))
    hk.replicas = 2
    hk.obj["spec"]["replicas"] = 2
    hk.revisions[-1]["spec"]["replicas"] = 2
    hk_rs = hk.revisions[-1]
    moved = lost + timedelta(seconds=44)
    new = c.pod(hk, hk_rs, node=node_list[0], created=moved,
                statuses={"housekeeping-board": running(moved + timedelta(seconds=14))})
    hk_ghost = ghost_pod(s, hk_rs, spot, s.ago(days=1, hours=1), lost)
    c.event(hk_rs, "SuccessfulCreate", f"Created pod: {new['metadata']['name']}", first=moved,
            component="replicaset-controller", host="")
    c.event(new, "Scheduled", f"Successfully assigned housekeeping/{new['metadata']['name']} "
            f"to {node_list[0]['metadata']['name']}", first=moved,
            component="default-scheduler", host="")
    for reason, msg, dt in (
            ("Pulling", f'Pulling image "{hk_ctr.image}"', 1),
            ("Pulled", f'Successfully pulled image "{hk_ctr.image}" in 6.8s (6.8s including '
             "waiting). Image size: 61822013 bytes.", 8),
            ("Created", "Created container: housekeeping-board", 9),
            ("Started", "Started container housekeeping-board", 10)):
        c.event(new, reason, msg, first=moved + timedelta(seconds=dt),
                field_path="spec.containers{housekeeping-board}")
    c.event(new, "Unhealthy", 'Readiness probe failed: Get "http://{ip}:3000/health": dial tcp '
            "{ip}:3000: connect: connection refused".replace(
                "{ip}", new["status"]["podIP"]), first=moved + timedelta(seconds=16),
            last=moved + timedelta(seconds=21), count=2, type_="Warning",
            field_path="spec.containers{housekeeping-board}")
    plain_metrics(s, [*hk_pods, new, hk_ghost], "housekeeping-board", 150, 0.03)
    chatter(s, [*hk_pods, new, hk_ghost], "housekeeping-board", [
        ("info", "room DUB-QUAY/412 marked clean by attendant A-17", {}),
        ("info", "websocket client connected (tablet HK-ORK-04)", {}),
        ("warn", "websocket client HK-DUB-11 disconnected: ping timeout", {}),
    ], 60)

    # ---- red herring rollout in the same namespace, half an hour before the onset
    at = lost - timedelta(minutes=31)

    def messaging(version: str) -> Ctr:
        return Ctr("guest-messaging", f"{REG}/guest-messaging:{version}", port=8080,
                   requests={"cpu": "100m", "memory": "256Mi"}, limits={"memory": "512Mi"},
                   readiness=http_probe("/ready", delay=5))
    roll = rollout(s, NS, "guest-messaging", messaging, old="2.8.3", new="2.9.0", at=at,
                   revision=37, replicas=2, node_list=node_list)
    plain_metrics(s, roll.new_pods + roll.old_pods, "guest-messaging", 210, 0.05)
    chatter(s, roll.new_pods, "guest-messaging", [
        ("info", "SMS 'your room is ready' sent booking=HB-8812990", {}),
        ("warn", "WhatsApp template 'checkin_v3' pending approval, falling back to SMS", {}),
    ], 40, start=at + timedelta(minutes=1))
    neighbour(s, "loyalty", "points-ledger", f"{REG}/points-ledger:1.19.0", node_list,
              replicas=2, memory_mib=260, logs=[
                  ("info", "points accrued member=L-33019 stay=HB-8801174 +420", {}),
                  ("warn", "duplicate accrual ignored stay=HB-8790021", {})], n_logs=20)
    return s
