"""The live log source against a real Elasticsearch node, compared with the sandbox.

The node holds the session scenario's logs.ndjson in logs-<id>. For a grid of queries
(windows, words, levels, service, namespace, excluded namespaces) both sources must give
the same totals, the same newest records in the same order, the same counts in every
bucket and the same top values. Then what only a real store does: shippers' own field
names and text mappings, a bounded sample, and its errors.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import re
import threading
from collections import Counter
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from engines.errors import BackendError
from tests.live._live import logs_of
from tests.services._process import free_port
from tests.services.elasticsearch import ElasticsearchServer
from tools.scenarios import Scenario, load_scenario
from tools.sources.base import LogQuery, LogRecord, LogSource
from tools.sources.live_elasticsearch import MAX_SAMPLE, ElasticsearchLogs, LogFields
from tools.sources.sandbox import SandboxLogs

pytestmark = pytest.mark.live

WARN_AND_UP = ("warn", "warning", "error", "err", "fatal", "critical")


@pytest.fixture(scope="module")
def scenario(live_scenario: Path) -> Scenario:
    return load_scenario(live_scenario)


@pytest.fixture
async def logs(elasticsearch_server: ElasticsearchServer, scenario: Scenario
               ) -> AsyncIterator[ElasticsearchLogs]:
    source = logs_of(elasticsearch_server, scenario.id)
    yield source
    await source.close()


def _queries(scenario: Scenario) -> list[LogQuery]:
    """Windows, words, levels and scopes taken from the scenario's own records."""
    records = scenario.log_records
    services = sorted({r.service for r in records if r.service})
    namespaces = sorted({r.namespace for r in records if r.namespace})
    words = [" ".join(r.message.split()[:2]) for r in records if r.level in WARN_AND_UP][:1]
    words.append(_apart(records))
    now = scenario.now
    queries = []
    for hours, text, levels, service, excluded in itertools.product(
        (1, 24 * 7), (None, *words, "no such words anywhere"), ((), WARN_AND_UP),
        (None, services[0] if services else None), (frozenset(), frozenset(namespaces[:1])),
    ):
        queries.append(LogQuery(now - timedelta(hours=hours), now, text=text, levels=levels,
                                service=service, exclude_namespaces=excluded))
    for namespace in namespaces:
        queries.append(LogQuery(now - timedelta(days=7), now, namespace=namespace))
    queries.append(LogQuery(now - timedelta(minutes=30, seconds=17), now - timedelta(minutes=3)))
    return queries


def _apart(records: list[LogRecord]) -> str:
    """Two frequent words that rarely meet: "all words must match" and "any word" differ."""
    sets = [set(re.findall(r"[a-z]{4,}", r.message.lower())) for r in records]
    common = [w for w, _ in Counter(w for words in sets for w in words).most_common(12)]
    first, second = max(itertools.combinations(common, 2), key=lambda pair: sum(
        (pair[0] in words) != (pair[1] in words) for words in sets))
    return f"{first} {second.upper()}"


async def test_search_counts_and_top_values_match_the_sandbox(
    logs: ElasticsearchLogs, scenario: Scenario
) -> None:
    assert isinstance(logs, LogSource)
    sandbox = SandboxLogs(scenario)
    gate = asyncio.Semaphore(6)  # a few queries at once: the node has several search threads
    fields = ("service", "level", "pod", "http.response.status_code", "no.such.field")

    async def compare(number: int, query: LogQuery) -> None:
        async with gate:
            live, recorded = await logs.search(query, limit=40), await sandbox.search(
                query, limit=40)
            assert live.total == recorded.total, query
            assert [(r.timestamp, r.message, r.level, r.service, r.pod)
                    for r in live.records] == [(r.timestamp, r.message, r.level, r.service,
                                                r.pod) for r in recorded.records], query
            interval = (60, 600, 3600)[number % 3]
            assert await logs.count_over_time(query, interval_seconds=interval) == \
                await sandbox.count_over_time(query, interval_seconds=interval), (query, interval)
            for field in fields[:2] + fields[2 + number % 3:3 + number % 3]:
                assert await logs.top_values(query, field, size=4) == \
                    await sandbox.top_values(query, field, size=4), (query, field)

    await asyncio.gather(*(compare(n, q) for n, q in enumerate(_queries(scenario))))


async def test_a_large_sample_is_bounded_and_ordered_like_the_sandbox(
    logs: ElasticsearchLogs, scenario: Scenario
) -> None:
    query = LogQuery(scenario.now - timedelta(days=7), scenario.now)
    live = await logs.search(query, limit=MAX_SAMPLE * 3)
    recorded = await SandboxLogs(scenario).search(query, limit=MAX_SAMPLE)
    assert len(live.records) == min(MAX_SAMPLE, live.total)
    assert [(r.timestamp, r.message) for r in live.records] == [
        (r.timestamp, r.message) for r in recorded.records]


async def test_every_bucket_is_present_even_without_documents(
    logs: ElasticsearchLogs, scenario: Scenario
) -> None:
    query = LogQuery(scenario.now - timedelta(hours=2), scenario.now, text="zzz-nothing")
    counts = await logs.count_over_time(query, interval_seconds=600)
    assert [n for _, n in counts] == [0] * 13
    assert counts[0][0] <= query.start < counts[1][0]


@pytest.fixture(scope="module")
def shipper_index(elasticsearch_server: ElasticsearchServer, scenario: Scenario) -> Iterator[str]:
    """The scenario's logs as another shipper writes them: nested objects, its own field
    names, default dynamic mapping (text with .keyword sub-fields)."""
    index = "shipper-nested-test"
    lines = []
    for record in scenario.log_records:
        doc = {"ts": record.timestamp.isoformat(), "msg": record.message,
               "lvl": record.level.upper(), "app": {"name": record.service},
               "k8s": {"ns": record.namespace, "pod": record.pod}}
        lines.append(json.dumps({"index": {"_index": index}}) + "\n" + json.dumps(doc) + "\n")
    elasticsearch_server.request("POST", "/_bulk?refresh=true", ndjson="".join(lines).encode())
    yield index
    elasticsearch_server.request("DELETE", f"/{index}")


async def test_custom_field_names_nested_documents_and_text_mappings(
    elasticsearch_server: ElasticsearchServer, shipper_index: str, scenario: Scenario
) -> None:
    fields = LogFields.from_mapping({"timestamp": "ts", "message": "msg", "level": "lvl",
                                     "service": "app.name", "namespace": "k8s.ns",
                                     "pod": "k8s.pod"})
    source = ElasticsearchLogs.connect(elasticsearch_server.url, index=shipper_index,
                                       field_names=fields)
    sandbox = SandboxLogs(scenario)
    try:
        assert (await source.check())[0].endswith(f"{len(scenario.log_records)} documents in "
                                                  f"{shipper_index}, newest "
                                                  f"{scenario.log_records[-1].timestamp.isoformat()}")
        service = scenario.log_records[-1].service
        query = LogQuery(scenario.now - timedelta(days=7), scenario.now, levels=WARN_AND_UP,
                         service=service)
        live, recorded = await source.search(query, limit=10), await sandbox.search(query, limit=10)
        assert live.total == recorded.total
        assert [(r.message, r.service, r.level) for r in live.records] == [
            (r.message, r.service, r.level) for r in recorded.records]
        whole = LogQuery(scenario.now - timedelta(days=7), scenario.now)
        for field in ("service", "level", "pod", "namespace"):
            assert await source.top_values(whole, field) == await sandbox.top_values(whole, field)
        assert await source.field_names_present(["app.name", "k8s.nope"]) == {
            "app.name": True, "k8s.nope": False}
    finally:
        await source.close()
    with pytest.raises(BackendError, match=r"unknown log field\(s\) \['lvel'\]"):
        LogFields.from_mapping({"lvel": "x"})


# ---------------------------------------------------------------------- errors


async def test_unreachable_missing_index_and_empty_pattern_are_reported(
    elasticsearch_server: ElasticsearchServer, scenario: Scenario
) -> None:
    query = LogQuery(scenario.now - timedelta(hours=1), scenario.now)
    url = f"http://127.0.0.1:{free_port()}"
    dead = ElasticsearchLogs.connect(url, timeout=5)
    with pytest.raises(BackendError) as unreachable:
        await dead.search(query)
    assert str(unreachable.value) == f"cannot reach Elasticsearch at {url}: connection refused"
    await dead.close()
    missing = ElasticsearchLogs.connect(elasticsearch_server.url, index="no-such-index")
    with pytest.raises(BackendError, match=r"not found at .*: no such index \[no-such-index\]"):
        await missing.search(query)
    await missing.close()
    empty = ElasticsearchLogs.connect(elasticsearch_server.url, index="nothing-here-*")
    with pytest.raises(BackendError, match=r"no such index \[nothing-here-\*\] \(check the URL "
                                           r"and TRIAGE_LOG_INDEX=nothing-here-\*\)"):
        await empty.check()
    assert (await empty.search(query)).total == 0  # a pattern matching nothing is empty
    await empty.close()


class _Refusing(BaseHTTPRequestHandler):
    """An Elasticsearch stand-in that refuses every request with a fixed status."""

    status = 401

    def do_GET(self) -> None:
        self._refuse()

    def do_POST(self) -> None:
        self._refuse()

    def _refuse(self) -> None:
        kind = "security_exception"
        reason = ("missing authentication credentials" if self.status == 401 else
                  "action [indices:data/read/search] is unauthorized for user [triage]")
        body = json.dumps({"error": {"root_cause": [{"type": kind, "reason": reason}],
                                     "type": kind, "reason": reason},
                           "status": self.status}).encode()
        self.send_response(self.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-Elastic-Product", "Elasticsearch")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


@pytest.mark.parametrize("status", [401, 403])
async def test_refused_credentials_and_privileges_say_what_to_set(
    status: int, scenario: Scenario
) -> None:
    handler = type("Refusing", (_Refusing,), {"status": status})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    source = ElasticsearchLogs.connect(url, api_key="c2VjcmV0OnNlY3JldA==")
    try:
        with pytest.raises(BackendError) as refused:
            await source.search(LogQuery(scenario.now - timedelta(hours=1), scenario.now))
    finally:
        await source.close()
        server.shutdown()
        server.server_close()
    if status == 401:
        assert str(refused.value) == (
            f"Elasticsearch at {url} rejected the credentials (401): check "
            "ELASTICSEARCH_API_KEY or ELASTICSEARCH_USERNAME/ELASTICSEARCH_PASSWORD")
    else:
        assert str(refused.value).startswith(
            "forbidden: the Elasticsearch user cannot read logs-* (needs the index privileges "
            "'read' and 'view_index_metadata' on 'logs-*')")
    assert "c2VjcmV0" not in str(refused.value)
