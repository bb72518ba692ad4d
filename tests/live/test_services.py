"""The real servers are up and hold the scenario's data, as the tools will query it.

Every expectation is computed from the scenario's own files, so these tests hold for
any scenario that TRIAGE_LIVE_SCENARIO names.
"""

from __future__ import annotations

import json
import re
import urllib.error
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import elasticsearch
import kubernetes
import pytest
import yaml

from tests._ci import skip_or_fail
from tests.services.elasticsearch import ElasticsearchServer, index_name
from tests.services.kube import KubeApiServer
from tests.services.kube_loader import read_objects
from tests.services.postgres import PostgresServer
from tests.services.prometheus import PrometheusServer

pytestmark = pytest.mark.live

_SAMPLE = re.compile(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})?\s+(\S+)\s+(\S+)")
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')

SeriesKey = frozenset[tuple[str, str]]


def _need(path: Path) -> Path:
    if not path.is_file():
        skip_or_fail(f"the scenario has no {path.name}")
    return path


def _openmetrics_samples(path: Path) -> dict[SeriesKey, list[tuple[float, float]]]:
    """Series (labels incl. __name__) -> [(timestamp, value)], read from metrics.om."""
    series: dict[SeriesKey, list[tuple[float, float]]] = {}
    for line in path.read_text().splitlines():
        match = _SAMPLE.match(line)
        if line.startswith("#") or not match:
            continue
        name, labels, value, ts = match.groups()
        pairs = {("__name__", name), *_LABEL.findall(labels or "")}
        series.setdefault(frozenset(pairs), []).append((float(ts), float(value)))
    return series


def _scenario_now(scenario: Path) -> datetime:
    header = yaml.safe_load((scenario / "scenario.yaml").read_text())
    return datetime.fromisoformat(str(header["now"]).replace("Z", "+00:00"))


# ---------------------------------------------------------------------------- Prometheus


def test_prometheus_holds_every_backfilled_series(
    prometheus_server: PrometheusServer, live_scenario: Path
) -> None:
    expected = _openmetrics_samples(_need(live_scenario / "metrics.om"))
    start = min(ts for samples in expected.values() for ts, _ in samples)
    end = max(ts for samples in expected.values() for ts, _ in samples)
    found = prometheus_server.series('{__name__=~".+"}', start=start, end=end)
    assert {frozenset(s.items()) for s in found} == set(expected)


def test_promql_returns_the_recorded_samples(
    prometheus_server: PrometheusServer, live_scenario: Path
) -> None:
    expected = _openmetrics_samples(_need(live_scenario / "metrics.om"))
    labels, samples = max(expected.items(), key=lambda item: len(item[1]))
    selector = "{" + ",".join(f'{k}="{v}"' for k, v in sorted(labels)) + "}"
    first, last = samples[0][0], samples[-1][0]
    window = int(last - first) + 1
    counted = prometheus_server.query(f"count_over_time({selector}[{window}s])", time=last)
    assert [float(r["value"][1]) for r in counted] == [len(samples)]
    at_last = prometheus_server.query(selector, time=last)
    assert [float(r["value"][1]) for r in at_last] == [pytest.approx(samples[-1][1])]
    ranged = prometheus_server.query_range(selector, start=first, end=last, step="60s")
    assert len(ranged) == 1 and len(ranged[0]["values"]) >= 2


# ---------------------------------------------------------------------------- Elasticsearch


def _field(doc: dict[str, Any], dotted: str) -> Any:
    """An ECS field written flat ("log.level") or nested ({"log": {"level"}})."""
    if dotted in doc:
        return doc[dotted]
    node: Any = doc
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


def _ndjson(scenario: Path) -> list[dict[str, Any]]:
    lines = _need(scenario / "logs.ndjson").read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_elasticsearch_counts_match_the_ndjson(
    elasticsearch_server: ElasticsearchServer, live_scenario: Path
) -> None:
    docs = _ndjson(live_scenario)
    index = index_name(live_scenario.name)
    assert elasticsearch_server.request("GET", "/logs-*/_count")["count"] >= len(docs)
    assert elasticsearch_server.request("GET", f"/{index}/_count")["count"] == len(docs)
    body = {
        "size": 0,
        "aggs": {
            "level": {"terms": {"field": "log.level", "size": 50}},
            "service": {"terms": {"field": "service.name", "size": 200}},
        },
    }
    aggs = elasticsearch_server.request("POST", f"/{index}/_search", body)["aggregations"]
    for name, field in (("level", "log.level"), ("service", "service.name")):
        got = {b["key"]: b["doc_count"] for b in aggs[name]["buckets"]}
        want = Counter(_field(d, field) for d in docs if _field(d, field) is not None)
        assert got == dict(want), field


def test_elasticsearch_time_range_and_text_search(
    elasticsearch_server: ElasticsearchServer, live_scenario: Path
) -> None:
    docs = _ndjson(live_scenario)
    now = _scenario_now(live_scenario)
    since = now - timedelta(minutes=30)
    recent = [
        d for d in docs
        if since <= datetime.fromisoformat(str(d["@timestamp"]).replace("Z", "+00:00")) <= now
    ]  # fmt: skip
    query = {"range": {"@timestamp": {"gte": since.isoformat(), "lte": now.isoformat()}}}
    index = index_name(live_scenario.name)
    count = elasticsearch_server.request("POST", f"/{index}/_count", {"query": query})["count"]
    assert count == len(recent)
    word = max(
        Counter(str(d["message"]).split()[0].lower() for d in docs).items(), key=lambda i: i[1]
    )[0]
    hits = elasticsearch_server.request(
        "POST", f"/{index}/_count", {"query": {"match": {"message": word}}}
    )
    assert hits["count"] >= 1


def test_the_python_client_talks_to_the_node(elasticsearch_server: ElasticsearchServer) -> None:
    client = elasticsearch.Elasticsearch(elasticsearch_server.url, request_timeout=30)
    try:
        assert client.ping()
        info = client.info()
        assert info["version"]["number"].split(".")[0] == elasticsearch.__versionstr__.split(".")[0]
        assert client.count(index="logs-*")["count"] > 0
    finally:
        client.close()


# ---------------------------------------------------------------------------- Kubernetes


def _recorded(scenario: Path, kind: str) -> list[dict[str, Any]]:
    return [o for o in read_objects(_need(scenario / "cluster.yaml")) if o.get("kind") == kind]


def test_api_server_lists_the_pods_with_their_status(
    kube_server: KubeApiServer, live_scenario: Path
) -> None:
    recorded = {
        (p["metadata"].get("namespace", "default"), p["metadata"]["name"]): p
        for p in _recorded(live_scenario, "Pod")
    }
    listed = {
        (p["metadata"]["namespace"], p["metadata"]["name"]): p
        for p in kube_server.client().get("/api/v1/pods")["items"]
    }
    assert set(listed) == set(recorded)
    for key, pod in recorded.items():
        live = listed[key]["status"]
        assert live.get("phase") == pod.get("status", {}).get("phase"), key
        want = {c["name"]: c for c in pod.get("status", {}).get("containerStatuses", [])}
        got = {c["name"]: c for c in live.get("containerStatuses", [])}
        assert set(got) == set(want), key
        for name, status in want.items():
            assert got[name].get("restartCount") == status.get("restartCount"), (key, name)
            assert got[name].get("lastState") == status.get("lastState", {}) or not status.get(
                "lastState"
            )


def _event_key(event: dict[str, Any]) -> tuple[Any, ...]:
    involved = event["involvedObject"]
    return (
        involved.get("namespace"),
        involved.get("name"),
        event.get("reason"),
        event.get("count"),
        event.get("lastTimestamp"),
    )


def test_events_keep_their_reasons_counts_and_times(
    kube_server: KubeApiServer, live_scenario: Path
) -> None:
    recorded = _recorded(live_scenario, "Event")
    if not recorded:
        skip_or_fail("the scenario has no Events")
    listed = Counter(map(_event_key, kube_server.client().get("/api/v1/events")["items"]))
    wanted = Counter(map(_event_key, recorded))
    # The API server may add events of its own (its IP-allocation repair loop does),
    # so every recorded event must be there, and nothing else is asserted.
    assert listed & wanted == wanted


def _pods_with_logs(scenario: Path) -> list[tuple[str, str, str, bool]]:
    root = scenario / "pod-logs"
    if not root.is_dir():
        skip_or_fail("the scenario has no pod-logs")
    found = []
    for path in sorted(root.glob("*/*/*.log")):
        previous = path.name.endswith(".previous.log")
        container = path.name.removesuffix(".previous.log").removesuffix(".log")
        found.append((path.parent.parent.name, path.parent.name, container, previous))
    return found


def test_pod_logs_come_back_through_the_api_server(
    kube_server: KubeApiServer, live_scenario: Path
) -> None:
    client = kube_server.client()
    logs = _pods_with_logs(live_scenario)
    for namespace, pod, container, previous in logs:
        path = f"/api/v1/namespaces/{namespace}/pods/{pod}/log?container={container}"
        path += "&previous=true" if previous else ""
        suffix = ".previous.log" if previous else ".log"
        want = (live_scenario / "pod-logs" / namespace / pod / f"{container}{suffix}").read_text()
        assert client.request("GET", path, raw=True) == want, path
        tail = client.request("GET", path + "&tailLines=2", raw=True)
        assert tail.splitlines() == want.splitlines()[-2:]


def test_the_kubernetes_client_reads_pods_and_logs(
    kube_server: KubeApiServer, live_scenario: Path
) -> None:
    api_client = kubernetes.config.new_client_from_config(config_file=str(kube_server.kubeconfig))
    kubelet = kube_server.kubelet
    assert kubelet is not None
    try:
        core = kubernetes.client.CoreV1Api(api_client)
        pods = core.list_pod_for_all_namespaces().items
        assert len(pods) == len(_recorded(live_scenario, "Pod"))
        nodes = core.list_node().items
        assert all(n.status.daemon_endpoints.kubelet_endpoint.port == kubelet.port for n in nodes)
        if (live_scenario / "pod-logs").is_dir():
            namespace, pod, container, previous = _pods_with_logs(live_scenario)[0]
            text = core.read_namespaced_pod_log(
                pod, namespace, container=container, previous=previous, tail_lines=5
            )
            assert 0 < len(text.splitlines()) <= 5
    finally:
        api_client.close()


def test_viewer_token_reads_but_cannot_see_secrets_or_write(kube_server: KubeApiServer) -> None:
    viewer = kube_server.client(viewer=True)
    assert viewer.get("/api/v1/pods")["items"]
    assert viewer.get("/api/v1/nodes")["items"]
    for method, path, body in (
        ("GET", "/api/v1/namespaces/default/secrets", None),
        ("DELETE", "/api/v1/namespaces/default/configmaps/anything", None),
        ("POST", "/api/v1/namespaces", {"metadata": {"name": "nope"}}),
    ):
        with pytest.raises(urllib.error.HTTPError) as caught:
            viewer.request(method, path, body)
        assert caught.value.code == 403, (method, path)


# ---------------------------------------------------------------------------- PostgreSQL


def test_postgres_answers_queries(postgres_server: PostgresServer) -> None:
    assert postgres_server.psql("SELECT 6 * 7") == "42"
    postgres_server.psql("CREATE TABLE probe (id serial PRIMARY KEY, note text)")
    postgres_server.psql("INSERT INTO probe (note) VALUES ('a'), ('b')")
    assert postgres_server.psql("SELECT count(*) FROM probe") == "2"
    assert postgres_server.dsn.startswith("postgresql://triage@127.0.0.1:")
