"""Larger building blocks: a rolled-out Deployment, a healthy neighbour, a minor issue.

They write the controller events a real rollout leaves (only those updated within the hour,
as the API server keeps no older ones) and the pods a rollout deleted, which survive only in
metrics and logs.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from tests.scenario_tools.common import (
    MIB,
    Story,
    const,
    container_metrics,
    http_metrics,
    noise_logs,
    simple_deployment,
)
from tests.scenario_tools.kube import Ctr, Obj, Template, Workload, http_probe, iso, running


@dataclass
class Rollout:
    """A Deployment rolled from an old revision to a new one at `at`."""

    work: Workload
    old_rs: Obj
    new_rs: Obj
    new_pods: list[Obj] = field(default_factory=list)
    old_pods: list[Obj] = field(default_factory=list)  # deleted: metrics and logs only


def ghost_pod(story: Story, rs: Obj, node: Obj, created: datetime, deleted: datetime) -> Obj:
    """A pod a rollout deleted: not in cluster.yaml, but still in metrics and logs."""
    name = f"{rs['metadata']['name']}-{story.cluster.token(5)}"
    return {"kind": "Pod", "metadata": {"name": name, "namespace": rs["metadata"]["namespace"],
                                        "creationTimestamp": iso(created),
                                        "_deleted": int(deleted.timestamp())},
            "spec": {"nodeName": node["metadata"]["name"]}}


def rollout(story: Story, namespace: str, name: str, ctr: Callable[[str], Ctr], *,
            old: str, new: str, at: datetime, revision: int, replicas: int,
            node_list: Sequence[Obj],
            statuses: Callable[[int, datetime, str], dict[str, Obj]] | None
            = None, template_extra: dict[str, Any] | None = None, service: bool = True,
            complete: bool = True, pods_of_new: int | None = None, old_left: int | None = None,
            recreate: bool = False, init: Callable[[str], list[Ctr]] | None = None,
            sidecars: Callable[[str], list[Ctr]] | None = None,
            init_statuses: Callable[[int, datetime, str], dict[str, Obj]] | None = None,
            ) -> Rollout:
    """A Deployment at `revision` (image tag `new`) rolled out from `old` at `at`.

    `statuses(i, started, pod_name)` gives the new pods' container states (default:
    running, ready).
    With `complete=False` the rollout is stuck: `old_left` old pods stay (all by default)
    and `pods_of_new` (1 by default: the surge) new ones exist. `recreate` uses the
    Recreate strategy.
    """
    c = story.cluster
    extra = template_extra or {}
    def template(version: str) -> Template:
        return Template([ctr(version), *(sidecars(version) if sidecars else [])],
                        init=init(version) if init else [],
                        labels={"app.kubernetes.io/version": version}, service_account=name,
                        **extra)

    old_tpl, new_tpl = template(old), template(new)
    work = c.workload("Deployment", namespace, name, new_tpl, replicas=replicas,
                      created=story.ago(days=story.rng.randrange(90, 400)),
                      labels={"app.kubernetes.io/name": name,
                              "app.kubernetes.io/part-of": namespace},
                      extra_spec={"strategy": {"type": "Recreate"}} if recreate else None)
    old_created = at - timedelta(days=story.rng.uniform(3, 9))
    left = 0 if complete else (replicas if old_left is None else old_left)
    old_rs = c.revision(work, revision - 1, old_created, old_tpl, replicas=left)
    n_new = pods_of_new if pods_of_new is not None else (replicas if complete else 1)
    new_rs = c.revision(work, revision, at, new_tpl, replicas=replicas if recreate else n_new)
    out = Rollout(work, old_rs, new_rs)
    for i in range(replicas):
        node = node_list[i % len(node_list)]
        born = old_created + timedelta(seconds=30 * i + 20)
        if i >= left:
            gone = at - timedelta(seconds=5) if recreate else at + timedelta(seconds=45 * (i + 1))
            out.old_pods.append(ghost_pod(story, old_rs, node, born, gone))
        else:
            up = running(born + timedelta(seconds=7))
            out.old_pods.append(c.pod(work, old_rs, node=node, created=born, statuses={
                x.name: up for x in old_tpl.containers}))
    for i in range(n_new):
        created = at + timedelta(seconds=2 + (2 if recreate else 45) * i)
        started = created + timedelta(seconds=9)
        pod_name = f"{new_rs['metadata']['name']}-{c.token(5)}"
        states = statuses(i, started, pod_name) if statuses else {name: running(started)}
        inits = init_statuses(i, started, pod_name) if init_statuses else None
        out.new_pods.append(c.pod(work, new_rs, node=node_list[(i + 1) % len(node_list)],
                                  created=created, statuses=states, init_statuses=inits,
                                  name=pod_name))
    if service:
        c.service(namespace, name, {"app.kubernetes.io/name": name},
                  created=story.ago(days=90))
    if not complete or any(not p["status"].get("containerStatuses", [{}])[0].get("ready")
                           for p in out.new_pods):
        out.work.progressing = _stuck(story, new_rs["metadata"]["name"], at)
        out.work.availability_changed = (at - timedelta(seconds=6) if recreate else
                                         old_created + timedelta(seconds=90))
    _rollout_events(story, out, at, recreate)
    return out


def _stuck(story: Story, rs_name: str, at: datetime) -> tuple[str, str, datetime]:
    """The Progressing condition of a rollout that does not finish (deadline: 600 s)."""
    if story.now - at > timedelta(seconds=600):
        return ("ProgressDeadlineExceeded", f'ReplicaSet "{rs_name}" has timed out progressing.',
                at + timedelta(seconds=600))
    return ("ReplicaSetUpdated", f'ReplicaSet "{rs_name}" is progressing.',
            at + timedelta(seconds=50))


def _rollout_events(story: Story, roll: Rollout, at: datetime, recreate: bool) -> None:
    """The Deployment controller's scaling events and the new pods' kubelet events."""
    c, hour = story.cluster, story.now - timedelta(hours=1)
    new_name, old_name = roll.new_rs["metadata"]["name"], roll.old_rs["metadata"]["name"]
    n = roll.work.replicas
    if at >= hour and recreate:
        c.event(roll.work.obj, "ScalingReplicaSet", f"Scaled down replica set {old_name} from "
                f"{n} to 0", first=at - timedelta(seconds=6), component="deployment-controller")
        c.event(roll.work.obj, "ScalingReplicaSet", f"Scaled up replica set {new_name} from 0 "
                f"to {n}", first=at, component="deployment-controller")
    elif at >= hour:
        ghosts = [p for p in roll.old_pods if "_deleted" in p["metadata"]]
        for i, _ in enumerate(roll.new_pods):
            c.event(roll.work.obj, "ScalingReplicaSet",
                    f"Scaled up replica set {new_name} from {i} to {i + 1}",
                    first=at + timedelta(seconds=45 * i), component="deployment-controller")
        for i, ghost in enumerate(ghosts):
            gone = datetime.fromtimestamp(ghost["metadata"]["_deleted"], at.tzinfo)
            c.event(roll.work.obj, "ScalingReplicaSet",
                    f"Scaled down replica set {old_name} from {n - i} to {n - i - 1}",
                    first=gone - timedelta(seconds=5), component="deployment-controller")
            c.event(roll.old_rs, "SuccessfulDelete", f"Deleted pod: {ghost['metadata']['name']}",
                    first=gone - timedelta(seconds=5), component="replicaset-controller")
        for pod in roll.new_pods:
            created = datetime.fromisoformat(pod["metadata"]["creationTimestamp"]
                                             .replace("Z", "+00:00"))
            c.event(roll.new_rs, "SuccessfulCreate", f"Created pod: {pod['metadata']['name']}",
                    first=created, component="replicaset-controller")
    if at >= hour:
        for pod in roll.new_pods:
            _pod_start_events(story, pod)


def _pod_start_events(story: Story, pod: Obj) -> None:
    """Scheduled, and for each container the kubelet started: Pulling, Pulled, Created,
    Started (later restarts and failures are the story's to add)."""
    c = story.cluster
    created = datetime.fromisoformat(pod["metadata"]["creationTimestamp"].replace("Z", "+00:00"))
    c.event(pod, "Scheduled", f"Successfully assigned {pod['metadata']['namespace']}/"
            f"{pod['metadata']['name']} to {pod['spec']['nodeName']}", first=created,
            component="default-scheduler", host="")  # the scheduler names no host
    statuses = {s["name"]: s for s in pod["status"].get("initContainerStatuses", []) +
                pod["status"].get("containerStatuses", [])}
    offset = 1
    for key in ("initContainers", "containers"):
        for ctr in pod["spec"].get(key, []):
            status = statuses.get(ctr["name"], {})
            if not status.get("imageID"):
                continue
            field_ = f"spec.{key}{{{ctr['name']}}}"
            c.event(pod, "Pulling", f'Pulling image "{ctr["image"]}"',
                    first=created + timedelta(seconds=offset), field_path=field_)
            c.event(pod, "Pulled", f'Successfully pulled image "{ctr["image"]}" in 3.41s '
                    f"(3.41s including waiting). Image size: 98213154 bytes.",
                    first=created + timedelta(seconds=offset + 4), field_path=field_)
            if status.get("restartCount"):
                continue  # the story writes the aggregated Created/Started of a restarting one
            c.event(pod, "Created", f"Created container: {ctr['name']}",
                    first=created + timedelta(seconds=offset + 7), field_path=field_)
            c.event(pod, "Started", f"Started container {ctr['name']}",
                    first=created + timedelta(seconds=offset + 8), field_path=field_)
            offset += 9


def neighbour(story: Story, namespace: str, name: str, image: str, node_list: Sequence[Obj], *,
              replicas: int = 2, logs: Sequence[tuple[str, str, dict[str, Any]]] = (),
              n_logs: int = 25, memory_mib: float = 150.0, port: int = 8080,
              rps: float = 0.0, codes: dict[str, float] | None = None,
              restarts: dict[int, Obj] | None = None, revision: int = 7) -> tuple[Workload,
                                                                                 list[Obj]]:
    """A healthy Deployment with its memory series, request counters and ordinary logs."""
    work, pods = simple_deployment(story, namespace, name, image, replicas=replicas,
                                   node_list=list(node_list), port=port, revision=revision,
                                   restarts=restarts)
    for pod in pods:
        base = memory_mib * story.rng.uniform(0.85, 1.15)
        restart_base = pod["status"]["containerStatuses"][0]["restartCount"]
        container_metrics(story, pod, name, memory=lambda t, b=base: b * MIB,
                          restart_base=restart_base)
        if rps:
            http_metrics(story, name, pod, rps=const(rps / replicas),
                         codes={k: const(v) for k, v in (codes or {"200": 1.0}).items()},
                         median=const(0.05))
        if logs:
            noise_logs(story, pod, name, name, logs, n_logs // replicas)
    return work, pods


def readiness_blip(story: Story, namespace: str, name: str, image: str,
                   node_list: Sequence[Obj], *, port: int = 3000, path: str = "/api/health",
                   minutes_ago: float = 48) -> None:
    """A minor issue elsewhere: a probe that timed out twice and recovered."""
    _, pods = simple_deployment(story, namespace, name, image, replicas=1,
                                node_list=list(node_list), port=port, revision=5,
                                ctr=Ctr(name, image, port=port,
                                        readiness=http_probe(path, delay=10, timeout=1),
                                        requests={"cpu": "100m", "memory": "128Mi"},
                                        limits={"memory": "512Mi"}))
    ip = pods[0]["status"]["podIP"]
    first = story.ago(minutes=minutes_ago)
    story.cluster.event(pods[0], "Unhealthy", f'Readiness probe failed: Get "http://{ip}:{port}'
                        f'{path}": context deadline exceeded (Client.Timeout exceeded while '
                        "awaiting headers)", first=first, last=first + timedelta(seconds=30),
                        count=2, type_="Warning", field_path=f"spec.containers{{{name}}}")


def hpa(story: Story, work: Workload, *, minimum: int, maximum: int, current: int,
        desired: int, utilization: int, target: int = 70, scaled: datetime) -> Obj:
    """An autoscaling/v2 HorizontalPodAutoscaler on CPU utilisation, with its conditions."""
    limited = desired >= maximum and utilization > target
    meta = story.cluster.meta("HorizontalPodAutoscaler", work.name, work.namespace,
                              story.ago(days=120), {"app.kubernetes.io/name": work.name})
    since = scaled + timedelta(seconds=30)
    conditions = [
        {"type": "AbleToScale", "status": "True", "reason": "ReadyForNewScale",
         "message": "recommended size matches current size", "lastTransitionTime": iso(since)},
        {"type": "ScalingActive", "status": "True", "reason": "ValidMetricFound",
         "message": "the HPA was able to successfully calculate a replica count from cpu "
         "resource utilization (percentage of request)", "lastTransitionTime": iso(
             story.ago(days=6, hours=2))},
        {"type": "ScalingLimited", "status": "True" if limited else "False",
         "reason": "TooManyReplicas" if limited else "DesiredWithinRange",
         "message": "the desired replica count is more than the maximum replica count"
         if limited else "the desired count is within the acceptable range",
         "lastTransitionTime": iso(since)}]
    return story.cluster.add({
        "apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": meta,
        "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment",
                                    "name": work.name},
                 "minReplicas": minimum, "maxReplicas": maximum,
                 "metrics": [{"type": "Resource", "resource": {"name": "cpu", "target": {
                     "type": "Utilization", "averageUtilization": target}}}]},
        "status": {"currentReplicas": current, "desiredReplicas": desired,
                   "lastScaleTime": iso(scaled), "currentMetrics": [{
                       "type": "Resource", "resource": {"name": "cpu", "current": {
                           "averageUtilization": utilization}}}],
                   "conditions": conditions}})


def app(story: Story, namespace: str, name: str, image: str, node_list: Sequence[Obj], *,
        replicas: int = 3, revision: int = 12, rps: Callable[[int], float],
        codes: dict[str, Callable[[int], float]], median: Callable[[int], float],
        cpu: Callable[[int], float], memory_mib: float = 200.0,
        throttle: Callable[[int], float] | None = None, limits: dict[str, str] | None = None,
        requests: dict[str, str] | None = None, port: int = 8080, env: dict[str, str] |
        None = None, readiness: Obj | None = None, liveness: Obj | None = None,
        rollout_at: datetime | None = None, histogram: bool = True,
        extra: Sequence[Ctr] = (), mounts: Sequence[Obj] = (),
        volumes: Sequence[Obj] = ()) -> tuple[Workload, list[Obj]]:
    """The incident's main service when it runs: a Deployment whose pods are all up, with
    full container metrics and request metrics shaped by the story's functions."""
    limits = limits or {"memory": "512Mi"}
    ctr = Ctr(name, image, port=port, requests=requests or {"cpu": "250m", "memory": "256Mi"},
              limits=limits, env=env or {}, readiness=readiness or http_probe("/ready"),
              liveness=liveness or http_probe("/healthz", delay=15, period=20),
              mounts=list(mounts))
    tpl = Template([ctr, *extra], service_account=name, volumes=list(volumes))
    work, pods = simple_deployment(story, namespace, name, image, replicas=replicas,
                                   node_list=list(node_list), revision=revision, template=tpl,
                                   rollout=rollout_at)
    memory_limit = _bytes(limits.get("memory", "0"))
    cpu_limit = _cores(limits.get("cpu", "0"))
    for pod in pods:
        base = memory_mib * story.rng.uniform(0.9, 1.1)
        container_metrics(story, pod, name, memory=lambda t, b=base: b * MIB,
                          cpu=lambda t: cpu(t) * story.rng.uniform(0.93, 1.07),
                          throttle=throttle, limit_memory=memory_limit or None,
                          limit_cpu=cpu_limit or None)
        http_metrics(story, name, pod, rps=lambda t: rps(t) / replicas, codes=codes,
                     median=median, histogram=histogram)
    return work, pods


def _bytes(quantity: str) -> float:
    units = {"Ki": 1024, "Mi": 1024**2, "Gi": 1024**3}
    for suffix, factor in units.items():
        if quantity.endswith(suffix):
            return float(quantity[: -len(suffix)]) * factor
    return float(quantity or 0)


def _cores(quantity: str) -> float:
    return float(quantity[:-1]) / 1000 if quantity.endswith("m") else float(quantity or 0)


def scale_out(story: Story, work: Workload, node_list: Sequence[Obj],
              times: Sequence[datetime]) -> list[Obj]:
    """Running pods added to a Deployment's current ReplicaSet at `times` (an autoscaler's
    scale-out); the replica counts follow."""
    rs = work.revisions[-1]
    total = len(work.pods) + len(times)
    work.replicas = total
    work.obj["spec"]["replicas"] = total
    rs["spec"]["replicas"] = total
    rs["metadata"]["annotations"]["deployment.kubernetes.io/desired-replicas"] = str(total)
    name = work.template.containers[0].name
    return [story.cluster.pod(work, rs, node=node_list[i % len(node_list)], created=when,
                              statuses={name: running(when + timedelta(seconds=11))})
            for i, when in enumerate(times)]
