"""network (NetworkPolicies): a policy that blocks traffic a workload needs.

Signals: callers time out or are refused reaching an in-cluster Service, and a policy in
the Service's namespace selects its pods and admits no rule for the caller (ingress); a
policy that selects the caller restricts its egress and admits no rule for where it calls,
be it a Service, a host outside the cluster or a bare address and port ("connect ETIMEDOUT
172.16.8.4:5432": no ipBlock holds it, or one excepts it, or the rules open other ports
only); or a policy restricts the caller's egress without DNS while it logs DNS failures. A
policy created shortly before the trouble began (its creation time in the listing, or read
with k8s_get_object) is the prime suspect; one that has been there for weeks is not.
"""

from __future__ import annotations

import ipaddress
import re
from datetime import datetime, timedelta

from engines.analyzer.candidates import Candidate, Clue, Followup
from engines.analyzer.detectors._common import (
    LOG_TOOLS,
    OBJECT,
    POLICIES,
    first_of,
    signal_change,
    stamp,
)
from engines.analyzer.detectors._logs import Sighting, sightings
from engines.analyzer.detectors._targets import (
    addresses_in,
    hosts_in,
    resolve,
    target_workload,
    workload_at,
)
from engines.analyzer.detectors.network import BLOCKED, RESOLUTION
from engines.analyzer.facts import Facts, Policy, Ref
from engines.analyzer.scope import Scope
from engines.analyzer.transcript import Observation

_NAMESPACE_NAME = re.compile(r"kubernetes\.io/metadata\.name=([-\w.]+)")
_LABEL_VALUE = re.compile(r"[-\w./]+=([-\w.]+)")
_BLOCK = re.compile(r"\bip ([\d.]+/\d+)(?: except ([\d./,]+))?")
_PORT = re.compile(r"(?:tcp|udp|sctp)/([-\w]+)")
NOWHERE = "(matches no namespace)"  # how the listing marks a namespaceSelector gone stale
OLD = timedelta(days=7)
SETTLED = timedelta(hours=6)  # a policy unchanged for this long before the failures is no cause


def selects(policy: Policy, workload: Ref) -> bool:
    """Whether the policy applies to the workload's pods: all pods, the workloads the listing
    says it selects, else a selector label whose value is the workload's name."""
    if policy.namespace != workload.namespace:
        return False
    if policy.applies_to in ("", "all pods"):
        return True
    if policy.workloads:
        return any(w.partition("/")[2] == workload.name for w in policy.workloads)
    return workload.name in _LABEL_VALUE.findall(policy.applies_to)


def lets_dns_out(rule: str) -> bool:
    """Whether an egress rule (as k8s_list_network_policies words it) can let DNS out:
    port 53 or every port, to a peer that may be the resolver in kube-system (anywhere, a
    namespace selector, an address block); pods alone are the policy's own namespace."""
    ports = "53" in rule or "all ports" in rule
    return ports and any(peer in rule for peer in ("anywhere", "namespaces", " ip "))


def admits(rule: str, peer: Ref, home: str) -> bool | None:
    """Whether one rule (as k8s_list_network_policies writes it: "from namespaces ... and
    pods ... on TCP/8080", "to ip 10.0.0.0/8 on ...", "deny all") lets traffic with the
    workload `peer` through, `home` being the policy's namespace. None when the selectors
    cannot be evaluated from names alone. (Hosts and addresses: see `reaches`.)"""
    text = rule.lower()
    if text.startswith("deny"):
        return False
    if " anywhere" in text:
        return True
    head = text.split(" on ")[0]
    if NOWHERE in head:
        return False
    if " ip " in f" {head}":
        return None
    verdict: bool | None = True
    if "namespaces" in head:
        names = _NAMESPACE_NAME.findall(head)
        if names:
            verdict = peer.namespace in names
        elif "namespaces all" not in head:
            verdict = None
    elif peer.namespace != home:
        return False
    if "pods " in head and "pods all pods" not in head:
        values = _LABEL_VALUE.findall(head.split("pods ", 1)[1])
        if peer.name not in values:
            return False
    return verdict


def _address(host: str) -> bool:
    """Whether a host as a line names it is an IP address ("http://10.0.3.7:8080/")."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        return False
    return True


def _in(address: str, cidr: str) -> bool:
    try:
        return ipaddress.ip_address(address) in ipaddress.ip_network(cidr, strict=False)
    except ValueError:
        return False


def opens(ports: str, port: str) -> bool | None:
    """Whether a rule's ports ("TCP/5432, UDP/53", "all ports") let `port` through; None
    when that cannot be told (no port known, or a named port)."""
    if not ports.strip() or "all ports" in ports:
        return True
    listed = _PORT.findall(ports.lower())
    if port and port in listed:
        return True
    if not port or any(not p.isdigit() for p in listed):
        return None
    return False


def reaches(rule: str, address: str | None, port: str) -> tuple[bool | None, bool]:
    """Whether one egress rule lets traffic out to an address and port (address None: a host
    outside the cluster whose address is not known), and whether it names the address only
    to except it ("to ip 0.0.0.0/0 except 172.16.0.0/12"). Pod and namespace selectors
    cannot be judged against an address: unknown for a private one (it may be a pod's), no
    for a public one or a host outside the cluster."""
    text = rule.lower()
    if text.startswith("deny"):
        return False, False
    head, _, ports = text.partition(" on ")
    blocks = [(cidr, [e for e in excepts.split(",") if e]) for cidr, excepts in
              _BLOCK.findall(head)]
    excepted = address is not None and any(
        _in(address, cidr) and any(_in(address, e) for e in excepts) for cidr, excepts in blocks)
    port_open = opens(ports, port)
    if port_open is False:
        return False, excepted
    if " anywhere" in f" {head}":
        return port_open, excepted
    unknown = False
    for cidr, excepts in blocks:
        if address is None:  # everywhere ("0.0.0.0/0") holds it; a narrower block may
            if cidr.endswith("/0"):
                return port_open, False
            unknown = True
        elif _in(address, cidr) and not any(_in(address, e) for e in excepts):
            return port_open, excepted
    if address is not None and ("namespaces" in head or "pods" in head):
        try:
            unknown |= not ipaddress.ip_address(address).is_global
        except ValueError:
            unknown = True
    return (None if unknown else False), excepted


def _verdicts(policies: list[Policy], peer: Ref, egress: bool) -> list[bool | None]:
    return [admits(rule, peer, policy.namespace) for policy in policies
            for rule in (policy.egress if egress else policy.ingress) or ("deny all",)]


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    found: dict[Ref, Candidate] = {}
    seen = sightings(facts, scope, BLOCKED, ("x509", "certificate"))
    for sighting in seen:
        text = f"{sighting.pattern.example} {sighting.pattern.template}"
        caller = sighting.workload
        targets = [resolve(h, p, caller.namespace, facts) for h, p in hosts_in(text)]
        for target in targets:
            callee = target_workload(target, facts)
            if callee is not None and callee != caller:
                _ingress(facts, found, sighting, callee)
                _egress(facts, found, sighting, callee)
        if any(t.in_cluster for t in targets):
            continue
        outside = next((t for t in targets if t.external and not _address(t.host)), None)
        called = {t.host: t.port for t in targets if _address(t.host)}  # "http://10.0.3.7:80/"
        for address, port in addresses_in(text):
            called.setdefault(address, port)
        addresses = list(called.items())
        for address, port in addresses[:2]:
            callee = workload_at(address, facts)
            if callee is None:
                _egress_to(facts, found, sighting, address, port or (
                    outside.port if outside else ""), outside.host if outside else "")
            elif callee != caller:
                _ingress(facts, found, sighting, callee)
                _egress(facts, found, sighting, callee)
        if outside is not None and not addresses:
            _egress_to(facts, found, sighting, None, outside.port, outside.host)
    lookups = sightings(facts, scope, RESOLUTION)
    seen += lookups
    for sighting in lookups:
        for policy in facts.policies.values():
            if selects(policy, sighting.workload) and "Egress" in policy.types and not any(
                    lets_dns_out(rule) for rule in policy.egress):
                _blame(found, policy, sighting, 0.35,
                       f"NetworkPolicy {policy.name} restricts egress of "
                       f"{sighting.workload.name} without allowing DNS (port 53)",
                       "allow DNS (UDP and TCP port 53) to the cluster's resolver")
    for entry in found.values():
        victims = [s for s in seen if s.workload in entry.affects]
        _age(facts, entry, first_of([*[s.pattern.first for s in victims], scope.onset]))
        if len(entry.affects) >= 2 and victims:  # one policy, several workloads cut off
            names = [r.name for r in entry.affects]
            entry.clues.append(Clue(0.2, f"{len(names)} workloads it selects fail alike: "
                                    f"{', '.join(names[:4])}", tuple(names[:2]),
                                    victims[0].pattern.source, LOG_TOOLS, "policy-breadth"))
    return list(found.values())


def _ingress(facts: Facts, found: dict[Ref, Candidate], sighting: Sighting,
             callee: Ref) -> None:
    guards = [p for p in facts.policies.values() if selects(p, callee)
              and "Ingress" in p.types]
    if not guards:
        return
    verdicts = _verdicts(guards, sighting.workload, egress=False)
    if any(v is True for v in verdicts):
        return
    weight = 0.3 if all(v is False for v in verdicts) else 0.15
    for policy in guards:
        allowed = "; ".join(policy.ingress) or "nothing"
        _blame(found, policy, sighting, weight,
               f"NetworkPolicy {policy.name} guards {callee.name} and admits only "
               f"{allowed[:80]}: not {sighting.workload.name} from {sighting.workload.namespace}",
               f"admit {sighting.workload.name} from namespace {sighting.workload.namespace}")
        stale = next((rule for rule in policy.ingress if NOWHERE in rule.lower()), None)
        if stale is not None:  # meant to admit a peer, it admits none: the labels moved on
            entry = found[Ref("NetworkPolicy", policy.namespace, policy.name)]
            entry.clues.append(Clue(0.35, f"NetworkPolicy {policy.name}'s namespaceSelector "
                                    f"matches no namespace: {stale[:80]!r} admits nobody",
                                    (stale[:60],), policy.source, (POLICIES,), "policy-stale"))


def _egress(facts: Facts, found: dict[Ref, Candidate], sighting: Sighting,
            callee: Ref) -> None:
    caller = sighting.workload
    guards = [p for p in facts.policies.values() if selects(p, caller) and "Egress" in p.types]
    if not guards:
        return
    verdicts = _verdicts(guards, callee, egress=True)
    if any(v is True for v in verdicts):
        return
    weight = 0.3 if all(v is False for v in verdicts) else 0.15
    where = f"{callee.name} in {callee.namespace}"
    for policy in guards:
        allowed = "; ".join(policy.egress) or "nothing"
        _blame(found, policy, sighting, weight,
               f"NetworkPolicy {policy.name} limits what {caller.name} may reach ({allowed[:80]})"
               f": not {where}", f"let {caller.name} reach {where}")


def _egress_to(facts: Facts, found: dict[Ref, Candidate], sighting: Sighting,
               address: str | None, port: str, host: str) -> None:
    """A caller that cannot reach an address or a host outside the cluster: do the policies
    that select it let that traffic out?"""
    caller = sighting.workload
    guards = [p for p in facts.policies.values() if selects(p, caller) and "Egress" in p.types]
    verdicts = [reaches(rule, address, port) for p in guards for rule in p.egress or ("deny",)]
    if not guards or any(v is True for v, _ in verdicts):
        return
    shut = all(v is False for v, _ in verdicts) or any(excepted for _, excepted in verdicts)
    where = " ".join(w for w in (host, f"({address})" if host and address else address) if w)
    where += f" port {port}" if port else ""
    for policy in guards:
        allowed = "; ".join(policy.egress) or "nothing"
        _blame(found, policy, sighting, 0.3 if shut else 0.15,
               f"NetworkPolicy {policy.name} lets {caller.name} out only {allowed[:100]}: "
               f"not to {where}", f"let {caller.name} reach {where}")
        if (moved := _moved_peer(facts, policy, port)) is not None:
            stale, became = moved
            found[Ref("NetworkPolicy", policy.namespace, policy.name)].clues.append(Clue(
                0.35, f"its rule {stale!r} reaches pods of namespace {policy.namespace} only, "
                f"and {became} (a destination that moved)",
                (stale[:60],), policy.source, (POLICIES,), "policy-allowlist"))
        elif address is not None and (rule := _allowlist(policy, port)) is not None:
            found[Ref("NetworkPolicy", policy.namespace, policy.name)].clues.append(Clue(
                0.3, f"its rule {rule!r} lists the addresses {caller.name} may reach on port "
                f"{port}, and {address} is not one of them (a destination that moved)",
                (rule[:60],), policy.source, (POLICIES,), "policy-allowlist"))


_POD_LABELS = re.compile(r"^to pods ([^ ]+)")


def _moved_peer(facts: Facts, policy: Policy, port: str) -> tuple[str, str] | None:
    """An egress rule that opens this port to pods of the policy's own namespace by a label
    whose value names no running workload there (it runs no pod, or only in another
    namespace): the peer moved, and the rule (a bare podSelector) no longer reaches it.
    The rule, and what became of the peer."""
    here = {r.name for r, w in facts.workloads.items() if r.namespace == policy.namespace
            and (w.ready or w.desired)}
    for rule in policy.egress:
        if not _opens_port(rule, port) or (match := _POD_LABELS.match(rule.lower())) is None:
            continue
        values = {pair.partition("=")[2] for pair in match.group(1).split(",")}
        named = sorted(r.name for r in facts.workloads if r.name in values
                       and r.namespace == policy.namespace)
        elsewhere = sorted({r.namespace for r in facts.workloads if r.name in values
                            and r.namespace != policy.namespace})
        if values & here or not (named or elsewhere):
            continue
        return rule, (f"{named[0]} runs no pod in {policy.namespace}" if named
                      else f"it runs in {elsewhere[0]} now")
    return None


def _allowlist(policy: Policy, port: str) -> str | None:
    """The egress rule that opens this very port to named address blocks only: the
    allowlist meant for the destination, when the destination's address is outside it."""
    return next((rule for rule in policy.egress if _BLOCK.search(rule.lower())
                 and "/0" not in rule and _opens_port(rule, port)), None)


def _opens_port(rule: str, port: str) -> bool:
    """Whether an egress rule names this very port (not "all ports" by omission: a known
    port the rule's ports list lets through)."""
    return bool(port) and opens(rule.lower().partition(" on ")[2], port) is True


def _blame(found: dict[Ref, Candidate], policy: Policy, sighting: Sighting, weight: float,
           note: str, remedy: str) -> None:
    ref = Ref("NetworkPolicy", policy.namespace, policy.name)
    entry = found.setdefault(ref, Candidate("network", ref))
    rules = policy.ingress or policy.egress
    needle = (rules[0] if rules else policy.applies_to)[:60]
    entry.clues.append(Clue(weight, note, (f"name: {policy.name}", needle), policy.source,
                            (POLICIES,), "policy-rule"))
    entry.clues.append(Clue(0.4 * sighting.factor, f"{sighting.workload.name} logs "
                            f"{sighting.quote[:80]!r}", (sighting.quote,), sighting.pattern.source,
                            LOG_TOOLS, "policy-victim"))
    entry.affects = tuple(dict.fromkeys((*entry.affects, sighting.workload)))
    entry.fix = (f"Fix NetworkPolicy {policy.namespace}/{policy.name} to {remedy} (add the "
                 "missing rule), or roll it back if it was applied by mistake.")
    follow = Followup(OBJECT, {"kind": "NetworkPolicy", "name": policy.name,
                               "namespace": policy.namespace},
                      f"see when NetworkPolicy {policy.name} was created")
    if policy.created is None and follow not in entry.followups:
        entry.followups.append(follow)
    listing = Followup(POLICIES, {"namespace": policy.namespace},
                       f"read the rules of the policies in {policy.namespace}")
    if listing not in entry.followups:
        entry.followups.append(listing)


def _age(facts: Facts, entry: Candidate, onset: datetime | None) -> None:
    """A policy created or changed just before the failures began is the prime suspect; one
    left unchanged since long before them is not. Its times come from the listing (created,
    changed) or from k8s_get_object."""
    policy = facts.policies.get((entry.culprit.namespace, entry.culprit.name))
    read = facts.objects.get(entry.culprit)
    moments: list[tuple[datetime, str, str, Observation | None, str]] = []
    if policy is not None:
        moments += [(moment, what, stamp(moment), policy.source, POLICIES) for moment, what in
                    ((policy.created, "created"), (policy.changed, "changed")) if moment]
    if read is not None and read.created is not None:
        moments.append((read.created, "created", "creationTimestamp", read.source,
                        OBJECT))
    if not moments:
        return
    if any(c.topic in ("policy-stale", "policy-allowlist") for c in entry.clues):
        return  # what changed is the namespaces' labels or the destination's address, not
        # the policy: its age clears nothing
    moment, what, needle, source, tool = max(moments, key=lambda m: m[0])
    onset = first_of([signal_change(facts, r) for r in entry.affects]) or onset or facts.now
    if onset - timedelta(hours=2) <= moment <= min(onset + timedelta(minutes=15), facts.now):
        entry.clues.append(Clue(0.35, f"it was {what} at {moment:%H:%M}, just before the "
                                "failures began", (needle,), source, (tool,), "policy-new"))
    elif moment < onset - SETTLED:
        entry.demote(0.5 if facts.now - moment > OLD else 0.6,
                     "it was in place, unchanged, long before the failures began")
