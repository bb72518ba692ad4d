"""`triage`: one entry point, one module per subcommand.

Each subcommand module exposes `register(subparsers)`, which adds its parser and sets
`handler`, an async function of the parsed arguments returning an exit code. Errors that
users cause (unknown scenario, endpoint down) are `TriageError`s and end as one clear
line on stderr with a non-zero exit, never a traceback.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib
import os
import sys
from collections.abc import Sequence

from engines.errors import TriageError

COMMANDS = (
    "bot.cli.demo",
    "bot.cli.investigate",
    "bot.cli.eval",
    "bot.cli.scenarios",
    "bot.cli.serve",
    "bot.cli.history",
    "bot.cli.show",
    "bot.cli.lessons",
    "bot.cli.doctor",
    "bot.cli.analyzer_server",
    "bot.cli.reply",
    "bot.cli.stats",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="triage",
        description="Troubleshoot production incidents: Kubernetes, logs and metrics.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    for module_name in COMMANDS:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        code = asyncio.run(args.handler(args))
    except TriageError as exc:
        print(f"triage: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("triage: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `triage ... | head`: the reader left, nothing to report
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    return int(code)


if __name__ == "__main__":
    sys.exit(main())
