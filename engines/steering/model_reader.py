"""A model's reading of a reply the rules were unsure of, as structured output.

The model gets the reply, the cluster's names and one tool, `record_reading`, whose JSON
schema lists the kinds; the call is forced (`final=True` makes the OpenAI client set
`tool_choice`). Its answer is checked like any other input: kinds outside the list, and
namespaces, workloads, tools or sources the cluster does not have, are dropped, so a model
cannot invent an exclusion. When the model fails or answers nothing usable, the rules'
reading stands.
"""

from __future__ import annotations

import logging
from typing import Any

from engines.constraints import KINDS, SOURCES, Constraint, ConstraintKind
from engines.errors import ModelError
from engines.model import Model, ModelRequest, SystemMessage, ToolSpec, UserMessage
from engines.steering.rules import Reading
from engines.steering.vocabulary import Vocabulary

log = logging.getLogger(__name__)
READING_TOOL = "record_reading"
READING_SPEC = ToolSpec(
    READING_TOOL,
    "Record what the reply asks the investigator to do.",
    {
        "type": "object",
        "properties": {
            "constraints": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {
                        "kind": {"type": "string", "enum": list(KINDS)},
                        "value": {"type": "string"},
                    },
                    "required": ["kind", "value"],
                    "additionalProperties": False,
                },
            },
            "question": {"type": "boolean"},
        },
        "required": ["constraints", "question"],
        "additionalProperties": False,
    },
)
_INSTRUCTIONS = """\
You read replies that on-call engineers post in the Slack thread of a running incident
investigation. Call record_reading once with every instruction the reply gives, typed:
stop, pause, exclude_namespace / exclude_workload (value: a name below), ban_tool (value: a
tool below), exclude_source / focus_source (value: logs, metrics or cluster),
focus_namespace / focus_workload, time_window (value: "last 30m", "since 14:10" or
"14:00-14:30"), rule_out (value: a fault category such as oom_killed, a workload, a
component such as database, or category:component), fact (value: the fact), forbid_writes,
rule (value: any other instruction). A reply that is chat between humans, thanks or a
status update gives no constraint. question is true when the reply asks the investigator
something. Never invent names: use only the names listed."""


def _prompt(text: str, vocab: Vocabulary) -> str:
    return (f"Namespaces: {', '.join(sorted(vocab.namespaces)) or '(unknown)'}\n"
            f"Workloads: {', '.join(sorted(vocab.workloads)) or '(unknown)'}\n"
            f"Tools: {', '.join(sorted(vocab.tools)) or '(unknown)'}\n\nReply:\n{text}")


def _valid(kind: str, value: str, vocab: Vocabulary) -> bool:
    match kind:
        case "exclude_namespace" | "focus_namespace":
            return value in vocab.namespaces
        case "exclude_workload" | "focus_workload":
            return value in vocab.workloads
        case "ban_tool":
            return value in vocab.tools
        case "exclude_source" | "focus_source":
            return value in SOURCES
        case "time_window" | "rule_out" | "fact" | "rule":
            return bool(value.strip())
        case _:
            return kind in KINDS


def reading_of(arguments: dict[str, Any] | None, text: str, vocab: Vocabulary, *,
               author: str = "", reply: str = "") -> Reading | None:
    """The model's arguments as a Reading, keeping only what is valid; None if unusable."""
    if not isinstance(arguments, dict) or not isinstance(arguments.get("constraints"), list):
        return None
    kept: list[Constraint] = []
    for item in arguments["constraints"]:
        if not isinstance(item, dict):
            continue
        kind, value = str(item.get("kind", "")), str(item.get("value", "")).strip()
        if kind in ("exclude_namespace", "focus_namespace", "exclude_workload",
                    "focus_workload", "ban_tool", "exclude_source", "focus_source"):
            value = value.lower()
        if _valid(kind, value, vocab):
            typed: ConstraintKind = kind  # type: ignore[assignment]  # checked by _valid
            kept.append(Constraint(typed, text, value, author, reply))
    return Reading(tuple(dict.fromkeys(kept)), question=bool(arguments.get("question")),
                   confident=True)


async def read_with_model(model: Model, text: str, vocab: Vocabulary, rules: Reading, *,
                          author: str = "", reply: str = "") -> Reading:
    """The model's reading when it gives one, else the rules' (`rules`)."""
    request = ModelRequest(
        messages=(SystemMessage(_INSTRUCTIONS), UserMessage(_prompt(text, vocab))),
        tools=(READING_SPEC,), final=True, context={"purpose": "read_reply"},
    )
    try:
        answer = await model.complete(request)
    except ModelError as exc:
        log.warning("the model could not read a reply (%s); the rules' reading stands", exc)
        return rules
    call = next((c for c in answer.tool_calls if c.name == READING_TOOL), None)
    reading = reading_of(call.arguments if call else None, text, vocab, author=author,
                         reply=reply)
    if reading is None:
        log.warning("the model's reading of a reply was not usable; the rules' reading stands")
        return rules
    return reading
