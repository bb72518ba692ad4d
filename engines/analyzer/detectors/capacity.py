"""cpu_throttling and autoscaling_limit: the workload is short of CPU.

cpu_throttling: a large share of CFS periods throttled (metrics) under a CPU limit, with
latency rising (for the cluster's DNS server, its callers' lookups failing), best when the
throttling began with the trouble. autoscaling_limit: a HorizontalPodAutoscaler sits at its
maximum while a metric is above target (ScalingLimited) and the workload is saturated, or
its scale-up policy holds it far below its maximum while the metric stays high. When
both hold for one workload the autoscaler is the limit that matters (ranking.py).
"""

from __future__ import annotations

from datetime import timedelta

from engines.analyzer.candidates import Candidate, Clue
from engines.analyzer.detectors import _common as t
from engines.analyzer.detectors._common import pod_workload, signal_change
from engines.analyzer.detectors.dns import failing_callers
from engines.analyzer.facts import Autoscaler, Facts, Ref, parse_stamp
from engines.analyzer.graph import METRICS_API, METRICS_SERVERS
from engines.analyzer.scope import Scope

ALONGSIDE = timedelta(minutes=15)  # throttling and trouble that began together


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    return _throttling(facts, scope) + _autoscaling(facts)


def _cpu_limit(facts: Facts, ref: Ref) -> tuple[str, Clue | None]:
    for pod in facts.pods.values():
        if pod_workload(facts, pod) != ref:
            continue
        for container in pod.containers:
            if limit := container.limits.get("cpu"):
                return limit, Clue(0.1, f"CPU limit {limit}",
                                   (f"limits: … cpu: {limit}", f"limits: … cpu: '{limit}'"),
                                   pod.described, (t.DESCRIBE,), "cpu-limit")
    return "", None


def _throttling(facts: Facts, scope: Scope) -> list[Candidate]:
    found = []
    for ref, signals in facts.signals.items():
        cpu = signals.get("cpu")
        ratio = float(cpu.get("throttled_ratio") or 0.0)
        peak = float(cpu.get("throttled_ratio_peak_5_steps") or 0.0)
        shift = cpu.get("throttled_change")
        after = float(shift.get("ratio_after") or 0.0) if isinstance(shift, dict) else 0.0
        if not (cpu.get("abnormal") and (ratio >= 0.2 or peak >= 0.4 or after >= 0.25)):
            continue
        entry = Candidate("cpu_throttling", ref)
        entry.add(0.45 if max(ratio, after) >= 0.25 or peak >= 0.5 else 0.3, str(cpu.get("why")),
                  ("CPU throttling rose", "CPU periods throttled", "throttled_ratio"),
                  signals.source, (t.SIGNALS,), "throttled")
        latency = signals.get("latency")
        lookups = failing_callers(facts, scope, ref) if not latency.get("abnormal") else []
        if lookups:  # a DNS server's latency is its callers' lookups timing out
            first = lookups[0]
            entry.clues.append(Clue(0.3, f"{len(lookups)} workload(s) fail to resolve names "
                                    f"through it, {first.workload.name}: {first.quote[:70]}",
                                    (first.quote,), first.pattern.source, t.LOG_TOOLS, "latency"))
        if latency.get("abnormal"):
            entry.add(0.3, str(latency.get("why")), ("p99 rose",), signals.source, (t.SIGNALS,),
                      "latency")
        began = parse_stamp(shift.get("at")) if isinstance(shift, dict) else None
        trouble = signal_change(facts, ref) or (lookups[0].pattern.first if lookups else None) \
            or scope.onset
        if (latency.get("abnormal") or lookups) and began is not None and trouble is not None \
                and abs((trouble - began).total_seconds()) <= ALONGSIDE.total_seconds():
            entry.add(0.3, "the trouble began when the throttling did", ("CPU throttling rose",),
                      signals.source, (t.SIGNALS,), "throttled-onset")
        limit, clue = _cpu_limit(facts, ref)
        if clue is not None:
            entry.clues.append(clue)
        entry.fix = (f"Raise (or remove) the CPU limit of {ref.kind} {ref.namespace}/{ref.name}"
                     + (f" (now {limit})" if limit else "")
                     + " so it is not throttled under load, or add replicas to spread the load.")
        entry.follow(t.DESCRIBE, ref.pod_args, f"read {ref.name}'s CPU limit")
        entry.follow(t.AUTOSCALERS, {"namespace": ref.namespace},
                     f"see whether an autoscaler could add {ref.name} pods")
        found.append(entry)
    return found


def _autoscaling(facts: Facts) -> list[Candidate]:
    found = []
    blind = [hpa for hpa in facts.autoscalers.values() if _blind(hpa)]
    if blind and (server := _idle_metrics_server(facts)) is not None:
        found.append(_metrics_gone(facts, server, blind))
    for (namespace, name), hpa in facts.autoscalers.items():
        if (target := _target(facts, hpa)) is None:
            continue
        if not hpa.at_max:
            if (held := _rate_limited(facts, hpa, target)) is not None:
                found.append(held)
            continue
        entry = Candidate("autoscaling_limit", target)
        limited = [p for p in hpa.problems if "ScalingLimited" in p or "TooManyReplicas" in p]
        weight = 0.55 if limited else 0.2
        entry.add(weight, f"HorizontalPodAutoscaler {name} is at its maximum of {hpa.maximum} "
                  "replicas" + (f": {limited[0][:80]}" if limited else ""),
                  (*tuple(p[:60] for p in limited), f"max: {hpa.maximum}"), hpa.source,
                  (t.AUTOSCALERS,), "hpa-max")
        if above := [p for p in hpa.problems if "above target" in p]:
            entry.add(0.3, above[0][:100], (above[0][:50],), hpa.source, (t.AUTOSCALERS,),
                      "hpa-above")
        if hpa.desired > (hpa.maximum or 0):
            entry.add(0.15, f"it wants {hpa.desired} replicas", (f"desired: {hpa.desired}",),
                      hpa.source, (t.AUTOSCALERS,), "hpa-desired")
        _saturation(facts, target, entry)
        entry.fix = (f"Raise maxReplicas of HorizontalPodAutoscaler {namespace}/{name} (now "
                     f"{hpa.maximum}) and make sure the cluster has room for the extra pods, or "
                     f"make {target.name} cheaper per request.")
        entry.follow(t.SIGNALS, target.workload_args, f"see how saturated {target.name} is")
        found.append(entry)
    return found


def _saturation(facts: Facts, target: Ref, entry: Candidate) -> None:
    """The target's own signs of running short while its autoscaler does not keep up."""
    signals = facts.signals_of(target)
    if signals is None:
        return
    for key in ("latency", "requests", "cpu"):
        signal = signals.get(key)
        if signal.get("abnormal"):
            entry.add(0.2, str(signal.get("why")), ("p99 rose", "5xx ratio rose", "CPU"),
                      signals.source, (t.SIGNALS,), f"saturated-{key}")


def _rate_limited(facts: Facts, hpa: Autoscaler, target: Ref) -> Candidate | None:
    """An autoscaler far below its maximum whose scale-up policy (behavior.scaleUp) holds
    it back while a metric stays above target: it is scaling, which looks healthy, but one
    step per period falls behind a load that grows faster."""
    held = next((p for p in hpa.problems if "ScaleUpLimited" in p), "")
    if not held or not hpa.scale_up or not any("above target" in p for p in hpa.problems):
        return None
    entry = Candidate("autoscaling_limit", target)
    entry.add(0.5, f"HorizontalPodAutoscaler {hpa.name} may add only {hpa.scale_up} "
              f"(behavior.scaleUp), {hpa.desired} of {hpa.maximum} replicas: {held[:80]}",
              (held[:60], hpa.scale_up), hpa.source, (t.AUTOSCALERS,), "hpa-rate")
    if measured := [m for m in hpa.metrics if "/ target" in m]:  # one is over (the problem)
        entry.add(0.25, f"its metrics against target: {', '.join(measured[:3])}",
                  (measured[0],), hpa.source, (t.AUTOSCALERS,), "hpa-above")
    _saturation(facts, target, entry)
    entry.fix = (f"Loosen the scale-up policy of HorizontalPodAutoscaler {hpa.namespace}/"
                 f"{hpa.name} (now {hpa.scale_up}): allow a percentage or several pods per "
                 "short period (for example 100% per 60s) so it keeps up with the load; "
                 f"maxReplicas ({hpa.maximum}) is not what holds it back.")
    entry.follow(t.SIGNALS, target.workload_args, f"see how saturated {target.name} is")
    return entry


def _idle_metrics_server(facts: Facts) -> Ref | None:
    """The server of the resource metrics API when it runs no ready pod (scaled to zero,
    crashing): every autoscaler that reads CPU or memory is blind without it."""
    for ref, workload in sorted(facts.workloads.items(), key=lambda kv: str(kv[0])):
        if any(n in ref.name for n in METRICS_SERVERS) and ref.kind in ("Deployment",
                                                                         "StatefulSet") \
                and not workload.ready:
            return ref
    return None


def _metrics_gone(facts: Facts, server: Ref, blind: list[Autoscaler]) -> Candidate:
    """Autoscalers that cannot read the resource metrics stay where they are (at their
    minimum) while their workloads saturate: the metrics server that is down is the limit."""
    targets = tuple(dict.fromkeys(r for hpa in blind if (r := _target(facts, hpa)) is not None))
    entry = Candidate("autoscaling_limit", server, affects=targets)
    problem = next(p for hpa in blind if (p := _blind(hpa)))
    names = ", ".join(hpa.name for hpa in blind[:3])
    entry.add(0.5, f"{len(blind)} autoscaler(s) ({names}) cannot read resource metrics: "
              f"{problem[:90]}", (problem[:60],), blind[0].source, (t.AUTOSCALERS,),
              "hpa-blind")
    workload = facts.workloads[server]
    entry.add(0.3, f"{server.name} runs no ready pod ({workload.ready or 0}/"
              f"{workload.desired or 0})", (server.name,), workload.source, (t.WORKLOADS,),
              "metrics-server-down")
    for target in targets[:2]:
        signals = facts.signals_of(target)
        if signals is not None and (signals.get("latency").get("abnormal") or
                                    signals.get("cpu").get("abnormal")):
            entry.add(0.2, f"{target.name} saturates without scaling out",
                      ("p99 rose", "CPU"), signals.source, (t.SIGNALS,), "blind-saturated")
            break
    entry.fix = (f"Bring {server.kind} {server.namespace}/{server.name} back (scale it up, "
                 "fix what keeps it from running) so the autoscalers read CPU and memory again "
                 "and scale out; the saturated workloads need no change.")
    entry.follow(t.ROLLOUT, server.workload_args, f"see what changed in {server.name}")
    return entry


def _blind(hpa: Autoscaler) -> str:
    """The autoscaler's problem that says it cannot read the resource metrics, if any."""
    return next((p for p in hpa.problems if any(n in p.lower() for n in METRICS_API)), "")


def _target(facts: Facts, hpa: Autoscaler) -> Ref | None:
    """The workload an autoscaler scales, as listed (its kind as the cluster has it)."""
    if hpa.target is None:
        return None
    return next((r for r in facts.workloads if r.namespace == hpa.namespace
                 and r.name == hpa.target.name), hpa.target)
