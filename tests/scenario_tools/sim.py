"""Container lifecycles as the kubelet drives them: runs, deaths and CrashLoopBackOff.

One simulation feeds the pod status, the events and the metrics of a story, so the restart
count, the back-off events and the restart counter always agree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

from tests.scenario_tools.common import Story
from tests.scenario_tools.kube import Obj, ended, running, waiting

MAX_BACKOFF = 300.0
RESET_AFTER = 600.0  # a container that ran this long restarts without back-off


@dataclass(frozen=True)
class Run:
    """One instance of a container: when it started and when it died (None: alive)."""

    start: datetime
    end: datetime | None


def lifecycle(first: datetime, now: datetime, life: Callable[[datetime], float],
              *, pull: float = 1.5) -> list[Run]:
    """Runs from `first` to `now`; `life(start)` is how many seconds an instance lives."""
    runs: list[Run] = []
    start, backoff = first, 0.0
    while start <= now:
        death = start + timedelta(seconds=life(start))
        if death > now:
            runs.append(Run(start, None))
            break
        runs.append(Run(start, death))
        lived = (death - start).total_seconds()
        backoff = 10.0 if lived >= RESET_AFTER or backoff == 0 else min(backoff * 2, MAX_BACKOFF)
        start = death + timedelta(seconds=backoff + pull)
    return runs


def deaths(runs: list[Run]) -> list[datetime]:
    return [r.end for r in runs if r.end is not None]


def container_status(runs: list[Run], pod: str, namespace: str, container: str, *,
                     reason: str, code: int, uid: str, message: str = "",
                     restart_base: int = 0, ready: bool = True) -> Obj:
    """The status a crash-looping container shows at the end of its runs."""
    restarts = restart_base + len(deaths(runs))
    died = [r for r in runs if r.end is not None]
    last = None
    if died and died[-1].end is not None:
        last = ended(reason, code, died[-1].start, died[-1].end, message)
    current = runs[-1]
    if current.end is None:
        return running(current.start, ready=ready, restarts=restarts, last=last)
    gap = backoff_after(runs)
    return waiting("CrashLoopBackOff", f"back-off {_duration(gap)} restarting failed container="
                   f"{container} pod={pod}_{namespace}({uid})", restarts=restarts, last=last)


def backoff_after(runs: list[Run]) -> float:
    """The back-off the kubelet applies after the last death of `runs`."""
    backoff = 0.0
    for run in runs:
        if run.end is None:
            return backoff
        lived = (run.end - run.start).total_seconds()
        backoff = 10.0 if lived >= RESET_AFTER or backoff == 0 else min(backoff * 2, MAX_BACKOFF)
    return backoff


def _duration(seconds: float) -> str:
    minutes, secs = divmod(int(seconds), 60)
    return f"{minutes}m{secs}s" if minutes else f"{secs}s"


def in_backoff(runs: list[Run]) -> list[Run]:
    """Deaths that were followed by a back-off longer than the initial 10 s."""
    out, backoff = [], 0.0
    for run in runs:
        if run.end is None:
            break
        lived = (run.end - run.start).total_seconds()
        backoff = 10.0 if lived >= RESET_AFTER or backoff == 0 else min(backoff * 2, MAX_BACKOFF)
        if backoff > 10.0:
            out.append(run)
    return out


def restart_events(story: Story, pod: Obj, container: str, runs: list[Run], *,
                   now: datetime, image: str, probe_message: str = "",
                   init: bool = False) -> None:
    """Pulled/Created/Started/BackOff (and readiness Unhealthy) events of a restarting pod.

    Events are only written when they were updated within the hour before `now`, as the
    API server would have dropped the older ones.
    """
    cluster = story.cluster
    field = f"spec.{'initContainers' if init else 'containers'}{{{container}}}"
    hour = now - timedelta(hours=1)
    starts = alive_chain([r.start for r in runs], now)
    if starts:
        for reason, message in (
                ("Pulled", f'Container image "{image}" already present on machine'),
                ("Created", f"Created container: {container}"),
                ("Started", f"Started container {container}")):
            cluster.event(pod, reason, message, first=starts[0], last=starts[-1],
                          count=len(starts), field_path=field)
    backing = in_backoff(runs)
    if backing:
        last = now - timedelta(seconds=7) if runs[-1].end is not None else \
            runs[-1].start - timedelta(seconds=2)
        ends = alive_chain([r.end for r in backing if r.end is not None] + [last], now)
        if last >= hour and len(ends) > 1:
            meta = pod["metadata"]
            chained = [r for r in backing if r.end is not None and r.end >= ends[0]]
            cluster.event(pod, "BackOff", f"Back-off restarting failed container {container} in "
                          f"pod {meta['name']}_{meta['namespace']}({meta['uid']})",
                          first=ends[0] + timedelta(seconds=1), last=last,
                          count=sum(max(1, int(backoff_for(runs, r) // 10)) for r in chained),
                          type_="Warning", field_path=field)
    restarts = alive_chain([r.start for r in runs[1:]], now)
    if probe_message and restarts:
        cluster.event(pod, "Unhealthy", probe_message, first=restarts[0] + timedelta(seconds=3),
                      last=restarts[-1] + timedelta(seconds=3), count=len(restarts),
                      type_="Warning", field_path=field)


def alive_chain(times: list[datetime], now: datetime) -> list[datetime]:
    """The occurrences one aggregated event still counts at `now`: the API server drops an
    event an hour after its last update, so a gap of more than an hour starts a new one."""
    chain: list[datetime] = []
    for when in sorted(times):
        if chain and when - chain[-1] > timedelta(hours=1):
            chain = []
        chain.append(when)
    return chain if chain and chain[-1] >= now - timedelta(hours=1) else []


def backoff_for(runs: list[Run], target: Run) -> float:
    backoff = 0.0
    for run in runs:
        if run.end is None:
            break
        lived = (run.end - run.start).total_seconds()
        backoff = 10.0 if lived >= RESET_AFTER or backoff == 0 else min(backoff * 2, MAX_BACKOFF)
        if run is target:
            return backoff
    return backoff
