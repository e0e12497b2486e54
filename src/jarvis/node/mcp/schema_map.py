"""An MCP tool's input JSON schema mapped onto Jarvis parameters.

string/integer/number/boolean/object, string enums and formats (date, date-time, time,
duration) and arrays of those become the matching Jarvis type, so the center checks
them like any command's. Anything else (unions, nested objects in arrays, tuples) is a
string parameter holding JSON: it is parsed and checked against the tool's own schema.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from jarvis.sdk import JarvisParameter

__all__ = ["MappedParameter", "map_input_schema"]

_SCALARS = {"integer": "int", "number": "float", "boolean": "bool", "object": "dict"}
_FORMATS = {"date": "date", "date-time": "datetime", "time": "time", "duration": "timedelta"}
_NOT_IDENTIFIER = re.compile(r"\W")
_JSON_HINT_LIMIT = 300


@dataclass(frozen=True)
class MappedParameter:
    """A Jarvis parameter and how its value goes back on the wire."""

    parameter: JarvisParameter
    wire_name: str
    as_json: bool
    schema: dict[str, Any]


def map_input_schema(schema: dict[str, Any]) -> list[MappedParameter]:
    """One parameter per property; `required` kept; a bad default is dropped, not fatal."""
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    mapped: list[MappedParameter] = []
    used: set[str] = set()
    for wire_name, prop in properties.items():
        prop = prop if isinstance(prop, dict) else {}
        name = _identifier(str(wire_name), used)
        used.add(name)
        mapped.append(_map_property(name, str(wire_name), prop, wire_name in required))
    return mapped


def _map_property(
    name: str, wire_name: str, prop: dict[str, Any], required: bool
) -> MappedParameter:
    kind = _jarvis_type(_without_null(prop))
    description = prop.get("description") or prop.get("title")
    if kind is None:
        hint = json.dumps(prop, separators=(",", ":"))[:_JSON_HINT_LIMIT]
        text = f"{description or wire_name} (JSON value matching {hint})"
        param = JarvisParameter(name, "string", required=required, description=text)
        return MappedParameter(param, wire_name, True, prop)
    type_string, enum = kind
    param = _parameter(name, type_string, required, description, enum, prop.get("default"))
    return MappedParameter(param, wire_name, False, prop)


def _parameter(
    name: str, type_string: str, required: bool, description: str | None,
    enum: list[str] | None, default: Any,
) -> JarvisParameter:
    try:
        return JarvisParameter(name, type_string, required=required, description=description,
                               enum_values=enum, default=default)
    except ValueError:  # a default that does not fit its own type is the server's mistake
        return JarvisParameter(name, type_string, required=required, description=description,
                               enum_values=enum)


def _without_null(prop: dict[str, Any]) -> dict[str, Any]:
    """`["string", "null"]` or `anyOf: [X, {type: null}]` is X for a Jarvis parameter."""
    kind = prop.get("type")
    if isinstance(kind, list):
        rest = [k for k in kind if k != "null"]
        return {**prop, "type": rest[0]} if len(rest) == 1 else prop
    options = prop.get("anyOf") or prop.get("oneOf")
    if isinstance(options, list):
        rest = [o for o in options if not (isinstance(o, dict) and o.get("type") == "null")]
        if len(rest) == 1 and isinstance(rest[0], dict):
            merged = {k: v for k, v in prop.items() if k not in ("anyOf", "oneOf")}
            return {**rest[0], **merged}
    return prop


def _jarvis_type(prop: dict[str, Any]) -> tuple[str, list[str] | None] | None:
    """(type string, enum values) or None when only JSON can carry the value."""
    kind = prop.get("type")
    enum = prop.get("enum")
    if enum is not None:
        return _enum_type(kind, enum)
    if kind == "string":
        return _FORMATS.get(str(prop.get("format")), "string"), None
    if kind in _SCALARS:
        return _SCALARS[kind], None
    if kind == "array":
        items = prop.get("items")
        if items is None:
            return "array", None
        inner = _jarvis_type(items) if isinstance(items, dict) else None
        if inner is None or inner[0] in ("dict", "array") or inner[0].startswith("array"):
            return None
        return f"array<{inner[0]}>", inner[1]
    return None


def _enum_type(kind: Any, enum: Any) -> tuple[str, list[str]] | None:
    if not isinstance(enum, list) or not enum:
        return None
    if all(isinstance(v, str) for v in enum) and kind in (None, "string"):
        return "string", list(enum)
    if all(isinstance(v, int) and not isinstance(v, bool) for v in enum) and kind == "integer":
        return "int", [str(v) for v in enum]
    return None


def _identifier(wire_name: str, used: set[str]) -> str:
    """Jarvis parameter names are Python identifiers: `max-results` -> `max_results`."""
    name = _NOT_IDENTIFIER.sub("_", wire_name) or "value"
    if not name.isidentifier():
        name = f"p_{name}"
    candidate, n = name, 2
    while candidate in used:
        candidate, n = f"{name}_{n}", n + 1
    return candidate
