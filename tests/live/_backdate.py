"""Give loaded objects their recorded `creationTimestamp` (and the `deletionTimestamp` of
those recorded while terminating), by rewriting them in etcd.

The API server stamps `creationTimestamp` on create and refuses to change it afterwards,
so objects loaded from a scenario are all "created" at load time. The tools report ages
from it and the analyzer reads it (which ReplicaSet is the new rollout, whether a
NetworkPolicy appeared when the errors began): without the recorded times a live run
would not reach the sandbox's diagnosis for the right reason.

etcd holds built-in objects as `k8s\\0` + a protobuf `runtime.Unknown` whose `raw` field is
the object; every object's field 1 is its ObjectMeta and ObjectMeta's field 8 is
`creationTimestamp` (a Time of seconds and nanos). This module edits exactly that field
with a minimal protobuf wire-format reader and writer, and puts the value back through
etcd's JSON gateway; the API server's watch cache picks the change up like any write.
"""

from __future__ import annotations

import base64
import json
import time
import urllib.request
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from tests.services import kube_loader
from tests.services.kube import KubeApiServer
from tools.scenarios import parse_time

_MAGIC = b"k8s\x00"
_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5


@dataclass(frozen=True, slots=True)
class _Field:
    number: int
    wire: int
    value: bytes | int


def _read_varint(data: bytes, position: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, position
        shift += 7


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _parse(data: bytes) -> list[_Field]:
    fields: list[_Field] = []
    position = 0
    while position < len(data):
        key, position = _read_varint(data, position)
        number, wire = key >> 3, key & 7
        if wire == _VARINT:
            value, position = _read_varint(data, position)
            fields.append(_Field(number, wire, value))
        elif wire == _LEN:
            size, position = _read_varint(data, position)
            fields.append(_Field(number, wire, data[position:position + size]))
            position += size
        elif wire in (_I64, _I32):
            size = 8 if wire == _I64 else 4
            fields.append(_Field(number, wire, data[position:position + size]))
            position += size
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
    return fields


def _encode(fields: Iterable[_Field]) -> bytes:
    out = bytearray()
    for f in fields:
        out += _varint(f.number << 3 | f.wire)
        if f.wire == _VARINT:
            assert isinstance(f.value, int)
            out += _varint(f.value)
        elif f.wire == _LEN:
            assert isinstance(f.value, bytes)
            out += _varint(len(f.value)) + f.value
        else:
            assert isinstance(f.value, bytes)
            out += f.value
    return bytes(out)


def _first(fields: list[_Field], number: int) -> bytes:
    for f in fields:
        if f.number == number and isinstance(f.value, bytes):
            return f.value
    return b""


def _replace(fields: list[_Field], number: int, value: bytes) -> list[_Field]:
    found = [f if f.number != number else _Field(number, _LEN, value) for f in fields]
    if not any(f.number == number for f in fields):
        found.append(_Field(number, _LEN, value))
    return found


def identity(value: bytes) -> tuple[str, str, str] | None:
    """(kind, namespace, name) of a stored built-in object, None for anything else."""
    if not value.startswith(_MAGIC):
        return None
    unknown = _parse(value[len(_MAGIC):])
    kind = _first(_parse(_first(unknown, 1)), 2).decode()
    meta = _parse(_first(_parse(_first(unknown, 2)), 1))
    return kind, _first(meta, 3).decode(), _first(meta, 1).decode()


def with_creation_time(value: bytes, created: datetime, deleted: datetime | None = None
                       ) -> bytes:
    """The stored object with ObjectMeta.creationTimestamp (field 8) set to `created`
    and, for an object recorded while terminating, deletionTimestamp (field 9) too."""
    unknown = _parse(value[len(_MAGIC):])
    obj = _parse(_first(unknown, 2))
    meta = _parse(_first(obj, 1))
    meta = _replace(meta, 8, _encode([_Field(1, _VARINT, int(created.timestamp()))]))
    if deleted is not None and any(f.number == 9 for f in meta):
        meta = _replace(meta, 9, _encode([_Field(1, _VARINT, int(deleted.timestamp()))]))
    obj = _replace(obj, 1, _encode(meta))
    return _MAGIC + _encode(_replace(unknown, 2, _encode(obj)))


def _etcd_url(server: KubeApiServer) -> str:
    for process in server.processes:
        for arg in process.argv:
            if arg.startswith("--listen-client-urls="):
                return arg.split("=", 1)[1].split(",")[0]
    raise RuntimeError("the test API server runs no etcd with a client URL")


def _etcd(url: str, path: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(url + path, data=json.dumps(body).encode(), method="POST")
    with urllib.request.urlopen(request, timeout=30) as response:
        return dict(json.load(response))


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


def restore_creation_times(server: KubeApiServer, scenario_dir: Path) -> int:
    """Backdate every loaded object of the scenario to its recorded creationTimestamp;
    returns how many were rewritten. Waits until the API server serves the new times."""
    cluster = scenario_dir / "cluster.yaml"
    if not cluster.is_file():
        return 0
    recorded: dict[tuple[str, str, str], datetime] = {}
    deleted: dict[tuple[str, str, str], datetime] = {}
    for obj in kube_loader.read_objects(cluster):
        meta = obj.get("metadata") or {}
        if meta.get("creationTimestamp"):
            namespace = meta.get("namespace") or ""
            if obj.get("kind") not in ("Namespace", "Node", "StorageClass") and not namespace:
                namespace = "default"
            key = (str(obj["kind"]), namespace, meta["name"])
            recorded[key] = parse_time(meta["creationTimestamp"])
            if meta.get("deletionTimestamp"):
                deleted[key] = parse_time(meta["deletionTimestamp"])
    url = _etcd_url(server)
    answer = _etcd(url, "/v3/kv/range", {"key": _b64(b"/registry/"),
                                          "range_end": _b64(b"/registry0")})
    puts: list[dict[str, str]] = []
    rewritten: list[tuple[str, str, str]] = []
    for kv in answer.get("kvs", []):
        value = base64.b64decode(kv["value"])
        found = identity(value)
        if found is None or found not in recorded:
            continue
        new = with_creation_time(value, recorded[found], deleted.get(found))
        puts.append({"key": kv["key"], "value": _b64(new)})
        rewritten.append(found)
    with ThreadPoolExecutor(max_workers=8) as pool:
        list(pool.map(lambda body: _etcd(url, "/v3/kv/put", body), puts))
    _wait_served(server, rewritten, recorded)
    return len(rewritten)


def _wait_served(server: KubeApiServer, keys: list[tuple[str, str, str]],
                 recorded: dict[tuple[str, str, str], datetime]) -> None:
    """The watch cache applies etcd writes asynchronously: wait for the last one."""
    from tools.sources.kube_api import resource_for

    if not keys:
        return
    kind, namespace, name = keys[-1]
    path = resource_for(kind).path(namespace or None, name)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        stamp = (server.client().get(path).get("metadata") or {}).get("creationTimestamp")
        if stamp and parse_time(stamp) == recorded[keys[-1]].replace(microsecond=0):
            return
        time.sleep(0.1)
    raise RuntimeError(f"the API server still serves the load time of {path}")
