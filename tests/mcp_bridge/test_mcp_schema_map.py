"""An MCP tool's JSON schema mapped onto Jarvis parameter types."""

from __future__ import annotations

from typing import Any

from jarvis.node.mcp.schema_map import map_input_schema


def _one(prop: dict[str, Any], required: bool = True) -> Any:
    schema = {"type": "object", "properties": {"x": prop}, "required": ["x"] if required else []}
    [mapped] = map_input_schema(schema)
    return mapped


def test_scalars_map_onto_jarvis_types() -> None:
    cases = {
        "string": "string", "integer": "int", "number": "float", "boolean": "bool",
        "object": "dict",
    }
    for json_type, jarvis_type in cases.items():
        mapped = _one({"type": json_type, "description": "d"})
        assert mapped.parameter.param_type == jarvis_type
        assert mapped.parameter.description == "d"
        assert mapped.as_json is False


def test_formats_become_date_and_time_types() -> None:
    for fmt, jarvis_type in (("date", "date"), ("date-time", "datetime"), ("time", "time"),
                             ("duration", "timedelta"), ("email", "string")):
        assert _one({"type": "string", "format": fmt}).parameter.param_type == jarvis_type


def test_enums_and_arrays() -> None:
    colour = _one({"type": "string", "enum": ["red", "green"]}).parameter
    assert colour.param_type == "string" and colour.enum_values == ["red", "green"]
    level = _one({"type": "integer", "enum": [1, 2, 3]}).parameter
    assert level.param_type == "int" and level.to_schema()["enum"] == [1, 2, 3]
    days = _one({"type": "array", "items": {"type": "string", "format": "date"}}).parameter
    assert days.param_type == "array<date>"
    tags = _one({"type": "array", "items": {"type": "string", "enum": ["a", "b"]}}).parameter
    assert tags.param_type == "array<string>" and tags.enum_values == ["a", "b"]
    assert _one({"type": "array"}).parameter.param_type == "array"


def test_optional_null_unions_are_the_plain_type() -> None:
    assert _one({"type": ["integer", "null"]}).parameter.param_type == "int"
    optional = _one({"anyOf": [{"type": "string", "format": "date"}, {"type": "null"}],
                     "description": "when"})
    assert optional.parameter.param_type == "date"
    assert optional.parameter.description == "when"


def test_anything_else_is_json_text_with_its_schema_shown() -> None:
    union = {"anyOf": [{"type": "string"}, {"type": "integer"}], "description": "an id"}
    mapped = _one(union)
    assert mapped.as_json and mapped.parameter.param_type == "string"
    assert mapped.parameter.description.startswith("an id (JSON value matching")
    assert '"anyOf"' in mapped.parameter.description
    nested = _one({"type": "array", "items": {"type": "object"}})
    assert nested.as_json and nested.schema == {"type": "array", "items": {"type": "object"}}


def test_required_defaults_and_odd_names() -> None:
    schema = {
        "type": "object",
        "properties": {
            "max-results": {"type": "integer", "default": 5},
            "max_results": {"type": "integer", "default": "many"},
            "2nd": {"type": "string"},
        },
        "required": ["2nd"],
    }
    first, second, third = map_input_schema(schema)
    assert (first.parameter.name, first.wire_name) == ("max_results", "max-results")
    assert first.parameter.default == 5 and not first.parameter.required
    # the same identifier twice gets a suffix; a default that does not fit is dropped
    assert (second.parameter.name, second.parameter.default) == ("max_results_2", None)
    assert (third.parameter.name, third.wire_name, third.parameter.required) == ("p_2nd", "2nd",
                                                                                   True)


def test_a_schema_without_properties_has_no_parameters() -> None:
    assert map_input_schema({"type": "object"}) == []
