"""One Service in depth: what its selector matches, what its endpoints hold, where its
ports lead.

`k8s_list_services` counts; when a Service is the suspect, the decisive facts are names:
which pods the selector matches (and which pods almost match, differing in one label: the
typo or the renamed label of a "selector matches nothing" outage), which addresses are
ready or not and whose they are, and whether each targetPort is a port those pods open.
"""

from __future__ import annotations

from typing import Any

from engines.errors import ToolError
from tools._k8s_common import (
    Owners,
    list_kinds,
    meta,
    name_of,
    pod_status,
    selector_matches,
    selector_text,
)
from tools._k8s_network import _rule_text
from tools._k8s_service_checks import protocol_mismatches, stray_workloads, unready_published
from tools._k8s_templates import containers_of
from tools._toolkit import check_namespace, cut, finish
from tools.context import ToolContext
from tools.registry import tool
from tools.sources.base import KubeObject


@tool(describe="Checking the endpoints of service {namespace}/{service}")
async def k8s_service_endpoints(ctx: ToolContext, namespace: str, service: str) -> dict[str, Any]:
    """Show one Service's selector and the pods it matches (ready or not, with their
    workload), pods that match all but one label of it, its Endpoints' ready and not-ready
    addresses with the pod behind each, each port's targetPort against the ports the
    matched pods' containers open, and the NetworkPolicies restricting ingress to them
    (and whether they admit only pods, which shuts out the API server).

    Args:
        namespace: The Service's namespace.
        service: The Service's name.
    """
    check_namespace(ctx, namespace)
    found = await ctx.cluster.get_object("Service", namespace, service)
    if found is None:
        (services,) = await list_kinds(ctx, namespace, "Service")
        names = ", ".join(sorted(name_of(s) for s in services)[:20]) or "none"
        raise ToolError(f"no Service {service!r} in {namespace}; Services there: {names}")
    endpoints = await ctx.cluster.get_object("Endpoints", namespace, service)
    pods, replicasets, jobs, policies = await list_kinds(ctx, namespace, "Pod", "ReplicaSet",
                                                         "Job", "NetworkPolicy")
    owners = Owners(replicasets, jobs)
    spec = found.get("spec") or {}
    result: dict[str, Any] = {"service": f"{namespace}/{service}",
                              "type": spec.get("type", "ClusterIP")}
    problems: list[str] = []
    selector = spec.get("selector") or {}
    matched: list[KubeObject] = []
    if spec.get("type") == "ExternalName":
        result["external_name"] = spec.get("externalName")
    elif selector:
        result["selector"] = selector_text(selector)
        matched = [p for p in pods if selector_matches(selector, meta(p).get("labels") or {})]
        result["matching_pods"] = cut([_pod_text(p, owners) for p in matched], 12) or "none"
        if not matched:
            problems.append(f"selector {result['selector']} matches no pod in {namespace}")
            near = _near_misses(selector, pods, owners)
            if near:
                result["almost_matching"] = cut(near, 6)
        elif not any(_ready(p) for p in matched):
            problems.append(f"none of the {len(matched)} matching pods is ready")
    else:
        result["selector"] = "none: endpoints are managed by hand"
    result["endpoints"], empty = _addresses(endpoints, pods)
    if empty and spec.get("type") != "ExternalName" and not problems:
        problems.append("no ready address: connections to this Service fail")
    ports, port_problems = _ports(spec.get("ports") or [], matched)
    result["ports"] = ports
    problems += port_problems + protocol_mismatches(spec.get("ports") or [], matched) + \
        stray_workloads(spec.get("ports") or [], matched, owners) + unready_published(found)
    if matched and (guarding := _guarding(policies, matched)):
        result["ingress_policies"] = cut([text for _, text in guarding], 6)
        if all(text.endswith("denies all ingress") for _, text in guarding):
            names = ", ".join(name for name, _ in guarding)
            problems.append(f"NetworkPolicy {names} selects these pods and admits no ingress: "
                            "connections to them are dropped")
        elif not _admits_outsiders(policies, matched):
            result["ingress_from"] = ("pods only (by pod or namespace selector): callers "
                                      "outside the pod network, such as the API server "
                                      "calling a webhook here, are dropped")
    if problems:
        result["problems"] = problems
    return finish(result, [found, *([endpoints] if endpoints else []), *matched])


def _ingress_guards(policies: list[KubeObject], pods: list[KubeObject]) -> list[KubeObject]:
    """The NetworkPolicies that restrict ingress to any of `pods`."""
    return [policy for policy in policies
            if "Ingress" in ((policy.get("spec") or {}).get("policyTypes") or ["Ingress"])
            and any(selector_matches((policy.get("spec") or {}).get("podSelector") or {},
                                     meta(p).get("labels") or {}) for p in pods)]


def _guarding(policies: list[KubeObject], pods: list[KubeObject]) -> list[tuple[str, str]]:
    """The NetworkPolicies that restrict ingress to any of `pods`, each in a few words.
    Policies add up: the pods admit what any of them allows, nothing when none allows."""
    found = []
    for policy in _ingress_guards(policies, pods):
        rules = (policy.get("spec") or {}).get("ingress") or []
        text = (f"{name_of(policy)}: denies all ingress" if not rules else
                f"{name_of(policy)}: " + "; ".join(_rule_text(r, "from", []) for r in rules[:3]))
        found.append((name_of(policy), text))
    return found


def _admits_outsiders(policies: list[KubeObject], pods: list[KubeObject]) -> bool:
    """Whether any ingress rule guarding `pods` admits a caller that is not a pod: a rule
    with no `from` (everyone) or with an ipBlock. Pod and namespace selectors match pods
    only, so the API server (calling an admission webhook) or a node is never among them."""
    return any(not (rule.get("from") or []) or any("ipBlock" in peer for peer in rule["from"])
               for policy in _ingress_guards(policies, pods)
               for rule in (policy.get("spec") or {}).get("ingress") or [])


def _ready(pod: KubeObject) -> bool:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return bool(statuses) and all(s.get("ready") for s in statuses)


def _pod_text(pod: KubeObject, owners: Owners) -> str:
    ip = (pod.get("status") or {}).get("podIP") or "no IP"
    state = "ready" if _ready(pod) else f"NOT READY ({pod_status(pod)})"
    return f"{name_of(pod)} {ip} {state} [{'/'.join(owners.workload(pod))}]"


def _near_misses(selector: dict[str, Any], pods: list[KubeObject], owners: Owners) -> list[str]:
    """Pods matching every label of a plain selector but one, said with the difference."""
    wanted = {k: v for k, v in selector.items() if isinstance(v, str)}
    if len(wanted) < 1:
        return []
    seen: dict[str, str] = {}
    for pod in pods:
        labels = meta(pod).get("labels") or {}
        wrong = [k for k, v in wanted.items() if labels.get(k) != v]
        if len(wrong) != 1 or (len(wanted) == 1 and wrong[0] not in labels):
            continue
        key = wrong[0]
        has = f"{key}={labels[key]}" if key in labels else f"no label {key}"
        workload = "/".join(owners.workload(pod))
        seen.setdefault(f"{workload}: {has} (selector wants {key}={wanted[key]})", workload)
    return list(seen)


def _addresses(endpoints: KubeObject | None, pods: list[KubeObject]) -> tuple[Any, bool]:
    """Ready and not-ready addresses with the pod behind each; (text, no ready address)."""
    if endpoints is None:
        return "no Endpoints object", True
    by_ip = {str((p.get("status") or {}).get("podIP")): name_of(p) for p in pods}
    ready: list[str] = []
    not_ready: list[str] = []
    for subset in endpoints.get("subsets") or []:
        ports = ",".join(str(p.get("port")) for p in subset.get("ports") or [])
        for bucket, key in ((ready, "addresses"), (not_ready, "notReadyAddresses")):
            for address in subset.get(key) or []:
                ip = str(address.get("ip"))
                target = (address.get("targetRef") or {}).get("name") or by_ip.get(ip, "?")
                bucket.append(f"{ip}:{ports} ({target})")
    shown: dict[str, Any] = {"ready": cut(ready, 10) or "none",
                             "not_ready": cut(not_ready, 10) or "none"}
    return shown, not ready


def _ports(ports: list[dict[str, Any]], pods: list[KubeObject]) -> tuple[list[str], list[str]]:
    """Each Service port → targetPort, and whether the matched pods open it."""
    numbers: dict[int, str] = {}
    names: dict[str, int] = {}
    for pod in pods:
        for container in containers_of(pod.get("spec") or {}):
            for port in container.get("ports") or []:
                number = int(port.get("containerPort", 0))
                numbers[number] = str(container.get("name"))
                if port.get("name"):
                    names[str(port["name"])] = number
    shown, problems = [], []
    for port in ports:
        target = port.get("targetPort", port.get("port"))
        label = f"{port['name']} " if port.get("name") else ""
        text = f"{label}{port.get('port')}→{target}"
        if not pods:
            shown.append(text)
            continue
        if isinstance(target, int) or str(target).isdigit():
            opened = int(str(target)) in numbers
        else:
            opened = str(target) in names
            if opened:
                text += f" (= {names[str(target)]})"
        if opened:
            shown.append(text + ": opened by the pods")
        elif numbers:
            shown.append(text + ": NOT a port of the pods")
            problems.append(f"targetPort {target} is not a port the matched pods open (they "
                            f"open {', '.join(map(str, sorted(numbers)))}"
                            f"{'; named ' + ', '.join(sorted(names)) if names else ''})")
        else:
            shown.append(text + ": the pods declare no ports")
    return shown, problems
