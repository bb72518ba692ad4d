"""Hand-made observations for analyzer tests: tool data in, facts and candidates out.

The data shapes follow what the tools return (tools/_k8s_*.py, logs.py, metrics.py); the
text is rendered the way the toolset renders it, so quotes are tested against real text.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from engines.analyzer.candidates import Candidate
from engines.analyzer.facts import Facts
from engines.analyzer.observation_text import parse_observation
from engines.analyzer.ranking import rank
from engines.analyzer.readers import build_facts
from engines.analyzer.scope import Scope, build_scope
from engines.analyzer.transcript import Observation
from tools._toolkit import ago
from tools.compress import fit

NOW = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)


def obs(tool: str, data: dict[str, Any], index: int = 0, **arguments: Any) -> Observation:
    """An observation as the toolset would produce it for this tool and data."""
    text = fit(data, 700)[0]
    return Observation(f"call_{tool}_{index}", tool, arguments, text, "success",
                       parse_observation(text), index)


def facts_of(*observations: Observation, excluded: frozenset[str] = frozenset()) -> Facts:
    numbered = [Observation(o.call_id + f"_{i}", o.tool, o.arguments, o.content, o.status,
                            o.data, i) for i, o in enumerate(observations)]
    return build_facts(numbered, NOW, excluded)


def scope_of(facts: Facts, report: str, **kwargs: Any) -> Scope:
    return build_scope(report, facts, NOW, **kwargs)


def ranked(facts: Facts, report: str, candidates: Sequence[Candidate]) -> list[Candidate]:
    scope = scope_of(facts, report)
    return rank(candidates, scope, facts)


def workload(name: str, namespace: str = "shop", *, kind: str = "Deployment", ready: str = "3/3",
             age: timedelta = timedelta(days=30), **extra: Any) -> dict[str, Any]:
    """A k8s_list_workloads row (its age as the tool gives it: the text and the seconds)."""
    return {"kind": kind, "name": name, "namespace": namespace, "ready": ready,
            "images": [f"registry.example.com/{name}:1.0.0"], "age": ago(NOW - age, NOW),
            "age_seconds": int(age.total_seconds()), **extra}


def workloads(*rows: dict[str, Any]) -> Observation:
    return obs("k8s_list_workloads", {"namespace": "all", "total": len(rows),
                                      "unhealthy": 0, "workloads": list(rows)})


def describe(pod: str, namespace: str = "shop", *, owner: str, containers: list[dict[str, Any]],
             events: list[dict[str, Any]] | None = None, status: str = "Running",
             **extra: Any) -> Observation:
    data = {"name": pod, "status": status, "ready": "0/1", "restarts": 0, "namespace": namespace,
            "owner": f"Deployment/{owner} → ReplicaSet/{owner}-7d9f8c6b5", "containers": containers,
            "events": events or "none in the last hour", **extra}
    return obs("k8s_describe_pod", data, namespace=namespace, pod=owner)


def event(reason: str, obj: str, message: str, *, namespace: str = "shop", count: int = 5,
          type: str = "Warning", last: str = "2026-11-30T09:58:00Z (2m ago)",
          first: str = "2026-11-30T09:20:00Z (40m ago)") -> dict[str, Any]:
    return {"type": type, "reason": reason, "object": obj, "namespace": namespace, "count": count,
            "last_seen": last, "message": message, "first_seen": first}


def events(*rows: dict[str, Any]) -> Observation:
    return obs("k8s_events", {"namespace": "all", "total": len(rows), "events": list(rows)},
               type="Warning")


def patterns(*rows: dict[str, Any], namespace: str | None = None) -> Observation:
    data = {"window": "1h", "matching_lines": 100, "patterns": list(rows)}
    if namespace:
        return obs("logs_error_patterns", data, namespace=namespace)
    return obs("logs_error_patterns", data)


def pattern(template: str, *, service: str, pod: str, count: int = 40, level: str = "error",
            first: str = "2026-11-30T09:31:00Z", last: str = "2026-11-30T09:59:00Z",
            example: str | None = None) -> dict[str, Any]:
    return {"template": template, "count": count, "first_seen": first, "last_seen": last,
            "example": example or template, "services": {service: count}, "pods": {pod: count},
            "levels": {level: count}}


def signals(namespace: str, name: str, **signal_rows: dict[str, Any]) -> Observation:
    abnormal = [k for k, v in signal_rows.items() if v.get("abnormal")]
    return obs("metrics_workload_signals", {"workload": f"{namespace}/{name}", "window": "3h",
                                            "abnormal": abnormal, "signals": signal_rows},
               namespace=namespace, workload=name)


def categories(found: Sequence[Candidate]) -> list[tuple[str, str]]:
    return [(c.category, c.culprit.name) for c in found]
