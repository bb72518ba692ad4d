"""Every tool is well described for a model, validates its arguments, and is offered only
when its source is configured."""

from __future__ import annotations

import re
from typing import Any

import jsonschema
import pytest

from engines.errors import ToolRetryError
from tests.tools._tooling import context
from tools.catalog import ALL_TOOLS, available_tools
from tools.kubernetes import KUBERNETES_TOOLS
from tools.logs import LOG_TOOLS
from tools.metrics import METRIC_TOOLS
from tools.promql import PROMQL_TOOLS
from tools.registry import Tool
from tools.sources.base import Sources

NAME = re.compile(r"^(k8s|logs|metrics)_[a-z]+(_[a-z]+)*$")
PREFIX = {"k8s": KUBERNETES_TOOLS, "logs": LOG_TOOLS, "metrics": METRIC_TOOLS}
PROSE_BOUND = re.compile(r"(?<![\d:T-])\d+ ?[-–] ?\d+(?![\d:T-])|between \d+ and \d+|"
                         r"(at most|at least|up to|no more than) \d+", re.IGNORECASE)
BOUNDS = {("k8s_list_workloads", "limit"): (1, 100), ("k8s_list_pods", "limit"): (1, 100),
          ("k8s_events", "limit"): (1, 100), ("k8s_pod_logs", "tail"): (1, 5000),
          ("logs_search", "limit"): (1, 100), ("logs_error_patterns", "limit"): (1, 50),
          ("logs_count_over_time", "buckets"): (4, 60), ("metrics_query", "limit"): (1, 30),
          ("metrics_promql", "limit"): (1, 30)}


def test_names_are_unique_and_by_backend_and_verb() -> None:
    names = [t.name for t in ALL_TOOLS]
    assert len(names) == len(set(names))
    for tool in ALL_TOOLS:
        assert NAME.match(tool.name), tool.name
        assert tool in PREFIX[tool.name.split("_", 1)[0]]


@pytest.mark.parametrize("tool", ALL_TOOLS, ids=lambda t: t.name)
def test_schema_is_valid_and_every_argument_is_described(tool: Tool) -> None:
    schema = tool.parameters
    jsonschema.Draft202012Validator.check_schema(schema)
    assert schema["type"] == "object"
    assert tool.description and len(tool.description) < 600
    for name, spec in schema["properties"].items():
        assert spec.get("description"), f"{tool.name}.{name} has no description"
    assert tool.read_only and tool.timeout > 0


@pytest.mark.parametrize("tool", ALL_TOOLS, ids=lambda t: t.name)
def test_defaults_are_valid_against_the_schema(tool: Tool) -> None:
    required = {name: _example(spec) for name, spec in tool.parameters["properties"].items()
                if name in tool.parameters["required"]}
    jsonschema.validate(required, tool.parameters)
    arguments = tool.validate(required)
    assert set(arguments) == set(tool.parameters["properties"])
    assert tool.one_line(arguments)


def _example(spec: dict[str, Any]) -> Any:
    return {"string": "x", "integer": 1, "boolean": False}.get(spec.get("type", "string"), "x")


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("k8s_describe_pod", {"namespace": "shop"}),  # pod missing
        ("k8s_list_pods", {"limit": "many"}),
        ("k8s_list_pods", {"namespaces": "shop"}),  # unknown argument
        ("k8s_events", {"type": "Error"}),  # not Warning or Normal
        ("logs_search", {"text": ["a", "b"]}),
        ("metrics_query", {"metric": "up", "labels": "pod=x"}),
        ("k8s_list_pods", {"limit": 500}),  # out of its bounds: said, not clamped
        ("logs_count_over_time", {"buckets": 2}),
    ],
)
def test_bad_arguments_ask_for_a_retry(name: str, arguments: dict[str, Any]) -> None:
    tool = next(t for t in ALL_TOOLS if t.name == name)
    with pytest.raises(ToolRetryError, match=f"bad arguments for {name}"):
        tool.validate(arguments)
    with pytest.raises(ToolRetryError, match="not valid JSON"):
        tool.validate(None, "{oops")


def test_only_configured_toolsets_are_offered() -> None:
    full = context().sources
    assert available_tools(full) == ALL_TOOLS
    assert available_tools(Sources()) == ()
    assert available_tools(Sources(logs=full.logs)) == LOG_TOOLS
    assert available_tools(Sources(cluster=full.cluster, metrics=full.metrics)) == \
        KUBERNETES_TOOLS + METRIC_TOOLS


def test_descriptions_of_calls_for_the_thread() -> None:
    by_name = {t.name: t for t in ALL_TOOLS}
    logs = by_name["k8s_pod_logs"]
    assert logs.one_line({"namespace": "shop", "pod": "x", "previous": True}) == \
        "Reading previous logs of shop/x"
    assert by_name["k8s_list_pods"].one_line({"namespace": None}) == \
        "Listing pods in all namespaces"


def test_bounds_are_in_the_schemas_not_in_the_prose() -> None:
    """A model reads `minimum`/`maximum` and validation enforces them; a bound said only in
    a description is neither checked nor always read."""
    declared = {}
    for tool in ALL_TOOLS + PROMQL_TOOLS:
        for name, prop in tool.parameters["properties"].items():
            said = PROSE_BOUND.search(prop.get("description", ""))
            assert said is None, f"{tool.name}.{name} states {said and said[0]!r} in prose"
            if "minimum" in prop or "maximum" in prop:
                declared[(tool.name, name)] = (prop.get("minimum"), prop.get("maximum"))
    assert declared == BOUNDS
