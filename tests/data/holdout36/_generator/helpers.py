"""Helpers several holdout36 scenarios share: a node pool, bystander pods, a JSON log line."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from .common import Obj, ago, iso, node, pod

MIN = timedelta(minutes=1)


def nodes_for(now: datetime, prefix: str, n: int, base_days: int = 30, **kw: Any) -> list[Obj]:
    """A pool of n Ready nodes, joined base_days+i days before now."""
    return [node(f"{prefix}-{i}", ago(now, days=base_days + i), now, **kw) for i in range(1, n + 1)]


def pods_for(
    objs: list[Obj],
    now: datetime,
    r: random.Random,
    ns: str,
    nodes: list[Obj],
    specs: list[tuple[str, str, list[Obj], int]],
    age_days: int = 3,
) -> dict[str, list[str]]:
    """Running pods for (deployment, hash, containers, count) specs; returns names by deployment."""
    out: dict[str, list[str]] = {}
    for dep, h, c, n_ in specs:
        for i in range(n_):
            name = f"{dep}-{h}-{'abcdefg'[i]}{r.choice('qrstv')}{r.randint(10, 99)}"
            objs.append(
                pod(
                    name,
                    ns,
                    ago(now, days=age_days, hours=i),
                    c,
                    owner=("ReplicaSet", f"{dep}-{h}"),
                    node_name=nodes[i % len(nodes)]["metadata"]["name"],
                    labels={"app": dep, "pod-template-hash": h},
                )
            )
            out.setdefault(dep, []).append(name)
    return out


def json_line(t: datetime, level: str, msg: str) -> str:
    """One line of the bff's logback JSON encoder."""
    return f'{{"ts":"{iso(t)}","level":"{level}","logger":"c.l.bff.GatewayClient","msg":"{msg}"}}'
