"""What a data source must answer, whatever is behind it (a scenario or a real backend).

The interfaces are deliberately close to the backends' own models (Kubernetes objects as
the dicts `kubectl get -o json` prints, ECS log records, Prometheus series) so that the
sandbox and the live implementations stay thin and the tools do the summarising once.
Every method is async; a live source runs blocking clients in worker threads. A source
raises `BackendError` with a message a human (and the model) can act on.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, runtime_checkable

KubeObject = dict[str, Any]


@runtime_checkable
class ClusterSource(Protocol):
    """Read-only view of a Kubernetes cluster. Secrets are never read."""

    async def list_objects(
        self,
        kind: str,
        namespace: str | None = None,
        *,
        label_selector: Mapping[str, str] | None = None,
        field_selector: Mapping[str, str] | None = None,
    ) -> list[KubeObject]:
        """Objects of a kind (scenario-format.md's kinds), in one namespace or all.

        `field_selector` supports the keys Kubernetes supports for that kind, notably
        `involvedObject.kind`, `involvedObject.name`, `reason` and `type` for Events, and
        `spec.nodeName` and `status.phase` for Pods.
        """
        ...

    async def get_object(self, kind: str, namespace: str, name: str) -> KubeObject | None:
        """One object, or None when it does not exist. `namespace` is "" for Nodes."""
        ...

    async def pod_logs(
        self,
        namespace: str,
        pod: str,
        container: str | None = None,
        *,
        previous: bool = False,
        tail_lines: int | None = None,
        since: datetime | None = None,
    ) -> str:
        """A container's log text, current or previous instance. Raises BackendError if none."""
        ...


@dataclass(frozen=True, slots=True)
class LogRecord:
    """One log document, ECS fields flattened to the ones the tools use."""

    timestamp: datetime
    message: str
    level: str = ""
    service: str = ""
    namespace: str = ""
    pod: str = ""
    container: str = ""
    fields: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class LogQuery:
    """A filter over the log store. Every field narrows; None means any.

    `text` is a full-text query on the message (all words must match, case-insensitive);
    `exclude_namespaces` is how constraints keep a namespace out of cross-namespace queries.
    """

    start: datetime
    end: datetime
    text: str | None = None
    levels: tuple[str, ...] = ()
    service: str | None = None
    namespace: str | None = None
    pod: str | None = None
    exclude_namespaces: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class LogHits:
    """Matching records, newest first, bounded by a limit, with the true total."""

    total: int
    records: Sequence[LogRecord]


@runtime_checkable
class LogSource(Protocol):
    """A log store (Elasticsearch in live use). Counting and grouping happen in the store."""

    async def search(self, query: LogQuery, *, limit: int = 100) -> LogHits:
        """Matching records, newest first, at most `limit` of them, and the total count."""
        ...

    async def count_over_time(
        self, query: LogQuery, *, interval_seconds: int
    ) -> list[tuple[datetime, int]]:
        """Matching records per time bucket, oldest first, every bucket present."""
        ...

    async def top_values(self, query: LogQuery, field: str, *, size: int = 10) -> list[
        tuple[str, int]
    ]:
        """The most frequent values of a field (`service`, `namespace`, `pod`, `level`,
        or any ECS field name such as `error.type`) among matching records."""
        ...


@dataclass(frozen=True, slots=True)
class Sample:
    timestamp: datetime
    value: float


@dataclass(frozen=True, slots=True)
class Series:
    """One time series: metric name, labels and samples in time order."""

    metric: str
    labels: Mapping[str, str]
    samples: Sequence[Sample]


@dataclass(frozen=True, slots=True)
class QueryResult:
    """A PromQL answer: `matrix` and `vector` carry series, `scalar`/`string` one value."""

    result_type: str
    series: list[Series]
    value: float | str | None = None
    step_seconds: int | None = None


class PromQL(Protocol):
    """A PromQL engine: what the raw-PromQL tool needs beyond raw series."""

    async def query(self, promql: str, at: datetime) -> QueryResult:
        """An instant query evaluated at `at`."""
        ...

    async def query_range(
        self, promql: str, start: datetime, end: datetime, step_seconds: int
    ) -> QueryResult:
        """A range query from `start` to `end`, a point every `step_seconds` (or more,
        if the engine bounds the number of points)."""
        ...


@runtime_checkable
class MetricSource(Protocol):
    """A metric store (Prometheus in live use).

    Besides raw series, the tools ask it which metric names exist (to suggest one when a
    name matches nothing), which type a metric's family declares (a counter is read as a
    rate, a gauge as it is) and whether it evaluates PromQL itself (the `metrics_promql`
    tool is offered only then).
    """

    async def series(
        self,
        metric: str,
        matchers: Mapping[str, str],
        start: datetime,
        end: datetime,
        *,
        step_seconds: int = 60,
    ) -> list[Series]:
        """Raw samples of every series of `metric` whose labels equal `matchers`.

        A matcher value starting with `~` is a regular expression (as PromQL's `=~`).
        Samples come at most every `step_seconds`.
        """
        ...

    def metric_names(self) -> list[str]:
        """The metric names the store holds, as far as it knows without asking (a live
        store answers from its last refresh); empty when it cannot tell."""
        ...

    async def metric_type(self, metric: str) -> str | None:
        """The type declared for the family `metric` belongs to (`counter`, `gauge`,
        `histogram`, `summary`...), or None when nothing declares one."""
        ...

    @property
    def promql(self) -> PromQL | None:
        """The store's own PromQL engine, or None when it has none (a scenario is raw
        samples, not a PromQL engine)."""
        ...


@dataclass(frozen=True, slots=True)
class Sources:
    """The three sources an investigation reads; any may be missing (not configured)."""

    cluster: ClusterSource | None = None
    logs: LogSource | None = None
    metrics: MetricSource | None = None
    description: str = ""


FAMILY_SUFFIXES = ("_total", "_count", "_sum", "_bucket", "_created")


def family_of(metric: str) -> str:
    """The metric family a sample name belongs to: `http_requests_total` → `http_requests`."""
    suffix = next((s for s in FAMILY_SUFFIXES if metric.endswith(s)), "")
    return metric[: -len(suffix)] if suffix else metric


def sample_type(metric: str, types: Mapping[str, str]) -> str | None:
    """The declared type of the family a sample name belongs to: `http_requests_total` is
    in the counter family `http_requests`, `latency_seconds_count` in a histogram's."""
    return types.get(metric) or types.get(family_of(metric))
