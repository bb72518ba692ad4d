"""resource_exhaustion: the application runs out of an inner resource: connection pool, file
descriptors, threads, disk space.

Signals: the words applications use when that happens, in the exhausted workload's own
logs, weighed by level, volume and timing (a pool warning that was always there is noise).
"""

from __future__ import annotations

from engines.analyzer.candidates import Candidate, Clue, Followup
from engines.analyzer.detectors._common import LOG_TOOLS, POD_LOGS, SIGNALS
from engines.analyzer.detectors._logs import by_workload, sightings
from engines.analyzer.facts import Facts
from engines.analyzer.scope import Scope

KINDS: dict[str, tuple[str, ...]] = {
    "file descriptors": ("too many open files", "emfile", "out of file descriptors",
                         "file descriptor limit"),
    "connection pool": ("pool exhausted", "connection pool exhausted", "pool is exhausted",
                        "timeout waiting for connection from pool",
                        "connection is not available, request timed out",
                        "unable to acquire connection", "could not acquire connection",
                        "no available connection", "cannot get a connection", "pool timeout",
                        "pool limit", "max pool size", "too many connections",
                        "remaining connection slots", "sorry, too many clients",
                        "queuepool limit", "waiting for a connection"),
    "threads": ("unable to create native thread", "unable to create new native thread",
                "rejectedexecutionexception", "thread pool exhausted", "thread pool is full",
                "can't start new thread", "resource temporarily unavailable", "pthread_create"),
    "disk space": ("no space left on device", "enospc", "disk full", "disk quota exceeded",
                   "not enough space", "insufficient disk space", "filesystem is full"),
    "queue capacity": ("queue is full", "queue full", "buffer full", "backlog full"),
}
PHRASES = tuple(p for phrases in KINDS.values() for p in phrases)


def _kind(text: str) -> str:
    low = text.lower()
    return next((k for k, phrases in KINDS.items() if any(p in low for p in phrases)),
                "an inner resource")


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    found = []
    for ref, seen in by_workload(sightings(facts, scope, PHRASES)).items():
        entry = Candidate("resource_exhaustion", ref)
        kind = _kind(seen[0].pattern.text)
        for sighting in seen[:3]:
            count = sighting.pattern.count
            weight = (0.6 if count >= 10 or sighting.pattern.previous else 0.35) * sighting.factor
            entry.clues.append(Clue(weight, f"{ref.name} logs {sighting.quote[:90]!r}"
                                    + (f" ×{count}" if count > 1 else ""),
                                    (sighting.quote, sighting.phrase), sighting.pattern.source,
                                    LOG_TOOLS, f"exhausted-{_kind(sighting.pattern.text)}"))
            if sighting.why:
                entry.demote(0.85, sighting.why)
        signals = facts.signals_of(ref)
        if signals is not None:
            for name in ("requests", "latency"):
                if signals.get(name).get("abnormal"):
                    entry.clues.append(Clue(0.15, str(signals.get(name).get("why")),
                                            ("rose from", "5xx ratio"), signals.source,
                                            (SIGNALS,), f"exhausted-{name}"))
        entry.fix = (f"{ref.kind} {ref.namespace}/{ref.name} runs out of {kind}: raise that limit "
                     "(pool size, ulimit, thread cap, volume size) and fix what holds the "
                     "resource (leaked connections or files, unbounded work, old data).")
        entry.followups.append(Followup(POD_LOGS, {"namespace": ref.namespace, "pod": ref.name},
                                        f"read {ref.name}'s own log around the exhaustion"))
        found.append(entry)
    return found
