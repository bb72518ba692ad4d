"""Five hand-written scenarios about whose fault a failed connection is: a client whose mTLS
certificate expired (saying so, only seeing its connections reset, or logging nothing at
all), a recently changed egress NetworkPolicy that shuts callers out of their database
outside the cluster, and a cache that is really down behind an egress policy that allows it.
`write_tls_egress(root)` writes them in the scenario format (cluster, logs, no metrics).
"""

from __future__ import annotations

from pathlib import Path

from tests.engines.analyzer.handmade import (
    HASH,
    Obj,
    ago,
    container,
    culprit,
    deployment,
    log,
    meta,
    namespace,
    node,
    running,
    service,
    write,
)


def _pod(ns: str, workload: str, suffix: str, ip: str) -> Obj:
    image = f"reg.io/{workload}:2.4.1"
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": meta(f"{workload}-{HASH}-{suffix}", ns, creationTimestamp=ago(3000),
                             labels={"app": workload},
                             ownerReferences=[{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                               "controller": True, "uid": "u",
                                               "name": f"{workload}-{HASH}"}]),
            "spec": {"nodeName": "node-a", "containers": [container(workload, image)]},
            "status": {"phase": "Running", "podIP": ip,
                       "containerStatuses": [running(workload, image)]}}


def _workload(ns: str, name: str, ips: tuple[str, ...]) -> list[Obj]:
    app = [container(name, f"reg.io/{name}:2.4.1")]
    return [*deployment(ns, name, app, replicas=len(ips)), *service(ns, name),
            *[_pod(ns, name, f"p{i}x{i}z", ip) for i, ip in enumerate(ips)]]


def _lines(ns: str, name: str, level: str, message: str, *, since: float = 38,
           every: float = 1.5) -> list[Obj]:
    found, minute, index = [], since, 0
    while minute > 0.5:
        found.append(log(minute, level, name, ns, f"{name}-{HASH}-p{index % 2}x{index % 2}z",
                         message))
        minute -= every
        index += 1
    return found


INTAKE = "https://order-intake.ehr.svc:8443/v2/results"
REFUSED = ("http: TLS handshake error from {ip}:51514: tls: failed to verify certificate: "
           "x509: certificate has expired or is not yet valid: current time "
           "2027-01-15T10:59:58Z is after 2027-01-15T10:20:00Z")


def _intake(client_ip: str, client_lines: list[Obj]) -> tuple[list[Obj], list[Obj]]:
    """The EHR's intake server, two clients in lab, and the server refusing one of them."""
    objects = [namespace("ehr"), namespace("lab"), node(),
               *_workload("ehr", "order-intake", ("10.42.0.11", "10.42.0.12")),
               *_workload("lab", "lab-results", (client_ip, "10.42.1.18")),
               *_workload("lab", "billing-export", ("10.42.2.30",))]
    logs = _lines("ehr", "order-intake", "warn", REFUSED.format(ip=client_ip), since=39)
    logs += _lines("ehr", "order-intake", "info", "POST /v2/invoices 201 client=billing-export",
                   since=58, every=4)
    logs += _lines("lab", "billing-export", "info", f"export batch sent to {INTAKE}: 201",
                   since=58, every=4)
    return objects, logs + client_lines


REPORT = ("lab results stopped arriving in the EHR at about 10:20, the billing exports to "
          "the same intake still go through. lab-results pods look fine")


def client_says_so(root: Path) -> Path:
    """lab-results' client certificate expired: the intake refuses it, and lab-results hears
    the alert ("remote error: tls: expired certificate") about its own certificate."""
    lines = _lines("lab", "lab-results", "error", f"submit result failed: Post \"{INTAKE}\": "
                   "remote error: tls: expired certificate", since=39)
    objects, logs = _intake("10.42.1.17", lines)
    return write(root, "lab-results-client-cert", REPORT,
                 culprit("Deployment", "lab", "lab-results", "certificate"), objects, logs)


def client_is_silent(root: Path) -> Path:
    """The same expiry, but lab-results only sees its connections reset: the intake's log
    names it by its pod's IP, which only the pod listing can tell."""
    lines = _lines("lab", "lab-results", "error", f"submit result failed: Post \"{INTAKE}\": "
                   "read: connection reset by peer", since=39)
    objects, logs = _intake("10.42.1.17", lines)
    return write(root, "lab-results-client-cert-silent", REPORT,
                 culprit("Deployment", "lab", "lab-results", "certificate"), objects, logs)


def client_is_mute(root: Path) -> Path:
    """The same expiry, and lab-results logs nothing about it: only the intake's log, naming
    the client by its pod's IP, says who it is."""
    objects, logs = _intake("10.42.1.17", [])
    return write(root, "lab-results-client-cert-mute", "results missing in the ehr since 10:20",
                 culprit("Deployment", "lab", "lab-results", "certificate"), objects, logs)


def _policy(ns: str, name: str, egress: list[Obj], *, created: float,
            changed: float | None = None) -> Obj:
    extra: Obj = {"creationTimestamp": ago(created)}
    if changed is not None:
        extra["managedFields"] = [
            {"manager": "kubectl-client-side-apply", "operation": "Update",
             "time": ago(changed), "apiVersion": "networking.k8s.io/v1"}]
    return {"apiVersion": "networking.k8s.io/v1", "kind": "NetworkPolicy",
            "metadata": meta(name, ns, **extra),
            "spec": {"podSelector": {}, "policyTypes": ["Egress"], "egress": egress}}


DNS_ONLY = {"to": [{"namespaceSelector": {"matchLabels": {
    "kubernetes.io/metadata.name": "kube-system"}}}], "ports": [
    {"port": 53, "protocol": "UDP"}, {"port": 53, "protocol": "TCP"}]}
DB_HOST = "claims-db.cluster-c1x2.eu-west-1.rds.amazonaws.com"


def egress_shut(root: Path) -> Path:
    """An egress policy in place for months was changed 25 minutes ago: the public HTTPS
    rule now excepts private ranges, and the database outside the cluster is one."""
    public = {"to": [{"ipBlock": {"cidr": "0.0.0.0/0", "except": ["10.0.0.0/8"]}}],
              "ports": [{"port": 443, "protocol": "TCP"}]}
    objects = [namespace("claims"), node(),
               *_workload("claims", "claims-api", ("10.42.5.10", "10.42.5.11")),
               *_workload("claims", "claims-ocr", ("10.42.5.20",)),
               _policy("claims", "default-egress", [DNS_ONLY, public], created=90 * 1440,
                       changed=25)]
    logs = _lines("claims", "claims-api", "error", "GET /v1/claims/{id} 500: could not connect "
                  f"to server: Connection timed out. Is the server running on host \"{DB_HOST}\""
                  " (10.80.4.12) and accepting TCP/IP connections on port 5432?", since=24)
    logs += _lines("claims", "claims-ocr", "error", "store page failed: dial tcp "
                   "10.80.4.12:5432: i/o timeout", since=23, every=3)
    logs += _lines("claims", "claims-api", "info", "GET /healthz 200", since=58, every=5)
    return write(root, "claims-egress-changed",
                 "claims portal errors since 10:35, the database team says the RDS instance "
                 "is healthy",
                 culprit("NetworkPolicy", "claims", "default-egress", "network"), objects, logs)


def cache_down(root: Path) -> Path:
    """The cache outside the cluster is really down; the egress policy that has allowed it
    for months is innocent."""
    cache = {"to": [{"ipBlock": {"cidr": "10.30.0.0/16"}}],
             "ports": [{"port": 6379, "protocol": "TCP"}]}
    objects = [namespace("shop"), node(),
               *_workload("shop", "basket-api", ("10.42.6.10", "10.42.6.11")),
               _policy("shop", "basket-egress", [DNS_ONLY, cache], created=120 * 1440)]
    logs = _lines("shop", "basket-api", "error", "GET /v1/basket 503: cache unavailable: dial "
                  "tcp 10.30.2.5:6379: connect: connection refused", since=30)
    logs += _lines("shop", "basket-api", "info", "GET /healthz 200", since=58, every=5)
    return write(root, "basket-cache-down",
                 "basket page errors since 10:30, nothing was deployed today",
                 culprit("Deployment", "shop", "basket-api", "dependency_failure"), objects,
                 logs)


def write_tls_egress(root: Path) -> list[Path]:
    """Write the five scenarios under `root`; returns their folders."""
    return [make(root) for make in (client_says_so, client_is_silent, client_is_mute,
                                    egress_shut, cache_down)]


__all__ = ["write_tls_egress"]
