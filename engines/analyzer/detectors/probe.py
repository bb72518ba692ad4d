"""probe_failure: a readiness or liveness probe fails (wrong path or port, too short a
start-up delay), so pods are never Ready or are killed and restarted by the kubelet.

Signals: Unhealthy events (probe failed, with an HTTP status or a refused connection),
Killing events "failed liveness probe, will be restarted", containers Running but not
Ready, kills with exit 137/143 that are not OOM, and a probe that changed in the latest
revision. Probe failures that only follow another death (OOM kills, crashes at start) are
symptoms; the ranking demotes them against those causes.
"""

from __future__ import annotations

import re

from engines.analyzer.candidates import Candidate, Clue, Followup
from engines.analyzer.detectors._common import (
    DESCRIBE,
    EVENT_TOOLS,
    POD_LOGS,
    ROLLOUT,
    event_workload,
    is_recent,
    pod_workload,
)
from engines.analyzer.facts import Container, Facts, Pod, Ref
from engines.analyzer.scope import Scope

_STATUS = re.compile(r"status ?code:? ?(\d{3})", re.IGNORECASE)


_TIMING = re.compile(r"delay=(\d+)s.*period=(\d+)s.*failure=(\d+)")


def _killed_on_time(pod: Pod, container: Container) -> Clue | None:
    """A container killed just when its liveness probe gives up (delay + period × failures)
    was not crashing: it was still starting, or stopped answering, and the probe killed it."""
    probe = container.probes.get("liveness", "")
    timing = _TIMING.search(probe)
    if timing is None or container.last_started is None or container.last_finished is None:
        return None
    delay, period, failures = (int(g) for g in timing.groups())
    deadline = delay + period * failures
    lived = (container.last_finished - container.last_started).total_seconds()
    if abs(lived - deadline) > max(15.0, 0.25 * deadline):
        return None
    return Clue(0.3, f"it lived {int(lived)}s, just the {deadline}s the liveness probe allows "
                f"(delay {delay}s + {failures}×{period}s)", ("liveness_probe:",), pod.described,
                (DESCRIBE,), "probe-deadline")


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    found: dict[Ref, Candidate] = {}
    kinds: dict[Ref, set[str]] = {}

    def candidate(ref: Ref) -> Candidate:
        return found.setdefault(ref, Candidate("probe_failure", ref))

    for event in facts.events:
        if not is_recent(event.last, facts.now):
            continue
        message = event.message
        probe = next((k for k in ("Liveness", "Readiness", "Startup")
                      if f"{k} probe failed" in message or f"failed {k.lower()} probe" in message),
                     None)
        if probe is None:
            continue
        ref = event_workload(facts, event)
        if ref is None:
            continue
        kinds.setdefault(ref, set()).add(probe)
        if event.reason == "Killing" and not message:
            continue
        if event.reason == "Killing":
            weight, note = 0.35, f"the kubelet kills containers that fail their {probe} probe"
        else:
            weight = 0.3 if event.count >= 5 else 0.15
            note = f"{probe} probe failed {event.count} times"
            if (status := _STATUS.search(message)) is not None:
                weight += 0.2
                note += f" with HTTP {status.group(1)}"
        candidate(ref).clues.append(Clue(weight, note, (message[:60], event.reason),
                                         event.source, EVENT_TOOLS,
                                         f"probe-{event.reason}-{probe}"))
    for pod in facts.pods.values():
        ref = pod_workload(facts, pod)
        if ref is None or ref not in found:
            continue
        kills = sum(e.count for e in pod.events if e.reason == "Killing")
        if kills and "Liveness" in kinds.get(ref, set()):
            found[ref].clues.append(Clue(0.2, f"the kubelet killed its container {kills} times",
                                         (f"Killing ×{kills}", "Killing"), pod.described,
                                         (DESCRIBE,), "probe-killing"))
        for container in pod.containers:
            if container.running_since and container.ready is False:
                found[ref].clues.append(Clue(0.2, f"container {container.name} runs but is not "
                                             "Ready", ("ready: false",), pod.described,
                                             (DESCRIBE,), "not-ready"))
            if container.last_exit in (137, 143) and container.last_reason != "OOMKilled":
                found[ref].clues.append(Clue(
                    0.25, f"container {container.name} was killed (exit {container.last_exit}), "
                    "not by OOM", (f"exit_code: {container.last_exit}",), pod.described,
                    (DESCRIBE,), "probe-kill"))
                if (clue := _killed_on_time(pod, container)) is not None:
                    found[ref].clues.append(clue)
            for kind, text in container.probes.items():
                found[ref].clues.append(Clue(0.05, f"{kind} probe {text}",
                                             (f"{kind}_probe: {text}"[:60],), pod.described,
                                             (DESCRIBE,), f"probe-spec-{kind}"))
    for ref, entry in found.items():
        rollout = facts.rollout_of(ref)
        if rollout is not None:
            changed = [c for c in rollout.changes if " probe " in f" {c} "]
            if changed:
                entry.clues.append(Clue(0.35, f"the latest revision changed it: {changed[0]}",
                                        (changed[0][:60],), rollout.source, (ROLLOUT,),
                                        "probe-change"))
        which = " and ".join(sorted(kinds.get(ref, {"readiness"}))).lower()
        entry.fix = (f"Fix the {which} probe of {ref.kind} {ref.namespace}/{ref.name}: point it "
                     "at the path and port the application serves, and give it an initial delay "
                     "(or a startupProbe) longer than the start-up time.")
        entry.followups.append(Followup(DESCRIBE, {"namespace": ref.namespace, "pod": ref.name},
                                        f"compare {ref.name}'s probes with its ports"))
        entry.followups.append(Followup(ROLLOUT, {"namespace": ref.namespace,
                                                  "workload": ref.name},
                                        f"see whether {ref.name}'s probes changed"))
        entry.followups.append(Followup(POD_LOGS, {"namespace": ref.namespace, "pod": ref.name},
                                        f"see whether {ref.name} serves at all"))
    return [c for c in found.values() if c.clues]
