"""The Kubernetes tool about one pod in depth: `kubectl describe pod`.

Apart from the listings of tools._k8s_workloads because it reads one pod whole (each
container's state and last state, env with secrets masked, volumes, scheduling, events)
where a listing reads many pods in short; the two share only tools._k8s_common's rows.
"""

from __future__ import annotations

import asyncio
from typing import Any

from tools._k8s_common import (
    Owners,
    container_brief,
    container_statuses,
    find_pod,
    name_of,
    pod_row,
    termination_text,
    when,
)
from tools._k8s_events import _UID, routine_events, summarize_events
from tools._toolkit import check_namespace, cut, finish, shorten
from tools.context import ToolContext
from tools.redact import redact_env
from tools.registry import tool


@tool(describe="Describing pod {namespace}/{pod}")
async def k8s_describe_pod(ctx: ToolContext, namespace: str, pod: str) -> dict[str, Any]:
    """Describe one pod like `kubectl describe pod`: each container's state and last state
    (reason, exit code, finishedAt), restarts, requests/limits, probes, env (secrets masked),
    node, owner, failing conditions and the pod's recent events. A workload name picks its
    least healthy pod.

    Args:
        namespace: The pod's namespace.
        pod: Pod name, or a workload name to pick that workload's least healthy pod.
    """
    check_namespace(ctx, namespace)
    obj, note = await find_pod(ctx, namespace, pod)
    name = name_of(obj)
    events, replicasets, jobs = await asyncio.gather(
        ctx.cluster.list_objects("Event", namespace, field_selector={
            "involvedObject.kind": "Pod", "involvedObject.name": name}),
        ctx.cluster.list_objects("ReplicaSet", namespace),
        ctx.cluster.list_objects("Job", namespace),
    )
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    result: dict[str, Any] = {}
    if note:
        result["note"] = note
    result |= {k: v for k, v in pod_row(obj, ctx.now).items() if k not in ("last_exit",)}
    result["namespace"] = namespace
    if chain := Owners(replicasets, jobs).chain(obj):
        result["owner"] = " → ".join(f"{k}/{n}" for k, n in reversed(chain))
    if status.get("qosClass"):
        result["qos"] = status["qosClass"]
    if reason := status.get("reason"):
        result["reason"] = f"{reason}: {shorten(str(status.get('message', '')), 200)}"
    failing = [c for c in status.get("conditions") or [] if c.get("status") == "False"
               and c.get("type") != "ContainersReady"]  # says what Ready says
    if failing:
        result["failing_conditions"] = [
            f"{c.get('type')} {c.get('reason', '')}: {shorten(str(c.get('message', '')), 200)}"
            .replace(" : ", ": ").rstrip(": ") for c in failing]
    states = {s.get("name"): s for s in container_statuses(obj)}
    init_states = {s.get("name"): s for s in status.get("initContainerStatuses") or []}
    result["containers"] = [_container(ctx, c, states.get(c.get("name"), {}))
                            for c in spec.get("containers") or []]
    if spec.get("initContainers"):
        result["init_containers"] = [_container(ctx, c, init_states.get(c.get("name"), {}))
                                     for c in spec["initContainers"]]
    if volumes := [_volume(v) for v in spec.get("volumes") or []]:
        result["volumes"] = cut([v for v in volumes if v], 10)
    for key, label in (("nodeSelector", "node_selector"), ("affinity", "affinity")):
        if spec.get(key):
            result[label] = spec[key] if key == "nodeSelector" else shorten(str(spec[key]), 300)
    if spec.get("tolerations"):
        result["tolerations"] = cut([f"{t.get('key', '*')}:{t.get('effect', 'any')}"
                                     for t in spec["tolerations"]], 8)
    warnings = [e for e in events if e.get("type") == "Warning"]
    result["events"] = summarize_events(warnings, ctx.now, 6) or "no warning in the last hour"
    if routine := routine_events(events, ctx.now):
        result["normal_events"] = routine
    return finish(result, [obj, *events])


def _container(ctx: ToolContext, spec: dict[str, Any], state: dict[str, Any]) -> dict[str, Any]:
    data = container_brief(spec)
    if state:
        data["ready"] = bool(state.get("ready"))
        data["restarts"] = int(state.get("restartCount", 0))
        data["state"] = _state(ctx, state.get("state") or {})
        if terminated := (state.get("lastState") or {}).get("terminated"):
            data["last_state"] = {
                "terminated": terminated.get("reason") or "Terminated",
                "exit_code": terminated.get("exitCode"),
                "started": when(terminated.get("startedAt"), ctx.now),
                "finished": when(terminated.get("finishedAt"), ctx.now),
            }
            if terminated.get("message"):
                data["last_state"]["message"] = shorten(str(terminated["message"]), 200, ends=True)
        if state.get("image") and state.get("image") != spec.get("image"):
            data["running_image"] = state["image"]
    if spec.get("env"):
        data["env"] = cut(redact_env(spec["env"]), 10)
    if spec.get("envFrom"):
        data["env_from"] = [f"{'secret' if 'secretRef' in e else 'configmap'} "
                            f"{(e.get('secretRef') or e.get('configMapRef') or {}).get('name')}"
                            for e in spec["envFrom"]]
    return data


def _state(ctx: ToolContext, state: dict[str, Any]) -> dict[str, Any]:
    if waiting := state.get("waiting"):
        shown = {"waiting": waiting.get("reason") or "Waiting"}
        if waiting.get("message"):
            shown["message"] = shorten(_UID.sub("", str(waiting["message"])), 200, ends=True)
        return shown
    if terminated := state.get("terminated"):
        return {"terminated": termination_text(terminated, ctx.now)}
    if running := state.get("running"):
        return {"running": when(running.get("startedAt"), ctx.now)}
    return {}


def _volume(volume: dict[str, Any]) -> str | None:
    name = volume.get("name")
    for key, label in (("persistentVolumeClaim", "pvc"), ("configMap", "configmap"),
                       ("secret", "secret"), ("emptyDir", "emptyDir"), ("hostPath", "hostPath")):
        if key in volume:
            source = volume[key] or {}
            ref = source.get("claimName") or source.get("name") or source.get("secretName") or \
                source.get("path") or ""
            return f"{name}: {label} {ref}".strip()
    return None
