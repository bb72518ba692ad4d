"""The evidence tools' findings as anomalies on nodes, and when to ask for them.

Four tools read what no listing shows (tools/_k8s_admission.py, _k8s_storage.py,
_k8s_config.py, _k8s_endpoints.py), and each ends in findings or problems, said in words:
- a LimitRange's default limits on a workload that declares none: the OOM kills or the
  throttling it shows are the admission's doing (oom_killed, cpu_throttling, fixed by
  declaring limits); a LimitRange bound that refuses its pods is quota_exceeded;
- a claim (or a StatefulSet's volumeClaimTemplate) naming a StorageClass that does not
  exist keeps the pods Pending: unschedulable, the StatefulSet's; a volume that is full is
  the resource_exhaustion of the workload that mounts it, not of its callers;
- a client's trust bundle that changed after its pods loaded it, or whose certificates
  expired, is the client's certificate fault, not its server's;
- a Service whose selector matches no pod, or whose targetPort no pod opens, is the
  network fault its callers' failed calls show; so is an Ingress path to it that matches
  only its exact directory.
`detect` makes those candidates; `wanted` is the call that would show each, asked when a
node's state calls for it (planner.hints).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from engines.analyzer.candidates import Candidate, Clue
from engines.analyzer.detectors._common import (
    ADMISSION,
    CLAIMS,
    ENDPOINTS,
    INGRESSES,
    MOUNTS,
    level_of,
    pattern_workloads,
    phrase_in,
)
from engines.analyzer.detectors.network import own_fault, remark_only, scaled_to_zero
from engines.analyzer.facts import ROLLING, Facts, Ref, as_dicts, as_strs, ref_of
from engines.analyzer.scope import Scope
from engines.analyzer.transcript import Observation

TRUST = ("certificate signed by unknown authority", "unknown authority", "unknown ca",
         "certificate verify failed", "certificate_verify_failed", "pkix path",
         "unable to find valid certification path", "self signed certificate in",
         "x509: certificate has expired", "certificate has expired")
BOUNDS = ("limitrange", "maximum cpu", "maximum memory", "minimum cpu", "minimum memory")
REFUSED = ("such pods are refused", "citing a LimitRange bound")


def _clue(found: dict[tuple[str, Ref], Candidate], category: str, ref: Ref, weight: float,
          text: str, obs: Observation, fix: str) -> None:
    entry = found.setdefault((category, ref), Candidate(category, ref, fix=fix))
    entry.clues.append(Clue(weight, text[:120], (text[:60],), obs, (obs.tool,),
                            f"evidence-{obs.tool}-{text[:30]}"))


def detect(facts: Facts, scope: Scope) -> list[Candidate]:
    found: dict[tuple[str, Ref], Candidate] = {}
    for obs in facts.observations:
        if not obs.ok or not isinstance(obs.data, dict):
            continue
        namespace = str(obs.arguments.get("namespace") or "")
        reader = READERS.get(obs.tool)
        if reader is not None:
            reader(facts, obs, namespace, found)
    return list(found.values())


def _admission(facts: Facts, obs: Observation, namespace: str,
               found: dict[tuple[str, Ref], Candidate]) -> None:
    ref = ref_of(obs.data.get("workload"), namespace)
    if ref is None:
        return
    exits = " ".join(str(c.get("last_exit") or "") for c in as_dicts(obs.data.get("containers")))
    workload = facts.workloads.get(ref)
    oom = "OOMKilled" in exits or bool(workload and workload.exit_reasons.get("OOMKilled"))
    signals = facts.signals_of(ref)
    throttled = signals is not None and bool(signals.get("cpu").get("abnormal"))
    fix = (f"Declare requests and limits in {ref.kind} {ref.namespace}/{ref.name} itself (or "
           "change the namespace's LimitRange): the values it runs with are the LimitRange's.")
    for finding in as_strs(obs.data.get("findings")):
        if any(r in finding for r in REFUSED):
            _clue(found, "quota_exceeded", ref, 0.6, finding, obs, fix)
        elif "from LimitRange" in finding and "limits.memory" in finding and oom:
            _clue(found, "oom_killed", ref, 0.45, finding, obs, fix)
        elif "from LimitRange" in finding and "limits.cpu" in finding and throttled:
            _clue(found, "cpu_throttling", ref, 0.45, finding, obs, fix)


def _claims(facts: Facts, obs: Observation, namespace: str,
            found: dict[tuple[str, Ref], Candidate]) -> None:
    for row in as_dicts(obs.data.get("claim_templates")):
        ns = str(row.get("namespace") or namespace)
        if row.get("problem") and (ref := ref_of(f"StatefulSet/{row.get('statefulset')}", ns)) \
                and _short(facts, ref):
            _clue(found, "unschedulable", ref, 0.6, str(row["problem"]), obs,
                  f"Point the volumeClaimTemplate of {ref} at a StorageClass that exists "
                  "(the template cannot be edited: recreate the StatefulSet with "
                  "--cascade=orphan), or recreate the missing class.")
    for row in as_dicts(obs.data.get("claims")):
        ns = str(row.get("namespace") or namespace)
        users = {w for pod in as_strs(row.get("used_by"))
                 if (w := facts.workload_of_pod(ns, pod)) is not None}
        for problem in as_strs(row.get("problems")):
            if "full" in problem:
                for ref in users:
                    _clue(found, "resource_exhaustion", ref, 0.6, problem, obs,
                          f"Grow or clean the volume {row.get('name')} that {ref.name} writes "
                          "to; its callers' errors follow from its failed writes.")


def _short(facts: Facts, ref: Ref) -> bool:
    """Whether the workload waits for replicas (or is not known well enough to tell): a
    template that could not make a claim only matters to a replica that wants one."""
    workload = facts.workloads.get(ref)
    return workload is None or workload.desired is None or workload.ready is None or \
        workload.ready < workload.desired


def _mounts(facts: Facts, obs: Observation, namespace: str,
            found: dict[tuple[str, Ref], Candidate]) -> None:
    ref = ref_of(obs.data.get("workload"), namespace)
    if ref is None:
        return
    refuses = next((p for p in facts.patterns if ref in pattern_workloads(p, facts)[:1]
                    and level_of(p) not in ("info", "debug") and phrase_in(p.text, TRUST)), None)
    stale = [f for f in as_strs(obs.data.get("findings"))
             if "changed after" in f or "expired" in f]
    if refuses is None or not stale:
        return
    fix = (f"Restart {ref.kind} {ref.namespace}/{ref.name} so it loads its current trust "
           "bundle (or put the new CA in it); the server's certificate needs no change.")
    for finding in stale:
        _clue(found, "certificate", ref, 0.55, finding, obs, fix)
    quote = refuses.example or refuses.template
    found[("certificate", ref)].clues.append(Clue(
        0.4, f"{ref.name} refuses its peer's certificate: {quote[:80]!r}",
        (quote[:60],), refuses.source, (refuses.source.tool,) if refuses.source else (),
        "trust-refused"))


def _endpoints(facts: Facts, obs: Observation, namespace: str,
               found: dict[tuple[str, Ref], Candidate]) -> None:
    service = str(obs.data.get("service") or "")
    ns, _, name = service.partition("/")
    for problem in as_strs(obs.data.get("problems")):
        if own_fault([problem]):
            # an undeclared numeric port or published not-ready pods: a remark alone, which
            # the network detector already weighs against callers for a Service listed
            if remark_only(problem) and (ns or namespace, name) in facts.services:
                continue
            weight = 0.3 if remark_only(problem) else 0.65
            if "matches no pod" in problem and scaled_to_zero(facts, ns or namespace, name):
                weight = 0.2  # the workload is scaled to zero: it is what is down
            _clue(found, "network", Ref("Service", ns or namespace, name), weight, problem, obs,
                  f"Fix Service {ns}/{name} so that its selector, targetPort and protocol "
                  "match the pods meant to serve it (their labels and container ports).")


_EXACT = re.compile(r"^path (\S+) of \S+ has pathType: Exact: only \S+ itself reaches Service "
                    r"([a-z0-9][-a-z0-9.]*);")


def _ingresses(facts: Facts, obs: Observation, namespace: str,
               found: dict[tuple[str, Ref], Candidate]) -> None:
    """An Ingress that routes only the exact directory it names: the requests below it get
    the default backend's 404, the fault of the route to that Service, not of its pods."""
    for row in as_dicts(obs.data.get("ingresses")):
        ns = str(row.get("namespace") or namespace)
        for problem in as_strs(row.get("problems")):
            if (match := _EXACT.match(problem)) is None:
                continue
            _clue(found, "network", Ref("Service", ns, match.group(2)), 0.6, problem, obs,
                  f"Set the pathType of Ingress {ns}/{row.get('name')}'s path {match.group(1)} "
                  f"back to Prefix, so the paths below it reach Service {match.group(2)} again; "
                  "its pods need no change.")


READERS = {ADMISSION: _admission, CLAIMS: _claims, MOUNTS: _mounts, ENDPOINTS: _endpoints,
           INGRESSES: _ingresses}


def wanted(facts: Facts, ranked: Sequence[Candidate]) -> Iterable[tuple[str, dict[str, str],
                                                                       str]]:
    """The evidence call that would explain a leading node's state: the LimitRanges of an
    OOM-killed, throttled or refused workload; the claims of a namespace whose pods stay
    Pending on volumes, or of a workload out of disk space; what a client refusing its
    peer's certificate trusts; the endpoints of a Service its callers fail to reach."""
    for candidate in ranked[:3]:
        ref = candidate.culprit
        if candidate.category in ("oom_killed", "cpu_throttling", "quota_exceeded"):
            yield ADMISSION, {"namespace": ref.namespace, "pod": ref.name}, \
                f"see whether a LimitRange set or bounds {ref.name}'s resources"
        if candidate.category == "resource_exhaustion" and any(
                c.topic == "exhausted-disk space" for c in candidate.clues):
            yield CLAIMS, {"namespace": ref.namespace}, \
                f"see whether the volumes {ref.name} writes to are full"
        if candidate.category == "certificate":
            for client in (*candidate.affects, ref):
                if client.kind in ROLLING:
                    yield MOUNTS, {"namespace": client.namespace, "workload": client.name}, \
                        f"see which CA bundle {client.name} trusts, and since when"
        if candidate.category in ("dependency_failure", "network"):
            listed = {ns for ns, _ in facts.services}
            for callee in (*candidate.blames, ref):
                # a Service known by name, or a callee in a namespace whose Services are unread
                if (callee.namespace, callee.name) in facts.services or (
                        callee in candidate.blames and callee.namespace not in listed):
                    yield ENDPOINTS, {"namespace": callee.namespace, "service": callee.name}, \
                        f"see which pods Service {callee.name} reaches"
    for event in facts.events:
        low = event.message.lower()
        if event.type == "Warning" and ("persistentvolumeclaim" in low or any(
                w in low for w in BOUNDS)):
            tool = CLAIMS if "persistentvolumeclaim" in low else ADMISSION
            target = {"pod": event.name} if tool == ADMISSION else {}
            yield tool, {"namespace": event.namespace, **target}, \
                f"see what {event.reason} of {event.name} says about its admission or volumes"
