"""Writes one scenario folder, completing owner ReplicaSets and keeping status times
within the format's week."""

from __future__ import annotations

import json
import random
from datetime import datetime, timedelta
from typing import Any

import yaml

from .objects import SET_DIR, Obj, iso, parse
from .records import Metrics


def write_scenario(
    sid: str,
    scenario: Obj,
    objects: list[Obj],
    pod_logs: dict[str, str],
    logs: list[Obj],
    metrics: Metrics | None = None,
) -> None:
    _complete(objects, parse(scenario["now"]))
    d = SET_DIR / sid
    d.mkdir(parents=True, exist_ok=True)
    (d / "scenario.yaml").write_text(yaml.safe_dump(scenario, sort_keys=False, width=100))
    (d / "cluster.yaml").write_text(yaml.safe_dump_all(objects, sort_keys=False, width=200))
    for rel, text in pod_logs.items():
        p = d / "pod-logs" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text if text.endswith("\n") else text + "\n")
    if logs:
        logs = sorted(logs, key=lambda x: x["@timestamp"])
        (d / "logs.ndjson").write_text("".join(json.dumps(x) + "\n" for x in logs))
    if metrics:
        (d / "metrics.om").write_text(metrics.render())


def rng(seed: str) -> random.Random:
    return random.Random(seed)


def _clamp(node: Any, floor: datetime) -> Any:
    """Status times older than the scenario's week are brought to its start (the format
    keeps status times within the week before now; objects themselves may be older)."""
    if isinstance(node, dict):
        return {k: _clamp(v, floor) for k, v in node.items()}
    if isinstance(node, list):
        return [_clamp(v, floor) for v in node]
    if (
        isinstance(node, str)
        and len(node) == 20
        and node[4] == "-"
        and node.endswith("Z")
        and node[0] != "1"
    ):
        return iso(max(parse(node), floor))
    return node


def _complete(objects: list[Obj], now: datetime) -> None:
    """Adds the ReplicaSet that owns a bystander Pod when the scenario did not spell it out,
    and keeps status times within the week."""
    have = {
        (o["metadata"].get("namespace"), o["metadata"]["name"])
        for o in objects
        if o["kind"] == "ReplicaSet"
    }
    deps = {
        (o["metadata"]["namespace"], o["metadata"]["name"]): o
        for o in objects
        if o["kind"] == "Deployment"
    }
    extra: list[Obj] = []
    for o in objects:
        if o["kind"] != "Pod":
            continue
        for ref in o["metadata"].get("ownerReferences", []):
            key = (o["metadata"]["namespace"], ref["name"])
            if ref["kind"] != "ReplicaSet" or key in have:
                continue
            dep_name, hash_ = ref["name"].rsplit("-", 1)
            dep = deps[(key[0], dep_name)]
            n = sum(
                1
                for p in objects
                if p["kind"] == "Pod"
                and any(r["name"] == ref["name"] for r in p["metadata"].get("ownerReferences", []))
            )
            rs = {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": ref["name"],
                    "namespace": key[0],
                    "creationTimestamp": o["metadata"]["creationTimestamp"],
                    "labels": {"app": dep_name, "pod-template-hash": hash_},
                    "annotations": {
                        "deployment.kubernetes.io/revision": dep["metadata"]["annotations"][
                            "deployment.kubernetes.io/revision"
                        ]
                    },
                    "ownerReferences": [
                        {
                            "apiVersion": "apps/v1",
                            "kind": "Deployment",
                            "name": dep_name,
                            "controller": True,
                        }
                    ],
                },
                "spec": {
                    "replicas": n,
                    "selector": {"matchLabels": {"app": dep_name, "pod-template-hash": hash_}},
                    "template": {
                        "metadata": {"labels": {"app": dep_name, "pod-template-hash": hash_}},
                        "spec": dep["spec"]["template"]["spec"],
                    },
                },
                "status": {
                    "replicas": n,
                    "readyReplicas": n,
                    "availableReplicas": n,
                    "fullyLabeledReplicas": n,
                },
            }
            extra.append(rs)
            have.add(key)
    idx = next(i for i, o in enumerate(objects) if o["kind"] == "Pod")
    objects[idx:idx] = extra
    for rs in (o for o in objects if o["kind"] == "ReplicaSet"):
        born = [
            parse(p["metadata"]["creationTimestamp"])
            for p in objects
            if p["kind"] == "Pod"
            and p["metadata"].get("namespace") == rs["metadata"]["namespace"]
            and any(
                r["name"] == rs["metadata"]["name"]
                for r in p["metadata"].get("ownerReferences", [])
            )
        ]
        if born and min(born) < parse(rs["metadata"]["creationTimestamp"]):
            rs["metadata"]["creationTimestamp"] = iso(min(born) - timedelta(seconds=3))
    floor = now - timedelta(days=6, hours=23)
    for o in objects:
        if o["kind"] != "Event" and "status" in o:
            o["status"] = _clamp(o["status"], floor)
