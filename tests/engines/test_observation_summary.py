"""An observation still over budget is summarised by the check model, line for line.

The check model answers with line numbers through the real `openai` client and the strict
loopback server; what the main model then reads is those lines as the tool printed them.
When the check model fails, the plain cut stands: nothing is lost to a summary.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import yaml

from bot.wiring import summariser_for
from engines.analyzer import AnalyzerModel
from engines.constraints import ConstraintSet
from engines.incident import Incident
from engines.model import ToolCall
from engines.observation_summary import (
    KEEP_SPEC,
    AskedSelection,
    CodeSelection,
    ObservationSummariser,
    SelectionRequest,
    assemble,
    salient_lines,
)
from engines.openai_model import OpenAIModel
from engines.tokens import count_tokens
from tests.engines.test_e2e_openai import FAST
from tests.fakes.openai_server import Completion, FakeOpenAIServer, plain_http, tool_call
from tools.compress import was_cut_short
from tools.context import ToolContext
from tools.registry import tool
from tools.sources.base import Sources
from tools.toolset import Summariser, Toolset

NOW = datetime(2026, 3, 4, 14, 30, tzinfo=UTC)
LINES = [f"14:{i // 60:02d}:{i % 60:02d} GET /cart 200 in {10 + i % 7} ms" for i in range(400)]
LINES[0] = "request log of cart (last 30 minutes)"
LINES[310] = "14:05:10 ERROR connection refused: cart-db:5432"
LINES[370] = "14:06:10 ERROR pool exhausted: 20 of 20 connections busy"


@tool(describe="Reading the request log")
async def request_log(ctx: ToolContext) -> str:
    """The request log of cart, one line a request."""
    return "\n".join(LINES)


EVENTS = [{"type": "Normal", "reason": "Pulled", "object": f"Pod/cart-{i}",
           "message": f"Successfully pulled image cart:1.{i} in 2.1s", "count": 1}
          for i in range(80)]
EVENTS[57] = {"type": "Warning", "reason": "OOMKilling", "object": "Pod/cart-57",
              "message": "Memory cgroup out of memory: Killed process 4242 (java)", "count": 9}


@tool(describe="Reading events")
async def cart_events(ctx: ToolContext) -> dict[str, Any]:
    """The events of cart's namespace."""
    return {"namespace": "shop", "total": len(EVENTS), "events": EVENTS}


def _toolset(summariser: Summariser | None) -> Toolset:
    context = ToolContext(now=NOW, sources=Sources(), constraints=ConstraintSet())
    return Toolset([request_log, cart_events], context, observation_tokens=300,
                   summariser=summariser)


async def _observe(summariser: Summariser | None, name: str = "request_log") -> str:
    result = await _toolset(summariser).call(ToolCall("c1", name, {}))
    assert result.status == "success"
    return result.text


def test_assembled_lines_are_verbatim_in_the_tools_order_within_the_budget() -> None:
    request = SelectionRequest("request_log", tuple(LINES), 120, "cart errors")
    text = assemble(request, [371, 311])
    assert text is not None and count_tokens(text) <= 120
    lines = text.splitlines()
    assert lines[0] == LINES[0]
    assert [line for line in lines if line in (LINES[310], LINES[370])] == [LINES[310],
                                                                           LINES[370]]
    assert "# … 309 lines omitted" in lines
    assert lines[-1].startswith("# [the check model kept 3 of 400")
    assert assemble(request, []) is None
    assert assemble(request, [0, 401, 1]) is None  # out of range, or only the heading


def test_a_kept_yaml_line_keeps_what_it_is_nested_under_and_still_parses() -> None:
    pods = [f"- pod: cart-{i}\n  restarts: 0\n  last_reason: null" for i in range(60)]
    pods[41] = "- pod: cart-41\n  restarts: 7\n  last_reason: OOMKilled"
    observation = "pods:\n" + "\n".join("  " + line for p in pods for line in p.split("\n"))
    lines = tuple(observation.splitlines())
    reason = lines.index("    last_reason: OOMKilled") + 1
    text = assemble(SelectionRequest("k8s_pod_status", lines, 80, "cart"), [reason])
    assert text is not None
    assert yaml.safe_load(text) == {"pods": [{"pod": "cart-41", "last_reason": "OOMKilled"}]}


def test_code_ranks_the_faults_and_the_reports_names_first() -> None:
    ranked = salient_lines(SelectionRequest("request_log", tuple(LINES), 120, "cart-db down"))
    assert ranked[:2] == [311, 371]


async def test_an_llm_check_model_summarises_an_observation_cut_short() -> None:
    plain = await _observe(None)
    assert was_cut_short(plain) and LINES[370] not in plain  # the cut loses the pool error
    async with FakeOpenAIServer(models=("gpt-small",)) as small:
        small.script(Completion(None, (tool_call(KEEP_SPEC.name, {"keep": [371, 311]}),)))
        async with OpenAIModel("gpt-small", base_url=small.base_url, api_key="sk-test",
                               retry=FAST, http_client=plain_http()) as check:
            text = await _observe(ObservationSummariser(AskedSelection(check), "cart 502s"))
        assert not small.refusals
        small.check()
        asked: dict[str, Any] = small.chat_requests[0]
    assert asked["tool_choice"]["function"]["name"] == KEEP_SPEC.name
    assert "371: " + LINES[370] in asked["messages"][-1]["content"]
    assert LINES[310] in text and LINES[370] in text and not was_cut_short(text)
    assert count_tokens(text) <= 300


async def test_structured_data_keeps_the_chosen_items_as_the_yaml_it_was() -> None:
    plain = await _observe(None, "cart_events")
    assert "more omitted to fit" in plain and "OOMKilling" not in plain  # halved to its head
    async with FakeOpenAIServer(models=("gpt-small",)) as small:
        small.script(Completion(None, (tool_call(KEEP_SPEC.name, {"keep": [58, 1]}),)))
        async with OpenAIModel("gpt-small", base_url=small.base_url, api_key="sk-test",
                               retry=FAST, http_client=plain_http()) as check:
            text = await _observe(ObservationSummariser(AskedSelection(check), "cart OOM"),
                                  "cart_events")
        asked = small.chat_requests[0]["messages"][-1]["content"]
    assert '58: {"type":"Warning","reason":"OOMKilling"' in asked
    shown = yaml.safe_load(text)
    assert shown["total"] == 80
    assert shown["events"][:2] == [EVENTS[0], EVENTS[57]]
    assert shown["events"][2].startswith("… the check model kept 2 of 80; 78 omitted")
    assert count_tokens(text) <= 300


async def test_a_check_model_without_an_answer_leaves_the_plain_cut() -> None:
    async with FakeOpenAIServer(models=("gpt-small",)) as small:
        small.script(Completion("I would keep the errors.", ()))  # no tool call, no JSON
        async with OpenAIModel("gpt-small", base_url=small.base_url, api_key="sk-test",
                               retry=FAST, http_client=plain_http()) as check:
            text = await _observe(ObservationSummariser(AskedSelection(check), "cart 502s"))
    assert text == await _observe(None)


async def test_a_failing_summariser_costs_nothing() -> None:
    async def broken(tool: str, data: Any, budget: int) -> str | None:
        raise RuntimeError("bug")

    assert await _observe(broken) == await _observe(None)


async def test_the_analyzer_as_check_model_summarises_with_no_llm() -> None:
    summariser = summariser_for(AnalyzerModel(), Incident("cart-db errors", now=NOW))
    assert isinstance(summariser, ObservationSummariser)
    assert isinstance(summariser.selector, CodeSelection)
    text = await _observe(summariser)
    assert LINES[310] in text and LINES[370] in text
    assert summariser_for(None, Incident("x", now=NOW)) is None
