"""Whole investigations through the real openai client, against the loopback fake server.

The engine, the toolset, the sandbox data of the bundled checkout-oom scenario and the
OpenAI model are all real; only the LLM is scripted. Every way an endpoint or a model can
misbehave must end in a diagnosis or a clear stop, never in a traceback.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from engines.constraints import ConstraintSet
from engines.diagnosis import is_correct
from engines.errors import ModelAuthError, ModelUnavailableError
from engines.events import ErrorOccurred, Event, InvestigationStopped
from engines.incident import Incident
from engines.openai_model import OpenAIModel, RetryPolicy, ToolMode
from engines.react import EngineConfig, InvestigationResult, ReactEngine
from tests.fakes.openai_server import (
    Completion,
    FakeOpenAIServer,
    HttpError,
    openai_server,
    plain_http,
    tool_call,
)
from tools.context import ToolContext
from tools.registry import tool
from tools.scenarios import Scenario, load_scenario
from tools.sources.sandbox import sandbox_sources
from tools.toolset import Toolset

SCENARIO = load_scenario("checkout-oom")
DIAGNOSIS = {
    "category": "oom_killed",
    "culprit": {"kind": "Deployment", "namespace": "shop", "name": "checkout"},
    "summary": "checkout's containers are OOMKilled (exit code 137) and restart.",
    "evidence": [{"tool": "k8s_pod_status", "quote": "OOMKilled"}],
    "fix": "Raise checkout's memory limit, or roll back to 2.3.0.",
    "confidence": 0.9,
}
PODS = {"namespace": "shop"}
FAST = RetryPolicy(attempts=3, initial=0.01, max_wait=0.2)


@tool(describe="Reading pod status in {namespace}")
async def k8s_pod_status(ctx: ToolContext, namespace: str) -> list[dict[str, Any]]:
    """Status of the pods of a namespace: restarts and the last termination.

    Args:
        namespace: The namespace to read.
    """
    rows = []
    for pod in await ctx.cluster.list_objects("Pod", namespace):
        for status in pod.get("status", {}).get("containerStatuses", []):
            last = status.get("lastState", {}).get("terminated") or {}
            rows.append({"pod": pod["metadata"]["name"], "restarts": status["restartCount"],
                         "last_reason": last.get("reason"), "exit_code": last.get("exitCode")})
    return rows


@dataclass
class Run:
    result: InvestigationResult
    events: list[Event]
    server: FakeOpenAIServer

    def tool_results(self, request: int) -> list[dict[str, Any]]:
        """The tool messages sent with the n-th chat request."""
        messages = self.server.chat_requests[request]["messages"]
        return [m for m in messages if m["role"] == "tool"]


server = openai_server  # the fake's fixture, under a shorter name


async def investigate(server: FakeOpenAIServer, *, mode: ToolMode = "auto",
                      request_timeout: float = 5.0, scenario: Scenario = SCENARIO) -> Run:
    constraints = ConstraintSet()
    context = ToolContext(now=scenario.now, sources=sandbox_sources(scenario),
                          constraints=constraints)
    toolset = Toolset([k8s_pod_status], context)
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    engine = ReactEngine(EngineConfig(max_steps=5, timeout_seconds=20))
    async with OpenAIModel("gpt-test", base_url=server.base_url, api_key="sk-test",
                           tool_mode=mode, timeout=request_timeout, retry=FAST,
                           http_client=plain_http()) as model:
        result = await engine.run(Incident(scenario.report, now=scenario.now), model,
                                  toolset, None, sink, constraints=constraints)
    return Run(result, events, server)


def diagnosed(run: Run) -> None:
    assert run.result.reason == "diagnosed", run.result.detail
    assert is_correct(run.result.diagnosis, SCENARIO.truth)
    assert run.result.error is None


async def test_scripted_tool_calls_end_in_the_right_diagnosis(server: FakeOpenAIServer) -> None:
    server.script(
        Completion("Look at the checkout pods.", (tool_call("k8s_pod_status", PODS),),
                   prompt_tokens=900, completion_tokens=40),
        Completion("They are OOMKilled.", (tool_call("submit_diagnosis", DIAGNOSIS),),
                   prompt_tokens=1300, completion_tokens=120),
    )
    run = await investigate(server)
    diagnosed(run)
    assert (run.result.usage.input_tokens, run.result.usage.output_tokens) == (2200, 160)
    first = server.chat_requests[0]
    assert first["messages"][0]["role"] == "system"
    assert SCENARIO.report.strip() in first["messages"][1]["content"]
    assert {t["function"]["name"] for t in first["tools"]} == {"k8s_pod_status",
                                                               "submit_diagnosis"}
    (observation,) = run.tool_results(1)
    assert "OOMKilled" in observation["content"]  # the scenario's own data reached the model
    assert "checkout-fr4tfr2wj2-4dcs2" in observation["content"]


async def test_malformed_arguments_are_answered_then_corrected(server: FakeOpenAIServer) -> None:
    server.script(
        Completion(None, (tool_call("k8s_pod_status", '{"namespace": "shop"'),)),
        Completion(None, (tool_call("k8s_pod_status", PODS),)),
        Completion(None, (tool_call("submit_diagnosis", DIAGNOSIS),)),
    )
    run = await investigate(server)
    diagnosed(run)
    (error,) = run.tool_results(1)
    assert "not valid JSON" in error["content"]
    assert '{"namespace": "shop"' in error["content"]  # the model sees what it sent


async def test_an_unknown_tool_is_answered_then_corrected(server: FakeOpenAIServer) -> None:
    server.script(
        Completion(None, (tool_call("kubectl_get_everything", {"all": True}),)),
        Completion(None, (tool_call("k8s_pod_status", PODS),)),
        Completion(None, (tool_call("submit_diagnosis", DIAGNOSIS),)),
    )
    run = await investigate(server)
    diagnosed(run)
    (error,) = run.tool_results(1)
    assert "no tool named 'kubectl_get_everything'" in error["content"]
    assert "k8s_pod_status" in error["content"]


async def test_an_invalid_diagnosis_is_sent_back_then_fixed(server: FakeOpenAIServer) -> None:
    server.script(
        Completion(None, (tool_call("k8s_pod_status", PODS),)),
        Completion(None, (tool_call("submit_diagnosis", {**DIAGNOSIS, "category": "oom"}),)),
        Completion(None, (tool_call("submit_diagnosis", DIAGNOSIS),)),
    )
    run = await investigate(server)
    diagnosed(run)
    rejected = run.tool_results(2)[-1]
    assert "invalid diagnosis" in rejected["content"] and "category" in rejected["content"]


async def test_rate_limit_and_server_errors_are_retried(server: FakeOpenAIServer) -> None:
    server.script(
        HttpError(429, "Rate limit reached", {"retry-after-ms": "50"}),
        Completion(None, (tool_call("k8s_pod_status", PODS),)),
        HttpError(500, "The server had an error while processing your request"),
        HttpError(502, "Bad gateway"),
        Completion(None, (tool_call("submit_diagnosis", DIAGNOSIS),)),
    )
    run = await investigate(server)
    diagnosed(run)
    assert run.result.steps == 2


async def test_a_slow_response_is_retried(server: FakeOpenAIServer) -> None:
    server.script(
        Completion(None, (tool_call("k8s_pod_status", PODS),), delay=2),
        Completion(None, (tool_call("k8s_pod_status", PODS),)),
        Completion(None, (tool_call("submit_diagnosis", DIAGNOSIS),)),
    )
    run = await investigate(server, request_timeout=0.2)
    diagnosed(run)


async def test_an_endpoint_that_stays_slow_stops_the_run_clearly(
    server: FakeOpenAIServer,
) -> None:
    server.script(*[Completion("too late", delay=2)] * 3)
    run = await investigate(server, request_timeout=0.1)
    assert run.result.reason == "failed"
    assert isinstance(run.result.error, ModelUnavailableError)
    assert run.result.detail == (
        f"the endpoint at {server.base_url} failed 3 attempts; last error: the request "
        "timed out")
    fatal = [e for e in run.events if isinstance(e, ErrorOccurred) and e.fatal]
    assert [e.message for e in fatal] == [run.result.detail]
    assert isinstance(run.events[-1], InvestigationStopped)


async def test_a_refused_key_stops_the_run_after_one_request(server: FakeOpenAIServer) -> None:
    server.script(HttpError(401, "Incorrect API key provided"))
    run = await investigate(server)
    assert run.result.reason == "failed"
    assert isinstance(run.result.error, ModelAuthError)
    assert "check OPENAI_API_KEY" in run.result.detail
    assert len(server.requests) == 1


async def test_a_model_without_tool_calls_investigates_in_text(server: FakeOpenAIServer) -> None:
    server.script(
        HttpError(400, "registry.ollama.ai/library/tinyllama does not support tools"),
        Completion("Thought: check the pods\nAction: k8s_pod_status\n"
                   "Action Input: {'namespace': 'shop'}\nObservation: (made up)"),
        Completion("I am thinking about it."),  # no action: the engine asks again
        Completion(f"Thought: OOMKilled it is\nFinal Answer:\n```json\n"
                   f"{json.dumps(DIAGNOSIS, indent=2)}\n```"),
    )
    run = await investigate(server)
    diagnosed(run)
    observation = server.chat_requests[2]["messages"][-1]
    assert observation["role"] == "user"
    assert observation["content"].startswith("Observation from k8s_pod_status:")
    assert "OOMKilled" in observation["content"]
    nudge = server.chat_requests[3]["messages"][-1]["content"]
    assert "submit_diagnosis" in nudge
    assert all("tools" not in body for body in server.chat_requests[1:])


async def test_endless_prose_ends_in_a_clear_stop(server: FakeOpenAIServer) -> None:
    server.script(*[Completion("Hmm, let me think.")] * 3)
    run = await investigate(server, mode="text")
    assert run.result.reason == "failed"
    assert run.result.diagnosis is None
    assert "without calling a tool" in run.result.detail
