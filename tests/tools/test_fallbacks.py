"""Tool failures fall back in three levels: what counts as transient, and what the model is
told when a source stays down.

The sources here are the live ones, pointed at a loopback port where nothing listens: the
real clients get a real refused connection (the retries against a real server that fails
and then answers are in tests/live/test_live_fallbacks.py). The cluster and metrics that
do answer are a bundled scenario's sandbox.
"""

from __future__ import annotations

import socket
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import aiohttp
import elasticsearch
import httpx
import pytest
import urllib3.exceptions
from elastic_transport import ApiResponseMeta, HttpHeaders, NodeConfig
from kubernetes.client.exceptions import ApiException

from engines.errors import BackendUnavailableError
from engines.model import ToolCall
from tools.catalog import ALL_TOOLS, FALLBACKS, READS, available_tools
from tools.context import ToolContext
from tools.fallback import Outage, Suggestion, read_outage
from tools.promql import PROMQL_TOOLS
from tools.retry import BackendRetry
from tools.scenarios import Scenario, load_scenario
from tools.sources.base import LogQuery, Sources
from tools.sources.live_elasticsearch import ElasticsearchLogs
from tools.sources.live_kubernetes import KubernetesCluster
from tools.sources.live_prometheus import PrometheusMetrics
from tools.sources.sandbox import sandbox_sources
from tools.sources.transient import is_transient, transient_status
from tools.toolset import Toolset

FAST = BackendRetry(attempts=3, first_wait=0.01, max_wait=0.02, jitter=0.01)
SCENARIO = "checkout-oom"


def _dead_url(scheme: str = "http") -> str:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return f"{scheme}://127.0.0.1:{sock.getsockname()[1]}"


def _meta(status: int) -> ApiResponseMeta:
    return ApiResponseMeta(status, "1.1", HttpHeaders(), 0.0,
                           NodeConfig("http", "127.0.0.1", 9200))


def _httpx_status(status: int) -> httpx.HTTPStatusError:
    request = httpx.Request("GET", "http://127.0.0.1/api/v1/query")
    return httpx.HTTPStatusError("", request=request,
                                 response=httpx.Response(status, request=request))


def _aiohttp_status(status: int) -> aiohttp.ClientResponseError:
    return aiohttp.ClientResponseError(None, (), status=status)  # type: ignore[arg-type]


TRANSIENT: list[BaseException] = [
    elasticsearch.ConnectionError("Connection refused"),
    elasticsearch.ConnectionTimeout("timed out"),
    elasticsearch.ApiError("unavailable", _meta(503), {}),
    elasticsearch.ApiError("too many requests", _meta(429), {}),
    httpx.ConnectError("refused"), httpx.ReadTimeout("slow"),
    httpx.RemoteProtocolError("Server disconnected without sending a response."),
    httpx.ReadError("reset"), _httpx_status(502),
    aiohttp.ServerDisconnectedError(), aiohttp.ClientOSError(104, "reset"),
    _aiohttp_status(504),
    ApiException(status=500), ApiException(status=503),
    urllib3.exceptions.MaxRetryError(None, "/api",  # type: ignore[arg-type]
                                     urllib3.exceptions.NewConnectionError(None, "refused")),
    urllib3.exceptions.ProtocolError("Connection aborted.", ConnectionResetError(104)),
    urllib3.exceptions.ReadTimeoutError(None, "/api", "read timed out"),  # type: ignore[arg-type]
    TimeoutError(), ConnectionResetError(104, "reset"), ConnectionRefusedError(),
]
FOR_GOOD: list[BaseException] = [
    elasticsearch.BadRequestError("bad query", _meta(400), {}),
    elasticsearch.AuthenticationException("no", _meta(401), {}),
    elasticsearch.NotFoundError("no index", _meta(404), {}),
    elasticsearch.SSLError("certificate verify failed"),
    elasticsearch.SerializationError("not JSON"),
    _httpx_status(400), _httpx_status(422), _httpx_status(501),
    httpx.UnsupportedProtocol("ftp"),
    _aiohttp_status(403),
    ApiException(status=0, reason="SSL: CERTIFICATE_VERIFY_FAILED"), ApiException(status=404),
    urllib3.exceptions.SSLError("bad certificate"),
    urllib3.exceptions.MaxRetryError(None, "/api",  # type: ignore[arg-type]
                                     urllib3.exceptions.SSLError("bad certificate")),
    ValueError("a bug"), KeyError("x"),
]


@pytest.mark.parametrize("error", TRANSIENT, ids=lambda e: type(e).__name__)
def test_unreachable_timed_out_reset_5xx_and_429_are_transient(error: BaseException) -> None:
    assert is_transient(error)


@pytest.mark.parametrize("error", FOR_GOOD, ids=lambda e: type(e).__name__)
def test_bad_requests_refusals_tls_and_bugs_are_for_good(error: BaseException) -> None:
    assert not is_transient(error)


def test_statuses() -> None:
    assert [s for s in (200, 400, 401, 404, 409, 429, 500, 501, 502, 503, 504, 505)
            if transient_status(s)] == [429, 500, 502, 503, 504]


async def test_each_live_source_reports_a_refused_connection_as_unavailable(
    tmp_path: Path,
) -> None:
    logs = ElasticsearchLogs.connect(_dead_url())
    metrics = PrometheusMetrics.connect(_dead_url())
    cluster = KubernetesCluster.from_kubeconfig(str(_kubeconfig(tmp_path, _dead_url("https"))))
    scenario = load_scenario(SCENARIO)
    query = LogQuery(scenario.now, scenario.now)
    try:
        for attempt, source in ((logs.search(query), "logs"),
                                (metrics.query("up", scenario.now), "metrics"),
                                (cluster.list_objects("Pod", "shop"), "cluster")):
            with pytest.raises(BackendUnavailableError) as down:
                await attempt
            assert down.value.source == source
            assert str(down.value).endswith("connection refused")
    finally:
        await logs.close()
        await metrics.close()
        cluster.close()


def _kubeconfig(folder: Path, server: str) -> Path:
    path = folder / "kubeconfig"
    path.write_text(f"""apiVersion: v1
kind: Config
clusters: [{{name: dead, cluster: {{server: "{server}", insecure-skip-tls-verify: true}}}}]
users: [{{name: viewer, user: {{token: not-a-secret}}}}]
contexts: [{{name: dead, context: {{cluster: dead, user: viewer}}}}]
current-context: dead
""")
    return path


def _toolset(scenario: Scenario, **sources: Any) -> Toolset:
    chosen: Sources = replace(sandbox_sources(scenario), **sources)
    return Toolset(available_tools(chosen), ToolContext(now=scenario.now, sources=chosen),
                   retry=FAST)


async def test_logs_down_suggests_the_pods_own_logs_with_the_calls_namespace_and_service(
) -> None:
    scenario = load_scenario(SCENARIO)
    logs = ElasticsearchLogs.connect(_dead_url())
    toolset = _toolset(scenario, logs=logs)
    result = await toolset.call(ToolCall("1", "logs_search", {
        "namespace": "shop", "service": "checkout", "text": "OOM"}))
    await logs.close()
    assert result.status == "error" and result.attempts == 3
    assert "logs_search failed after 3 attempts in " in result.text
    assert result.text.split("\n")[0].endswith(": connection refused")
    outage = read_outage(result.text)
    assert outage == Outage(frozenset({"logs_search", "logs_error_patterns",
                                       "logs_count_over_time"}), (
        Suggestion("k8s_pod_logs", {"namespace": "shop", "pod": "checkout"}),))
    again = await toolset.call(ToolCall("2", "k8s_pod_logs", {"namespace": "shop",
                                                              "pod": "checkout"}))
    assert again.status == "success" and again.data["pod"].startswith("checkout-")  # it works


async def test_metrics_down_suggests_the_apis_view_and_a_call_without_a_pod_says_so() -> None:
    scenario = load_scenario(SCENARIO)
    metrics = PrometheusMetrics.connect(_dead_url())
    toolset = _toolset(scenario, metrics=metrics)
    signals = await toolset.call(ToolCall("1", "metrics_workload_signals", {
        "namespace": "shop", "workload": "checkout"}))
    query = await toolset.call(ToolCall("2", "metrics_query", {
        "metric": "container_memory_working_set_bytes", "labels": {"namespace": "~sh.p"}}))
    await metrics.close()
    outage = read_outage(signals.text)
    assert outage is not None
    assert outage.down == {"metrics_workload_signals", "metrics_query", "metrics_promql"}
    assert outage.suggestions == (
        Suggestion("k8s_describe_pod", {"namespace": "shop", "pod": "checkout"}),
        Suggestion("k8s_list_pods", {"namespace": "shop"}),
        Suggestion("k8s_events", {"namespace": "shop", "object_name": "checkout"}))
    vague = read_outage(query.text)
    assert vague is not None  # a regular expression names no namespace: nothing carried over
    assert vague.suggestions[0] == Suggestion("k8s_describe_pod", {}, ("namespace", "pod"))
    assert "- k8s_describe_pod {}, also needs namespace, pod: " in query.text


async def test_the_cluster_down_says_to_call_again_and_which_tools_still_work(
    tmp_path: Path,
) -> None:
    scenario = load_scenario(SCENARIO)
    cluster = KubernetesCluster.from_kubeconfig(str(_kubeconfig(tmp_path, _dead_url("https"))))
    toolset = _toolset(scenario, cluster=cluster)
    result = await toolset.call(ToolCall("1", "k8s_list_pods", {"namespace": "shop"}))
    cluster.close()
    assert result.status == "error" and result.attempts == 3
    lines = result.text.split("\n")
    assert lines[0].startswith("ERROR: k8s_list_pods failed after 3 attempts in ")
    assert lines[0].endswith(": connection refused")
    assert lines[1].startswith("The Kubernetes API is down; these tools fail alike until it "
                               "is back: k8s_list_workloads, k8s_list_pods, ")
    assert lines[1].endswith(", k8s_get_object, metrics_workload_signals.")
    assert lines[2] == ("Call them again in a minute or two; these read other sources and "
                        "still work: logs_error_patterns, logs_search, logs_count_over_time, "
                        "metrics_query.")


async def test_a_failure_for_good_is_not_retried_nor_given_an_outage_note() -> None:
    scenario = load_scenario(SCENARIO)
    toolset = _toolset(scenario, logs=None)
    toolset = Toolset(list(ALL_TOOLS), toolset.context, retry=FAST)  # logs offered, absent
    result = await toolset.call(ToolCall("1", "logs_search", {"text": "OOM"}))
    assert result.attempts == 1 and read_outage(result.text) is None
    assert result.text == ("ERROR: logs_search failed: no log store (Elasticsearch) is "
                           "configured")


def test_the_fallback_table_covers_every_source_and_never_suggests_a_tool_of_the_same() -> None:
    assert set(FALLBACKS) == {f.name for f in fields(Sources)} - {"description"}
    assert set(READS) == {t.name for t in ALL_TOOLS + PROMQL_TOOLS}
    for source, fallback in FALLBACKS.items():
        assert fallback.source == source
        for alternative in fallback.alternatives:
            assert source not in READS[alternative.tool.name]
            assert alternative.tool in ALL_TOOLS
        assert fallback.alternatives or fallback.advice

