"""Small helpers of the seventeenth held-out set: EKS nodes of one pool, node-exporter
filesystem series, and a pod's log line written both to the log store and to its own log."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Any

from tests.data.holdout._generator.base import eks_nodes, gauge
from tests.data.holdout2._generator.kit import Incident
from tests.scenario_tools.common import Story
from tests.scenario_tools.kube import Obj

__all__ = ["Incident", "eks_nodes", "fs_series", "gauge", "line", "mins"]


def mins(t: datetime, m: float) -> datetime:
    return t + timedelta(minutes=m)


def fs_series(s: Story, nodes: Sequence[Obj], size: Callable[[Obj], float],
              avail: Callable[[Obj, int], float], *, device: str = "/dev/nvme0n1p1") -> None:
    """node-exporter's root filesystem size and free bytes of each node."""
    for metric, value, help_ in (
            ("node_filesystem_size_bytes", lambda n, t: size(n),
             "Filesystem size in bytes."),
            ("node_filesystem_avail_bytes", avail,
             "Filesystem space available to non-root users in bytes.")):
        for n in nodes:
            ip = n["status"]["addresses"][0]["address"]
            gauge(s, metric, {"instance": f"{ip}:9100", "node": n["metadata"]["name"],
                              "device": device, "fstype": "xfs", "mountpoint": "/"},
                  lambda t, n=n, v=value: float(round(v(n, t))), help_)


def line(s: Story, pod: Obj, container: str, service: str, when: datetime, level: str,
         message: str, **fields: Any) -> None:
    s.logs.add(when, level, message, namespace=pod["metadata"]["namespace"],
               pod=pod["metadata"]["name"], container=container, service=service,
               node=pod["spec"].get("nodeName", ""), **fields)
