"""Constraints between steps: a withdrawn reply stops being enforced and the model is told;
a pause holds the loop until a human says go on; every change is an event."""

from __future__ import annotations

import asyncio

from engines._replay import replay
from engines.constraints import Constraint, ConstraintInbox
from engines.events import ConstraintApplied, ConstraintWithdrawn
from engines.model import ModelReply, ModelRequest, ToolCall, UserMessage
from engines.scripted_model import FunctionModel, call, reply
from tests.engines.test_react import DIAGNOSIS, investigate, make
from tools.context import ToolContext
from tools.registry import tool


async def test_a_withdrawn_reply_is_no_longer_enforced_and_the_model_is_told() -> None:
    toolset, constraints = make()
    inbox = ConstraintInbox()
    seen: list[ModelRequest] = []

    def steer(request: ModelRequest) -> ModelReply:
        seen.append(request)
        if request.step == 1:
            inbox.put(Constraint("exclude_namespace", "skip shop", "shop", "alice", reply="r1"))
            return reply("", call("k8s_pods", {"namespace": "web"}))
        if request.step == 2:
            assert request.constraint_set.excluded_namespaces == {"shop"}
            inbox.withdraw("r1")
            return reply("", call("k8s_pods", {"namespace": "shop"}))
        if request.step == 3:
            assert request.constraint_set.excluded_namespaces == frozenset()
            return reply("", call("k8s_pods", {"namespace": "shop"}))
        return reply("", call("submit_diagnosis", DIAGNOSIS))

    result, events = await investigate(FunctionModel(steer), toolset, constraints, inbox=inbox)
    assert result.reason == "diagnosed"
    statuses = [e.status for e in events if e.kind == "observation"]
    assert statuses == ["success", "error", "success"]  # refused only while in force
    applied = [e for e in events if isinstance(e, ConstraintApplied)]
    withdrawn = [e for e in events if isinstance(e, ConstraintWithdrawn)]
    assert [(a.constraint, a.value, a.reply) for a in applied] == [
        ("exclude_namespace", "shop", "r1")]
    assert [(w.reply, w.step) for w in withdrawn] == [("r1", 3)]
    told = [m.content for m in seen[2].messages if isinstance(m, UserMessage)]
    assert any(t.startswith("CONSTRAINT withdrawn by alice") for t in told)
    assert not any("namespace 'shop'" in rule for rule in seen[2].constraints)


async def test_a_pause_holds_the_loop_until_a_human_says_go_on() -> None:
    toolset, constraints = make()
    inbox = ConstraintInbox()
    steps: list[int] = []

    def steer(request: ModelRequest) -> ModelReply:
        steps.append(request.step)
        if request.step == 1:
            inbox.put(Constraint("pause", "hold on", author="bob", reply="p1"))
            return reply("", call("k8s_pods", {"namespace": "shop"}))
        return reply("", call("submit_diagnosis", DIAGNOSIS))

    async def go_on_later() -> None:
        await asyncio.sleep(0.2)
        assert steps == [1]  # held: no second step while paused
        inbox.resume()

    resumer = asyncio.create_task(go_on_later())
    result, events = await investigate(FunctionModel(steer), toolset, constraints, inbox=inbox)
    await resumer
    assert result.reason == "diagnosed" and steps == [1, 2]
    assert [e.reply for e in events if isinstance(e, ConstraintWithdrawn)] == ["p1"]


@tool(describe="Describing {name}")
async def k8s_describe(ctx: ToolContext, name: str) -> str:
    """Describe a pod.

    Args:
        name: The pod.
    """
    return f"{name}: Running"


async def test_an_excluded_source_and_workload_are_refused_by_the_toolset() -> None:
    toolset, constraints = make((k8s_describe,))
    constraints.add(Constraint("exclude_source", "no kubectl", "cluster"))
    assert toolset.specs() == ()
    refused = await toolset.call(ToolCall("c1", "k8s_describe", {"name": "cart-7d9f-x2x9q"}))
    assert refused.status == "error" and "cluster" in refused.text
    constraints.items.clear()
    constraints.add(Constraint("exclude_workload", "leave cart alone", "cart"))
    pod_of_cart = await toolset.call(ToolCall("c2", "k8s_describe", {"name": "cart-7d9f-x2x9q"}))
    other = await toolset.call(ToolCall("c3", "k8s_describe", {"name": "cartographer-1"}))
    assert pod_of_cart.status == "error" and "excluded" in pod_of_cart.text
    assert other.status == "success"


def test_a_resumed_run_has_the_same_constraints_as_the_log() -> None:
    applied = [ConstraintApplied("i", 1, "skip shop and no writes", "s", "alice",
                                 constraint="exclude_namespace", value="shop", reply="r1"),
               ConstraintApplied("i", 1, "skip shop and no writes", "s", "alice",
                                 constraint="forbid_writes", reply="r1"),
               ConstraintApplied("i", 1, "focus on cart", "s", "bob",
                                 constraint="focus_workload", value="cart", reply="r2"),
               ConstraintWithdrawn("i", 1, "r2", "s", "bob"),
               ConstraintApplied("i", 1, "stay out of kube-system", "s", "carol")]  # untyped
    state = replay(applied)
    assert [(c.kind, c.value) for c in state.constraints] == [
        ("exclude_namespace", "shop"), ("forbid_writes", ""),
        ("exclude_namespace", "kube-system")]
