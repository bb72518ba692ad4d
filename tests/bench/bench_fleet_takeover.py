"""How long a dead replica's investigations wait: `python -m tests.bench fleet_takeover`.

Two real `triage serve` replicas (the tests' zero-latency model, the checkout-oom scenario)
share a real PostgreSQL (tests/services/postgres.py) and the loopback Slack. Each run starts
a victim replica, gives it a few mentions that its model holds at step 2, SIGKILLs it once
they are held, and measures, from the kill: the survivor's claim of the first lease (its
generation moved), the first new event the survivor writes for one of them, and the time
until every one of them has a new event. The survivor's gate is open, so it carries on at
once. The figures are bounded by the lease TTL: a lease expires between 2/3 TTL and one
TTL after the kill (renewals come every TTL/3), and the survivor looks every TTL/3.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time

import aiohttp

from bot.store import Store
from tests.bot.fleet import event_counts, held_after_step_one, investigation_ids, lease_rows
from tests.bot.fleet import replica as start_replica
from tests.bot.harness import ended
from tests.fakes.slack_api import FakeSlack, SlackSender
from tests.services.postgres import PostgresServer
from tests.store.conftest import new_postgres_database

REPORT = "[gate:held] checkout in prod keeps restarting, customers get 502s"
POLL_SECONDS = 0.005


async def _one_run(slack: FakeSlack, session: aiohttp.ClientSession, store: Store, url: str,
                   lease_seconds: float, mentions: int, run: int) -> dict[str, float]:
    async with start_replica(slack, url, lease_seconds) as victim:
        sender = SlackSender(f"{victim.url}/slack/events", session)
        threads = []
        for n in range(mentions):
            _, ts = await sender.mention(f"CTAKE{n % 4}", "UALICE", f"{REPORT} ({run}.{n})")
            threads.append((f"CTAKE{n % 4}", ts))
        ids = await investigation_ids(store, threads)
        await held_after_step_one(store, ids)
        before = await event_counts(store, ids)
        owner = {o for o, _, _ in (await lease_rows(store, ids)).values()}
        killed = time.perf_counter()
        victim.process.kill()
        await victim.process.wait()
    claimed = first_event = None
    resumed: set[str] = set()
    while len(resumed) < len(ids):
        if time.perf_counter() - killed > 10 * lease_seconds + 30:
            raise AssertionError("the survivor never took the investigations over")
        if claimed is None:
            rows = await lease_rows(store, ids)
            if any(o not in owner for o, _, _ in rows.values()):
                claimed = time.perf_counter() - killed
        counts = await event_counts(store, ids)
        grown = {i for i in ids if counts[i] > before[i]}
        if grown and first_event is None:
            first_event = time.perf_counter() - killed
        resumed |= grown
        await asyncio.sleep(POLL_SECONDS)
    all_resumed = time.perf_counter() - killed
    for channel, ts in threads:
        await ended(slack, channel, ts, within=30)
    assert claimed is not None and first_event is not None
    return {"claimed_s": claimed, "first_event_s": first_event, "all_resumed_s": all_resumed}


async def takeover_figures(runs: int = 5, mentions: int = 4,
                           lease_seconds: float = 2.0) -> dict[str, float]:
    """Takeover after a SIGKILL over `runs` kills: mean, min and max of each figure."""
    server = PostgresServer()
    await asyncio.to_thread(server.start)
    try:
        url = new_postgres_database(server)
        async with FakeSlack() as slack, aiohttp.ClientSession() as session, \
                await Store.open(url) as store:
            await store.migrate()
            async with start_replica(slack, url, lease_seconds) as survivor:
                survivor.open_gate("held")
                measured = [await _one_run(slack, session, store, url, lease_seconds,
                                           mentions, run) for run in range(runs)]
    finally:
        await asyncio.to_thread(server.stop)
    figures: dict[str, float] = {"runs": float(runs), "mentions_per_run": float(mentions),
                                 "lease_seconds": lease_seconds}
    for name in ("claimed_s", "first_event_s", "all_resumed_s"):
        values = [m[name] for m in measured]
        figures[f"{name}_mean"] = statistics.fmean(values)
        figures[f"{name}_min"] = min(values)
        figures[f"{name}_max"] = max(values)
    return figures


def print_figures(figures: dict[str, float]) -> None:
    print(f"fleet takeover: {figures['runs']:.0f} SIGKILLs of a replica holding "
          f"{figures['mentions_per_run']:.0f} investigations mid-run, TRIAGE_LEASE_SECONDS="
          f"{figures['lease_seconds']:g}, real PostgreSQL, loopback Slack (load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs)")
    for name, label in (("claimed_s", "lease claimed"), ("first_event_s", "first new event"),
                        ("all_resumed_s", "all resumed")):
        print(f"  kill -> {label:<16} mean {figures[f'{name}_mean']:.2f} s   min "
              f"{figures[f'{name}_min']:.2f} s   max {figures[f'{name}_max']:.2f} s")


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench fleet_takeover",
                                     description="Takeover time after a replica is killed.")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--mentions", type=int, default=4)
    parser.add_argument("--lease-seconds", type=float, default=2.0)
    args = parser.parse_args(argv or [])
    print_figures(await takeover_figures(args.runs, args.mentions, args.lease_seconds))
    return 0


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
