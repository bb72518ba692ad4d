"""The analyzer's thoughts, written the way a senior SRE narrates in a Slack thread: short,
specific, numbers and names first ("Three checkout pods restarted 14 times in the last
hour; describing one to see why.")."""

from __future__ import annotations

from collections.abc import Sequence

from engines.analyzer.candidates import Candidate
from engines.analyzer.facts import ROLLING, Facts, Ref, Workload
from engines.analyzer.scope import Scope

CATEGORY_WORDS = {
    "oom_killed": "OOM kills", "crash_loop": "a crash loop at start",
    "image_pull": "an image that cannot be pulled",
    "unschedulable": "pods that cannot be scheduled",
    "probe_failure": "failing probes", "node_failure": "a failing node",
    "bad_rollout": "a bad rollout", "dependency_failure": "a failing dependency",
    "resource_exhaustion": "resource exhaustion", "cpu_throttling": "CPU throttling",
    "network": "a network fault", "certificate": "a bad TLS certificate",
    "quota_exceeded": "a quota that refuses pods", "autoscaling_limit": "a capped autoscaler",
    "unknown": "an unknown cause",
}
SYMPTOM_WORDS = {"restarts": "restarts", "errors": "errors", "latency": "slowness",
                 "pending": "missing capacity", "deploy": "a recent change", "tls": "TLS",
                 "dns": "name resolution",
                 "batch": "a missing batch output", "telemetry": "missing logs or metrics"}


def name(ref: Ref) -> str:
    if ref.kind == "Node":
        return f"node {ref.name}"
    return f"{ref.name} ({ref.namespace})" if ref.kind in ROLLING else str(ref)


def survey_thought(report: str, symptoms: frozenset[str] = frozenset()) -> str:
    first = report.strip().splitlines()[0][:90] if report.strip() else "the report"
    said = [SYMPTOM_WORDS[s] for s in SYMPTOM_WORDS if s in symptoms]
    heard = f" Symptoms: {', '.join(said)}." if said else ""
    return (f"Report: “{first}”.{heard} Starting wide: every workload's health, recent warning "
            "events, node problems and the last hour's error patterns, to match the report "
            "to what is actually running.")


def _health(workload: Workload | None) -> str:
    if workload is None:
        return ""
    parts = []
    if workload.unhealthy_pods:
        parts.append(f"{workload.unhealthy_pods} of {workload.pod_total} pods unhealthy")
    elif workload.ready is not None and workload.desired is not None:
        parts.append(f"{workload.ready}/{workload.desired} ready")
    if workload.restarts:
        parts.append(f"{workload.restarts} restarts")
    if workload.exit_reasons:
        parts.append("last exits " + ", ".join(workload.exit_reasons))
    return ", ".join(parts)


def focus_thought(facts: Facts, scope: Scope, targets: Sequence[Ref],
                  ranked: Sequence[Candidate], *, again: bool = False) -> str:
    if not targets:
        return "Nothing in the report matches a workload by name; following the loudest signals."
    lines = []
    for ref in targets[:2]:
        why = "is named in the report" if ref in scope.workloads else "looks unwell"
        if again:
            why = "is now a suspect too"
        health = _health(facts.workloads.get(ref))
        lines.append(f"{name(ref)} {why}" + (f" ({health})" if health else ""))
    text = "; ".join(lines) + "."
    if ranked and ranked[0].score >= 0.3:
        lead = "Lead so far" if again else "First lead"
        text += f" {lead}: {CATEGORY_WORDS[ranked[0].category]} ({ranked[0].headline[:90]})."
    what = "Describing its pods" if again else "Describing a pod"
    return text + f" {what}, reading rollout history and metrics, and the namespace's errors, " \
                  "services and autoscalers."


def lookup_thought(names: Sequence[str]) -> str:
    return (f"The workload list was cut to fit; the report names {', '.join(names)}, which it "
            "did not show: looking {} up by name.".format("it" if len(names) == 1 else "them"))


def sweep_thought(count: int) -> str:
    return (f"The report names no workload I can match and nothing stands out yet; reading the "
            f"metrics of {count} application workloads to find the one whose errors, latency, "
            "memory or CPU changed.")


def widen_thought(namespaces: Sequence[str], ranked: Sequence[Candidate]) -> str:
    where = ", ".join(namespaces) or "the cluster"
    text = f"Rounding out the picture in {where}: its errors, services and autoscalers."
    if ranked and ranked[0].score >= 0.3:
        text += (f" Lead so far: {CATEGORY_WORDS[ranked[0].category]} in "
                 f"{name(ranked[0].culprit)}.")
    return text


def follow_thought(ranked: Sequence[Candidate], whys: Sequence[str]) -> str:
    if not ranked:
        return "No cause stands out yet; " + ("; ".join(whys[:3]) or "widening the search") + "."
    best = ranked[0]
    text = (f"Leading hypothesis: {CATEGORY_WORDS[best.category]} in {name(best.culprit)} — "
            f"{best.headline[:140]}.")
    if len(ranked) > 1 and ranked[1].score >= 0.5 * best.score:
        other = ranked[1]
        text += f" Still open: {CATEGORY_WORDS[other.category]} in {name(other.culprit)}."
    if whys:
        text += " Next: " + "; ".join(dict.fromkeys(whys[:3])) + "."
    return text


def conclusion_thought(best: Candidate | None, confidence: float, stopped: bool) -> str:
    prefix = "Stopping as asked. " if stopped else ""
    if best is None:
        return prefix + "No signal explains the report well enough; submitting what I have, " \
                         "with low confidence."
    return (f"{prefix}Conclusion: {CATEGORY_WORDS[best.category]} in {name(best.culprit)} — "
            f"{best.headline[:160]}. Confidence {confidence:.0%}.")
