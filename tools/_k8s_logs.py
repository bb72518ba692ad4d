"""The pod log tool: a container's output, summarised into patterns, its first error and
its last lines, so that a crash's cause and its last words both fit in a few hundred tokens.
"""

from __future__ import annotations

import json
import re
from typing import Annotated, Any

from pydantic import Field

from tools._k8s_common import find_pod, name_of
from tools._patterns import Line, as_dict, mine
from tools._toolkit import check_namespace, cut, finish, parse_duration, shorten
from tools.context import ToolContext
from tools.registry import tool
from tools.sources.base import KubeObject

_ERROR = re.compile(
    r"\b(error|err|exception|fatal|panic|traceback|killed|refused|failed|failure|denied|"
    r"timeout|timed out|unable|cannot|can't|invalid|missing|not found|oom|outofmemory)\b",
    re.IGNORECASE,
)
_EXCEPTION = re.compile(
    r"^\s*(?:Caused by: )?[A-Za-z_][\w.$]*(?:Error|Exception|Exit|Interrupt|Fault)\b"
)
_TIME_KEYS = ("time", "ts", "timestamp", "@timestamp", "t")
_LEVEL_KEYS = ("level", "severity", "lvl", "log.level", "levelname")
_MESSAGE_KEYS = ("msg", "message", "error", "err")
_SEVERE = {"error", "err", "fatal", "critical", "crit", "panic", "alert", "emerg", "severe"}
_ALL_LINES = 15  # a log this short is shown whole
_LAST_LINES = 8


def _describe(arguments: dict[str, Any]) -> str:
    which = "previous logs" if arguments.get("previous") else "logs"
    return f"Reading {which} of {arguments.get('namespace')}/{arguments.get('pod')}"


@tool(describe=_describe)
async def k8s_pod_logs(
    ctx: ToolContext,
    namespace: str,
    pod: str,
    container: str | None = None,
    previous: bool = False,
    tail: Annotated[int, Field(ge=1, le=5000)] = 1000,
    grep: str | None = None,
    since: str | None = None,
) -> dict[str, Any]:
    """Read a container's log and summarise it: line patterns with counts, the first error
    line, and the last lines. Use previous=true to see what a crashed or restarted container
    printed before it died.

    Args:
        namespace: The pod's namespace.
        pod: Pod name, or a workload name to pick that workload's least healthy pod.
        container: Container name; omit to pick the container that restarted most.
        previous: Read the previous (terminated) instance of the container instead of the
            current one.
        tail: Read only the last N lines.
        grep: Keep only lines matching this text or regular expression (case-insensitive).
        since: Only lines from this recent window, e.g. 30m or 2h.
    """
    check_namespace(ctx, namespace)
    obj, note = await find_pod(ctx, namespace, pod)
    chosen = container or _pick_container(obj, previous)
    start = ctx.now - parse_duration(since) if since else None
    text = await ctx.cluster.pod_logs(
        namespace, name_of(obj), chosen, previous=previous,
        tail_lines=tail, since=start,
    )
    lines = [_plain(line) for line in text.splitlines() if line.strip()]
    result: dict[str, Any] = {}
    if note:
        result["note"] = note
    result |= {"pod": name_of(obj), "container": chosen,
               "instance": "previous" if previous else "current", "lines_read": len(lines)}
    if not previous and (ended := _terminated(obj, chosen)):
        result["container_state"] = ended  # these are the last words of a finished run
    if grep:
        try:
            pattern = re.compile(grep, re.IGNORECASE)
        except re.error:
            pattern = re.compile(re.escape(grep), re.IGNORECASE)
        lines = [line for line in lines if pattern.search(line)]
        result["lines_matching"] = len(lines)
    if not lines:
        result["summary"] = "the log is empty" if not grep else "no line matches"
        return finish(result, text)
    first = next((i for i, line in enumerate(lines) if _is_error(line)), None)
    if first is not None:
        result["first_error"] = shorten(lines[first], 300)
        if exception := _exception(lines, first):
            result["exception"] = shorten(exception, 300)
    if len(lines) > _ALL_LINES:
        patterns = mine(Line(line) for line in lines)
        result["patterns"] = cut([{k: v for k, v in as_dict(p, example_chars=160).items()
                                   if k in ("template", "count", "example")} for p in patterns], 6)
    shown = lines if len(lines) <= _ALL_LINES else lines[-_LAST_LINES:]
    result["last_lines"] = [shorten(line, 200) for line in shown]
    if len(lines) > len(shown):
        result["earlier_lines_omitted"] = len(lines) - len(shown)
    return finish(result, text)


def _plain(line: str) -> str:
    """A JSON log line as "time LEVEL message key=value…": the same facts in half the
    tokens, and a line drain can template. Other lines are returned as they are."""
    stripped = line.strip()
    if not stripped.startswith("{"):
        return line
    try:
        record = json.loads(stripped)
    except ValueError:
        return line
    if not isinstance(record, dict):
        return line
    parts = []
    for keys in (_TIME_KEYS, _LEVEL_KEYS, _MESSAGE_KEYS):
        key = next((k for k in keys if k in record), None)
        if key is not None:
            value = record.pop(key)
            parts.append(str(value).upper() if keys is _LEVEL_KEYS else str(value))
    if "logger" in record:
        parts.insert(min(2, len(parts)), f"[{record.pop('logger')}]")
    parts += [f"{k}={v}" for k, v in record.items() if not isinstance(v, dict | list)]
    return " ".join(parts)


_LEVEL_WORD = re.compile(r"\b(ERROR|FATAL|CRITICAL|PANIC|SEVERE|ERR|CRIT)\b")
_OTHER_LEVEL = re.compile(r"\b(INFO|DEBUG|TRACE|WARN|WARNING|NOTICE)\b")


def _is_error(line: str) -> bool:
    """An error line: its level says so or, for lines without a level, its words do."""
    if _LEVEL_WORD.search(line):
        return True
    if _OTHER_LEVEL.search(line[:80]):
        return False
    return bool(_ERROR.search(line))


def _exception(lines: list[str], start: int) -> str | None:
    """The exception a stack trace ends in (Python) or is caused by (Java's last
    "Caused by:"), searched in the trace that starts at `start`."""
    found = None
    for line in lines[start:start + 200]:
        if _EXCEPTION.match(line):
            found = line.strip()
    return found if found and found != lines[start].strip() else None


def _terminated(pod: KubeObject, container: str | None) -> str:
    """ "terminated: Error (exit 1)" when the container's current instance has ended (a
    failed Job's pod, restartPolicy Never), else ""."""
    status = pod.get("status") or {}
    for entry in [*(status.get("initContainerStatuses") or []),
                  *(status.get("containerStatuses") or [])]:
        if container in (None, entry.get("name")):
            ended = (entry.get("state") or {}).get("terminated")
            if isinstance(ended, dict):
                return (f"terminated: {ended.get('reason') or 'Unknown'} "
                        f"(exit {ended.get('exitCode', '?')})")
    return ""


def _pick_container(pod: KubeObject, previous: bool) -> str | None:
    """The container worth reading: the one, init containers included, that restarted most
    (for `previous`, one that has a terminated instance). None lets the source decide."""
    status = pod.get("status") or {}
    statuses = list(status.get("initContainerStatuses") or []) + list(
        status.get("containerStatuses") or [])
    names = [c.get("name") for c in (pod.get("spec") or {}).get("containers") or []]
    if len(names) <= 1 and not statuses:
        return names[0] if names else None
    candidates = [s for s in statuses if not previous or (s.get("lastState") or {}).get(
        "terminated")] or statuses
    if not candidates:
        return names[0] if names else None
    best = max(candidates, key=lambda s: (int(s.get("restartCount", 0)),
                                          "waiting" not in (s.get("state") or {})))
    return str(best.get("name"))
