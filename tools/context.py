"""What a tool function gets besides its arguments."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from engines.constraints import ConstraintSet
from engines.errors import BackendError
from tools.sources.base import ClusterSource, LogSource, MetricSource, Sources


@dataclass
class ToolContext:
    """The investigation's clock, its sources and the constraints in force.

    Tools read time only from `now` (a scenario's clock or the wall clock), and pass
    `constraints.excluded_namespaces` down to cross-namespace queries so that an excluded
    namespace is never returned, not only never asked for.
    """

    now: datetime
    sources: Sources
    constraints: ConstraintSet = field(default_factory=ConstraintSet)

    @property
    def cluster(self) -> ClusterSource:
        if self.sources.cluster is None:
            raise BackendError("no Kubernetes cluster is configured")
        return self.sources.cluster

    @property
    def logs(self) -> LogSource:
        if self.sources.logs is None:
            raise BackendError("no log store (Elasticsearch) is configured")
        return self.sources.logs

    @property
    def metrics(self) -> MetricSource:
        if self.sources.metrics is None:
            raise BackendError("no metric store (Prometheus) is configured")
        return self.sources.metrics

    def allows_namespace(self, namespace: str | None) -> bool:
        return not namespace or namespace not in self.constraints.excluded_namespaces
