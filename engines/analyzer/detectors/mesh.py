"""Requests that a service mesh's own proxies refuse, after its control plane changed.

In a mesh every call passes two Envoy proxies. When the proxy rejects a request itself
(Envoy's access log says so: the response flag DPE or UPE, or a codec detail such as
`http1.unexpected_underscore`), the application never saw it, so neither the caller's code
nor the callee is at fault: the proxies' behaviour is, and it changes when the mesh's
control plane (istiod, linkerd's controllers) rolls out a new version that pushes new
defaults. The caller only shows "400 Bad Request"; the sidecar's access log, read at info
level, and the control plane's rollout history tell the story.
"""

from __future__ import annotations

import re

from engines.analyzer.candidates import Candidate, Clue
from engines.analyzer.detectors import _common as t
from engines.analyzer.facts import Facts, LogPattern, Ref, Rollout
from engines.analyzer.scope import Scope

CONTROL_PLANE = re.compile(r"^(?:istiod|istio-pilot|linkerd-destination|linkerd-controller|"
                           r"kuma-control-plane|osm-controller)(?:-[a-z0-9-]+)?$")
PROXY_REFUSED = re.compile(r"\"\s+([45]\d\d)\s+(?:DPE|UPE)\b|\b[45]\d\d\b[^\n]*\bhttp[12]\.\w+",
                           re.IGNORECASE)
"""An Envoy access-log line of a request the proxy refused itself (a protocol error)."""
BAD_REQUEST = re.compile(r"\b(?:400|431)\b[^\n]*bad request|bad request[^\n]*\b400\b",
                         re.IGNORECASE)
"""A caller told its request is malformed, which a proxy says as readily as the app."""
WINDOW = 3 * 3600  # how long before the refusals began a control plane's rollout counts


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    planes = [r for r in facts.workloads if r.kind == "Deployment"
              and CONTROL_PLANE.match(r.name)]
    if not planes:
        return []
    plane = planes[0]
    refused = [p for p in facts.patterns if PROXY_REFUSED.search(p.example or p.template)]
    if refused:
        return [_refused_by_proxies(facts, plane, refused)]
    told = [(p, owners[0]) for p in facts.patterns if t.level_of(p) in t.ERRORS
            and BAD_REQUEST.search(p.example or p.template)
            and (owners := t.pattern_workloads(p, facts)) and owners[0] != plane]
    if not told:
        return []
    pattern, caller = told[0]
    access_log = {"namespace": caller.namespace, "service": caller.name, "text": "HTTP/1.1",
                  "level": "info"}
    if any(o.tool == t.LOG_PATTERNS and dict(o.arguments) == access_log
           for o in facts.observations):
        return []  # its sidecar's access log was read and shows no refusal: the app answered
    entry = Candidate("bad_rollout", plane)
    entry.clues.append(Clue(0.3, f"{caller.name} is answered {_quote(pattern)!r}, and a mesh "
                            f"({plane.name}) runs: its proxies may refuse the requests",
                            (_quote(pattern)[:50],), pattern.source, t.LOG_TOOLS, "mesh-told"))
    entry.follow(t.LOG_PATTERNS, access_log,
                 f"read {caller.name}'s sidecar access log: did its proxy answer the 400?")
    return [entry]


def _quote(pattern: LogPattern) -> str:
    return (pattern.example or pattern.template)[:110]


def _minutes_before(rollout: Rollout, first: LogPattern) -> int | None:
    """How many minutes the current revision came before the first refusal, if it came in
    the window before it."""
    current = rollout.current
    if current is None or current.created is None or first.first is None:
        return None
    seconds = (first.first - current.created).total_seconds()
    return int(seconds // 60) if 0 <= seconds <= WINDOW else None


def _refused_by_proxies(facts: Facts, plane: Ref, refused: list[LogPattern]) -> Candidate:
    """The control plane's rollout as the cause of what its proxies now refuse."""
    entry = Candidate("bad_rollout", plane)
    first = min(refused, key=lambda p: p.first or facts.now)
    match = PROXY_REFUSED.search(first.example or first.template)
    detail = match.group(0).strip('" ') if match else ""
    victims = [r for p in refused for r in t.pattern_workloads(p, facts)[:1] if r != plane]
    entry.affects = tuple(dict.fromkeys(victims))
    entry.clues.append(Clue(0.4, f"the mesh's proxies refuse requests themselves ({detail!r} "
                            f"in the access log, ×{sum(p.count for p in refused)}): the "
                            "application never sees them", (detail,), first.source,
                            t.LOG_TOOLS, "mesh-refused"))
    rollout = facts.rollout_of(plane)
    if rollout is None:
        entry.follow(t.ROLLOUT, plane.workload_args,
                     f"see whether {plane.name} changed just before the refusals began")
    elif (lag := _minutes_before(rollout, first)) is not None:
        entry.clues.append(Clue(0.35, f"{plane.name} rolled out a new revision {lag} min before "
                                "its proxies began to refuse them", ("revision",),
                                rollout.source, (t.ROLLOUT,), "mesh-rollout"))
    said = [p for p in facts.patterns if plane in t.pattern_workloads(p, facts)[:1]
            and re.search(r"default|enabled|strict|changed", p.example or p.template, re.I)]
    if said:
        entry.clues.append(Clue(0.15, f"{plane.name} logs {_quote(said[0])!r}",
                                (_quote(said[0])[:50],), said[0].source, t.LOG_TOOLS,
                                "mesh-says"))
    else:
        entry.follow(t.LOG_PATTERNS, {"namespace": plane.namespace, "service": plane.name,
                                      "level": "info"}, f"see what {plane.name} changed")
    entry.fix = (f"Roll Deployment {plane.namespace}/{plane.name} back to its previous version "
                 "(or restore the proxy setting its new version changed, mesh-wide), then fix "
                 "the clients whose requests the stricter proxies refuse.")
    return entry
