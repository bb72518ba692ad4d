"""The text ReAct parser on the messy formats real small models produce."""

from __future__ import annotations

import json
from typing import Any

import pytest

from engines._react_text import loads_lenient, parse_react
from engines.model import ToolCall, ToolSpec
from engines.text_transcript import render_action, render_tool_instructions

PODS = ToolSpec("k8s_list_pods", "List pods.",
                {"type": "object", "properties": {"namespace": {"type": "string"}}})
LOGS = ToolSpec("logs_search", "Search logs.",
                {"type": "object", "properties": {"query": {"type": "string"},
                                                  "minutes": {"type": "integer"}}})
SUBMIT = ToolSpec("submit_diagnosis", "Submit.", {"type": "object", "properties": {
    k: {} for k in ("category", "culprit", "summary", "evidence", "fix", "confidence")}})
TOOLS = (PODS, LOGS, SUBMIT)
SHOP = {"namespace": "shop"}
DIAGNOSIS = {"category": "oom_killed",
             "culprit": {"kind": "Deployment", "namespace": "shop", "name": "checkout"},
             "summary": "OOM", "confidence": 0.9}
DIAGNOSIS_JSON = json.dumps(DIAGNOSIS)


def calls(text: str) -> list[tuple[str, dict[str, Any] | None]]:
    return [(c.name, c.arguments) for c in parse_react(text, TOOLS).tool_calls]


@pytest.mark.parametrize("text", [
    # the canonical format
    'Thought: check pods\nAction: k8s_list_pods\nAction Input: {"namespace": "shop"}',
    # the whole reply in a code fence, with prose after it
    '```\nThought: check pods\nAction: k8s_list_pods\nAction Input: {"namespace": "shop"}\n'
    '```\nI hope this helps!',
    # the input in its own json fence
    'Thought: x\nAction: k8s_list_pods\nAction Input:\n```json\n{"namespace": "shop"}\n```',
    # markdown bold labels and a backticked name
    '**Thought:** x\n**Action:** `k8s_list_pods`\n**Action Input:** {"namespace": "shop"}',
    '**Thought**: x\n**Action**: k8s_list_pods\n**Action Input**: {"namespace": "shop"}',
    # lower case and underscores in labels
    'thought: x\naction: k8s_list_pods\naction_input: {"namespace": "shop"}',
    # single quotes and a trailing comma
    "Action: k8s_list_pods\nAction Input: {'namespace': 'shop',}",
    # bare keys
    "Action: k8s_list_pods\nAction Input: {namespace: \"shop\"}",
    # trailing prose on the same line and after
    'Action: k8s_list_pods\nAction Input: {"namespace": "shop"} (the namespace from the '
    "report)\nThis should show the restarts.",
    # the input inline after the name
    'Action: k8s_list_pods {"namespace": "shop"}',
    # function-call syntax
    'Action: k8s_list_pods({"namespace": "shop"})',
    "Action: k8s_list_pods(namespace='shop')",
    # a bare value for a tool of one parameter
    "Action: k8s_list_pods\nAction Input: shop",
    'Action: k8s_list_pods\nAction Input: "shop"',
    # YAML-ish and key=value input
    "Action: k8s_list_pods\nAction Input: namespace: shop",
    "Action: k8s_list_pods\nAction Input:\n  namespace: 'shop'\n\nThat should do.",
    "Action: k8s_list_pods(namespace=shop)",
    "Action: k8s_list_pods\nAction Input: namespace=shop",
    # an inline-code input
    "Action: k8s_list_pods\nAction Input: `{\"namespace\": \"shop\"}`",
])
def test_one_action_in_many_dialects(text: str) -> None:
    assert calls(text) == [("k8s_list_pods", SHOP)]


def test_thought_is_kept_without_its_label() -> None:
    parsed = parse_react("Thought: the pods restart.\nI should list them.\n"
                         "Action: k8s_list_pods\nAction Input: {\"namespace\": \"shop\"}", TOOLS)
    assert parsed.thought == "the pods restart.\nI should list them."


def test_several_actions_in_one_reply() -> None:
    text = ('Thought: both at once\nAction: k8s_list_pods\nAction Input: {"namespace": "shop"}'
            '\n\nAction: logs_search\nAction Input: {"query": "OOM", "minutes": 30}')
    parsed = parse_react(text, TOOLS, id_prefix="s3_")
    assert [(c.id, c.name, c.arguments) for c in parsed.tool_calls] == [
        ("s3_0", "k8s_list_pods", SHOP),
        ("s3_1", "logs_search", {"query": "OOM", "minutes": 30}),
    ]


def test_yaml_ish_input_with_several_keys() -> None:
    text = "Action: logs_search\nAction Input:\nquery: OOMKilled\nminutes: 30\nThought: wait"
    assert calls(text) == [("logs_search", {"query": "OOMKilled", "minutes": 30})]


def test_missing_action_input_is_a_call_without_arguments() -> None:
    assert calls("Thought: list everything\nAction: k8s_list_pods") == [("k8s_list_pods", {})]


def test_a_made_up_observation_and_what_follows_are_dropped() -> None:
    text = ('Action: k8s_list_pods\nAction Input: {"namespace": "shop"}\n'
            "Observation: all pods are healthy\nThought: so it is the network\n"
            'Action: logs_search\nAction Input: {"query": "dns"}')
    assert calls(text) == [("k8s_list_pods", SHOP)]


def test_unrepairable_input_is_none_with_the_raw_text() -> None:
    (call,) = parse_react('Action: k8s_list_pods\nAction Input: {"namespace": "shop"',
                          TOOLS).tool_calls
    assert call.arguments is None
    assert call.raw_arguments == '{"namespace": "shop"'


def test_a_bare_value_for_a_tool_of_several_parameters_is_not_guessed() -> None:
    (call,) = parse_react("Action: logs_search\nAction Input: OOMKilled", TOOLS).tool_calls
    assert call.arguments is None and call.raw_arguments == "OOMKilled"


def test_unknown_tool_names_pass_through() -> None:
    assert calls('Action: kubectl_exec\nAction Input: {"cmd": "ls"}') == [
        ("kubectl_exec", {"cmd": "ls"})]


@pytest.mark.parametrize("text", [
    f"Thought: done\nFinal Answer: {DIAGNOSIS_JSON}",
    f"Final Answer:\n```json\n{json.dumps(DIAGNOSIS, indent=2)}\n```",
    f"Thought: done\nFinal Answer: {{\"diagnosis\": {DIAGNOSIS_JSON}}}",
    f"Action: submit_diagnosis\nAction Input: {DIAGNOSIS_JSON}",
    f"Action: None\nFinal Answer: {DIAGNOSIS_JSON}",
    f"**Final Answer:** {DIAGNOSIS!s}",  # a Python dict: single quotes
])
def test_final_answer_becomes_submit_diagnosis(text: str) -> None:
    assert calls(text) == [("submit_diagnosis", DIAGNOSIS)]


def test_a_prose_final_answer_is_surfaced_for_the_engine_to_reject() -> None:
    (call,) = parse_react("Thought: found it\nFinal Answer: checkout is OOM killed at 256Mi",
                          TOOLS).tool_calls
    assert call.name == "submit_diagnosis"
    assert call.arguments is None
    assert call.raw_arguments == "checkout is OOM killed at 256Mi"


@pytest.mark.parametrize("text", [
    "I am not sure what to do next.",
    "The pods look fine. Let me think about it more.",
    "",
    "Thought: I need more information.",
])
def test_replies_without_an_action_have_no_calls(text: str) -> None:
    parsed = parse_react(text, TOOLS)
    assert parsed.tool_calls == ()
    assert parsed.thought == text.removeprefix("Thought: ")


@pytest.mark.parametrize("text", [
    '{"action": "k8s_list_pods", "action_input": {"namespace": "shop"}}',
    '```json\n{"action": "k8s_list_pods", "action_input": "{\\"namespace\\": \\"shop\\"}"}\n```',
    'I will call:\n{"name": "k8s_list_pods", "arguments": {"namespace": "shop"}}',
    '{"name": "k8s_list_pods", "parameters": {"namespace": "shop"}}',
    '<tool_call>\n{"name": "k8s_list_pods", "arguments": {"namespace": "shop"}}\n</tool_call>',
    '<think>the pods first</think>\nAction: k8s_list_pods\nAction Input: {"namespace": "shop"}',
])
def test_json_and_tagged_dialects(text: str) -> None:
    assert calls(text) == [("k8s_list_pods", SHOP)]


def test_a_json_final_answer_action() -> None:
    text = json.dumps({"action": "Final Answer", "action_input": DIAGNOSIS})
    assert calls(text) == [("submit_diagnosis", DIAGNOSIS)]


def test_a_bare_diagnosis_object_is_a_submission() -> None:
    assert calls(json.dumps(DIAGNOSIS)) == [("submit_diagnosis", DIAGNOSIS)]


def test_a_broken_tagged_call_still_names_its_tool() -> None:
    (call,) = parse_react('<tool_call>{"name": "k8s_list_pods", "arguments": {"namespace": '
                          "</tool_call>", TOOLS).tool_calls
    assert (call.name, call.arguments) == ("k8s_list_pods", None)
    assert '"namespace"' in call.raw_arguments


def test_think_blocks_become_the_thought_when_nothing_else_is_said() -> None:
    parsed = parse_react("<think>maybe the memory limit</think>\nAction: k8s_list_pods", TOOLS)
    assert parsed.thought == "maybe the memory limit"


def test_labels_inside_prose_are_not_actions() -> None:
    parsed = parse_react("Thought: the next action: list pods. Action items: none.", TOOLS)
    assert parsed.tool_calls == ()


@pytest.mark.parametrize(("text", "value"), [
    ('{"a": 1}', {"a": 1}),
    ("{'a': 'it\\'s', 'b': \"say \\\"hi\\\"\"}", {"a": "it's", "b": 'say "hi"'}),
    ("{'msg': \"it's, fine\", 'x': [1, 2,],}", {"msg": "it's, fine", "x": [1, 2]}),
    ("{'ok': True, 'none': None, 'no': False}", {"ok": True, "none": None, "no": False}),
    ("{a: 1, b_c: 'x'}", {"a": 1, "b_c": "x"}),
    ('{"text": "line one\nline two"}', {"text": "line one\nline two"}),  # raw newline
    ("{'quote': '{not: a, key}'}", {"quote": "{not: a, key}"}),
])
def test_lenient_json(text: str, value: Any) -> None:
    assert loads_lenient(text) == value


@pytest.mark.parametrize("text", ['{"a": 1', "{a b: 1}", "{'a': undefined_thing}",
                                  "{'a': 1} trailing"])
def test_lenient_json_refuses_to_guess(text: str) -> None:
    with pytest.raises(ValueError):
        loads_lenient(text)


def test_rendered_actions_parse_back() -> None:
    original = (ToolCall("x", "k8s_list_pods", SHOP), ToolCall("y", "logs_search", {}))
    text = "Thought: both\n" + "\n".join(render_action(c) for c in original)
    assert calls(text) == [("k8s_list_pods", SHOP), ("logs_search", {})]


def test_tool_instructions_list_every_tool_and_schema() -> None:
    text = render_tool_instructions(TOOLS)
    for spec in TOOLS:
        assert f"- {spec.name}: {spec.description}" in text
    assert '"namespace": {"type": "string"}' in text
    assert "Action Input:" in text and "submit_diagnosis" in text


FRAGMENTS = ["Thought:", "Action:", "Action Input:", "Final Answer:", "Observation:", "```",
             "```json", "{", "}", "[", "]", "'", '"', ",", ":", "=", "(", ")", "<think>",
             "</think>", "<tool_call>", "</tool_call>", "\n", " ", "k8s_list_pods", "None",
             "namespace", "shop", "True", "\\", "**", "`", "action_input", "name", "1e5",
             "k8s_list_pods(", "{[1]: 2}", "*args", "lambda: 0"]


def test_the_parser_never_raises_on_garbage() -> None:
    import random

    rng = random.Random(7)
    for _ in range(3000):
        text = "".join(rng.choice(FRAGMENTS) for _ in range(rng.randint(0, 30)))
        parsed = parse_react(text, TOOLS)
        for call in parsed.tool_calls:
            assert call.name and isinstance(call.raw_arguments, str)
            assert call.arguments is None or isinstance(call.arguments, dict)


@pytest.mark.parametrize("text", [
    "Action: k8s_list_pods({[1]: 2})",
    "Action: k8s_list_pods(namespace={[1]: 2})",
    "Action: k8s_list_pods\nAction Input: " + "[" * 100_000,
    "Action: k8s_list_pods(" + "(" * 5_000 + ")" * 5_000 + ")",
])
def test_hostile_inputs_are_refused_not_raised(text: str) -> None:
    (call,) = parse_react(text, TOOLS).tool_calls
    assert call.arguments is None
