"""node_failure told by the node's own kernel, in the lines a node agent ships.

A log shipper DaemonSet that forwards the kernel's ring buffer (kmsg, journald) tags those
lines with its own pod, so the node that pod runs on is the node the kernel speaks for. Some
faults only the node has, whatever its pods do: a full conntrack table drops packets (its
pods' connections time out, to anything), hung tasks and I/O errors of a failing disk (its
pods hang on writes), soft lockups. Pods elsewhere, of the same workloads, are fine, which
is what tells a node's fault from a dependency's. Until the agent pod's node is known,
`wanted` asks for it, and for the node of the pods that fail at the same time.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from engines.analyzer.candidates import Candidate, Clue
from engines.analyzer.detectors._common import (
    DESCRIBE,
    ERRORS,
    EVENT_TOOLS,
    LOG_TOOLS,
    NODES,
    PODS,
    hosted,
    level_of,
    pattern_workloads,
    recent_events,
)
from engines.analyzer.facts import Facts, LogPattern, Ref
from engines.analyzer.scope import Scope
from engines.analyzer.transcript import Observation

FAULTS = re.compile(r"nf_conntrack: table full|conntrack table full|"
                    r"blocked for more than \d+ seconds|i/o error,? dev \w+|buffer i/o error|"
                    r"ext4-fs error|xfs \([\w-]+\): .{0,40}error|soft lockup|hard lockup|"
                    r"neighbou?r table overflow|self-detected stall|tcp: out of memory|"
                    r"fallen off the bus|NVRM: Xid \([^)]*\): (?:48|6[34]|74|79|9[2-5]|119|120)\b",
                    re.IGNORECASE)
CONNTRACK = re.compile(r"conntrack", re.IGNORECASE)
KERNEL_TAG = re.compile(r"(?:^|\s)kernel:|\bkmsg\b", re.IGNORECASE)
GPU = re.compile(r"NVRM: Xid|fallen off the bus", re.IGNORECASE)
KERNEL_SERVICES = frozenset({"kernel", "kmsg", "dmesg", "journal", "systemd-journal"})
VICTIM_PODS = 2  # failing pods whose node is asked for


def kernel_faults(facts: Facts) -> list[tuple[LogPattern, Ref]]:
    """Kernel fault lines with the DaemonSet that shipped them."""
    found = []
    for pattern in facts.patterns:
        if FAULTS.search(pattern.text) is None or not (
                KERNEL_TAG.search(pattern.template) or set(pattern.services) & KERNEL_SERVICES):
            continue
        agent = next((r for r in pattern_workloads(pattern, facts) if r.kind == "DaemonSet"), None)
        if agent is not None:
            found.append((pattern, agent))
    return found


def _nodes_of(facts: Facts, pattern: LogPattern, agent: Ref) -> dict[str, str]:
    """The agent pods that shipped the lines, each with its node ("" while unknown)."""
    pods = dict.fromkeys([*pattern.pods, *([pattern.pod] if pattern.pod else [])], "")
    for pod in pods:
        known = facts.pods.get((agent.namespace, pod))
        pods[pod] = known.node if known is not None else ""
    return pods


def _fix(node: str, text: str) -> str:
    """The remedy for what the kernel says: a full conntrack table is tuned, a lost GPU or a
    failing disk is the machine's, so the node goes."""
    if CONNTRACK.search(text):
        return (f"Raise net.netfilter.nf_conntrack_max on node {node} (as on the other nodes), "
                "or cordon, drain and replace it; its pods' connections are dropped there, not "
                "by what they call.")
    if GPU.search(text):
        return (f"Cordon and drain node {node}, then reset or replace its GPU (reboot or "
                "replace the node): its kernel reports the GPU lost (NVRM Xid), so pods there "
                "cannot use CUDA; the same workload on other nodes is fine, so the code and "
                "the model are not the cause.")
    return (f"Cordon and drain node {node} and replace it: its kernel reports a failing disk "
            "or hung tasks, and its pods hang with it; the same workloads elsewhere are fine.")


def _report(found: dict[str, Candidate], node: str, line: str, count: int, via: str,
            observation: Observation | None, tools: tuple[str, ...]) -> None:
    entry = found.setdefault(node, Candidate("node_failure", Ref("Node", "", node)))
    quote = FAULTS.search(line)
    needle = quote.group(0) if quote else line[:40]
    entry.add(0.55, f"the kernel of node {node} logs {line[:90]!r} ×{count} ({via})",
              (needle,), observation, tools, f"kernel-{needle[:20]}")
    if not entry.fix:
        entry.fix = _fix(node, line)
        entry.follow(PODS, {"node": node}, f"see what runs on {node}")
        entry.follow(NODES, {"name": node}, f"read node {node}'s conditions")


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    found: dict[str, Candidate] = {}
    for pattern, agent in kernel_faults(facts):
        for node in (n for n in _nodes_of(facts, pattern, agent).values() if n):
            _report(found, node, pattern.example or pattern.template, pattern.count,
                    f"shipped by {agent.name}", pattern.source, LOG_TOOLS)
    # node-problem-detector also reports kernel faults as the Node's own warning events.
    for event in recent_events(facts, warnings=True):
        if event.kind == "Node" and event.name and FAULTS.search(event.message):
            _report(found, event.name, event.message, event.count,
                    f"{event.reason} event", event.source, EVENT_TOOLS)
    for node, entry in found.items():
        _victims(facts, node, entry)
    return list(found.values())


def _victims(facts: Facts, node: str, entry: Candidate) -> None:
    """The workloads whose failing lines all come from pods on this node."""
    victims: dict[Ref, LogPattern] = {}
    for pattern in _failing(facts):
        nodes = {facts.pods[key].node if key in facts.pods else "" for key in _pod_keys(
            facts, pattern)}
        if nodes == {node} and (owners := pattern_workloads(pattern, facts)) and \
                owners[0].kind != "DaemonSet":
            victims.setdefault(owners[0], pattern)
    entry.affects = tuple(dict.fromkeys([*victims, *hosted(facts, node)]))
    if victims:
        pattern = next(iter(victims.values()))
        names = ", ".join(r.name for r in list(victims)[:3])
        entry.clues.append(Clue(0.3, f"the failing pods of {names} all run on {node}: "
                                f"{pattern.template[:70]!r}", (pattern.template[:40],),
                                pattern.source, LOG_TOOLS, "kernel-victims"))


def _failing(facts: Facts) -> Iterable[LogPattern]:
    return (p for p in facts.patterns if level_of(p) in ERRORS and p.pods
            and not set(p.services) & KERNEL_SERVICES)


def _pod_keys(facts: Facts, pattern: LogPattern) -> list[tuple[str, str]]:
    """(namespace, pod) of the pods a pattern names, placed by the workload they belong to."""
    owner = next(iter(pattern_workloads(pattern, facts)), None)
    namespace = pattern.namespace or (owner.namespace if owner else "")
    return [(namespace, pod) for pod in pattern.pods]


def wanted(facts: Facts) -> Iterable[tuple[str, dict[str, str], str]]:
    """Which node an agent's kernel fault lines come from, and whether the pods failing
    meanwhile share it: the describe call that shows each pod's node."""
    faults = kernel_faults(facts)
    for pattern, agent in faults[:2]:
        for pod, node in list(_nodes_of(facts, pattern, agent).items())[:2]:
            if not node:
                yield DESCRIBE, {"namespace": agent.namespace, "pod": pod}, \
                    f"see which node's kernel logs {pattern.template[:40]!r}"
    if not faults:
        return
    asked = 0
    for pattern in _failing(facts):
        for namespace, pod in _pod_keys(facts, pattern):
            if asked < VICTIM_PODS and namespace and (namespace, pod) not in facts.pods:
                asked += 1
                yield DESCRIBE, {"namespace": namespace, "pod": pod}, \
                    f"see which node {pod}, which fails, runs on"
