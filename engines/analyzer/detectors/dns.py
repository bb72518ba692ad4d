"""network (the cluster's DNS): the workload that serves the cluster's DNS is down, so every
caller fails to resolve names. The culprit is that DNS workload.

Signals: callers log resolution failures (NXDOMAIN, "no such host", "Temporary failure in
name resolution", EAI_AGAIN, SERVFAIL, a lookup that times out on port 53), while the DNS
workload, known by generic signs rather than by name (its pods expose port 53, a port-53
Service selects it, its image is a DNS server: CoreDNS, kube-dns, the node-local DNS cache,
dnsmasq), has pods that crash or are not Ready, runs no pod, has no ready endpoint behind its
Service, or logs lookups it cannot answer (an unreachable upstream).
How the DNS server fails (a crash loop, OOM kills, failing probes) is how the outage shows;
for its callers, and so for the diagnosis, it is a network failure (see ranking.py). A DNS
server that is healthy while callers fail to resolve is not blamed here: a NetworkPolicy
without port 53 (policy.py) or a wrong host name is the likelier cause.
"""

from __future__ import annotations

from engines.analyzer.candidates import Candidate, Clue, Followup
from engines.analyzer.detectors._common import (
    DESCRIBE,
    ERRORS,
    LOG_TOOLS,
    POD_LOGS,
    SERVICES,
    WORKLOADS,
    level_of,
    pattern_workloads,
    phrase_in,
)
from engines.analyzer.detectors._logs import STALE, Sighting, sightings
from engines.analyzer.detectors._resolvers import selects, servers, serves_dns
from engines.analyzer.detectors.network import RESOLUTION, aliased
from engines.analyzer.facts import Facts, LogPattern, Ref, Service, Workload
from engines.analyzer.scope import Scope

UPSTREAM = ("i/o timeout", "read udp", "servfail", "connection refused", "no route to host",
            "timed out", "timeout")
"""What a DNS server logs when it cannot answer (its upstream is unreachable, it fails)."""


def _service_of(facts: Facts, ref: Ref, known: dict[Ref, str]) -> Service | None:
    """The port-53 Service in front of a DNS workload: the one whose selector names it, else
    the only one of its namespace when it is the namespace's only DNS workload."""
    mine = [s for s in facts.services.values() if s.namespace == ref.namespace and serves_dns(s)]
    named = [s for s in mine if selects(s, ref.name)]
    if named:
        return named[0]
    alone = [r for r in known if r.namespace == ref.namespace]
    return mine[0] if len(mine) == 1 and alone == [ref] else None


def _down(facts: Facts, ref: Ref, workload: Workload, service: Service | None) -> list[Clue]:
    """How the DNS workload fails to serve: pods not Ready, no ready endpoint."""
    clues = []
    ready, desired = workload.ready, workload.desired
    if desired == 0:
        clues.append(Clue(0.45, "it runs no pod (scaled to zero)", ("ready: 0/0",),
                          workload.source, (WORKLOADS,), "dns-down"))
    elif ready is not None and desired is not None and ready < desired:
        states = [s for s in workload.statuses if s != "Running"]
        what = f" ({', '.join(f'{n} {s}' for s, n in workload.statuses.items() if s in states)})" \
            if states else ""
        clues.append(Clue(0.45 if not ready else 0.3,
                          f"only {ready} of its {desired} pods are ready{what}",
                          (*states[:1], f"ready: {ready}/{desired}"), workload.source,
                          (WORKLOADS,), "dns-down"))
    if (failing := _failing_lookups(facts, ref)) is not None:
        text = (failing.example or failing.template).strip()
        clues.append(Clue(0.35, f"it logs failed lookups itself (×{failing.count}): "
                          f"{text[:100]}", (text[:70],), failing.source, LOG_TOOLS,
                          "dns-own-errors"))
    if service is not None and (service.endpoints_ready == 0 or service.ready_pods == 0):
        problem = service.problems[0] if service.problems else "ready: 0"
        clues.append(Clue(0.4, f"Service {service.name} (port 53) has no ready endpoint: "
                          f"{problem}", (problem[:60],), service.source, (SERVICES,),
                          "dns-endpoints"))
    return clues


def _failing_lookups(facts: Facts, ref: Ref) -> LogPattern | None:
    """A recent, repeated error of the DNS server's own log about lookups it cannot answer."""
    aliases = [s.external_name.lower() for s in facts.services.values() if s.external_name]
    for pattern in facts.patterns:
        if pattern.count < 3 or pattern.previous or (
                pattern.last is not None and facts.now - pattern.last > STALE) or any(
                alias in pattern.text.lower() for alias in aliases):
            continue  # an alias's outside name that fails is the alias's fault, not its own
        erring = level_of(pattern) in ERRORS or \
            "[error]" in pattern.text.lower()
        if erring and phrase_in(pattern.text, UPSTREAM) and \
                ref in pattern_workloads(pattern, facts)[:1]:
            return pattern
    return None


def _callers(facts: Facts, scope: Scope, server: Ref,
             everyone: dict[Ref, str]) -> dict[Ref, Sighting]:
    """Each workload (not a DNS server itself) that fails to resolve, with its best line."""
    found: dict[Ref, Sighting] = {}
    for sighting in sightings(facts, scope, RESOLUTION):
        if sighting.workload in everyone or sighting.factor < 0.3 or aliased(sighting, facts):
            continue  # a DNS server, a stray line, or the name of an alias (network.py)
        best = found.get(sighting.workload)
        if best is None or sighting.factor * sighting.pattern.count > \
                best.factor * best.pattern.count:
            found[sighting.workload] = sighting
    return found


def failing_callers(facts: Facts, scope: Scope, server: Ref) -> list[Sighting]:
    """The workloads that fail to resolve names while `server` serves the cluster's DNS
    (none when it does not), most affected first."""
    known = servers(facts)
    if server not in known:
        return []
    return sorted(_callers(facts, scope, server, known).values(),
                  key=lambda s: (-s.factor * s.pattern.count, str(s.workload)))


def _last_words(facts: Facts, ref: Ref) -> Clue | None:
    """The DNS server's own dying line (its previous container's error), to quote."""
    for pattern in facts.patterns:
        if pattern.previous and pattern.role in ("exception", "first_error") and \
                ref in pattern_workloads(pattern, facts)[:1]:
            text = (pattern.example or pattern.template).strip()
            return Clue(0.2, f"its log says: {text[:120]}", (text[:70],), pattern.source,
                        LOG_TOOLS, "dns-log")
    return None


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    known = servers(facts)
    found = []
    for ref, sign in known.items():
        workload = facts.workloads.get(ref)
        if workload is None:
            continue
        service = _service_of(facts, ref, known)
        down = _down(facts, ref, workload, service)
        if not down:
            continue
        callers = _callers(facts, scope, ref, known)
        if not callers and "dns" not in scope.symptoms:
            continue
        entry = Candidate("network", ref, clues=down)
        ranked = sorted(callers.values(), key=lambda s: (-s.factor * s.pattern.count,
                                                         str(s.workload)))
        if ranked:
            first = ranked[0]
            weight = (0.5 if len(ranked) >= 2 else 0.35) * first.factor
            entry.clues.append(Clue(weight, f"{len(ranked)} workload(s) cannot resolve names, "
                                    f"{first.workload.name}: {first.quote[:80]}", (first.quote,),
                                    first.pattern.source, LOG_TOOLS, "dns-callers"))
        for other in ranked[1:3]:
            entry.clues.append(Clue(0.15 * other.factor, f"{other.workload.name} too: "
                                    f"{other.quote[:80]}", (other.quote,), other.pattern.source,
                                    LOG_TOOLS, f"dns-caller-{other.workload.name}"))
        if "dns" in scope.symptoms:
            entry.clues.append(Clue(0.15, "the report speaks of name resolution", (), None,
                                    (), "dns-report"))
        if (words := _last_words(facts, ref)) is not None:
            entry.clues.append(words)
        entry.clues.append(Clue(0.05, f"{ref.name} serves the cluster's DNS: {sign}",
                                (ref.name,), workload.source, (WORKLOADS,), "dns-server"))
        entry.affects = tuple(s.workload for s in ranked)
        entry.fix = (f"Bring {ref.kind} {ref.namespace}/{ref.name} back (it serves the "
                     "cluster's DNS): read why its pods fail (previous container log, events), "
                     "revert the change to its configuration or image that broke it, and check "
                     "its Service has ready endpoints; callers resolve again once it serves.")
        entry.followups += [
            Followup(SERVICES, {"namespace": ref.namespace},
                     f"see whether the DNS Service in {ref.namespace} has ready endpoints"),
            Followup(POD_LOGS, {"namespace": ref.namespace, "pod": ref.name, "previous": True},
                     f"read why {ref.name} (the cluster's DNS) dies"),
            Followup(DESCRIBE, {"namespace": ref.namespace, "pod": ref.name},
                     f"see how {ref.name}'s pods fail"),
        ]
        found.append(entry)
    return found
