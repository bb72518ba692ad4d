"""Which HTTP routes of a workload fail and which still answer, from its access-log lines.

"GET /api/v2/orders/{id} 500 11ms", "\"POST /pay HTTP/1.1\" 502", "GET /v1/items - 200": a
route that answers 5xx while the workload's other routes answer 2xx means the application
runs and serves, and one code path is broken (a regression, a bad query), not a pod that is
down or unready (which fails every route alike).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from engines.analyzer.detectors._common import pattern_workloads
from engines.analyzer.facts import Facts, LogPattern, Ref

_ACCESS = re.compile(r"\b(GET|POST|PUT|PATCH|DELETE|HEAD|OPTIONS)\s+(/[^\s?\"]*)\S*"
                     r"(?:\s+HTTP/[\d.]+\"?)?\s+(?:-\s+)?(?:status[=: ]+)?([1-5]\d\d)(?![\d.])")
_ID = re.compile(r"^(?:\d+|[0-9a-f]{8,}|[0-9a-f]{8}-[0-9a-f-]{27,})$", re.IGNORECASE)
_PLUMBING = ("health", "ready", "live", "ping", "metrics", "status")


@dataclass(slots=True)
class Routes:
    """Routes ("GET /x/{id}") by the status classes they answered, with a failing example."""

    failing: dict[str, LogPattern] = field(default_factory=dict)
    answering: set[str] = field(default_factory=set)


def route_of(method: str, path: str) -> str:
    parts = ["{id}" if _ID.match(p) else p for p in path.split("/")]
    return f"{method} {'/'.join(parts)}"


def routes(facts: Facts, ref: Ref) -> Routes:
    """The routes `ref` logged, split by whether they answered 5xx or 2xx/3xx."""
    found = Routes()
    for pattern in facts.patterns:
        matches = _ACCESS.findall(pattern.example or pattern.template) or _ACCESS.findall(
            pattern.template)
        if not matches or ref not in pattern_workloads(pattern, facts)[:1]:
            continue
        for method, path, status in matches:
            route = route_of(method, path)
            if status.startswith("5"):
                found.failing.setdefault(route, pattern)
            elif status[0] in "23" and not any(w in path.lower() for w in _PLUMBING):
                found.answering.add(route)
    return found
