"""The ReAct loop: stop conditions, concurrency, constraints, validation, failures."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest

from engines.constraints import ConstraintInbox, ConstraintSet
from engines.errors import ModelAuthError
from engines.events import Event
from engines.incident import Incident
from engines.model import ModelReply, ModelRequest, ToolMessage, Usage
from engines.react import EngineConfig, ReactEngine
from engines.scripted_model import (
    FunctionModel,
    ScriptedModel,
    ScriptExhaustedError,
    call,
    reply,
)
from engines.steering import put_reply
from tools.context import ToolContext
from tools.registry import Tool, tool
from tools.sources.base import Sources
from tools.toolset import Toolset

NOW = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
DIAGNOSIS = {
    "category": "oom_killed",
    "culprit": {"kind": "Deployment", "namespace": "shop", "name": "checkout"},
    "summary": "checkout is OOMKilled at its 256Mi limit",
    "evidence": [{"tool": "k8s_pods", "quote": "OOMKilled"}],
    "fix": "raise the memory limit",
    "confidence": 0.9,
}


@tool(describe="Listing pods in {namespace}")
async def k8s_pods(ctx: ToolContext, namespace: str | None = None) -> dict[str, Any]:
    """List pods.

    Args:
        namespace: Only this namespace.
    """
    return {"namespace": namespace, "pods": [{"name": "checkout-1", "reason": "OOMKilled"}]}


started_calls: list[str] = []


def barrier_tool(name: str, barrier: asyncio.Barrier) -> Tool:
    @tool(name=name, timeout=2.0)
    async def wait_for_all(ctx: ToolContext) -> str:
        """Return once every tool of the step has started: proves they run concurrently."""
        await barrier.wait()
        return f"{name} done"

    return wait_for_all


@tool(read_only=False)
async def k8s_restart(ctx: ToolContext, namespace: str, name: str) -> str:
    """Restart a workload.

    Args:
        namespace: Its namespace.
        name: Its name.
    """
    return f"restarted {namespace}/{name}"


def make(
    tools: tuple[Tool, ...] = (k8s_pods,), **toolset_options: Any
) -> tuple[Toolset, ConstraintSet]:
    constraints = ConstraintSet()
    context = ToolContext(now=NOW, sources=Sources(), constraints=constraints)
    return Toolset(tools, context, **toolset_options), constraints


async def investigate(
    model: Any,
    toolset: Toolset,
    constraints: ConstraintSet,
    *,
    inbox: ConstraintInbox | None = None,
    config: EngineConfig | None = None,
) -> tuple[Any, list[Event]]:
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    result = await ReactEngine(config or EngineConfig(max_steps=6)).run(
        Incident("checkout restarts", now=NOW),
        model,
        toolset,
        inbox,
        sink,
        constraints=constraints,
    )
    return result, events


async def test_investigation_ends_with_a_validated_diagnosis() -> None:
    toolset, constraints = make()
    model = ScriptedModel(
        [
            reply("look at the pods", call("k8s_pods", {"namespace": "shop"})),
            reply("it is OOM", call("submit_diagnosis", DIAGNOSIS)),
        ]
    )
    result, events = await investigate(model, toolset, constraints)
    assert result.reason == "diagnosed"
    assert result.diagnosis is not None and result.diagnosis.category == "oom_killed"
    assert (result.steps, result.tool_calls) == (2, 1)
    assert [e.kind for e in events] == [
        "started",
        "thought",
        "action",
        "observation",
        "thought",
        "answer",
        "stopped",
    ]
    assert "OOMKilled" in model.requests[1].messages[-1].content


async def test_independent_calls_of_one_step_run_concurrently() -> None:
    barrier = asyncio.Barrier(4)
    tools = tuple(barrier_tool(f"wait_{i}", barrier) for i in range(4))
    toolset, constraints = make(tools)
    model = ScriptedModel(
        [
            reply("all at once", *(call(f"wait_{i}") for i in range(4))),
            reply("done", call("submit_diagnosis", DIAGNOSIS)),
        ]
    )
    result, events = await investigate(model, toolset, constraints)
    observations = [e for e in events if e.kind == "observation"]
    assert [o.status for o in observations] == ["success"] * 4  # serial would time out
    assert result.reason == "diagnosed"


async def test_invalid_diagnosis_goes_back_with_the_validation_error() -> None:
    toolset, constraints = make()
    bad = {**DIAGNOSIS, "category": "gremlins", "confidence": 3}
    model = ScriptedModel(
        [
            reply("guess", call("submit_diagnosis", bad)),
            reply("fixed", call("submit_diagnosis", DIAGNOSIS)),
        ]
    )
    result, _ = await investigate(model, toolset, constraints)
    feedback = model.requests[1].messages[-1]
    assert isinstance(feedback, ToolMessage) and feedback.status == "error"
    assert "category" in feedback.content and "confidence" in feedback.content
    assert result.reason == "diagnosed"


async def test_bad_arguments_and_unknown_tools_are_error_observations() -> None:
    toolset, constraints = make()
    model = ScriptedModel(
        [
            reply("", call("k8s_pods", None, raw="{namespace: shop"), call("kubectl_exec", {})),
            reply("", call("submit_diagnosis", DIAGNOSIS)),
        ]
    )
    result, events = await investigate(model, toolset, constraints)
    errors = [e.text for e in events if e.kind == "observation"]
    assert "not valid JSON" in errors[0]
    assert "no tool named 'kubectl_exec'" in errors[1] and "k8s_pods" in errors[1]
    assert result.reason == "diagnosed"


async def test_max_steps_gives_the_model_a_final_turn() -> None:
    toolset, constraints = make()

    def wander(request: ModelRequest) -> ModelReply:
        if request.final:
            assert [t.name for t in request.tools] == ["submit_diagnosis"]
            return reply("best guess", call("submit_diagnosis", DIAGNOSIS))
        return reply("more", call("k8s_pods", {"namespace": f"ns{request.step}"}))

    result, events = await investigate(
        FunctionModel(wander), toolset, constraints, config=EngineConfig(max_steps=3)
    )
    assert result.reason == "max_steps"
    assert result.steps == 3
    assert result.diagnosis is not None
    assert events[-1].kind == "stopped"


async def test_repeating_the_same_call_warns_then_stops() -> None:
    toolset, constraints = make()
    model = FunctionModel(
        lambda r: (
            reply("again", call("submit_diagnosis", DIAGNOSIS))
            if r.final
            else reply("again", call("k8s_pods", {"namespace": "shop"}))
        )
    )
    result, events = await investigate(model, toolset, constraints)
    warnings = [e for e in events if e.kind == "error"]
    assert len(warnings) == 1 and "going in circles" in warnings[0].message
    assert result.reason == "loop"
    assert result.steps == 3
    cached = [e.cached for e in events if e.kind == "observation"]
    assert cached == [False, True, True]


async def test_wall_clock_timeout() -> None:
    toolset, constraints = make()

    async def slow(request: ModelRequest) -> ModelReply:
        if request.final:
            return reply("", call("submit_diagnosis", DIAGNOSIS))
        await asyncio.sleep(10)
        raise AssertionError("unreachable")

    config = EngineConfig(timeout_seconds=0.05, final_turn_seconds=1)
    result, _ = await investigate(FunctionModel(slow), toolset, constraints, config=config)
    assert result.reason == "timeout"
    assert result.diagnosis is not None


async def test_token_budget() -> None:
    toolset, constraints = make()

    def costly(request: ModelRequest) -> ModelReply:
        if request.final:
            return ModelReply("", (call("submit_diagnosis", DIAGNOSIS),))
        return ModelReply(
            "", (call("k8s_pods", {"namespace": f"n{request.step}"}),), Usage(600, 100)
        )

    config = EngineConfig(token_budget=1_000)
    result, _ = await investigate(FunctionModel(costly), toolset, constraints, config=config)
    assert result.reason == "token_budget"
    assert result.steps == 2


async def test_constraints_apply_from_the_next_step_and_are_enforced() -> None:
    toolset, constraints = make()
    inbox = ConstraintInbox()

    def steer(request: ModelRequest) -> ModelReply:
        if request.step == 1:
            put_reply(inbox, "stay out of kube-system", author="alice")
            return reply("", call("k8s_pods", {"namespace": "kube-system"}))
        if request.step == 2:
            assert "Do not query or blame anything in namespace 'kube-system'." in (
                request.constraints
            )
            assert request.constraint_set.excluded_namespaces == {"kube-system"}
            return reply("", call("k8s_pods", {"namespace": "kube-system"}))
        return reply("", call("submit_diagnosis", DIAGNOSIS))

    result, events = await investigate(FunctionModel(steer), toolset, constraints, inbox=inbox)
    observations = [e for e in events if e.kind == "observation"]
    assert observations[0].status == "success"  # before the constraint
    assert observations[1].status == "error"
    assert "excluded by a human" in observations[1].text
    applied = [e for e in events if e.kind == "constraint"]
    assert applied[0].step == 2 and applied[0].summary == "staying out of namespace kube-system"
    assert result.reason == "diagnosed"


async def test_stop_ends_the_run_with_a_summary_of_what_was_found() -> None:
    toolset, constraints = make()
    inbox = ConstraintInbox()

    def model_fn(request: ModelRequest) -> ModelReply:
        if request.final:
            return reply("summing up", call("submit_diagnosis", DIAGNOSIS))
        if request.step == 2:
            put_reply(inbox, "stop", author="bob")
        return reply("", call("k8s_pods", {"namespace": f"n{request.step}"}))

    result, _events = await investigate(FunctionModel(model_fn), toolset, constraints, inbox=inbox)
    assert result.reason == "stopped"
    assert result.tool_calls == 1  # the call asked for alongside "stop" never ran
    assert result.diagnosis is not None


async def test_write_tools_need_approval() -> None:
    approvals: list[str] = []

    async def approve(t: Tool, args: dict[str, Any], description: str) -> bool:
        approvals.append(description)
        return args["name"] == "checkout"

    toolset, constraints = make((k8s_restart,), approver=approve)
    model = ScriptedModel(
        [
            reply(
                "",
                call("k8s_restart", {"namespace": "shop", "name": "checkout"}),
                call("k8s_restart", {"namespace": "shop", "name": "cart"}),
            ),
            reply("", call("submit_diagnosis", DIAGNOSIS)),
        ]
    )
    _, events = await investigate(model, toolset, constraints)
    observations = [e for e in events if e.kind == "observation"]
    assert observations[0].text == "restarted shop/checkout"
    assert "declined" in observations[1].text
    assert len(approvals) == 2

    unapproved, constraints = make((k8s_restart,))
    model = ScriptedModel(
        [
            reply("", call("k8s_restart", {"namespace": "shop", "name": "checkout"})),
            reply("", call("submit_diagnosis", DIAGNOSIS)),
        ]
    )
    _, events = await investigate(model, unapproved, constraints)
    assert "nobody here can approve it" in next(e for e in events if e.kind == "observation").text


async def test_model_auth_error_fails_the_run_cleanly() -> None:
    toolset, constraints = make()
    model = ScriptedModel([ModelAuthError("the endpoint refused the API key")])
    result, events = await investigate(model, toolset, constraints)
    assert result.reason == "failed"
    assert isinstance(result.error, ModelAuthError)
    assert events[-2].kind == "error" and events[-2].fatal
    assert events[-1].kind == "stopped"


async def test_a_model_that_never_calls_tools_is_stopped() -> None:
    toolset, constraints = make()
    model = ScriptedModel([reply("hmm"), reply("hmm"), reply("hmm")])
    result, _ = await investigate(model, toolset, constraints)
    assert result.reason == "failed"
    assert "without calling a tool" in result.detail


@pytest.mark.leftover_turns  # the exhausted script is the point, and is checked here
async def test_an_exhausted_script_is_not_swallowed_by_the_engine() -> None:
    toolset, constraints = make()
    model = ScriptedModel([reply("look", call("k8s_pods", {"namespace": "shop"}))])
    with pytest.raises(ScriptExhaustedError, match="called 2 times but only 1 turns"):
        await investigate(model, toolset, constraints)


async def test_a_bug_ends_the_run_as_failed_with_its_events() -> None:
    toolset, constraints = make()

    def broken(request: ModelRequest) -> ModelReply:
        raise KeyError("thought")

    result, events = await investigate(FunctionModel(broken), toolset, constraints)
    assert result.reason == "failed" and "internal error: KeyError" in result.detail
    assert [e.kind for e in events][-2:] == ["error", "stopped"]


async def test_a_failing_sink_does_not_end_the_investigation() -> None:
    toolset, constraints = make()
    model = ScriptedModel([reply("", call("submit_diagnosis", DIAGNOSIS))])

    async def broken(event: Event) -> None:
        raise ConnectionError("slack is down")

    result = await ReactEngine().run(
        Incident("x", now=NOW), model, toolset, None, broken, constraints=constraints
    )
    assert result.reason == "diagnosed"


@pytest.mark.parametrize("crash", [RuntimeError("bug"), KeyError("x")])
async def test_a_tool_that_crashes_is_an_error_observation(crash: Exception) -> None:
    @tool()
    async def flaky(ctx: ToolContext) -> None:
        """Crash."""
        raise crash

    toolset, constraints = make((flaky,))
    model = ScriptedModel(
        [reply("", call("flaky")), reply("", call("submit_diagnosis", DIAGNOSIS))]
    )
    _, events = await investigate(model, toolset, constraints)
    observation = next(e for e in events if e.kind == "observation")
    assert observation.status == "error"
    assert type(crash).__name__ in observation.text


async def test_a_resumed_run_replays_complete_steps_and_redoes_the_one_in_flight() -> None:
    toolset, constraints = make()
    inbox = ConstraintInbox()

    def first(request: ModelRequest) -> ModelReply:
        if request.step == 1:
            put_reply(inbox, "stay out of kube-system", author="alice")
        return reply(f"step {request.step}", call("k8s_pods", {"namespace": f"n{request.step}"}))

    _, log = await investigate(
        FunctionModel(first),
        toolset,
        constraints,
        inbox=inbox,
        config=EngineConfig(max_steps=3),
    )
    # Cut the log as a crash would: in the middle of step 3, after its action was posted.
    cut = next(i for i, e in enumerate(log) if e.kind == "observation" and e.step == 3)
    interrupted = log[:cut]

    seen: list[ModelRequest] = []

    def second(request: ModelRequest) -> ModelReply:
        seen.append(request)
        return reply("done", call("submit_diagnosis", DIAGNOSIS))

    toolset2, constraints2 = make()
    events: list[Event] = []

    async def sink(event: Event) -> None:
        events.append(event)

    result = await ReactEngine(EngineConfig(max_steps=6)).run(
        Incident("checkout restarts", now=NOW),
        FunctionModel(second),
        toolset2,
        None,
        sink,
        constraints=constraints2,
        resume=interrupted,
    )
    assert result.reason == "diagnosed"
    assert seen[0].step == 3  # steps 1 and 2 were not repeated
    assert result.tool_calls == 2
    assert constraints2.excluded_namespaces == {"kube-system"}
    tool_messages = [m for m in seen[0].messages if isinstance(m, ToolMessage)]
    assert [m.call_id for m in tool_messages] == [
        e.call_id for e in interrupted if e.kind == "observation"
    ]
    assert events[0].kind == "thought"  # no second "started"
