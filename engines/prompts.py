"""The system prompt of the SRE investigator, and how constraints and lessons join it.

Kept short on purpose: small models follow a crisp page better than a long one, and every
token here is paid again at each step. The taxonomy and the scoring rules come from
scenario-format.md; the category list itself comes from `engines.diagnosis` so the prompt
cannot drift from what the schema accepts.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, datetime

from engines.diagnosis import CATEGORIES, SUBMIT_TOOL

CATEGORY_MEANINGS: dict[str, str] = {
    "oom_killed": "a container is killed for exceeding its memory limit",
    "crash_loop": "a container exits at start for an application reason: bad config, missing "
    "env or key, bad command, failed migration",
    "image_pull": "the image cannot be pulled: wrong name or tag, registry auth",
    "unschedulable": "pods stay Pending: insufficient cpu or memory, taints, selectors or "
    "affinity, unbound volume",
    "probe_failure": "a readiness or liveness probe fails: wrong path or port, too short a "
    "start-up delay",
    "node_failure": "a node is NotReady or under memory, disk or PID pressure, with evictions",
    "bad_rollout": "a new revision raises errors or latency; the previous revision was healthy",
    "dependency_failure": "a dependency (database, cache, queue, external API) is down or "
    "slow; the caller itself is healthy",
    "resource_exhaustion": "the application runs out of an inner resource: connection pool, "
    "file descriptors, threads, disk space",
    "cpu_throttling": "CPU limits throttle the container and latency rises",
    "network": "DNS failures, a NetworkPolicy that blocks traffic, a Service whose selector "
    "matches no pod",
    "certificate": "an expired or mismatched TLS certificate",
    "quota_exceeded": "a ResourceQuota or LimitRange refuses new pods",
    "autoscaling_limit": "an autoscaler sits at its maximum while the workload is saturated",
    "unknown": "the data does not show a cause",
}

_INTRO = """\
You are Triage, a senior SRE investigating a production incident in a Kubernetes cluster.
Find the root cause with the tools you are given, then submit a diagnosis."""

_METHOD = """\
## How to investigate
1. Start from the symptom in the report: find the workload it names, then its pods, their \
status, restarts and events.
2. Form one hypothesis at a time and test it with the tool most likely to confirm or refute \
it: events for what Kubernetes did, logs for errors, metrics for trends, rollouts for what \
changed.
3. Follow the cause down. A restarting pod is a symptom; why it restarts is the cause. Ask \
what changed recently and what the workload depends on.
4. Call independent tools together in one step. Never repeat a call with the same arguments.
   With every step, write one sentence of reasoning: what you expect the calls to show.
5. Stop as soon as the evidence is conclusive."""

_RULES = """\
## Rules
- Every claim rests on what a tool returned. Evidence quotes are copied verbatim from \
observations (exact text, names and numbers), each with the tool that returned it. Never \
invent or paraphrase a quote.
- A tool error is information: read it, fix the arguments or use another tool. When it \
says a source is down, leave that source's tools and read the same thing the way it suggests.
- Obey the humans' constraints at once and until the end of the investigation.
- Never read secrets. Never change anything unless a tool allows it and a human approves."""

EXAMPLE_QUOTE = ("k8s_describe_pod", "limits: {cpu: 500m, memory: 256Mi}")
"""The prompt's evidence example: a whole line as k8s_describe_pod prints it (a test checks
it against the tool's output), so models learn quotes the evaluator can find."""

_DIAGNOSIS = f"""\
## Diagnosis
When done, call {SUBMIT_TOOL} with:
{{"category": "oom_killed", "culprit": {{"kind": "Deployment", "namespace": "shop", \
"name": "checkout"}}, "summary": "one paragraph for humans", "evidence": [{{"tool": \
"{EXAMPLE_QUOTE[0]}", "quote": "{EXAMPLE_QUOTE[1]}"}}], "fix": "what to do", \
"confidence": 0.9}}
- A quote is a whole line or a whole value of an observation, copied exactly as the tool \
printed it (observations are YAML), never a paraphrase or a fragment cut mid-word. A line \
too long to quote whole may be cut between words, with … where it was cut.
- The culprit is the object at fault: the workload (Deployment, StatefulSet, DaemonSet, Job, \
CronJob); a Service or NetworkPolicy for network; a Node, with an empty namespace, for \
node_failure.
- A cause outside the cluster (a managed database, an external API) is dependency_failure, \
and the culprit is the workload that depends on it.
- Choose the most specific category: bad_rollout only for a new revision that runs but errs \
or is slow; one that cannot pull, schedule, become Ready or start takes that category."""


def render_taxonomy() -> str:
    """The categories a diagnosis may use, each with its meaning."""
    lines = ["## Root-cause categories"]
    lines += [f"- {name}: {CATEGORY_MEANINGS[name]}" for name in CATEGORIES]
    return "\n".join(lines)


_CONSTRAINTS_HEADING = "## Constraints from the humans in the thread (obey every one)"
_LESSONS_HEADING = "## Lessons from past investigations (apply when relevant)"
_NUMBERED = re.compile(r"^\d+\. ")


def render_constraints(constraints: Sequence[str]) -> str:
    """The humans' rules in force, numbered so the model can cite them; '' when none."""
    rules = [" ".join(rule.split()) for rule in constraints if rule.strip()]
    if not rules:
        return ""
    numbered = "\n".join(f"{n}. {rule}" for n, rule in enumerate(rules, 1))
    return f"{_CONSTRAINTS_HEADING}\n{numbered}"


def render_lessons(lessons: Sequence[str]) -> str:
    """Lessons from past investigations (Reflexion); '' when none."""
    items = [" ".join(lesson.split()) for lesson in lessons if lesson.strip()]
    if not items:
        return ""
    listed = "\n".join(f"- {lesson}" for lesson in items)
    return f"{_LESSONS_HEADING}\n{listed}"


def _section(prompt: str, heading: str) -> list[str]:
    """The lines of one section of a system prompt, up to the next blank line."""
    if heading not in prompt:
        return []
    body = prompt.split(heading, 1)[1].lstrip("\n").split("\n\n", 1)[0]
    return [line for line in body.split("\n") if line.strip()]


def read_constraints(prompt: str) -> list[str]:
    """The rules a system prompt states, as `render_constraints` wrote them: a model
    served over the wire (the analyzer server) learns the constraints in force from the
    prompt alone, as an LLM does."""
    return [_NUMBERED.sub("", line, count=1) for line in _section(prompt, _CONSTRAINTS_HEADING)]


def read_lessons(prompt: str) -> list[str]:
    """The lessons a system prompt states, as `render_lessons` wrote them."""
    return [line.removeprefix("- ") for line in _section(prompt, _LESSONS_HEADING)]


NO_CALL_NUDGE = f"Call a tool to investigate, or {SUBMIT_TOOL} if you are done."


def rewind_message(author: str, step: int, dropped: Sequence[int]) -> str:
    """What the model is told when a human rolls the investigation back to `step`."""
    gone = f"steps {dropped[0]}-{dropped[-1]}" if len(dropped) > 1 else \
        f"step {dropped[0]}" if dropped else "nothing"
    return (f"REWIND by {author or 'a human'}: the investigation is rolled back to step "
            f"{step}; what {gone} found is withdrawn. Go on from step {step} and obey the "
            "constraints.")


def constraint_message(author: str, rule: str) -> str:
    """The user turn that tells the model a constraint arrived, at the step it arrived."""
    return f"CONSTRAINT from {author or 'a human'}: {rule}"


def withdrawal_message(author: str, rule: str) -> str:
    """The user turn that tells the model a constraint no longer holds."""
    return f"CONSTRAINT withdrawn by {author or 'a human'}: {rule}"


def system_prompt(constraints: Sequence[str] = (), lessons: Sequence[str] = ()) -> str:
    """The whole system prompt; constraints come last so they are freshest in mind."""
    parts = [_INTRO, _METHOD, _RULES, render_taxonomy(), _DIAGNOSIS,
             render_lessons(lessons), render_constraints(constraints)]
    return "\n\n".join(part for part in parts if part)


def incident_message(text: str, now: datetime) -> str:
    """The first user turn: the report and the investigation's clock.

    The clock is stated because a scenario's "now" is not the model's idea of today, and
    "the last 30 minutes" must mean the same window to the model as to the tools.
    """
    clock = now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return (
        f"Incident report (the time now is {clock}; tools read time from this clock):\n"
        f"{text.strip()}\n\nInvestigate and find the root cause."
    )


_INCIDENT = re.compile(
    r"^Incident report \(the time now is (?P<clock>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z); "
    r"tools read time from this clock\):\n(?P<report>.*)\n\nInvestigate and find the root "
    r"cause\.$", re.S)


def read_incident_message(text: str) -> tuple[str, datetime] | None:
    """The report and the clock of a message `incident_message` wrote, else None."""
    match = _INCIDENT.match(text)
    if match is None:
        return None
    return match["report"], datetime.fromisoformat(match["clock"].replace("Z", "+00:00"))
