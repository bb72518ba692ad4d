"""A source that is down: the analyzer follows the outage note the toolset writes, the same
text a model reads, and still reaches the diagnosis another way.

The log store is a live Elasticsearch source pointed at a loopback port where nothing
listens (a real refused connection, retried by the toolset with millisecond waits); the
cluster and the metrics are the bundled scenario's sandbox. In thumbnailer-fd-leak the
cause ("too many open files") is written only in the logs, and not by the pod that looks
least healthy, so reading one pod's log is not enough: the analyzer reads the pods' logs
one by one, those its metrics saw.
"""

from __future__ import annotations

import asyncio
import socket
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from bot.wiring import engine_config
from engines.analyzer import AnalyzerModel
from engines.constraints import ConstraintSet
from engines.diagnosis import is_correct
from engines.events import Event, ObservationReceived, ToolCalled
from engines.incident import Incident
from engines.react import InvestigationResult, ReactEngine
from tools.catalog import FALLBACKS, available_tools
from tools.context import ToolContext
from tools.fallback import Fallback
from tools.retry import BackendRetry
from tools.scenarios import Scenario, load_scenario
from tools.sources.live_elasticsearch import ElasticsearchLogs
from tools.sources.live_prometheus import PrometheusMetrics
from tools.sources.sandbox import sandbox_sources
from tools.toolset import Toolset

FAST = BackendRetry(attempts=3, first_wait=0.01, max_wait=0.02, jitter=0.01)


def _dead_url() -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{sock.getsockname()[1]}"


def _investigate(scenario: Scenario, down: str,
                 fallbacks: Mapping[str, Fallback] = FALLBACKS) -> tuple[
                     InvestigationResult, list[Event]]:
    async def run() -> tuple[InvestigationResult, list[Event]]:
        if down == "logs":
            dead: Any = ElasticsearchLogs.connect(_dead_url())
        else:
            dead = PrometheusMetrics.connect(_dead_url())
        sources = replace(sandbox_sources(scenario), **{down: dead})
        constraints = ConstraintSet()
        toolset = Toolset(available_tools(sources), ToolContext(scenario.now, sources,
                                                                constraints),
                          retry=FAST, fallbacks=fallbacks)
        model = AnalyzerModel()
        events: list[Event] = []

        async def sink(event: Event) -> None:
            events.append(event)

        try:
            result = await ReactEngine(engine_config(model)).run(
                Incident(text=scenario.report, now=scenario.now), model, toolset, sink=sink,
                constraints=constraints)
        finally:
            await dead.close()
        return result, events

    return asyncio.run(run())


def test_with_the_log_store_down_the_pods_own_logs_give_the_diagnosis() -> None:
    scenario = load_scenario("thumbnailer-fd-leak")
    result, events = _investigate(scenario, "logs")
    assert is_correct(result.diagnosis, scenario.truth), result.diagnosis
    calls = [e for e in events if isinstance(e, ToolCalled)]
    failed = [e for e in events if isinstance(e, ObservationReceived) and e.status == "error"
              and e.tool.startswith("logs_")]
    assert failed and all("The log store is down" in e.text for e in failed)
    assert {e.step for e in failed} == {1}  # told once, it asks the store no more
    assert not [c for c in calls if c.tool.startswith("logs_") and c.step > 1]
    culprit = scenario.truth.culprit
    pods = {c.arguments["pod"] for c in calls if c.tool == "k8s_pod_logs"
            and c.arguments["namespace"] == culprit.namespace}
    assert len({p for p in pods if p.startswith(f"{culprit.name}-")}) >= 3  # pod by pod
    assert result.diagnosis is not None
    quoted = [e for e in result.diagnosis.evidence if e.tool == "k8s_pod_logs"]
    assert any("too many open files" in e.quote for e in quoted)  # from a pod's own log


def test_without_the_outage_note_the_same_investigation_misses_the_cause() -> None:
    scenario = load_scenario("thumbnailer-fd-leak")
    result, events = _investigate(scenario, "logs", fallbacks={})
    assert not is_correct(result.diagnosis, scenario.truth)  # the note is what it follows
    assert any(isinstance(e, ToolCalled) and e.tool.startswith("logs_") and e.step > 1
               for e in events)  # not told the store is down, it keeps asking it


def test_with_the_metric_store_down_the_apis_view_still_shows_the_oom_kill() -> None:
    scenario = load_scenario("checkout-oom")
    result, events = _investigate(scenario, "metrics")
    assert is_correct(result.diagnosis, scenario.truth), result.diagnosis
    failed = [e for e in events if isinstance(e, ObservationReceived) and e.status == "error"]
    assert failed and all("The metric store is down" in e.text for e in failed)
