"""Triage as a fleet: `python -m tests.bench fleet` (or `python -m tests.bench.bench_fleet`).

Three sections, each printing what it measured:

- **Shared tool cache** over the bundled suite run as one workload, in process, the
  offline analyzer and the react engine (the eval's defaults). The 25 scenarios are 25
  different clusters, and nothing is shared across clusters: one investigation per scenario
  would hit nothing, by design. So the workload is what happens to one cluster in an
  incident: the same incident investigated twice. "duplicate reports" starts both at once
  (two people report the same outage: the second call of each pair joins the first one in
  flight or reads its entry); "second look" runs the second after the first ends (someone
  asks again a minute later). The baseline is every investigation with a cache of its own
  (nothing shared): its backend calls are what the workload costs without the shared cache.
  Each run is scored against its scenario's truth, so the cache is shown not to change a
  diagnosis.
- **Acks with two replicas**: two real `triage serve` processes in HTTP mode, both on one
  real PostgreSQL (tests/services/postgres.py), behind a loopback round-robin proxy at one
  address, as Slack reaches a Deployment through its Service: bursts of 50 signed mentions
  at once, the time to ack measured at the client, through the proxy.
- **Takeover after a kill**: tests/bench/bench_fleet_takeover.py's figures (a replica
  holding investigations SIGKILLed, the time until the survivor claims their leases and
  goes on), on its own PostgreSQL.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import statistics
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass
from typing import Any

import aiohttp
from aiohttp import web

from bot.evaluation import EvalResult, evaluate_one
from bot.wiring import build_model
from tests.bench.bench_fleet_takeover import print_figures, takeover_figures
from tests.bench.bench_slack import REPORT, SlackThread, _burst, percentile
from tests.bot.harness import BotProcess, bot_process, ended
from tests.fakes.slack_api import SlackSender
from tests.services.postgres import PostgresServer
from tools.cache import CacheStats, ToolCache
from tools.scenarios import bundled_ids

# --- the shared tool cache --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Workload:
    name: str
    rows: list[EvalResult]
    stats: CacheStats
    seconds: float

    @property
    def correct(self) -> int:
        return sum(r.correct for r in self.rows)


async def _scored(ref: str, cache: ToolCache) -> EvalResult:
    return await evaluate_one(ref, lambda: build_model("analyzer"), "react", cache=cache)


Investigation = Callable[[str, Callable[[], ToolCache]], Awaitable[list[EvalResult]]]
"""One scenario's investigations, each given the cache it runs with."""


async def _run(name: str, jobs: int, refs: list[str], per_scenario: Investigation,
               shared: bool) -> Workload:
    """Every scenario through `per_scenario`, `jobs` scenarios at a time; one cache for all
    (`shared`) or a new one per investigation (the baseline's, summed)."""
    gate = asyncio.Semaphore(jobs)
    one = ToolCache()
    caches: list[ToolCache] = [one] if shared else []

    def cache_for() -> ToolCache:
        if shared:
            return one
        caches.append(ToolCache())
        return caches[-1]

    async def scenario(ref: str) -> list[EvalResult]:
        async with gate:
            return await per_scenario(ref, cache_for)

    started = time.perf_counter()
    rows = [row for rows in await asyncio.gather(*(scenario(r) for r in refs)) for row in rows]
    seconds = time.perf_counter() - started
    total = CacheStats()
    for cache in caches:
        for field in ("hits", "shared", "misses", "uncached", "evictions", "expirations"):
            setattr(total, field, getattr(total, field) + getattr(cache.stats, field))
    return Workload(name, rows, total, seconds)


async def _twice_at_once(ref: str, cache: Callable[[], ToolCache]) -> list[EvalResult]:
    return list(await asyncio.gather(_scored(ref, cache()), _scored(ref, cache())))


async def _twice_in_a_row(ref: str, cache: Callable[[], ToolCache]) -> list[EvalResult]:
    return [await _scored(ref, cache()), await _scored(ref, cache())]


async def cache_section(jobs: int) -> None:
    refs = bundled_ids()
    baseline = await _run("no sharing (a cache per investigation)", jobs, refs,
                          _twice_at_once, shared=False)
    duplicate = await _run("duplicate reports (2 at once per scenario)", jobs, refs,
                           _twice_at_once, shared=True)
    second = await _run("second look (2 in a row per scenario)", jobs, refs,
                        _twice_in_a_row, shared=True)
    print(f"shared tool cache: the {len(refs)} bundled scenarios (25 clusters), each "
          f"investigated twice = {2 * len(refs)} investigations per workload, analyzer + react, "
          f"{jobs} scenarios at a time")
    backend = baseline.stats.misses
    print(f"  {'workload':<44} {'correct':>8} {'lookups':>8} {'hits':>6} {'joined':>7} "
          f"{'backend':>8} {'hit rate':>9} {'saved':>6} {'wall':>7}")
    for w in (baseline, duplicate, second):
        saved = backend - w.stats.misses
        print(f"  {w.name:<44} {w.correct:>4}/{len(w.rows):<3} {w.stats.lookups:>8} "
              f"{w.stats.hits:>6} {w.stats.shared:>7} {w.stats.misses:>8} "
              f"{100 * w.stats.hit_rate:>8.1f}% {saved:>6} {w.seconds:>6.1f}s")
    print("  (lookups: calls that reached the shared cache, after each investigation's own "
          "repeat cache; hits: answered from an entry; joined: shared an identical call in "
          "flight; backend: calls that ran; saved: backend calls fewer than the baseline)")
    found = {w.name: Counter((r.scenario, _finding(r)) for r in w.rows)
             for w in (baseline, duplicate, second)}
    changed = sum((found[baseline.name] - found[w.name]).total() for w in (duplicate, second))
    print(f"  diagnoses (category and culprit) different from the baseline's: {changed}")


def _finding(row: EvalResult) -> str:
    diagnosis = row.diagnosis or {}
    return f"{diagnosis.get('category')} {diagnosis.get('culprit')}"


# --- acks with two replicas behind one address -------------------------------------------


class LoopThread:
    """An event loop on a thread of its own, so the proxy does not share the client's."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    async def run(self, coroutine: Coroutine[Any, Any, Any]) -> Any:
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coroutine, self.loop))

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)


class RoundRobin:
    """A loopback HTTP proxy: each request to the next upstream in turn, headers (Slack's
    signature) and body as they came, the upstream's answer as it gave it."""

    def __init__(self, upstreams: list[str]) -> None:
        self.upstreams = upstreams
        self.sent: Counter[str] = Counter()
        self._next = itertools.cycle(upstreams)
        self._runner: web.AppRunner | None = None
        self._session: aiohttp.ClientSession | None = None
        self.port = 0

    async def start(self) -> None:
        self._session = aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0))
        app = web.Application()
        app.router.add_route("*", "/{path:.*}", self._forward)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = self._runner.addresses[0][1]

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
        if self._session is not None:
            await self._session.close()

    async def _forward(self, request: web.Request) -> web.Response:
        assert self._session is not None
        upstream = next(self._next)
        self.sent[upstream] += 1
        body = await request.read()
        headers = {k: v for k, v in request.headers.items()
                   if k.lower() not in ("host", "content-length", "connection")}
        async with self._session.request(request.method, upstream + request.path_qs,
                                         headers=headers, data=body) as answer:
            content = await answer.read()
            kept = {k: v for k, v in answer.headers.items()
                    if k.lower() in ("content-type", "x-slack-no-retry")}
            return web.Response(status=answer.status, body=content, headers=kept)


@contextlib.asynccontextmanager
async def postgres() -> AsyncIterator[PostgresServer]:
    """A throwaway PostgreSQL (the tests' own server)."""
    server = PostgresServer()
    await asyncio.to_thread(server.start)
    try:
        yield server
    finally:
        await asyncio.to_thread(server.stop)


_databases = itertools.count(1)


def new_database(server: PostgresServer) -> str:
    """A database nobody used: a run's dedupe claims must not meet an earlier run's."""
    name = f"fleet_{os.getpid()}_{next(_databases)}"
    server.psql(f"CREATE DATABASE {name}", database="postgres")
    return server.dsn.rsplit("/", 1)[0] + f"/{name}"


@dataclass(frozen=True, slots=True)
class AckRun:
    setup: str
    acks_ms: list[float]
    burst_p99_ms: list[float]
    spread: list[int]
    all_diagnosed_s: float


async def acks(setup: str, database_url: str, replicas: int, mentions: int, channels: int,
               rounds: int) -> AckRun:
    """`rounds` bursts through a round-robin proxy in front of `replicas` bots."""
    env = {"TRIAGE_DATABASE_URL": database_url, "TRIAGE_SLACK_STREAMING": "on"}
    proxy_thread = LoopThread()
    async with SlackThread() as fake, contextlib.AsyncExitStack() as stack:
        bots: list[BotProcess] = []
        for _ in range(replicas):  # one after the other: the first migrates the database
            bots.append(await stack.enter_async_context(bot_process(fake.slack, env=env)))
        proxy = RoundRobin([b.url for b in bots])
        await proxy_thread.run(proxy.start())
        url = f"http://127.0.0.1:{proxy.port}/slack/events"
        try:
            async with aiohttp.ClientSession() as session:  # each replica's first request
                warm = [await SlackSender(url, session).mention(f"CWARM{i}", "UALICE", REPORT)
                        for i in range(replicas)]
            for i, (_, ts) in enumerate(warm):
                await fake.run(ended(fake.slack, f"CWARM{i}", ts, within=60))
            before = Counter(proxy.sent)
            bursts = [await _burst(fake, url, mentions, channels, REPORT, r)
                      for r in range(rounds)]
        except (AssertionError, TimeoutError):
            for bot in bots:
                print(f"a replica's last log lines:\n{bot.log()}", file=sys.stderr)
            raise
        finally:
            await proxy_thread.run(proxy.stop())
            proxy_thread.close()
        for bot in bots:
            await bot.stop()
    return AckRun(setup, [a for b in bursts for a in b["acks_ms"]],
                  [percentile(b["acks_ms"], 0.99) for b in bursts],
                  [proxy.sent[b.url] - before[b.url] for b in bots],
                  max(b["all_diagnosed_s"] for b in bursts))


async def acks_section(server: PostgresServer, mentions: int, channels: int, rounds: int,
                       compare: bool) -> None:
    """Two replicas on PostgreSQL; with `compare`, one replica on PostgreSQL and one on
    SQLite (today's default) through the same proxy, measured under the same load."""
    runs: list[AckRun] = []
    if compare:
        with tempfile.TemporaryDirectory(prefix="triage-fleet-") as folder:
            runs.append(await acks("1 replica, SQLite", f"sqlite:///{folder}/triage.db", 1,
                                   mentions, channels, rounds))
        runs.append(await acks("1 replica, PostgreSQL", new_database(server), 1,
                               mentions, channels, rounds))
    runs.append(await acks("2 replicas, PostgreSQL", new_database(server), 2,
                           mentions, channels, rounds))
    load = os.getloadavg()[0]
    print(f"acks: {rounds} bursts of {mentions} signed mentions at once over {channels} "
          "channels, `triage serve` in HTTP mode behind a loopback round-robin proxy (one "
          "address, as a Service), zero-latency model, checkout-oom, streaming on; load "
          f"average {load:.1f} on {os.cpu_count()} CPUs (target p99 < 100 ms)")
    print(f"  {'setup':<24} {'p50':>9} {'p99':>9} {'max':>9}  {'p99 per burst':<20} "
          f"{'per replica':<12} {'all diagnosed':>13}")
    for run in runs:
        bursts = " ".join(f"{p:.0f}" for p in run.burst_p99_ms) + " ms"
        print(f"  {run.setup:<24} {statistics.median(run.acks_ms):>6.1f} ms "
              f"{percentile(run.acks_ms, 0.99):>6.1f} ms {max(run.acks_ms):>6.1f} ms  "
              f"{bursts:<20} {'/'.join(map(str, run.spread)):<12} "
              f"{run.all_diagnosed_s:>11.1f} s")


async def takeover_section() -> None:
    """Takeover after a SIGKILL, as bench_fleet_takeover.py measures it."""
    print_figures(await takeover_figures())


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.bench_fleet",
                                     description="Triage as a fleet: cache, acks, takeover.")
    parser.add_argument("--jobs", type=int, default=4, help="scenarios at a time (cache)")
    parser.add_argument("--mentions", type=int, default=50)
    parser.add_argument("--channels", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--compare", action="store_true",
                        help="acks: also one replica on PostgreSQL and one on SQLite, under "
                        "the same load")
    parser.add_argument("--only", choices=("cache", "acks", "takeover"), action="append",
                        help="run only these sections (repeatable)")
    args = parser.parse_args(argv or [])
    sections = set(args.only or ("cache", "acks", "takeover"))
    if "cache" in sections:
        await cache_section(args.jobs)
    if "acks" in sections:
        async with postgres() as server:
            await acks_section(server, args.mentions, args.channels, args.rounds, args.compare)
    if "takeover" in sections:
        await takeover_section()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
