"""Data sources behind the tools: protocols, the sandbox that serves a scenario, live ones."""

from tools.sources.base import (
    ClusterSource,
    LogQuery,
    LogRecord,
    LogSource,
    MetricSource,
    PromQL,
    QueryResult,
    Sample,
    Series,
    Sources,
)

__all__ = [
    "ClusterSource",
    "LogQuery",
    "LogRecord",
    "LogSource",
    "MetricSource",
    "PromQL",
    "QueryResult",
    "Sample",
    "Series",
    "Sources",
]
