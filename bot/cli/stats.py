"""`triage stats [--since 7d] [--json]`: what investigations took and cost, from the store.

Read from the store rather than from one process's `/metrics`, so that it covers every
replica sharing the database (and the command line's own runs): p50/p95 time to diagnosis,
steps, tool calls, the share of them a cache answered, the model's tokens, and the cost
when `TRIAGE_PRICE_INPUT_PER_MTOK` and `TRIAGE_PRICE_OUTPUT_PER_MTOK` are set (bot/monitor.py
says how each figure is counted). The human output is one aligned row per engine and model
and a total; `--json` prints exactly one JSON object, an error included (`{"error": ...}`,
with the same line on stderr and exit code 2).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.monitor import EndedRun, Prices, Summary, grouped, summarize
from bot.store import StoreError, opened
from bot.store.url import describe, resolve_url
from engines.errors import TriageError

DEFAULT_SINCE = "7d"
STORE_SECONDS = 15.0  # an unreachable database answers within this or is reported
_SINCE = re.compile(r"(\d+)\s*([mhdw])")
_UNIT = {"m": 60, "h": 3600, "d": 86400, "w": 604800}


def since_arg(text: str) -> timedelta | None:
    """`30m`, `24h`, `7d`, `2w`, or `all` (None: no bound)."""
    cleaned = text.strip().lower()
    if cleaned == "all":
        return None
    match = _SINCE.fullmatch(cleaned)
    if match is None or int(match.group(1)) == 0:
        raise argparse.ArgumentTypeError(f"write it like 30m, 24h, 7d, 2w or all, not {text!r}")
    return timedelta(seconds=int(match.group(1)) * _UNIT[match.group(2)])


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "stats",
        help="what investigations took and cost, from the store (every replica)",
        description="Summarise the investigations that ended recently: p50/p95 time to "
        "diagnosis, steps, tool calls, cache hit rate, tokens and (with TRIAGE_PRICE_INPUT_"
        "PER_MTOK and TRIAGE_PRICE_OUTPUT_PER_MTOK) estimated cost, per engine and model. The "
        "store is TRIAGE_DATABASE_URL or the local SQLite file.",
    )
    parser.add_argument("--since", type=since_arg, default=since_arg(DEFAULT_SINCE),
                        metavar="AGE", help="investigations that ended within AGE (30m, 24h, "
                        f"7d, 2w) or all (default {DEFAULT_SINCE})")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object instead of the table")
    parser.set_defaults(handler=run)


async def ended_runs(since: datetime | None) -> tuple[list[EndedRun], str]:
    """The ended runs, and where they were read; a store that does not answer in time is
    a StoreError naming it."""
    url = resolve_url()
    try:
        async with asyncio.timeout(STORE_SECONDS):
            async with opened(url) as store:
                return await store.ended_runs(since), store.where
    except TimeoutError:
        raise StoreError(f"database {describe(url)}: no answer within "
                         f"{STORE_SECONDS:g}s") from None


def report(runs: list[EndedRun], prices: Prices | None, since: datetime | None,
           where: str) -> dict[str, Any]:
    """The one JSON object: the total, and each engine and model."""
    return {
        "store": where,
        "since": since.isoformat() if since is not None else None,
        "prices_per_mtok": None if prices is None else {
            "input": prices.input_per_mtok, "output": prices.output_per_mtok},
        "total": summarize(runs, prices).as_json(),
        "by_engine_model": [
            {"engine": engine, "model": model, **summary.as_json()}
            for (engine, model), summary in grouped(runs, prices).items()
        ],
    }


HEADERS = ("ENGINE", "MODEL", "RUNS", "DONE", "P50", "P95", "STEPS", "CALLS", "HIT%",
           "TOK IN", "TOK OUT", "COST $")


def _seconds(value: float | None) -> str:
    if value is None:
        return "-"
    return f"{value:.1f}s" if value < 120 else f"{value / 60:.1f}m"


def row(engine: str, model: str, summary: Summary) -> tuple[str, ...]:
    hit = summary.hit_rate
    return (
        engine, model, str(summary.runs), str(summary.diagnosed),
        _seconds(summary.diagnosis_p50), _seconds(summary.diagnosis_p95),
        "-" if summary.steps_p50 is None else f"{summary.steps_p50:g}",
        str(summary.tool_calls), "-" if hit is None else f"{100 * hit:.0f}",
        str(summary.input_tokens), str(summary.output_tokens),
        "-" if summary.cost is None else f"{summary.cost:.4f}",
    )


def table(runs: list[EndedRun], prices: Prices | None) -> list[str]:
    """Aligned rows: one per engine and model, then the total when there are several."""
    groups = grouped(runs, prices)
    rows = [row(engine, model, s) for (engine, model), s in groups.items()]
    if len(groups) > 1:
        rows.append(row("all", "", summarize(runs, prices)))
    cells = [HEADERS, *rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(HEADERS))]
    left = 2  # engine and model read left-aligned, the figures right-aligned
    return ["  ".join(c.ljust(w) if i < left else c.rjust(w)
                      for i, (c, w) in enumerate(zip(r, widths, strict=True))).rstrip()
            for r in cells]


async def run(args: argparse.Namespace) -> int:
    since = datetime.now(UTC) - args.since if args.since is not None else None
    try:
        prices = Prices.from_env()
        runs, where = await ended_runs(since)
    except TriageError as exc:
        if not args.json:
            raise
        print(json.dumps({"error": str(exc)}))
        print(f"triage: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report(runs, prices, since, where)))
        return 0
    window = "ever" if since is None else f"since {since:%Y-%m-%d %H:%M} UTC"
    if not runs:
        print(f"no investigation ended {window} in {where}")
        return 0
    print(f"{len(runs)} investigations ended {window} in {where}"
          + ("" if prices is not None else " (no prices set: cost not estimated)"))
    for line in table(runs, prices):
        print(line)
    return 0
