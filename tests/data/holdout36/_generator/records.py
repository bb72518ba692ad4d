"""Events, log-store documents and OpenMetrics samples for the holdout36 scenarios."""

from __future__ import annotations

import zlib
from datetime import datetime
from typing import Any

from .objects import Obj, iso, iso_ms, meta


def event(
    ns: str,
    kind: str,
    name: str,
    reason: str,
    message: str,
    first: datetime,
    last: datetime,
    count: int = 1,
    type_: str = "Warning",
    source: str = "kubelet",
    seq: int = 0,
) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": meta(
            f"{name}.{_event_suffix(first, reason, seq):x}",
            ns,
            first,
        ),
        "involvedObject": {
            "kind": kind,
            "namespace": ns,
            "name": name,
            "apiVersion": "apps/v1" if kind in ("Deployment", "ReplicaSet") else "v1",
        },
        "reason": reason,
        "message": message,
        "type": type_,
        "count": count,
        "firstTimestamp": iso(first),
        "lastTimestamp": iso(last),
        "source": {"component": source},
    }


def _event_suffix(first: datetime, reason: str, seq: int) -> int:
    return int(first.timestamp() * 1000) % 10**12 + seq + zlib.crc32(reason.encode()) % 4096


def ecs(
    t: datetime,
    message: str,
    level: str,
    service_name: str,
    ns: str,
    pod_name: str,
    container_name: str,
    **extra: Any,
) -> Obj:
    doc: Obj = {
        "@timestamp": iso_ms(t),
        "message": message,
        "log.level": level,
        "service.name": service_name,
        "kubernetes.namespace": ns,
        "kubernetes.pod.name": pod_name,
        "kubernetes.container.name": container_name,
    }
    doc.update(extra)
    return doc


class Metrics:
    """Collects OpenMetrics families; counters are fed increments so they only rise."""

    def __init__(self) -> None:
        self.families: dict[str, tuple[str, str, list[str]]] = {}

    def add(
        self, name: str, mtype: str, help_: str, labels: dict[str, str], t: datetime, value: float
    ) -> None:
        fam = name[:-6] if mtype == "counter" and name.endswith("_total") else name
        entry = self.families.setdefault(fam, (mtype, help_, []))
        lab = ",".join(f'{k}="{v}"' for k, v in labels.items())
        entry[2].append(f"{name}{{{lab}}} {value:g} {int(t.timestamp())}")

    def render(self) -> str:
        out: list[str] = []
        for fam, (mtype, help_, lines) in self.families.items():
            out += [f"# TYPE {fam} {mtype}", f"# HELP {fam} {help_}"]
            # group by series so each series' samples are contiguous and time-ordered
            series: dict[str, list[str]] = {}
            for ln in lines:
                series.setdefault(ln.rsplit(" ", 2)[0], []).append(ln)
            for s in series.values():
                out += sorted(s, key=lambda x: int(x.rsplit(" ", 1)[1]))
        out.append("# EOF")
        return "\n".join(out) + "\n"
