"""The live metric source: Prometheus' HTTP API over async httpx.

`series()` is the sandbox's contract as a range query: a plain selector
(`{__name__="m", label="v", label=~"regex"}`) evaluated by `query_range` at `start`,
`start + step`, ... with Prometheus' own lookback, which is exactly what the sandbox
computes from a scenario. The workload signals compute rates, ratios and quantiles from
those raw series in Python (`tools._signals`), so the sandbox and a live server give the
same answers from the same samples. Raw PromQL (`query`, `query_range`) is here too, for
the live-only `metrics_promql` tool.

Ranges are bounded: at most `MAX_POINTS` points per series (the step grows to fit), and
metric and label names are validated so that nothing but a selector reaches the server.
"""

from __future__ import annotations

import math
import re
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

import httpx

from engines.errors import BackendError, BackendQueryError, BackendUnavailableError
from tools.sources.base import PromQL, QueryResult, Sample, Series, family_of, sample_type
from tools.sources.transient import failure, transient_status

MAX_POINTS = 1100  # per series; Prometheus itself refuses more than 11,000
_NAME = re.compile(r"^[a-zA-Z_:][a-zA-Z0-9_:]*$")
_LABEL = re.compile(r"^[a-zA-Z_][a-zA-Z0-9_]*$")
_NAMES_TTL = 300.0  # seconds a cached list of metric names is trusted
SOURCE = "metrics"  # the `Sources` field this source fills, named by its errors


def selector(metric: str, matchers: Mapping[str, str]) -> str:
    """`metric` and matchers as a PromQL selector; a value starting with `~` is `=~`."""
    if not _NAME.match(metric):
        raise BackendQueryError(f"invalid metric name {metric!r}")
    parts = [f"__name__={_quote(metric)}"]
    for label, value in matchers.items():
        if not _LABEL.match(label) or label == "__name__":
            raise BackendQueryError(f"invalid label name {label!r}")
        if value.startswith("~"):
            parts.append(f"{label}=~{_quote(value[1:])}")
        else:
            parts.append(f"{label}={_quote(value)}")
    return "{" + ", ".join(parts) + "}"


def _quote(value: str) -> str:
    """A PromQL double-quoted string (Go escaping: backslash, quote, newline)."""
    escaped = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def bounded_step(start: datetime, end: datetime, step_seconds: int) -> int:
    """The step, grown so that a series has at most MAX_POINTS points."""
    span = max(0.0, (end - start).total_seconds())
    return max(step_seconds, math.ceil(span / (MAX_POINTS - 1)) if span else step_seconds)


class PrometheusMetrics:
    """A MetricSource over one Prometheus server, its own PromQL engine (module docstring)."""

    def __init__(self, client: httpx.AsyncClient, *, url: str) -> None:
        self._client = client
        self.url = url
        self.description = f"prometheus {url}"
        self._names: list[str] = []
        self._names_at = 0.0
        self._types: dict[str, str] = {}

    @classmethod
    def connect(
        cls,
        url: str,
        *,
        token: str | None = None,
        username: str | None = None,
        password: str | None = None,
        ca_certs: str | None = None,
        verify_certs: bool = True,
        timeout: float = 15.0,
    ) -> PrometheusMetrics:
        """A source with its own client: a bearer token wins over basic auth."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        auth = httpx.BasicAuth(username, password or "") if username and not token else None
        verify: bool | str = ca_certs if ca_certs else verify_certs
        client = httpx.AsyncClient(base_url=url.rstrip("/"), headers=headers, auth=auth,
                                   verify=verify, timeout=httpx.Timeout(timeout, connect=5.0))
        return cls(client, url=url.rstrip("/"))

    async def close(self) -> None:
        await self._client.aclose()

    # ------------------------------------------------------------------ MetricSource

    async def series(
        self,
        metric: str,
        matchers: Mapping[str, str],
        start: datetime,
        end: datetime,
        *,
        step_seconds: int = 60,
    ) -> list[Series]:
        if step_seconds <= 0:
            raise BackendError("step_seconds must be positive")
        result = await self.query_range(selector(metric, matchers), start, end, step_seconds)
        if not result.series and time.monotonic() - self._names_at > _NAMES_TTL:
            await self.refresh_metric_names()  # so the "similar names" hint is current
        return [Series(metric, s.labels, s.samples) for s in result.series]

    def metric_names(self) -> list[str]:
        """Metric names known to the server, as of the last refresh (for "did you mean")."""
        return list(self._names)

    async def metric_type(self, metric: str) -> str | None:
        """The type scrape targets declare for a metric's family (/api/v1/metadata), or
        None when the server has no metadata for it (data written by backfill has none).
        Asked once per family."""
        family = family_of(metric)
        if family not in self._types:
            found: dict[str, str] = {}
            for name in dict.fromkeys((metric, family)):
                data = await self._get("/api/v1/metadata", {"metric": name})
                for entry in (data or {}).get(name) or []:
                    if isinstance(entry, dict) and entry.get("type"):
                        found[name] = str(entry["type"])
                        break
            self._types[family] = sample_type(metric, found) or ""
        return self._types[family] or None

    @property
    def promql(self) -> PromQL:
        """Prometheus evaluates PromQL: `query` and `query_range` below."""
        return self

    async def refresh_metric_names(self) -> list[str]:
        data = await self._get("/api/v1/label/__name__/values", {})
        self._names = sorted(str(n) for n in data)
        self._names_at = time.monotonic()
        return self._names

    # ------------------------------------------------------------------ raw PromQL

    async def query(self, promql: str, at: datetime) -> QueryResult:
        """An instant query at `at`."""
        data = await self._post("/api/v1/query", {"query": promql, "time": _seconds(at)})
        return _result(data)

    async def query_range(
        self, promql: str, start: datetime, end: datetime, step_seconds: int
    ) -> QueryResult:
        """A range query from `start` to `end`, points every step (bounded, see MAX_POINTS)."""
        step = bounded_step(start, end, step_seconds)
        data = await self._post("/api/v1/query_range", {
            "query": promql, "start": _seconds(start), "end": _seconds(end), "step": str(step)})
        result = _result(data)
        return QueryResult(result.result_type, result.series, result.value, step)

    # ------------------------------------------------------------------ health

    async def check(self, expected: tuple[str, ...] = ()) -> list[str]:
        """Reachable, authorised, and (when asked) holding the expected metric names.
        Raises BackendError when unusable; returns notes (missing metrics) otherwise."""
        build = await self._get("/api/v1/status/buildinfo", {})
        names = set(await self.refresh_metric_names())
        if not names:
            raise BackendError(f"Prometheus at {self.url} holds no metric at all")
        notes = [f"Prometheus {build.get('version', '?')}: {len(names)} metric names"]
        missing = [name for name in expected if name not in names]
        if missing:
            notes.append(f"missing metrics: {', '.join(missing)}")
        return notes

    # ------------------------------------------------------------------ plumbing

    async def _post(self, path: str, form: dict[str, str]) -> Any:
        return await self._send("POST", path, data=form)

    async def _get(self, path: str, params: dict[str, str]) -> Any:
        return await self._send("GET", path, params=params)

    async def _send(self, method: str, path: str, **kwargs: Any) -> Any:
        """One API call; every failure becomes a BackendError that says what to do."""
        try:
            response = await self._client.request(method, path, **kwargs)
        except httpx.ConnectError as exc:
            raise failure(f"cannot reach Prometheus at {self.url}: {_why(exc)}", exc,
                          source=SOURCE) from None
        except httpx.TimeoutException as exc:
            raise failure(f"Prometheus at {self.url} timed out on {path}", exc,
                          source=SOURCE) from None
        except httpx.HTTPError as exc:
            reason = str(exc) or type(exc).__name__
            raise failure(f"Prometheus at {self.url} failed: {reason}", exc,
                          source=SOURCE) from None
        if transient_status(response.status_code):  # a 503 from a proxy has no JSON
            raise BackendUnavailableError(
                f"Prometheus at {self.url} answered {response.status_code} on {path}: "
                f"{_error_text(response)}", source=SOURCE)
        if response.status_code == 401:
            raise BackendError(f"Prometheus at {self.url} rejected the credentials (401): "
                               "check PROMETHEUS_TOKEN or PROMETHEUS_USERNAME/PASSWORD")
        if response.status_code == 403:
            raise BackendError(f"forbidden: Prometheus at {self.url} refused {path} (403): "
                               "the credentials lack read access to the query API")
        if response.status_code == 404:
            raise BackendError(f"not found: {self.url}{path} (404): PROMETHEUS_URL must be "
                               "the server's root, e.g. http://prometheus:9090")
        try:
            body = response.json()
        except ValueError:
            raise BackendError(f"Prometheus at {self.url} answered {response.status_code} "
                               f"with no JSON on {path}: {response.text[:200]}") from None
        if body.get("status") != "success":
            kind, error = body.get("errorType", "error"), body.get("error", "")
            if response.status_code in (400, 422):  # bad_data, execution: the query's fault
                raise BackendQueryError(f"Prometheus rejected the query ({kind}): {error}")
            raise BackendError(f"Prometheus rejected the query ({kind}): {error}")
        return body.get("data")


def _seconds(moment: datetime) -> str:
    return f"{moment.timestamp():.3f}"


def _result(data: Mapping[str, Any]) -> QueryResult:
    kind = str(data.get("resultType", ""))
    raw = data.get("result")
    if kind in ("scalar", "string"):
        value = raw[1] if isinstance(raw, list) and len(raw) == 2 else None
        return QueryResult(kind, [], float(value) if kind == "scalar" and value else value)
    series = []
    for item in raw or []:
        labels = dict(item.get("metric") or {})
        name = labels.pop("__name__", "")
        points = item.get("values") or ([item["value"]] if "value" in item else [])
        samples = [Sample(datetime.fromtimestamp(float(t), UTC), float(v)) for t, v in points]
        series.append(Series(name, labels, samples))
    return QueryResult(kind, series)


def _error_text(response: httpx.Response) -> str:
    """What a failed answer says: Prometheus' `error` field, else the start of the body."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict) and body.get("error"):
        return str(body["error"])[:200]
    return " ".join(response.text.split())[:200] or response.reason_phrase


def _why(exc: httpx.ConnectError) -> str:
    """The root cause of a failed connection ("All connection attempts failed" says none)."""
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ConnectionRefusedError) or "refused" in str(cause).lower():
            return "connection refused"
        if "name or service not known" in str(cause).lower():
            return "unknown host"
        cause = cause.__cause__ or cause.__context__
    return str(exc) or type(exc).__name__
