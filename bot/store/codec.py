"""Engine events to JSON and back, losslessly: the event log is the investigation's state.

A replica that takes over an interrupted investigation hands the decoded log to
`ReactEngine.run(..., resume=events)`, so a decoded event must compare equal to the one the
engine emitted: same types (tuples stay tuples, datetimes stay aware, the diagnosis stays a
`Diagnosis`), same values.

The codec is driven by the dataclasses' type hints rather than written per kind, so an
event the engine adds to the union is stored without touching this module (a test builds
one of every kind from its hints). Typed fields are stored plainly, so the payloads stay
readable in SQL (`payload->>'tool'`). Fields typed `Any` (a tool's `data`, a call's
arguments) can hold anything a tool returns; there JSON cannot tell a tuple from a list,
so such values are tagged (`{"$tuple": [...]}`) where plain JSON would lose the type.
"""

from __future__ import annotations

import base64
import dataclasses
import json
import logging
import math
import types
import typing
from collections.abc import Mapping
from datetime import date, datetime
from functools import cache
from typing import Any, Literal, get_args, get_origin, get_type_hints

from pydantic import BaseModel, ValidationError

from bot.store.errors import CodecError
from engines.events import Event

log = logging.getLogger(__name__)

_TAGS = ("$tuple", "$set", "$frozenset", "$datetime", "$date", "$bytes", "$float", "$dict")


# --- the union --------------------------------------------------------------------------


@cache
def event_classes() -> dict[str, type[Any]]:
    """Every event class of the union, by its `kind`."""
    classes: dict[str, type[Any]] = {}
    for cls in get_args(Event):
        kind = next(f.default for f in dataclasses.fields(cls) if f.name == "kind")
        classes[str(kind)] = cls
    return classes


_HINTS: dict[type[Any], dict[str, Any]] = {}


def _hints(cls: type[Any]) -> dict[str, Any]:
    """A class's resolved type hints, computed once (they are read for every event)."""
    hints = _HINTS.get(cls)
    if hints is None:
        hints = _HINTS[cls] = get_type_hints(cls)
    return hints


def encode_event(event: Event) -> dict[str, Any]:
    """The event as a JSON-ready dict; `kind` names its class."""
    cls = type(event)
    if cls not in event_classes().values():
        raise CodecError(f"{cls.__name__} is not an event of the union in engines/events.py")
    hints = _hints(cls)
    payload: dict[str, Any] = {}
    for field in dataclasses.fields(event):
        payload[field.name] = encode(getattr(event, field.name), hints[field.name])
    return payload


def decode_event(payload: Mapping[str, Any]) -> Event:
    """The event a payload of `encode_event` describes; CodecError when it describes none."""
    kind = payload.get("kind")
    cls = event_classes().get(str(kind))
    if cls is None:
        raise CodecError(f"unknown event kind {kind!r}")
    hints = _hints(cls)
    values: dict[str, Any] = {}
    for field in dataclasses.fields(cls):
        if field.name not in payload:
            continue  # a field added after the event was stored: its default applies
        values[field.name] = decode(payload[field.name], hints[field.name])
    unknown = set(payload) - set(values)
    if unknown:
        log.warning("ignoring unknown fields %s of a stored %s event", sorted(unknown), kind)
    try:
        event: Event = cls(**values)
    except TypeError as exc:
        raise CodecError(f"stored {kind} event is incomplete: {exc}") from None
    return event


def dumps(event: Event) -> str:
    """The event as JSON text (strict JSON: PostgreSQL rejects NaN)."""
    return json.dumps(encode_event(event), ensure_ascii=False, allow_nan=False)


def loads(text: str | bytes) -> Event:
    """The event of a `dumps` text."""
    try:
        payload = json.loads(text)
    except ValueError as exc:
        raise CodecError(f"stored event is not JSON: {exc}") from None
    if not isinstance(payload, dict):
        raise CodecError("stored event is not a JSON object")
    return decode_event(payload)


# --- typed values -----------------------------------------------------------------------


def _is_union(tp: Any) -> bool:
    return get_origin(tp) in (typing.Union, types.UnionType)


def _optional(tp: Any) -> Any | None:
    """X for `X | None`, else None."""
    if not _is_union(tp):
        return None
    members = [a for a in get_args(tp) if a is not type(None)]
    return members[0] if len(members) == 1 else None


def encode(value: Any, tp: Any) -> Any:
    """`value`, known to be of type `tp`, as JSON-ready data."""
    if tp is Any or tp is object:
        return encode_any(value)
    if value is None:
        return None
    if (inner := _optional(tp)) is not None:
        return encode(value, inner)
    origin = get_origin(tp)
    if origin is Literal or tp in (str, int, bool):
        return value
    if tp is float:
        return _encode_float(value)
    if tp is datetime or tp is date:
        return value.isoformat()
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = _hints(tp)
        fields = dataclasses.fields(tp)
        return {f.name: encode(getattr(value, f.name), hints[f.name]) for f in fields}
    if origin in (tuple, list, set, frozenset):
        args = get_args(tp)
        if origin is tuple and args and args[-1] is not Ellipsis:
            return [encode(v, t) for v, t in zip(value, args, strict=True)]
        item = args[0] if args else Any
        return [encode(v, item) for v in value]
    if origin is dict and get_args(tp) and get_args(tp)[0] is str:
        item = get_args(tp)[1]
        return {k: encode(v, item) for k, v in value.items()}
    return encode_any(value)  # other unions and unusual hints: tagged, still lossless


def decode(data: Any, tp: Any) -> Any:
    """The inverse of `encode` for the same `tp`."""
    if tp is Any or tp is object:
        return decode_any(data)
    if data is None:
        return None
    if (inner := _optional(tp)) is not None:
        return decode(data, inner)
    origin = get_origin(tp)
    if origin is Literal or tp in (str, bool):
        return data
    if tp is int:
        return int(data)
    if tp is float:
        return float(data)
    if tp is datetime:
        return datetime.fromisoformat(data)
    if tp is date:
        return date.fromisoformat(data)
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        try:
            return tp.model_validate(data)
        except ValidationError as exc:
            raise CodecError(f"stored {tp.__name__} is invalid: {exc}") from None
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        hints = _hints(tp)
        fields = {f.name for f in dataclasses.fields(tp)}
        return tp(**{k: decode(v, hints[k]) for k, v in data.items() if k in fields})
    if origin in (tuple, list, set, frozenset):
        args = get_args(tp)
        if origin is tuple and args and args[-1] is not Ellipsis:
            return tuple(decode(v, t) for v, t in zip(data, args, strict=True))
        item = args[0] if args else Any
        return origin(decode(v, item) for v in data)
    if origin is dict and get_args(tp) and get_args(tp)[0] is str:
        item = get_args(tp)[1]
        return {k: decode(v, item) for k, v in data.items()}
    return decode_any(data)


def _encode_float(value: float) -> float | str:
    return value if math.isfinite(value) else repr(value)  # "nan", "inf", "-inf"


# --- untyped values (`Any`) -------------------------------------------------------------


def encode_any(value: Any) -> Any:
    """Any value as JSON, tagging what plain JSON would turn into something else."""
    if value is None or isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"$float": repr(value)}
    if isinstance(value, list):
        return [encode_any(v) for v in value]
    if isinstance(value, dict):
        plain = all(isinstance(k, str) for k in value) and not (
            len(value) == 1 and next(iter(value)).startswith("$")
        )
        if plain:
            return {k: encode_any(v) for k, v in value.items()}
        return {"$dict": [[encode_any(k), encode_any(v)] for k, v in value.items()]}
    if isinstance(value, tuple):
        return {"$tuple": [encode_any(v) for v in value]}
    if isinstance(value, frozenset):
        return {"$frozenset": [encode_any(v) for v in value]}
    if isinstance(value, set):
        return {"$set": [encode_any(v) for v in value]}
    if isinstance(value, datetime):
        return {"$datetime": value.isoformat()}
    if isinstance(value, date):
        return {"$date": value.isoformat()}
    if isinstance(value, bytes):
        return {"$bytes": base64.b64encode(value).decode("ascii")}
    if isinstance(value, BaseModel):
        return encode_any(value.model_dump(mode="json"))  # comes back as its dict
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return encode_any({f.name: getattr(value, f.name) for f in dataclasses.fields(value)})
    # A tool returned something JSON has no word for: keep its text rather than fail the
    # investigation over a log write.
    log.warning("storing a %s as its text; it will not round-trip", type(value).__name__)
    return str(value)


def decode_any(data: Any) -> Any:
    """The inverse of `encode_any`."""
    if isinstance(data, list):
        return [decode_any(v) for v in data]
    if not isinstance(data, dict):
        return data
    if len(data) == 1:
        tag, inner = next(iter(data.items()))
        if tag.startswith("$"):
            return _untag(tag, inner)
    return {k: decode_any(v) for k, v in data.items()}


def _untag(tag: str, inner: Any) -> Any:
    match tag:
        case "$tuple":
            return tuple(decode_any(v) for v in inner)
        case "$set":
            return {decode_any(v) for v in inner}
        case "$frozenset":
            return frozenset(decode_any(v) for v in inner)
        case "$datetime":
            return datetime.fromisoformat(inner)
        case "$date":
            return date.fromisoformat(inner)
        case "$bytes":
            return base64.b64decode(inner)
        case "$float":
            return float(inner)
        case "$dict":
            return {decode_any(k): decode_any(v) for k, v in inner}
    raise CodecError(f"unknown tag {tag!r} in a stored value (known: {', '.join(_TAGS)})")
