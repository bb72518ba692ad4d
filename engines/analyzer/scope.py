"""What the report is about: which workloads and namespaces, which symptom, since when.

On-call engineers name things loosely ("checkout in prod", "the ledger api", "POST
/orders"), so report words are matched against the names the cluster actually has: a
workload name said in full is the strongest match, all its parts said apart the next, its
distinctive part alone a weaker one. Two words said in a row also count as one ("gift list"
for giftlist-web, "check out" for checkout). Generic parts ("api", "service", "worker")
never match alone. What the report says works ("the VOD subtitles look fine") is left out.
Human constraints narrow the scope ("focus on X") or lower topics ("ignore X").
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from itertools import pairwise

from engines.analyzer.facts import Facts, Ref

_WORD = re.compile(r"[a-z0-9][a-z0-9-]*[a-z0-9]|[a-z0-9]")
GENERIC = frozenset({
    "api", "app", "svc", "service", "services", "server", "web", "worker", "workers", "job",
    "jobs", "db", "prod", "production", "staging", "stage", "dev", "main", "v1", "v2", "v3",
    "http", "https", "grpc", "backend", "frontend-api", "the", "and", "for", "pod", "pods",
    "cron", "daemon", "deploy", "deployment", "system", "kube", "default", "internal", "public",
})
NAMESPACE_ONLY = 0.45  # a workload the report does not name, in a namespace it does
_AT = r"\b(?:since|from|at|around|about|after|started)\s+(?:~|about\s+|around\s+)?"
_CLOCK = re.compile(_AT + r"(\d{1,2}):(\d{2})\b", re.IGNORECASE)
_MERIDIEM = re.compile(_AT + r"(\d{1,2})(?::(\d{2}))?\s*(am|pm)\b", re.IGNORECASE)
_AGO = re.compile(r"\b(\d+)\s*(min|minute|minutes|m|h|hour|hours)\b(?:\s+ago)?", re.IGNORECASE)

SYMPTOMS: dict[str, tuple[str, ...]] = {
    "restarts": ("restart", "restarting", "crash", "crashing", "crashloop", "keeps dying",
                 "killed", "oom", "bouncing", "flapping"),
    "errors": ("500", "502", "503", "504", "5xx", "error", "errors", "failing", "fails",
               "failed", "failure", "broken", "down", "unavailable", "refused"),
    "latency": ("slow", "latency", "timeout", "timeouts", "timing out", "p99", "p95", "sluggish",
                "lag", "laggy", "takes forever", "response time"),
    "pending": ("pending", "not starting", "won't start", "stuck", "not scheduled",
                "no pods", "zero pods", "scale", "scaling", "replicas"),
    "deploy": ("deploy", "deployed", "release", "released", "rollout", "upgrade", "new version"),
    "tls": ("certificate", "cert", "tls", "ssl", "x509", "handshake", "https"),
    "dns": ("dns", "resolve", "resolution", "no such host", "nxdomain", "lookup"),
    # what scheduled runs produce, or that one did not happen: a batch workload is suspect
    "batch": ("statements", "invoices", "exports", "reports", "payouts", "backups", "emails",
              "email", "e-mail", "receipts", "receipt", "newsletter", "digest", "files",
              "statement", "invoice", "export", "payout", "backup", "nightly", "monthly",
              "weekly", "cron", "batch", "not sent", "not delivered", "never arrived",
              "not generated", "didn't run", "did not run"),
    # the cluster's own telemetry gone: the agents that ship it are suspect
    "telemetry": ("logs are gone", "logs are missing", "missing logs", "no logs", "logs gone",
                  "log gaps", "gaps in the logs", "logs stopped", "metrics are missing",
                  "missing metrics", "no metrics", "metrics gone", "metrics stopped",
                  "gaps in the metrics", "dashboards are empty", "empty dashboards"),
}
_CLAUSES = re.compile(r"[.;!?]+(?:\s|$)|,|\s[-–—]\s|\b(?:but|until|while|whereas|though|although|"
                      r"when|however)\b")
_FINE = re.compile(r"(?<!not )(?<!n't )\b(?:fine|unaffected)\b|\bnot affected\b|"
                   r"\b(?:looks?|looking|seems?|is|are|still|works?|working|running)\s+"
                   r"(?:ok|okay|good|normal|healthy)\b|\bno (?:issues?|problems?|errors?)\b")


# A reporter's guess at a cause names a suspect, not what is broken, and is often the decoy:
# a name said only in one counts for less. A hedge ("probably the quotes database", "I
# suspect the 3.31 rollout") is a guess in its own clause; asking to undo something
# ("someone rolled out X just before, can we roll it back?") makes its whole sentence one, and
# so does a side note the reporter doubts ("also a Pending X, no idea if related").
_HEDGE = re.compile(r"\b(?:i suspect|suspect|i think|i guess|maybe|perhaps|probably|could it be|"
                    r"might be)\b")
_UNDO = re.compile(r"\b(?:can we roll|roll it back|rolled? back|revert|should i (?:kill|roll)|"
                   r"unrelated|(?:no idea|not sure|unsure|don't know|dunno) (?:if|whether) "
                   r"(?:it's |that's |this is |it is )?related)\b")
GUESSED = 0.6  # what a name said only in a guess keeps of its match
# The workloads that are the way in: ingress controllers, gateways, edge proxies. A report
# that names the way in ("behind the public ingress", "the NLB") points at them this much.
EDGE = re.compile(r"ingress|gateway|traefik|haproxy|contour|kong|envoy|edge-proxy")
EDGE_HINT = 0.6
# How a report names the way in; not "504 Gateway Time-out" or "Bad Gateway", which are any
# proxy's words for a backend that failed.
EDGE_CUE = re.compile(r"\bingress\b|(?<!bad )\bgateway\b(?! ?time-?out)|\bload[- ]?balancer|"
                      r"\b[nae]lb\b|\blb service|\bthe lb\b", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class Scope:
    """The report's targets with match strengths (0..1), its symptoms and its onset."""

    workloads: dict[Ref, float] = field(default_factory=dict)
    namespaces: dict[str, float] = field(default_factory=dict)
    symptoms: frozenset[str] = frozenset()
    onset: datetime | None = None
    ignored_terms: frozenset[str] = frozenset()

    def weight(self, namespace: str, name: str = "") -> float:
        """How strongly the report points at this object (0 when it does not)."""
        named = (s for r, s in self.workloads.items() if (r.namespace, r.name) == (namespace, name))
        return max(0.0, *named, NAMESPACE_ONLY * self.namespaces.get(namespace, 0.0))

    @property
    def primary(self) -> list[Ref]:
        """Workloads the report names, strongest first."""
        return [r for r, _ in sorted(self.workloads.items(), key=lambda kv: (-kv[1], str(kv[0])))]


def words_of(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _name_match(name: str, text: str, words: set[str]) -> float:
    """How strongly `text` names `name` (a workload, service or namespace)."""
    low = name.lower()
    if re.search(rf"(?<![a-z0-9-]){re.escape(low)}(?![a-z0-9-])", text):
        return 1.0
    parts = [p for p in low.split("-") if p]
    distinctive = [p for p in parts if p not in GENERIC and len(p) >= 3]
    if len(parts) > 1 and all(p in words or _stem(p) in words for p in parts):
        return 0.85
    if distinctive and all(p in words or _stem(p) in words for p in distinctive):
        return 0.6 if len(distinctive) == len(parts) else 0.5
    if any(p in words or _stem(p) in words for p in distinctive):
        return 0.3
    return 0.0


def _stem(word: str) -> str:
    return word[:-1] if word.endswith("s") and len(word) > 4 else word + "s"


def _onset(text: str, now: datetime) -> datetime | None:
    """ "since ~02:05" or "since about 13:30" on the clock's day; "20 minutes ago"."""
    clock = None  # (hour, minute)
    if (match := _CLOCK.search(text)) and int(match.group(1)) < 24 and int(match.group(2)) < 60:
        clock = int(match.group(1)), int(match.group(2))
    elif match := _MERIDIEM.search(text):
        clock = int(match.group(1)) % 12 + (12 if match.group(3).lower() == "pm" else 0), \
            int(match.group(2) or 0)
    if clock is not None and clock[1] < 60:
        moment = now.replace(hour=clock[0], minute=clock[1], second=0, microsecond=0)
        return moment - timedelta(days=1) if moment > now else moment
    if (match := _AGO.search(text)) and "ago" in match.group(0).lower():
        amount, unit = int(match.group(1)), match.group(2).lower()
        return now - (timedelta(hours=amount) if unit.startswith("h") else
                      timedelta(minutes=amount))
    return None


def _without_guesses(report: str) -> str | None:
    """The report without the clauses that guess why rather than say what is wrong; None
    when it guesses nothing."""
    kept: list[str] = []
    dropped = False
    for sentence in re.split(r"(?<=[.?!])\s+", " ".join(report.lower().split())):
        if _UNDO.search(sentence):
            dropped = True
            continue
        for clause in (c for c in _CLAUSES.split(sentence) if c and c.strip()):
            if _HEDGE.search(clause):
                dropped = True
            else:
                kept.append(clause)
    return " , ".join(kept) if dropped else None


def ignored_terms(topics: Iterable[str]) -> frozenset[str]:
    """Distinctive words of "ignore ..." replies ("the redis warnings in cart" → redis, cart)."""
    noise = GENERIC | {"warning", "warnings", "error", "errors", "alert", "alerts", "logs", "log",
                       "message", "messages", "noise", "in", "on", "of", "from", "they", "are",
                       "expected", "those", "these", "that", "this", "it", "is", "all", "any"}
    return frozenset(w for topic in topics for w in words_of(topic)
                     if w not in noise and len(w) >= 3)


def _complaint(report: str) -> tuple[str, str]:
    """The report without the clauses that clear something ("the VOD subtitles look fine",
    "checkout is unaffected"), and those clauses: what the engineer says works is not what
    to look at."""
    text = " ".join(report.lower().split())  # a line break is only where the text wrapped
    kept: list[str] = []
    cleared: list[str] = []
    for clause in (c for c in _CLAUSES.split(text) if c and c.strip()):
        (cleared if _FINE.search(clause) else kept).append(clause)
    return (" , ".join(kept) if kept else text), " , ".join(cleared)


def _words(text: str) -> set[str]:
    """Words of a text, their hyphenated parts, and each two said in a row as one ("gift
    list" names giftlist-web)."""
    said = words_of(text)
    words = set(said) | {p for w in said for p in w.split("-")}
    return words | {a + b for a, b in pairwise(said)}


_CAMEL = re.compile(r"\b[A-Z]?[a-z0-9]+(?:[A-Z][a-z0-9]+)+\b")
_HUMP = re.compile(r"[A-Z]?[a-z0-9]+")


def _uncamel(report: str) -> str:
    """Alert names said as they page ("EtaEstimatorPodsNotReady") spelled out beside them as
    words too ("eta estimator pods not ready"), so they name the workload they are about."""
    return _CAMEL.sub(lambda m: f"{m.group(0)} ({' '.join(_HUMP.findall(m.group(0)))})",
                      report)


def build_scope(report: str, facts: Facts, now: datetime, *, focus: Sequence[str] = (),
                ignored: Sequence[str] = ()) -> Scope:
    """Match the report (and any "focus on") against the names seen in the cluster."""
    text, cleared = _complaint(_uncamel(report))
    words, cleared_words = _words(text), _words(cleared)
    targets: dict[Ref, float] = {}
    names = set(facts.workloads) | {Ref("Service", ns, n) for ns, n in facts.services}
    guessless = _without_guesses(_uncamel(report))
    plain = _complaint(guessless)[0] if guessless is not None else text
    plain_words = _words(plain)
    for ref in names:
        strength = _name_match(ref.name, text, words)
        if strength and guessless is not None:
            strength = max(_name_match(ref.name, plain, plain_words), GUESSED * strength)
        if cleared and strength <= _name_match(ref.name, cleared, cleared_words):
            continue  # said to be fine at least as clearly as it is complained about
        if strength > 0 and ref.kind == "Service":
            ref = next((r for r in facts.workloads if r.namespace == ref.namespace
                        and r.name == ref.name), ref)
        if strength > targets.get(ref, 0.0):
            targets[ref] = strength
    namespaces = {ns: _name_match(ns, text, words) for ns in facts.namespaces_seen if ns}
    namespaces = {ns: s for ns, s in namespaces.items() if s >= 0.6}
    for ref, strength in targets.items():
        if strength >= 0.5:
            namespaces[ref.namespace] = max(namespaces.get(ref.namespace, 0.0), strength)
    if focus:
        targets, namespaces = _narrow(focus, facts, targets, namespaces)
    symptoms = frozenset(name for name, cues in SYMPTOMS.items()
                         if any(re.search(rf"(?<![a-z0-9]){re.escape(c)}", text) for c in cues)
                         ) | ({"edge"} if EDGE_CUE.search(plain) else set())  # not a guess
    if "edge" in symptoms:  # "everything behind the ingress is slow": the way in is a suspect
        for ref in facts.workloads:
            if ref.kind in ("Deployment", "DaemonSet", "StatefulSet") and \
                    EDGE.search(ref.name.lower()) and targets.get(ref, 0.0) < EDGE_HINT:
                targets[ref] = EDGE_HINT
                namespaces[ref.namespace] = max(namespaces.get(ref.namespace, 0.0), EDGE_HINT)
    top = max(targets.values(), default=0.0)
    kept = {r: s for r, s in targets.items()  # a word's worth: if nothing better, or beside it
            if s >= 0.5 or (s >= 0.3 and (top < 0.5 or r.namespace in namespaces))}
    return Scope(kept, namespaces, symptoms, _onset(report, now), ignored_terms(ignored))


def _narrow(focus: Sequence[str], facts: Facts, targets: dict[Ref, float],
            namespaces: dict[str, float]) -> tuple[dict[Ref, float], dict[str, float]]:
    """ "focus on X": X as a namespace keeps that namespace, as a workload keeps it first."""
    wanted_ns = {f for f in focus if f in facts.namespaces_seen}
    chosen = {ref: 1.0 for value in focus for ref in facts.workloads
              if _name_match(ref.name, value.lower(), set(words_of(value))) >= 0.5}
    if chosen:
        return chosen, {r.namespace: 1.0 for r in chosen}
    if wanted_ns:
        return ({r: s for r, s in targets.items() if r.namespace in wanted_ns},
                dict.fromkeys(wanted_ns, 1.0))
    return targets, namespaces
