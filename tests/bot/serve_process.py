"""`python -m tests.bot.serve_process ARGS…`: the real `triage ARGS…`, with the test model.

The only difference from the installed `triage` is `build_model`, which returns the tests'
zero-latency model; its gates are opened by lines written to stdin ("open NAME"), so a test
can hold an investigation at a known step without sleeping.
"""

from __future__ import annotations

import asyncio
import sys

import bot.cli.serve
from bot.cli import main
from engines.model import Model
from tests.bot.models import Gates, build_test_model

_gates = Gates()
_reader: asyncio.Task[None] | None = None


async def _read_stdin() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while line := await reader.readline():
        words = line.decode().split()
        if len(words) == 2 and words[0] == "open":
            _gates.open(words[1])


def _build_model(name: str | None = None) -> Model:
    global _reader
    if _reader is None:
        _reader = asyncio.get_running_loop().create_task(_read_stdin())
    return build_test_model(_gates)


if __name__ == "__main__":
    bot.cli.serve.build_model = _build_model
    sys.exit(main(sys.argv[1:]))
