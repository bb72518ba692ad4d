"""Scheduled jobs whose run hangs.

A CronJob's run that never ends fails nothing: no pod crashes, no event is a warning. With
`concurrencyPolicy: Forbid` every later run is skipped while it lasts, so what the job
feeds (imports, reports, reconciliations) goes stale and its consumers report "nothing to
do". k8s_list_workloads says when a run has lasted far longer than the CronJob's runs do;
a run that hangs waits on something, most often a dependency that accepts the connection
and never answers, which the run's own log names.
"""

from __future__ import annotations

import re

from engines.analyzer.candidates import Candidate, Clue
from engines.analyzer.detectors._common import (
    EVENT_TOOLS,
    POD_LOGS,
    WORKLOADS,
    recent_events,
)
from engines.analyzer.facts import Facts, LogPattern
from engines.analyzer.scope import Scope

_HUNG = re.compile(r"^Job (\S+) has been running for (\S+)")


def _last_words(facts: Facts, namespace: str, job: str) -> LogPattern | None:
    """The last line the hung run's own log shows (what it was doing when it stopped)."""
    said = [p for p in facts.patterns if p.source is not None and p.source.tool == POD_LOGS
            and p.source.arguments.get("namespace") == namespace
            and str(p.source.arguments.get("pod") or "").startswith(job)]
    return said[-1] if said else None


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    found = []
    for ref, workload in facts.workloads.items():
        if ref.kind != "CronJob":
            continue
        hung = next(((m, p) for p in workload.problems if (m := _HUNG.match(p))), None)
        if hung is None:
            continue
        match, problem = hung
        entry = Candidate("dependency_failure", ref)
        entry.clues.append(Clue(0.45, f"CronJob {ref.name}: {problem}", (match.group(1),),
                                workload.source, (WORKLOADS,), "batch-hung"))
        skipped = [e for e in recent_events(facts) if e.reason == "JobAlreadyActive"
                   and e.namespace == ref.namespace and e.name == ref.name]
        if skipped:
            entry.clues.append(Clue(0.2, f"{skipped[0].count} runs skipped: "
                                    f"{skipped[0].message[:90]!r}", (skipped[0].reason,),
                                    skipped[0].source, EVENT_TOOLS, "batch-skipped"))
        if (last := _last_words(facts, ref.namespace, match.group(1))) is not None:
            quote = (last.example or last.template)[-90:]
            entry.clues.append(Clue(0.2, f"the run's last line: {quote!r}", (quote[-40:],),
                                    last.source, (POD_LOGS,), "batch-last-words"))
        entry.follow(POD_LOGS, {"namespace": ref.namespace, "pod": match.group(1)},
                     f"see what the hung run of {ref.name} waits on")
        entry.fix = (f"Delete the hung Job {match.group(1)} of CronJob {ref.namespace}/"
                     f"{ref.name} so its runs resume, find what its run waits on (its log), and "
                     "give the job connect and read timeouts and the CronJob an "
                     "activeDeadlineSeconds, so one stuck run cannot hold back the rest.")
        found.append(entry)
    return found
