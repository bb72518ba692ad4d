"""The ranked core of the catalog and `list_tools`, which the toolset answers itself."""

from __future__ import annotations

from bot.evaluation import scenario_refs
from engines.constraints import ConstraintSet
from engines.model import ToolCall
from engines.short_catalog import LIST_TOOLS, read_listing
from engines.steering import Vocabulary, read_reply
from tests.bench.bench_tools import measure
from tools.catalog import ALL_TOOLS, CORE_SIZE, CORE_TOOLS, RANKED_TOOLS, TOOL_USE, rank
from tools.context import ToolContext
from tools.promql import PROMQL_TOOLS
from tools.scenarios import load_scenario
from tools.sources.sandbox import sandbox_sources
from tools.toolset import Toolset

SCENARIO = load_scenario("checkout-oom")


def toolset(*rules: str) -> Toolset:
    constraints = ConstraintSet()
    for rule in rules:
        vocab = Vocabulary.of(tools=[t.name for t in ALL_TOOLS])
        for constraint in read_reply(rule, vocab).constraints:
            constraints.add(constraint)
    context = ToolContext(now=SCENARIO.now, sources=sandbox_sources(SCENARIO),
                          constraints=constraints)
    return Toolset(ALL_TOOLS, context)


async def list_tools(tools: Toolset, arguments: dict[str, object] | None = None,
                     raw: str = "{}") -> tuple[str, str]:
    """`arguments=None` with `raw`: arguments whose JSON did not parse."""
    if arguments is None and raw == "{}":
        arguments = {}
    result = await tools.call(ToolCall("l", LIST_TOOLS, arguments, raw))
    return result.status, result.text


def test_every_tool_is_ranked_and_every_ranked_name_is_a_tool() -> None:
    assert set(TOOL_USE) == {t.name for t in (*ALL_TOOLS, *PROMQL_TOOLS)}
    assert rank(TOOL_USE) == RANKED_TOOLS and len(CORE_TOOLS) == CORE_SIZE


async def test_the_core_is_what_the_bundled_suite_measures_most_useful() -> None:
    """The recorded ranking covers the bundled and held-out sets; re-measured on the bundled
    suite alone, its most useful tools are still the core. When this fails, measure again
    (`python -m tests.bench tools`) and update TOOL_USE in tools/catalog.py."""
    measured = await measure(scenario_refs(None))
    assert set(rank(measured)[:CORE_SIZE]) == set(CORE_TOOLS), measured
    assert all(measured[name][0] <= TOOL_USE[name][0] for name in measured), measured


async def test_list_tools_names_every_offered_tool_beyond_the_core() -> None:
    tools = toolset()
    status, text = await list_tools(tools)
    assert status == "success"
    listed = [spec.name for spec in read_listing(text)]
    assert listed == [t.name for t in ALL_TOOLS if t.name not in CORE_TOOLS]
    assert [spec.name for spec in tools.core_specs()] == list(CORE_TOOLS)


async def test_a_banned_core_tool_gives_its_place_to_the_next_in_rank() -> None:
    tools = toolset("don't use k8s_events")
    core = [spec.name for spec in tools.core_specs()]
    assert "k8s_events" not in core and core[-1] == RANKED_TOOLS[CORE_SIZE]
    _, text = await list_tools(tools)
    listed = [spec.name for spec in read_listing(text)]
    assert "k8s_events" not in listed and RANKED_TOOLS[CORE_SIZE] not in listed
    status, text = await list_tools(tools, {"name": "k8s_events"})
    assert status == "error" and "not allowed" in text


async def test_list_tools_with_a_name_gives_that_tools_whole_description() -> None:
    tools = toolset()
    status, text = await list_tools(tools, {"name": "k8s_list_quotas"})
    assert status == "success"
    assert text.startswith("k8s_list_quotas: List ResourceQuotas")
    assert '"namespace"' in text and "arguments (JSON schema)" in text
    status, text = await list_tools(tools, {"name": "k8s_quotas"})
    assert status == "error" and "no tool named 'k8s_quotas'" in text
    assert "k8s_list_quotas" in text
    status, text = await list_tools(tools, {"filter": "k8s"})
    assert status == "error" and "only an optional name" in text
    status, text = await list_tools(tools, None, "{name: ")
    assert status == "error" and "{name: " in text
    assert tools.describe(ToolCall("l", LIST_TOOLS, {})) == "Listing more tools"
