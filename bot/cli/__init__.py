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

# Command → module. Only the module of the command being run is imported (the others pull
# in the engines, the Slack client and the kubernetes client: seconds at start); `triage
# --help` and a mistyped command import them all, so the usage lists every command.
COMMANDS = {
    "demo": "bot.cli.demo",
    "investigate": "bot.cli.investigate",
    "eval": "bot.cli.eval",
    "scenarios": "bot.cli.scenarios",
    "serve": "bot.cli.serve",
    "history": "bot.cli.history",
    "show": "bot.cli.show",
    "lessons": "bot.cli.lessons",
    "doctor": "bot.cli.doctor",
    "analyzer-server": "bot.cli.analyzer_server",
    "reply": "bot.cli.reply",
    "stats": "bot.cli.stats",
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser with every subcommand, or only `command`'s when it is one."""
    parser = argparse.ArgumentParser(
        prog="triage",
        description="Troubleshoot production incidents: Kubernetes, logs and metrics.",
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    subparsers.required = True
    modules = [COMMANDS[command]] if command in COMMANDS else list(COMMANDS.values())
    for module_name in modules:
        importlib.import_module(module_name).register(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(words[0] if words else None)
    args = parser.parse_args(words)
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
