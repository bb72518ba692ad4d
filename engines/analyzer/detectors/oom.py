"""oom_killed: a container killed for exceeding its memory limit.

Signals: a container whose last (or current) termination reason is OOMKilled, exit code
137 together with memory at its limit, a memory series that climbs to the limit and drops
(the kill's saw-tooth), a Job that failed because its pods were OOMKilled (they do not
restart: the kills show as terminations, the failure on the Job, the fault on its CronJob),
and runtime "out of memory" errors (JVM heap, Node heap, Go runtime) in the logs. Old kills
(finished hours ago) count little: they are a past story.
"""

from __future__ import annotations

from engines.analyzer.candidates import Candidate, Clue
from engines.analyzer.detectors import _common as t
from engines.analyzer.facts import Container, Facts, Ref
from engines.analyzer.scope import Scope

HEAP_PHRASES = ("OutOfMemoryError: Java heap space", "java.lang.OutOfMemoryError",
                "JavaScript heap out of memory", "fatal error: runtime: out of memory",
                "MemoryError", "Cannot allocate memory", "out of memory")
NOT_HEAP = ("unable to create native thread", "unable to create new native thread",
            "Metaspace")


def _fix(ref: Ref, container: Container | None) -> str:
    limit = container.limits.get("memory") if container else None
    name = container.name if container else ref.name
    now = f" (now {limit})" if limit else ""
    return (f"Raise the memory limit of container {name} in {ref.kind} {ref.namespace}/"
            f"{ref.name}{now} above its peak working set, or roll back the release that "
            "made it use more memory and fix the leak.")


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    found: dict[Ref, Candidate] = {}

    def candidate(ref: Ref, container: Container | None = None) -> Candidate:
        if ref not in found:
            found[ref] = Candidate("oom_killed", ref, fix=_fix(ref, container))
        elif container is not None and "(now" not in found[ref].fix:
            found[ref].fix = _fix(ref, container)
        return found[ref]

    for ref, pod in t.owned_pods(facts):
        for container in pod.containers:
            killed = container.last_reason == "OOMKilled" or "OOMKilled" in container.terminated
            if not killed:
                continue
            recent = t.is_recent(container.last_finished, facts.now)
            entry = candidate(ref, container)
            entry.add(0.75 if recent else 0.3,
                      f"container {container.name} was OOMKilled (exit 137)"
                      + ("" if recent else ", but hours ago"), ("OOMKilled", "exit_code: 137"),
                      pod.described, (t.DESCRIBE,), "oom-state")
            if limit := container.limits.get("memory"):
                entry.add(0.05, f"memory limit {limit}",
                          (f"limits: … memory: {limit}", f"memory: {limit}"), pod.described,
                          (t.DESCRIBE,), "limit")
        if pod.last_exit.startswith("OOMKilled") and not pod.containers:
            candidate(ref).add(0.5, f"pod {pod.name} last exited OOMKilled",
                               (pod.last_exit, "OOMKilled"), pod.source, (t.PODS,), "oom-row")
    for ref, workload in facts.workloads.items():
        kills = workload.exit_reasons.get("OOMKilled", 0)
        if kills and (workload.restarts or ref.kind in t.BATCH):  # a Job's pods do not restart
            weight = 0.45 if workload.unhealthy_pods else 0.15
            entry = candidate(ref)
            entry.add(weight, f"{kills} pod(s) last exited OOMKilled"
                      + (f", {workload.restarts} restarts" if workload.restarts else ""),
                      ("last_exit_reasons: {OOMKilled", "OOMKilled"), workload.source,
                      (t.WORKLOADS,), "oom-rollup")
    for ref, workload in facts.workloads.items():
        failed = [p for p in workload.problems if "failed" in p.lower()]
        if ref.kind == "Job" and failed and t.oom_job(facts, ref):
            candidate(t.batch_owner(facts, ref)).clues.append(Clue(
                0.1 if t.older_than(workload, t.STALE_RUN) else 0.3,
                f"Job {ref.name} failed: {failed[0][:100]}", (failed[0][:60], ref.name),
                workload.source, (t.WORKLOADS,), "oom-job"))
    for ref, signals in facts.signals.items():
        memory = signals.get("memory")
        rows = [r for r in memory.get("containers") or [] if isinstance(r, dict)]
        ratio = max((float(r.get("peak_ratio") or 0) for r in rows), default=0.0)
        drops = sum(int(r.get("drops_near_limit") or 0) for r in rows)
        if memory.get("abnormal") and (ratio >= 0.9 or drops):
            weight = 0.35 + (0.15 if drops else 0.0)
            if ref in found or drops >= 2:
                candidate(ref).add(weight, str(memory.get("why") or "memory at its limit"),
                                   ("peaked at", "sharp drops"), signals.source, (t.SIGNALS,),
                                   "memory")
    for pattern in facts.patterns:
        phrase = t.phrase_in(pattern.text, HEAP_PHRASES)
        if phrase is None or t.phrase_in(pattern.text, NOT_HEAP):
            continue
        for ref in t.pattern_workloads(pattern, facts)[:1]:
            candidate(ref).add(0.55 if pattern.previous else 0.4 if pattern.count >= 3 else 0.25,
                               f"logs say {phrase!r}", (phrase,), pattern.source, t.LOG_TOOLS,
                               "heap")
    for ref, entry in found.items():
        entry.follow(t.DESCRIBE, ref.pod_args, f"see the last state and memory limit of {ref.name}")
        entry.follow(t.SIGNALS, ref.workload_args, f"compare {ref.name}'s memory with its limit")
        entry.follow(t.POD_LOGS, {"namespace": ref.namespace, "pod": ref.name, "previous": True},
                     f"read what {ref.name} printed before it was killed")
    return [c for c in found.values() if c.clues]
