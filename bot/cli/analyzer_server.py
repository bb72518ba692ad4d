"""`triage analyzer-server [--host 127.0.0.1] [--port 8089]`: the analyzer over HTTP."""

from __future__ import annotations

import argparse
from typing import Any

from bot.analyzer_server.server import MODEL_ID, serve


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "analyzer-server",
        help="serve the offline analyzer as an OpenAI-compatible endpoint",
        description=(
            f"Serve the offline analyzer as model {MODEL_ID!r} on POST /v1/chat/completions "
            "and GET /v1/models, so that Triage's LLM path (or any OpenAI-compatible "
            "agent) runs with no tokens: OPENAI_BASE_URL=http://127.0.0.1:8089/v1 "
            f"OPENAI_API_KEY=x triage eval --model {MODEL_ID}"
        ),
    )
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=8089, help="port (0: any free port)")
    parser.set_defaults(handler=run)


async def run(args: argparse.Namespace) -> int:
    await serve(args.host, args.port)
    return 0
