"""crash_loop: a container (or init container) that exits at start for an application
reason: bad config, a missing variable or key, a bad command, a failed migration.

Signals: CrashLoopBackOff, a last termination "Error" with a non-zero exit code that is not
a kill (137 OOM or probe, 143 SIGTERM), a short life between start and exit, BackOff events,
failed Jobs, and the dying container's own last words (previous logs) naming the cause.
"""

from __future__ import annotations

import re

from engines.analyzer.candidates import Candidate, Clue, Followup
from engines.analyzer.detectors._common import (
    BATCH,
    DESCRIBE,
    EVENT_TOOLS,
    LOG_TOOLS,
    POD_LOGS,
    PODS,
    POLICIES,
    STALE_RUN,
    WORKLOADS,
    batch_owner,
    event_workload,
    is_recent,
    older_than,
    oom_job,
    pattern_workloads,
    phrase_in,
    pod_workload,
    snippet,
)
from engines.analyzer.detectors.dependency import LOCKS
from engines.analyzer.detectors.network import RESOLUTION
from engines.analyzer.facts import Container, Facts, LogPattern, Pod, Ref
from engines.analyzer.scope import Scope

CRASH_STATES = ("CrashLoopBackOff", "RunContainerError", "CreateContainerConfigError",
                "CreateContainerError")
KILLS = frozenset({137, 143})
CONFIG_FAILURES = (
    "missing required", "is required", "required environment", "not set", "must be set",
    "environment variable", "no such file or directory", "permission denied",
    "command not found", "exec format error", "executable file not found", "unknown flag",
    "invalid configuration", "invalid config", "config error", "configuration error",
    "failed to load config", "could not load config", "cannot parse", "failed to parse",
    "parse error", "yaml:", "keyerror", "undefined", "migration failed", "migration",
    "relation does not exist", "unknown column", "invalid value", "missing key",
    "key not found", "no such key", "no such table", "syntax error",
)
GENERIC_FAILURES = (
    "failed to start", "cannot start", "startup failed", "application run failed", "panic:",
    "fatal", "traceback", "exception in thread \"main\"", "exiting", "exited with",
    "does not exist", "not found",
)
START_FAILURES = CONFIG_FAILURES + GENERIC_FAILURES
DEPENDENCY_AT_START = ("connection refused", "timed out", "timeout", "no route to host",
                       "could not connect", "unable to connect", "no such host")


def _lifetime_seconds(container: Container) -> float | None:
    if container.last_started and container.last_finished:
        return (container.last_finished - container.last_started).total_seconds()
    return None


def _container_clues(pod: Pod, container: Container, now_recent: bool) -> list[Clue]:
    clues: list[Clue] = []
    where = "init container" if container.init else "container"
    killed = container.last_exit in KILLS and container.last_reason != "OOMKilled"
    if container.waiting in CRASH_STATES:
        said = container.waiting_message
        telling = bool(said) and "back-off" not in said.lower()
        clues.append(Clue(0.15 if killed else 0.45,
                          f"{where} {container.name} is in {container.waiting}"
                          + (f": {said[:120]}" if telling else ""),
                          (container.waiting,), pod.described, (DESCRIBE, PODS), "crash-state"))
        if telling:
            clues.append(Clue(0.25, said[:120], (said[:60],), pod.described, (DESCRIBE,),
                              "crash-message"))
    code = container.last_exit
    if code not in (None, 0) and code not in KILLS and container.last_reason != "OOMKilled":
        weight = 0.35 if now_recent else 0.1
        clues.append(Clue(weight, f"{where} {container.name} exited with code {code}",
                          (f"exit_code: {code}",), pod.described, (DESCRIBE,), "crash-exit"))
        lifetime = _lifetime_seconds(container)
        if lifetime is not None and lifetime <= 120 and container.restarts >= 2:
            clues.append(Clue(0.15, f"it lived only {int(lifetime)}s before exiting",
                              (f"exit_code: {code}",), pod.described, (DESCRIBE,), "short"))
        if container.last_message:
            clues.append(Clue(0.3, container.last_message[:120], (container.last_message[:60],),
                              pod.described, (DESCRIBE,), "crash-message"))
    return clues


def _killed_from_outside(facts: Facts) -> set[Ref]:
    """Workloads whose described containers were last stopped by a signal (137 without OOM,
    143): the kubelet or a human killed them, they did not crash on their own."""
    killed: set[Ref] = set()
    for pod in facts.pods.values():
        ref = pod_workload(facts, pod)
        codes = [c.last_exit for c in pod.containers if c.last_exit is not None]
        if ref is not None and codes and all(
                code in KILLS for code in codes) and not any(
                c.last_reason == "OOMKilled" for c in pod.containers):
            killed.add(ref)
    return killed


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    found: dict[Ref, Candidate] = {}

    def candidate(ref: Ref) -> Candidate:
        if ref not in found:
            found[ref] = Candidate("crash_loop", ref, fix=(
                f"Fix what {ref.name} needs at start (the configuration, variable, command or "
                f"migration its logs name), or roll {ref.kind} {ref.namespace}/{ref.name} back "
                "to the last revision that started."))
        return found[ref]

    killed = _killed_from_outside(facts)
    dying: dict[Ref, tuple[str, str]] = {}
    for pod in facts.pods.values():
        ref = pod_workload(facts, pod)
        if ref is None:
            continue
        for container in pod.containers:
            recent = is_recent(container.last_finished, facts.now) or bool(container.waiting)
            if clues := _container_clues(pod, container, recent):
                candidate(ref).clues.extend(clues)
                dying.setdefault(ref, (pod.name, container.name))
                said = container.waiting_message
                if said and "back-off" not in said.lower():
                    candidate(ref).fix = (
                        f"Give {ref.name} what it needs to start ({container.waiting}: "
                        f"{said[:140]}), then let the pods restart; or roll {ref.kind} "
                        f"{ref.namespace}/{ref.name} back to the last revision that started.")
        status = pod.status.removeprefix("Init:")
        if not pod.containers and (status in CRASH_STATES or status.startswith("Error")):
            candidate(ref).clues.append(Clue(0.4, f"pod {pod.name} is {pod.status}",
                                             (pod.status,), pod.source, (PODS,), "crash-row"))
    for ref, workload in facts.workloads.items():
        crashing = sum(n for s, n in workload.statuses.items()
                       if s.removeprefix("Init:") in CRASH_STATES)
        if crashing:
            oom_only = set(workload.exit_reasons) == {"OOMKilled"}
            weight = 0.15 if ref in killed or oom_only else 0.4
            states = [s for s in workload.statuses if s.removeprefix("Init:") in CRASH_STATES]
            candidate(ref).clues.append(Clue(
                weight, f"{crashing} pod(s) in {'/'.join(states)}", tuple(states),
                workload.source, (WORKLOADS,), "crash-rollup"))
        if ref.kind == "Job" and any("failed" in p for p in workload.problems):
            owner = batch_owner(facts, ref)
            old = older_than(workload, STALE_RUN)  # a past run, later ones may have passed
            if not oom_job(facts, ref):  # a Job whose pods were OOMKilled did not crash
                candidate(owner).clues.append(Clue(
                    0.1 if old else 0.35, f"Job {ref.name} has failed pods"
                    + (f" ({workload.age} ago)" if old else ""), ("failed",), workload.source,
                    (WORKLOADS,), "job"))
    for event in facts.events:
        if event.reason in ("BackOff", "BackoffLimitExceeded") and (
                "restarting failed container" in event.message
                or event.reason == "BackoffLimitExceeded"):
            ref = event_workload(facts, event)
            if ref is not None and ref in found and is_recent(event.last, facts.now):
                found[ref].clues.append(Clue(0.1, f"{event.reason} events ({event.count})",
                                             (event.message[:50], event.reason), event.source,
                                             EVENT_TOOLS, "backoff"))
    _log_clues(facts, found)
    for ref, entry in found.items():
        if ref.kind in BATCH and _recovered(facts, ref):
            entry.demote(0.3, "its failed run succeeded on a retry")
        pod_name, container_name = dying.get(ref, (ref.name, ""))
        # a Job's pods are not restarted in place: their current instance ended with them
        last_words = {"namespace": ref.namespace, "pod": pod_name,
                      "previous": ref.kind not in BATCH}
        if container_name:
            last_words["container"] = container_name
        entry.followups.append(Followup(POD_LOGS, last_words,
                                        f"read the last words of {ref.name}'s crashed container"))
        entry.followups.append(Followup(DESCRIBE, {"namespace": ref.namespace, "pod": ref.name},
                                        f"see how {ref.name}'s containers exit"))
    return [c for c in found.values() if c.clues]


def _recovered(facts: Facts, ref: Ref) -> bool:
    """Every recent run of this Job or CronJob that had failed pods completed in the end: a
    retry succeeded, nothing is left undone."""
    runs = [w for r, w in facts.workloads.items() if r.kind == "Job"
            and batch_owner(facts, r) == ref and any("failed" in p for p in w.problems)
            and not older_than(w, STALE_RUN)]
    return bool(runs) and all(w.desired and w.ready is not None and w.ready >= w.desired
                              for w in runs)


_QUIET = re.compile(r"^\W*(\S+\s+){0,3}\W*(INFO|DEBUG|TRACE|NOTICE)\b", re.IGNORECASE)


def _last_words(facts: Facts, found: dict[Ref, Candidate]) -> dict[Ref, LogPattern]:
    """Per crashing workload, the line that says why it died: the exception its previous
    instance raised, else its first error, else a line naming a start-up failure."""
    chosen: dict[Ref, tuple[int, LogPattern]] = {}
    for pattern in facts.patterns:
        owners = [r for r in pattern_workloads(pattern, facts)[:1] if r in found]
        if not owners:
            continue
        rank = {"exception": 0, "first_error": 2}.get(pattern.role, 4)
        if not pattern.previous:
            rank += 1
        if rank >= 4:
            if phrase_in(pattern.text, START_FAILURES) is None or _QUIET.search(pattern.text):
                continue
            rank -= 1 if phrase_in(pattern.text, CONFIG_FAILURES) else 0
        if pattern.role == "first_error" and pattern.text.strip().startswith("Traceback"):
            rank += 2  # the headline of a trace says nothing; the exception does
        best = chosen.get(owners[0])
        if best is None or (rank, -pattern.count) < (best[0], -best[1].count):
            chosen[owners[0]] = (rank, pattern)
    return {ref: pattern for ref, (_, pattern) in chosen.items()}


def _log_clues(facts: Facts, found: dict[Ref, Candidate]) -> None:
    """What the crashed container said before dying (previous logs weigh most). A container
    whose last words are only "cannot reach X" dies of a dependency, not of itself."""
    for ref, pattern in _last_words(facts, found).items():
        text = pattern.example or pattern.template
        weight = 0.4 if pattern.previous else 0.25 if pattern.count >= 5 else 0.15
        config = phrase_in(text, CONFIG_FAILURES) is not None
        unreachable = phrase_in(text, DEPENDENCY_AT_START) is not None and \
            phrase_in(text, LOCKS) is None  # a lock timeout is a database that answered
        if config:
            weight += 0.05
        phrase = phrase_in(text, START_FAILURES) or text.strip()[:40]
        quote = snippet(text, phrase, 140) if phrase in text.lower() or phrase in text else \
            text.strip()[:140]
        found[ref].clues.append(Clue(weight, f"its log says: {quote[:140]}", (quote, phrase),
                                     pattern.source, LOG_TOOLS, "crash-log"))
        if phrase_in(text, RESOLUTION) is not None:  # it dies failing to resolve a name
            found[ref].follow(POLICIES, {"namespace": ref.namespace},
                              f"rule out a NetworkPolicy that keeps {ref.name} from DNS")
        if unreachable and not config:
            found[ref].demote(0.5, "it dies because a dependency is unreachable")
            continue
        found[ref].fix = (f"Give {ref.name} what it needs at start (its log says: {quote[:140]}):"
                          " fix the configuration, variable, secret, command or migration, or "
                          f"roll {ref.kind} {ref.namespace}/{ref.name} back to the last revision "
                          "that started.")
