"""What kind of value a parameter's JSON schema asks for, as the decoder walks it."""

from __future__ import annotations

from typing import Any

from jarvis.center.llm.embedded.grammar import array_bounds, json_literal


def date_kind(schema: dict[str, Any]) -> str | None:
    """"date" or "date-time" for a string schema of that format, else None."""
    fmt = schema.get("format")
    if schema.get("type") == "string" and fmt in ("date", "date-time"):
        return str(fmt)
    return None


def is_date_schema(schema: dict[str, Any]) -> bool:
    """A date, a date-time, or an array of them."""
    items = schema.get("items")
    return date_kind(schema) is not None or (
        schema.get("type") == "array" and isinstance(items, dict) and date_kind(items) is not None
    )


def is_time(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "string" and schema.get("format") == "time"


def is_duration(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "string" and schema.get("format") == "duration"


def known_literals(schema: dict[str, Any]) -> list[bytes] | None:
    """Every value a const, enum or boolean schema allows, as JSON text; else None."""
    if "const" in schema:
        return [json_literal(schema["const"]).encode()]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return [json_literal(v).encode() for v in schema["enum"]]
    if schema.get("type") == "boolean":
        return [b"true", b"false"]
    return None


def walkable_array(schema: dict[str, Any]) -> bool:
    """An array of one typed item schema that must hold an item: walked item by item."""
    items = schema.get("items")
    return (schema.get("type") == "array" and isinstance(items, dict) and bool(items)
            and array_bounds(schema)[0] == 1)


def as_kind(value: str, kind: str) -> str:
    return value[:10] if kind == "date" else value


def plain_text(schema: dict[str, Any]) -> bool:
    """A free string: no choices, no format, no pattern (those are judged elsewhere)."""
    return (schema.get("type") == "string" and not schema.get("enum")
            and not schema.get("format") and not schema.get("pattern"))
