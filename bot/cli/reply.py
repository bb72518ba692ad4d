"""`triage reply TEXT [--namespace NS]... [--workload NAME]... [--json] [--model NAME]`.

What Triage would understand from a reply in a running investigation, given the cluster's
namespaces and workloads: operators check how a phrase will be read before they rely on
it. The corpus of `python -m tests.bench replies` is scored through the same function.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from bot.wiring import ANALYZER, build_model
from engines.steering import Vocabulary, understand
from tools.catalog import ALL_TOOLS


def register(subparsers: Any) -> None:
    parser = subparsers.add_parser(
        "reply",
        help="show how a reply in an investigation's thread would be understood",
        description="Read TEXT as a reply in a running investigation: the typed constraints "
                    "it yields and whether it is a question to the bot.",
    )
    parser.add_argument("text", metavar="TEXT", help="the reply, as typed in Slack")
    parser.add_argument("--namespace", action="append", default=[], metavar="NS",
                        help="a namespace of the cluster (repeat for several)")
    parser.add_argument("--workload", action="append", default=[], metavar="NAME",
                        help="a workload of the cluster (repeat for several)")
    parser.add_argument("--json", action="store_true",
                        help='print only {"constraints": [{"kind", "value"}], "question"}')
    parser.add_argument("--model", default=None, metavar="NAME",
                        help="also let this model read replies the rules are unsure of "
                             "(an OpenAI model name; needs OPENAI_API_KEY)")
    parser.set_defaults(handler=run)


async def run(args: argparse.Namespace) -> int:
    vocab = Vocabulary.of(args.namespace, args.workload, (t.name for t in ALL_TOOLS))
    model = build_model(args.model) if args.model and args.model != ANALYZER else None
    try:
        reading = await understand(args.text, vocab, model)
    finally:
        close = getattr(model, "aclose", None)
        if close is not None:
            await close()
    if args.json:
        print(json.dumps(reading.as_json()))
        return 0
    if reading.to_someone_else:
        print("Addressed to someone else: nothing for the bot.")
    for constraint in reading.constraints:
        print(f"{constraint.kind:18} {constraint.value or '-':24} {constraint.summary}")
    if not reading.constraints and not reading.to_someone_else:
        print("No instruction.")
    if reading.question:
        print("A question: answered in the thread from the investigation's state.")
    if not reading.confident:
        print("The rules are unsure of this reply"
              + ("; the model read it." if model else "; with --model a model would read it."))
    return 0
