"""Low confidence: read the graph's missing links while the budget allows, and when nothing
explains the report, answer `unknown` with the best leads rather than blame a bystander."""

from __future__ import annotations

import json
from typing import Any

from engines.analyzer.candidates import Candidate, Clue
from engines.analyzer.diagnose import diagnosis_arguments
from engines.analyzer.facts import Ref
from engines.analyzer.model import decide
from engines.analyzer.ranking import rank
from engines.analyzer.transcript import Observation
from engines.model import (
    AssistantMessage,
    ModelRequest,
    ToolCall,
    ToolMessage,
    ToolSpec,
    UserMessage,
)
from engines.react import SUBMIT_SPEC
from tests.engines.analyzer.helpers import (
    facts_of,
    obs,
    pattern,
    patterns,
    scope_of,
    signals,
    workload,
    workloads,
)

REPORT = "the storefront returns 503 for every page"


def test_a_weak_lead_under_low_confidence_is_answered_unknown_with_the_lead() -> None:
    facts = facts_of(workloads(workload("storefront"), workload("agent", "logging")))
    scope = scope_of(facts, REPORT)
    stale = Candidate("probe_failure", Ref("Deployment", "logging", "agent"),
                      [Clue(0.2, "Liveness probe failed 9 times", ("Liveness probe failed",))])
    arguments, sure = diagnosis_arguments([stale], [], facts, scope)
    assert arguments["category"] == "unknown" and sure < 0.4
    assert arguments["culprit"]["name"] == "storefront"  # where the symptom is, not the agent
    assert "Best leads, none convincing: failing probes in agent (logging)" in arguments["summary"]
    assert "agent" in arguments["summary"] and "agent" in arguments["fix"]


def test_a_clear_own_anomaly_is_answered_even_when_a_rival_makes_it_unsure() -> None:
    facts = facts_of(workloads(workload("storefront"), workload("cart")))
    scope = scope_of(facts, REPORT)
    ref = Ref("Deployment", "shop", "storefront")
    clear = Candidate("oom_killed", ref, [Clue(0.5, "OOMKilled", ("OOMKilled",))])
    rival = Candidate("crash_loop", ref, [Clue(0.5, "exit 1", ("exit",))])
    arguments, sure = diagnosis_arguments([clear, rival], [], facts, scope)
    assert arguments["category"] == "oom_killed" and sure < 0.4


def test_an_unsure_cause_off_the_report_s_path_is_a_bystander_answered_unknown() -> None:
    """An OOM-killed agent of another namespace, which nothing the report names calls: its
    own anomaly is clear (strength 0.5), but it is off the path, and unsure; once the
    reported storefront is seen calling it, the same anomaly is on the path and named."""
    def answer(*extra: Observation) -> tuple[dict[str, Any], float]:
        facts = facts_of(workloads(workload("storefront"), workload("agent", "logging")), *extra)
        scope = scope_of(facts, REPORT)
        oom = Candidate("oom_killed", Ref("Deployment", "logging", "agent"),
                        [Clue(0.5, "agent was OOMKilled", ("OOMKilled",))])
        return diagnosis_arguments(rank([oom], scope, facts), [], facts, scope)

    arguments, sure = answer()
    assert arguments["category"] == "unknown" and sure < 0.4
    assert arguments["culprit"]["name"] == "storefront"
    assert "Best leads, none convincing: OOM kills in agent (logging)" in arguments["summary"]
    linked, _ = answer(patterns(pattern(
        "render page: GET http://agent.logging.svc:8080/flags: connection refused",
        service="storefront", pod="storefront-5d6f7-abcde")))
    assert (linked["category"], linked["culprit"]["name"]) == ("oom_killed", "agent")


def _specs(*names: str) -> tuple[ToolSpec, ...]:
    properties = {"properties": {"namespace": {}, "limit": {}}}
    return (*(ToolSpec(n, "", properties) for n in names), SUBMIT_SPEC)


def test_an_unsure_answer_first_reads_ingresses_services_and_policies() -> None:
    listing = obs("k8s_list_workloads", {"namespace": "all", "total": 1, "unhealthy": 0,
                                         "workloads": [workload("storefront")]})
    call = ToolCall("c1", "k8s_list_workloads", {"limit": 100}, json.dumps({"limit": 100}))
    messages = (UserMessage(REPORT), AssistantMessage("survey", (call,)),
                ToolMessage("c1", "k8s_list_workloads", listing.content))
    tools = _specs("k8s_list_workloads", "k8s_list_ingresses", "k8s_list_services",
                   "k8s_list_network_policies")
    asked: list[tuple[str, dict[str, object]]] = []
    for step in range(2, 8):
        reply = decide(ModelRequest(messages=messages, tools=tools, step=step, max_steps=12,
                                    context={"incident": REPORT}))
        if reply.tool_calls[0].name == SUBMIT_SPEC.name:
            break
        asked += [(c.name, dict(c.arguments or {})) for c in reply.tool_calls]
        messages = (*messages, AssistantMessage("next", reply.tool_calls),
                    *(ToolMessage(c.id, c.name, "total: 0") for c in reply.tool_calls))
    assert ("k8s_list_ingresses", {}) in asked
    assert ("k8s_list_network_policies", {"namespace": "shop"}) in asked
    (submit,) = reply.tool_calls
    assert submit.name == SUBMIT_SPEC.name and submit.arguments["category"] == "unknown"


def test_an_unsure_answer_reads_the_release_of_a_neighbour_whose_metrics_turned() -> None:
    slow = {"abnormal": True, "why": "p99 rose from 0.2s to 2.3s at 2026-11-30T09:05:00Z",
            "change": {"at": "2026-11-30T09:05:00Z"}}
    observations = [
        obs("k8s_list_workloads", {"namespace": "all", "total": 2, "unhealthy": 0,
                                   "workloads": [workload("storefront"), workload("ratings")]}),
        signals("shop", "ratings", latency=slow)]
    messages: tuple = (UserMessage("the storefront is slow"),)
    for i, observation in enumerate(observations):
        call = ToolCall(f"o{i}", observation.tool, dict(observation.arguments), "{}")
        messages = (*messages, AssistantMessage("read", (call,)),
                    ToolMessage(f"o{i}", observation.tool, observation.content))
    tools = (ToolSpec("k8s_rollout_history", "", {"properties": {"namespace": {},
                                                                 "workload": {}}}), SUBMIT_SPEC)
    asked = []
    for step in range(3, 9):
        reply = decide(ModelRequest(messages=messages, tools=tools, step=step, max_steps=12,
                                    context={"incident": "the storefront is slow"}))
        if reply.tool_calls[0].name == SUBMIT_SPEC.name:
            break
        asked += [(c.name, dict(c.arguments or {})) for c in reply.tool_calls]
        messages = (*messages, AssistantMessage("next", reply.tool_calls),
                    *(ToolMessage(c.id, c.name, "total: 0") for c in reply.tool_calls))
    assert ("k8s_rollout_history", {"namespace": "shop", "workload": "ratings"}) in asked
