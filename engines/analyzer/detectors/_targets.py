"""Who calls whom: the hosts that error messages name, resolved against the cluster.

"dial tcp 10.0.3.7:5432: connect: connection refused", "upstream checkout.shop.svc:80
socket hang up", "could not connect to server at db.example.com": a caller's errors name
its dependency. A host ending in .svc / .cluster.local, or equal to a Service or workload
name of the caller's namespace, is in the cluster; a dotted name that is neither is
outside it. The ranking uses these links so that a callee's fault stays relevant to a
report that names only its caller.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from engines.analyzer.detectors._common import pattern_workloads, phrase_in, pod_workload
from engines.analyzer.detectors._resolvers import servers
from engines.analyzer.facts import ROLLING, Facts, Ref, owns

_URL = re.compile(r"\b[a-z][a-z0-9+.-]*://(?:[^@/\s]+@)?([A-Za-z0-9][-A-Za-z0-9_.]*)", re.I)
# gRPC name-resolver targets: "dns:///geo.maps.svc:9090", "dns://8.8.8.8/api.example.com"
_GRPC_TARGET = re.compile(r"\bdns:(?://[^/\s]*)?/([A-Za-z0-9][-A-Za-z0-9_.]*)(?::(\d{2,5}))?", re.I)
_HOST_PORT = re.compile(r"(?<![\w./-])([A-Za-z][-A-Za-z0-9_.]*[A-Za-z0-9]):(\d{2,5})\b")
_AT_HOST = re.compile(r"\b(?:to|at|host|server|on|from|lookup|dial tcp|connect to|connecting to)"
                      r"\s+[\"'`(]?([A-Za-z][-A-Za-z0-9_]*(?:\.[-A-Za-z0-9_]+)+)", re.I)
_NOT_HOSTS = re.compile(r"\.(java|py|go|js|ts|rb|kt|scala|class|yaml|yml|json|conf|log|txt|sql"
                        r"|sh|so|jar|html|xml)$|^(java|javax|org|com|io|net|sun|jdk)\.[a-z]+\.",
                        re.I)
RESOLUTION_FAILURES = ("no such host", "nxdomain", "name resolution", "server misbehaving",
                       "could not resolve", "unknown host", "temporary failure in name",
                       "failed to resolve", "unable to resolve", "eai_again", "servfail",
                       "dial tcp: lookup", ":53: i/o timeout", ":53: read udp")
IN_CLUSTER = (".svc", ".svc.cluster.local", ".cluster.local", ".pod.cluster.local")
_ADDRESS = re.compile(r"(?<![\w.:/-])(\d{1,3}(?:\.\d{1,3}){3})(?::(\d{1,5}))?(?![\w.])")
_UPSTREAM = re.compile(r"\b(?:upstream|backend|back-end|downstream service)\b", re.I)
_FAILED = re.compile(r"timed? ?out|timeout|refused|unavailable|reset|\b50[234]\b|unreachable",
                     re.I)


@dataclass(frozen=True, slots=True)
class Target:
    """A host named in a message: where it points, if it is in the cluster."""

    host: str
    port: str = ""
    namespace: str = ""
    service: str = ""
    external: bool = False

    @property
    def in_cluster(self) -> bool:
        return bool(self.service)


def hosts_in(text: str) -> list[tuple[str, str]]:
    """(host, port) pairs named in a message, most specific first, without duplicates."""
    found: dict[str, str] = {}
    for match in _URL.finditer(text):
        found.setdefault(match.group(1).lower(), "")
    for match in _GRPC_TARGET.finditer(text):
        found[match.group(1).lower()] = match.group(2) or ""
    for match in _HOST_PORT.finditer(text):
        found[match.group(1).lower()] = match.group(2)
    for match in _AT_HOST.finditer(text):
        found.setdefault(match.group(1).lower().rstrip("."), "")
    return [(h, p) for h, p in found.items() if not _NOT_HOSTS.search(h) and len(h) > 2]


def addresses_in(text: str) -> list[tuple[str, str]]:
    """(IPv4 address, port) pairs named in a message ("connect ETIMEDOUT 172.16.8.4:5432",
    "handshake error from 10.244.0.229:52005"), without duplicates; port "" if none."""
    found: dict[str, str] = {}
    for match in _ADDRESS.finditer(text):
        if all(int(part) < 256 for part in match.group(1).split(".")):
            found[match.group(1)] = found.get(match.group(1)) or match.group(2) or ""
    return list(found.items())


def workload_at(ip: str, facts: Facts) -> Ref | None:
    """The workload of the pod known to have this IP (k8s_list_pods asked by ip); none when
    the IP is a node's, shared by the pods on its host network."""
    owners = {pod_workload(facts, p) for p in facts.pods.values() if ip and p.ip == ip
              and p.node != ip}
    return owners.pop() if len(owners) == 1 else None


def service_at(ip: str, facts: Facts) -> Target | None:
    """The Service whose cluster IP this is (k8s_list_services shows it), as a target."""
    return next((Target(ip, "", ns, name) for (ns, name), service in facts.services.items()
                 if ip and service.cluster_ip == ip), None)


def resolve(host: str, port: str, caller_namespace: str, facts: Facts) -> Target:
    """Place a host in the cluster (Service namespace/name) or outside it."""
    low = host.lower().rstrip(".")
    for suffix in sorted(IN_CLUSTER, key=len, reverse=True):
        if low.endswith(suffix):
            parts = low[: -len(suffix)].split(".")
            service = parts[0]
            namespace = parts[1] if len(parts) > 1 else caller_namespace
            return Target(host, port, namespace, service)
    if "." not in low:
        known = {n for ns, n in facts.services if ns == caller_namespace} | {
            r.name for r in facts.workloads if r.namespace == caller_namespace}
        return Target(host, port, caller_namespace, low) if low in known else Target(host, port)
    first, _, rest = low.partition(".")
    if rest in facts.namespaces_seen:  # "<service>.<namespace>", what the search path resolves
        return Target(host, port, rest, first)
    return Target(host, port, external=True)


def behind_ingress(target: Target, facts: Facts) -> Target:
    """An outside-looking host that an Ingress of the cluster serves, placed at the Ingress's
    backend Service (a public name whose server runs in the cluster); else the target."""
    backend = facts.ingress_hosts.get(target.host.lower().rstrip(".")) if target.external \
        else None
    if backend is None:
        return target
    return Target(target.host, target.port, backend[0], backend[1])


def target_workload(target: Target, facts: Facts) -> Ref | None:
    """The workload behind an in-cluster target (same name as its Service, or a prefix)."""
    if not target.in_cluster:
        return None
    if exact := [r for r in facts.workloads
                 if r.namespace == target.namespace and r.name == target.service]:
        return exact[0]
    near = (r for r in facts.workloads if r.namespace == target.namespace
            and (r.name.startswith(target.service) or target.service.startswith(r.name)))
    return min(near, key=lambda r: len(r.name), default=None)


def troubled(ref: Ref, facts: Facts) -> bool:
    """Whether a workload itself looks unwell (so errors calling it are its own fault)."""
    workload = facts.workloads.get(ref)
    if workload is not None and (workload.unhealthy_pods or (
            workload.ready is not None and workload.desired and workload.ready < workload.desired)):
        return True
    signals = facts.signals_of(ref)
    return signals is not None and any(a in ("memory", "restarts") for a in signals.abnormal)


def unnamed_upstream(facts: Facts, caller: Ref, text: str) -> Ref | None:
    """The callee behind "upstream timeout" when the line names no host: the one workload of
    the caller's namespace that is itself unwell (pods not Ready, restarting), if there is
    exactly one."""
    if hosts_in(text) or not (_UPSTREAM.search(text) and _FAILED.search(text)):
        return None
    sick = [r for r in facts.workloads if r.namespace == caller.namespace and r != caller
            and r.kind in ROLLING and troubled(r, facts)]
    return sick[0] if len(sick) == 1 else None


# How a client names the server it talks to when its line names no host: its protocol or
# its client library ("pika.exceptions.ConnectionBlockedTimeout", "kafka: client has run out
# of available brokers"), against the image the server runs.
SPOKEN: dict[str, tuple[str, ...]] = {
    "rabbitmq": ("amqp", "pika.", "rabbitmq", "kombu"),
    "kafka": ("kafka", "sarama", "rdkafka"),
    "redis": ("redis", "jedis", "lettuce", "valkey"),
    "postgres": ("psycopg", "postgres", "libpq", "sqlstate", "pgx"),
    "mysql": ("mysql", "mariadb"),
    "mongo": ("mongo",),
    "elasticsearch": ("elasticsearch",),
    "nats": ("nats:", "nats."),
}


def spoken_server(text: str, caller: Ref, facts: Facts) -> Ref | None:
    """The one workload of the cluster that runs the server a line speaks to by protocol or
    client library, when exactly one does."""
    low = text.lower()
    for server, words in SPOKEN.items():
        if not any(word in low for word in words):
            continue
        runs = [ref for ref, workload in facts.workloads.items() if ref != caller
                and any(server in image.lower() for image in workload.images)]
        if len(runs) == 1:
            return runs[0]
    return None


# A workload shipping its own telemetry (traces, metrics, logs) to a collector: the
# collector is a side channel, not on the path of the requests the workload serves.
TELEMETRY_EXPORT = re.compile(r"\bexport(?:ing|er)?\b.{0,40}\b(?:traces?|spans?|metrics|logs|"
                              r"telemetry)\b|\b(?:traces?|spans?|metrics|telemetry)\b.{0,30}"
                              r"\bexport|\botlp\b|\bjaeger\b|\bzipkin\b", re.I)


# Environment variables that point a workload at where its telemetry goes.
SIDE_CHANNEL = re.compile(r"otel|otlp|jaeger|zipkin|datadog|^dd_|sentry|statsd|prometheus|"
                          r"pushgateway|log|trac|metric|telemetry|apm", re.I)


def callers_by_callee(facts: Facts) -> dict[Ref, set[Ref]]:
    """For each in-cluster workload named in another workload's log lines (by a host, or by
    its hyphenated name as a word) or configured as its callee (an environment variable of
    its pods that holds the callee's in-cluster URL), who named it."""
    graph: dict[Ref, set[Ref]] = {}
    for pod in facts.pods.values():
        if (caller := pod_workload(facts, pod)) is None:
            continue
        for setting in (v for c in pod.containers for v in c.env):
            name, _, value = setting.partition("=")
            if SIDE_CHANNEL.search(name) or TELEMETRY_EXPORT.search(setting):
                continue  # where it ships telemetry is not what it serves requests with
            for host, port in hosts_in(value):
                callee = target_workload(resolve(host, port, caller.namespace, facts), facts)
                if callee is not None and callee != caller:
                    graph.setdefault(callee, set()).add(caller)
    resolvers = list(servers(facts))
    for pattern in facts.patterns:
        text = f"{pattern.example} {pattern.template}"
        hosts = hosts_in(text)
        if not (owners := pattern_workloads(pattern, facts)) or TELEMETRY_EXPORT.search(text):
            continue
        caller = owners[0]
        if resolvers and phrase_in(pattern.text, RESOLUTION_FAILURES):  # the resolver is called
            for resolver in (r for r in resolvers if r != caller):
                graph.setdefault(resolver, set()).add(caller)
        callees = [target_workload(resolve(h, p, caller.namespace, facts), facts)
                   for h, p in hosts] + named(text, caller, facts)
        if not any(callees):
            callees += [unnamed_upstream(facts, caller, text),
                        spoken_server(text, caller, facts)]
        for callee in callees:
            if callee is not None and callee != caller:
                graph.setdefault(callee, set()).add(caller)
    return graph


# Words an error line uses for its own parts: a workload so named is not meant by them.
_COMMON_WORDS = frozenset({"worker", "server", "client", "router", "gateway", "backend",
                           "frontend", "service", "database", "request", "upstream", "handler",
                           "storage", "cluster", "default", "public", "health", "metrics",
                           "monitor", "system", "broker", "scheduler", "consumer", "producer",
                           "session", "connection", "timeout", "network", "runner", "controller"})


def _distinctive(name: str) -> bool:
    """Whether a workload's name, said as a word, can only mean that workload: a hyphenated
    name ("cart-api"), or one word of six letters or more that an error line does not use
    for anything else ("ratelimiter" yes, "worker" no)."""
    return "-" in name or (len(name) >= 6 and name.isalpha() and name not in _COMMON_WORDS)


def _answered(name: str, low: str) -> bool:
    """Whether a line names the workload only as the one it answers or serves ("answering
    504 to checkout", "request from checkout"): its caller, not what it calls."""
    said = re.finditer(rf"(?<![\w.-]){re.escape(name)}(?![\w-])", low)
    return all(re.search(r"\b(?:to|from|for|by)\s+$", low[:m.start()]) for m in said)


def _says(name: str, low: str) -> bool:
    """Whether the text names the workload or one of its pods ("journal member bid-journal-2
    answered 507", "checkout-7d9f8-x2k4p timed out")."""
    said = re.finditer(rf"(?<![\w.-]){re.escape(name)}((?:-[a-z0-9]+){{0,2}})(?![\w-])", low)
    return any(not match.group(1) or owns(name, match.group(0)) for match in said)


def named(text: str, caller: Ref, facts: Facts) -> list[Ref]:
    """Workloads that a line names by a hyphenated name as a word ("checkout failed: cart-api
    responded 500"), as a caller names what it calls: of the caller's namespace, or of
    another one when no other workload in the cluster bears that name."""
    low = text.lower()
    hits = [ref for ref in facts.workloads if ref != caller and _distinctive(ref.name)
            and ref.name in low and _says(ref.name, low)
            and ("-" in ref.name or not _answered(ref.name, low))]
    local = [ref for ref in hits if ref.namespace == caller.namespace]
    names = [ref.name for ref in facts.workloads]
    return local + [ref for ref in hits if ref.namespace != caller.namespace
                    and names.count(ref.name) == 1 and ref.name not in {r.name for r in local}]
