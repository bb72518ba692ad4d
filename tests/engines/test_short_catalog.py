"""The short catalog: which tools a small model is offered, how it asks for more, and that
its prompt leaves an 8k window room for evidence."""

from __future__ import annotations

import json
from typing import Any

from engines import prompts
from engines._history import History
from engines.budgets import budgets_of_window, reply_tokens
from engines.constraints import ConstraintSet, from_rule
from engines.diagnosis import SUBMIT_TOOL
from engines.incident import Incident
from engines.model import (
    AssistantMessage,
    ModelRequest,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from engines.openai_model import OpenAIModel
from engines.react import SUBMIT_SPEC, EngineConfig, ReactEngine
from engines.scripted_model import FunctionModel, ScriptedModel, call, reply
from engines.short_catalog import (
    LIST_TOOLS,
    LIST_TOOLS_SPEC,
    offered,
    read_listing,
    render_listing,
    schema_tokens,
    wants_short_catalog,
)
from engines.text_transcript import to_text_messages
from engines.tokens import count_tokens
from tests.fakes.openai_server import Completion, FakeOpenAIServer, openai_server, plain_http
from tools.catalog import ALL_TOOLS, CORE_TOOLS
from tools.context import ToolContext
from tools.scenarios import load_scenario
from tools.sources.sandbox import sandbox_sources
from tools.toolset import Toolset

SCENARIO = load_scenario("checkout-oom")
server = openai_server  # the loopback server's fixture, under a shorter name
FULL = tuple(tool.spec for tool in ALL_TOOLS)
HIDDEN = [spec for spec in FULL if spec.name not in CORE_TOOLS]
DIAGNOSIS = {"category": "oom_killed",
             "culprit": {"kind": "Deployment", "namespace": "shop", "name": "checkout"},
             "summary": "checkout is OOMKilled", "evidence": [], "fix": "raise the limit",
             "confidence": 0.9}


def toolset() -> tuple[Toolset, ConstraintSet]:
    constraints = ConstraintSet()
    context = ToolContext(now=SCENARIO.now, sources=sandbox_sources(SCENARIO),
                          constraints=constraints)
    return Toolset(ALL_TOOLS, context), constraints


class TextModel(ScriptedModel):
    """A scripted model that, like OpenAIModel in text mode, reads tools as prose."""

    text_mode = True


async def run(model: Any, window: int) -> None:
    tools, constraints = toolset()
    engine = ReactEngine(EngineConfig(max_steps=6, context_tokens=window))
    result = await engine.run(Incident(SCENARIO.report, now=SCENARIO.now), model, tools,
                              constraints=constraints)
    assert result.reason == "diagnosed", result.detail


def names(request: ModelRequest) -> list[str]:
    return [spec.name for spec in request.tools]


def test_the_short_catalog_applies_in_text_mode_and_to_windows_the_schemas_crowd() -> None:
    full = (*FULL, SUBMIT_SPEC)
    assert schema_tokens(full) > 4_000  # what the short catalog saves, every request
    assert not wants_short_catalog(full, 32_768, text_mode=False)
    assert wants_short_catalog(full, 32_768, text_mode=True)
    assert wants_short_catalog(full, 16_384, text_mode=False)  # over a quarter of 16k
    assert wants_short_catalog(full, 8_192, text_mode=False)


def test_offered_is_the_core_in_rank_order_then_what_was_asked_for_then_list_tools() -> None:
    core = [next(s for s in FULL if s.name == name) for name in CORE_TOOLS]
    shown = offered(FULL, core, {"k8s_list_quotas", "no_such_tool"})
    assert [s.name for s in shown] == [*CORE_TOOLS, "k8s_list_quotas", LIST_TOOLS]
    assert LIST_TOOLS not in [s.name for s in offered(FULL, FULL, set())]  # nothing left out


def test_a_listing_is_one_short_line_a_tool_and_reads_back_as_its_arguments() -> None:
    text = render_listing(HIDDEN)
    assert len(text.splitlines()) == len(HIDDEN) + 1
    assert "- k8s_get_object(kind, name, namespace?): Read one Kubernetes object" in text
    assert "limit?: int" in text
    # Kept whole in the history, it must stay small: about 30 tokens a tool beyond the core
    # (14 of them since the evidence tools of issue 16).
    assert count_tokens(text) < 500
    read = {spec.name: spec for spec in read_listing(text)}
    assert list(read) == [spec.name for spec in HIDDEN]
    for spec in HIDDEN:
        assert list(read[spec.name].parameters["properties"]) == list(
            spec.parameters["properties"])
        assert read[spec.name].parameters["required"] == spec.parameters["required"]
    assert read_listing("namespace: shop\n- k8s_x(a): not a listing") == ()


async def test_a_small_window_is_offered_the_core_and_any_tool_may_be_called() -> None:
    seen: list[str] = []

    def turn(request: ModelRequest) -> Any:
        step = len(seen)
        seen.append(",".join(names(request)))
        if step == 0:
            return reply("what else is there", call(LIST_TOOLS))
        if step == 1:
            listing = request.messages[-1]
            assert isinstance(listing, ToolMessage) and "k8s_list_services(" in listing.content
            return reply("services, though not offered", call("k8s_list_services",
                                                              {"namespace": "shop"}),
                         call(LIST_TOOLS, {"name": "k8s_list_quotas"}))
        if step == 2:
            services, page = request.messages[-2:]
            assert isinstance(services, ToolMessage) and services.status == "success"
            assert "checkout" in services.content
            assert isinstance(page, ToolMessage) and "arguments (JSON schema)" in page.content
            return reply("done", call(SUBMIT_TOOL, DIAGNOSIS))
        raise AssertionError("one turn too many")

    await run(FunctionModel(turn), 8_192)
    first, _, third = seen
    assert first == ",".join([*CORE_TOOLS, LIST_TOOLS, SUBMIT_TOOL])
    assert third == ",".join([*CORE_TOOLS, "k8s_list_quotas", LIST_TOOLS, SUBMIT_TOOL])


async def test_a_large_window_gets_every_tool_unless_the_model_reads_them_as_text() -> None:
    native = ScriptedModel([reply("done", call(SUBMIT_TOOL, DIAGNOSIS))])
    await run(native, 32_768)
    assert names(native.requests[0]) == [*(s.name for s in FULL), SUBMIT_TOOL]
    text = TextModel([reply("done", call(SUBMIT_TOOL, DIAGNOSIS))])
    await run(text, 32_768)
    assert names(text.requests[0]) == [*CORE_TOOLS, LIST_TOOLS, SUBMIT_TOOL]


async def test_a_text_mode_llm_reads_the_short_catalog_and_calls_a_tool_beyond_it(
        server: FakeOpenAIServer) -> None:
    """Through the real client: the prompt lists the core and list_tools only, and a call
    of a listed-on-request tool runs like any other."""
    server.script(
        Completion('Thought: services\nAction: k8s_list_services\nAction Input: '
                   '{"namespace": "shop"}'),
        Completion(f"Thought: enough\nFinal Answer: {json.dumps(DIAGNOSIS)}"),
    )
    async with OpenAIModel("gpt-test", base_url=server.base_url, api_key="x",
                           tool_mode="text", http_client=plain_http()) as model:
        await run(model, 32_768)
    first, second = (body["messages"] for body in server.chat_requests)
    catalog = first[0]["content"].split("## Tools", 1)[1]
    assert f"- {LIST_TOOLS}: " in catalog and f"- {CORE_TOOLS[0]}: " in catalog
    assert "- k8s_list_services: " not in catalog
    assert "The list is short" in first[0]["content"]
    observation = second[-1]["content"]
    assert observation.startswith("Observation from k8s_list_services:\n")
    assert "checkout" in observation


def test_compaction_keeps_the_listing_a_model_needs_to_call_the_tools_it_names() -> None:
    history = History(budget_tokens=1_200)
    history.append(AssistantMessage("more tools", (ToolCall("l", LIST_TOOLS, {}),)))
    history.append(ToolMessage("l", LIST_TOOLS, render_listing(HIDDEN)))
    for index in range(12):
        history.append(AssistantMessage("look", (ToolCall(f"c{index}", "logs_search", {}),)))
        history.append(ToolMessage(f"c{index}", "logs_search", "line\n" * 200))
    assert history.compact() > 0
    assert history.messages[1].content == render_listing(HIDDEN)


def test_the_text_prompt_with_the_short_catalog_fits_8k_with_room_for_evidence() -> None:
    """An 8k text-ReAct model: prompt, catalog and report leave room for ten observations
    at its budget beside the room kept for its reply (the full catalog left less than one)."""
    budgets = budgets_of_window(8_192)
    core = [next(s for s in FULL if s.name == name) for name in CORE_TOOLS]
    tools = (*offered(FULL, core, set()), SUBMIT_SPEC)
    rules = ("stay out of kube-system", "ignore the redis warnings")
    constraints = ConstraintSet()
    for rule in rules:
        constraints.add(from_rule(rule))
    messages = to_text_messages(
        (SystemMessage(prompts.system_prompt(constraints.rules)),
         UserMessage(prompts.incident_message(SCENARIO.report, SCENARIO.now))), tools)
    prompt = sum(count_tokens(m["content"]) + 4 for m in messages)
    room = budgets.context_tokens - reply_tokens(budgets.context_tokens) - prompt
    assert LIST_TOOLS_SPEC.description in messages[0]["content"]
    assert room >= 10 * budgets.observation_tokens, (prompt, room)
    everything = to_text_messages(messages=(SystemMessage(prompts.system_prompt()),),
                                  tools=(*FULL, SUBMIT_SPEC))
    whole = count_tokens(everything[0]["content"])
    assert budgets.context_tokens - 2_000 - whole < budgets.observation_tokens
