"""The router's first survey: step 1 of an `auto` run, a few cheap reads of the whole
cluster before any engine is chosen.

The survey is an ordinary step of the one ReAct loop (the loop runs its calls, takes the
humans' constraints, emits the events): `SurveyModel` stands in for the model for that one
step and asks for the survey's calls, so the step is shown in the thread, counted and
logged like any other. The chosen engine then starts from the log (`resume`), so it reuses
the observations instead of asking for them again. The calls are those an SRE makes first
(the workloads with their health, recent warning events, node problems, which errors are
logged, and the tool listing when the catalog is short): what the analyzer's own first
step asks, so a model that would have surveyed goes on to its second step.

What the survey found is read back into cheap signals (`Found`): how many workloads are
unhealthy and in how many namespaces, whether nodes have problems.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engines.events import Event, ObservationReceived, ToolCalled
from engines.model import ModelReply, ModelRequest, ToolCall
from engines.short_catalog import LIST_TOOLS

WORKLOADS_TOOL = "k8s_list_workloads"
NODES_TOOL = "k8s_list_nodes"
SURVEY: tuple[tuple[str, dict[str, Any]], ...] = (
    (WORKLOADS_TOOL, {"limit": 100}),
    ("k8s_events", {"type": "Warning", "limit": 40}),
    (NODES_TOOL, {"problems_only": True}),
    ("logs_error_patterns", {"since": "1h", "limit": 15}),
    (LIST_TOOLS, {}),
)
SURVEY_THOUGHT = ("Surveying the cluster before choosing how to investigate: the workloads "
                  "and their health, recent warnings, node problems and the errors logged.")


class SurveyModel:
    """The model of the survey step: it asks for the survey calls among the tools offered
    (the constraints may have taken some away), and for nothing on any other turn."""

    def __init__(self, name: str) -> None:
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    async def complete(self, request: ModelRequest) -> ModelReply:
        if request.final:
            return ModelReply("")
        offered = {spec.name for spec in request.tools}
        calls = tuple(ToolCall(f"survey_{request.step}_{i}", tool, dict(arguments))
                      for i, (tool, arguments) in enumerate(SURVEY) if tool in offered)
        return ModelReply(SURVEY_THOUGHT, calls)


@dataclass(frozen=True, slots=True)
class Found:
    """What the survey saw: unhealthy workloads by namespace, nodes with problems."""

    surveyed: bool = False
    unhealthy: tuple[tuple[str, str], ...] = ()  # (namespace, name)
    node_problems: int = 0

    @property
    def namespaces(self) -> frozenset[str]:
        return frozenset(ns for ns, _ in self.unhealthy)


def _rows(data: Any) -> list[dict[str, Any]]:
    rows = data.get("workloads") if isinstance(data, dict) else None
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


def _unhealthy(row: dict[str, Any]) -> bool:
    """A listed workload that is not healthy (the listing keeps only what a healthy row
    needs: no pods roll-up, no problems)."""
    pods = row.get("pods") if isinstance(row.get("pods"), dict) else {}
    ready, _, desired = str(row.get("ready", "")).partition("/")
    short = ready.isdigit() and desired.isdigit() and int(ready) < int(desired)
    return bool(row.get("problems")) or bool((pods or {}).get("unhealthy")) or short


def survey_done(events: Sequence[Event]) -> bool:
    """Whether the log holds the survey's step, all its calls answered."""
    calls = {e.call_id for e in events if isinstance(e, ToolCalled)
             and e.call_id.startswith("survey_")}
    answered = {e.call_id for e in events if isinstance(e, ObservationReceived)}
    return bool(calls) and calls <= answered


def found_in(events: Sequence[Event]) -> Found:
    """The survey's signals, from its observations in the log."""
    unhealthy: list[tuple[str, str]] = []
    nodes = 0
    surveyed = False
    for event in events:
        if not isinstance(event, ObservationReceived) or not event.call_id.startswith("survey_"):
            continue
        surveyed = True
        if event.tool == WORKLOADS_TOOL and event.status == "success":
            unhealthy += [(str(r.get("namespace", "")), str(r.get("name", "")))
                          for r in _rows(event.data) if _unhealthy(r)]
        elif event.tool == NODES_TOOL and event.status == "success":
            listed = event.data.get("nodes") if isinstance(event.data, dict) else None
            nodes += len(listed) if isinstance(listed, list) else 0
    return Found(surveyed, tuple(dict.fromkeys(unhealthy)), nodes)
