"""The chart-drawing process: `python -m bot.chart_worker`, started by the bot.

A chart is tens of milliseconds of pure Python in matplotlib. In a thread of the bot's
process it held the GIL and left reference cycles for the collector, and so stalled the
event loop (and Slack's acks) by as much; in a process of its own it costs the loop nothing
and runs on another core. It imports only `bot.chart_drawing` and matplotlib (about 90 MB,
where a `multiprocessing` child would import the bot's whole entry point again).

The protocol, over the process's stdin and stdout, is one request at a time: a frame holding
the pickled `(ChartPlan, [Line, ...])`, answered by a frame holding `b"+"` and the PNG bytes,
or `b"-"` and an error message. A frame is a 4-byte big-endian length and that many bytes.
Pickle is safe here: the only writer is the bot that started the process. The process ends
when its stdin closes, so it never outlives the bot.
"""

from __future__ import annotations

import pickle
import struct
import sys
from typing import BinaryIO

from bot.chart_drawing import draw

HEADER = struct.Struct(">I")


def write_frame(stream: BinaryIO, payload: bytes) -> None:
    stream.write(HEADER.pack(len(payload)) + payload)
    stream.flush()


def read_frame(stream: BinaryIO) -> bytes | None:
    """The next frame's bytes; None at the end of the stream."""
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        return None
    (size,) = HEADER.unpack(header)
    payload = stream.read(size)
    if len(payload) < size:
        return None
    return payload


def serve(requests: BinaryIO, answers: BinaryIO) -> None:
    """Draw every request until the input ends; a chart that fails is an error answer."""
    while (request := read_frame(requests)) is not None:
        try:
            plan, lines = pickle.loads(request)
            answer = b"+" + draw(plan, lines)
        except Exception as exc:  # one bad chart must not end the process
            answer = b"-" + f"{type(exc).__name__}: {exc}".encode()
        write_frame(answers, answer)


if __name__ == "__main__":
    serve(sys.stdin.buffer, sys.stdout.buffer)
