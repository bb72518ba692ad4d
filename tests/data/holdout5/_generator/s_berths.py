"""Port operations: berth assignments cannot be confirmed. berth-ledger is a 3-member Raft
StatefulSet whose image is pinned by digest. Harbor's retention policy removed untagged
manifests last night, including the pinned one. The node pool upgrade this morning drained
berth-ledger-2 onto a fresh node without the image cached: the pull fails (manifest not
found, ImagePullBackOff), the ledger runs on 2 of 3 members and quorum writes time out.
Red herrings: the node drain itself, a Multi-Attach warning that resolved, raft election
chatter, a slow AIS feed."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from tests.data.holdout._generator.base import gauge, set_times
from tests.data.holdout2._generator.kit import NodeKind, requests, statefulset
from tests.data.holdout3._generator.kit3 import chatter, namespaces, quiet, steady
from tests.scenario_tools.common import truth
from tests.scenario_tools.kube import Ctr, Template, http_probe, waiting

from .kit5 import Incident, hexof, provider_nodes

ID = "berth-assignments-unconfirmed"
NOW = datetime.fromisoformat("2027-06-22T07:41:00+00:00")
NS = "harbour-ops"
REPO = "harbor.portauthority.example/harbour/berth-ledger"


def build() -> Incident:
    s = Incident(
        id=ID, title="Berth assignments cannot be confirmed", now=NOW,
        report="""\
Harbour master's office: since about 07:00 confirming a berth assignment in the planning
screen spins and then says "ledger write timed out". Viewing the plan works. Platform did a
node pool upgrade early this morning, could that be related?
""",
        truth=truth(
            "image_pull", "StatefulSet", NS, "berth-ledger",
            ["ImagePullBackOff", "not found", "sha256", "berth-ledger-2"],
            "berth-ledger pins its image by digest, and Harbor's retention policy deleted that "
            "untagged manifest last night; berth-ledger-2, rescheduled by the node upgrade to a "
            "node without the image cached, cannot pull it (not found), so the ledger runs on "
            "2 of 3 members. Re-push the image (or pin the digest of a retained tag, 3.2.1) and "
            "exclude release digests from the retention policy."))
    set_times(s, 2.0, 30)
    c = s.cluster
    namespaces(s, {"default": 420, "kube-system": 420, NS: 400, "vessel-traffic": 300})
    kind = NodeKind("bd1-8-32", "8", "32862040Ki", "7800m", "30470056Ki", "v1.30.5",
                    "5.15.0-122-generic", "Ubuntu 22.04.5 LTS")
    olds = provider_nodes(s, "sakura", 2, kind, days=6.0)
    fresh = provider_nodes(s, "sakura", 1, kind, days=0.05, first=3)[0]
    nodes = [*olds, fresh]
    digest = "sha256:" + hexof(s, "digest", n=64)
    image = f"{REPO}@{digest}"
    ctr = Ctr("berth-ledger", image, port=7400, port_name="client",
              requests={"cpu": "500m", "memory": "1Gi"}, limits={"memory": "1536Mi"},
              readiness=http_probe("/readyz", 7401), env={"RAFT_PEERS": "3"})
    tpl = Template([ctr], service_account="berth-ledger")
    created = s.ago(days=300)
    drained = NOW - timedelta(minutes=44)
    born2 = drained + timedelta(seconds=7)
    work, pods = statefulset(
        s, NS, "berth-ledger", tpl, replicas=3, nodes=nodes,
        revisions=[(12, s.ago(days=5, hours=6), tpl)], pod_revision=lambda i: 12,
        born=lambda i: born2 if i == 2 else s.ago(days=5, hours=6) + timedelta(minutes=i),
        statuses=lambda i, st: {"berth-ledger": waiting(
            "ImagePullBackOff", f'Back-off pulling image "{image}"')} if i == 2 else {},
        claim=("data", "20Gi", "sakura-ssd"), created=created)
    p2 = pods[2]

    def image_ids(objs: list[dict[str, Any]]) -> None:
        for o in objs:
            if o["kind"] == "Pod" and o["metadata"].get("namespace") == NS:
                for st in o["status"].get("containerStatuses", []):
                    if st["name"] == "berth-ledger" and st.get("imageID"):
                        st["imageID"] = image
    s.fixes.append(image_ids)
    fp = "spec.containers{berth-ledger}"
    c.event(work.obj, "SuccessfulCreate", "create Pod berth-ledger-2 in StatefulSet "
            "berth-ledger successful", first=born2, component="statefulset-controller")
    c.event(p2, "Scheduled", f"Successfully assigned {NS}/berth-ledger-2 to "
            f"{fresh['metadata']['name']}", first=born2, component="default-scheduler",
            host="")
    c.event(p2, "FailedAttachVolume", "Multi-Attach error for volume \"pvc-"
            f"{c.uid('pv', NS, 'data-berth-ledger-2')}\" Volume is already exclusively "
            "attached to one node and can't be attached to another", first=born2 +
            timedelta(seconds=2), type_="Warning", component="attachdetach-controller", host="")
    c.event(p2, "SuccessfulAttachVolume", "AttachVolume.Attach succeeded for volume \"pvc-"
            f"{c.uid('pv', NS, 'data-berth-ledger-2')}\"", first=born2 + timedelta(seconds=71),
            component="attachdetach-controller", host="")
    first_pull = born2 + timedelta(seconds=80)
    n = 14
    c.event(p2, "Pulling", f'Pulling image "{image}"', first=first_pull, last=NOW -
            timedelta(minutes=3, seconds=12), count=n, field_path=fp)
    c.event(p2, "Failed", f'Failed to pull image "{image}": rpc error: code = NotFound desc '
            f'= failed to pull and unpack image "{image}": failed to resolve reference '
            f'"{image}": {image}: not found', first=first_pull + timedelta(seconds=1),
            last=NOW - timedelta(minutes=3, seconds=11), count=n, type_="Warning",
            field_path=fp)
    c.event(p2, "Failed", "Error: ErrImagePull", first=first_pull + timedelta(seconds=1),
            last=NOW - timedelta(minutes=3, seconds=11), count=n, type_="Warning",
            field_path=fp)
    c.event(p2, "BackOff", f'Back-off pulling image "{image}"', first=first_pull +
            timedelta(seconds=2), last=NOW - timedelta(seconds=9), count=171, type_="Warning",
            field_path=fp)
    c.event(p2, "Failed", "Error: ImagePullBackOff", first=first_pull + timedelta(seconds=2),
            last=NOW - timedelta(seconds=9), count=171, type_="Warning", field_path=fp)
    for old in olds:
        gauge(s, "kube_node_spec_unschedulable", {"node": old["metadata"]["name"]},
              lambda t: 0.0, "Whether a node can schedule new pods.")
    gauge(s, "kube_pod_container_status_waiting_reason",
          {"namespace": NS, "pod": "berth-ledger-2", "container": "berth-ledger",
           "reason": "ImagePullBackOff"}, lambda t: 1.0, "Describes the reason the container "
          "is currently in waiting state.", times=[t for t in s.times if t >= born2.timestamp()
                                                  + 120])
    for pod in pods[:2]:
        quiet(s, [pod], "berth-ledger", 690)
        gauge(s, "raft_peers_healthy", {"namespace": NS, "pod": pod["metadata"]["name"]},
              lambda t: 2.0 if t >= drained.timestamp() else 3.0, "Raft peers reachable.")
    chatter(s, pods[:2], "berth-ledger", "berth-ledger", [
        ("warn", "raft: heartbeat to peer berth-ledger-2 failed: dial tcp: lookup "
         "berth-ledger-2.berth-ledger.harbour-ops.svc: no such host", {}),
        ("info", "raft: term 88 leader berth-ledger-0, commit index 4412093", {}),
        ("warn", "append entries to berth-ledger-2 timed out after 500ms", {}),
    ], 120, start=drained)
    chatter(s, pods[:2], "berth-ledger", "berth-ledger", [
        ("info", "raft: term 88 leader berth-ledger-0, commit index 4411930", {}),
    ], 30, end=drained)
    pl = Ctr("berth-planner", "harbor.portauthority.example/harbour/berth-planner:9.3.0",
             port=8080, requests={"cpu": "300m", "memory": "512Mi"}, limits={"memory": "1Gi"},
             readiness=http_probe("/health"))
    _, pls = steady(s, NS, "berth-planner", [pl], nodes=olds, replicas=2, revision=40,
                    rollout=s.ago(days=2, hours=20))
    quiet(s, pls, "berth-planner", 540)
    slow = drained.timestamp() + 90
    for pod in pls:
        requests(s, pod, "berth-planner", rps=lambda t: 4.0, codes={
            "200": lambda t: 0.9 if t >= slow else 0.995,
            "504": lambda t: 0.1 if t >= slow else 0.0, "404": lambda t: 0.005},
            median=lambda t: 2.6 if t >= slow else 0.09, buckets=(0.1, 0.5, 1.0, 2.5, 5.0))
    chatter(s, pls, "berth-planner", "berth-planner", [
        ("error", "POST /assignments/BA-27-0612 failed: ledger write timed out after 5000ms "
         "(quorum not reached)", {"http.response.status_code": 504}),
        ("info", "GET /plan?date=2027-06-22 200 142ms", {}),
    ], 80, start=drained + timedelta(minutes=2))
    ais = Ctr("ais-ingest", "harbor.portauthority.example/vts/ais-ingest:2.8.4", port=8080,
              requests={"cpu": "200m", "memory": "256Mi"}, limits={"memory": "512Mi"})
    _, aiss = steady(s, "vessel-traffic", "ais-ingest", [ais], nodes=olds, replicas=1,
                     revision=22, rollout=s.ago(days=4, hours=1))
    quiet(s, aiss, "ais-ingest", 170)
    chatter(s, aiss, "ais-ingest", "ais-ingest", [
        ("warn", "AIS feed lag 38s from provider station KR-PUS-3", {}),
        ("info", "positions decoded: 1840 msgs/min", {}),
    ], 40)
    return s
