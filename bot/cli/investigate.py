"""`triage investigate TEXT`: one investigation, shown live or as diagnosis JSON, and
recorded in the store like the bot's (bot/cli/record.py) unless `--no-record`.

The record's last line ("Recorded as ID: triage show ID", or a warning saying what was not
recorded and why) goes to stdout with the live view, to stderr with `--json`, whose stdout
is the diagnosis alone. A store that fails never changes the exit status: 0 with a
diagnosis, 1 without, 2 for a failed run, as without a store.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
from datetime import datetime
from pathlib import Path
from typing import Any

from bot.cli.record import Recording
from bot.console import ConsoleReporter
from bot.wiring import (
    ENGINES,
    SEARCH_CHOICES,
    Setting,
    build_check_model,
    build_model,
    investigate,
    scenario_setting,
)
from engines.errors import TriageError
from engines.events import Event, EventSink, discard
from engines.react import InvestigationResult
from tools.scenarios import parse_time


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "investigate",
        help="investigate an incident described in TEXT",
        description="Investigate an incident. With --scenario the tools serve a recorded "
        "incident instead of live backends.",
    )
    parser.add_argument("text", metavar="TEXT", help="the symptom, as an on-call engineer says it")
    parser.add_argument("--scenario", metavar="ID|DIR", help="serve the tools from a scenario")
    parser.add_argument(
        "--model",
        metavar="NAME",
        help="'analyzer' (offline, the default without OPENAI_API_KEY) or an OpenAI model name",
    )
    parser.add_argument("--engine", default="react", choices=ENGINES, help="reasoning engine")
    parser.add_argument("--search", default="bfs", choices=SEARCH_CHOICES,
                        help="how tot explores its hypotheses: beam (bfs) or depth-first (dfs)")
    add_check_option(parser)
    parser.add_argument("--json", action="store_true", help="print only the diagnosis as JSON")
    parser.add_argument(
        "--no-record", dest="record", action="store_false",
        help="do not record the investigation in the store (TRIAGE_DATABASE_URL or the local "
        "SQLite file); by default `triage history` and `triage show` list it",
    )
    add_live_options(parser)
    parser.add_argument(
        "--at",
        metavar="TIMESTAMP",
        type=at_time,
        help="the investigation's clock, RFC 3339 (post-incident analysis); default now",
    )
    parser.set_defaults(handler=run)


def add_check_option(parser: argparse.ArgumentParser) -> None:
    """--check-model, shared by investigate, serve and eval."""
    parser.add_argument(
        "--check-model", metavar="NAME", dest="check_model",
        help="a small model that verifies diagnoses and reads replies the rules are unsure "
        "of, while --model decides: 'analyzer' (no LLM) or an OpenAI model name (default "
        "$TRIAGE_CHECK_MODEL; none: the main model checks its own work)",
    )


def add_live_options(parser: argparse.ArgumentParser) -> None:
    """--config and --context, shared by every command that reads live backends."""
    parser.add_argument(
        "--config",
        metavar="PATH",
        type=Path,
        help="YAML config file (default $TRIAGE_CONFIG or ~/.config/triage/config.yaml)",
    )
    parser.add_argument(
        "--context", metavar="NAME", help="kubeconfig context (overrides TRIAGE_KUBE_CONTEXT)"
    )


def at_time(text: str) -> datetime:
    """An RFC 3339 timestamp for --at, or an argparse error naming the expected form."""
    try:
        return parse_time(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not RFC 3339 (e.g. 2026-11-30T10:00:00Z)"
        ) from None


async def live_setting(
    config_path: str | Path | None = None,
    *,
    context: str | None = None,
    at: datetime | None = None,
) -> Setting:
    """Live sources from the config file and environment (bot/README-config.md), each
    checked at start: the healthy ones are used, the others reported on stderr."""
    from bot import config as live_config  # the live clients load only when used

    config = live_config.load_config(config_path, context=context)
    sources, _ = await live_config.live_sources(config)
    print(f"triage: {sources.description}", file=sys.stderr)  # redacted by live_sources
    return Setting(sources, now=at)


async def run(args: argparse.Namespace) -> int:
    if args.scenario:
        setting = scenario_setting(args.scenario)
        if args.at is not None:
            setting = dataclasses.replace(setting, now=args.at)
    else:
        setting = await live_setting(args.config, context=args.context, at=args.at)
    recording: Recording | None = None
    try:
        model = build_model(args.model)
        check = build_check_model(args.check_model)
        if args.record:
            recording = await Recording.start(args.text, model.name, args.engine)
        show: EventSink = discard if args.json else ConsoleReporter()
        sink = show if recording is None else both(show, recording.append)
        try:
            result = await investigate(
                args.text, setting, model, engine=args.engine, sink=sink, search=args.search,
                check=check,
                incident_id=recording.investigation_id if recording else None,
            )
        except BaseException as exc:  # Ctrl-C (or a bug): the record ends all the same
            if recording is not None:
                interrupted = isinstance(exc, asyncio.CancelledError | KeyboardInterrupt)
                await recording.end(None, "stopped" if interrupted else "failed")
            raise
        if recording is not None:
            await recording.end(result)
    finally:
        if recording is not None:
            await recording.close()
            quiet = args.json or recording.problems  # a warning is for stderr, like any other
            print(recording.report(), file=sys.stderr if quiet else sys.stdout)
        if not args.scenario:
            from bot.config import close_sources

            await close_sources(setting.sources)
    return finish(result, as_json=args.json)


def both(first: EventSink, second: EventSink) -> EventSink:
    """One sink that hands every event to two, in order."""

    async def sink(event: Event) -> None:
        await first(event)
        await second(event)

    return sink


def finish(result: InvestigationResult, *, as_json: bool) -> int:
    """Print the outcome; exit 0 with a diagnosis, 1 without, raise on a failed run."""
    if result.reason == "failed" and result.error is not None:
        raise result.error
    if result.reason == "failed":
        raise TriageError(result.detail)
    if as_json:
        body = result.diagnosis.model_dump(mode="json") if result.diagnosis else None
        print(json.dumps(body, indent=2))
    if result.diagnosis is None:
        print(f"triage: no diagnosis ({result.reason}: {result.detail})", file=sys.stderr)
        return 1
    return 0
