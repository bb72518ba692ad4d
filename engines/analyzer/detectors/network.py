"""network (Services and DNS): a Service whose selector matches no pod, whose targetPort
no pod exposes, or whose node-local traffic policy leaves some nodes' callers without an
endpoint, and DNS failures. The culprit is the Service (NetworkPolicies: policy.py).

Signals: the Service's own problems as k8s_list_services states them, with callers that
fail to reach it (by its DNS name, or by its name as a word of their errors), and DNS
errors ("no such host", "NXDOMAIN") on names the cluster should resolve.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from engines.analyzer.candidates import Candidate, Clue, Followup
from engines.analyzer.detectors._common import LOG_TOOLS, SERVICES
from engines.analyzer.detectors._logs import Sighting, sightings
from engines.analyzer.detectors._resolvers import serves_dns
from engines.analyzer.detectors._targets import addresses_in, hosts_in, resolve, service_at
from engines.analyzer.facts import Facts, Ref, Service
from engines.analyzer.scope import Scope

DNS = ("no such host", "nxdomain", "name resolution", "name or service not known",
       "server misbehaving", "could not resolve", "unknown host", "unknownhostexception",
       "getaddrinfo", "dns lookup", "dns resolution", "dns error", "dns query",
       "failed to resolve", "unable to resolve", "cannot resolve", "eai_again",
       "no address associated with hostname", "nameresolutionerror", "servfail",
       "could not translate host name")
DNS_LOOKUP = ("dial tcp: lookup", ":53: read udp", ":53: i/o timeout", ":53: connection refused")
"""Go's resolver naming port 53: a lookup that timed out, whatever the host."""
RESOLUTION = (*DNS, *DNS_LOOKUP)  # a name that could not be resolved, however it is said
BLOCKED = ("i/o timeout", "connection timed out", "connect timed out", "timed out", "timeout",
           "deadline exceeded", "no route to host", "connection refused", "econnrefused",
           "no healthy upstream", "no endpoints available", "upstream connect error",
           "unreachable", "connection reset", "503", "502", "bad gateway", "econnreset",
           "etimedout", "ehostunreach", "enetunreach")

# k8s_list_services' problem for a node-local Service whose pods miss some nodes: its
# endpoints look full, yet callers on the other nodes reach none.
NODE_LOCAL = "internalTrafficPolicy Local"
# ... and for a load-balanced one whose pods miss a zone the load balancer sends clients to.
ZONE_LOCAL = "externalTrafficPolicy Local"
# ... and for one that keeps callers in their zone while its pods are spread unevenly.
ZONE_KEPT = "topology-aware routing"


def names_service(sighting: Sighting, namespace: str, service: str, facts: Facts) -> bool:
    """Whether a caller's error is about this Service: by DNS name, by its cluster IP, or by
    its bare name as a word ("upstream cart: connect ECONNREFUSED") from a caller of the
    same namespace."""
    text = f"{sighting.pattern.example} {sighting.pattern.template}"
    for host, port in hosts_in(text):
        target = resolve(host, port, sighting.workload.namespace, facts)
        if target.namespace == namespace and target.service == service:
            return True
    address = facts.services[(namespace, service)].cluster_ip
    if address and any(ip == address for ip, _ in addresses_in(text)):
        return True
    return sighting.workload.namespace == namespace and sighting.workload.name != service and \
        re.search(rf"(?<![\w.-]){re.escape(service)}(?![\w-])", text, re.IGNORECASE) is not None


def service_fault(service: Service) -> str | None:
    """The Service's own fault among its problems: what it selects, targets or routes to."""
    return own_fault(service.problems)


def own_fault(problems: Sequence[str]) -> str | None:
    """The first of a Service's problems (k8s_list_services, k8s_service_endpoints) that is
    its own doing: a selector that matches nothing or too much, a port the pods do not open
    or open with another protocol, traffic kept on nodes or zones without its pods."""
    return next((p for p in problems if "matches no pod" in p or "targetPort" in p
                 or "no selector" in p or NODE_LOCAL in p or ZONE_LOCAL in p or ZONE_KEPT in p
                 or "selector also matches" in p or " but the pods' port " in p
                 or UNREADY_PUBLISHED in p), None)


UNREADY_PUBLISHED = "publishNotReadyAddresses: true"
REMARK = 0.15  # a Service's remark (remark_only) that no caller's failure backs


def scaled_to_zero(facts: Facts, namespace: str, name: str) -> bool:
    """Whether the workload a Service is named after asks for no pods (scaled to zero)."""
    same = [w for r, w in facts.workloads.items() if r.namespace == namespace and r.name == name]
    return bool(same) and all(w.desired == 0 for w in same)


def remark_only(fault: str) -> bool:
    """A numeric targetPort the pods do not declare: the endpoints still carry it, and pods
    often listen on ports they never declare (a control plane's gRPC port), so without a
    caller that fails to reach it this is a remark, not the fault. A named targetPort the
    pods lack leaves the port without endpoints: that is a fault by itself. Not-ready pods
    published behind a cluster IP only fail callers during rollouts: a remark too until a
    caller is refused."""
    return fault.startswith("targetPort ") or fault.startswith(UNREADY_PUBLISHED)


def aliased(sighting: Sighting, facts: Facts) -> Service | None:
    """The ExternalName Service a caller's failed lookup is of: the cluster's DNS answers
    for it with the outside name it aliases, so a name that fails there is that Service's."""
    return next((service for (namespace, name), service in sorted(facts.services.items())
                 if service.external_name and names_service(sighting, namespace, name, facts)),
                None)


def _alias_faults(facts: Facts, scope: Scope) -> list[Candidate]:
    """ExternalName Services whose callers fail to resolve them: the alias points at an
    outside name that does not resolve (retired, misspelt)."""
    found: dict[tuple[str, str], Candidate] = {}
    for sighting in sightings(facts, scope, RESOLUTION):
        if sighting.factor < 0.3 or (service := aliased(sighting, facts)) is None:
            continue
        key = (service.namespace, service.name)
        if key not in found:
            entry = found[key] = Candidate("network", Ref("Service", *key))
            entry.clues.append(Clue(0.4, f"Service {service.name} is an ExternalName alias of "
                                    f"{service.external_name}", (service.external_name,),
                                    service.source, (SERVICES,), "alias"))
            entry.fix = (f"Point ExternalName Service {service.namespace}/{service.name} at a "
                         f"name that resolves (it aliases {service.external_name}), or replace "
                         "it with the new endpoint.")
        entry = found[key]
        if len(entry.clues) < 3:
            entry.clues.append(Clue(0.35 * sighting.factor, f"{sighting.workload.name} cannot "
                                    f"resolve it: {sighting.quote[:80]}", (sighting.quote,),
                                    sighting.pattern.source, LOG_TOOLS,
                                    f"alias-caller-{sighting.workload.name}"))
            entry.affects = tuple(dict.fromkeys((*entry.affects, sighting.workload)))
    return list(found.values())


def _declared(service: Service) -> set[str]:
    """The ports a Service listens on ("8080→http/TCP" listens on 8080)."""
    return {m.group(0) for p in service.ports if (m := re.match(r"\d+", p))}


def _dialled_services(sighting: Sighting, facts: Facts) -> list[tuple[Service, str]]:
    """The Services a failed call dials, each with the port it dials (when the line says)."""
    text = f"{sighting.pattern.example} {sighting.pattern.template}"
    found = [(facts.services[(target.namespace, target.service)], port)
             for ip, port in addresses_in(text)
             if port and (target := service_at(ip, facts)) is not None]
    for host, port in hosts_in(text):
        target = resolve(host, port, sighting.workload.namespace, facts)
        if port and (service := facts.services.get((target.namespace, target.service))):
            found.append((service, port))
    return found


def _port_faults(facts: Facts, calls: list[Sighting]) -> list[Candidate]:
    """Services that callers dial on a port they no longer listen on (a chart that moved
    the Service's port while its callers kept the old one): the pods serve, the calls fail
    at the Service."""
    found: dict[tuple[str, str], Candidate] = {}
    for sighting in calls:
        if sighting.factor < 0.3:
            continue
        for service, port in _dialled_services(sighting, facts):
            if not (declared := _declared(service)) or port in declared:
                continue
            key = (service.namespace, service.name)
            if key not in found:
                entry = found[key] = Candidate("network", Ref("Service", *key))
                listens = ", ".join(sorted(declared))
                entry.clues.append(Clue(0.45, f"Service {service.name} listens on {listens}, "
                                        f"not on the port {port} its callers dial",
                                        (service.ports[0][:40],), service.source, (SERVICES,),
                                        "service-port"))
                entry.fix = (f"Make Service {service.namespace}/{service.name} listen on port "
                             f"{port} again (add it beside {listens}), or move its callers to "
                             f"{listens}.")
            entry = found[key]
            if sighting.workload not in entry.affects and len(entry.affects) < 2:
                entry.clues.append(Clue(0.3 * sighting.factor, f"{sighting.workload.name} "
                                        f"dials port {port}: {sighting.quote[:80]}",
                                        (sighting.quote,), sighting.pattern.source, LOG_TOOLS,
                                        f"service-port-{sighting.workload.name}"))
                entry.affects = (*entry.affects, sighting.workload)
    return list(found.values())


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    calls = sightings(facts, scope, BLOCKED, ("x509", "certificate"))
    found = _alias_faults(facts, scope) + _port_faults(facts, calls)
    for (namespace, name), service in sorted(facts.services.items()):
        if (fault := service_fault(service)) is None:
            continue
        ref = Ref("Service", namespace, name)
        entry = Candidate("network", ref)
        same = [r for r in facts.workloads if r.namespace == namespace and r.name == name]
        running = [w for r in same if (w := facts.workloads.get(r)) and w.ready]
        serving = service.ready_pods or 0  # the pods it selects run: the fault is its own
        weight = 0.7 if running or serving else 0.55
        note = f"Service {name}: {fault}" + (f", while {len(running)} {name} workload(s) run"
                                              if running else f", while {serving} of the pods "
                                              "it selects are ready" if serving else "")
        entry.clues.append(Clue(weight, note, (fault[:60],), service.source, (SERVICES,),
                                "service-fault"))
        if "matches no pod" in fault and scaled_to_zero(facts, namespace, name):
            entry.demote(0.4, f"its workload {name} runs no pods: the selector has nothing "
                         "to match, the workload is what is down")
        callers = [s for s in calls if names_service(s, namespace, name, facts)]
        if serves_dns(service):  # the cluster's resolver: every DNS failure calls it
            callers += [s for s in sightings(facts, scope, DNS) if s.factor >= 0.3]
        if not callers and remark_only(fault):
            entry.clues[0] = replace(entry.clues[0], weight=REMARK)
        for sighting in callers[:2]:
            entry.clues.append(Clue(0.3 * sighting.factor,
                                    f"{sighting.workload.name} cannot reach it: "
                                    f"{sighting.quote[:80]}", (sighting.quote,),
                                    sighting.pattern.source, LOG_TOOLS, "service-callers"))
        entry.affects = tuple(dict.fromkeys([*same, *(s.workload for s in callers)]))
        what = "selector" if "selector" in fault else "targetPort"
        entry.fix = (f"Set Service {namespace}/{name}'s internalTrafficPolicy back to Cluster "
                     f"(or run {name} on every node its callers use)." if NODE_LOCAL in fault
                     else f"Spread {name}'s pods over every zone (a topology spread "
                     f"constraint), turn on cross-zone load balancing, or set Service "
                     f"{namespace}/{name}'s externalTrafficPolicy to Cluster." if ZONE_LOCAL
                     in fault else f"Turn off topology-aware routing on Service "
                     f"{namespace}/{name} (remove its topology-mode annotation or "
                     f"trafficDistribution), or spread {name}'s pods evenly over the zones "
                     "(a zone topologySpreadConstraint, then a rollout to rebalance), so no "
                     "zone's callers all land on a few pods." if ZONE_KEPT in fault
                     else f"Remove publishNotReadyAddresses from Service "
                     f"{namespace}/{name} (keep it only on a headless Service for peer "
                     "discovery) so that starting and terminating pods leave its endpoints."
                     if UNREADY_PUBLISHED in fault else f"Fix the {what} of Service "
                     f"{namespace}/{name} so it "
                     "matches the labels and ports of the pods that should serve it (compare "
                     "with the pod template's labels), then check its endpoints fill up.")
        entry.followups.append(Followup(SERVICES, {"namespace": namespace, "name": name},
                                        f"compare Service {name}'s selector with the pods"))
        found.append(entry)
    return found
