"""network (NetworkPolicies): a policy that blocks traffic a workload needs.

Signals: callers time out or are refused reaching an in-cluster Service, and a policy in
the Service's namespace selects its pods and admits no rule for the caller (ingress), or
a policy restricts the caller's egress without DNS while it logs DNS failures. A policy
created shortly before the trouble began (read with k8s_get_object) is the prime suspect;
one that has been there for weeks is not.
"""

from __future__ import annotations

import re
from datetime import timedelta

from engines.analyzer.candidates import Candidate, Clue, Followup
from engines.analyzer.detectors._common import LOG_TOOLS, POLICIES, first_of, signal_change
from engines.analyzer.detectors._logs import Sighting, sightings
from engines.analyzer.detectors._targets import hosts_in, resolve, target_workload
from engines.analyzer.detectors.network import BLOCKED, DNS, DNS_LOOKUP
from engines.analyzer.facts import Facts, Policy, Ref
from engines.analyzer.scope import Scope

_NAMESPACE_NAME = re.compile(r"kubernetes\.io/metadata\.name=([-\w.]+)")
_LABEL_VALUE = re.compile(r"[-\w./]+=([-\w.]+)")
OLD = timedelta(days=7)


def selects(policy: Policy, workload: Ref) -> bool:
    if policy.namespace != workload.namespace:
        return False
    if policy.applies_to in ("", "all pods"):
        return True
    return workload.name in _LABEL_VALUE.findall(policy.applies_to)


def admits(rule: str, peer: Ref | None, home: str) -> bool | None:
    """Whether one rule (as k8s_list_network_policies writes it: "from namespaces ... and
    pods ... on TCP/8080", "to ip 10.0.0.0/8 on ...", "deny all") lets traffic with `peer`
    through; `peer` None is a host outside the cluster, `home` the policy's namespace.
    None when the selectors cannot be evaluated from names alone."""
    text = rule.lower()
    if text.startswith("deny"):
        return False
    if " anywhere" in text:
        return True
    head = text.split(" on ")[0]
    if peer is None:
        return "0.0.0.0/0" in head
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


def _verdicts(policies: list[Policy], peer: Ref | None, egress: bool) -> list[bool | None]:
    return [admits(rule, peer, policy.namespace) for policy in policies
            for rule in (policy.egress if egress else policy.ingress) or ("deny all",)]


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    found: dict[Ref, Candidate] = {}
    for sighting in sightings(facts, scope, BLOCKED, ("x509", "certificate")):
        for host, port in hosts_in(f"{sighting.pattern.example} {sighting.pattern.template}"):
            target = resolve(host, port, sighting.workload.namespace, facts)
            callee = target_workload(target, facts)
            if callee is not None and callee != sighting.workload:
                _ingress(facts, found, sighting, callee)
            if callee != sighting.workload and (callee is not None or target.external):
                _egress(facts, found, sighting, callee)
    for sighting in sightings(facts, scope, DNS + DNS_LOOKUP):
        for policy in facts.policies.values():
            if selects(policy, sighting.workload) and "Egress" in policy.types and not any(
                    "53" in rule or "all ports" in rule for rule in policy.egress):
                _blame(found, policy, sighting, 0.35,
                       f"NetworkPolicy {policy.name} restricts egress of "
                       f"{sighting.workload.name} without allowing DNS (port 53)",
                       "allow DNS (UDP and TCP port 53) to the cluster's resolver")
    for entry in found.values():
        _age(facts, entry)
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


def _egress(facts: Facts, found: dict[Ref, Candidate], sighting: Sighting,
            callee: Ref | None) -> None:
    caller = sighting.workload
    guards = [p for p in facts.policies.values() if selects(p, caller) and "Egress" in p.types]
    if not guards:
        return
    verdicts = _verdicts(guards, callee, egress=True)
    if any(v is True for v in verdicts):
        return
    weight = 0.3 if all(v is False for v in verdicts) else 0.15
    where = f"{callee.name} in {callee.namespace}" if callee else "hosts outside the cluster"
    for policy in guards:
        allowed = "; ".join(policy.egress) or "nothing"
        _blame(found, policy, sighting, weight,
               f"NetworkPolicy {policy.name} limits what {caller.name} may reach ({allowed[:80]})"
               f": not {where}", f"let {caller.name} reach {where}")


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
    follow = Followup("k8s_get_object", {"kind": "NetworkPolicy", "name": policy.name,
                                         "namespace": policy.namespace},
                      f"see when NetworkPolicy {policy.name} was created")
    if follow not in entry.followups:
        entry.followups.append(follow)
    listing = Followup(POLICIES, {"namespace": policy.namespace},
                       f"read the rules of the policies in {policy.namespace}")
    if listing not in entry.followups:
        entry.followups.append(listing)


def _age(facts: Facts, entry: Candidate) -> None:
    read = facts.objects.get(entry.culprit)
    if read is None or read.created is None:
        return
    onset = first_of([signal_change(facts, r) for r in entry.affects]) or facts.now
    if read.created >= onset - timedelta(hours=2) and read.created <= facts.now:
        entry.clues.append(Clue(0.35, f"it was created at {read.created:%H:%M}, just before "
                                "the failures began", ("creationTimestamp",), read.source,
                                ("k8s_get_object",), "policy-new"))
    elif facts.now - read.created > OLD:
        entry.demote(0.5, "it has been in place for a long time")
