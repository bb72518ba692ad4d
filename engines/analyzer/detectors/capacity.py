"""cpu_throttling and autoscaling_limit: the workload is short of CPU.

cpu_throttling: a large share of CFS periods throttled (metrics) under a CPU limit, with
latency rising. autoscaling_limit: a HorizontalPodAutoscaler sits at its maximum while a
metric is above target (ScalingLimited) and the workload is saturated. When both hold for
one workload the autoscaler is the limit that matters (ranking.py).
"""

from __future__ import annotations

from engines.analyzer.candidates import Candidate, Clue, Followup
from engines.analyzer.detectors._common import AUTOSCALERS, DESCRIBE, SIGNALS, pod_workload
from engines.analyzer.facts import Facts, Ref
from engines.analyzer.scope import Scope


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    return _throttling(facts) + _autoscaling(facts)


def _cpu_limit(facts: Facts, ref: Ref) -> tuple[str, Clue | None]:
    for pod in facts.pods.values():
        if pod_workload(facts, pod) != ref:
            continue
        for container in pod.containers:
            if limit := container.limits.get("cpu"):
                return limit, Clue(0.1, f"CPU limit {limit}",
                                   (f"limits: … cpu: {limit}", f"limits: … cpu: '{limit}'"),
                                   pod.described, (DESCRIBE,), "cpu-limit")
    return "", None


def _throttling(facts: Facts) -> list[Candidate]:
    found = []
    for ref, signals in facts.signals.items():
        cpu = signals.get("cpu")
        ratio = float(cpu.get("throttled_ratio") or 0.0)
        peak = float(cpu.get("throttled_ratio_peak_5_steps") or 0.0)
        if not (cpu.get("abnormal") and (ratio >= 0.2 or peak >= 0.4)):
            continue
        entry = Candidate("cpu_throttling", ref)
        entry.clues.append(Clue(0.45 if ratio >= 0.25 or peak >= 0.5 else 0.3,
                                str(cpu.get("why")),
                                ("CPU periods throttled", "throttled_ratio"), signals.source,
                                (SIGNALS,), "throttled"))
        latency = signals.get("latency")
        if latency.get("abnormal"):
            entry.clues.append(Clue(0.3, str(latency.get("why")), ("p99 rose",), signals.source,
                                    (SIGNALS,), "latency"))
        if "restarts" in signals.abnormal or "memory" in signals.abnormal:
            entry.demote(0.6, "it also restarts or runs out of memory")
        limit, clue = _cpu_limit(facts, ref)
        if clue is not None:
            entry.clues.append(clue)
        entry.fix = (f"Raise (or remove) the CPU limit of {ref.kind} {ref.namespace}/{ref.name}"
                     + (f" (now {limit})" if limit else "")
                     + " so it is not throttled under load, or add replicas to spread the load.")
        entry.followups.append(Followup(DESCRIBE, {"namespace": ref.namespace, "pod": ref.name},
                                        f"read {ref.name}'s CPU limit"))
        entry.followups.append(Followup(AUTOSCALERS, {"namespace": ref.namespace},
                                        f"see whether an autoscaler could add {ref.name} pods"))
        found.append(entry)
    return found


def _autoscaling(facts: Facts) -> list[Candidate]:
    found = []
    for (namespace, name), hpa in facts.autoscalers.items():
        if not hpa.at_max or hpa.target is None:
            continue
        target = next((r for r in facts.workloads if r.namespace == namespace
                       and r.name == hpa.target.name), hpa.target)
        entry = Candidate("autoscaling_limit", target)
        limited = [p for p in hpa.problems if "ScalingLimited" in p or "TooManyReplicas" in p]
        weight = 0.55 if limited else 0.2
        entry.clues.append(Clue(weight, f"HorizontalPodAutoscaler {name} is at its maximum of "
                                f"{hpa.maximum} replicas" + (f": {limited[0][:80]}" if limited
                                                              else ""),
                                (*tuple(p[:60] for p in limited), f"max: {hpa.maximum}"),
                                hpa.source, (AUTOSCALERS,), "hpa-max"))
        above = [p for p in hpa.problems if "above target" in p]
        if above:
            entry.clues.append(Clue(0.3, above[0][:100], (above[0][:50],), hpa.source,
                                    (AUTOSCALERS,), "hpa-above"))
        if hpa.desired > (hpa.maximum or 0):
            entry.clues.append(Clue(0.15, f"it wants {hpa.desired} replicas",
                                    (f"desired: {hpa.desired}",), hpa.source, (AUTOSCALERS,),
                                    "hpa-desired"))
        signals = facts.signals_of(target)
        if signals is not None:
            for key in ("latency", "requests", "cpu"):
                signal = signals.get(key)
                if signal.get("abnormal"):
                    entry.clues.append(Clue(0.2, str(signal.get("why")),
                                            ("p99 rose", "5xx ratio rose", "CPU"),
                                            signals.source, (SIGNALS,), f"saturated-{key}"))
        entry.fix = (f"Raise maxReplicas of HorizontalPodAutoscaler {namespace}/{name} (now "
                     f"{hpa.maximum}) and make sure the cluster has room for the extra pods, or "
                     f"make {target.name} cheaper per request.")
        entry.followups.append(Followup(SIGNALS, {"namespace": target.namespace,
                                                  "workload": target.name},
                                        f"see how saturated {target.name} is"))
        found.append(entry)
    return found
