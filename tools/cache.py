"""A tool-result cache shared by the investigations of one process.

Two people report the same outage a minute apart, or the bot investigates a retried alert:
both investigations list the same pods, read the same events and the same rollout history.
The cache answers the second from the first, for a short time per tool (`CACHE_TTL` in
tools.catalog: events and pods for seconds, rollout history for minutes), so the backends
see one request where there were two.

What makes two calls the same is the `CacheKey`: the data behind them (the identity of
every configured source, so two clusters never share an entry), the tool and its canonical
arguments, and what in the investigation changes the answer: the namespaces a human
excluded (tools filter them out of cross-namespace answers), the investigation's fixed
clock when it has one (a scenario's `now`, `--at`: tools compute their windows and ages
from it) and the observation budget the text was cut to. An investigation on the wall
clock has no clock in its key: the TTL is how stale an answer may be.

Never cached: a tool that changes anything (not `read_only`), a tool with no TTL, an error
(the next call may succeed), a call whose sources cannot say who they are (no `identity` or
`description`). Bounded by entries and by bytes, least recently used out first. Concurrent
identical calls share one request in flight (single flight): the first runs it, the others
wait for its result, and an error is shared with those waiting but not kept.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any

from engines.errors import ConfigurationError
from tools.registry import ToolResult
from tools.sources.base import Sources

DEFAULT_MAX_ENTRIES = 2048
DEFAULT_MAX_BYTES = 64 * 1024 * 1024

Producer = Callable[[], Awaitable[tuple[ToolResult, int]]]
"""Runs the call for real: its result and the bytes it would hold in the cache."""


@dataclass(frozen=True, slots=True)
class CacheKey:
    """Everything that makes two calls return the same answer."""

    sources: tuple[str, ...]
    tool: str
    arguments: str
    excluded_namespaces: tuple[str, ...] = ()
    clock: str = ""
    observation_tokens: int = 0


def source_identity(source: object) -> str | None:
    """Who a source is: its `identity` (sandbox: the scenario's folder), else its
    `description` (live: the server's address, the kube context), else unknown."""
    for attribute in ("identity", "description"):
        value = getattr(source, attribute, None)
        if isinstance(value, str) and value:
            return value
    return None


def sources_identity(sources: Sources) -> tuple[str, ...] | None:
    """The identity of every configured source, or None if one cannot say (not cached)."""
    found: list[str] = []
    for name in ("cluster", "logs", "metrics"):
        source = getattr(sources, name)
        if source is None:
            found.append(f"{name}:-")
            continue
        identity = source_identity(source)
        if identity is None:
            return None
        found.append(f"{name}:{identity}")
    return tuple(found)


def make_key(
    scope: tuple[str, ...], tool: str, arguments: Mapping[str, Any], *,
    excluded_namespaces: frozenset[str] = frozenset(), clock: datetime | None = None,
    observation_tokens: int = 0,
) -> CacheKey:
    """The key of one call; `clock` only when the investigation's clock is fixed."""
    return CacheKey(
        scope, tool, json.dumps(arguments, sort_keys=True, default=str, separators=(",", ":")),
        tuple(sorted(excluded_namespaces)), clock.isoformat() if clock is not None else "",
        observation_tokens,
    )


@dataclass(slots=True)
class CacheStats:
    """What the cache did, since it was made. `hits` were answered from an entry, `shared`
    by joining an identical call in flight, `misses` ran; `uncached` ran and could not be
    kept (errors). Hit rate counts hits and shared calls as saved."""

    hits: int = 0
    shared: int = 0
    misses: int = 0
    uncached: int = 0
    evictions: int = 0
    expirations: int = 0

    @property
    def lookups(self) -> int:
        return self.hits + self.shared + self.misses

    @property
    def hit_rate(self) -> float:
        return (self.hits + self.shared) / self.lookups if self.lookups else 0.0


@dataclass(slots=True)
class _Entry:
    result: ToolResult
    size: int
    expires: float


@dataclass(slots=True)
class _Flight:
    task: asyncio.Task[tuple[ToolResult, int]]
    waiters: int = 1


@dataclass
class ToolCache:
    """LRU entries with a TTL each, bounded by `max_entries` and `max_bytes`."""

    max_entries: int = DEFAULT_MAX_ENTRIES
    max_bytes: int = DEFAULT_MAX_BYTES
    clock: Callable[[], float] = time.monotonic
    stats: CacheStats = field(default_factory=CacheStats)
    _entries: OrderedDict[CacheKey, _Entry] = field(default_factory=OrderedDict)
    _flights: dict[CacheKey, _Flight] = field(default_factory=dict)
    _bytes: int = 0

    def __post_init__(self) -> None:
        if self.max_entries < 1 or self.max_bytes < 1:
            raise ConfigurationError("the tool cache needs room for at least one entry")

    @property
    def entries(self) -> int:
        return len(self._entries)

    @property
    def bytes(self) -> int:
        return self._bytes

    async def get_or_run(self, key: CacheKey, ttl: float, produce: Producer) -> ToolResult:
        """The cached answer (marked `cached`), the one in flight, or `produce`'s."""
        entry = self._entries.get(key)
        if entry is not None:
            if entry.expires > self.clock():
                self._entries.move_to_end(key)
                self.stats.hits += 1
                return _as_cached(entry.result)
            self._drop(key)
            self.stats.expirations += 1
        flight = self._flights.get(key)
        if flight is not None:
            flight.waiters += 1
            self.stats.shared += 1
            result, _ = await self._wait(key, flight)
            return _as_cached(result)
        self.stats.misses += 1
        flight = _Flight(asyncio.ensure_future(self._produce(key, ttl, produce)))
        self._flights[key] = flight
        result, _ = await self._wait(key, flight)
        return result

    async def _produce(self, key: CacheKey, ttl: float, produce: Producer) -> tuple[
        ToolResult, int
    ]:
        try:
            result, size = await produce()
        except Exception:
            self.stats.uncached += 1
            raise
        finally:
            self._flights.pop(key, None)
        if result.status == "success" and ttl > 0 and size <= self.max_bytes:
            self._store(key, _Entry(result, size, self.clock() + ttl))
        else:
            self.stats.uncached += 1
        return result, size

    async def _wait(self, key: CacheKey, flight: _Flight) -> tuple[ToolResult, int]:
        """Wait for a flight; the last waiter to give up cancels it (nobody needs it)."""
        try:
            return await asyncio.shield(flight.task)
        except asyncio.CancelledError:
            flight.waiters -= 1
            if flight.waiters == 0 and not flight.task.done():
                flight.task.cancel()
                self._flights.pop(key, None)
            raise

    def _store(self, key: CacheKey, entry: _Entry) -> None:
        if key in self._entries:
            self._drop(key)
        self._entries[key] = entry
        self._bytes += entry.size
        while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
            oldest = next(iter(self._entries))
            self._drop(oldest)
            self.stats.evictions += 1

    def _drop(self, key: CacheKey) -> None:
        gone = self._entries.pop(key)
        self._bytes -= gone.size

    def clear(self) -> None:
        self._entries.clear()
        self._bytes = 0


def _as_cached(result: ToolResult) -> ToolResult:
    """What a caller gets from the cache: no backend time spent, no raw tokens counted."""
    return replace(result, cached=True, seconds=0.0, raw_tokens=0, attempts=0)


def result_size(result: ToolResult) -> int:
    """Roughly what an entry holds: its text and its data as JSON (computed off the event
    loop, with the rendering)."""
    data = json.dumps(result.data, default=str) if result.data is not None else ""
    return len(result.text.encode()) + len(data.encode()) + 200


def tool_cache_from_env(environ: Mapping[str, str] = os.environ) -> ToolCache | None:
    """`TRIAGE_TOOL_CACHE=on|off` (default on), `TRIAGE_TOOL_CACHE_ENTRIES` and
    `TRIAGE_TOOL_CACHE_MB` bound it. None when off."""
    switch = environ.get("TRIAGE_TOOL_CACHE", "on").strip().lower()
    if switch in ("off", "0", "false", "no"):
        return None
    if switch not in ("on", "1", "true", "yes", ""):
        raise ConfigurationError(f"TRIAGE_TOOL_CACHE must be on or off, not {switch!r}")
    entries = _positive(environ, "TRIAGE_TOOL_CACHE_ENTRIES", DEFAULT_MAX_ENTRIES)
    megabytes = _positive(environ, "TRIAGE_TOOL_CACHE_MB", DEFAULT_MAX_BYTES // 2**20)
    return ToolCache(max_entries=entries, max_bytes=megabytes * 2**20)


def _positive(environ: Mapping[str, str], name: str, default: int) -> int:
    given = environ.get(name, "").strip()
    if not given:
        return default
    try:
        value = int(given)
    except ValueError:
        raise ConfigurationError(f"{name} must be a whole number, not {given!r}") from None
    if value < 1:
        raise ConfigurationError(f"{name} must be at least 1, not {value}")
    return value
