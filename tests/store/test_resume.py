"""The event log is the state: a run killed mid-step resumes from the store, not from memory."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

from bot.store import InvestigationRecord, Store
from engines.constraints import ConstraintInbox, ConstraintSet
from engines.events import Event, ToolCalled
from engines.incident import Incident
from engines.model import ModelReply, ModelRequest
from engines.react import EngineConfig, ReactEngine
from engines.scripted_model import FunctionModel, call, reply
from engines.steering import put_reply
from tools.context import ToolContext
from tools.registry import tool
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


class Crash(BaseException):
    """The process dying: nothing in the engine may catch it."""


@tool(describe="Listing pods in {namespace}")
async def k8s_pods(ctx: ToolContext, namespace: str | None = None) -> dict[str, Any]:
    """List pods.

    Args:
        namespace: Only this namespace.
    """
    return {"namespace": namespace, "pods": [{"name": "checkout-1", "reason": "OOMKilled"}]}


def toolset() -> tuple[Toolset, ConstraintSet]:
    constraints = ConstraintSet()
    context = ToolContext(now=NOW, sources=Sources(), constraints=constraints)
    return Toolset((k8s_pods,), context), constraints


async def test_an_interrupted_investigation_resumes_from_its_stored_log(store: Store) -> None:
    incident = Incident("checkout restarts", now=NOW, id="inv-resume")
    await store.create(
        InvestigationRecord(incident.id, "C1", "1.2", incident.text, "alice", "function"),
        engine="react",
    )
    emitted: list[Event] = []

    async def crashing_sink(event: Event) -> None:
        await store.append_event(incident.id, event)
        emitted.append(event)
        if isinstance(event, ToolCalled) and event.step == 3:
            raise Crash  # killed after step 3's action was logged, before its observation

    inbox = ConstraintInbox()

    def first(request: ModelRequest) -> ModelReply:
        if request.step == 1:
            put_reply(inbox, "stay out of kube-system", author="alice")
        return reply(f"step {request.step}", call("k8s_pods", {"namespace": f"n{request.step}"}))

    tools, constraints = toolset()
    with pytest.raises(Crash):
        await ReactEngine(EngineConfig(max_steps=6)).run(
            incident, FunctionModel(first), tools, inbox, crashing_sink, constraints=constraints
        )

    # A new process: everything it knows comes from the store.
    [unfinished] = await store.unfinished()
    log = await store.events(unfinished.id)
    assert list(log) == emitted
    seen: list[ModelRequest] = []

    def second(request: ModelRequest) -> ModelReply:
        seen.append(request)
        return reply("done", call("submit_diagnosis", DIAGNOSIS))

    async def sink(event: Event) -> None:
        await store.append_event(incident.id, event)

    tools, constraints = toolset()
    result = await ReactEngine(EngineConfig(max_steps=6)).run(
        incident, FunctionModel(second), tools, None, sink, constraints=constraints, resume=log
    )
    assert result.reason == "diagnosed"
    assert seen[0].step == 3  # steps 1 and 2, which had their observations, were not repeated
    assert result.tool_calls == 2
    assert constraints.excluded_namespaces == {"kube-system"}
    await store.finish(incident.id, "done", result.diagnosis)

    full = await store.events(incident.id)
    assert list(full[: len(log)]) == list(log)
    assert [e.kind for e in full].count("started") == 1
    assert await store.unfinished() == []
    stored = await store.investigation(incident.id)
    assert stored.diagnosis == result.diagnosis and stored.outcome == "diagnosed"
