"""Pods that fail in the ways the taxonomy names, with the events a kubelet or the scheduler
writes for each: crash loops, image pulls, unschedulable pods, failing probes."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from tests.scenario_tools.common import Story
from tests.scenario_tools.kube import Obj, running, waiting
from tests.scenario_tools.sim import Run, container_status, lifecycle, restart_events


def crash_looping(story: Story, pod_name: str, namespace: str, container: str, *,
                  started: datetime, life: float, code: int = 1,
                  reason: str = "Error") -> tuple[Obj, list[Run]]:
    """A container that dies `life` seconds after each start: its status and runs."""
    runs = lifecycle(started, story.now, lambda s: life + story.rng.uniform(-0.4, 0.4))
    uid = story.cluster.uid("Pod", namespace, pod_name)
    status = container_status(runs, pod_name, namespace, container, reason=reason, code=code,
                              uid=uid, ready=False)
    if status["state"].get("running"):
        status["ready"] = False
    return status, runs


def crash_events(story: Story, pod: Obj, container: str, runs: list[Run], image: str,
                 *, init: bool = False) -> None:
    restart_events(story, pod, container, runs, now=story.now, image=image, init=init)


def image_pull_status(reason: str = "ImagePullBackOff", image: str = "") -> Obj:
    message = f'Back-off pulling image "{image}"' if reason == "ImagePullBackOff" else ""
    return waiting(reason, message)


def image_pull_events(story: Story, pod: Obj, container: str, image: str, error: str,
                      *, since: datetime) -> None:
    """What the kubelet says while it cannot pull: Pulling, Failed, BackOff (aggregated)."""
    field = f"spec.containers{{{container}}}"
    minutes = (story.now - since).total_seconds() / 60
    attempts = max(2, min(int(minutes / 5) + 2, 40))
    last = story.now - timedelta(seconds=story.rng.randrange(20, 200))
    story.cluster.event(pod, "Pulling", f'Pulling image "{image}"', first=since,
                        last=last, count=attempts, field_path=field)
    story.cluster.event(pod, "Failed", f'Failed to pull image "{image}": {error}', first=since
                        + timedelta(seconds=2), last=last + timedelta(seconds=2), count=attempts,
                        type_="Warning", field_path=field)
    story.cluster.event(pod, "Failed", "Error: ErrImagePull", first=since +
                        timedelta(seconds=2), last=last + timedelta(seconds=2), count=attempts,
                        type_="Warning", field_path=field)
    backoffs = attempts * 4 + story.rng.randrange(0, 9)
    story.cluster.event(pod, "BackOff", f'Back-off pulling image "{image}"', first=since +
                        timedelta(seconds=14), last=story.now - timedelta(seconds=4),
                        count=backoffs, type_="Normal", field_path=field)
    story.cluster.event(pod, "Failed", "Error: ImagePullBackOff", first=since +
                        timedelta(seconds=14), last=story.now - timedelta(seconds=4),
                        count=backoffs, type_="Warning", field_path=field)


def scheduling_failed(story: Story, pods: Sequence[Obj], message: str, *, since: datetime,
                      autoscaler: str = "") -> None:
    """FailedScheduling on each pending pod, and the autoscaler's verdict if it has one."""
    for pod in pods:
        created = since
        minutes = (story.now - created).total_seconds() / 60
        story.cluster.event(pod, "FailedScheduling", message, first=created
                            + timedelta(seconds=1), last=story.now - timedelta(
                                seconds=story.rng.randrange(5, 90)),
                            count=max(1, int(minutes / 4)), type_="Warning",
                            component="default-scheduler", host="")
        if autoscaler:
            story.cluster.event(pod, "NotTriggerScaleUp", autoscaler, first=created +
                                timedelta(seconds=15), last=story.now - timedelta(
                                    seconds=story.rng.randrange(10, 60)),
                                count=max(1, int(minutes / 2)), component="cluster-autoscaler",
                                host="")


def not_ready(since: datetime, restarts: int = 0, last: Obj | None = None) -> Obj:
    """A running container whose readiness probe fails."""
    return running(since, ready=False, restarts=restarts, last=last)


def probe_events(story: Story, pod: Obj, container: str, message: str, *, since: datetime,
                 period: float, kind: str = "Readiness") -> None:
    """Unhealthy events of a probe failing every `period` seconds since `since`."""
    first = since
    count = max(1, int((story.now - since).total_seconds() / period))
    story.cluster.event(pod, "Unhealthy", f"{kind} probe failed: {message}",
                        first=first, last=story.now - timedelta(seconds=story.rng.uniform(
                            1, period)), count=count, type_="Warning",
                        field_path=f"spec.containers{{{container}}}")
