"""The live log source: Elasticsearch through the official async client.

Every question is answered by Elasticsearch itself: filters are a `bool` query, counts over
time a `date_histogram` (with `extended_bounds`, so every bucket of the window is present),
top values a `terms` aggregation, and totals are exact (`track_total_hits`). Only a bounded
sample of documents ever comes back (at most `MAX_SAMPLE`, the newest first), which is what
pattern mining needs; nothing pulls an index into memory.

The semantics are the sandbox's (`tools.sources.sandbox.SandboxLogs`), so an investigation
reads the same answers from a scenario and from a live store: the text must match all its
words (a `match` query with the `and` operator), levels compare case-insensitively, excluded
namespaces are a `must_not`, times are inclusive at both ends, ties in time come newest-
indexed first. Field names are ECS by default and configurable; documents may be nested or
flat-dotted, and a `text` field with a `.keyword` sub-field is aggregated on the latter.
Client errors become BackendErrors that say what to do (tools.sources._elasticsearch_errors).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, fields
from datetime import datetime, timedelta
from typing import Any

from elasticsearch import AsyncElasticsearch

from engines.errors import BackendError, BackendQueryError
from tools.scenarios import flatten, parse_time
from tools.sources._elasticsearch_errors import call_elasticsearch
from tools.sources.base import LogHits, LogQuery, LogRecord

DEFAULT_INDEX = "logs-*"
MAX_SAMPLE = 5000  # documents one search may return (within index.max_result_window)
_FULL_SOURCE_UP_TO = 200  # larger samples fetch only the fields a LogRecord holds
_MAX_BUCKETS = 20_000  # below search.max_buckets (65,536)


@dataclass(frozen=True, slots=True)
class LogFields:
    """Where each LogRecord field lives in the documents (ECS names by default)."""

    timestamp: str = "@timestamp"
    message: str = "message"
    level: str = "log.level"
    service: str = "service.name"
    namespace: str = "kubernetes.namespace"
    pod: str = "kubernetes.pod.name"
    container: str = "kubernetes.container.name"

    @classmethod
    def from_mapping(cls, names: Mapping[str, str] | None) -> LogFields:
        """From a config section; unknown keys are refused so a typo is not ignored."""
        known = {f.name for f in fields(cls)}
        unknown = set(names or {}) - known
        if unknown:
            raise BackendError(f"unknown log field(s) {sorted(unknown)}; known: {sorted(known)}")
        return cls(**{k: str(v) for k, v in (names or {}).items()})


# The tools' short names for fields, as the sandbox accepts them in top_values().
_ALIASES = {"service": "service", "service.name": "service", "namespace": "namespace",
            "kubernetes.namespace": "namespace", "pod": "pod", "kubernetes.pod.name": "pod",
            "container": "container", "kubernetes.container.name": "container",
            "level": "level", "log.level": "level"}


class ElasticsearchLogs:
    """A LogSource over an index pattern of an Elasticsearch cluster (module docstring)."""

    def __init__(
        self,
        client: AsyncElasticsearch,
        *,
        url: str = "",
        index: str = DEFAULT_INDEX,
        field_names: LogFields | None = None,
    ) -> None:
        self._client = client
        self.url = url
        self.index = index
        self.fields = field_names or LogFields()
        self._aggregatable: dict[str, str] = {}  # configured name -> name to filter/aggregate
        self.description = f"elasticsearch {url} index {index}"

    @classmethod
    def connect(
        cls,
        url: str,
        *,
        index: str = DEFAULT_INDEX,
        field_names: LogFields | None = None,
        api_key: str | None = None,
        username: str | None = None,
        password: str | None = None,
        ca_certs: str | None = None,
        verify_certs: bool = True,
        timeout: float = 15.0,
    ) -> ElasticsearchLogs:
        """A source with its own client: API key wins over basic auth; CA bundle optional."""
        # No retries in the client: the toolset retries transient failures itself, within
        # the tool's time budget, and says so in the observation (tools.retry).
        options: dict[str, Any] = {"request_timeout": timeout, "max_retries": 0,
                                   "retry_on_timeout": False}
        if api_key:
            options["api_key"] = api_key
        elif username:
            options["basic_auth"] = (username, password or "")
        if ca_certs:
            options["ca_certs"] = ca_certs
        if not verify_certs:
            options["verify_certs"] = False
            options["ssl_show_warn"] = False
        client = AsyncElasticsearch(url, **options)
        return cls(client, url=url, index=index, field_names=field_names)

    async def close(self) -> None:
        await self._client.close()

    # ------------------------------------------------------------------ LogSource

    async def search(self, query: LogQuery, *, limit: int = 100) -> LogHits:
        size = max(0, min(limit, MAX_SAMPLE))
        body: dict[str, Any] = {
            "query": await self._query(query),
            "size": size,
            "track_total_hits": True,
            # Newest first; among equal times the last indexed first, as the sandbox orders.
            "sort": [{self.fields.timestamp: {"order": "desc"}}, {"_doc": {"order": "desc"}}],
        }
        whole = size <= _FULL_SOURCE_UP_TO
        if not whole:
            body["_source"] = [getattr(self.fields, f.name) for f in fields(LogFields)]
        answer = await self._call(lambda: self._client.search(
            index=self.index, filter_path=["hits.total", "hits.hits._source"], **body))
        hits = answer.get("hits") or {}
        records = [self._record(hit.get("_source") or {}, whole=whole)
                   for hit in hits.get("hits") or []]
        return LogHits(total=int(hits["total"]["value"]), records=records)

    async def count_over_time(
        self, query: LogQuery, *, interval_seconds: int
    ) -> list[tuple[datetime, int]]:
        if interval_seconds <= 0:
            raise BackendError("interval_seconds must be positive")
        step = timedelta(seconds=interval_seconds)
        epoch = datetime.fromtimestamp(0, query.start.tzinfo)
        first = epoch + step * ((query.start - epoch) // step)  # date_histogram's alignment
        buckets = int((query.end - first) // step) + 1
        if buckets > _MAX_BUCKETS:
            raise BackendQueryError(f"{buckets} buckets is too many; use a longer interval")
        histogram = {"date_histogram": {
            "field": self.fields.timestamp, "fixed_interval": f"{interval_seconds}s",
            "min_doc_count": 0,
            "extended_bounds": {"min": _millis(query.start), "max": _millis(query.end)}}}
        filtered = await self._query(query)
        answer = await self._call(lambda: self._client.search(
            index=self.index, query=filtered, size=0, track_total_hits=False,
            aggs={"over_time": histogram}))
        counts = {int(b["key"]): int(b["doc_count"])
                  for b in answer["aggregations"]["over_time"]["buckets"]}
        grid = [first + step * i for i in range(buckets)]
        return [(at, counts.get(_millis(at), 0)) for at in grid]

    async def top_values(
        self, query: LogQuery, field: str, *, size: int = 10
    ) -> list[tuple[str, int]]:
        alias = _ALIASES.get(field)
        name = await self._aggregatable_name(getattr(self.fields, alias) if alias else field)
        if name is None:
            return []
        wanted = max(size, 25) if alias == "level" else size
        terms = {"terms": {"field": name, "size": max(1, wanted),
                           "order": [{"_count": "desc"}, {"_key": "asc"}]}}
        filtered = await self._query(query)
        answer = await self._call(lambda: self._client.search(
            index=self.index, query=filtered, size=0, track_total_hits=False,
            aggs={"top": terms}))
        counts: Counter[str] = Counter()
        for bucket in answer["aggregations"]["top"]["buckets"]:
            value = str(bucket.get("key_as_string", bucket["key"]))
            if value != "":
                counts[value.lower() if alias == "level" else value] += int(bucket["doc_count"])
        return sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:size]

    # ------------------------------------------------------------------ health

    async def check(self) -> list[str]:
        """Reachable, a supported version, and the index pattern holds documents with a
        timestamp; raises BackendError otherwise. Returns notes worth showing."""
        info = await self._call(self._client.info)
        version = str((info.get("version") or {}).get("number", "?"))
        if not version.startswith(("8.", "9.")):
            raise BackendError(f"Elasticsearch {version} at {self.url} is not supported "
                               "(the client speaks 8.x)")
        answer = await self._call(lambda: self._client.search(
            index=self.index, size=1, track_total_hits=True,
            query={"exists": {"field": self.fields.timestamp}},
            sort=[{self.fields.timestamp: {"order": "desc"}}],
            source_includes=[self.fields.timestamp],
            allow_no_indices=False))
        total = int(answer["hits"]["total"]["value"])
        if total == 0:
            raise BackendError(f"no document with {self.fields.timestamp} in {self.index} at "
                               f"{self.url}; check TRIAGE_LOG_INDEX and the log shipper")
        newest = flatten(answer["hits"]["hits"][0]["_source"]).get(self.fields.timestamp)
        await self._resolve_filter_fields()
        return [f"Elasticsearch {version}: {total} documents in {self.index}, newest {newest}"]

    async def field_names_present(self, names: list[str]) -> dict[str, bool]:
        """Whether each field is mapped in the index pattern and can be filtered on."""
        resolved = await self._field_caps(names)
        return {name: resolved.get(name) is not None for name in names}

    # ------------------------------------------------------------------ plumbing

    async def _query(self, query: LogQuery) -> dict[str, Any]:
        await self._resolve_filter_fields()
        return self._query_now(query)

    def _query_now(self, query: LogQuery) -> dict[str, Any]:
        """The `bool` query of a LogQuery, with field names already resolved."""
        f = self.fields
        # Inclusive bounds at millisecond precision, rounded inwards like the sandbox's
        # `start <= t <= end` on millisecond timestamps.
        clauses: list[dict[str, Any]] = [{"range": {f.timestamp: {
            "gte": math.ceil(query.start.timestamp() * 1000),
            "lte": math.floor(query.end.timestamp() * 1000), "format": "epoch_millis"}}}]
        if query.text:
            clauses.append({"match": {f.message: {"query": query.text, "operator": "and"}}})
        if query.levels:
            level = self._resolved(f.level)
            clauses.append({"bool": {"minimum_should_match": 1, "should": [
                {"term": {level: {"value": name, "case_insensitive": True}}}
                for name in query.levels]}})
        for name, value in ((f.service, query.service), (f.namespace, query.namespace),
                            (f.pod, query.pod)):
            if value is not None:
                clauses.append({"term": {self._resolved(name): value}})
        body: dict[str, Any] = {"filter": clauses}
        if query.exclude_namespaces:
            body["must_not"] = [{"terms": {self._resolved(f.namespace):
                                           sorted(query.exclude_namespaces)}}]
        return {"bool": body}

    def _resolved(self, name: str) -> str:
        return self._aggregatable.get(name, name)

    async def _resolve_filter_fields(self) -> None:
        """Once: use `<field>.keyword` where a filter field is mapped as analysed text."""
        if self._aggregatable:
            return
        f = self.fields
        names = [f.level, f.service, f.namespace, f.pod, f.container]
        resolved = await self._field_caps(names)
        self._aggregatable.update({n: resolved.get(n) or n for n in names})

    async def _aggregatable_name(self, name: str) -> str | None:
        """The field to aggregate `name` on; None when no document has it (no values)."""
        if name not in self._aggregatable:
            resolved = await self._field_caps([name])
            if name not in resolved:
                return None  # not mapped yet: not cached, documents may bring it later
            usable = resolved[name]
            if usable is None:
                raise BackendError(f"field {name!r} is analysed text in {self.index} and has "
                                   "no .keyword sub-field: it cannot be counted by value")
            self._aggregatable[name] = usable
        return self._aggregatable[name]

    async def _field_caps(self, names: list[str]) -> dict[str, str | None]:
        """For each name, itself or its `.keyword` sub-field, whichever is aggregatable."""
        wanted = names + [f"{n}.keyword" for n in names]
        answer = await self._call(lambda: self._client.field_caps(
            index=self.index, fields=wanted, ignore_unavailable=True,
            allow_no_indices=True))
        caps = answer.get("fields") or {}

        def usable(name: str) -> bool:
            return any(c.get("aggregatable") for c in (caps.get(name) or {}).values())

        found: dict[str, str | None] = {}
        for name in names:
            if usable(name):
                found[name] = name
            elif usable(f"{name}.keyword"):
                found[name] = f"{name}.keyword"
            elif name in caps:
                found[name] = None  # mapped, but only as analysed text
        return found

    def _record(self, source: Mapping[str, Any], *, whole: bool = True) -> LogRecord:
        """A document as a LogRecord; `fields` holds every (flattened) field of a whole
        document, and stays empty for the trimmed documents of a large sample."""
        f = self.fields
        flat = flatten(dict(source)) if whole else {}

        def get(name: str) -> Any:
            return flat.get(name) if whole else _lookup(source, name)

        return LogRecord(
            timestamp=parse_time(get(f.timestamp)),
            message=str(get(f.message) or ""),
            level=str(get(f.level) or "").lower(),
            service=str(get(f.service) or ""),
            namespace=str(get(f.namespace) or ""),
            pod=str(get(f.pod) or ""),
            container=str(get(f.container) or ""),
            fields=flat,
        )

    async def _call(self, request: Callable[[], Awaitable[Any]]) -> Any:
        """Run one request; every client error becomes a BackendError saying what to do."""
        return await call_elasticsearch(request, url=self.url, index=self.index)


def _lookup(source: Mapping[str, Any], dotted: str) -> Any:
    """A field of a flat (`{"log.level": ...}`) or nested (`{"log": {"level": ...}}`)
    document, or of a mix of both, without flattening all of it."""
    if dotted in source:
        return source[dotted]
    head, _, rest = dotted.partition(".")
    while rest:
        node = source.get(head)
        if isinstance(node, Mapping):
            found = _lookup(node, rest)
            if found is not None:
                return found
        step, _, rest = rest.partition(".")
        head = f"{head}.{step}"
        if head in source and not rest:
            return source[head]
    return None


def _millis(moment: datetime) -> int:
    return round(moment.timestamp() * 1000)


__all__ = ["DEFAULT_INDEX", "MAX_SAMPLE", "ElasticsearchLogs", "LogFields"]
