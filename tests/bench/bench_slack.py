"""How fast the Slack bot acks and finishes under a burst: `python -m tests.bench.bench_slack`
(or `python -m tests.bench slack`).

Runs the real `triage serve` (HTTP mode, the tests' zero-latency model, the checkout-oom
scenario) against the loopback Slack, fires N signed mentions at once over real HTTP, and
prints the time to ack (p50, p99, max; Slack wants an ack within 3 s, the target is p99
under 100 ms) and the time until every thread has its diagnosis. With a zero-latency model
that total is the bot's own cost: the engine, the tools, rendering, charts and Slack posts.
The loopback Slack runs on a thread of its own, so serving the bot's Web API calls does not
slow the client that measures the acks.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import os
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Coroutine
from typing import Any, TypeVar

import aiohttp

from bot.monitor import percentile as nearest_rank
from tests.bot.harness import bot_process, ended
from tests.fakes.slack_api import FakeSlack, SlackSender

REPORT = "[chart] checkout in prod keeps restarting, customers get 502s on payment"
T = TypeVar("T")


class SlackThread:
    """A FakeSlack living on its own event loop in a thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.slack = FakeSlack()

    async def __aenter__(self) -> SlackThread:
        self._thread.start()
        await self.run(self.slack.__aenter__())
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.run(self.slack.__aexit__(None, None, None))
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)

    async def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coroutine, self.loop))


def percentile(values: list[float], q: float) -> float:
    """bot.monitor's nearest-rank percentile, 0 for no values (the figures print floats)."""
    return nearest_rank(values, q) or 0.0


async def _all_diagnosed(slack: FakeSlack, threads: list[tuple[str, str]]) -> None:
    wanted = {(channel, ts) for channel, ts in threads}
    seen: set[tuple[str, str]] = set()
    checked = 0

    def done(fake: FakeSlack) -> bool:  # looks only at the calls it has not seen yet
        nonlocal checked
        for call in fake.calls[checked:]:
            text = str(call.args.get("text", ""))
            if call.method == "chat.postMessage" and text.startswith("Diagnosis"):
                seen.add((str(call.args.get("channel")), str(call.args.get("thread_ts"))))
        checked = len(fake.calls)
        return wanted <= seen

    await slack.wait_for(done, within=120)


async def _burst(fake: SlackThread, url: str, mentions: int, channels: int,
                 report: str, round_: int) -> dict[str, Any]:
    """One burst: N mentions at once, each on a new connection (the worst case: nothing
    kept alive from an earlier burst), then wait until every thread has its diagnosis."""
    slack = fake.slack
    calls_before = len(slack.calls)
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(limit=0)) as session:
        sender = SlackSender(url, session)
        started = time.perf_counter()
        sent = await asyncio.gather(*(
            sender.mention(f"CB{round_}{i % channels:02d}", "UALICE", report)
            for i in range(mentions)
        ))
    acked = time.perf_counter() - started
    assert all(s.status == 200 for s, _ in sent)
    threads = [(f"CB{round_}{i % channels:02d}", ts) for i, (_, ts) in enumerate(sent)]
    await fake.run(_all_diagnosed(slack, threads))
    all_diagnosed = time.perf_counter() - started
    for channel, ts in threads:
        await fake.run(ended(slack, channel, ts, within=120))
    burst = slack.calls[calls_before:]
    return {
        "acks_ms": [s.seconds * 1000 for s, _ in sent],
        "all_acked_s": acked,
        "all_diagnosed_s": all_diagnosed,
        "all_threads_complete_s": time.perf_counter() - started,
        "calls": len(burst),
        "posts": sum(c.method == "chat.postMessage" for c in burst),
        "methods": collections.Counter(c.method for c in burst),
    }


async def bench(mentions: int, channels: int, report: str = REPORT,
                rounds: int = 3, streaming: str = "on") -> dict[str, Any]:
    """`rounds` bursts one after the other against one bot; the ack percentiles are over
    every ack of every round (one burst is too few samples for a p99 worth reading)."""
    with tempfile.TemporaryDirectory(prefix="triage-bench-") as data:
        # The bot's own SQLite store, as in production, but not the user's.
        env = {"TRIAGE_DATABASE_URL": f"sqlite:///{data}/triage.db",
               "TRIAGE_SLACK_STREAMING": streaming}
        return await _bench(mentions, channels, report, rounds, env)


async def _bench(mentions: int, channels: int, report: str, rounds: int,
                 env: dict[str, str]) -> dict[str, Any]:
    async with SlackThread() as fake, bot_process(fake.slack, env=env) as bot:
        url = f"{bot.url}/slack/events"
        async with aiohttp.ClientSession() as session:  # first-request costs
            _, warm = await SlackSender(url, session).mention("CWARM", "UALICE", report)
        await fake.run(ended(fake.slack, "CWARM", warm, within=60))
        try:
            bursts = [await _burst(fake, url, mentions, channels, report, r)
                      for r in range(rounds)]
        except (AssertionError, TimeoutError):
            print(f"the bot's last log lines:\n{bot.log()}", file=sys.stderr)
            raise
        await bot.stop()
    acks = [ack for b in bursts for ack in b["acks_ms"]]
    worst = max(bursts, key=lambda b: b["all_diagnosed_s"])
    return {
        "ack_p50_ms": statistics.median(acks),
        "ack_p99_ms": percentile(acks, 0.99),
        "ack_max_ms": max(acks),
        "round_p99_ms": [percentile(b["acks_ms"], 0.99) for b in bursts],
        "all_acked_s": max(b["all_acked_s"] for b in bursts),
        "all_diagnosed_s": worst["all_diagnosed_s"],
        "all_threads_complete_s": max(b["all_threads_complete_s"] for b in bursts),
        "calls_per_investigation": sum(b["calls"] for b in bursts) / (mentions * rounds),
        "posts_per_investigation": sum(b["posts"] for b in bursts) / (mentions * rounds),
        "methods": {m: n / (mentions * rounds) for m, n in
                    sum((b["methods"] for b in bursts), collections.Counter()).most_common()},
    }


async def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.bench.bench_slack",
                                     description="Burst of mentions against `triage serve`.")
    parser.add_argument("--mentions", type=int, default=50)
    parser.add_argument("--channels", type=int, default=10,
                        help="spread the mentions over this many channels")
    parser.add_argument("--rounds", type=int, default=3,
                        help="bursts in a row; the ack percentiles are over all of them")
    parser.add_argument("--streaming", choices=("auto", "on", "off"), default="on",
                        help="TRIAGE_SLACK_STREAMING for the bot (default: on, Slack's agent "
                        "surfaces; off is today's messages)")
    parser.add_argument("--quick", action="store_true",
                        help="the model answers at once, without tools: the bot's own cost")
    args = parser.parse_args(argv or [])
    report = f"[quick] {REPORT}" if args.quick else REPORT
    result = await bench(args.mentions, args.channels, report, args.rounds, args.streaming)
    load = os.getloadavg()[0]
    print(f"slack bot: {args.rounds} bursts of {args.mentions} mentions at once over "
          f"{args.channels} channels, "
          f"zero-latency model{' answering at once' if args.quick else ''}, checkout-oom "
          f"scenario, streaming {args.streaming} (load average {load:.1f} on "
          f"{os.cpu_count()} CPUs)")
    print(f"  time to ack       p50 {result['ack_p50_ms']:.1f} ms   p99 "
          f"{result['ack_p99_ms']:.1f} ms   max {result['ack_max_ms']:.1f} ms   "
          "(target p99 < 100 ms)")
    print("  p99 per burst     " + "   ".join(f"{p:.1f} ms" for p in result["round_p99_ms"]))
    print(f"  all acked after   {result['all_acked_s']:.2f} s (slowest burst)")
    print(f"  all diagnoses     {result['all_diagnosed_s']:.2f} s (slowest burst)")
    print(f"  all threads done  {result['all_threads_complete_s']:.2f} s (slowest burst)")
    print(f"  per investigation {result['calls_per_investigation']:.1f} Web API calls, "
          f"{result['posts_per_investigation']:.1f} messages posted")
    print("  calls by method   " + ", ".join(f"{m} {n:.1f}"
                                              for m, n in result["methods"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main(sys.argv[1:])))
