"""`triage demo [SCENARIO]`: a real investigation of a bundled incident, offline."""

from __future__ import annotations

import argparse
from typing import Any

from bot.cli.investigate import finish
from bot.console import ConsoleReporter
from bot.wiring import ANALYZER, build_model, investigate, scenario_setting
from tools.scenarios import DEFAULT_SCENARIO


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="investigate a bundled incident offline (no Slack, no LLM, no cluster)",
        description="Run a real investigation on a bundled scenario with the offline analyzer.",
    )
    parser.add_argument(
        "scenario",
        nargs="?",
        default=DEFAULT_SCENARIO,
        metavar="SCENARIO",
        help=f"bundled scenario id or folder (default {DEFAULT_SCENARIO}; "
        "see `triage scenarios list`)",
    )
    parser.set_defaults(handler=run)


async def run(args: argparse.Namespace) -> int:
    setting = scenario_setting(args.scenario)
    assert setting.scenario is not None
    reporter = ConsoleReporter()
    reporter.console.print(f"[bold]Scenario[/bold] {setting.scenario.id}: {setting.scenario.title}")
    result = await investigate(
        setting.scenario.report, setting, build_model(ANALYZER), sink=reporter
    )
    code = finish(result, as_json=False)
    truth = setting.scenario.truth
    reporter.console.print(f"[dim]Recorded root cause: {truth.category} in {truth.culprit}[/dim]")
    return code
