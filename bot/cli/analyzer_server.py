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
    parser.add_argument("--context-tokens", type=_window, default=None, metavar="N",
                        help="the context window to declare: longer prompts are refused "
                             "(default: TRIAGE_CONTEXT_TOKENS, else 32768)")
    parser.add_argument("--text-only", action="store_true",
                        help="refuse `tools`, as a model without tool calling does: clients "
                             "fall back to the text ReAct format, which it answers")
    parser.set_defaults(handler=run)


def _window(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number of tokens") from None
    if value < 4_096:
        raise argparse.ArgumentTypeError(f"{value} is too small: at least 4096")
    return value


async def run(args: argparse.Namespace) -> int:
    await serve(args.host, args.port, context_tokens=args.context_tokens,
                text_only=args.text_only)
    return 0
