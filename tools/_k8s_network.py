"""Kubernetes tools about traffic: Services and their endpoints, NetworkPolicies, Ingresses.

Each says what is wrong in so many words ("selector matches no pod", "denies all ingress",
"backend service missing") because a list of selectors and ports is easy to read past.
"""

from __future__ import annotations

from typing import Any

from tools._k8s_common import (
    Owners,
    last_change,
    list_kinds,
    meta,
    name_of,
    namespace_of,
    selector_matches,
    selector_text,
    when,
)
from tools._k8s_service_checks import (
    port_problems,
    stray_workloads,
    topology_routing,
    unready_published,
    zone_skew,
)
from tools._toolkit import check_namespace, cut, finish
from tools.context import ToolContext
from tools.registry import tool
from tools.sources.base import KubeObject

ZONE_LABEL = "topology.kubernetes.io/zone"


def _where(arguments: dict[str, Any]) -> str:
    return arguments.get("namespace") or "all namespaces"


def _in(namespace: str, objects: list[KubeObject]) -> list[KubeObject]:
    return [o for o in objects if namespace_of(o) == namespace]


def _ready(pod: KubeObject) -> bool:
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    return bool(statuses) and all(s.get("ready") for s in statuses)


@tool(describe=lambda a: f"Checking services in {_where(a)}")
async def k8s_list_services(
    ctx: ToolContext, namespace: str | None = None, name: str | None = None
) -> dict[str, Any]:
    """List Services with their selector, ports, how many pods the selector matches (and how
    many are ready), endpoint counts, a node-local traffic policy, and problems: a selector
    that matches no pod, no ready endpoint, a targetPort the pods do not expose (or with
    another protocol), not-ready pods published behind a cluster IP, a Local traffic policy
    with ready pods on only some nodes, or none in a zone that has nodes (clients sent there
    reach nothing), zone-kept (topology-aware) routing over pods spread unevenly by zone.
    k8s_service_endpoints shows one Service's pods and addresses by name.

    Args:
        namespace: Namespace to list; omit for all namespaces.
        name: Only the Service with this name.
    """
    check_namespace(ctx, namespace)
    services, endpoints, pods, replicasets = await list_kinds(
        ctx, namespace, "Service", "Endpoints", "Pod", "ReplicaSet")
    owners = Owners(replicasets)
    nodes = await _ready_nodes(ctx) if any(
        "Local" in ((s.get("spec") or {}).get("internalTrafficPolicy"),
                    (s.get("spec") or {}).get("externalTrafficPolicy")) or topology_routing(s)
        for s in services) else {}
    rows = []
    for service in services:
        if name and name_of(service) != name:
            continue
        ns = namespace_of(service)
        endpoint = next((e for e in _in(ns, endpoints) if name_of(e) == name_of(service)), None)
        row = _service_row(service, endpoint, _in(ns, pods), with_namespace=namespace is None,
                           nodes=nodes, owners=owners)
        rows.append(("problems" not in row, name_of(service), row))
    rows.sort(key=lambda item: item[:2])
    result = {"total": len(rows), "with_problems": sum(1 for ok, *_ in rows if not ok),
              "services": cut([row for *_, row in rows], 40)}
    return finish(result, [*services, *endpoints])


async def _ready_nodes(ctx: ToolContext) -> dict[str, str]:
    """The Ready nodes, each with its zone ("" when unlabelled): what a node-local traffic
    policy is measured against."""
    (nodes,) = await list_kinds(ctx, None, "Node")
    return {name_of(n): str((meta(n).get("labels") or {}).get(ZONE_LABEL, ""))
            for n in nodes if any(c.get("type") == "Ready" and c.get("status") == "True"
                                  for c in (n.get("status") or {}).get("conditions") or [])}


def _local_traffic(service: KubeObject, ready: list[KubeObject], nodes: dict[str, str],
                   row: dict[str, Any]) -> list[str]:
    """A node-local traffic policy: shown, and a problem when the ready pods miss some of
    the places traffic arrives at (nodes for the internal policy, zones for the external
    one)."""
    spec = service.get("spec") or {}
    policies = [f"{side}: Local" for side, key in (("internal", "internalTrafficPolicy"),
                                                   ("external", "externalTrafficPolicy"))
                if spec.get(key) == "Local"]
    if not policies:
        return []
    row["traffic_policy"] = ", ".join(policies)
    hosts = sorted({str((p.get("spec") or {}).get("nodeName")) for p in ready
                    if (p.get("spec") or {}).get("nodeName")})
    if not hosts:
        return []
    problems = []
    if spec.get("internalTrafficPolicy") == "Local" and len(hosts) < len(nodes):
        problems.append(f"internalTrafficPolicy Local, and its ready pods run on {len(hosts)} "
                        f"of {len(nodes)} nodes ({', '.join(hosts[:4])}): callers on the other "
                        "nodes reach no endpoint")
    if spec.get("externalTrafficPolicy") == "Local" and \
            spec.get("type") in ("LoadBalancer", "NodePort") and not _cross_zone(service):
        zones = sorted(set(nodes.values()) - {""})
        served = sorted({nodes.get(h, "") for h in hosts} - {""})
        if len(zones) > 1 and (empty := [z for z in zones if z not in served]):
            problems.append(
                f"externalTrafficPolicy Local, and its ready pods run on {len(hosts)} of "
                f"{len(nodes)} nodes, none in {', '.join(empty)} (zones with pods: "
                f"{', '.join(served) or 'none labelled'}): the load balancer's health check "
                f"fails on nodes there and, with no cross-zone load balancing, clients it "
                f"sends to {empty[0]} reach no endpoint")
    return problems


def _cross_zone(service: KubeObject) -> bool:
    """Whether the Service asks its cloud load balancer to send traffic across zones."""
    return any("cross-zone" in key and str(value).lower() == "true"
               for key, value in (meta(service).get("annotations") or {}).items())


def _service_row(service: KubeObject, endpoint: KubeObject | None, pods: list[KubeObject],
                 *, with_namespace: bool, nodes: dict[str, str] | None = None,
                 owners: Owners | None = None) -> dict[str, Any]:
    spec = service.get("spec") or {}
    row: dict[str, Any] = {"name": name_of(service)}
    if with_namespace:
        row["namespace"] = namespace_of(service)
    row["type"] = spec.get("type", "ClusterIP")
    if (address := spec.get("clusterIP")) and address != "None":
        row["cluster_ip"] = address  # what a caller's "connect ETIMEDOUT 10.0.3.7:80" names
    row["ports"] = [f"{p.get('port')}→{p.get('targetPort', p.get('port'))}/"
                    f"{p.get('protocol', 'TCP')}" for p in spec.get("ports") or []]
    problems = []
    if spec.get("type") == "ExternalName":
        row["external_name"] = spec.get("externalName")
        return row
    selector = spec.get("selector")
    if selector:
        row["selector"] = selector_text(selector)
        matched = [p for p in pods if selector_matches(selector, meta(p).get("labels") or {})]
        ready = [p for p in matched if _ready(p)]
        row["pods"] = f"{len(ready)} ready of {len(matched)} matching"
        if not matched:
            problems.append(f"selector {row['selector']} matches no pod in the namespace")
        elif not ready:
            problems.append(f"none of the {len(matched)} matching pods is ready")
        problems += port_problems(spec.get("ports") or [], matched)
        problems += stray_workloads(spec.get("ports") or [], matched, owners or Owners([]))
        problems += _local_traffic(service, ready, nodes or {}, row)
        problems += unready_published(service)
        problems += zone_skew(service, ready, nodes or {})
    addresses = not_ready = 0
    for subset in (endpoint or {}).get("subsets") or []:
        addresses += len(subset.get("addresses") or [])
        not_ready += len(subset.get("notReadyAddresses") or [])
    row["endpoints"] = {"ready": addresses, "not_ready": not_ready}
    if not addresses and not selector:
        problems.append("no selector and no ready endpoint")
    elif not addresses and not problems:
        problems.append("no ready endpoint: traffic to this Service fails")
    if spec.get("type") == "LoadBalancer" and not (
        (service.get("status") or {}).get("loadBalancer") or {}
    ).get("ingress"):
        problems.append("LoadBalancer has no external address yet")
    if problems:
        row["problems"] = list(dict.fromkeys(problems))
    return row


@tool(describe=lambda a: f"Checking network policies in {_where(a)}")
async def k8s_list_network_policies(
    ctx: ToolContext, namespace: str | None = None
) -> dict[str, Any]:
    """List NetworkPolicies: which pods (and workloads) each selects, what ingress/egress it
    allows, when it was created and last changed, and warnings such as "denies all ingress"
    or "egress allowed but not DNS (port 53)".

    Args:
        namespace: Namespace to list; omit for all namespaces.
    """
    check_namespace(ctx, namespace)
    policies, pods, replicasets = await list_kinds(ctx, namespace, "NetworkPolicy", "Pod",
                                                   "ReplicaSet")
    spaces = [meta(n).get("labels") or {} for n in (await list_kinds(ctx, None, "Namespace"))[0]]
    owners = Owners(replicasets)
    rows = []
    for policy in policies:
        spec = policy.get("spec") or {}
        selector = spec.get("podSelector") or {}
        selected = [p for p in _in(namespace_of(policy), pods)
                    if selector_matches(selector, meta(p).get("labels") or {})]
        types = spec.get("policyTypes") or (["Ingress", "Egress"] if spec.get("egress")
                                            else ["Ingress"])
        row: dict[str, Any] = {"name": name_of(policy)}
        if namespace is None:
            row["namespace"] = namespace_of(policy)
        row |= {"applies_to": selector_text(selector), "selected_pods": len(selected),
                "types": types}
        if selector.get("matchLabels") or selector.get("matchExpressions"):
            chosen = dict.fromkeys("/".join(owners.workload(p)) for p in selected)
            row["selected_workloads"] = cut(list(chosen), 8)
        if created := when(meta(policy).get("creationTimestamp"), ctx.now):
            row["created"] = created
        if changed := last_change(policy):
            row["changed"] = f"{when(changed[0], ctx.now)} by {changed[1]}"
        warnings = []
        for direction, key, peer, side in (("Ingress", "ingress", "from", "to"),
                                           ("Egress", "egress", "to", "from")):
            if direction not in types:
                continue
            rules = spec.get(key) or []
            if not rules:
                warnings.append(f"denies all {key} {side} the selected pods")
                row[key] = "deny all"
                continue
            row[key] = cut([_rule_text(rule, peer, spaces) for rule in rules], 6)
            if any("(matches no namespace)" in text for text in row[key]):
                warnings.append(f"a namespaceSelector of its {key} rules matches no namespace:"
                                " that peer is admitted nowhere")
            if key == "egress" and not any(_allows_dns(rule) for rule in rules):
                warnings.append("egress is restricted and no rule allows DNS (port 53)")
        if warnings:
            row["warnings"] = warnings
        rows.append(row)
    result = {"total": len(rows), "policies": cut(rows, 30)}
    if not rows:
        result["note"] = "no NetworkPolicy: all traffic is allowed"
    return finish(result, policies)


def _rule_text(rule: dict[str, Any], peer: str, spaces: list[dict[str, str]]) -> str:
    """A rule in words; a namespaceSelector that no namespace's labels match (when the
    namespaces are known) says so: that peer admits nothing."""
    peers = []
    for item in rule.get(peer) or []:
        if "ipBlock" in item:
            block = item["ipBlock"]
            text = f"ip {block.get('cidr')}"
            if block.get("except"):
                text += f" except {','.join(block['except'])}"
            peers.append(text)
            continue
        parts = []
        if "namespaceSelector" in item:
            chosen = item["namespaceSelector"]
            parts.append(f"namespaces {selector_text(chosen)}".replace("all pods", "all")
                         + (" (matches no namespace)" if spaces and chosen and not any(
                             selector_matches(chosen, labels) for labels in spaces) else ""))
        if "podSelector" in item:
            parts.append(f"pods {selector_text(item['podSelector'])}")
        peers.append(" and ".join(parts))
    ports = [f"{p.get('protocol', 'TCP')}/{p.get('port', 'any')}" for p in rule.get("ports") or []]
    where = ", ".join(peers) if peers else "anywhere"
    return f"{peer} {where} on {', '.join(ports) if ports else 'all ports'}"


def _allows_dns(rule: dict[str, Any]) -> bool:
    """Whether an egress rule can let DNS out: port 53 (or every port) to a peer that may be
    the cluster's resolver in kube-system. A peer of pods alone is the policy's own
    namespace, so `to: [{podSelector: {}}]` on all ports still cuts DNS off."""
    ports = rule.get("ports") or []
    if ports and not any(str(p.get("port")) in ("53", "dns", "dns-tcp") for p in ports):
        return False
    peers = rule.get("to") or []
    return not peers or any("namespaceSelector" in p or "ipBlock" in p for p in peers)


def _exact_directory(host: str, path: dict[str, Any], target: str) -> list[str]:
    """A path that ends in "/" (a directory, "/" itself) matched with pathType Exact: only
    that one URL reaches the backend, every path below it falls to the controller's default
    backend and gets 404. Meant as a prefix, it almost always is."""
    where = str(path.get("path") or "/")
    if path.get("pathType") != "Exact" or not where.endswith("/"):
        return []
    return [f"path {where} of {host} has pathType: Exact: only {where} itself reaches Service "
            f"{target}; every path below it gets the default backend's 404"]


@tool(describe=lambda a: f"Checking ingresses in {_where(a)}")
async def k8s_list_ingresses(ctx: ToolContext, namespace: str | None = None) -> dict[str, Any]:
    """List Ingresses: hosts and paths with their backend Service (missing backends, and
    directories matched Exact, flagged), TLS hosts with the name of their certificate
    Secret, and the load balancer address. Certificates live in Secrets, never read.

    Args:
        namespace: Namespace to list; omit for all namespaces.
    """
    check_namespace(ctx, namespace)
    ingresses, services = await list_kinds(ctx, namespace, "Ingress", "Service")
    rows = []
    for ingress in ingresses:
        spec, ns = ingress.get("spec") or {}, namespace_of(ingress)
        known = {name_of(s) for s in _in(ns, services)}
        row: dict[str, Any] = {"name": name_of(ingress)}
        if namespace is None:
            row["namespace"] = ns
        if cls := spec.get("ingressClassName") or (meta(ingress).get("annotations") or {}).get(
                "kubernetes.io/ingress.class"):
            row["class"] = cls
        routes, missing, problems = [], [], []
        for rule in spec.get("rules") or []:
            for path in (rule.get("http") or {}).get("paths") or []:
                backend = (path.get("backend") or {}).get("service") or {}
                port = backend.get("port") or {}
                target = backend.get("name", "?")
                routes.append(f"{rule.get('host', '*')}{path.get('path', '/')} → {target}:"
                              f"{port.get('number') or port.get('name') or '?'}")
                if target not in known:
                    missing.append(target)
                problems += _exact_directory(rule.get("host", "*"), path, target)
        row["routes"] = cut(routes, 12)
        if tls := spec.get("tls"):
            row["tls"] = [{"hosts": t.get("hosts") or [], "secretName": t.get("secretName")}
                          for t in tls]
        address = ((ingress.get("status") or {}).get("loadBalancer") or {}).get("ingress") or []
        row["address"] = [a.get("ip") or a.get("hostname") for a in address] or "none yet"
        problems += [f"backend service {m} does not exist in {ns}" for m in dict.fromkeys(missing)]
        if problems:
            row["problems"] = problems
        rows.append(row)
    result: dict[str, Any] = {"total": len(rows), "ingresses": cut(rows, 30)}
    if any("tls" in r for r in rows):
        result["note"] = ("certificate validity cannot be checked here (Secrets are never read): "
                          "look for x509 or TLS errors in logs")
    return finish(result, ingresses)
