"""probe_failure: a readiness or liveness probe fails (wrong path or port, too short a
start-up delay), so pods are never Ready or are killed and restarted by the kubelet.

Signals: Unhealthy events (probe failed, with an HTTP status or a refused connection; or
probe errored: an exec probe whose command the image lacks, which no fix of the
application's health can cure),
Killing events "failed liveness probe, will be restarted", containers Running but not
Ready, kills with exit 137/143 that are not OOM, and a probe that changed in the latest
revision. A 4xx answer says the probe asks the wrong path (401 or 403: a path that now
asks for credentials); a 5xx answer is the application
saying it is unwell, which is only the probe's fault when nothing else is wrong with it.
Probe failures that only follow another death (OOM kills, crashes at start) are symptoms;
the ranking demotes them against those causes. Failures that came only while pods started
(a rolling update's pods warming up) and stopped, with every pod Ready since and none
restarted, explain nothing that is still going on.
"""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime, timedelta

from engines.analyzer.candidates import Candidate, Clue
from engines.analyzer.detectors import _common as t
from engines.analyzer.facts import Container, Facts, LogPattern, Pod, Ref
from engines.analyzer.scope import Scope

_STATUS = re.compile(r"status ?code:? ?(\d{3})", re.IGNORECASE)


_TIMING = re.compile(r"delay=(\d+)s.*period=(\d+)s.*failure=(\d+)")
# Last words of a container that was stopped from outside, not one that crashed: with its
# liveness probe failing, the kubelet is what stops it.
STOPPED = ("sigterm", "signal terminated", "received terminated", "signal 15",
           "shutting down gracefully", "graceful shutdown", "gracefully shutting down")
SETTLED = timedelta(minutes=15)  # probe failures this old, all pods Ready since: over
STARTUP = timedelta(minutes=3)  # failures this soon after a container started: warming up


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
                (t.DESCRIBE,), "probe-deadline")


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    found: dict[Ref, Candidate] = {}
    kinds: dict[Ref, set[str]] = {}
    seen: dict[Ref, list[datetime]] = {}
    answers: dict[Ref, set[str]] = {}

    def candidate(ref: Ref) -> Candidate:
        return found.setdefault(ref, Candidate("probe_failure", ref))

    for event in t.recent_events(facts):
        message = event.message
        probe = next((k for k in ("Liveness", "Readiness", "Startup")
                      if f"{k} probe failed" in message or f"failed {k.lower()} probe" in message
                      or f"{k} probe errored" in message), None)
        if probe is None:
            continue
        if (ref := t.event_workload(facts, event)) is None:
            continue
        kinds.setdefault(ref, set()).add(probe)
        if event.reason == "Killing" and not message:
            continue
        if event.last is not None:
            seen.setdefault(ref, []).append(event.last)
        if event.reason == "Killing":
            weight, note = 0.35, f"the kubelet kills containers that fail their {probe} probe"
        else:
            weight = 0.3 if event.count >= 5 else 0.15
            note = f"{probe} probe failed {event.count} times"
            if (status := _STATUS.search(message)) is not None:
                code = status.group(1)
                answers.setdefault(ref, set()).add(code[0])
                if code in ("401", "403"):
                    answers[ref].add("auth")
                weight += 0.05 if code.startswith("5") else 0.2
                note += f" with HTTP {code}"
            elif f"{probe} probe errored" in message:
                weight += 0.2
                note += ": the probe itself cannot run in the container"
        candidate(ref).add(weight, note, (message[:60], event.reason), event.source, t.EVENT_TOOLS,
                           f"probe-{event.reason}-{probe}")
    for ref, pod in t.owned_pods(facts):
        if ref not in found:
            continue
        kills = sum(e.count for e in pod.events if e.reason == "Killing")
        if kills and "Liveness" in kinds.get(ref, set()):
            found[ref].add(0.2, f"the kubelet killed its container {kills} times",
                           (f"Killing ×{kills}", "Killing"), pod.described, (t.DESCRIBE,),
                           "probe-killing")
        for container in pod.containers:
            if container.running_since and container.ready is False:
                found[ref].add(0.2, f"container {container.name} runs but is not Ready",
                               ("ready: false",), pod.described, (t.DESCRIBE,), "not-ready")
            if container.last_exit in (137, 143) and container.last_reason != "OOMKilled":
                found[ref].clues.append(Clue(
                    0.25, f"container {container.name} was killed (exit {container.last_exit}), "
                    "not by OOM", (f"exit_code: {container.last_exit}",), pod.described,
                    (t.DESCRIBE,), "probe-kill"))
                if (clue := _killed_on_time(pod, container)) is not None:
                    found[ref].clues.append(clue)
            for kind, text in container.probes.items():
                found[ref].add(0.05, f"{kind} probe {text}", (f"{kind}_probe: {text}"[:60],),
                               pod.described, (t.DESCRIBE,), f"probe-spec-{kind}")
    _stopped_from_outside(facts, found, kinds)
    for ref, entry in found.items():
        if (why := _over(facts, ref, seen.get(ref, []))) is not None:
            _weaken(entry, 0.3, why)
        elif answers.get(ref) == {"5"} and (error := _own_error(facts, ref)) is not None:
            _weaken(entry, 0.6, f"the probe only relays the application's own errors "
                    f"({error.template[:60]})")
        rollout = facts.rollout_of(ref)
        changed = [c for c in rollout.changes if " probe " in f" {c} "] if rollout else []
        if rollout is not None and changed:
            entry.add(0.35, f"the latest revision changed it: {changed[0]}", (changed[0][:60],),
                      rollout.source, (t.ROLLOUT,), "probe-change")
        which = " and ".join(sorted(kinds.get(ref, {"readiness"}))).lower()
        entry.fix = (f"Fix the {which} probe of {ref.kind} {ref.namespace}/{ref.name}: " + (
            "its path now asks for credentials; exempt it from the authentication (or point "
            "the probe at an unauthenticated health endpoint)." if "auth" in answers.get(ref, ())
            else "point it at the path and port the application serves, and give it an initial "
            "delay (or a startupProbe) longer than the start-up time."))
        entry.follow(t.DESCRIBE, ref.pod_args, f"compare {ref.name}'s probes with its ports")
        entry.follow(t.ROLLOUT, ref.workload_args, f"see whether {ref.name}'s probes changed")
        entry.follow(t.POD_LOGS, ref.pod_args, f"see whether {ref.name} serves at all")
    return [c for c in found.values() if c.clues]


def _stopped_from_outside(facts: Facts, found: dict[Ref, Candidate],
                          kinds: dict[Ref, set[str]]) -> None:
    """A container whose previous instance ended on a termination signal while its liveness
    probe fails was killed by the kubelet, whatever exit code its shutdown chose."""
    for pattern in facts.patterns:
        if not pattern.previous or (phrase := t.phrase_in(pattern.text, STOPPED)) is None:
            continue
        owner = next(iter(t.pattern_workloads(pattern, facts)), None)
        if owner in found and "Liveness" in kinds.get(owner, set()):
            quote = t.snippet(pattern.example or pattern.template, phrase)
            found[owner].add(0.25, f"its last words are a shutdown on a signal ({quote[:60]}): "
                             "the kubelet stopped it, it did not crash", (quote, phrase),
                             pattern.source, t.LOG_TOOLS, "probe-sigterm")


def _over(facts: Facts, ref: Ref, times: list[datetime]) -> str | None:
    """Why the probe failures are over, if they are: every pod is Ready now and none
    restarted, and the failures stopped a while ago or came only while pods started."""
    workload = facts.workloads.get(ref)
    if workload is None or not workload.desired or workload.ready != workload.desired or \
            workload.restarts or workload.unhealthy_pods:
        return None
    if times and facts.now - max(times) >= SETTLED:
        minutes = int((facts.now - max(times)).total_seconds() // 60)
        return f"they stopped {minutes}m ago and every pod has been Ready since"
    pods = [p for p in facts.pods.values() if t.pod_workload(facts, p) == ref and p.described]
    warming = [_while_starting(p) for p in pods]
    if warming and all(w is not False for w in warming) and any(warming):
        return "they came only while the pods were starting, and every pod is Ready now"
    return None


def _while_starting(pod: Pod) -> bool | None:
    """Whether the pod's probe failures all came within its containers' start-up (None when
    it has none)."""
    started = [c.running_since for c in pod.containers if c.running_since and c.ready]
    if not (failures := [e.last for e in pod.events if e.reason == "Unhealthy" and e.last]):
        return None
    return bool(started) and max(failures) <= max(started) + STARTUP


def _own_error(facts: Facts, ref: Ref) -> LogPattern | None:
    """A recent error the workload logs about its own work (not about its probes)."""
    for pattern in facts.patterns:
        if pattern.count < 3 or t.level_of(pattern) not in t.ERRORS \
                or (pattern.last is not None and facts.now - pattern.last > SETTLED):
            continue
        if t.phrase_in(pattern.text, ("probe", "health", "readiness", "liveness")):
            continue
        if ref in t.pattern_workloads(pattern, facts)[:1]:
            return pattern
    return None


def _weaken(entry: Candidate, factor: float, why: str) -> None:
    """Scale the probe-failure evidence itself (not the probe's spec), and say why."""
    entry.clues = [replace(c, weight=c.weight * factor)
                   if c.topic.startswith(("probe-Unhealthy", "probe-Killing", "not-ready"))
                   else c for c in entry.clues]
    entry.demoted_because.append(why)
