"""Marathon ballot: entries crawl after the ballot opens at 12:00.

entry-ballot's HPA asks for 9 replicas at 12:03 (CPU at 3x its target) but the namespace's
ResourceQuota racehub-compute has only 512Mi of limits.memory left and each pod needs 1536Mi:
the ReplicaSet's creates are refused ("exceeded quota"), four pods carry the whole rush.
Red herrings: the HPA is far from its maximum (9 of 12); runner-profile 6.4.0 rolled out 41
minutes before the onset in the same namespace; a notebook pod in analytics is Pending
(node selector for a GPU pool that is scaled to zero); the ballot logs slow-query warnings
of the entries database.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout2._generator.kit import Incident
from tests.scenario_tools.common import (
    MIB,
    container_metrics,
    deployment_metrics,
    kube_system,
    namespaces,
    nodes,
    simple_deployment,
    truth,
)
from tests.scenario_tools.failures import scheduling_failed
from tests.scenario_tools.kube import Ctr, Obj, Template, http_probe, iso
from tests.scenario_tools.parts import app, hpa, neighbour, rollout

from .kit import lines, ramp

ID = "marathon-ballot-entries-crawling"
NOW = datetime.fromisoformat("2029-05-06T12:27:00+00:00")
NS = "racehub"
REG = "ghcr.io/citymarathon-ops"
GI = 1024 * MIB


def build() -> Incident:
    s = Incident(
        id=ID, title="Marathon ballot entries crawling", now=NOW,
        report="""\
The 2030 marathon ballot opened at 12:00 and the entry form is crawling: "Submit entry"
takes 10-20 seconds and a fair number of runners get "We couldn't save your entry, please
try again". Marketing says traffic is about what we expected. The autoscaler should be
handling this, is it the entries database?
""",
        truth=truth(
            "quota_exceeded", "Deployment", NS, "entry-ballot",
            ["exceeded quota: racehub-compute", "limits.memory=1536Mi",
             "used: limits.memory=11776Mi", "FailedCreate"],
            "entry-ballot's autoscaler asked for 9 replicas at 12:03, but the ReplicaSet "
            "cannot create pods: the ResourceQuota racehub-compute has 512Mi of limits.memory "
            "left and each entry-ballot pod needs 1536Mi, so only the 4 existing pods serve "
            "the ballot rush. Raise limits.memory of racehub-compute (about 20Gi) or lower "
            "entry-ballot's memory limit, then let the HPA scale out."))
    c = s.cluster
    namespaces(s, NS, "analytics")
    pool = nodes(s, 5, subnet=44, region="eu-west-2", instance="c7i.2xlarge", days=4.5,
                 cpu="8", memory="16Gi", allocatable_cpu="7910m", allocatable_memory="14790Mi")
    kube_system(s, pool)
    opened = datetime.fromisoformat("2029-05-06T12:00:00+00:00")
    scaled = opened + timedelta(minutes=3, seconds=12)
    rush = ramp(opened, 2.5)

    # ---- entry-ballot: 4 pods, the HPA wants 9, the quota refuses the rest
    def rps(t: int) -> float:
        return 38.0 + 104.0 * rush(t)

    def saturated(t: int) -> float:
        return rush(t)
    work, pods = app(
        s, NS, "entry-ballot", f"{REG}/entry-ballot:2.7.1", pool, replicas=4, revision=17,
        rps=rps, codes={"201": lambda t: 0.985 - 0.09 * saturated(t),
                        "503": lambda t: 0.001 + 0.09 * saturated(t),
                        "422": lambda t: 0.014},
        median=lambda t: 0.11 + 2.3 * saturated(t),
        cpu=lambda t: 0.42 + 1.15 * saturated(t), memory_mib=690,
        requests={"cpu": "500m", "memory": "1Gi"}, limits={"memory": "1536Mi"},
        env={"ENTRIES_DB_HOST": "entries-prod.cxw1zq9aa2.eu-west-2.rds.amazonaws.com",
             "GUNICORN_WORKERS": "4", "BALLOT_ID": "lm-2030"},
        readiness=http_probe("/health/ready", delay=10),
        rollout_at=s.ago(days=3, hours=2, minutes=40))
    rs = work.revisions[-1]
    work.replicas = 9
    work.obj["spec"]["replicas"] = 9
    rs["spec"]["replicas"] = 9
    rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] = "9"
    work.availability_changed = scaled
    refused = (f'Error creating: pods "{rs["metadata"]["name"]}-{c.token(5)}" is forbidden: '
               "exceeded quota: racehub-compute, requested: limits.memory=1536Mi, used: "
               "limits.memory=11776Mi, limited: limits.memory=12Gi")
    work.extra_conditions.append({
        "type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
        "message": refused.removeprefix("Error creating: "),
        "lastUpdateTime": iso(scaled + timedelta(seconds=1)),
        "lastTransitionTime": iso(scaled + timedelta(seconds=1))})
    c.event(work.obj, "ScalingReplicaSet", f"Scaled up replica set {rs['metadata']['name']} "
            "from 4 to 9", first=scaled, component="deployment-controller")
    c.event(rs, "FailedCreate", refused, first=scaled + timedelta(seconds=1),
            last=NOW - timedelta(seconds=38), count=41, type_="Warning",
            component="replicaset-controller")
    auto = hpa(s, work, minimum=4, maximum=12, current=4, desired=9, utilization=314,
               scaled=scaled)
    auto["status"]["conditions"][0].update({
        "reason": "SucceededRescale",
        "message": "the HPA controller was able to update the target scale to 9"})
    c.event(auto, "SuccessfulRescale", "New size: 9; reason: cpu resource utilization "
            "(percentage of request) above target", first=scaled,
            component="horizontal-pod-autoscaler")

    def fix(objects: list[Obj]) -> None:
        for obj in objects:
            if obj["kind"] == "ReplicaSet" and obj["metadata"]["name"] == rs["metadata"]["name"]:
                obj["status"]["conditions"] = [{
                    "type": "ReplicaFailure", "status": "True", "reason": "FailedCreate",
                    "message": refused.removeprefix("Error creating: "),
                    "lastTransitionTime": iso(scaled + timedelta(seconds=1))}]
    s.fixes.append(fix)
    deployment_metrics(s, work, available=lambda t: 4.0,
                       spec=lambda t: 9.0 if t >= scaled.timestamp() else 4.0)
    hlabels = {"namespace": NS, "horizontalpodautoscaler": "entry-ballot"}
    s.metrics.gauge("kube_horizontalpodautoscaler_status_desired_replicas", hlabels,
                    [(t, 9.0 if t >= scaled.timestamp() else 4.0) for t in s.times],
                    "Desired number of replicas of pods managed by this autoscaler.")
    s.metrics.gauge("kube_horizontalpodautoscaler_status_current_replicas", hlabels,
                    [(t, 4.0) for t in s.times],
                    "Current number of replicas of pods managed by this autoscaler.")
    s.metrics.gauge("kube_horizontalpodautoscaler_spec_max_replicas", hlabels,
                    [(t, 12.0) for t in s.times],
                    "Upper limit for the number of pods that can be set by the autoscaler.")
    for resource, hard, used in (("limits.memory", 12 * GI, 11776 * MIB),
                                 ("requests.cpu", 12.0, 3.05), ("pods", 30.0, 10.0)):
        for type_, value in (("hard", hard), ("used", used)):
            s.metrics.gauge("kube_resourcequota",
                            {"namespace": NS, "resourcequota": "racehub-compute",
                             "resource": resource, "type": type_},
                            [(t, value) for t in s.times], "Information about resource quota.")
    c.add({"apiVersion": "v1", "kind": "ResourceQuota",
           "metadata": c.meta("ResourceQuota", "racehub-compute", NS, s.ago(days=97),
                              {"app.kubernetes.io/managed-by": "platform-baseline"}),
           "spec": {"hard": {"limits.memory": "12Gi", "requests.cpu": "12", "pods": "30"}},
           "status": {"hard": {"limits.memory": "12Gi", "pods": "30", "requests.cpu": "12"},
                      "used": {"limits.memory": "11776Mi", "pods": "10",
                               "requests.cpu": "3050m"}}})
    for pod in pods:
        lines(s, pod, "entry-ballot", "entry-ballot", s.ago(hours=3), opened, 24, [
            ("info", "POST /v1/entries 201 94ms", {"http.response.status_code": 201}),
            ("info", "GET /v1/ballot/lm-2030/status 200 12ms",
             {"http.response.status_code": 200}),
        ])
        lines(s, pod, "entry-ballot", "entry-ballot", opened + timedelta(minutes=2), NOW, 70, [
            ("info", "POST /v1/entries 201 2841ms", {"http.response.status_code": 201}),
            ("warn", "worker queue depth 212 > 64, requests waiting for a free worker", {}),
            ("error", "POST /v1/entries 503 request waited 15.0s for a worker, giving up",
             {"http.response.status_code": 503, "error.type": "QueueTimeout"}),
            ("warn", "slow query 1.21s: INSERT INTO entry (runner_id, ballot_id, ...) "
                     "ON CONFLICT DO NOTHING", {}),
            ("info", "POST /v1/entries 201 6120ms", {"http.response.status_code": 201}),
        ])

    # ---- the rest of the namespace fills the quota
    _, boards = simple_deployment(
        s, NS, "results-board", f"{REG}/results-board:5.1.0", replicas=2, node_list=pool,
        revision=30, memory="1Gi")
    for pod in boards:
        container_metrics(s, pod, "results-board", memory=lambda t: 610 * MIB)
    _, finish = simple_deployment(
        s, NS, "photo-finish", f"{REG}/photo-finish:0.9.4", replicas=1, node_list=pool,
        revision=6, memory="1280Mi")
    container_metrics(s, finish[0], "photo-finish", memory=lambda t: 740 * MIB)

    # ---- red herrings: a rollout before the opening, a pending notebook elsewhere
    def profile(version: str) -> Ctr:
        return Ctr("runner-profile", f"{REG}/runner-profile:{version}", port=8080,
                   requests={"cpu": "250m", "memory": "512Mi"}, limits={"memory": "768Mi"},
                   readiness=http_probe("/health/ready"))
    prof = rollout(s, NS, "runner-profile", profile, old="6.3.2", new="6.4.0",
                   at=opened - timedelta(minutes=41, seconds=5), revision=52, replicas=3,
                   node_list=pool)
    for pod in prof.new_pods:
        container_metrics(s, pod, "runner-profile", memory=lambda t: 402 * MIB)
        lines(s, pod, "runner-profile", "runner-profile", opened - timedelta(minutes=40), NOW,
              22, [("info", "runner-profile 6.4.0 started, feature flag club_badges=on", {}),
                   ("info", "GET /v1/runners/me 200 18ms", {}),
                   ("warn", "Strava token refresh failed for runner 552913 (401), "
                            "asking user to reconnect", {})])
    nb = Ctr("notebook", "quay.io/jupyter/pytorch-notebook:2029-04-28", port=8888,
             requests={"cpu": "4", "memory": "12Gi"}, limits={"memory": "12Gi"})
    nb_tpl = Template([nb], service_account="notebook", node_selector={
        "eks.amazonaws.com/nodegroup": "gpu-g5"}, tolerations=[
        {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}])
    nb_work = c.workload("Deployment", "analytics", "finish-time-notebook", nb_tpl,
                         created=s.ago(days=21))
    nb_rs = c.revision(nb_work, 3, s.ago(minutes=52), replicas=1)
    message = ("0/5 nodes are available: 5 node(s) didn't match Pod's node affinity/selector. "
               "preemption: 0/5 nodes are available: 5 Preemption is not helpful for "
               "scheduling.")
    nb_pod = c.pod(nb_work, nb_rs, node=None, created=s.ago(minutes=52),
                   statuses={}, scheduled_message=message)
    scheduling_failed(s, [nb_pod], message, since=s.ago(minutes=52),
                      autoscaler="pod didn't trigger scale-up: 1 max node group size reached")
    neighbour(s, "analytics", "split-times-etl", f"{REG}/split-times-etl:1.3.0", pool,
              replicas=1, memory_mib=330, n_logs=20, logs=[
                  ("info", "loaded 18,204 split times for race hm-2029-04", {}),
                  ("warn", "chip reader KM21-B sent 37 duplicate reads, dropped", {}),
              ])
    return s
