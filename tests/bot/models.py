"""The zero-latency model the bot's tests and benchmark serve with.

One `FunctionModel` whose behaviour is chosen by tags in the incident text, so a single
server process can play every test's story: `[gate:NAME]` holds step 2 until the test
opens the gate (an awaited event, never a sleep), `[gate3:NAME]` holds step 3 likewise,
`[fail]` fails like a model endpoint that refuses the key (and leaks it in the message, to
prove Slack never sees it), `[kube-system]` tries to query kube-system from step 3 on,
`[chart]` reads the workload's metrics (an abnormal signal: a chart) before answering,
`[quick]` answers at once (no tools: what the bot itself costs). Everything else is the
happy path over the real tools of the checkout-oom scenario, ending in the right diagnosis.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable

from engines.errors import ModelAuthError
from engines.model import ModelReply, ModelRequest
from engines.react import SUBMIT_TOOL
from engines.scripted_model import FunctionModel, call, reply

LEAKED_KEY = "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"
_GATE = re.compile(r"\[gate:(?P<name>[\w-]+)\]")
_GATE3 = re.compile(r"\[gate3:(?P<name>[\w-]+)\]")

DIAGNOSIS = {
    "category": "oom_killed",
    "culprit": {"kind": "Deployment", "namespace": "shop", "name": "checkout"},
    "summary": "checkout's containers are OOMKilled: the working set hits the 256Mi limit.",
    "evidence": [{"tool": "k8s_list_pods", "quote": "OOMKilled"}],
    "fix": "Raise checkout's memory limit or roll back 2.3.1.",
    "confidence": 0.9,
}


class Gates:
    """Named events a test opens; the model waits on them."""

    def __init__(self) -> None:
        self._events: dict[str, asyncio.Event] = {}

    def get(self, name: str) -> asyncio.Event:
        return self._events.setdefault(name, asyncio.Event())

    def open(self, name: str) -> None:
        self.get(name).set()


def _submit(thought: str = "I have enough evidence.") -> ModelReply:
    return reply(thought, call(SUBMIT_TOOL, DIAGNOSIS))


def turn_function(gates: Gates) -> Callable[[ModelRequest], Awaitable[ModelReply]]:
    async def turn(request: ModelRequest) -> ModelReply:
        incident = str(request.context.get("incident", ""))
        if "[fail]" in incident:
            raise ModelAuthError(f"the endpoint refused the key {LEAKED_KEY} (HTTP 401)")
        if request.final or "[quick]" in incident:
            return _submit("Stopping here; this is my best diagnosis.")
        gate = _GATE.search(incident)
        if gate and request.step == 2:
            await gates.get(gate.group("name")).wait()
        if (later := _GATE3.search(incident)) and request.step == 3:
            await gates.get(later.group("name")).wait()
        if request.step == 1:
            return reply("Look at the pods of the shop namespace first.",
                         call("k8s_list_pods", {"namespace": "shop"}))
        if request.step == 2:
            return reply("Check the recent events in shop.",
                         call("k8s_events", {"namespace": "shop"}))
        if "[kube-system]" in incident and request.step in (3, 4):
            if request.step == 3:
                return reply("Maybe the DNS pods are involved.",
                             call("k8s_list_pods", {"namespace": "kube-system"}),
                             call("k8s_events", {"namespace": "kube-system"}))
            return reply("And everything else, across namespaces.",
                         call("k8s_list_pods", {"limit": 100}),
                         call("k8s_events", {}))
        if request.step == 3 and "[chart]" in incident:
            return reply("Does memory approach the limit?",
                         call("metrics_workload_signals",
                              {"namespace": "shop", "workload": "checkout"}))
        return _submit()

    return turn


def build_test_model(gates: Gates) -> FunctionModel:
    return FunctionModel(turn_function(gates), name="test-model")
