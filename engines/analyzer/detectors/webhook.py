"""Admission webhooks the API server cannot reach.

A webhook with `failurePolicy: Fail` that times out or refuses the API server's call
blocks every object it guards: a Deployment's new ReplicaSet gets no pod, a CronJob's Job
none, and the events say "failed calling webhook ... context deadline exceeded". The
workloads that cannot create pods are its victims, whatever their own release did. Why
the call fails is the webhook Service's: no pod behind it, or a NetworkPolicy in its
namespace that admits no ingress, or admits only pods (the API server is not a pod that a
pod or namespace selector matches), which k8s_service_endpoints says. A webhook whose
certificate is refused is certificate's.
"""

from __future__ import annotations

import re

from engines.analyzer.candidates import Candidate, Clue
from engines.analyzer.detectors._common import (
    ENDPOINTS,
    EVENT_TOOLS,
    event_workload,
    phrase_in,
    recent_events,
    snippet,
)
from engines.analyzer.detectors._targets import hosts_in, resolve, target_workload
from engines.analyzer.facts import Event, Facts, Ref, as_strs
from engines.analyzer.scope import Scope
from engines.analyzer.transcript import Observation

CALLING = ("failed calling webhook", "failed to call webhook")
UNREACHABLE = ("context deadline exceeded", "i/o timeout", "connection refused",
               "no endpoints available", "connection reset", "timed out", "timeout exceeded",
               "no route to host", "eof")
CERTIFICATE = ("x509", "certificate", "tls:")
_DENYING = re.compile(r"NetworkPolicy (.+?) selects these pods and admits no ingress")


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    found: dict[Ref, Candidate] = {}
    for event in recent_events(facts, warnings=True):
        if phrase_in(event.message, CALLING) is None or phrase_in(
                event.message, CERTIFICATE) is not None:
            continue
        if (phrase := phrase_in(event.message, UNREACHABLE)) is None:
            continue
        victim = event_workload(facts, event)
        target = next((resolve(host, port, event.namespace, facts)
                       for host, port in hosts_in(event.message)), None)
        if target is None or not target.in_cluster:
            continue
        service = Ref("Service", target.namespace, target.service)
        culprit, why, seen = _blocker(facts, service)
        entry = found.setdefault(culprit, Candidate("network", culprit))
        _blocked(entry, event, victim, service, phrase)
        if why:
            topic = f"webhook-denied-{culprit.name}"
            if all(c.topic != topic for c in entry.clues):  # once, however many it blocks
                entry.add(0.45, why, (why[:60],), seen, (ENDPOINTS,), topic)
        else:  # no finding yet: the Service, until its endpoints are read
            backend = target_workload(target, facts)
            entry.follow(ENDPOINTS, {"namespace": service.namespace, "service": service.name},
                         f"see why the API server cannot reach webhook Service {service.name}")
            if backend is not None:
                entry.affects = tuple(dict.fromkeys((*entry.affects, backend)))
        entry.fix = _fix(culprit, service)
    return list(found.values())


def _blocker(facts: Facts, service: Ref) -> tuple[Ref, str, Observation | None]:
    """What k8s_service_endpoints says keeps the API server from the webhook's pods: a
    NetworkPolicy that admits no ingress to them (the culprit), else the Service itself."""
    for obs in facts.observations:
        if obs.tool != ENDPOINTS or not obs.ok or not isinstance(obs.data, dict) or str(
                obs.data.get("service") or "") != f"{service.namespace}/{service.name}":
            continue
        for problem in as_strs(obs.data.get("problems")):
            if (match := _DENYING.search(problem)) is not None:
                name = match.group(1).split(",")[0].strip()
                return Ref("NetworkPolicy", service.namespace, name), (
                    f"{problem} (the webhook's pods are behind it)"), obs
        if obs.data.get("ingress_from") and (name := _baseline(obs)):
            return Ref("NetworkPolicy", service.namespace, name), (
                f"{name} denies all ingress to the webhook's pods and the other policies "
                "admit pods only: the API server is not among them"), obs
    return service, "", None


def _baseline(obs: Observation) -> str:
    """The policy that denies all ingress to the pods, under the ones that admit some pods:
    the one that shuts out the API server."""
    return next((text.split(":")[0] for text in as_strs(obs.data.get("ingress_policies"))
                 if text.endswith("denies all ingress")), "")


def _blocked(entry: Candidate, event: Event, victim: Ref | None, service: Ref,
             phrase: str) -> None:
    """The victim whose objects the webhook refuses, as a clue on the webhook's blocker."""
    quote = snippet(event.message, phrase)
    who = victim.name if victim is not None else event.name
    weight = 0.5 if event.count >= 3 else 0.35
    entry.clues.append(Clue(weight, f"{event.reason} for {who}: the API server cannot reach "
                            f"admission webhook Service {service.namespace}/{service.name} "
                            f"({quote[:70]!r})", (quote, phrase), event.source, EVENT_TOOLS,
                            f"webhook-{who}"))
    if victim is not None:
        entry.affects = tuple(dict.fromkeys((*entry.affects, victim)))


def _fix(culprit: Ref, service: Ref) -> str:
    if culprit.kind == "NetworkPolicy":
        return (f"Allow ingress to the pods of webhook Service {service.namespace}/"
                f"{service.name} from the API server (its control-plane addresses, on the "
                f"webhook's port) in NetworkPolicy {culprit.namespace}/{culprit.name}, or "
                "drop that policy there; the workloads it blocks need no rollback.")
    return (f"Bring back the admission webhook behind Service {service.namespace}/"
            f"{service.name} (ready pods the API server can reach in time), or set its "
            "failurePolicy to Ignore while it is down; the workloads it blocks need no "
            "rollback.")
