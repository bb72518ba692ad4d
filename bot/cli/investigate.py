"""`triage investigate TEXT`: one investigation, shown live or as diagnosis JSON."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from bot.console import ConsoleReporter
from bot.wiring import ENGINES, Setting, build_model, investigate, scenario_setting
from engines.errors import ConfigurationError, TriageError
from engines.events import discard
from engines.react import InvestigationResult


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
    parser.add_argument("--json", action="store_true", help="print only the diagnosis as JSON")
    parser.set_defaults(handler=run)


def live_setting() -> Setting:
    """Live backends arrive with their configuration; until then say what to do."""
    raise ConfigurationError(
        "no live backends are configured; pass --scenario ID|DIR to investigate a recorded "
        "incident (see `triage scenarios list`)"
    )


async def run(args: argparse.Namespace) -> int:
    setting = scenario_setting(args.scenario) if args.scenario else live_setting()
    model = build_model(args.model)
    sink = discard if args.json else ConsoleReporter()
    result = await investigate(args.text, setting, model, engine=args.engine, sink=sink)
    return finish(result, as_json=args.json)


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
