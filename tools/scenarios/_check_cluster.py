"""Checks of cluster.yaml: allowed kinds, references that resolve, times that fit the clock.

A scenario's cluster must look like one a controller manager produced: every owner reference
names an existing object with the same uid, ReplicaSets carry the hash their Deployment
gives them, events point at objects that exist and were updated within the hour.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from tools.scenarios import parse_time
from tools.scenarios._problems import Located, Problem, window_problem

ALLOWED_KINDS = frozenset({
    "Namespace", "Node", "Pod", "Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job",
    "CronJob", "Service", "Endpoints", "Ingress", "ConfigMap", "PersistentVolumeClaim",
    "StorageClass", "HorizontalPodAutoscaler", "ResourceQuota", "LimitRange", "NetworkPolicy",
    "Event"})
CLUSTER_SCOPED = frozenset({"Namespace", "Node", "StorageClass"})
EVENT_LIFETIME = timedelta(hours=1)

Key = tuple[str, str, str]  # kind, namespace, name


class ClusterIndex:
    """The objects of cluster.yaml by (kind, namespace, name), with their located documents."""

    def __init__(self, documents: list[Located]) -> None:
        self.documents = documents
        self.by_key: dict[Key, Located] = {}
        for doc in documents:
            key = key_of(doc.data)
            if key is not None:
                self.by_key.setdefault(key, doc)

    def get(self, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        doc = self.by_key.get((kind, "" if kind in CLUSTER_SCOPED else namespace, name))
        return doc.data if doc else None

    def of_kind(self, kind: str) -> Iterator[Located]:
        return (d for d in self.documents if isinstance(d.data, dict) and d.data.get("kind") ==
                kind)


def key_of(obj: Any) -> Key | None:
    if not isinstance(obj, dict) or not isinstance(obj.get("metadata"), dict):
        return None
    kind, meta = str(obj.get("kind", "")), obj["metadata"]
    namespace = "" if kind in CLUSTER_SCOPED else str(meta.get("namespace", ""))
    return kind, namespace, str(meta.get("name", ""))


def check_cluster(file: Path, documents: list[Located], now: datetime) -> list[Problem]:
    """Every rule of the format that cluster.yaml alone (and the clock) can break."""
    index = ClusterIndex(documents)
    problems: list[Problem] = []

    def add(doc: Located, path: tuple[str | int, ...], message: str) -> None:
        problems.append(Problem(file, doc.line_of(*path), message))

    seen: set[Key] = set()
    namespaces = {k[2] for k in index.by_key if k[0] == "Namespace"}
    for doc in documents:
        if not _shape(doc, add):
            continue
        key = key_of(doc.data)
        assert key is not None
        if key in seen:
            add(doc, ("metadata", "name"), f"duplicate {key[0]} {_name(key)}")
        seen.add(key)
        if key[1] and key[1] not in namespaces:
            add(doc, ("metadata", "namespace"), f"namespace {key[1]!r} of {key[0]} {key[2]} has "
                "no Namespace object")
        _times(doc, now, add)
        _owners(doc, index, add)
        kind = key[0]
        if kind == "Event":
            _event(doc, index, now, add)
        elif kind == "ReplicaSet":
            _replicaset_hash(doc, index, add)
        elif kind == "Pod":
            _pod(doc, index, add)
        elif kind == "Endpoints":
            _endpoints(doc, index, add)
    return problems


def _name(key: Key) -> str:
    return f"{key[1]}/{key[2]}" if key[1] else key[2]


def _shape(doc: Located, add: Any) -> bool:
    """Kind, names and namespace present and allowed; False when the rest cannot be checked."""
    obj = doc.data
    if not isinstance(obj, dict):
        add(doc, (), "a document of cluster.yaml is not a mapping (an object)")
        return False
    kind = obj.get("kind")
    if kind == "Secret":
        add(doc, ("kind",), "Secret objects are not allowed in a scenario")
        return False
    if kind not in ALLOWED_KINDS:
        add(doc, ("kind",), f"kind {kind!r} is not allowed (allowed: "
            f"{', '.join(sorted(ALLOWED_KINDS))})")
        return False
    if not obj.get("apiVersion"):
        add(doc, (), f"{kind} has no apiVersion")
    meta = obj.get("metadata")
    if not isinstance(meta, dict) or not meta.get("name"):
        add(doc, ("metadata",), f"{kind} has no metadata.name")
        return False
    if kind in CLUSTER_SCOPED and meta.get("namespace"):
        add(doc, ("metadata", "namespace"), f"{kind} {meta['name']} is cluster-scoped but has a "
            "namespace")
    if kind not in CLUSTER_SCOPED and not meta.get("namespace"):
        add(doc, ("metadata",), f"{kind} {meta['name']} has no metadata.namespace")
        return False
    return True


def _time(value: Any) -> datetime | None:
    try:
        return parse_time(value)
    except (TypeError, ValueError):
        return None


def _times(doc: Located, now: datetime, add: Any) -> None:
    """Status times lie within the week before now; objects may be older but not future."""
    obj = doc.data
    created = obj["metadata"].get("creationTimestamp")
    if created is not None:
        when = _time(created)
        if when is None:
            add(doc, ("metadata", "creationTimestamp"), f"creationTimestamp {created!r} is not "
                "an RFC 3339 time")
        elif when > now:
            add(doc, ("metadata", "creationTimestamp"), f"creationTimestamp {when.isoformat()} "
                f"is after now ({now.isoformat()})")
    for path, value in _status_times(obj.get("status"), ("status",)):
        when = _time(value)
        what = ".".join(str(p) for p in path)
        if when is None:
            add(doc, path, f"{what} {value!r} is not an RFC 3339 time")
            continue
        problem = window_problem(when, now, what)
        if problem:
            add(doc, path, problem)


def _status_times(value: Any, path: tuple[str | int, ...]
                  ) -> Iterator[tuple[tuple[str | int, ...], Any]]:
    if isinstance(value, dict):
        for key, child in value.items():
            here = (*path, key)
            if isinstance(child, dict | list):
                yield from _status_times(child, here)
            elif child is not None and _is_time_key(str(key)):
                yield here, child
    elif isinstance(value, list):
        for i, child in enumerate(value):
            yield from _status_times(child, (*path, i))


def _is_time_key(key: str) -> bool:
    return key.endswith(("Time", "Timestamp", "At")) or key in {"startTime"}


def _owners(doc: Located, index: ClusterIndex, add: Any) -> None:
    obj = doc.data
    meta = obj["metadata"]
    refs = meta.get("ownerReferences") or []
    if not isinstance(refs, list):
        add(doc, ("metadata", "ownerReferences"), "ownerReferences is not a list")
        return
    namespace = meta.get("namespace", "")
    for i, ref in enumerate(refs):
        path = ("metadata", "ownerReferences", i)
        if not isinstance(ref, dict) or not ref.get("kind") or not ref.get("name"):
            add(doc, path, "owner reference without kind and name")
            continue
        owner = index.get(str(ref["kind"]), namespace, str(ref["name"]))
        label = f"{obj['kind']} {meta['name']}"
        if owner is None:
            add(doc, path, f"{label}: owner {ref['kind']} {ref['name']} not found in "
                f"namespace {namespace}")
            continue
        if ref.get("uid") != owner["metadata"].get("uid"):
            add(doc, (*path, "uid"), f"{label}: owner {ref['kind']} {ref['name']} has uid "
                f"{owner['metadata'].get('uid')}, the reference says {ref.get('uid')}")
        born, parent_born = (_time(meta.get("creationTimestamp")),
                             _time(owner["metadata"].get("creationTimestamp")))
        if born and parent_born and born < parent_born:
            add(doc, ("metadata", "creationTimestamp"), f"{label} was created before its owner "
                f"{ref['kind']} {ref['name']}")


def _deployment_owner(obj: dict[str, Any]) -> str | None:
    for ref in obj["metadata"].get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("kind") == "Deployment":
            return str(ref.get("name"))
    return None


def _replicaset_hash(doc: Located, index: ClusterIndex, add: Any) -> None:
    """A Deployment's ReplicaSet is named `<deployment>-<pod-template-hash>` and selects it."""
    obj = doc.data
    labels = obj["metadata"].get("labels") or {}
    hash_ = labels.get("pod-template-hash")
    owner = _deployment_owner(obj)
    name = obj["metadata"]["name"]
    if owner is None:
        if hash_:
            add(doc, ("metadata", "ownerReferences"), f"ReplicaSet {name} has a "
                "pod-template-hash but no Deployment owner")
        return
    if not hash_:
        add(doc, ("metadata", "labels"), f"ReplicaSet {name} of Deployment {owner} has no "
            "pod-template-hash label")
        return
    if name != f"{owner}-{hash_}":
        add(doc, ("metadata", "name"), f"ReplicaSet {name} should be named {owner}-{hash_} "
            "(Deployment name and pod-template-hash)")
    spec = obj.get("spec") or {}
    selected = ((spec.get("selector") or {}).get("matchLabels") or {}).get("pod-template-hash")
    if selected != hash_:
        add(doc, ("spec", "selector"), f"ReplicaSet {name} selects pod-template-hash "
            f"{selected}, its label says {hash_}")
    tpl = (((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}).get(
        "pod-template-hash")
    if tpl != hash_:
        add(doc, ("spec", "template"), f"ReplicaSet {name}'s pod template has pod-template-hash "
            f"{tpl}, its label says {hash_}")


def _pod(doc: Located, index: ClusterIndex, add: Any) -> None:
    """A ReplicaSet's pod carries its hash and name prefix; its node exists."""
    obj = doc.data
    meta = obj["metadata"]
    for ref in meta.get("ownerReferences") or []:
        if not isinstance(ref, dict) or ref.get("kind") != "ReplicaSet":
            continue
        rs = index.get("ReplicaSet", meta["namespace"], str(ref.get("name")))
        if rs is None:
            continue
        want = (rs["metadata"].get("labels") or {}).get("pod-template-hash")
        got = (meta.get("labels") or {}).get("pod-template-hash")
        if want and got != want:
            add(doc, ("metadata", "labels"), f"Pod {meta['name']} has pod-template-hash {got}, "
                f"its ReplicaSet {ref['name']} has {want}")
        if not str(meta["name"]).startswith(f"{ref['name']}-"):
            add(doc, ("metadata", "name"), f"Pod {meta['name']} is not named after its "
                f"ReplicaSet {ref['name']}")
        if _deployment_owner(rs) is None and want:
            add(doc, ("metadata", "ownerReferences"), f"Pod {meta['name']}'s ReplicaSet "
                f"{ref['name']} has no Deployment owner")
    node = (obj.get("spec") or {}).get("nodeName")
    if node and index.get("Node", "", str(node)) is None and any(index.of_kind("Node")):
        add(doc, ("spec", "nodeName"), f"Pod {meta['name']} runs on node {node}, which is not "
            "in cluster.yaml")


def _endpoints(doc: Located, index: ClusterIndex, add: Any) -> None:
    namespace = doc.data["metadata"]["namespace"]
    for i, subset in enumerate(doc.data.get("subsets") or []):
        for field in ("addresses", "notReadyAddresses"):
            for j, address in enumerate(subset.get(field) or []):
                ref = address.get("targetRef") if isinstance(address, dict) else None
                if not isinstance(ref, dict):
                    continue
                target = index.get(str(ref.get("kind")), ref.get("namespace", namespace),
                                   str(ref.get("name")))
                if target is None:
                    add(doc, ("subsets", i, field, j), f"Endpoints {doc.data['metadata']['name']}"
                        f" points at {ref.get('kind')} {ref.get('name')}, which does not exist")


def _event(doc: Located, index: ClusterIndex, now: datetime, add: Any) -> None:
    """Complete core/v1 fields, an existing involved object, updated within the hour."""
    event = doc.data
    name = event["metadata"]["name"]
    for field, kind in (("reason", str), ("message", str), ("count", int)):
        if not isinstance(event.get(field), kind) or event.get(field) == "":
            add(doc, (field,), f"Event {name} has no valid {field}")
    if isinstance(event.get("count"), int) and event["count"] < 1:
        add(doc, ("count",), f"Event {name} has count {event['count']}, at least 1 expected")
    if event.get("type") not in {"Normal", "Warning"}:
        add(doc, ("type",), f"Event {name} has type {event.get('type')!r} (Normal or Warning)")
    _involved(doc, index, add)
    first, last = (_time(event.get("firstTimestamp")), _time(event.get("lastTimestamp")))
    for field, when in (("firstTimestamp", first), ("lastTimestamp", last)):
        if when is None:
            add(doc, (field,), f"Event {name} has no valid {field}")
        elif problem := window_problem(when, now, field):
            add(doc, (field,), f"Event {name}: {problem}")
    if first and last and first > last:
        add(doc, ("firstTimestamp",), f"Event {name}: firstTimestamp is after lastTimestamp")
    if last and last <= now and last < now - EVENT_LIFETIME:
        add(doc, ("lastTimestamp",), f"Event {name} was last updated at {last.isoformat()}, "
            "more than an hour before now: the API server would have dropped it")


def _involved(doc: Located, index: ClusterIndex, add: Any) -> None:
    event = doc.data
    involved = event.get("involvedObject")
    if not isinstance(involved, dict) or not involved.get("kind") or not involved.get("name"):
        add(doc, ("involvedObject",), f"Event {event['metadata']['name']} has no involvedObject "
            "kind and name")
        return
    kind, obj_name = str(involved["kind"]), str(involved["name"])
    namespace = str(involved.get("namespace") or "")
    if kind not in CLUSTER_SCOPED and namespace != event["metadata"]["namespace"]:
        add(doc, ("involvedObject", "namespace"), f"Event in namespace "
            f"{event['metadata']['namespace']} is about an object in namespace {namespace!r}")
    target = index.get(kind, namespace, obj_name)
    if target is None:
        add(doc, ("involvedObject",), f"Event involves {kind} {obj_name}, which is not in "
            "cluster.yaml")
    elif involved.get("uid") and involved["uid"] != target["metadata"].get("uid"):
        add(doc, ("involvedObject", "uid"), f"Event involves {kind} {obj_name} with uid "
            f"{involved['uid']}, the object's uid is {target['metadata'].get('uid')}")
