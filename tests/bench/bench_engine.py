"""Engine benchmarks: overhead per step, concurrency of tool calls, compression.

Run with `python -m tests.bench engine`. Prints figures; asserts nothing (targets are
printed beside the figures so a regression is visible, not flaky).
"""

from __future__ import annotations

import asyncio
import statistics
import time
from datetime import UTC, datetime
from typing import Any

from engines.constraints import ConstraintSet
from engines.incident import Incident
from engines.model import ModelReply, ModelRequest
from engines.react import EngineConfig, ReactEngine
from engines.scripted_model import FunctionModel, call, reply
from tools.context import ToolContext
from tools.registry import Tool, tool
from tools.sources.base import Sources
from tools.toolset import Toolset

NOW = datetime(2026, 11, 30, 10, 0, tzinfo=UTC)
DIAGNOSIS = {
    "category": "oom_killed",
    "culprit": {"kind": "Deployment", "namespace": "shop", "name": "checkout"},
    "summary": "bench",
    "evidence": [],
    "fix": "",
    "confidence": 0.5,
}


@tool()
async def bench_echo(ctx: ToolContext, n: int) -> dict[str, Any]:
    """Return a small observation.

    Args:
        n: A counter, so that every call is new.
    """
    return {"n": n, "pods": [{"name": f"web-{i}", "phase": "Running"} for i in range(5)]}


def _sleeper(index: int) -> Tool:
    @tool(name=f"bench_sleep_{index}")
    async def sleep(ctx: ToolContext) -> str:
        """Wait 200 ms, like a slow backend."""
        await asyncio.sleep(0.2)
        return "slept"

    return sleep


def _toolset(tools: tuple[Tool, ...]) -> tuple[Toolset, ConstraintSet]:
    constraints = ConstraintSet()
    context = ToolContext(now=NOW, sources=Sources(), constraints=constraints)
    return Toolset(tools, context), constraints


async def engine_overhead(steps: int = 300) -> float:
    """Milliseconds per step with a zero-latency model and a zero-latency tool."""
    toolset, constraints = _toolset((bench_echo,))

    def turn(request: ModelRequest) -> ModelReply:
        if request.step >= steps:
            return reply("done", call("submit_diagnosis", DIAGNOSIS))
        return reply("next", call("bench_echo", {"n": request.step}))

    engine = ReactEngine(EngineConfig(max_steps=steps, context_tokens=8_000, token_budget=10**9))
    started = time.perf_counter()
    result = await engine.run(
        Incident("bench", now=NOW), FunctionModel(turn), toolset, constraints=constraints
    )
    elapsed = time.perf_counter() - started
    assert result.reason == "diagnosed", (result.reason, result.detail)
    return elapsed / result.steps * 1000


async def concurrent_step() -> float:
    """Seconds for one step with four tool calls of 200 ms each."""
    toolset, constraints = _toolset(tuple(_sleeper(i) for i in range(4)))
    timings: list[float] = []

    def turn(request: ModelRequest) -> ModelReply:
        timings.append(time.perf_counter())
        if request.step == 1:
            return reply("all four", *(call(f"bench_sleep_{i}") for i in range(4)))
        return reply("done", call("submit_diagnosis", DIAGNOSIS))

    await ReactEngine().run(
        Incident("bench", now=NOW), FunctionModel(turn), toolset, constraints=constraints
    )
    return timings[1] - timings[0]


async def compression() -> list[tuple[str, int, int, int, int]]:
    """Per bundled scenario: observation tokens and prompt tokens, compressed against raw."""
    from bot.wiring import build_model, investigate, scenario_setting
    from engines.events import Event, ObservationReceived
    from tools.scenarios import bundled_ids

    rows = []
    for scenario_id in bundled_ids():
        observations: list[ObservationReceived] = []

        async def sink(event: Event, seen: list[ObservationReceived] = observations) -> None:
            if isinstance(event, ObservationReceived):
                seen.append(event)

        setting = scenario_setting(scenario_id)
        assert setting.scenario is not None
        result = await investigate(
            setting.scenario.report, setting, build_model("analyzer"), sink=sink
        )
        turns = result.steps + (1 if result.reason != "diagnosed" else 0)
        extra = sum(
            (max(o.raw_tokens, o.tokens) - o.tokens) * max(turns - o.step, 0) for o in observations
        )
        prompt = result.usage.input_tokens
        rows.append(
            (
                scenario_id,
                result.observation_tokens,
                result.raw_observation_tokens,
                prompt,
                prompt + extra,
            )
        )
    return rows


async def main() -> None:
    overheads = [await engine_overhead() for _ in range(3)]
    print(
        f"engine overhead per step (zero-latency model, 300 steps, best of 3): "
        f"{min(overheads):.3f} ms (median {statistics.median(overheads):.3f} ms; "
        "target < 2 ms)"
    )
    step = min([await concurrent_step() for _ in range(3)])
    print(f"one step with four 200 ms tool calls: {step * 1000:.0f} ms (target < 300 ms)")
    rows = await compression()
    if not rows:
        print("compression: no bundled scenarios")
        return
    print("\ntokens per investigation with the analyzer (compressed vs raw tool output):")
    print(f"{'scenario':32} {'obs':>7} {'raw obs':>9} {'prompt':>8} {'raw prompt':>11}")
    for name, obs, raw, prompt, raw_prompt in rows:
        print(f"{name:32} {obs:7} {raw:9} {prompt:8} {raw_prompt:11}")
    obs_total = sum(r[1] for r in rows)
    raw_total = sum(r[2] for r in rows)
    prompt_total = sum(r[3] for r in rows)
    raw_prompt_total = sum(r[4] for r in rows)
    print(
        f"observations: {obs_total} tokens vs {raw_total} raw: "
        f"{1 - obs_total / raw_total:.0%} fewer"
    )
    print(
        f"tokens sent to the model: {prompt_total} vs {raw_prompt_total} with raw output: "
        f"{1 - prompt_total / raw_prompt_total:.0%} fewer (target at least 60% fewer)"
    )


if __name__ == "__main__":
    asyncio.run(main())
