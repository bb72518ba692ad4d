"""The workloads that serve the cluster's DNS, known by generic signs rather than by name.

Its pods expose port 53, a port-53 Service selects it, or its image is a DNS server
(CoreDNS, kube-dns, the node-local DNS cache, dnsmasq). The DNS detector (dns.py) blames
such a workload when it is down, and the call graph (_targets.py) counts every caller that
fails to resolve a name as calling it; both read it from here, so neither has to import the
other.
"""

from __future__ import annotations

import re

from engines.analyzer.detectors._common import pod_workload
from engines.analyzer.facts import ROLLING, Facts, Ref, Service

_IMAGES = re.compile(r"(?<![a-z0-9])(coredns|kube-?dns|k8s-dns[-a-z]*|node-?cache|dnsmasq|"
                     r"node-?local-?dns)(?![a-z0-9])", re.IGNORECASE)
_NAMES = re.compile(r"^(?:core|kube-?|node-?local-?|cluster-?)dns$", re.IGNORECASE)
_SELECTOR_VALUE = re.compile(r"=([-\w.]+)")


def _image_name(image: str) -> str:
    return image.rsplit("/", 1)[-1].split("@")[0].split(":")[0]


def serves_dns(service: Service) -> bool:
    """A Service with port 53: the cluster's resolver, whatever it is called."""
    return any(p.split("→")[0].split("/")[0].strip() == "53" for p in service.ports)


def selects(service: Service, name: str) -> bool:
    """Whether the Service's selector names `name` as one of its label values."""
    return name in _SELECTOR_VALUE.findall(service.selector)


def servers(facts: Facts) -> dict[Ref, str]:
    """Workloads that serve DNS, each with the sign that shows it."""
    found: dict[Ref, str] = {}
    for ref, workload in sorted(facts.workloads.items(), key=lambda kv: str(kv[0])):
        if ref.kind not in ROLLING:
            continue
        image = next((i for i in workload.images if _IMAGES.search(_image_name(i))), None)
        if image is not None:
            found[ref] = f"its image {_image_name(image)} is a DNS server"
        elif _NAMES.match(ref.name):
            found[ref] = "its name says it serves the cluster's DNS"
    for pod in facts.pods.values():
        owner = pod_workload(facts, pod)
        if owner is not None and owner not in found and owner.kind in ROLLING and any(
                p.split("/")[0].strip() == "53" for c in pod.containers for p in c.ports):
            found[owner] = "its pods serve port 53"
    for service in facts.services.values():
        if not serves_dns(service):
            continue
        for ref in facts.workloads:
            if ref.namespace == service.namespace and ref.kind in ROLLING and \
                    selects(service, ref.name) and ref not in found:
                found[ref] = f"Service {service.name} (port 53) selects it"
    return found
