"""Lossless coercion of tool arguments: what small models send -> what the parameter's type wants.

Converted: "5" -> 5 and 5.0 -> 5 for int; "2.5" -> 2.5 and 3 -> 3.0 for float; "true" /
"false" (any case) -> bool; a JSON text holding a list or an object for list and dict
parameters (items of typed lists are converted the same way); 42 -> "42" for str.
Refused: anything that would lose or invent information ("5.5" or 5.5 for int, "yes" or 1
for bool, "a,b" for a list, true for a str). A str parameter's text is never converted,
whatever it looks like.
"""

from __future__ import annotations

import json
import math
from typing import Any

from jarvis.sdk.types import ParamType, ParamTypeError

__all__ = ["coerce_lossless", "sample_value"]

_SAMPLES: dict[str, Any] = {
    "string": "text",
    "int": 5,
    "float": 2.5,
    "bool": True,
    "dict": {"key": "value"},
    "date": "2026-01-18",
    "datetime": "2026-01-18T09:30:00Z",
    "time": "09:30",
    "timedelta": "PT5M",
}


def sample_value(ptype: ParamType) -> Any:
    """A well-formed value of `ptype`, shown in errors when the parameter has no example."""
    if ptype.is_array:
        item = sample_value(ptype.item) if ptype.item is not None else "a"
        return [item, item] if not isinstance(item, dict) else [item]
    return _SAMPLES[ptype.kind]


def coerce_lossless(ptype: ParamType, value: Any) -> Any:
    """`value` as the wire form of `ptype`, converting only where nothing is lost.

    Returns the value unchanged when it already fits; raises ParamTypeError otherwise.
    Date and time kinds keep their text (the pipeline parses it) but must be well formed.
    """
    if ptype.is_array:
        if isinstance(value, str):
            value = _json(value, list, ptype)
        if not isinstance(value, list | tuple):
            raise ParamTypeError(f"expected {ptype.describe()}, got {_shown(value)}")
        if ptype.item is None:
            return list(value)
        converted = []
        for index, item in enumerate(value):
            try:
                converted.append(coerce_lossless(ptype.item, item))
            except ParamTypeError as exc:
                raise ParamTypeError(f"item {index}: {exc}") from exc
        return converted
    kind = ptype.kind
    if kind == "string":
        if isinstance(value, str):
            return value
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
    elif kind == "int":
        if isinstance(value, str):
            return ptype.from_text(value)
        if isinstance(value, float) and math.isfinite(value) and value.is_integer():
            return int(value)
    elif kind in ("float", "bool"):
        if isinstance(value, str):
            return ptype.from_text(value)
    elif kind == "dict" and isinstance(value, str):
        return _json(value, dict, ptype)
    elif kind in ("date", "datetime", "time", "timedelta") and ptype.accepts(value):
        if isinstance(value, str):
            problem = ptype.check(value)
            if problem:
                raise ParamTypeError(problem)
        return value
    problem = ptype.check(value)
    if problem:
        raise ParamTypeError(problem)
    return float(value) if kind == "float" else value


def _json(text: str, expected: type, ptype: ParamType) -> Any:
    try:
        decoded = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParamTypeError(
            f"expected {ptype.describe()} (JSON), got {_shown(text)}: {exc.msg}"
        ) from exc
    if not isinstance(decoded, expected):
        raise ParamTypeError(f"expected {ptype.describe()}, got {_shown(text)}")
    return decoded


def _shown(value: Any) -> str:
    text = json.dumps(value, default=str) if not isinstance(value, str) else f"'{value}'"
    return text if len(text) <= 60 else text[:57] + "..."
