"""dependency_failure: a dependency (database, cache, queue, external API) is down or slow
while the caller itself is healthy. The culprit is the caller.

Signals: the caller's errors say it cannot reach something (refused, timed out, reset,
unavailable) and name a host that is outside the cluster or healthy-looking inside it, the
caller's 5xx ratio or latency rose with them, and the caller's own pods are fine and were
not just redeployed. When the named host is an unhealthy workload of the cluster, that
workload's own fault is the cause and no dependency candidate is made. When it is a
workload of the cluster whose own latency or error rate rose (overloaded, slow), that
workload is the deepest cause: the candidate names it, its callers are what it affects.
"""

from __future__ import annotations

import ipaddress
import re

from engines.analyzer.candidates import Candidate, Clue, Followup
from engines.analyzer.detectors._common import (
    LOG_PATTERNS,
    LOG_SEARCH,
    LOG_TOOLS,
    PODS,
    POLICIES,
    ROLLOUT,
    SIGNALS,
    stamp,
)
from engines.analyzer.detectors._logs import Sighting, by_workload, sightings
from engines.analyzer.detectors._targets import (
    TELEMETRY_EXPORT,
    Target,
    addresses_in,
    hosts_in,
    named,
    resolve,
    service_at,
    spoken_server,
    target_workload,
    troubled,
    unnamed_upstream,
    workload_at,
)
from engines.analyzer.detectors.certificate import TLS
from engines.analyzer.detectors.exhaustion import PHRASES as EXHAUSTION
from engines.analyzer.detectors.kernel import kernel_faults
from engines.analyzer.detectors.network import RESOLUTION, service_fault
from engines.analyzer.facts import Facts, Ref, Signals
from engines.analyzer.scope import Scope

CONNECT = ("connection refused", "connection timed out", "connect timed out", "timed out",
           "timeout", "i/o timeout", "no route to host", "connection reset", "econnrefused",
           "etimedout", "econnreset", "could not connect", "unable to connect",
           "failed to connect", "cannot connect", "can't connect", "operationalerror",
           "upstream connect error", "service unavailable", "deadline exceeded",
           "host unreachable", "network is unreachable", "bad gateway", "gateway timeout",
           "circuit breaker", "circuit open", "unavailable", "connection closed", "broken pipe",
           "socket hang up", "server closed the connection", "read timeout", "connect error",
           "connection error", "connectionerror", "connection aborted", "is down",
           "not responding", "no response", "responded 5", "returned 5", "answered 5",
           "status 5")
# An API outside the cluster that refuses the caller's credentials (a key revoked or
# expired at the provider) fails the caller as surely as one that is down; counted only when
# the line names an outside host or a provider, so that the cluster's own auth is not.
REFUSED = ("status=401", "status 401", "http 401", "401 unauthorized", "unauthorized",
           "revoked", "invalid api key", "invalid_api_key", "authorization grant is invalid",
           "invalid_grant")
# A dependency that answers but will not serve: an outside API that throttles the caller
# (counted, like REFUSED, only when the line names an outside host or a provider), or a
# database that refuses writes: a replica now (a failover left the caller's pool on the
# old primary), or a cache full to its memory cap with no eviction.
THROTTLED = ("too many requests", "rate limit exceeded", "rate limited", "rate-limited",
             "reduce your request rate", "slowdown", "slow down", "requestlimitexceeded",
             "throttlingexception", "quota exceeded for quota metric")
WRITES_REFUSED = ("read-only transaction", "read only transaction", "read-only replica",
                  "read only replica", "--read-only option", "readonly you can't write",
                  "oom command not allowed", "used memory > 'maxmemory'")
# An HTTP error status a line says an outside host answered ("-> 410 Gone", "status=503",
# a status with its reason phrase: "404 Not Found"):
# counted only when the line names a host outside the cluster, since a caller's own access
# log prints the status it answered, not one it was given.
_ANSWERED = re.compile(r"(?:->|=>|status[=: ]+|code[=: ]+|http/\d(?:\.\d)? |failed: |"
                       r"answered |returned |responded (?:with )?)\s*"
                       r"(40[2348]|41[05]|429|5\d\d)\b|"
                       r"\b(?:40[2348]|41[05]|429|5\d\d) (?:not found|gone|forbidden|payment "
                       r"required|request timeout|too many requests|internal server error|bad "
                       r"gateway|service unavailable|gateway timeout)\b")
# A database that answers "lock timeout" is reachable: it made the statement wait.
LOCKS = ("lock timeout", "lock wait timeout", "locknotavailable", "deadlock detected",
         "could not obtain lock")
OTHER_CAUSES = (*TLS, *RESOLUTION, *EXHAUSTION, *LOCKS)  # those name a more specific cause
# A dependency that answers, but not with what the caller can read: a response that fails
# validation or decoding (an API that reports its own error in a 200, a changed format).
_UNREADABLE = re.compile(r"validation errors? for \w*(?:response|reply|result)\b|"
                         r"(?:failed to|could not|cannot|unable to) (?:decode|parse|unmarshal|"
                         r"deserialize) (?:the )?(?:\w+ )?(?:response|reply|body)\b|"
                         r"(?:invalid|malformed|unexpected) (?:\w+ )?(?:response|reply)\b", re.I)


def _answered_status(text: str) -> str | None:
    """The piece of a line that says a server answered an error status, or an answer the
    caller cannot read, if any."""
    match = _ANSWERED.search(text.lower()) or _UNREADABLE.search(text)
    return match.group(0) if match else None


# A cloud provider's SDK names the service it called, not a host ("operation error S3:
# PutObject", "DynamoDB: ProvisionedThroughputExceededException", "googleapi: Error 429").
_CLOUD_API = re.compile(r"\boperation error [a-z0-9 ]+:|\bapi error\b|\bgoogleapi\b|"
                        r"\b(?:s3|sqs|sns|dynamodb|kinesis|aws|gcs|azure)\b", re.I)


def _outside_refusal(sighting: Sighting, targets: list[Target]) -> bool:
    text = f"{sighting.pattern.example} {sighting.pattern.template}".lower()
    return any(t.external for t in targets) or "provider" in text or bool(
        _CLOUD_API.search(text))


def _targets(sighting: Sighting, facts: Facts) -> list[Target]:
    """The hosts a line names; an address that is a known pod's is that pod's workload."""
    text = f"{sighting.pattern.example} {sighting.pattern.template}"
    found = [t for ip, _ in addresses_in(text) if (t := service_at(ip, facts)) is not None]
    for host, port in hosts_in(text):
        pod = workload_at(host, facts) if _private(host) else None
        found.append(Target(host, port, pod.namespace, pod.name) if pod is not None
                     else resolve(host, port, sighting.workload.namespace, facts))
    return found


def _private(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_private
    except ValueError:
        return False


# The node agents that route Service traffic (kube-proxy, or a CNI that replaces it).
SERVICE_ROUTERS = re.compile(r"kube-proxy|cilium|calico-node|kube-router|antrea-agent|"
                             r"aws-node|azure-cns|flannel|weave-net")


def _sick_proxies(facts: Facts) -> list[Ref]:
    """The Service-routing DaemonSets with pods that are not well: calls to Services from
    the nodes those pods serve fail, whatever the callee's health."""
    return [ref for ref in facts.workloads if ref.kind == "DaemonSet"
            and SERVICE_ROUTERS.search(ref.name.lower()) and troubled(ref, facts)]


def _strained(ref: Ref, facts: Facts) -> tuple[str, Signals] | None:
    """Why an in-cluster dependency is itself slow or failing by its own metrics."""
    signals = facts.signals_of(ref)
    if signals is None:
        return None
    why = next((str(signals.get(n).get("why")) for n in ("latency", "requests")
                if signals.get(n).get("abnormal")), None)
    return (why, signals) if why is not None else None


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    found = []
    callees: dict[Ref, Candidate] = {}
    seen_all = [s for s in sightings(facts, scope, (*CONNECT, *REFUSED, *THROTTLED,
                                                    *WRITES_REFUSED),
                                     OTHER_CAUSES, find=_answered_status)
                if not TELEMETRY_EXPORT.search(s.pattern.text)]  # a side channel's trouble
    proxies = _sick_proxies(facts)
    for caller, seen in by_workload(seen_all).items():
        entry = Candidate("dependency_failure", caller)
        hosts: list[Target] = []
        for sighting in seen[:3]:
            targets = _targets(sighting, facts)
            outside_only = sighting.phrase in (*REFUSED, *THROTTLED) or bool(
                _ANSWERED.fullmatch(sighting.phrase))
            if outside_only and not _outside_refusal(sighting, targets):
                continue
            inside = [t for t in targets if t.in_cluster]
            text = f"{sighting.pattern.example} {sighting.pattern.template}"
            callee = next((w for t in inside if (w := target_workload(t, facts))), None) or \
                next(iter(named(text, caller, facts)), None) or \
                unnamed_upstream(facts, caller, text) or spoken_server(text, caller, facts)
            if (callee is not None and callee != caller and troubled(callee, facts)) or any(
                    (s := facts.services.get((t.namespace, t.service))) is not None
                    and service_fault(s) for t in inside):
                continue  # the callee or its Service is sick: its own detectors own this
            count = sighting.pattern.count
            weight = (0.5 if count >= 10 or sighting.pattern.previous else 0.3) * sighting.factor
            note = f"{caller.name} logs {sighting.quote[:90]!r}" + (f" ×{count}" if count > 1
                                                                     else "")
            strained = _strained(callee, facts) if callee not in (None, caller) else None
            if callee is not None and strained is not None:
                _blame_callee(callees, callee, caller, sighting, weight, note, strained)
                continue
            hosts += targets
            if callee is not None and callee != caller:
                entry.blames = tuple(dict.fromkeys((*entry.blames, callee)))
            if inside:  # Service traffic goes through each node's proxy: a sick one fails it
                entry.blames = tuple(dict.fromkeys((*entry.blames, *proxies)))
            entry.clues.append(Clue(weight, note, (sighting.quote, sighting.phrase),
                                    sighting.pattern.source, LOG_TOOLS, "dep-log"))
            if sighting.why:
                entry.demote(0.9, sighting.why)
        if not entry.clues:
            continue
        dying = [s for s in seen if s.pattern.previous]
        if dying:
            entry.clues.append(Clue(0.35, f"{caller.name}'s containers die at start because they "
                                    "cannot reach it", (dying[0].quote, dying[0].phrase),
                                    dying[0].pattern.source, LOG_TOOLS, "dep-crash"))
        _context_clues(facts, entry, hosts, crashing=bool(dying))
        found.append(entry)
    return found + list(callees.values())


def _blame_callee(callees: dict[Ref, Candidate], callee: Ref, caller: Ref, sighting: Sighting,
                  weight: float, note: str, strained: tuple[str, Signals]) -> None:
    """A caller's calls fail against an in-cluster workload that is itself slow or erring:
    that workload is the failing dependency."""
    why, signals = strained
    entry = callees.get(callee)
    if entry is None:
        entry = callees[callee] = Candidate("dependency_failure", callee)
        entry.clues.append(Clue(0.35, f"{callee.name} itself: {why}", ("rose from",),
                                signals.source, (SIGNALS,), "dep-own-signal"))
        entry.fix = (f"{callee.kind} {callee.namespace}/{callee.name} is the slow or failing "
                     "dependency: scale it out or relieve it (its load, its own dependencies), "
                     "and give its callers a circuit breaker.")
        entry.followups.append(Followup(ROLLOUT, {"namespace": callee.namespace,
                                                  "workload": callee.name},
                                        f"rule out a release of {callee.name}"))
    entry.clues.append(Clue(weight, note, (sighting.quote, sighting.phrase),
                            sighting.pattern.source, LOG_TOOLS, f"dep-log-{caller.name}"))
    entry.affects = tuple(dict.fromkeys((*entry.affects, caller)))
    if sighting.why:
        entry.demote(0.9, sighting.why)


PROXIES = ("ingress-nginx", "nginx-ingress", "ingress-controller", "traefik", "haproxy-ingress",
           "kong", "contour", "envoyproxy", "emissary", "istio/proxy", "gateway-api")


def is_proxy(facts: Facts, ref: Ref) -> bool:
    """An ingress controller or gateway (every container a proxy: an application with a
    mesh sidecar is not one): its "upstream timed out" is a backend of the cluster failing
    to answer, not a dependency of its own."""
    workload = facts.workloads.get(ref)
    images = [i.lower() for i in workload.images] if workload is not None else []
    return bool(images) and all(any(p in image for p in PROXIES) for image in images)


# What node agents ship from the kernels of the nodes (detectors/kernel.py reads it).
KERNEL_LINES = {"text": "kernel", "since": "1h", "limit": 8}


def _context_clues(facts: Facts, entry: Candidate, hosts: list[Target], *,
                   crashing: bool = False) -> None:
    """Where the dependency is, what the metrics say, and whether the caller is sick for
    reasons of its own (restarts that the dependency does not explain)."""
    caller = entry.culprit
    if is_proxy(facts, caller):
        entry.demote(0.5, f"{caller.name} is a proxy: its upstreams are the cluster's own "
                     "backends, whose failure it only reports")
    external = next((t for t in hosts if t.external), None)
    inside = next((t for t in hosts if t.in_cluster), None)
    if external is not None:
        entry.clues.append(Clue(0.2, f"the failing dependency {external.host} is outside the "
                                "cluster", (external.host,), None, LOG_TOOLS, "external"))
    elif inside is not None:
        entry.demote(0.8, f"the dependency {inside.host} runs in the cluster")
    signals = facts.signals_of(caller)
    if signals is not None:
        for name in ("requests", "latency"):
            signal = signals.get(name)
            if signal.get("abnormal"):
                entry.clues.append(Clue(0.2, str(signal.get("why")), ("rose from", "5xx ratio"),
                                        signals.source, (SIGNALS,), f"dep-{name}"))
        if "memory" in signals.abnormal or ("restarts" in signals.abnormal and not crashing):
            entry.demote(0.6, f"{caller.name} itself is not healthy")
    workload = facts.workloads.get(caller)
    if workload is not None and workload.unhealthy_pods and not crashing:
        entry.demote(0.7, f"{caller.name}'s own pods are unhealthy")
    rollout = facts.rollout_of(caller)
    current = rollout.current if rollout else None
    if rollout is not None and current is not None and current.created is not None and (
            facts.now - current.created).total_seconds() > 12 * 3600:
        entry.clues.append(Clue(0.1, f"nothing was deployed recently (revision "
                                f"{current.number} is older)",
                                (f"created: {stamp(current.created)}",
                                 f"revision: {current.number}"),
                                rollout.source, (ROLLOUT,), "no-deploy"))
    host = external or inside
    where = host.host if host else "the dependency it calls"
    entry.fix = (f"Restore {where} (check the provider's or the database's status, failover, "
                 f"network path and credentials); {caller.kind} {caller.namespace}/{caller.name} "
                 "itself needs no change, at most a circuit breaker or a longer timeout.")
    entry.followups.append(Followup(ROLLOUT, {"namespace": caller.namespace,
                                              "workload": caller.name},
                                    f"rule out a release of {caller.name}"))
    entry.followups.append(Followup(SIGNALS, {"namespace": caller.namespace,
                                              "workload": caller.name},
                                    f"see {caller.name}'s error rate and latency"))
    entry.followups.append(Followup(POLICIES, {"namespace": caller.namespace},
                                    f"rule out a NetworkPolicy that cuts {caller.name} off"))
    if any(t.external for t in hosts) or not hosts:  # a node that drops packets times out all
        entry.followups.append(Followup(LOG_PATTERNS, KERNEL_LINES,
                                        "rule out a node whose kernel drops packets or hangs"))
        if faults := kernel_faults(facts):
            entry.demote(0.75, f"a node's kernel logs {faults[0][0].template[:60]!r}: the "
                         "timeouts of the pods there would be that node's")
    for target in hosts:  # an address may be a pod's; a policy where the callee runs may cut it
        if target.in_cluster and target.namespace != caller.namespace:
            check = Followup(POLICIES, {"namespace": target.namespace}, "rule out a "
                             f"NetworkPolicy that keeps {caller.name} from {target.service}")
        elif not target.in_cluster and _private(target.host):
            check = Followup(PODS, {"ip": target.host}, f"find which pod {target.host} is")
        else:
            continue
        if all(f.tool != check.tool or f.arguments != check.arguments for f in entry.followups):
            entry.followups.append(check)
    if host is not None:
        entry.followups.append(Followup(LOG_SEARCH, {"text": host.host.split(".")[0],
                                                     "namespace": caller.namespace,
                                                     "level": "warn"},
                                        f"read the errors that name {host.host}"))
