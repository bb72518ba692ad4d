"""What to read next: survey the cluster, focus on what the report names, then follow the
evidence of the leading candidates, and stop as soon as one cause is well explained.

Pure: a plan is computed from the facts, the scope, the ranked candidates and what was
already called, so the same transcript always gives the same next step. Every call goes
through `Toolbox.call`, which keeps only tools that are offered, only arguments their
schema knows, never an excluded namespace, and never a call already made.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engines.analyzer.candidates import Candidate, Followup
from engines.analyzer.detectors import _common as t
from engines.analyzer.detectors import evidence, kernel
from engines.analyzer.detectors._common import ERRORS, level_of, pattern_workloads
from engines.analyzer.detectors._logs import sightings
from engines.analyzer.detectors._targets import callers_by_callee, hosts_in, resolve
from engines.analyzer.detectors.dependency import CONNECT
from engines.analyzer.detectors.network import DNS
from engines.analyzer.facts import ROLLING, Facts, Ref
from engines.analyzer.scope import Scope
from engines.analyzer.transcript import Transcript
from engines.model import ToolSpec
from engines.short_catalog import LIST_TOOLS
from tools.compress import LIST_NOTE

MAX_CALLS = 12
WINDOW_ARGUMENTS = frozenset({"since", "start", "end", "limit", "tail"})
SWEEP = 6
WEAK = 0.3  # a leader this weak explains nothing yet
PODS_READ = 4  # pods of one workload whose own logs are read while the log store is down
CPU_USAGE = "container_cpu_usage_seconds_total"
HUNGRY_CORES = 0.5  # a pod using this much CPU on average is worth a look when others slow


@dataclass(slots=True)
class Toolbox:
    """The offered tools and the calls this step will make. A tool an outage note reported
    down (its source stayed unreachable) is not called again in this investigation."""

    specs: Mapping[str, ToolSpec]
    transcript: Transcript
    excluded: frozenset[str]
    calls: list[tuple[str, dict[str, Any], str]] = field(default_factory=list)

    def offers(self, name: str) -> bool:
        return name in self.specs and not self.down(name)

    def down(self, name: str) -> bool:
        return any(name in outage.down for outage in self.transcript.outages)

    def instead(self, name: str) -> frozenset[str]:
        """The tools the outage notes name as reading what `name`'s source holds."""
        return frozenset(s.tool for o in self.transcript.outages if name in o.down
                         for s in o.suggestions)

    def asked(self, name: str, arguments: Mapping[str, Any]) -> bool:
        """Whether this question (tool and identity arguments) was already asked."""
        wanted = _identity(arguments)
        return any(name == n and _identity(a) == wanted for n, a in self.transcript.calls_made)

    def open_followups(self, candidate: Candidate) -> bool:
        """Whether the candidate asks for a call that is offered and was not asked yet."""
        return any(self.offers(f.tool) and not self.asked(f.tool, f.arguments)
                   for f in candidate.followups)

    def call(self, name: str, arguments: Mapping[str, Any], why: str = "") -> bool:
        """Queue a call if it is allowed and new; True when queued."""
        spec = self.specs.get(name)
        if spec is None or len(self.calls) >= MAX_CALLS or self.down(name):
            return False
        known = set((spec.parameters or {}).get("properties") or {})
        args = {k: v for k, v in arguments.items() if k in known and v is not None}
        if any(k not in args for k in (spec.parameters or {}).get("required") or []):
            return False
        if str(args.get("namespace") or "") in self.excluded:
            return False
        if self.asked(name, args) or any(
                name == n and _identity(args) == _identity(a) for n, a, _ in self.calls):
            return False  # the same question, perhaps over another window: asked already
        self.calls.append((name, args, why))
        return True


def _identity(arguments: Mapping[str, Any]) -> dict[str, Any]:
    """What a call asks, without its window and size: same identity, same answer."""
    return {k: v for k, v in arguments.items() if k not in WINDOW_ARGUMENTS}


def survey(box: Toolbox) -> None:
    """Step one: the whole cluster at a glance, so the report's words can be matched."""
    box.call(t.WORKLOADS, {"limit": 100}, "list every workload with its health")
    box.call(t.EVENTS, {"type": "Warning", "limit": 40}, "read recent warning events")
    box.call(t.NODES, {"problems_only": True}, "check for node problems")
    box.call(t.LOG_PATTERNS, {"since": "1h", "limit": 15}, "see which errors are logged")
    box.call(LIST_TOOLS, {}, "see which other tools there are")  # offered: a short catalog


_NAMED = re.compile(r"(?<![\w./-])[a-z][a-z0-9]*(?:-[a-z0-9]+)+(?![\w/-])")
LOOKUPS = 2  # names the report says that a cut listing may have left out


def unlisted(box: Toolbox, facts: Facts, report: str) -> list[str]:
    """When the cluster-wide workload listing was cut to fit the observation budget, the
    names the report says that it did not show (hyphenated, as workloads are named):
    looked up one by one, so the report's own workloads are not lost to the cut."""
    listings = [o for o in facts.observations if o.tool == t.WORKLOADS and o.ok
                and not o.arguments.get("name") and LIST_NOTE in o.content]
    if not listings:
        return []
    known = {r.name for r in facts.workloads} | {n for _, n in facts.services} | set(
        facts.namespaces_seen)
    said = [w for w in dict.fromkeys(_NAMED.findall(report.lower())) if w not in known]
    looked_up = []
    for name in said[:LOOKUPS]:
        if box.call(t.WORKLOADS, {"name": name}, f"look up {name}, which the report names"):
            looked_up.append(name)
    return looked_up


def focus_targets(facts: Facts, scope: Scope, ranked: Sequence[Candidate]) -> list[Ref]:
    """The workloads to look at closely: named ones, else the sickest, plus the leader."""
    chosen: list[Ref] = [r for r in scope.primary if r in facts.workloads][:2]
    if not chosen:
        degraded = [ref for ref, signals in sorted(facts.signals.items(), key=lambda kv: str(
            kv[0])) if {"requests", "latency"} & set(signals.abnormal)]
        sick = sorted((w for w in facts.workloads.values() if w.problems and (
            not scope.namespaces or w.ref.namespace in scope.namespaces)),
            key=lambda w: (-w.unhealthy_pods, -w.restarts, str(w.ref)))
        chosen = list(dict.fromkeys([*degraded[:2], *(w.ref for w in sick)]))[:2]
    if not chosen:  # nothing named, degraded or sick: who logs the most errors
        chosen = _erring(facts, scope)[:1]
    for candidate in ranked[:2]:
        ref = candidate.culprit
        if ref.kind in (*ROLLING, *t.BATCH) and ref not in chosen and len(chosen) < 3 \
                and candidate.score >= 0.3:
            chosen.append(ref)
    return chosen


def _erring(facts: Facts, scope: Scope) -> list[Ref]:
    """Workloads by how many error lines they logged (in the report's namespaces if any)."""
    counts: dict[Ref, int] = {}
    for pattern in facts.patterns:
        if level_of(pattern) not in ERRORS:
            continue
        for ref in pattern_workloads(pattern, facts)[:1]:
            if ref.kind in ROLLING and (not scope.namespaces or ref.namespace in scope.namespaces):
                counts[ref] = counts.get(ref, 0) + pattern.count
    return sorted(counts, key=lambda r: (-counts[r], str(r)))


def metrics(box: Toolbox, ref: Ref) -> bool:
    """Queue a read of the workload's metrics over the last three hours."""
    return box.call(t.SIGNALS, {**ref.workload_args, "since": "3h"}, f"read {ref.name}'s metrics")


def sweep(box: Toolbox, facts: Facts, scope: Scope, ranked: Sequence[Candidate]) -> bool:
    """A report that names nothing ("the site is slow") and no lead yet: read the metrics of
    the application workloads, the way an SRE scans dashboards for the one that changed."""
    if scope.workloads or (ranked and ranked[0].score >= 0.5):
        return False
    apps = sorted((w for w in facts.workloads.values() if w.ref.kind in ROLLING
                   and not w.ref.namespace.startswith("kube-")),
                  key=lambda w: (-w.unhealthy_pods, -w.restarts, str(w.ref)))
    return any([metrics(box, workload.ref) for workload in apps[:SWEEP]])  # a list: queue all


def neighbours(box: Toolbox, facts: Facts, scope: Scope, ranked: Sequence[Candidate]) -> None:
    """The workloads the report names look fine and no cause stands out: read the metrics of
    the other workloads of the report's namespaces (the named one may only be a suspect)."""
    if (ranked and ranked[0].score >= WEAK) or not scope.namespaces:
        return
    read = set(facts.signals)
    others = sorted((w.ref for w in facts.workloads.values() if w.ref.kind in ROLLING
                     and w.ref.namespace in scope.namespaces and w.ref not in read),
                    key=lambda r: (-scope.weight(r.namespace, r.name), str(r)))
    for ref in others[:SWEEP]:
        metrics(box, ref)


def focus(box: Toolbox, facts: Facts, targets: Sequence[Ref]) -> None:
    """Step two: each target in depth, and its namespace's logs (the pods' own when the log
    store is down), services and limits."""
    for ref in targets:
        if ref.kind in (*ROLLING, *t.BATCH):
            box.call(t.DESCRIBE, ref.pod_args, f"describe a pod of {ref.name}")
        if ref.kind in ROLLING:
            box.call(t.ROLLOUT, ref.workload_args, f"what changed in {ref.name}")
            metrics(box, ref)
    for ns in dict.fromkeys(ref.namespace for ref in targets):
        box.call(t.LOG_PATTERNS, {"namespace": ns, "since": "1h", "limit": 12},
                 f"errors logged in {ns}")
        box.call(t.SERVICES, {"namespace": ns}, f"services and endpoints in {ns}")
        box.call(t.AUTOSCALERS, {"namespace": ns}, f"autoscalers in {ns}")
        short = [w for w in facts.workloads.values() if w.ref.namespace == ns
                 and w.desired and w.ready is not None and w.ready < w.desired]
        if short:
            box.call(t.QUOTAS, {"namespace": ns}, f"quotas in {ns}")
    pod_logs_instead(box, facts, targets)


def suggested(box: Toolbox) -> None:
    """Follow the outage notes: every call they suggest that has all the arguments it needs
    (a down source's question asked of another source)."""
    for outage in box.transcript.outages:
        for suggestion in outage.suggestions:
            if not suggestion.missing:
                box.call(suggestion.tool, suggestion.arguments,
                         f"read with {suggestion.tool} what a source that is down holds")


def pod_logs_instead(box: Toolbox, facts: Facts, targets: Sequence[Ref]) -> None:
    """The log store is down and its outage note suggests the pods' own logs: read those of
    each target's pods, as one would run `kubectl logs` pod by pod (the store's patterns
    covered every pod at once; the least healthy pod's log may say nothing). The least
    healthy one is read at once; the others once known, from the pods the workload's
    metrics saw or, without metrics, from listing the namespace's pods."""
    if t.POD_LOGS not in box.instead(t.LOG_PATTERNS):
        return
    for ref in targets:
        if ref.kind not in (*ROLLING, *t.BATCH):
            continue
        ns = ref.namespace
        box.call(t.POD_LOGS, {"namespace": ns, "pod": ref.name},
                 f"read {ref.name}'s own log, the log store being down")
        known = {p.name: p for p in facts.pods.values() if p.namespace == ns
                 and facts.workload_of_pod(ns, p.name) == ref}
        signals = facts.signals_of(ref)
        seen = signals.source.data.get("pods_seen") if signals and signals.source else None
        names = list(dict.fromkeys([*known, *(str(n) for n in seen or ())]))
        if not names and not box.offers(t.SIGNALS):
            box.call(t.PODS, {"namespace": ns}, f"list the pods of {ref.name}")
        names.sort(key=lambda n: (-(known[n].restarts if n in known else 0), n))
        for name in names[:PODS_READ]:
            box.call(t.POD_LOGS, {"namespace": ns, "pod": name},
                     f"read {name}'s own log, the log store being down")


def _logged(facts: Facts, ref: Ref, *, errors_only: bool = False) -> bool:
    """Whether a log line read so far is the workload's own (an error, with `errors_only`:
    a server that only warns of its trouble says so in lines the error survey ranks low)."""
    return any(ref in pattern_workloads(p, facts)[:1] for p in facts.patterns
               if not errors_only or level_of(p) in ERRORS)


def hints(box: Toolbox, facts: Facts, scope: Scope, targets: Sequence[Ref],
          ranked: Sequence[Candidate] = ()) -> None:
    """Checks that no single candidate asks for, but that the facts call for: the named
    workload's own log when the log store says nothing about it, what changed in the
    workloads it calls (and their own logs when the log store is down), network policies
    where calls fail, what runs on a sick node, the metrics of the report's other workloads
    when no lead stands out, who else uses the nodes' CPU when a workload slows unthrottled
    (and what changed in the hungriest), the evidence tools that would explain a lead's
    state (detectors/evidence.py), the events of pods that stay Pending."""
    for ref in targets[:2]:
        if not _logged(facts, ref) and ref.kind in ROLLING:
            box.call(t.POD_LOGS, ref.pod_args, f"read {ref.name}'s own log")
    callees = _callees(facts, targets[:2])[:2]
    for callee in callees:  # one hop down the call chain
        box.call(t.ROLLOUT, callee.workload_args,
                 f"what changed in {callee.name}, which {targets[0].name} calls")
        metrics(box, callee)
        if not _logged(facts, callee, errors_only=True) and callee.kind in ROLLING:
            box.call(t.POD_LOGS, callee.pod_args, f"read {callee.name}'s own log, "
                     f"which {targets[0].name} calls")
    pod_logs_instead(box, facts, callees)  # the log store would have shown theirs too
    namespaces = {r.namespace for r in targets} | set(scope.namespaces)
    troubled: set[str] = set()
    for seen in sightings(facts, scope, CONNECT + DNS):
        if seen.factor < 0.3:
            continue
        ends = {seen.workload.namespace}
        for host, port in hosts_in(f"{seen.pattern.example} {seen.pattern.template}"):
            target = resolve(host, port, seen.workload.namespace, facts)
            if target.in_cluster and target.namespace in facts.namespaces_seen:
                ends.add(target.namespace)
        if ends & namespaces:  # calls from or into the namespaces in focus
            troubled |= ends
    for ns in sorted(troubled):
        box.call(t.POLICIES, {"namespace": ns}, f"network policies in {ns}")
    for name, node in sorted(facts.nodes.items()):
        if node.ready != "True" or node.problems:
            box.call(t.PODS, {"node": name}, f"pods on node {name}")
    neighbours(box, facts, scope, ranked)
    if slowed := [r for r in targets[:2] if _slowed_on_its_own(facts, r)]:
        box.call(t.METRICS, {"metric": CPU_USAGE, "since": "1h", "limit": 12},
                 f"see what else uses the CPU of the nodes {slowed[0].name} runs on")
    for ref in _cpu_hungry(facts, set(targets)):
        box.call(t.ROLLOUT, ref.workload_args, f"what changed in {ref.name}, which uses much CPU")
        metrics(box, ref)
    for tool, arguments, why in (*evidence.wanted(facts, ranked), *kernel.wanted(facts)):
        box.call(tool, arguments, why)
    for ref in targets:
        pending = facts.workloads.get(ref)
        if pending is not None and any(s.startswith("Pending") for s in pending.statuses):
            box.call(t.EVENTS, ref.object_args, f"events of {ref.name}")


def _slowed_on_its_own(facts: Facts, ref: Ref) -> bool:
    """Slower or failing, yet not throttled by its own CPU limit: something may be taking
    the CPU of its nodes."""
    if (signals := facts.signals_of(ref)) is None or signals.get("cpu").get("abnormal"):
        return False
    return any(signals.get(n).get("abnormal") for n in ("latency", "requests"))


def _cpu_hungry(facts: Facts, known: set[Ref]) -> list[Ref]:
    """The two workloads whose pods use the most CPU, when they use a lot of it."""
    usage: dict[Ref, float] = {}  # the busiest pod's mean cores, per workload
    for row in facts.metric_rows.get(CPU_USAGE) or []:
        ref = facts.workload_of_pod(row.labels.get("namespace", ""), row.labels.get("pod", ""))
        if ref is not None and ref.kind in ROLLING:
            usage[ref] = max(usage.get(ref, 0.0), row.mean)
    hungry = sorted(((cores, r) for r, cores in usage.items() if cores >= HUNGRY_CORES
                     and r not in known), key=lambda item: (-item[0], str(item[1])))
    return [r for _, r in hungry[:2]]


def _callees(facts: Facts, refs: Sequence[Ref]) -> list[Ref]:
    """The workloads that these ones name in their log lines as what they call (a slow or
    failing callee is where a healthy-looking caller's trouble comes from)."""
    wanted = set(refs)
    return sorted((callee for callee, callers in callers_by_callee(facts).items()
                   if callers & wanted and callee not in wanted and callee.kind in ROLLING),
                  key=str)


def follow(box: Toolbox, ranked: Sequence[Candidate], how_many: int = 2) -> list[Followup]:
    """Follow-ups of the leading candidates that were not done yet (the leader's even when
    every candidate is weak: its checks may find the cause), and any pod lookup by IP that a
    candidate among the first three asks for (it may name its true culprit), and what the
    sick nodes host (a node's fault reaches the report through its tenants)."""
    leader = ranked[0].score if ranked else 0.0
    worth = [c for c in ranked[:how_many] if c.score >= max(0.15, 0.5 * leader)] or [
        c for c in ranked[:1] if c.score > 0]  # a weak leader: its checks may name the cause
    wanted = [f for c in worth for f in c.followups]
    wanted += [f for c in ranked[:3] for f in c.followups  # who is behind an address a log
               if f.tool == t.PODS and "ip" in f.arguments]  # line names: cheap, decisive
    wanted += [f for c in [c for c in ranked if c.category == "node_failure"][:2]
               for f in c.followups  # what a sick node hosts: its tenants may be the report's
               if f.tool == t.PODS and "node" in f.arguments]
    return [f for f in wanted if box.call(f.tool, f.arguments, f.why)]


def settled(ranked: Sequence[Candidate]) -> bool:
    """Whether the leader is clear enough to stop: strong, and well ahead of the next."""
    if not ranked:
        return False
    best = ranked[0]
    runner = ranked[1].score if len(ranked) > 1 else 0.0
    return best.score >= 0.6 and runner <= 0.7 * best.score


def evidence_calls(box: Toolbox, candidate: Candidate, quoted: int) -> None:
    """When the leader's clues cannot be quoted (their observation was cut to fit the
    budget, or elided), ask the narrow question whose short answer will show them."""
    if quoted >= 2:
        return
    ref = candidate.culprit
    for clue in candidate.clues[:3]:
        tool = clue.observation.tool if clue.observation else (clue.tools or ("",))[0]
        if tool in (t.LOG_PATTERNS, t.LOG_SEARCH):
            if words := " ".join(w for w in clue.needles[0].split()[:4] if w.isalnum()):
                box.call(t.LOG_SEARCH, {"text": words, "namespace": ref.namespace or None,
                                        "limit": 5}, "quote the log lines behind it")
        elif tool in (t.WORKLOADS, t.PODS, t.EVENTS) and ref.kind in (*ROLLING, *t.BATCH):
            box.call(t.DESCRIBE, ref.pod_args, f"see {ref.name}'s pod in detail")
            box.call(t.EVENTS, ref.object_args, f"read the events of {ref.name}")


def widen(box: Toolbox, facts: Facts, scope: Scope, ranked: Sequence[Candidate]) -> None:
    """Before an unsure answer, while the budget allows: the links of the graph that were
    not read yet, the Ingresses (which Service a public host reaches) and the Services and
    NetworkPolicies of the namespaces the report and the leads point at, where a
    selector that matches nothing or a policy that drops traffic would show; and the
    rollout history of a workload there whose own metrics turned abnormal, which no
    candidate explains yet (a release that only made it slow)."""
    box.call(t.INGRESSES, {}, "see which Service each public host reaches")
    named = sorted(scope.namespaces, key=lambda n: -scope.namespaces[n])
    places = [n for n in dict.fromkeys([*named, *(c.culprit.namespace for c in ranked[:3])]) if n]
    for namespace in places[:3]:
        box.call(t.SERVICES, {"namespace": namespace},
                 f"check that the Services of {namespace} select ready pods")
        box.call(t.POLICIES, {"namespace": namespace},
                 f"check the NetworkPolicies of {namespace}")
    explained = {c.culprit for c in ranked}
    for ref, signals in sorted(facts.signals.items(), key=lambda kv: str(kv[0])):
        if signals.abnormal and ref.namespace in places and ref not in explained:
            box.call(t.ROLLOUT, ref.workload_args,
                     f"{ref.name}'s metrics turned abnormal: was it just released?")
