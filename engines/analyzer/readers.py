"""Read each tool's structured result into facts (see facts.py for the shapes).

One reader per tool name. A reader never raises on an unexpected shape: a tool that
changes its output loses the analyzer a fact, not an investigation. Unknown tools are
ignored, so a new tool costs nothing until a reader is written for it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from datetime import datetime
from typing import Any

from engines.analyzer import facts as shapes
from engines.analyzer.detectors import _common as t
from engines.analyzer.facts import (
    Facts,
    Ref,
    as_dict,
    as_dicts,
    as_int,
    as_strs,
    parse_stamp,
    ref_of,
)
from engines.analyzer.transcript import Observation

_FRACTION = re.compile(r"(\d+)\s*/\s*(\d+)")
_READY_OF = re.compile(r"(\d+) ready of (\d+) matching")
_TALLY = re.compile(r"([A-Za-z]+) ×(\d+)")
_ROUTE = re.compile(r"^([^/\s*][^/\s]*)/\S*\s*→\s*([a-z0-9][-a-z0-9.]*):")


def _number(value: Any) -> float | None:
    """A number the tool gave as a number; None when it gave none."""
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) \
        else None


def _fraction(value: Any) -> tuple[int | None, int | None]:
    match = _FRACTION.search(str(value or ""))
    return (int(match.group(1)), int(match.group(2))) if match else (None, None)


def _counts(value: Any) -> dict[str, int]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): as_int(v) for k, v in value.items() if k != "omitted"}


def read_workloads(obs: Observation, facts: Facts) -> None:
    data = obs.data
    default_ns = data.get("namespace") if data.get("namespace") != "all" else ""
    for row in as_dicts(data.get("workloads")):
        ns = str(row.get("namespace") or default_ns or "")
        ref = Ref(str(row.get("kind", "")), ns, str(row.get("name", "")))
        ready, desired = _fraction(row.get("ready") or row.get("completed"))
        pods = as_dict(row.get("pods"))
        facts.workloads[ref] = shapes.Workload(
            ref=ref, ready=ready, desired=desired, images=as_strs(row.get("images")),
            problems=as_strs(row.get("problems")), restarts=as_int(pods.get("restarts")),
            exit_reasons=_counts(pods.get("last_exit_reasons")),
            unhealthy_pods=as_int(pods.get("unhealthy")), pod_total=as_int(pods.get("total")),
            statuses=_counts(pods.get("statuses")), age=str(row.get("age") or ""),
            age_seconds=None if (age := _number(row.get("age_seconds"))) is None else int(age),
            source=obs)
        facts.namespaces_seen.add(ns)


def read_pods(obs: Observation, facts: Facts) -> None:
    data = obs.data
    default_ns = data.get("namespace") if data.get("namespace") != "all" else ""
    for row in as_dicts(data.get("pods")):
        ns = str(row.get("namespace") or default_ns or obs.arguments.get("namespace") or "")
        name = str(row.get("name"))
        pod = facts.pods.setdefault((ns, name), shapes.Pod(ns, name))
        pod.status = str(row.get("status") or "")
        pod.ready = str(row.get("ready") or "")
        pod.restarts = as_int(row.get("restarts"))
        pod.last_exit = str(row.get("last_exit") or "")
        pod.node = str(row.get("node") or obs.arguments.get("node") or pod.node)
        pod.owner = ref_of(row.get("owner"), ns) or pod.owner
        pod.message = str(row.get("message") or "")
        pod.ip = str(row.get("ip") or pod.ip)
        pod.source = obs


def _container(row: Mapping[str, Any], *, init: bool) -> shapes.Container:
    state, last = as_dict(row.get("state")), as_dict(row.get("last_state"))
    probes = {k.removesuffix("_probe"): str(v) for k, v in row.items() if k.endswith("_probe")}
    exit_code = last.get("exit_code")
    return shapes.Container(
        name=str(row.get("name") or ""), image=str(row.get("image") or ""),
        limits={str(k): str(v) for k, v in as_dict(row.get("limits")).items()},
        requests={str(k): str(v) for k, v in as_dict(row.get("requests")).items()},
        probes=probes, ready=row.get("ready") if isinstance(row.get("ready"), bool) else None,
        restarts=as_int(row.get("restarts")), waiting=str(state.get("waiting") or ""),
        waiting_message=str(state.get("message") or ""),
        terminated=str(state.get("terminated") or ""),
        running_since=parse_stamp(state.get("running")),
        last_reason=str(last.get("terminated") or ""),
        last_exit=as_int(exit_code) if exit_code is not None else None,
        last_started=parse_stamp(last.get("started")),
        last_finished=parse_stamp(last.get("finished")),
        last_message=str(last.get("message") or ""), init=init, ports=as_strs(row.get("ports")),
        env=tuple(f"{e.get('name')}={e.get('value')}" for e in as_dicts(row.get("env"))
                  if e.get("value")))


def _events(rows: Any, obs: Observation, namespace: str) -> list[shapes.Event]:
    events = []
    for row in as_dicts(rows):
        kind, _, name = str(row.get("object") or "").partition("/")
        events.append(shapes.Event(
            namespace=str(row.get("namespace") or namespace), type=str(row.get("type") or ""),
            reason=str(row.get("reason") or ""), kind=kind, name=name,
            count=as_int(row.get("count"), 1), last=parse_stamp(row.get("last_seen")),
            first=parse_stamp(row.get("first_seen")) or parse_stamp(row.get("last_seen")),
            message=str(row.get("message") or ""), source=obs))
    return events


def _normal_events(value: Any, obs: Observation, namespace: str, pod: str) -> list[shapes.Event]:
    """ "Pulled ×10, Killing ×10; last 2m ago": Normal events only tallied by reason."""
    if not isinstance(value, str):
        return []
    return [shapes.Event(namespace, "Normal", reason, "Pod", pod, int(count), None, None, "",
                         obs) for reason, count in _TALLY.findall(value)]


def read_describe(obs: Observation, facts: Facts) -> None:
    data = obs.data
    ns = str(data.get("namespace") or obs.arguments.get("namespace") or "")
    name = str(data.get("name") or "")
    pod = facts.pods.setdefault((ns, name), shapes.Pod(ns, name))
    pod.status = str(data.get("status") or pod.status)
    pod.ready = str(data.get("ready") or pod.ready)
    pod.restarts = as_int(data.get("restarts"), pod.restarts)
    pod.node = str(data.get("node") or pod.node)
    pod.owner = ref_of(data.get("owner"), ns) or pod.owner
    pod.failing_conditions = as_strs(data.get("failing_conditions"))
    pod.message = str(data.get("reason") or pod.message)
    pod.containers = [_container(c, init=False) for c in as_dicts(data.get("containers"))]
    pod.containers += [_container(c, init=True) for c in as_dicts(data.get("init_containers"))]
    pod.events = _events(data.get("events"), obs, ns) + _normal_events(
        data.get("normal_events"), obs, ns, name)
    pod.described = obs
    _add_events(facts, pod.events)


def _add_events(facts: Facts, events: Iterable[shapes.Event]) -> None:
    known = {(e.namespace, e.kind, e.name, e.reason) for e in facts.events}
    for event in events:
        if (event.namespace, event.kind, event.name, event.reason) not in known:
            facts.events.append(event)


def read_events(obs: Observation, facts: Facts) -> None:
    ns = obs.data.get("namespace")
    _add_events(facts, _events(obs.data.get("events"), obs, "" if ns == "all" else str(ns)))


def read_nodes(obs: Observation, facts: Facts) -> None:
    for row in as_dicts(obs.data.get("nodes")):
        name = str(row.get("name") or "")
        facts.nodes[name] = shapes.Node(name=name, ready=str(row.get("ready") or "Unknown"),
                                        problems=as_strs(row.get("problems")),
                                        taints=as_strs(row.get("taints")), source=obs)
        _add_events(facts, _events(row.get("warnings"), obs, ""))


def read_rollout(obs: Observation, facts: Facts) -> None:
    data = obs.data
    words = str(data.get("workload") or "").split()
    if len(words) != 2 or "/" not in words[1]:
        return
    ns, _, name = words[1].partition("/")
    ref = Ref(words[0], ns, name)
    revisions = []
    rows = as_dicts(data.get("revisions"))
    for index, row in enumerate(rows):
        ready, desired = _fraction(row.get("pods"))
        label = str(row.get("revision") or "")
        hashed = ref.kind != "Deployment"  # a StatefulSet's or DaemonSet's revision hash
        revisions.append(shapes.Revision(
            number=len(rows) - index if hashed else as_int(label),
            current=bool(row.get("current")),
            created=parse_stamp(row.get("created") or row.get("first_pod_created")),
            images=as_strs(row.get("images")), ready=ready, desired=desired,
            restarts=as_int(row.get("restarts")),
            exit_reasons=as_strs(row.get("last_exit_reasons")),
            unhealthy=as_int(row.get("unhealthy_pods")), hash=label if hashed else ""))
    replaced = as_dict(data.get("pods_replaced_by_controller"))
    facts.rollouts[ref] = shapes.Rollout(
        ref, revisions, as_strs(data.get("changes_from_previous")), obs,
        workload_created=parse_stamp(data.get("created")) if ref.kind != "Deployment" else None,
        replaced=as_int(replaced.get("deleted")))


def read_services(obs: Observation, facts: Facts) -> None:
    for row in as_dicts(obs.data.get("services")):
        ns = str(row.get("namespace") or obs.arguments.get("namespace") or "")
        match = _READY_OF.search(str(row.get("pods") or ""))
        endpoints = as_dict(row.get("endpoints"))
        facts.services[(ns, str(row.get("name")))] = shapes.Service(
            namespace=ns, name=str(row.get("name")), selector=str(row.get("selector") or ""),
            ready_pods=int(match.group(1)) if match else None,
            endpoints_ready=as_int(endpoints.get("ready")) if endpoints else None,
            problems=as_strs(row.get("problems")), ports=as_strs(row.get("ports")),
            cluster_ip=str(row.get("cluster_ip") or ""),
            external_name=str(row.get("external_name") or ""), source=obs)


def read_policies(obs: Observation, facts: Facts) -> None:
    for row in as_dicts(obs.data.get("policies")):
        ns = str(row.get("namespace") or obs.arguments.get("namespace") or "")
        facts.policies[(ns, str(row.get("name")))] = shapes.Policy(
            namespace=ns, name=str(row.get("name")), applies_to=str(row.get("applies_to") or ""),
            types=as_strs(row.get("types")), workloads=as_strs(row.get("selected_workloads")),
            ingress=as_strs(row.get("ingress")), egress=as_strs(row.get("egress")),
            created=parse_stamp(row.get("created")), changed=parse_stamp(row.get("changed")),
            source=obs)


def read_ingresses(obs: Observation, facts: Facts) -> None:
    """Which backend Service serves each host ("learn.example.org/ → web:80")."""
    facts.ingresses_read = True
    for row in as_dicts(obs.data.get("ingresses")):
        ns = str(row.get("namespace") or obs.arguments.get("namespace") or "")
        for route in as_strs(row.get("routes")):
            if (match := _ROUTE.match(route)) and ns:
                facts.ingress_hosts.setdefault(match.group(1).lower(), (ns, match.group(2)))


def read_autoscalers(obs: Observation, facts: Facts) -> None:
    for row in as_dicts(obs.data.get("autoscalers")):
        ns = str(row.get("namespace") or obs.arguments.get("namespace") or "")
        maximum = row.get("max")
        facts.autoscalers[(ns, str(row.get("name")))] = shapes.Autoscaler(
            namespace=ns, name=str(row.get("name")), target=ref_of(row.get("target"), ns),
            maximum=as_int(maximum) if maximum else None, desired=as_int(row.get("desired")),
            at_max=bool(row.get("at_max")), metrics=as_strs(row.get("metrics")),
            problems=as_strs(row.get("problems")), source=obs,
            scale_up=str(row.get("scale_up") or ""))


def read_quotas(obs: Observation, facts: Facts) -> None:
    data = obs.data
    for row in as_dicts(data.get("quotas")):
        ns = str(row.get("namespace") or obs.arguments.get("namespace") or "")
        for item in as_dicts(row.get("resources")):
            ratio = item.get("used_ratio")
            facts.quotas.append(shapes.QuotaItem(
                namespace=ns, quota=str(row.get("name")), resource=str(item.get("resource")),
                used=str(item.get("used")), hard=str(item.get("hard")),
                ratio=float(ratio) if isinstance(ratio, int | float) else None, source=obs))
    _add_events(facts, _events(data.get("refusals"), obs,
                               str(obs.arguments.get("namespace") or "")))


def read_log_patterns(obs: Observation, facts: Facts) -> None:
    args = obs.arguments
    for row in as_dicts(obs.data.get("patterns")):
        facts.patterns.append(shapes.LogPattern(
            template=str(row.get("template") or row.get("example") or ""),
            example=str(row.get("example") or ""), count=as_int(row.get("count"), 1),
            first=parse_stamp(row.get("first_seen")), last=parse_stamp(row.get("last_seen")),
            services=_counts(row.get("services")), pods=_counts(row.get("pods")),
            levels=_counts(row.get("levels")), namespace=str(args.get("namespace") or ""),
            service=str(args.get("service") or ""), source=obs))


def read_log_search(obs: Observation, facts: Facts) -> None:
    data, args = obs.data, obs.arguments
    shared = as_dict(data.get("shown_lines_share"))
    for line in as_strs(data.get("lines")):
        stamp, _, message = line.partition(" | ")
        facts.patterns.append(shapes.LogPattern(
            template=message, example=message, count=1, first=parse_stamp(stamp),
            last=parse_stamp(stamp), namespace=str(args.get("namespace") or ""),
            service=str(args.get("service") or shared.get("service") or ""),
            pod=str(args.get("pod") or shared.get("pod") or ""),
            levels={str(shared.get("level")): 1} if shared.get("level") else {}, source=obs))


def read_pod_logs(obs: Observation, facts: Facts) -> None:
    data, args = obs.data, obs.arguments
    ns, pod = str(args.get("namespace") or ""), str(data.get("pod") or args.get("pod") or "")
    # the current instance of a container that has ended speaks its last words too
    ended = str(data.get("container_state") or "")
    previous = data.get("instance") == "previous" or (
        ended.startswith("terminated") and "Completed" not in ended)
    lines: list[tuple[str, int, str]] = []
    for role in ("exception", "first_error"):
        if data.get(role):
            lines.append((str(data[role]), 1, role))
    lines += [(str(p.get("example") or p.get("template") or ""), as_int(p.get("count"), 1), "")
              for p in as_dicts(data.get("patterns"))]
    lines += [(line, 1, "") for line in as_strs(data.get("last_lines"))]
    for text, count, role in lines:
        facts.patterns.append(shapes.LogPattern(template=text, example=text, count=count,
                                                namespace=ns, pod=pod, previous=previous, role=role,
                                                source=obs))


def read_signals(obs: Observation, facts: Facts) -> None:
    data = obs.data
    ns, _, name = str(data.get("workload") or "").partition("/")
    signals = as_dict(data.get("signals"))
    ref = facts.workload_of_pod(ns, name) or Ref("Deployment", ns, name)
    ref = next((r for r in facts.workloads if r.namespace == ns and r.name == name), ref)
    facts.signals[ref] = shapes.Signals(
        ns, name, as_strs(data.get("abnormal")),
        {k: v for k, v in signals.items() if isinstance(v, dict)}, obs)


def read_metric_query(obs: Observation, facts: Facts) -> None:
    data = obs.data
    metric = str(data.get("metric") or obs.arguments.get("metric") or "")
    common = {str(k): str(v) for k, v in as_dict(data.get("common_labels")).items()}
    rows = []
    for row in as_dicts(data.get("by_series")):
        labels = {str(k): str(v) for k, v in as_dict(row.get("labels")).items()}
        mean, top, last = (_number(row.get(k)) for k in ("mean", "max", "last"))
        if mean is None or top is None or last is None:
            continue
        change = as_dict(row.get("change"))
        rows.append(shapes.MetricRow({**common, **labels}, mean, top, last,
                                     parse_stamp(change.get("at")), _number(change.get("before")),
                                     _number(change.get("after")), obs))
    if rows:
        facts.metric_rows[metric] = rows


def read_object(obs: Observation, facts: Facts) -> None:
    data, args = obs.data, obs.arguments
    meta = as_dict(data.get("metadata"))
    ref = Ref(str(data.get("kind") or args.get("kind") or ""),
              str(meta.get("namespace") or args.get("namespace") or ""),
              str(meta.get("name") or args.get("name") or ""))
    facts.objects[ref] = shapes.ObjectRead(ref, parse_stamp(meta.get("creationTimestamp")), obs)


READERS: dict[str, Callable[[Observation, Facts], None]] = {
    t.WORKLOADS: read_workloads, t.PODS: read_pods, t.DESCRIBE: read_describe,
    t.EVENTS: read_events, t.NODES: read_nodes, t.ROLLOUT: read_rollout,
    t.SERVICES: read_services, t.POLICIES: read_policies, t.AUTOSCALERS: read_autoscalers,
    t.INGRESSES: read_ingresses, t.QUOTAS: read_quotas, t.LOG_PATTERNS: read_log_patterns,
    t.LOG_SEARCH: read_log_search, t.POD_LOGS: read_pod_logs, t.SIGNALS: read_signals,
    t.OBJECT: read_object, t.METRICS: read_metric_query,
}
"""The reader of each tool's result, by the name the tool is registered under."""


def build_facts(observations: Iterable[Observation], now: datetime,
                excluded: frozenset[str] = frozenset()) -> Facts:
    """Facts from every successful observation, oldest first so newer readings win.

    Objects of an excluded namespace are dropped even if they were read before the
    constraint arrived: the analyzer must not blame them.
    """
    facts = Facts(now=now)
    listed = list(observations)
    facts.observations = tuple(listed)
    for obs in listed:
        reader = READERS.get(obs.tool)
        if reader is None or not obs.ok or not isinstance(obs.data, dict):
            continue
        try:
            reader(obs, facts)
        except (AttributeError, TypeError, ValueError, KeyError):
            continue  # a shape this reader does not know: lose the fact, not the run
    if excluded:
        facts.drop_namespaces(excluded)
    return facts
