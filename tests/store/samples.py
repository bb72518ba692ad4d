"""Events of every kind, as the engine emits them, for the store tests."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from engines.diagnosis import Culprit, Diagnosis
from engines.events import (
    ConstraintApplied,
    ConstraintWithdrawn,
    DiagnosisSubmitted,
    EngineChosen,
    ErrorOccurred,
    Event,
    HypothesesUpdated,
    InvestigationStarted,
    InvestigationStopped,
    LessonsRetrieved,
    ObservationReceived,
    ReflectionRecorded,
    RewoundTo,
    ThoughtRecorded,
    ToolCalled,
)
from engines.hypotheses import Hypothesis

T0 = datetime(2026, 11, 30, 10, 0, 0, 123456, tzinfo=UTC)
DIAGNOSIS = Diagnosis.model_validate(
    {
        "category": "oom_killed",
        "culprit": {"kind": "Deployment", "namespace": "shop", "name": "checkout"},
        "summary": "checkout is OOMKilled at its 256Mi limit since the 10:02 release",
        "evidence": [
            {"tool": "k8s_pods", "quote": "OOMKilled"},
            {"tool": "metrics_workload_signals", "quote": "memory at 100% of limit"},
        ],
        "fix": "raise the memory limit to 512Mi | or roll back `v42`",
        "confidence": 0.9,
    }
)
POD_DATA: dict[str, Any] = {
    "namespace": "shop",
    "pods": [
        {"name": "checkout-7d9f-abcde", "restarts": 7, "reason": "OOMKilled", "ready": False},
        {"name": "checkout-7d9f-fghij", "restarts": 0, "reason": None, "ready": True},
    ],
    "window": ("2026-11-30T09:30:00Z", "2026-11-30T10:00:00Z"),  # a tuple must stay a tuple
    "started": datetime(2026, 11, 30, 9, 58, tzinfo=UTC),
    "ratio": 1.0,
    "quirks": {1: "int key", "$ref": "dollar key"},
}


CHECKOUT = Culprit(kind="Deployment", namespace="shop", name="checkout")
HYPOTHESES = (
    Hypothesis.of("oom_killed", CHECKOUT, confirm_by="OOMKilled in the pod status",
                  refute_by="no OOMKilled", score=0.82, state="confirmed",
                  evidence=("OOMKilled",)),
    Hypothesis.of("bad_rollout", CHECKOUT, score=0.3, state="refuted",
                  refuted_by="the new revision fails in a more specific way"),
    Hypothesis.of("dependency_failure", Culprit(kind="Deployment", namespace="shop",
                                                name="cart"), score=0.2),
)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def one_of_each(investigation_id: str = "inv1") -> list[Event]:
    """A plausible log holding every kind of event at least once, in order."""
    i = investigation_id
    return [
        InvestigationStarted(i, "checkout pods keep restarting", "analyzer", "react", 12, at=at(0)),
        LessonsRetrieved(i, 0, ("orders-db: check the connection pool first",), at(0.5)),
        ThoughtRecorded(i, 1, "Restarts: look at the pods of shop first.", at(1)),
        ToolCalled(
            i, 1, "call_1", "k8s_pods", {"namespace": "shop", "limit": 20}, "Listing pods in shop",
            at(1.1),
        ),
        ObservationReceived(
            i, 1, "call_1", "k8s_pods", "success",
            "checkout-7d9f-abcde  restarts=7  last=OOMKilled\ncheckout-7d9f-fghij  ok",
            POD_DATA, False, 0.25, 40, 900, at(1.5),
        ),
        ConstraintApplied(
            i, 2, "stay out of kube-system", "staying out of namespace kube-system", "alice",
            at(2), constraint="exclude_namespace", value="kube-system", reply="1700000000.1",
        ),
        ConstraintWithdrawn(i, 2, "1700000000.2", "focusing on workload cart", "bob", at(2.2)),
        ThoughtRecorded(i, 2, "Memory: check the signals.", at(2.5)),
        ToolCalled(i, 2, "call_2", "metrics_workload_signals", {"name": "checkout"},
                   "Reading signals of checkout", at(2.6)),
        ObservationReceived(
            i, 2, "call_2", "metrics_workload_signals", "error",
            "ERROR: metrics_workload_signals timed out after 10s", None, True, 10.0, 12, 12, at(3),
        ),
        ErrorOccurred(i, 2, "the model answered malformed JSON; asked again", False, at(3.5)),
        HypothesesUpdated(i, 2, HYPOTHESES, ("oom_killed:Deployment/shop/checkout",), "dfs",
                          at(3.7)),
        EngineChosen(i, "tot", "2 namespaces and a call chain", {"max_steps": 15.0,
                     "min_steps": 2.0, "timeout_seconds": 300.0, "token_budget": 4e5}, at=at(3.8)),
        DiagnosisSubmitted(i, 3, DIAGNOSIS, at(4)),
        ReflectionRecorded(
            i, 3, 1, ("evidence quote not found",), "Check the metrics again.", True, at(4.5)
        ),
        RewoundTo(i, 3, (), "alice", "1700000000.3", at(4.7)),
        InvestigationStopped(i, 3, "diagnosed", "", at(5)),
    ]
