"""The text ReAct transcript reads back as the conversation it was written from: what the
analyzer server reads in text mode is what the engine had."""

from __future__ import annotations

from engines import prompts
from engines.diagnosis import SUBMIT_TOOL
from engines.model import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from engines.react import SUBMIT_SPEC
from engines.short_catalog import LIST_TOOLS, LIST_TOOLS_SPEC, render_listing
from engines.text_transcript import (
    PART_SEPARATOR,
    is_text_conversation,
    read_text_messages,
    to_text_messages,
)
from tools.catalog import ALL_TOOLS, CORE_TOOLS
from tools.scenarios import load_scenario

SCENARIO = load_scenario("checkout-oom")
TOOLS = (*(t.spec for t in ALL_TOOLS if t.name in CORE_TOOLS), LIST_TOOLS_SPEC, SUBMIT_SPEC)
HIDDEN = [t.spec for t in ALL_TOOLS if t.name not in CORE_TOOLS]
PODS = {"namespace": "shop", "pod": "checkout"}
CONVERSATION: tuple[Message, ...] = (
    SystemMessage(prompts.system_prompt(["stay out of kube-system"], ["check the limits"])),
    UserMessage(prompts.incident_message(SCENARIO.report, SCENARIO.now)),
    UserMessage("The previous diagnosis was doubted: look again"),
    AssistantMessage("first the pod\nand what else there is", (
        ToolCall("a", "k8s_describe_pod", PODS),
        ToolCall("b", LIST_TOOLS, {}),
        ToolCall("c", "k8s_events", None, "{'namespace': shop"),
    )),
    ToolMessage("a", "k8s_describe_pod", "pod: checkout-1\nlast_state: {reason: OOMKilled}"),
    ToolMessage("b", LIST_TOOLS, render_listing(HIDDEN)),
    ToolMessage("c", "k8s_events", "ERROR: the arguments are not valid JSON", "error"),
    UserMessage("CONSTRAINT from ana: ignore the redis warnings"),
    AssistantMessage("", (ToolCall("d", "k8s_list_quotas", {"namespace": "shop"}),
                          ToolCall("e", "k8s_describe_pod", {**PODS, "pod": "cart"}))),
    ToolMessage("d", "k8s_list_quotas", "total: 0\nquotas: []"),
    ToolMessage("e", "k8s_describe_pod", "pod: cart-1\n\nstate: Running"),
    AssistantMessage("OOM", (ToolCall("f", SUBMIT_TOOL, {"category": "oom_killed"}),)),
    ToolMessage("f", SUBMIT_TOOL, "Diagnosis accepted."),
)


def _shape(messages: tuple[Message, ...]) -> list[tuple[object, ...]]:
    """Each message as what it says: ids are the format's to invent, so each observation is
    shown with the call it answers instead."""
    calls = {c.id: (c.name, c.arguments, c.raw_arguments if c.arguments is None else "")
             for m in messages if isinstance(m, AssistantMessage) for c in m.tool_calls}
    shaped: list[tuple[object, ...]] = []
    for message in messages:
        if isinstance(message, AssistantMessage):
            shaped.append(("assistant", message.content, [calls[c.id] for c in
                                                          message.tool_calls]))
        elif isinstance(message, ToolMessage):
            shaped.append(("tool", calls[message.call_id], message.content, message.status))
        else:
            shaped.append((message.role, message.content))
    return shaped


def test_a_text_transcript_reads_back_as_the_conversation_it_was_written_from() -> None:
    raw = to_text_messages(CONVERSATION, TOOLS)
    assert [m["role"] for m in raw] == ["system", "user", "assistant", "user", "assistant",
                                        "user", "assistant", "user"]
    assert PART_SEPARATOR + "CONSTRAINT from ana" in raw[3]["content"]
    assert is_text_conversation(raw)
    messages, tools = read_text_messages(raw)
    assert tools == TOOLS
    assert _shape(messages) == _shape(CONVERSATION)
    assert prompts.read_constraints(messages[0].content) == ["stay out of kube-system"]


def test_a_native_conversation_is_not_taken_for_text() -> None:
    assert not is_text_conversation([{"role": "system", "content": prompts.system_prompt()},
                                     {"role": "user", "content": "checkout is down"}])
