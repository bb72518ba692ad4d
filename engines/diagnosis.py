"""The diagnosis schema of scenario-format.md, the tool that submits one, the sentence that
rejects one, and the scoring rule that judges one.

Pydantic validates what the model submits, so an invalid diagnosis can be sent back to the
model with the exact validation error instead of being accepted half-formed.
"""

from __future__ import annotations

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.json_schema import SkipJsonSchema

from engines._schema import clean_schema

Category = Literal[
    "oom_killed",
    "crash_loop",
    "image_pull",
    "unschedulable",
    "probe_failure",
    "node_failure",
    "bad_rollout",
    "dependency_failure",
    "resource_exhaustion",
    "cpu_throttling",
    "network",
    "certificate",
    "quota_exceeded",
    "autoscaling_limit",
    "unknown",
]

CATEGORIES: tuple[str, ...] = get_args(Category)
SUBMIT_TOOL = "submit_diagnosis"
"""The tool a model calls to hand in its diagnosis: the engine offers it, the prompts name it,
the analyzer calls it."""
WORKLOAD_KINDS = frozenset({"Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"})


class Culprit(BaseModel):
    """The object whose fault the incident is."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    kind: str = Field(min_length=1, description="Deployment, StatefulSet, Service, Node, ...")
    namespace: str = Field(default="", description="Empty for cluster-scoped objects (Node).")
    name: str = Field(min_length=1)

    def __str__(self) -> str:
        where = f"{self.namespace}/" if self.namespace else ""
        return f"{self.kind} {where}{self.name}"


class Evidence(BaseModel):
    """A quote from an observation, with the tool that returned it."""

    # The docstring above is the model's description of the field: keep it short. `step`
    # and `found` are the engine's, not the model's (its schema does not show them): when
    # it accepts a diagnosis the engine widens each quote to the whole line or value it sits
    # in and notes the step whose observation holds it (engines.evidence), so that what
    # people read is whole and can be traced. `found` is False for a quote that no
    # observation holds, None when nobody checked (a diagnosis made outside an engine).
    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str = Field(min_length=1)
    quote: str = Field(min_length=1)
    step: SkipJsonSchema[int | None] = None
    found: SkipJsonSchema[bool | None] = None

    @property
    def origin(self) -> str:
        """Where the quote comes from, for people: "k8s_events, step 3", or that the tool's
        output does not hold it."""
        if self.found is False:
            return f"{self.tool}: not found in its output"
        return f"{self.tool}, step {self.step}" if self.step is not None else self.tool


class RuledOut(BaseModel):
    """A rival cause set aside, and why."""

    # What speaks against it: the observation that refutes it, or the human who ruled it
    # out. (The docstring is the model's description of the field: kept short.)
    model_config = ConfigDict(extra="forbid", frozen=True)

    category: Category
    culprit: Culprit
    reason: str = Field(min_length=1)


class Diagnosis(BaseModel):
    """An investigation's structured answer."""

    # `ruled_out` is optional so that diagnoses stored before the search engines existed
    # still validate. Docstrings and descriptions here are sent to the model in the
    # submit tool's schema: they say what to put, never the code's history.
    model_config = ConfigDict(extra="forbid", frozen=True)

    category: Category
    culprit: Culprit
    summary: str = Field(min_length=1)
    evidence: list[Evidence] = Field(default_factory=list)
    fix: str = ""
    confidence: float = Field(ge=0.0, le=1.0)
    ruled_out: list[RuledOut] = Field(
        default_factory=list, description="Rivals set aside (optional).")

    @field_validator("evidence")
    @classmethod
    def _at_most_twenty(cls, value: list[Evidence]) -> list[Evidence]:
        if len(value) > 20:
            raise ValueError("give at most 20 evidence quotes, the strongest first")
        return value


REJECTION_PREFIX = "The previous diagnosis"
REJECTION_PHRASE = REJECTION_PREFIX + " {category} of {culprit} was rejected: {reason}"
"""How a rejected diagnosis is told to the next attempt (by Reflexion, or a human's "wrong"):
the analyzer recognises it (analyzer/rejections.py) and never submits that answer again, so
the sentence is defined here once for the writer and the reader. {culprit} is
`str(Culprit)`: "Deployment shop/checkout", or "Node ip-10-0-1-2" when cluster-scoped."""
NOTHING_FOUND_PHRASE = REJECTION_PREFIX + " attempt found nothing: {reason}"


def rejection_message(diagnosis: Diagnosis | None, reason: str) -> str:
    """The sentence that tells a retry which diagnosis was rejected and why (or that the
    attempt submitted none)."""
    if diagnosis is None:
        return NOTHING_FOUND_PHRASE.format(reason=reason.strip())
    return REJECTION_PHRASE.format(
        category=diagnosis.category, culprit=str(diagnosis.culprit), reason=reason.strip()
    )


class Truth(BaseModel):
    """The true root cause recorded in a scenario."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    category: Category
    culprit: Culprit
    evidence: list[str] = Field(default_factory=list)
    fix: str = ""


SAFE_ALPHABET = frozenset("bcdfghjklmnpqrstvwxz2456789")  # Kubernetes' generated name suffixes


def _generated(part: str, lengths: range) -> bool:
    return len(part) in lengths and set(part) <= SAFE_ALPHABET


def _owned_by(object_name: str, workload_name: str) -> bool:
    """Whether a Pod, ReplicaSet or Job name is one a workload's controllers would generate.

    The suffixes are what the controllers append: `-<pod-template-hash>` (ReplicaSet),
    `-<hash>-<5>` (its Pod), `-<ordinal>` (StatefulSet Pod), `-<5>` (DaemonSet or Job Pod),
    `-<schedule time>` and `-<schedule time>-<5>` (a CronJob's Job and Pod). Hashes use an
    alphabet without vowels, so `checkout-worker-...` is never taken for a pod of `checkout`.
    """
    if not object_name.startswith(workload_name + "-"):
        return False
    parts = object_name[len(workload_name) + 1 :].split("-")
    head_ok = parts[0].isdigit() or _generated(parts[0], range(4, 11))
    if len(parts) == 1:
        return head_ok
    return len(parts) == 2 and head_ok and _generated(parts[1], range(5, 6))


def is_correct(diagnosis: Diagnosis | None, truth: Truth) -> bool:
    """Score a diagnosis by the rule of scenario-format.md."""
    if diagnosis is None or diagnosis.category != truth.category:
        return False
    got, want = diagnosis.culprit, truth.culprit
    if want.kind == "Node":
        return got.name == want.name
    if got.namespace != want.namespace:
        return False
    if got.name == want.name:
        return True
    if want.kind in WORKLOAD_KINDS:
        return got.kind in {"Pod", "ReplicaSet", "Job"} and _owned_by(got.name, want.name)
    return False


def submit_schema() -> dict[str, Any]:
    """The submit tool's JSON schema as a model is sent it: the diagnosis's, with a rival's
    category and culprit said once ("as above") instead of the taxonomy and the culprit's
    shape repeated; every token of a tool schema is paid on every turn. What the model
    sends is still validated against the full model."""
    schema = clean_schema(Diagnosis.model_json_schema())
    rival = schema["properties"]["ruled_out"]["items"]["properties"]
    rival["category"] = {"type": "string", "description": "a category, as above"}
    rival["culprit"] = {"type": "object", "description": "kind, namespace, name, as above"}
    return schema
