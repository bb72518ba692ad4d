"""Reading Kubernetes objects the way `kubectl` summarises them.

Quantities, selectors, owners, pod and container status, events: the pieces every
Kubernetes tool shares. Everything works on the plain dicts a ClusterSource returns, so
the same code reads the sandbox and a live cluster.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterable, Mapping
from datetime import datetime, timedelta
from typing import Any

from engines.errors import ToolError, ToolRetryError
from tools._toolkit import ago, iso, shorten
from tools.context import ToolContext
from tools.scenarios import parse_time
from tools.sources.base import KubeObject

_SUFFIX = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
           "n": 1e-9, "u": 1e-6, "m": 1e-3, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12,
           "P": 1e15, "E": 1e18}
_QUANTITY = re.compile(r"^([+-]?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)([a-zA-Z]{0,2})$")
RECENT = timedelta(hours=1)  # a termination this recent makes a pod "flapping"
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob")


def quantity(value: Any) -> float | None:
    """A Kubernetes quantity ("256Mi", "500m", "2") as a number; None if unreadable."""
    if value is None:
        return None
    if isinstance(value, int | float):
        return float(value)
    match = _QUANTITY.match(str(value).strip())
    if not match or (match.group(2) and match.group(2) not in _SUFFIX):
        return None
    return float(match.group(1)) * _SUFFIX.get(match.group(2), 1)


def fmt_bytes(value: float | None) -> str | None:
    """Bytes in the binary units `kubectl` shows: 256Mi, 1.5Gi."""
    if value is None:
        return None
    for unit, size in (("Ti", 2**40), ("Gi", 2**30), ("Mi", 2**20), ("Ki", 2**10)):
        if abs(value) >= size:
            number = value / size
            if abs(number - round(number)) < 0.05:
                return f"{round(number)}{unit}"
            return f"{number:.1f}{unit}"
    return f"{value:.0f}"


def fmt_cpu(value: float | None) -> str | None:
    """Cores as Kubernetes writes them: 250m, 2, 1.5."""
    if value is None:
        return None
    value = round(value, 3)
    if value == 0:
        return "0"
    if value < 1:
        return f"{round(value * 1000)}m"
    return f"{value:g}"


def fmt_quantity(resource: str, value: float | None) -> str | None:
    """A number back in the natural unit of its resource (memory in Mi/Gi, cpu in cores)."""
    if value is None:
        return None
    if "memory" in resource or "storage" in resource:
        return fmt_bytes(value)
    if "cpu" in resource:
        return fmt_cpu(value)
    return f"{value:g}"


def parse_selector(text: str | None) -> dict[str, str] | None:
    """`app=checkout,tier=web` to a label map; only equality is supported."""
    if not text or not text.strip():
        return None
    labels: dict[str, str] = {}
    for part in text.split(","):
        key, sep, value = part.replace("==", "=").partition("=")
        if not sep or "!" in key or not key.strip():
            raise ToolRetryError(
                f"label selector {text!r}: write key=value pairs joined by commas (app=web)"
            )
        labels[key.strip()] = value.strip()
    return labels


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str]) -> bool:
    """A LabelSelector (matchLabels, matchExpressions) or a plain map against labels.

    An empty selector matches everything, as in NetworkPolicy podSelector `{}`.
    """
    if not selector:
        return True
    plain = {k: v for k, v in selector.items() if k not in ("matchLabels", "matchExpressions")}
    required = dict(selector.get("matchLabels") or {}) | plain
    if any(labels.get(k) != v for k, v in required.items()):
        return False
    for expression in selector.get("matchExpressions") or []:
        key, operator = expression.get("key", ""), expression.get("operator", "")
        values = expression.get("values") or []
        present = key in labels
        if operator == "In" and (not present or labels[key] not in values):
            return False
        if operator == "NotIn" and present and labels[key] in values:
            return False
        if operator == "Exists" and not present:
            return False
        if operator == "DoesNotExist" and present:
            return False
    return True


def selector_text(selector: Mapping[str, Any] | None) -> str:
    """A selector in kubectl's `-l` syntax, or "all pods" when empty."""
    if not selector:
        return "all pods"
    plain = {k: v for k, v in selector.items() if k not in ("matchLabels", "matchExpressions")}
    parts = [f"{k}={v}" for k, v in (dict(selector.get("matchLabels") or {}) | plain).items()]
    for expression in selector.get("matchExpressions") or []:
        values = ",".join(expression.get("values") or [])
        parts.append(f"{expression.get('key')} {expression.get('operator')} ({values})".strip())
    return ",".join(parts) or "all pods"


def meta(obj: KubeObject) -> dict[str, Any]:
    return obj.get("metadata") or {}


def name_of(obj: KubeObject) -> str:
    return str(meta(obj).get("name", ""))


def namespace_of(obj: KubeObject) -> str:
    return str(meta(obj).get("namespace", ""))


def when(stamp: str | None, now: datetime) -> str | None:
    """A time as "2026-11-30T09:58:00Z (2m ago)": exact for correlating, relative for reading."""
    if not stamp:
        return None
    try:
        moment = parse_time(stamp)
    except ValueError:
        return str(stamp)
    return f"{iso(moment)} ({ago(moment, now)} ago)"


def last_change(obj: KubeObject) -> tuple[str, str] | None:
    """(time, manager) of the latest write that its managedFields record after the object's
    creation (an edit, an apply, a sync), or None when it was not changed since."""
    created = str(meta(obj).get("creationTimestamp") or "")
    writes = [(str(f.get("time")), str(f.get("manager") or "?"))
              for f in meta(obj).get("managedFields") or []
              if isinstance(f, dict) and f.get("time") and f.get("operation") != "Create"]
    try:
        latest = max(writes, key=lambda w: parse_time(w[0])) if writes else None
        if latest is None or (created and parse_time(latest[0]) <= parse_time(created)):
            return None
    except ValueError:
        return None
    return latest


def visible(ctx: ToolContext, objects: Iterable[KubeObject]) -> list[KubeObject]:
    """Objects outside the namespaces a human excluded (cross-namespace calls)."""
    return [o for o in objects if ctx.allows_namespace(namespace_of(o))]


class Owners:
    """Which workload owns a pod: Pod → ReplicaSet → Deployment, Pod → Job → CronJob."""

    def __init__(self, replicasets: Iterable[KubeObject], jobs: Iterable[KubeObject] = ()) -> None:
        self._parents: dict[tuple[str, str, str], tuple[str, str]] = {}
        for default_kind, objects in (("ReplicaSet", replicasets), ("Job", jobs)):
            for obj in objects:
                owner = controller_of(obj)
                if owner:
                    kind = str(obj.get("kind") or default_kind)
                    self._parents[(namespace_of(obj), kind, name_of(obj))] = owner

    def chain(self, obj: KubeObject) -> list[tuple[str, str]]:
        """Owners from the nearest to the workload, e.g. [ReplicaSet x, Deployment y]."""
        found: list[tuple[str, str]] = []
        owner = controller_of(obj)
        while owner and len(found) < 4:
            found.append(owner)
            owner = self._parents.get((namespace_of(obj), owner[0], owner[1]))
        return found

    def workload(self, obj: KubeObject) -> tuple[str, str]:
        """The top owner (kind, name), or ("Pod", name) for a bare pod."""
        chain = self.chain(obj)
        return chain[-1] if chain else (str(obj.get("kind", "Pod")), name_of(obj))


def controller_of(obj: KubeObject) -> tuple[str, str] | None:
    references = meta(obj).get("ownerReferences") or []
    chosen = next((r for r in references if r.get("controller")), None) or (
        references[0] if references else None)
    return (str(chosen.get("kind", "")), str(chosen.get("name", ""))) if chosen else None


def container_statuses(pod: KubeObject, *, init: bool = False) -> list[dict[str, Any]]:
    """Status of the pod's containers, with its init containers first when `init`."""
    status = pod.get("status") or {}
    found = list(status.get("initContainerStatuses") or []) if init else []
    return found + list(status.get("containerStatuses") or [])


def pod_status(pod: KubeObject) -> str:
    """The STATUS column of `kubectl get pods`: CrashLoopBackOff, OOMKilled, Pending..."""
    status = pod.get("status") or {}
    reason = str(status.get("reason") or status.get("phase") or "Unknown")
    if meta(pod).get("deletionTimestamp"):
        return "Terminating"
    for init in status.get("initContainerStatuses") or []:
        state = init.get("state") or {}
        if (term := state.get("terminated")) and term.get("exitCode", 0) != 0:
            return f"Init:{term.get('reason') or 'ExitCode:' + str(term.get('exitCode'))}"
        if (wait := state.get("waiting")) and wait.get("reason") not in (None, "PodInitializing"):
            return f"Init:{wait.get('reason')}"
    for container in reversed(container_statuses(pod)):
        state = container.get("state") or {}
        if (wait := state.get("waiting")) and wait.get("reason"):
            reason = str(wait["reason"])
        elif (term := state.get("terminated")) is not None:
            reason = str(term.get("reason") or f"ExitCode:{term.get('exitCode')}")
    if reason == "Pending":
        scheduled = condition(pod, "PodScheduled")
        if scheduled and scheduled.get("status") == "False" and scheduled.get("reason"):
            return f"Pending:{scheduled['reason']}"
    return reason


def condition(obj: KubeObject, kind: str) -> dict[str, Any] | None:
    for item in (obj.get("status") or {}).get("conditions") or []:
        if item.get("type") == kind:
            return dict(item)
    return None


def last_termination(container: Mapping[str, Any]) -> dict[str, Any] | None:
    term = (container.get("lastState") or {}).get("terminated")
    if not term:
        term = (container.get("state") or {}).get("terminated")
    return dict(term) if term else None


def pod_health(pod: KubeObject, now: datetime) -> tuple[bool, str | None]:
    """(healthy, why not). Running pods that restarted within the hour are not healthy."""
    phase = (pod.get("status") or {}).get("phase")
    if phase == "Succeeded":
        return True, None
    status = pod_status(pod)
    if phase != "Running":
        return False, status
    statuses = container_statuses(pod)
    if status != "Running":
        return False, status
    if any(not c.get("ready") for c in statuses):
        return False, "not ready"
    for container in statuses:
        term = last_termination(container)
        finished = term.get("finishedAt") if term else None
        if term and finished and container.get("restartCount", 0) and (
            now - parse_time(finished) < RECENT
        ):
            return False, f"restarted {ago(finished, now)} ago ({term.get('reason')})"
    return True, None


def pod_row(pod: KubeObject, now: datetime, *, with_namespace: bool = False) -> dict[str, Any]:
    """One line of `kubectl get pods -o wide`, plus the last termination when there is one."""
    statuses = container_statuses(pod)
    specs = (pod.get("spec") or {}).get("containers") or []
    row: dict[str, Any] = {"name": name_of(pod)}
    if with_namespace:
        row["namespace"] = namespace_of(pod)
    row["status"] = pod_status(pod)
    row["ready"] = f"{sum(1 for c in statuses if c.get('ready'))}/{len(specs) or len(statuses)}"
    every = container_statuses(pod, init=True)
    row["restarts"] = sum(int(c.get("restartCount", 0)) for c in every)
    terminations = [t for c in every if (t := last_termination(c))]
    if terminations:
        latest = max(terminations, key=lambda t: str(t.get("finishedAt", "")))
        row["last_exit"] = termination_text(latest, now)
    if node := (pod.get("spec") or {}).get("nodeName"):
        row["node"] = node
    row["age"] = ago(meta(pod).get("creationTimestamp"), now)
    if row["status"].startswith("Pending"):
        scheduled = condition(pod, "PodScheduled")
        if scheduled and scheduled.get("message"):
            row["message"] = shorten(str(scheduled["message"]), 200)
    return row


def termination_text(term: Mapping[str, Any], now: datetime) -> str:
    """ "OOMKilled (exit 137) 2m ago"."""
    reason = term.get("reason") or "Terminated"
    finished = term.get("finishedAt")
    suffix = f" {ago(finished, now)} ago" if finished else ""
    return f"{reason} (exit {term.get('exitCode', '?')}){suffix}"


def resources(container: Mapping[str, Any]) -> dict[str, dict[str, str]]:
    spec = container.get("resources") or {}
    return {k: {r: str(v) for r, v in (spec.get(k) or {}).items()}
            for k in ("requests", "limits") if spec.get(k)}


def probe_text(probe: Mapping[str, Any] | None) -> str | None:
    """A probe as `kubectl describe` prints it: http-get :8080/healthz delay=10s ..."""
    if not probe:
        return None
    if http := probe.get("httpGet"):
        action = f"http-get {http.get('scheme', 'HTTP').lower()}://:{http.get('port')}" \
                 f"{http.get('path', '/')}"
    elif tcp := probe.get("tcpSocket"):
        action = f"tcp-socket :{tcp.get('port')}"
    elif grpc := probe.get("grpc"):
        action = f"grpc :{grpc.get('port')}"
    elif command := probe.get("exec"):
        action = "exec " + shorten(" ".join(map(str, command.get("command") or [])), 80)
    else:
        action = "?"
    timing = (
        f"delay={probe.get('initialDelaySeconds', 0)}s timeout={probe.get('timeoutSeconds', 1)}s"
        f" period={probe.get('periodSeconds', 10)}s failure={probe.get('failureThreshold', 3)}"
    )
    return f"{action} {timing}"


async def find_pod(ctx: ToolContext, namespace: str, pod: str) -> tuple[KubeObject, str | None]:
    """A pod by name or, failing that, the least healthy pod whose name starts with `pod-`
    (a workload's name works). The note says which pod was chosen and why."""
    found = await ctx.cluster.get_object("Pod", namespace, pod)
    if found is not None:
        return found, None
    pods = [p for p in await ctx.cluster.list_objects("Pod", namespace)
            if name_of(p).startswith(pod + "-")]
    if not pods:
        for kind in WORKLOAD_KINDS:
            if await ctx.cluster.get_object(kind, namespace, pod) is not None:
                raise ToolError(f"{kind} {namespace}/{pod} has no pod at all: look at why none "
                                "is created (k8s_list_workloads with its name, k8s_events)")
        names = sorted(name_of(p) for p in await ctx.cluster.list_objects("Pod", namespace))
        hint = ", ".join(names[:15]) + (" …" if len(names) > 15 else "")
        raise ToolError(f"no pod {pod!r} in namespace {namespace!r}; pods there: {hint or 'none'}")
    def badness(p: KubeObject) -> tuple[bool, int, str]:
        healthy, _ = pod_health(p, ctx.now)
        restarts = sum(int(c.get("restartCount", 0)) for c in container_statuses(p, init=True))
        return healthy, -restarts, name_of(p)
    pods.sort(key=badness)
    note = f"no pod named {pod}; showing {name_of(pods[0])}, the least healthy of {len(pods)} " \
           f"pods starting with {pod}-"
    return pods[0], note


async def list_kinds(
    ctx: ToolContext, namespace: str | None, *kinds: str
) -> list[list[KubeObject]]:
    """Objects of several kinds listed concurrently, excluded namespaces dropped."""
    found = await asyncio.gather(*(ctx.cluster.list_objects(k, namespace) for k in kinds))
    return [visible(ctx, objects) for objects in found]


def container_brief(spec: Mapping[str, Any]) -> dict[str, Any]:
    """A container spec in a few fields: image, resources, probes, ports."""
    brief: dict[str, Any] = {"name": spec.get("name"), "image": spec.get("image")}
    brief |= resources(spec)
    for kind in ("liveness", "readiness", "startup"):
        if text := probe_text(spec.get(f"{kind}Probe")):
            brief[f"{kind}_probe"] = text
    ports = [f"{p.get('containerPort')}/{p.get('protocol', 'TCP')}"
             + (f" ({p['name']})" if p.get("name") else "") for p in spec.get("ports") or []]
    if ports:
        brief["ports"] = ports
    for key in ("command", "args"):
        if spec.get(key):
            brief[key] = shorten(" ".join(map(str, spec[key])), 200)
    return brief
