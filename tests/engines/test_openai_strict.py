"""The LLM path against a server as strict as the real API.

The loopback server refuses with 400 what OpenAI (or vLLM) refuses; these tests show each
refusal through the real `openai` client, and that the engine never sends such a request:
calls cut short by the clock are answered, the last turn forces the submit tool, the
history fits the model's window with the tool schemas counted.
"""

from __future__ import annotations

import asyncio
from typing import Any

import openai
import pytest

from engines.budgets import budgets_of_window
from engines.constraints import ConstraintSet
from engines.events import Event, ThoughtRecorded
from engines.incident import Incident
from engines.openai_model import OpenAIModel, RetryPolicy
from engines.prompts import EXAMPLE_QUOTE
from engines.react import EngineConfig, InvestigationResult, ReactEngine
from tests.fakes.openai_server import Completion, FakeOpenAIServer, plain_http, tool_call
from tests.tools._tooling import call, context
from tools.catalog import available_tools
from tools.compress import fit
from tools.context import ToolContext
from tools.registry import Tool, tool
from tools.scenarios import load_scenario
from tools.sources.sandbox import sandbox_sources
from tools.toolset import Toolset

SCENARIO = load_scenario("checkout-oom")
FAST = RetryPolicy(attempts=1, initial=0.01, max_wait=0.1)
DIAGNOSIS = {
    "category": "oom_killed",
    "culprit": {"kind": "Deployment", "namespace": "shop", "name": "checkout"},
    "summary": "checkout is OOMKilled.", "evidence": [], "fix": "raise the limit",
    "confidence": 0.5,
}
TOOL = {"type": "function", "function": {"name": "k8s_events", "parameters": {
    "type": "object", "properties": {}}}}
ASSISTANT_CALL = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "call_1", "type": "function", "function": {"name": "k8s_events", "arguments": "{}"}}]}


def body(*messages: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"model": "gpt-test", "messages": [{"role": "user", "content": "hi"}, *messages],
            "tools": [TOOL], **extra}


@pytest.mark.parametrize(("request_body", "refused_for"), [
    (body(ASSISTANT_CALL), "did not have response messages: call_1"),
    (body(ASSISTANT_CALL, {"role": "user", "content": "and?"}), "call_1"),
    (body({"role": "tool", "tool_call_id": "call_9", "content": "x"}),
     "must be a response to a preceeding message"),
    (body(ASSISTANT_CALL, {"role": "tool", "tool_call_id": "call_1", "content": "x"},
          ASSISTANT_CALL, {"role": "tool", "tool_call_id": "call_1", "content": "x"}),
     "Duplicate value for 'tool_call_id'"),
    (body(tools=[{"type": "function", "function": {"name": "kubectl get pods"}}]),
     "does not match pattern"),
    (body(tool_choice={"type": "function", "function": {"name": "submit_diagnosis"}}),
     "Tool choice 'submit_diagnosis' not found"),
])
async def test_the_loopback_server_refuses_what_the_api_refuses(
        request_body: dict[str, Any], refused_for: str) -> None:
    async with FakeOpenAIServer() as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0,
                                    http_client=plain_http())
        with pytest.raises(openai.BadRequestError, match="400") as raised:
            await client.chat.completions.create(**request_body)
        await client.close()
    assert refused_for in str(raised.value)
    assert server.refusals and refused_for in server.refusals[0]


async def test_a_prompt_over_the_window_is_refused_as_vllm_does() -> None:
    async with FakeOpenAIServer(context_tokens=50) as server:
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-test", max_retries=0,
                                    http_client=plain_http())
        with pytest.raises(openai.BadRequestError, match="maximum context length is 50"):
            await client.chat.completions.create(**body({"role": "user", "content": "x " * 99}))
        await client.close()


@tool(describe="Waiting on a slow backend")
async def slow_backend(ctx: ToolContext) -> dict[str, Any]:
    """A backend that answers after the investigation's clock has run out."""
    await asyncio.sleep(30)
    return {}


@tool(describe="Reading pods in {namespace}")
async def read_pods(ctx: ToolContext, namespace: str) -> dict[str, Any]:
    """Pods of a namespace, wordy on purpose.

    Args:
        namespace: The namespace.
    """
    pods = await ctx.cluster.list_objects("Pod", namespace)
    return {"namespace": namespace, "pods": [p["metadata"] for p in pods] * 8}


async def run(server: FakeOpenAIServer, tools: list[Tool], config: EngineConfig,
              observation_tokens: int = 700) -> tuple[InvestigationResult, list[Event]]:
    constraints = ConstraintSet()
    ctx = ToolContext(now=SCENARIO.now, sources=sandbox_sources(SCENARIO),
                      constraints=constraints)
    toolset = Toolset(tools, ctx, observation_tokens=observation_tokens)
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    async with OpenAIModel("gpt-test", base_url=server.base_url, api_key="sk-test",
                           retry=FAST, http_client=plain_http()) as model:
        result = await ReactEngine(config).run(Incident(SCENARIO.report, now=SCENARIO.now),
                                               model, toolset, None, sink,
                                               constraints=constraints)
    return result, events


async def test_calls_cut_short_by_the_clock_are_answered_before_the_last_turn() -> None:
    async with FakeOpenAIServer() as server:
        server.script(Completion("Check the backend.", (tool_call("slow_backend"),)),
                      Completion(None, (tool_call("submit_diagnosis", DIAGNOSIS),)))
        result, _ = await run(server, [slow_backend], EngineConfig(timeout_seconds=0.5))
    assert result.reason == "timeout" and result.diagnosis is not None
    assert not server.refusals
    last = server.chat_requests[-1]["messages"]
    answer = next(m for m in last if m["role"] == "tool")
    assert answer["content"].startswith("ERROR: not run: the investigation ended")


async def test_the_last_turn_forces_the_submit_tool() -> None:
    async with FakeOpenAIServer() as server:
        server.script(Completion("Look.", (tool_call("read_pods", {"namespace": "shop"}),)),
                      Completion(None, (tool_call("submit_diagnosis", DIAGNOSIS),)))
        result, _ = await run(server, [read_pods], EngineConfig(max_steps=1))
    assert result.reason == "max_steps" and result.diagnosis is not None
    first, last = server.chat_requests
    assert "tool_choice" not in first
    assert last["tool_choice"] == {"type": "function", "function": {"name": "submit_diagnosis"}}


async def test_a_step_without_content_still_has_a_thought() -> None:
    async with FakeOpenAIServer() as server:
        server.script(Completion(None, (tool_call("read_pods", {"namespace": "shop"}),)),
                      Completion("", (tool_call("submit_diagnosis", DIAGNOSIS),)))
        _, events = await run(server, [read_pods], EngineConfig())
    thoughts = [e.text for e in events if isinstance(e, ThoughtRecorded)]
    assert thoughts == ["Reading pods in shop", "Submitting the diagnosis"]


async def test_the_history_fits_the_window_with_the_tool_schemas_counted() -> None:
    window = 8_192
    catalog = list(available_tools(sandbox_sources(SCENARIO)))
    steps = [Completion("More.", (tool_call("read_pods", {"namespace": ns}),))
             for ns in ("shop", "payments", "kube-system", "web", "data", "ops")]
    async with FakeOpenAIServer(context_tokens=window) as server:
        server.script(*steps, Completion(None, (tool_call("submit_diagnosis", DIAGNOSIS),)))
        result, _ = await run(server, [*catalog, read_pods],
                              EngineConfig(max_steps=7, context_tokens=window),
                              observation_tokens=budgets_of_window(window).observation_tokens)
    assert not server.refusals, server.refusals
    assert result.diagnosis is not None


async def test_the_prompts_quote_example_is_a_whole_line_the_tool_prints() -> None:
    tool_name, quote = EXAMPLE_QUOTE
    data = await call(context(), tool_name, namespace="shop", pod="checkout")
    lines = [line.strip() for line in fit(data, 2_000)[0].splitlines()]
    assert quote in lines
