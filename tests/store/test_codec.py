"""The event codec: every kind round-trips through JSON to an equal event."""

from __future__ import annotations

import dataclasses
import json
import math
import types
import typing
from datetime import UTC, date, datetime
from typing import Any, Literal, get_args, get_origin, get_type_hints

import pytest
from pydantic import BaseModel

from bot.store import CodecError
from bot.store.codec import decode_any, decode_event, dumps, encode_any, encode_event, loads
from engines.diagnosis import Diagnosis
from engines.events import Event, ObservationReceived, ThoughtRecorded
from tests.store.samples import DIAGNOSIS, POD_DATA, T0, one_of_each


@pytest.mark.parametrize("event", one_of_each(), ids=lambda e: e.kind)
def test_each_kind_round_trips_through_json_text(event: Event) -> None:
    text = dumps(event)
    decoded = loads(text)
    assert decoded == event
    assert type(decoded) is type(event)
    assert decoded.at.tzinfo is not None and decoded.at.utcoffset().total_seconds() == 0


def test_the_samples_cover_the_whole_union() -> None:
    kinds = {type(e) for e in one_of_each()}
    assert kinds == set(get_args(Event))


def _sample(tp: Any, name: str) -> Any:
    """A non-default value of a type hint, so a new event kind is tested without a sample."""
    origin = get_origin(tp)
    if tp is Any:
        return {"nested": [1, 2.5, ("t", None)], "when": T0}
    if origin is Literal:
        return get_args(tp)[-1]
    if origin in (typing.Union, types.UnionType):
        return _sample(next(a for a in get_args(tp) if a is not type(None)), name)
    if tp is str:
        return f"{name} text with ünïcode | and `ticks`"
    if tp is bool:
        return True
    if tp is int:
        return 7
    if tp is float:
        return 2.5
    if tp is datetime:
        return T0
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        return DIAGNOSIS if tp is Diagnosis else DIAGNOSIS.culprit
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):  # a value inside an event
        hints = get_type_hints(tp)
        return tp(**{f.name: _sample(hints[f.name], f.name) for f in dataclasses.fields(tp)})
    if origin is tuple:
        return tuple(_sample(get_args(tp)[0], name) for _ in range(2))
    if origin is list:
        return [_sample(get_args(tp)[0], name)]
    if origin is dict:
        return {"key": _sample(get_args(tp)[1], name)}
    raise AssertionError(f"no sample for {tp!r}: teach this test the new field type")


@pytest.mark.parametrize("cls", get_args(Event), ids=lambda c: c.__name__)
def test_every_kind_of_the_union_round_trips_from_its_type_hints(cls: type[Any]) -> None:
    hints = get_type_hints(cls)
    values = {
        f.name: _sample(hints[f.name], f.name) for f in dataclasses.fields(cls) if f.name != "kind"
    }
    event = cls(**values)
    assert decode_event(json.loads(json.dumps(encode_event(event)))) == event


def test_typed_fields_are_stored_plainly_for_sql() -> None:
    event = one_of_each()[3]
    payload = encode_event(event)
    assert payload["kind"] == "action"
    assert payload["tool"] == "k8s_pods"
    assert payload["arguments"] == {"namespace": "shop", "limit": 20}
    assert payload["at"] == "2026-11-30T10:00:01.223456+00:00"


def test_untyped_values_keep_their_python_types() -> None:
    value = {
        "tuple": (1, (2, 3)),
        "list": [1, [2, 3]],
        "set": {1, 2},
        "frozen": frozenset({"a"}),
        "when": datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC),
        "day": date(2026, 1, 2),
        "bytes": b"\x00\xff",
        "int keys": {1: "a", 2: "b"},
        "dollar": {"$tuple": "not a tag"},
        "nan": float("nan"),
        "inf": float("-inf"),
        "nul": "a\x00b",
    }
    text = json.dumps(encode_any(value), allow_nan=False)
    back = decode_any(json.loads(text))
    nan = back.pop("nan")
    assert math.isnan(nan)
    value.pop("nan")
    assert back == value
    assert type(back["tuple"]) is tuple and type(back["list"][1]) is list


def test_observation_data_round_trips_with_tuples_datetimes_and_odd_keys() -> None:
    event = one_of_each()[4]
    assert isinstance(event, ObservationReceived)
    decoded = loads(dumps(event))
    assert isinstance(decoded, ObservationReceived)
    assert decoded.data == POD_DATA
    assert isinstance(decoded.data["window"], tuple)


def test_a_stored_event_from_an_older_version_gets_defaults_and_ignores_unknowns() -> None:
    payload = encode_event(ThoughtRecorded("i", 1, "x", T0))
    payload["removed_field"] = 1
    assert decode_event(payload) == ThoughtRecorded("i", 1, "x", T0)


@pytest.mark.parametrize(
    "payload",
    [
        {"kind": "no-such-kind"},
        {"kind": "thought", "investigation_id": "i"},
        {"kind": "answer", "investigation_id": "i", "step": 1, "diagnosis": {"category": "x"}},
    ],
)
def test_what_is_not_an_event_is_a_codec_error(payload: dict[str, Any]) -> None:
    with pytest.raises(CodecError):
        decode_event(payload)


def test_json_text_is_strict() -> None:
    event = ObservationReceived("i", 1, "c", "t", "success", "x", seconds=float("inf"), at=T0)
    text = dumps(event)
    assert "Infinity" not in text
    assert loads(text) == event
