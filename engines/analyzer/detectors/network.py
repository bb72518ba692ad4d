"""network (Services and DNS): a Service whose selector matches no pod or whose targetPort
no pod exposes, and DNS failures. The culprit is the Service (NetworkPolicies: policy.py).

Signals: the Service's own problems as k8s_list_services states them, with callers that
fail to reach it (by its DNS name, or by its name as a word of their errors), and DNS
errors ("no such host", "NXDOMAIN") on names the cluster should resolve.
"""

from __future__ import annotations

import re

from engines.analyzer.candidates import Candidate, Clue, Followup
from engines.analyzer.detectors._common import LOG_TOOLS, SERVICES
from engines.analyzer.detectors._logs import Sighting, sightings
from engines.analyzer.detectors._resolvers import serves_dns
from engines.analyzer.detectors._targets import hosts_in, resolve
from engines.analyzer.facts import Facts, Ref
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


def names_service(sighting: Sighting, namespace: str, service: str, facts: Facts) -> bool:
    """Whether a caller's error is about this Service: by DNS name, or by its bare name as a
    word ("upstream cart: connect ECONNREFUSED") from a caller of the same namespace."""
    text = f"{sighting.pattern.example} {sighting.pattern.template}"
    for host, port in hosts_in(text):
        target = resolve(host, port, sighting.workload.namespace, facts)
        if target.namespace == namespace and target.service == service:
            return True
    return sighting.workload.namespace == namespace and sighting.workload.name != service and \
        re.search(rf"(?<![\w.-]){re.escape(service)}(?![\w-])", text, re.IGNORECASE) is not None


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    calls = sightings(facts, scope, BLOCKED, ("x509", "certificate"))
    found = []
    for (namespace, name), service in sorted(facts.services.items()):
        fault = next((p for p in service.problems if "matches no pod" in p
                      or "targetPort" in p or "no selector" in p), None)
        if fault is None:
            continue
        ref = Ref("Service", namespace, name)
        entry = Candidate("network", ref)
        same = [r for r in facts.workloads if r.namespace == namespace and r.name == name]
        running = [w for r in same if (w := facts.workloads.get(r)) and w.ready]
        weight = 0.7 if running else 0.55
        note = f"Service {name}: {fault}" + (f", while {len(running)} {name} workload(s) run"
                                              if running else "")
        entry.clues.append(Clue(weight, note, (fault[:60],), service.source, (SERVICES,),
                                "service-fault"))
        callers = [s for s in calls if names_service(s, namespace, name, facts)]
        if serves_dns(service):  # the cluster's resolver: every DNS failure calls it
            callers += [s for s in sightings(facts, scope, DNS) if s.factor >= 0.3]
        for sighting in callers[:2]:
            entry.clues.append(Clue(0.3 * sighting.factor,
                                    f"{sighting.workload.name} cannot reach it: "
                                    f"{sighting.quote[:80]}", (sighting.quote,),
                                    sighting.pattern.source, LOG_TOOLS, "service-callers"))
        entry.affects = tuple(dict.fromkeys([*same, *(s.workload for s in callers)]))
        what = "selector" if "selector" in fault else "targetPort"
        entry.fix = (f"Fix the {what} of Service {namespace}/{name} so it matches the labels "
                     "and ports of the pods that should serve it (compare with the pod "
                     "template's labels), then check its endpoints fill up.")
        entry.followups.append(Followup(SERVICES, {"namespace": namespace, "name": name},
                                        f"compare Service {name}'s selector with the pods"))
        found.append(entry)
    return found
