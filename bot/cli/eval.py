"""`triage eval`: accuracy of a model and engine over a folder of scenarios."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bot.cli.investigate import add_check_option
from bot.evaluation import CONFIDENT, EvalReport, EvalResult, evaluate, scenario_refs
from bot.wiring import ENGINES, SEARCH_CHOICES


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "eval",
        help="run scenarios and score the diagnoses",
        description="Run every scenario (the bundled ones, or those under DIR), score each "
        "diagnosis by the rule of the scenario format, and summarise.",
    )
    parser.add_argument("--scenarios", type=Path, metavar="DIR", help="a folder of scenarios")
    parser.add_argument("--model", metavar="NAME", help="'analyzer' or an OpenAI model name")
    parser.add_argument("--engine", default="react", choices=(*ENGINES, "all"),
                        help="reasoning engine, or 'all' to compare every engine")
    parser.add_argument("--search", default="bfs", choices=SEARCH_CHOICES,
                        help="how tot explores its hypotheses")
    add_check_option(parser)
    parser.add_argument("--jobs", type=int, default=4, metavar="N", help="scenarios at once")
    parser.add_argument("--json", action="store_true", help="print only the report as JSON")
    parser.set_defaults(handler=run)


def _culprit(value: dict[str, Any] | None) -> str:
    if not value:
        return "-"
    namespace = f"{value['namespace']}/" if value.get("namespace") else ""
    return f"{value['kind']} {namespace}{value['name']}"


def comparison(reports: dict[str, EvalReport]) -> Table:
    """One row per engine: the figures `--engine all` compares them on."""
    grid = Table(title="Engines compared", show_lines=False)
    for column in ("engine", "accuracy", "correct", "wrong ≥0.6", "mean steps", "tool calls",
                   "tokens in", "tokens out", "p95 s", "errors"):
        grid.add_column(column, justify="left" if column == "engine" else "right")
    for engine, report in reports.items():
        s = report.summary
        grid.add_row(engine, f"{s.accuracy:.0%}", f"{s.correct}/{s.scenarios}",
                     f"{s.confident_wrong}/{s.scenarios - s.correct}", f"{s.mean_steps:.2f}",
                     str(sum(r.tool_calls for r in report.results)), str(s.tokens_in),
                     str(s.tokens_out), f"{s.p95_seconds:.2f}", str(s.errors))
    return grid


async def compare(refs: list[str | Path], args: argparse.Namespace,
                  show: Callable[[EvalResult], None]) -> int:
    """Every engine on the same scenarios; `--json` prints {engine: report}."""
    reports: dict[str, EvalReport] = {}
    for engine in ENGINES:
        reports[engine] = await evaluate(refs, model=args.model, engine=engine, jobs=args.jobs,
                                         on_result=show, search=args.search,
                                         check_model=args.check_model)
    if args.json:
        json.dump({e: r.as_json() for e, r in reports.items()}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    Console(highlight=False, width=None if sys.stdout.isatty() else 200).print(
        comparison(reports))
    return 0


def table(report: EvalReport) -> Table:
    grid = Table(title="Evaluation", show_lines=False)
    for column in (
        "scenario",
        "expected",
        "got",
        "correct",
        "steps",
        "tool calls",
        "tokens in",
        "tokens out",
        "seconds",
    ):
        grid.add_column(
            column, justify="right" if column[0] in "stc" and column != "scenario" else "left"
        )
    for row in report.results:
        expected = row.expected or {}
        got = row.diagnosis or {}
        got_text = (
            f"ERROR: {row.error}"
            if row.error and not got
            else f"{got.get('category', '-')} {_culprit(got.get('culprit'))}"
        )
        grid.add_row(
            row.scenario,
            f"{expected.get('category', '-')} {_culprit(expected.get('culprit'))}",
            got_text,
            "[green]yes[/green]" if row.correct else "[red]no[/red]",
            str(row.steps),
            str(row.tool_calls),
            str(row.tokens_in),
            str(row.tokens_out),
            f"{row.seconds:.2f}",
        )
    return grid


async def run(args: argparse.Namespace) -> int:
    refs = scenario_refs(args.scenarios)
    progress = Console(stderr=True, highlight=False)

    def show(row: EvalResult) -> None:
        if not args.json:
            mark = "[green]✓[/green]" if row.correct else "[red]✗[/red]"
            progress.print(f"{mark} {row.scenario} ({row.seconds:.2f}s)")

    if args.engine == "all":
        return await compare(refs, args, show)
    report = await evaluate(
        refs, model=args.model, engine=args.engine, jobs=args.jobs, on_result=show,
        search=args.search, check_model=args.check_model,
    )
    if args.json:
        json.dump(report.as_json(), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    console = Console(highlight=False, width=None if sys.stdout.isatty() else 200)
    console.print(table(report))
    s = report.summary
    console.print(
        f"accuracy {s.accuracy:.0%} ({s.correct}/{s.scenarios}) · mean steps {s.mean_steps} · "
        f"p95 {s.p95_seconds:.2f}s · tokens {s.tokens_in} in / {s.tokens_out} out"
        + (f" · {s.confident_wrong} wrong at confidence ≥ {CONFIDENT}" if s.confident_wrong
           else "")
        + (f" · {s.errors} errors" if s.errors else "")
    )
    return 0
