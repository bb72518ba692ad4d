"""What the eleventh held-out set shares: EKS-style node pools of its regions and a few
small helpers on top of the earlier sets' kits."""

from __future__ import annotations

from datetime import datetime, timedelta

from tests.data.holdout._generator.base import eks_nodes
from tests.data.holdout2._generator.kit import Incident
from tests.scenario_tools.common import Story
from tests.scenario_tools.kube import Obj

__all__ = ["Incident", "apps_pool", "mins", "secs"]


def apps_pool(s: Story, count: int, *, region: str, subnet: int, pool: str,
              instance: str = "m7i.2xlarge", days: float = 6.0, zones: str = "abc",
              cpu: str = "8", memory: str = "32386580Ki", alloc_cpu: str = "7910m",
              alloc_memory: str = "31369748Ki") -> list[Obj]:
    """`count` Amazon Linux 2023 nodes of one managed node group."""
    return eks_nodes(s, count, region=region, subnet=subnet, pool=pool, instance=instance,
                     kubelet="v1.32.9-eks-c39b1d0",
                     kernel="6.1.150-174.273.amzn2023.x86_64",
                     os_image="Amazon Linux 2023.9.20251027", cpu=cpu, memory=memory,
                     alloc_cpu=alloc_cpu, alloc_memory=alloc_memory, days=days, zones=zones,
                     runtime="containerd://1.7.27")


def mins(t: datetime, m: float) -> datetime:
    return t + timedelta(minutes=m)


def secs(t: datetime, sec: float) -> datetime:
    return t + timedelta(seconds=sec)
