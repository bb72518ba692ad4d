"""bad_rollout: a new revision that runs and serves, but errs or is slow, where the previous
revision was healthy.

Signals: the current revision was created shortly before things broke (a metric change
point in 5xx ratio or latency, new error templates first seen after it, the report's
"since"), it changed the image or configuration, its pods run and are Ready (a revision
that cannot pull, schedule, start or become Ready takes that more specific category, see
ranking.py), and its errors sit on one route while the others still answer (it serves; one
code path regressed). A StatefulSet or DaemonSet shows no older revision once its update is
done: a revision whose first pod is much younger than the workload, with pods the controller
itself replaced, is the new one.

A rollout explains only the errors of its own code: new errors that are a callee's failure
reaching the new revision by chance of timing are the graph's to judge (graph.explained_by:
the callee's own anomaly, no later, is the cause).
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta

from engines.analyzer.candidates import Candidate, Clue
from engines.analyzer.detectors import _common as t
from engines.analyzer.detectors._routes import routes
from engines.analyzer.detectors._targets import callers_by_callee, hosts_in, resolve
from engines.analyzer.facts import Facts, LogPattern, Ref, Revision, Rollout, parse_stamp
from engines.analyzer.scope import Scope

FRESH = timedelta(hours=24)
PARTIAL = 0.5  # a 5xx ratio below this: most requests still succeed
UPDATED_AFTER = timedelta(hours=1)  # a workload older than this when its revision's pods came
BEFORE = timedelta(minutes=15)  # clocks and scrape intervals blur the order a little
AFTER = timedelta(minutes=90)
SHORTLY = timedelta(minutes=30)  # errors a revision causes begin soon after it serves
LATE = 0.4  # what a signal that began long after the rollout still says for it
ERROR_LEVELS = ("error", "fatal", "critical", "severe", "err", "")


def _aligned(created: datetime, moment: datetime | None) -> bool:
    return moment is not None and created - BEFORE <= moment <= created + AFTER


def _lag(created: datetime, moment: datetime | None) -> float:
    """How much a signal's onset speaks for a rollout: fully when it began shortly after
    the revision went live, little when the revision served well for a long while first
    (something else started then)."""
    if moment is None or not _aligned(created, moment):
        return 0.0
    return 1.0 if moment <= created + SHORTLY else LATE


def _new_errors(facts: Facts, ref: Ref, created: datetime) -> list[LogPattern]:
    """Error templates of this workload that first appeared after the rollout."""
    found = [p for p in facts.patterns if p.first is not None and p.count >= 3
             and t.level_of(p) in ERROR_LEVELS and ref in t.pattern_workloads(p, facts)[:1]
             and _aligned(created, p.first)]
    return sorted(found, key=lambda p: -p.count)


WORKED_FOR = timedelta(minutes=10)  # a new revision this long fine with a host did not break it


def _served_first(facts: Facts, entry: Candidate, created: datetime, errors: LogPattern) -> None:
    """New errors calling a host outside the cluster that the new revision called fine for
    a while first (its lines about the host before the errors are not errors): the host
    changed, not the revision. Until that has been read, a follow-up asks for those lines."""
    ref = entry.culprit
    hosts = [h for h, port in hosts_in(errors.text) if resolve(h, port, ref.namespace, facts)
             .external]
    if not hosts or errors.first is None or errors.first - created < WORKED_FOR:
        return
    fine = next((p.last for p in facts.patterns if hosts[0] in p.text.lower()
                 and p.last is not None and t.level_of(p) not in ERROR_LEVELS
                 and ref in t.pattern_workloads(p, facts)
                 and created <= p.last <= errors.first and p.last - created >= WORKED_FOR), None)
    if fine is None:
        entry.follow(t.LOG_PATTERNS, {"namespace": ref.namespace, "service": ref.name,
                                      "text": hosts[0], "level": "info"},
                     f"see whether {ref.name}'s new revision called {hosts[0]} fine at first")
        return
    entry.demote(0.5, f"the new revision called {hosts[0]} fine for "
                 f"{_ago(fine, created)} before these errors: {hosts[0]} changed")


def _updated_in_place(rollout: Rollout, current: Revision) -> bool:
    """A StatefulSet or DaemonSet whose pods all run one revision, with no older one left to
    compare: new when its first pod is much younger than the workload itself."""
    return bool(current.hash) and current.created is not None and \
        rollout.workload_created is not None and \
        current.created - rollout.workload_created >= UPDATED_AFTER


def _fresh_clue(facts: Facts, rollout: Rollout, current: Revision) -> Clue:
    created = current.created or facts.now
    change = rollout.changes[0] if rollout.changes else ""
    if not current.hash:
        return Clue(
            0.15, f"revision {current.number} rolled out {_ago(facts.now, created)} ago"
            + (f" ({change[:80]})" if change else ""),
            (change[:60], f"created: {t.stamp(created)}", f"revision: {current.number}"),
            rollout.source, (t.ROLLOUT,), "fresh")
    image = current.images[0].rsplit("/", 1)[-1] if current.images else ""
    note = (f"revision {current.hash}{f' ({image})' if image else ''} replaced its pods "
            f"{_ago(facts.now, created)} ago")
    if rollout.replaced:
        note += f": the {rollout.ref.kind} controller deleted and recreated {rollout.replaced}"
    return Clue(0.15 if rollout.replaced else 0.1, note,
                (f"first_pod_created: {t.stamp(created)}", f"revision: {current.hash}"),
                rollout.source, (t.ROLLOUT,), "fresh")


def _one_route(facts: Facts, ref: Ref) -> Clue | None:
    """Errors on one route while the others answer (in its logs, or a small 5xx ratio in its
    metrics): the revision serves, one code path broke."""
    found = routes(facts, ref)
    others = sorted(found.answering - set(found.failing))
    signals = facts.signals_of(ref)
    change = signals.get("requests").get("change") if signals is not None else None
    ratio = change.get("error_ratio_after") if isinstance(change, dict) else None
    partial = isinstance(ratio, int | float) and 0 < ratio < PARTIAL
    if not 1 <= len(found.failing) <= 2 or not (others or partial):
        return None
    route, pattern = next(iter(found.failing.items()))
    text = pattern.example or pattern.template
    quote = t.snippet(text, route.split(" ", 1)[1].split("{", 1)[0], 60)
    if others:
        rest = others[0] + (f" and {len(others) - 1} other route(s)" if len(others) > 1 else "")
        note = f"only {' and '.join(found.failing)} fails; {rest} still answer"
    else:
        note = f"only {' and '.join(found.failing)} fails, {ratio:.1%} of its requests"
    return Clue(0.2, note, (quote,), pattern.source, t.LOG_TOOLS, "one-route")


def _candidate(facts: Facts, scope: Scope, rollout: Rollout,
               callers: dict[Ref, set[Ref]]) -> Candidate | None:
    current, previous = rollout.current, rollout.previous
    if current is None or current.created is None:
        return None
    sibling = None
    if previous is None and not _updated_in_place(rollout, current) and (
            sibling := _stable_sibling(facts, rollout, current)) is None:
        return None
    if facts.now - current.created > FRESH:
        return None
    ref = rollout.ref
    entry = Candidate("bad_rollout", ref)
    entry.clues.append(_fresh_clue(facts, rollout, current))
    moment = t.signal_change(facts, ref)
    signals = facts.signals_of(ref)
    if (lag := _lag(current.created, moment)) and signals is not None:
        why = [str(signals.get(n).get("why")) for n in ("requests", "latency", "backlog")
               if signals.get(n).get("abnormal")]
        when = "right after it" if lag == 1.0 else \
            f"{_ago(moment or facts.now, current.created)} after it"
        entry.add(0.45 * lag, f"{when}, {why[0]}" if why else f"errors rose {when}",
                  ("5xx ratio rose", "p99 rose", "consumer lag grew"), signals.source,
                  (t.SIGNALS,), "aligned-metrics")
    elif sibling is not None and (clue := _against_sibling(facts, ref, sibling)) is not None:
        entry.clues.append(clue)
    if (appetite := _cpu_appetite(facts, ref, current.created)) is not None:
        entry.clues.append(appetite)
        if neighbours := _starved_neighbours(facts, rollout, current.created):
            entry.affects = neighbours
            entry.add(0.3, f"{' and '.join(n.name for n in neighbours[:2])} "
                      "on the same nodes slowed right after it", ("p99 rose", "5xx ratio rose"),
                      appetite.observation, (t.SIGNALS,), "starved-neighbours")
    if errors := _new_errors(facts, ref, current.created):
        top = errors[0]
        quote = t.snippet(top.example or top.template, top.example[:40] or top.template[:40], 60)
        weight = 0.4 * _lag(current.created, top.first)
        entry.clues.append(Clue(weight, f"new errors since the rollout: {top.template[:90]} "
                                f"(×{top.count})", (quote[:70], top.template[:50]), top.source,
                                (t.LOG_PATTERNS, *t.LOG_TOOLS), "new-errors"))
        _served_first(facts, entry, current.created, top)
    for found in (_named_by_victims(facts, rollout, current),
                  _overloads_callee(facts, rollout, current, callers),
                  _unreadable_to_callers(facts, rollout, current, callers)):
        if found is not None:
            clue, victims = found
            entry.clues.append(clue)
            entry.affects = tuple(dict.fromkeys((*entry.affects, *victims)))
    if scope.onset is not None and (lag := _lag(current.created, scope.onset)):
        entry.add(0.15 * lag, "the report's start time matches the rollout",
                  (f"revision: {current.hash or current.number}",), rollout.source, (t.ROLLOUT,),
                  "report-onset")
    if len(entry.clues) == 1:
        entry.clues[0] = Clue(0.08, entry.clues[0].note, entry.clues[0].needles,
                              rollout.source, (t.ROLLOUT,), "fresh")
    elif (route := _one_route(facts, ref)) is not None:
        entry.clues.append(route)
    undo = f"`kubectl rollout undo {ref.kind.lower()}/{ref.name} -n {ref.namespace}`"
    if sibling is not None:
        entry.fix = (f"Scale the canary {ref.kind} {ref.namespace}/{ref.name} "
                     f"({current.images[0] if current.images else current.label}) to zero "
                     f"(`kubectl scale {ref.kind.lower()}/{ref.name} -n {ref.namespace} "
                     f"--replicas=0`) so that {sibling.ref.name} serves alone, then fix the "
                     "regression before promoting it.")
        return entry
    if previous is None:
        entry.fix = (f"Roll {ref.kind} {ref.namespace}/{ref.name} back to its previous revision "
                     f"with {undo}, then fix the regression of {current.label} before "
                     "releasing again.")
        return entry
    old = previous.images[0] if previous.images else previous.label
    entry.fix = (f"Roll {ref.kind} {ref.namespace}/{ref.name} back to {previous.label} ({old}) "
                 f"with {undo}, then fix the regression before releasing again.")
    return entry


def _tag(image: str) -> str:
    """The tag of an image reference ("reg.io/team/app:4.8.0" -> "4.8.0"), if it has one."""
    last = image.rsplit("/", 1)[-1].split("@", 1)[0]
    return last.rsplit(":", 1)[1] if ":" in last else ""


def _named_by_victims(facts: Facts, rollout: Rollout,
                      current: Revision) -> tuple[Clue, tuple[Ref, ...]] | None:
    """Another workload's new errors that name this one at its new version ("producer
    order-service@4.8.0", "from checkout 2.3.0"): what the revision sends or answers breaks
    its peers, while its own pods look healthy."""
    old = {_tag(i) for i in (rollout.previous.images if rollout.previous else ())}
    tags = {tag for i in current.images if len(tag := _tag(i)) >= 3 and tag not in old}
    if not tags or current.created is None:
        return None
    name = rollout.ref.name.lower()
    found = [(p, owners[0]) for p in facts.patterns if p.first is not None and p.count >= 3
             and t.level_of(p) in ERROR_LEVELS and (owners := t.pattern_workloads(p, facts))
             and owners[0] != rollout.ref and _aligned(current.created, p.first)
             and name in (low := p.text.lower()) and any(tag in low for tag in tags)]
    if not found:
        return None
    top, victim = max(found, key=lambda f: f[0].count)
    tag = next(tag for tag in tags if tag in top.text.lower())
    weight = 0.45 * _lag(current.created, top.first)
    quote = t.snippet(top.example or top.template, tag, 60)
    return Clue(weight, f"{victim.name}'s errors since the rollout name it at its new version "
                f"{tag}: {top.template[:80]} (×{top.count})", (quote[:70], tag), top.source,
                t.LOG_TOOLS, "named-by-victims"), tuple(dict.fromkeys(v for _, v in found))


# A caller that cannot read what it is answered: the body's encoding or format changed.
UNREADABLE = re.compile(r"invalid gzip header|not in gzip format|incorrect header check|"
                        r"unexpected content-encoding|unsupported content-encoding|"
                        r"(?:decode|decoding|unmarshal|deserializ\w*|parse|parsing) "
                        r"(?:failed|error)|"
                        r"(?:failed|unable|cannot|could not) (?:to )?(?:decode|unmarshal|"
                        r"deserialize|parse)|invalid character .{1,8} looking for|"
                        r"unexpected token .{1,8} in json|is not valid json|cannot unmarshal",
                        re.IGNORECASE)


def _unreadable_to_callers(facts: Facts, rollout: Rollout, current: Revision,
                           callers_of: dict[Ref, set[Ref]]) -> tuple[Clue, tuple[Ref, ...]] | None:
    """Callers whose new errors since this revision went live say they cannot read its
    answers (a body compressed or shaped differently): what the revision answers changed,
    and its own dashboards stay green since it answers 200."""
    callers = callers_of.get(rollout.ref, set()) - {rollout.ref}
    if current.created is None or not callers:
        return None
    found = [(p, owners[0]) for p in facts.patterns if p.first is not None and p.count >= 3
             and t.level_of(p) in ERROR_LEVELS and (owners := t.pattern_workloads(p, facts))
             and owners[0] in callers and p.first <= current.created + SHORTLY
             and _aligned(current.created, p.first) and UNREADABLE.search(p.text)]
    if not found:
        return None
    top, victim = max(found, key=lambda f: f[0].count)
    match = UNREADABLE.search(top.text)
    quote = t.snippet(top.example or top.template, match.group(0) if match else "", 60)
    return Clue(0.45, f"{victim.name} cannot read its answers since the rollout: "
                f"{top.template[:80]} (×{top.count})", (quote[:70],), top.source, t.LOG_TOOLS,
                "unreadable-answers"), tuple(dict.fromkeys(v for _, v in found))


LOAD_JUMP = 2.0  # a callee's request rate this many times higher right after the rollout


def _overloads_callee(facts: Facts, rollout: Rollout, current: Revision,
                      callers_of: dict[Ref, set[Ref]]) -> tuple[Clue, tuple[Ref, ...]] | None:
    """A callee whose request rate jumped right after this revision went live: the new
    revision sends it more (retries without backoff, a call in a loop), and the callee
    slows or fails under the load, although it did not change."""
    if current.created is None:
        return None
    for callee, callers in sorted(callers_of.items(), key=lambda kv: str(kv[0])):
        if rollout.ref not in callers or callee == rollout.ref or \
                (signals := facts.signals_of(callee)) is None:
            continue
        change = signals.get("requests").get("change")
        if not isinstance(change, dict):
            continue
        before, after = change.get("rate_before_per_s"), change.get("rate_after_per_s")
        if not isinstance(before, int | float) or not isinstance(after, int | float) or \
                before <= 0 or after < LOAD_JUMP * before or \
                _lag(current.created, parse_stamp(change.get("at"))) < 1.0:
            continue
        return Clue(0.45, f"{callee.name}, which it calls, took {after / before:.1f}x the "
                    f"requests right after it ({before:g}/s to {after:g}/s)",
                    ("request rate went from",), signals.source, (t.SIGNALS,),
                    "overloads-callee"), (callee,)
    return None


def _cpu_appetite(facts: Facts, ref: Ref, created: datetime) -> Clue | None:
    """The new revision's pods use several times the CPU the old ones did: a change that
    costs its nodes' other pods their CPU, with or without a limit of its own."""
    if (signals := facts.signals_of(ref)) is None:
        return None
    jump = signals.get("cpu").get("usage_per_pod_change")
    if not isinstance(jump, dict) or _lag(created, parse_stamp(jump.get("at"))) < 1.0:
        return None  # a rise long after the new pods started is load, not the revision
    before, after = (str(jump.get(k)) for k in ("before_cores", "after_cores"))
    return Clue(0.35, f"its pods' CPU use rose from {_cores(before)} to {_cores(after)} each "
                "with the new revision", ("CPU use per pod rose", str(jump.get("after_cores"))),
                signals.source, (t.SIGNALS,), "cpu-appetite")


def _cores(shown: str) -> str:
    return shown if shown.endswith("m") else f"{shown} cores"


def _starved_neighbours(facts: Facts, rollout: Rollout, created: datetime) -> tuple[Ref, ...]:
    """Other workloads whose latency or errors rose after the rollout, on nodes it runs on
    (a DaemonSet runs on every node)."""
    ref = rollout.ref
    mine = {p.node for p in facts.pods.values() if p.node and p.owner == ref}
    found = []
    for other in sorted(facts.signals, key=str):
        moment = t.signal_change(facts, other)
        if other == ref or moment is None or not created <= moment <= created + AFTER:
            continue
        theirs = {p.node for p in facts.pods.values() if p.node and p.owner == other}
        if ref.kind == "DaemonSet" or mine & theirs:
            found.append(other)
    return tuple(found)


def _repository(image: str) -> str:
    """An image without its tag or digest."""
    image = image.split("@", 1)[0]
    head, _, tail = image.rpartition(":")
    return head if head and "/" not in tail else image


def _stable_sibling(facts: Facts, rollout: Rollout, current: Revision) -> Rollout | None:
    """A canary: a new workload with a single revision that runs another version of the
    image an older workload of its namespace serves (beside it, behind the same Service).
    The older workload's revision is the previous one to compare with."""
    if not (mine := {_repository(i): i for i in current.images}):
        return None
    for other in sorted(facts.rollouts.values(), key=lambda r: str(r.ref)):
        theirs = other.current
        if other.ref == rollout.ref or other.ref.namespace != rollout.ref.namespace or \
                theirs is None or theirs.created is None or current.created is None or \
                theirs.created >= current.created:
            continue
        if any(_repository(i) in mine and mine[_repository(i)] != i for i in theirs.images):
            return other
    return None


def _against_sibling(facts: Facts, ref: Ref, sibling: Rollout) -> Clue | None:
    """The canary errs or is slow while the stable workload, on the previous version,
    is not: the new version is what differs."""
    signals, stable = facts.signals_of(ref), facts.signals_of(sibling.ref)
    if signals is None or stable is None:
        return None
    worse = [str(signals.get(n).get("why")) for n in ("requests", "latency")
             if signals.get(n).get("abnormal") and not stable.get(n).get("abnormal")]
    if not worse:
        return None
    return Clue(0.45, f"{worse[0]}, while {sibling.ref.name} on the previous version is healthy",
                (worse[0][:60],), signals.source, (t.SIGNALS,), "aligned-metrics")


def _ago(now: datetime, then: datetime) -> str:
    minutes = int((now - then).total_seconds() // 60)
    return f"{minutes}m" if minutes < 120 else f"{minutes // 60}h"


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    callers = callers_by_callee(facts) if facts.rollouts else {}  # once: it reads every line
    found = [entry for rollout in facts.rollouts.values()
             if (entry := _candidate(facts, scope, rollout, callers)) is not None]
    for entry in found:
        ref = entry.culprit
        entry.follow(t.SIGNALS, ref.workload_args,
                     f"line {ref.name}'s error rate up with the rollout")
        entry.follow(t.LOG_PATTERNS, {"namespace": ref.namespace},
                     f"see which errors {ref.name} started to log")
        entry.follow(t.POD_LOGS, ref.pod_args,
                     f"see whether {ref.name} still serves its other routes")
    return found
