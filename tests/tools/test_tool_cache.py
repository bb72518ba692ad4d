"""The shared tool-result cache (tools/cache.py): TTL, LRU by entries and bytes, single
flight, errors and writes never kept, and never one answer for two clusters, two sets of
excluded namespaces or two incident clocks. Through the real Toolset over real scenarios."""

from __future__ import annotations

import asyncio
import shutil
from collections import Counter
from dataclasses import replace
from datetime import timedelta
from typing import Any

import pytest

from engines.constraints import Constraint, ConstraintSet
from engines.errors import BackendError, ConfigurationError
from engines.model import ToolCall
from tests.tools._tooling import FIXTURE, TOOLS, scenario
from tools.cache import CacheKey, ToolCache, make_key, sources_identity, tool_cache_from_env
from tools.context import ToolContext
from tools.registry import Tool, ToolResult, tool
from tools.scenarios import load_scenario
from tools.sources.base import Sources
from tools.sources.sandbox import sandbox_sources
from tools.toolset import Toolset


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def key(name: str) -> CacheKey:
    return make_key(("cluster:a",), "probe", {"name": name})


def ok(text: str, size: int = 10) -> tuple[ToolResult, int]:
    return ToolResult("success", text, {"text": text}), size


async def test_an_entry_lives_its_ttl_and_no_longer() -> None:
    clock = Clock()
    cache = ToolCache(clock=clock)
    runs = 0

    async def produce() -> tuple[ToolResult, int]:
        nonlocal runs
        runs += 1
        return ok(f"answer {runs}")

    first = await cache.get_or_run(key("a"), 10, produce)
    clock.now += 9.9
    second = await cache.get_or_run(key("a"), 10, produce)
    assert (first.text, first.cached) == ("answer 1", False)
    assert (second.text, second.cached, second.seconds) == ("answer 1", True, 0.0)
    clock.now += 0.2  # 10.1 s after it was stored
    third = await cache.get_or_run(key("a"), 10, produce)
    assert (third.text, third.cached) == ("answer 2", False)
    assert (cache.stats.hits, cache.stats.misses, cache.stats.expirations) == (1, 2, 1)
    assert cache.stats.hit_rate == pytest.approx(1 / 3)


async def test_least_recently_used_goes_first_by_entries_and_by_bytes() -> None:
    cache = ToolCache(max_entries=2)
    await cache.get_or_run(key("a"), 60, lambda: _async(ok("a")))
    await cache.get_or_run(key("b"), 60, lambda: _async(ok("b")))
    await cache.get_or_run(key("a"), 60, _never)  # a is used again: b is the oldest now
    await cache.get_or_run(key("c"), 60, lambda: _async(ok("c")))
    assert cache.entries == 2 and cache.stats.evictions == 1
    assert (await cache.get_or_run(key("a"), 60, _never)).cached
    assert (await cache.get_or_run(key("c"), 60, _never)).cached
    rerun = await cache.get_or_run(key("b"), 60, lambda: _async(ok("b again")))
    assert rerun.text == "b again" and not rerun.cached

    small = ToolCache(max_bytes=100)
    await small.get_or_run(key("x"), 60, lambda: _async(ok("x", 60)))
    await small.get_or_run(key("y"), 60, lambda: _async(ok("y", 60)))  # 120 > 100: x goes
    assert small.entries == 1 and small.bytes == 60
    assert (await small.get_or_run(key("y"), 60, _never)).cached
    await small.get_or_run(key("huge"), 60, lambda: _async(ok("huge", 500)))
    assert small.entries == 1 and small.stats.uncached == 1, "larger than the cache: not kept"


async def test_identical_calls_in_flight_share_one_request() -> None:
    cache = ToolCache()
    release = asyncio.Event()
    runs = 0

    async def slow() -> tuple[ToolResult, int]:
        nonlocal runs
        runs += 1
        await release.wait()
        return ok("pods")

    waiting = [asyncio.create_task(cache.get_or_run(key("a"), 10, slow)) for _ in range(5)]
    await asyncio.sleep(0.01)
    release.set()
    results = await asyncio.gather(*waiting)
    assert runs == 1
    assert [r.cached for r in results] == [False, True, True, True, True]
    assert {r.text for r in results} == {"pods"}
    assert (cache.stats.misses, cache.stats.shared) == (1, 4)


async def test_errors_are_shared_in_flight_but_never_kept() -> None:
    cache = ToolCache()
    runs = 0

    async def failing() -> tuple[ToolResult, int]:
        nonlocal runs
        runs += 1
        return ToolResult("error", "ERROR: apiserver said 503", None, "503"), 10

    for _ in range(2):
        result = await cache.get_or_run(key("a"), 10, failing)
        assert result.status == "error" and not result.cached
    assert runs == 2 and cache.entries == 0 and cache.stats.uncached == 2

    gate = asyncio.Event()

    async def raising() -> tuple[ToolResult, int]:
        await gate.wait()
        raise BackendError("unreachable")

    both = [asyncio.create_task(cache.get_or_run(key("b"), 10, raising)) for _ in range(2)]
    await asyncio.sleep(0.01)
    gate.set()
    outcomes = await asyncio.gather(*both, return_exceptions=True)
    assert all(isinstance(o, BackendError) for o in outcomes)
    assert cache.entries == 0
    after = await cache.get_or_run(key("b"), 10, lambda: _async(ok("back")))
    assert after.text == "back" and not after.cached


async def test_a_flight_nobody_waits_for_is_cancelled() -> None:
    cache = ToolCache()
    started = asyncio.Event()
    cancelled = asyncio.Event()

    async def hanging() -> tuple[ToolResult, int]:
        started.set()
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return ok("never")

    one = asyncio.create_task(cache.get_or_run(key("a"), 10, hanging))
    two = asyncio.create_task(cache.get_or_run(key("a"), 10, hanging))
    await started.wait()
    one.cancel()
    await asyncio.sleep(0.01)
    assert not cancelled.is_set(), "the second caller still waits for it"
    two.cancel()
    await asyncio.wait_for(cancelled.wait(), 1)
    fresh = await cache.get_or_run(key("a"), 10, lambda: _async(ok("fresh")))
    assert fresh.text == "fresh" and not fresh.cached


async def _async(value: tuple[ToolResult, int]) -> tuple[ToolResult, int]:
    return value


async def _never() -> tuple[ToolResult, int]:
    raise AssertionError("the cache should have answered")


# --- through the toolset ----------------------------------------------------------------

calls: Counter[tuple[str, str]] = Counter()


@tool(describe="Probing {name}")
async def probe(ctx: ToolContext, name: str) -> dict[str, Any]:
    """Count calls by the sources they reached.

    Args:
        name: anything.
    """
    calls[(str(sources_identity(ctx.sources)), name)] += 1
    return {"name": name, "seen": calls[(str(sources_identity(ctx.sources)), name)]}


@tool(read_only=False, describe="Restarting {name}")
async def restart(ctx: ToolContext, name: str) -> dict[str, Any]:
    """Count writes.

    Args:
        name: what to restart.
    """
    calls[("write", name)] += 1
    return {"restarted": name}


async def approve(_tool: Tool, _arguments: dict[str, Any], _line: str) -> bool:
    return True


def toolset(cache: ToolCache, sources: Sources, *, fixed: bool = True,
            exclude: tuple[str, ...] = (), minutes_later: int = 0) -> Toolset:
    constraints = ConstraintSet()
    for namespace in exclude:
        constraints.add(Constraint("exclude_namespace", f"not {namespace}", namespace))
    now = scenario().now + timedelta(minutes=minutes_later)
    tools = [probe, restart, TOOLS["k8s_list_pods"], TOOLS["k8s_events"]]
    return Toolset(tools, ToolContext(now, sources, constraints), approver=approve,
                   shared=cache, fixed_clock=fixed,
                   ttls={"probe": 10, "restart": 10, "k8s_list_pods": 10, "k8s_events": 10})


def probe_call(name: str = "x", tool_name: str = "probe") -> ToolCall:
    return ToolCall(f"c-{name}", tool_name, {"name": name}, "")


async def test_two_investigations_of_one_scenario_share_answers() -> None:
    cache = ToolCache()
    sources = sandbox_sources(scenario())
    again = sandbox_sources(scenario())  # another investigation builds its own sources
    call = ToolCall("c1", "k8s_list_pods", {"namespace": "shop"}, "")
    first = await toolset(cache, sources).call(call)
    second = await toolset(cache, again).call(call)
    assert first.status == "success" and not first.cached
    assert second.cached and second.text == first.text and second.data == first.data
    assert cache.stats.hits == 1


async def test_never_across_clusters_constraints_or_clocks() -> None:
    calls.clear()
    cache = ToolCache()
    shop = sandbox_sources(scenario())
    other = sandbox_sources(load_scenario("checkout-oom"))
    await toolset(cache, shop).call(probe_call())
    await toolset(cache, other).call(probe_call())
    await toolset(cache, shop, exclude=("kube-system",)).call(probe_call())
    await toolset(cache, shop, minutes_later=5).call(probe_call())
    assert sum(calls.values()) == 4, "another cluster, constraint set or incident clock"
    assert cache.stats.hits == 0
    # on the wall clock the start time is not in the key: the TTL bounds the staleness
    await toolset(cache, shop, fixed=False).call(probe_call())
    wall = await toolset(cache, shop, fixed=False, minutes_later=1).call(probe_call())
    assert wall.cached and sum(calls.values()) == 5


async def test_writes_are_never_cached_nor_unknown_sources_shared() -> None:
    calls.clear()
    cache = ToolCache()
    shop = sandbox_sources(scenario())
    for _ in range(2):
        result = await toolset(cache, shop).call(probe_call("db", "restart"))
        assert result.status == "success" and not result.cached
    assert calls[("write", "db")] == 2 and cache.entries == 0

    anonymous = replace(shop, cluster=_Anonymous(shop.cluster))
    assert sources_identity(anonymous) is None
    for _ in range(2):
        await toolset(cache, anonymous).call(probe_call("y"))
    assert calls[("None", "y")] == 2 and cache.stats.lookups == 0


class _Anonymous:
    """A source that cannot say which cluster it is."""

    def __init__(self, inner: object) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        if name in ("identity", "description"):
            raise AttributeError(name)
        return getattr(self._inner, name)


async def test_two_scenarios_with_one_id_are_two_clusters(tmp_path: Any) -> None:
    """Held-out sets may reuse an id: the identity is the folder."""
    copy = tmp_path / FIXTURE.name
    shutil.copytree(FIXTURE, copy)
    first = sources_identity(sandbox_sources(scenario()))
    second = sources_identity(sandbox_sources(load_scenario(copy)))
    assert first is not None and second is not None and first != second


def test_configured_from_the_environment() -> None:
    assert tool_cache_from_env({"TRIAGE_TOOL_CACHE": "off"}) is None
    default = tool_cache_from_env({})
    assert default is not None and default.max_entries == 2048
    sized = tool_cache_from_env({"TRIAGE_TOOL_CACHE_ENTRIES": "10", "TRIAGE_TOOL_CACHE_MB": "2"})
    assert sized is not None and (sized.max_entries, sized.max_bytes) == (10, 2 * 2**20)
    with pytest.raises(ConfigurationError, match="on or off"):
        tool_cache_from_env({"TRIAGE_TOOL_CACHE": "maybe"})
    with pytest.raises(ConfigurationError, match="at least 1"):
        tool_cache_from_env({"TRIAGE_TOOL_CACHE_ENTRIES": "0"})
