"""A workload's health signals computed from raw series: memory, CPU, restarts, requests,
latency, a consumer's backlog. Each returns compact data with `abnormal` and a `why` a
human would write.

Thresholds are generic rules of thumb (90% of a memory limit, 25% of CPU periods
throttled, a 5% error ratio, a p99 that grew by half), never tuned to a scenario. Input
series come from range queries, so the series of one metric share their timestamps and
per-step increments can be summed across pods.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from tools._k8s_common import fmt_bytes, fmt_cpu
from tools._series import (
    change_point,
    histogram_quantile,
    increase,
    increases,
    points,
    sharp_drops,
    slope_per_hour,
    sum_by_time,
)
from tools._toolkit import iso, round_to
from tools.sources.base import Series

Key = tuple[str, str]  # (pod, container)
QUANTILES = (0.5, 0.95, 0.99)


def key_of(series: Series) -> Key:
    return series.labels.get("pod", ""), series.labels.get("container", "")


def last_values(series: Iterable[Series]) -> dict[Key, float]:
    """The newest value of each (pod, container) series, e.g. a limit."""
    return {key_of(s): s.samples[-1].value for s in series if s.samples}


def memory(usage: Sequence[Series], limits: dict[Key, float],
           fallback_limits: dict[str, float]) -> dict[str, Any]:
    """Working set against the limit, per container name (worst pod wins)."""
    by_container: dict[str, list[Series]] = {}
    for series in usage:
        by_container.setdefault(key_of(series)[1], []).append(series)
    rows, abnormal, reasons = [], False, []
    for container, group in sorted(by_container.items()):
        worst: dict[str, Any] | None = None
        drops = 0
        slopes = []
        for series in group:
            values = [s.value for s in series.samples]
            limit = limits.get(key_of(series)) or fallback_limits.get(container)
            peak = max(values)
            ratio = peak / limit if limit else None
            drops += sharp_drops(values, limit) if limit else 0
            if len(values) >= 10:
                slopes.append(slope_per_hour(points(series.samples)))
            if worst is None or (ratio or 0, peak) > (worst["ratio"] or 0, worst["peak"]):
                worst = {"pod": key_of(series)[0], "peak": peak, "limit": limit, "ratio": ratio,
                         "latest": values[-1]}
        assert worst is not None
        row: dict[str, Any] = {"container": container, "pods": len(group),
                               "peak": fmt_bytes(worst["peak"]),
                               "limit": fmt_bytes(worst["limit"]) if worst["limit"] else "none"}
        if worst["ratio"] is not None:
            row["peak_ratio"] = round(worst["ratio"], 2)
        row["worst_pod"] = worst["pod"]
        if slopes:
            slope = sorted(slopes)[len(slopes) // 2]
            row["trend_per_hour"] = ("+" if slope >= 0 else "-") + str(fmt_bytes(abs(slope)))
        if drops:
            row["drops_near_limit"] = drops
        why = []
        if worst["ratio"] is not None and worst["ratio"] >= 0.9:
            why.append(f"{container} peaked at {row['peak']}, {worst['ratio']:.0%} of its "
                       f"{row['limit']} limit")
        if drops:
            why.append(f"{drops} sharp drops right after nearing the limit (typical of OOM kills)")
        if why:
            abnormal = True
            reasons += why
        rows.append(row)
    return {"abnormal": abnormal, "why": "; ".join(reasons) or "memory stays below its limits",
            "containers": rows[:5]}


def cpu(throttled: Sequence[Series], periods: Sequence[Series], usage: Sequence[Series],
        limits: dict[Key, float], step: float,
        fallback_limits: dict[str, float] | None = None) -> dict[str, Any]:
    """CFS throttling ratio (throttled / total periods) and CPU use against the limit."""
    result: dict[str, Any] = {}
    why = []
    total_periods = sum(increase(s.samples) for s in periods)
    if total_periods > 0:
        ratio = sum(increase(s.samples) for s in throttled) / total_periods
        per_step_t = dict(sum_by_time(increases(s.samples) for s in throttled))
        per_step_p = sum_by_time(increases(s.samples) for s in periods)
        ratios = [per_step_t.get(at, 0.0) / p for at, p in per_step_p if p > 0]
        peak = max(_smooth(ratios, 5), default=0.0)
        result |= {"throttled_ratio": round(ratio, 3), "throttled_ratio_peak_5_steps":
                   round(peak, 3)}
        moments = [at for at, p in per_step_p if p > 0]
        shift = change_point(ratios)
        if shift is not None and shift.after_median >= 0.25 > shift.before_median:
            result["throttled_change"] = {"at": iso(moments[shift.index]),
                                          "ratio_before": round(shift.before_median, 3),
                                          "ratio_after": round(shift.after_median, 3)}
            why.append(f"CPU throttling rose from {shift.before_median:.0%} to "
                       f"{shift.after_median:.0%} of periods at {iso(moments[shift.index])}: "
                       "the CPU limit slows the container")
        elif ratio >= 0.25 or peak >= 0.5:
            why.append(f"{ratio:.0%} of CPU periods throttled (peak {peak:.0%}): the CPU limit "
                       "slows the container")
    if usage and step > 0:
        peaks: dict[Key, float] = {}
        for series in usage:
            rates = [d / step for _, d in increases(series.samples)]
            if rates:
                peaks[key_of(series)] = max(_smooth(rates, 3))
        if peaks:
            limits = {k: limits.get(k) or (fallback_limits or {}).get(k[1], 0.0) for k in peaks}
            key = max(peaks, key=lambda k: (peaks[k] / limits[k] if limits.get(k) else 0.0,
                                            peaks[k]))
            result["usage_peak_cores"] = fmt_cpu(peaks[key])
            if limits.get(key):
                share = peaks[key] / limits[key]
                result |= {"limit_cores": fmt_cpu(limits[key]), "usage_peak_ratio": round(share, 2)}
                if share >= 0.9:
                    why.append(f"CPU use peaked at {share:.0%} of the limit in pod {key[0]}")
        if (jump := usage_jump(usage, step)) is not None:
            result["usage_per_pod_change"] = jump
            why.append(f"CPU use per pod rose from {_cores(jump['before_cores'])} to "
                       f"{_cores(jump['after_cores'])} at {jump['at']}")
    if not result:
        return {"abnormal": False, "why": "no CPU data"}
    return {"abnormal": bool(why), "why": "; ".join(why) or "no significant CPU throttling",
            **result}


JUMP_FACTOR = 3.0  # CPU use per pod that at least triples...
JUMP_CORES = 0.25  # ...by at least a quarter of a core: a new appetite, not load noise


def usage_jump(usage: Sequence[Series], step: float) -> dict[str, Any] | None:
    """When the workload's CPU use per pod rose to a new level and stayed there: the mean
    over its pods at each step, so pods replaced by a rollout compare old with new. A
    workload that suddenly eats several times its usual CPU starves its node's neighbours,
    with or without a limit of its own."""
    totals: dict[str, dict[datetime, float]] = {}  # pod → step → cores (its containers')
    for series in usage:
        pod = totals.setdefault(key_of(series)[0], {})
        for at, delta in increases(series.samples):
            pod[at] = pod.get(at, 0.0) + delta / step
    moments = sorted({at for rows in totals.values() for at in rows})
    means = []
    for at in moments:
        values = [rows[at] for rows in totals.values() if at in rows]
        means.append(sum(values) / len(values))
    change = change_point(means)
    if change is None:
        return None
    before, after = change.before_median, change.after_median
    if after < JUMP_FACTOR * max(before, 1e-3) or after - before < JUMP_CORES:
        return None
    return {"at": iso(moments[change.index]), "before_cores": fmt_cpu(round(before, 2)),
            "after_cores": fmt_cpu(round(after, 2))}


def _cores(shown: str | None) -> str:
    """'60m' stays as is; '2.3' reads '2.3 cores' in a sentence."""
    text = shown or "0"
    return text if text.endswith("m") else f"{text} core" + ("" if text == "1" else "s")


def _smooth(values: Sequence[float], width: int) -> list[float]:
    """Moving average; one noisy step must not look like a peak."""
    if len(values) <= width:
        return [sum(values) / len(values)] if values else []
    return [sum(values[i:i + width]) / width for i in range(len(values) - width + 1)]


def restarts(counters: Sequence[Series], reasons: Sequence[Series]) -> dict[str, Any]:
    """Container restarts in the window, by pod, with the last termination reasons."""
    per_pod: Counter[str] = Counter()
    for series in counters:
        per_pod[key_of(series)[0]] += round(increase(series.samples))
    total = sum(per_pod.values())
    last = Counter(s.labels.get("reason", "?") for s in reasons
                   if s.samples and s.samples[-1].value >= 1)
    result: dict[str, Any] = {"abnormal": total > 0, "restarts": total}
    if total:
        result["by_pod"] = {pod: n for pod, n in per_pod.most_common(3) if n}
    if last:
        result["last_termination_reasons"] = dict(last.most_common(3))
    reason_text = f" (last terminations: {', '.join(last)})" if last else ""
    result["why"] = (f"{total} container restarts in the window{reason_text}" if total
                     else "no restart in the window")
    return result


def _status_class(labels: dict[str, str] | Any) -> str:
    for name in ("code", "status", "status_code", "http_status", "response_code"):
        if value := labels.get(name):
            text = str(value)
            return f"{text[0]}xx" if text[:1].isdigit() else text
    return "all"


def requests(series: Sequence[Series], metric: str, step: float) -> dict[str, Any]:
    """Request rate by status class, 5xx ratio, and its change point."""
    by_class: dict[str, list[tuple[datetime, float]]] = {}
    for cls in sorted({_status_class(s.labels) for s in series}):
        by_class[cls] = sum_by_time(increases(s.samples) for s in series
                                    if _status_class(s.labels) == cls)
    total_steps = sum_by_time(by_class.values())
    total = sum(v for _, v in total_steps)
    if total <= 0:
        return {"abnormal": False, "metric": metric, "why": "no requests in the window"}
    seconds = max(step * len(total_steps), step)
    errors = dict(by_class.get("5xx", []))
    result: dict[str, Any] = {
        "metric": metric,
        "rate_per_s": round_to(total / seconds),
        "share_by_class": {c: round(sum(v for _, v in rows) / total, 3)
                           for c, rows in by_class.items()},
        "error_ratio_5xx": round(sum(errors.values()) / total, 4),
    }
    ratios = [(at, errors.get(at, 0.0) / v) for at, v in total_steps if v > 0]
    change = change_point([r for _, r in ratios])
    after = result["error_ratio_5xx"]
    before = None
    if change is not None:
        split = ratios[change.index][0]
        def ratio_of(rows: list[tuple[datetime, float]]) -> float:
            volume = sum(v for _, v in rows)
            return sum(errors.get(at, 0.0) for at, _ in rows) / volume if volume else 0.0
        early = [(at, v) for at, v in total_steps if at < split]
        late = [(at, v) for at, v in total_steps if at >= split]
        before, after = ratio_of(early), ratio_of(late)
        result["change"] = {
            "at": iso(split),
            "error_ratio_before": round(before, 4), "error_ratio_after": round(after, 4),
            "rate_before_per_s": round_to(sum(v for _, v in early) / max(step * len(early), step)),
            "rate_after_per_s": round_to(sum(v for _, v in late) / max(step * len(late), step)),
        }
    jumped = before is not None and after >= 0.01 and after >= 3 * max(before, 1e-9)
    abnormal = after >= 0.05 or jumped
    if abnormal and before is not None:
        why = f"5xx ratio rose from {before:.1%} to {after:.1%} at {result['change']['at']}"
    elif abnormal:
        why = f"{after:.1%} of requests fail with 5xx"
    else:
        why = f"5xx ratio {result['error_ratio_5xx']:.2%}, no significant rise"
    if "change" in result:
        early, late = result["change"]["rate_before_per_s"], result["change"]["rate_after_per_s"]
        if early and (late / early >= 2 or late / early <= 0.5):
            why += f"; request rate went from {early:g}/s to {late:g}/s"
    return {"abnormal": abnormal, "why": why, **result}


def latency(buckets: Sequence[Series], metric: str) -> dict[str, Any]:
    """p50/p95/p99 from histogram buckets (histogram_quantile over summed increments),
    before and after the change point of the p99."""
    per_le: dict[float, dict[datetime, float]] = {}
    for series in buckets:
        try:
            bound = float(series.labels.get("le", ""))
        except ValueError:
            continue
        row = per_le.setdefault(bound, {})
        for at, delta in increases(series.samples):
            row[at] = row.get(at, 0.0) + delta
    steps = sorted({at for row in per_le.values() for at in row})
    if not steps:
        return {"abnormal": False, "metric": metric, "why": "no observations in the window"}

    def quantiles(chosen: Sequence[datetime]) -> dict[str, float | None]:
        sums = [(le, sum(row.get(at, 0.0) for at in chosen)) for le, row in per_le.items()]
        return {f"p{round(q * 100)}": _maybe(histogram_quantile(q, sums)) for q in QUANTILES}

    width = max(1, len(steps) // 30)
    windows = [steps[i:i + width] for i in range(0, len(steps), width)]
    p99 = [(w, quantiles(w)["p99"]) for w in windows]
    usable = [(w, v) for w, v in p99 if v is not None]
    unit = "s" if "seconds" in metric else ("ms" if "milliseconds" in metric else "")
    result: dict[str, Any] = {"metric": metric, "unit": unit or "as exported",
                              **quantiles(steps)}
    change = change_point([v for _, v in usable]) if len(usable) >= 6 else None
    why = "latency steady"
    abnormal = False
    if change is not None:
        split = usable[change.index][0][0]
        before = quantiles([at for at in steps if at < split])
        after = quantiles([at for at in steps if at >= split])
        result["change"] = {"at": iso(split), "before": before, "after": after}
        b99, a99 = before["p99"], after["p99"]
        floor = {"s": 0.05, "ms": 50.0}.get(unit, 0.0)
        if b99 is not None and a99 is not None and a99 >= 1.5 * b99 and a99 - b99 >= floor:
            abnormal = True
            why = f"p99 rose from {b99:g}{unit} to {a99:g}{unit} at {iso(split)}"
        elif b99 is not None and a99 is not None:
            why = f"p99 moved from {b99:g}{unit} to {a99:g}{unit} at {iso(split)}"
    return {"abnormal": abnormal, "why": why, **result}


def _maybe(value: float | None) -> float | None:
    return None if value is None else round_to(value)


BACKLOG_FACTOR = 3.0  # the lag at the end at least triples its early level...
BACKLOG_MESSAGES = 500.0  # ...by at least this many messages: a backlog, not jitter


def backlog(series: Sequence[Series], metric: str) -> dict[str, Any]:
    """A consumer group's lag summed over its partitions: whether it keeps growing (the
    consumer falls behind: slower, or fewer of it), from when, and from what to what."""
    total = sum_by_time(points(s.samples) for s in series)
    if len(total) < 6:
        return {"abnormal": False, "metric": metric, "why": "too few samples of the lag"}
    values = [v for _, v in total]
    quarter = sorted(values[: max(len(values) // 4, 1)])
    early, last = quarter[len(quarter) // 2], values[-1]
    result: dict[str, Any] = {"metric": metric, "early": round_to(early), "last": round_to(last),
                              "peak": round_to(max(values))}
    growing = last >= BACKLOG_FACTOR * max(early, 1.0) and last - early >= BACKLOG_MESSAGES
    if not growing:
        return {"abnormal": False, "why": f"consumer lag {last:g}, no lasting growth", **result}
    level = early * 1.1 + 1  # the last time it was still at its early level: growth began
    start = next((i + 1 for i in range(len(values) - 1, -1, -1) if values[i] <= level), 0)
    result["growing_since"] = iso(total[start][0])
    return {"abnormal": True, "why": f"consumer lag grew from {early:g} to {last:g} messages "
            f"since {result['growing_since']}", **result}
