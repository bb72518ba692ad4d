"""Tool failures fall back in three levels, against the real Elasticsearch and Prometheus.

A loopback proxy (tests/fakes/flaky_proxy.py) stands between the live source and the real
server and fails the requests a test says: a 503 answered as Elasticsearch answers it, a
connection reset, a 400. Level one: a transient failure is retried with the same request
until the server answers, and the answer is the one the server gives directly. Level two:
a query the server refuses goes back to the model to fix, after one request. Level three:
a source that stays down gets an outage note naming the tools that read it another way.
The retries wait milliseconds here (a `BackendRetry` passed to the toolset).
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from engines.model import ToolCall
from tests.fakes.flaky_proxy import Answer, FlakyProxy, Reset, es_error
from tests.live._live import logs_of, metrics_of
from tests.services.elasticsearch import ElasticsearchServer, index_name
from tests.services.prometheus import PrometheusServer
from tools.catalog import available_tools
from tools.context import ToolContext
from tools.registry import ToolResult
from tools.retry import BackendRetry
from tools.scenarios import Scenario, load_scenario
from tools.sources.base import Sources
from tools.sources.live_elasticsearch import ElasticsearchLogs
from tools.sources.live_prometheus import PrometheusMetrics
from tools.sources.sandbox import sandbox_sources
from tools.toolset import Toolset

pytestmark = pytest.mark.live

FAST = BackendRetry(attempts=3, first_wait=0.01, max_wait=0.05, jitter=0.01)
OVERLOADED = es_error(503, "search_phase_execution_exception", "all shards failed")


@pytest.fixture(scope="module")
def scenario(live_scenario: Path) -> Scenario:
    return load_scenario(live_scenario)


def _toolset(scenario: Scenario, **sources: Any) -> Toolset:
    """The scenario's sandbox cluster (and metrics), with the live sources given."""
    chosen: Sources = replace(sandbox_sources(scenario), **sources)
    return Toolset(available_tools(chosen), ToolContext(now=scenario.now, sources=chosen),
                   retry=FAST)


def _patterns(scenario: Scenario) -> ToolCall:
    culprit = scenario.truth.culprit
    return ToolCall("1", "logs_error_patterns", {"namespace": culprit.namespace,
                                                 "since": "7d", "level": "any"})


@pytest.fixture
async def direct(elasticsearch_server: ElasticsearchServer, scenario: Scenario
                 ) -> AsyncIterator[ElasticsearchLogs]:
    source = logs_of(elasticsearch_server, scenario.id)
    yield source
    await source.close()


async def _through(proxy: FlakyProxy, scenario: Scenario, call: ToolCall) -> ToolResult:
    source = ElasticsearchLogs.connect(proxy.url, index=index_name(scenario.id), timeout=30)
    try:
        return await _toolset(scenario, logs=source).call(call)
    finally:
        await source.close()


@pytest.mark.parametrize("failures", [[OVERLOADED, OVERLOADED], [Reset()]],
                         ids=["503 twice", "connection reset"])
async def test_a_transient_failure_is_retried_with_the_same_request_until_it_answers(
    failures: list[Answer | Reset], elasticsearch_server: ElasticsearchServer,
    direct: ElasticsearchLogs, scenario: Scenario,
) -> None:
    call = _patterns(scenario)
    expected = await _toolset(scenario, logs=direct).call(call)
    assert expected.status == "success", expected.text
    async with FlakyProxy(elasticsearch_server.url, failures, match="/_search") as proxy:
        result = await _through(proxy, scenario, call)
    assert result.status == "success", result.text
    assert result.attempts == len(failures) + 1
    assert result.text == expected.text  # what the server answers directly, nothing lost
    searches = proxy.matching()
    assert [s.failed for s in searches[:len(failures) + 1]] == [True] * len(failures) + [False]
    assert len({s.body for s in searches[:len(failures) + 1]}) == 1  # the same request


async def test_a_query_the_server_refuses_is_not_retried_and_goes_back_to_the_model(
    elasticsearch_server: ElasticsearchServer, scenario: Scenario
) -> None:
    refused = es_error(400, "parsing_exception", "unknown query [matchh]")
    async with FlakyProxy(elasticsearch_server.url, [refused], match="/_search") as proxy:
        result = await _through(proxy, scenario, _patterns(scenario))
    assert len(proxy.matching()) == 1 and result.attempts == 1
    assert result.status == "error"
    assert result.text == ("ERROR: logs_error_patterns: Elasticsearch rejected the query: "
                           "unknown query [matchh] (fix the arguments and call again)")


async def test_a_source_that_stays_down_names_the_tools_that_read_it_another_way(
    elasticsearch_server: ElasticsearchServer, scenario: Scenario
) -> None:
    culprit = scenario.truth.culprit
    call = ToolCall("1", "logs_search", {"namespace": culprit.namespace,
                                         "service": culprit.name, "text": "error"})
    async with FlakyProxy(elasticsearch_server.url, match="/_search",
                          always=OVERLOADED) as proxy:
        result = await _through(proxy, scenario, call)
    assert len(proxy.matching()) == 3 and result.attempts == 3
    first, reason, *note = result.text.split("\n")
    assert first.startswith("ERROR: logs_search failed after 3 attempts in ")
    assert first.endswith("s: Elasticsearch error 503: all shards failed")
    assert reason == ("The log store is down; these tools fail alike until it is back: "
                      "logs_error_patterns, logs_search, logs_count_over_time.")
    assert note[0] == "Read the same thing another way:"
    assert note[1].startswith(f'- k8s_pod_logs {{"namespace": "{culprit.namespace}", '
                              f'"pod": "{culprit.name}"}}: a container\'s own log')


async def test_retries_never_outlast_the_tools_timeout(
    elasticsearch_server: ElasticsearchServer, scenario: Scenario
) -> None:
    patient = BackendRetry(attempts=10, first_wait=0.3, max_wait=5.0, jitter=0.0)
    async with FlakyProxy(elasticsearch_server.url, match="/_search",
                          always=OVERLOADED) as proxy:
        source = ElasticsearchLogs.connect(proxy.url, index=index_name(scenario.id))
        chosen = replace(sandbox_sources(scenario), logs=source)
        toolset = Toolset(available_tools(chosen),
                          ToolContext(now=scenario.now, sources=chosen), retry=patient)
        tool = toolset.get("logs_search")
        assert tool is not None
        short = replace(tool, timeout=1.5)  # waits 0.3 s, 0.6 s; the next, 1.2 s, would end late
        toolset = Toolset([short], toolset.context, retry=patient)
        started = time.perf_counter()
        result = await toolset.call(ToolCall("1", "logs_search", {"text": "error"}))
        took = time.perf_counter() - started
        await source.close()
    assert result.status == "error" and result.attempts == 3 == len(proxy.matching())
    assert took < 1.5  # stopped before the timeout, not cut by it
    assert result.text.startswith("ERROR: logs_search failed after 3 attempts in ")


async def test_prometheus_answers_after_a_503_and_its_own_400_is_not_retried(
    prometheus_server: PrometheusServer, scenario: Scenario
) -> None:
    culprit = scenario.truth.culprit
    call = ToolCall("1", "metrics_query", {
        "metric": "container_memory_working_set_bytes", "since": "3h",
        "labels": {"namespace": culprit.namespace, "pod": f"~{culprit.name}-.*"}})
    direct = metrics_of(prometheus_server)
    expected = await _toolset(scenario, metrics=direct).call(call)
    await direct.close()
    assert expected.status == "success", expected.text
    unavailable = Answer(503, {"status": "error", "errorType": "unavailable",
                               "error": "TSDB not ready"})
    async with FlakyProxy(prometheus_server.url, [unavailable], match="/api/v1/query") as proxy:
        source = PrometheusMetrics.connect(proxy.url, timeout=30)
        toolset = _toolset(scenario, metrics=source)
        result = await toolset.call(call)
        bad = await toolset.call(ToolCall("2", "metrics_promql", {"query": "sum(rate(x[5m]"}))
        await source.close()
    assert result.status == "success" and result.attempts == 2
    assert result.text == expected.text
    queries = proxy.matching()
    assert queries[0].failed and queries[0].body == queries[1].body
    assert bad.attempts == 1 and len(queries) == 3  # the 400 reached the server once
    assert bad.text.startswith("ERROR: metrics_promql: Prometheus rejected the query "
                               "(bad_data): ")
    assert bad.text.endswith("(fix the arguments and call again)")
