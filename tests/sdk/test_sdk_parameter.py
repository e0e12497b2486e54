"""JarvisParameter: construction, the three validation layers, defaults, schema forms."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from typing import Any

import pytest

from jarvis.sdk import IJarvisParameter, JarvisParameter, ParamType, parse_type


def test_constructor_takes_the_spec_order_positionally() -> None:
    p = JarvisParameter(
        "count", "int", False, "Number of dice", "1", ["1", "2", "3"], True, 2
    )
    assert (p.name, p.param_type, p.required, p.description) == (
        "count", "int", False, "Number of dice",
    )
    assert (p.default, p.enum_values, p.refinable, p.example) == ("1", ["1", "2", "3"], True, 2)
    assert p.type == parse_type("int")


def test_constructor_defaults() -> None:
    p = JarvisParameter("city", "string")
    assert p.required is False
    assert p.description is None and p.default is None and p.enum_values is None
    assert p.refinable is False and p.example is None
    assert p.validation_function is None and p.validation_error_message is None


def test_the_spec_weather_parameter_constructs() -> None:
    p = JarvisParameter(
        "resolved_datetimes",
        "array<datetime>",
        required=True,
        description="Date keys: 'today', 'tomorrow', 'this_weekend', etc.",
    )
    assert p.type.is_array and p.type.item == parse_type("datetime")


@pytest.mark.parametrize("name", ["", "two words", "kebab-case", "1st", None])
def test_a_parameter_name_must_be_an_identifier(name: Any) -> None:
    with pytest.raises(ValueError, match="identifier"):
        JarvisParameter(name, "string")


def test_enum_values_are_kept_as_strings() -> None:
    p = JarvisParameter("level", "int", enum_values=[1, 2, 3])  # type: ignore[list-item]
    assert p.enum_values == ["1", "2", "3"]


def test_enum_values_must_be_a_list_not_a_bare_string() -> None:
    with pytest.raises(ValueError, match="must be a list"):
        JarvisParameter("op", "string", enum_values="add")  # type: ignore[arg-type]


def test_enum_synonyms_are_command_data_not_part_of_the_llm_schema() -> None:
    p = JarvisParameter("action", "string", True, enum_values=["skip", "pause"],
                        enum_synonyms={"skip": ["next", " skip ahead "]})
    assert p.enum_synonyms == {"skip": ["next", "skip ahead"]}
    assert p.to_dict()["enum_synonyms"] == {"skip": ["next", "skip ahead"]}
    assert p.to_schema() == {"type": "string", "enum": ["skip", "pause"]}
    # A synonym is a hint for choosing a value, not a value: validation is unchanged.
    assert p.validate("next")[0] is False


@pytest.mark.parametrize(
    ("enum", "synonyms", "message"),
    [
        (None, {"skip": ["next"]}, "enum_synonyms of 'action' need enum_values"),
        (["skip"], {"jump": ["next"]}, "'jump' is not one of its enum_values: skip"),
        (["skip"], {"skip": "next"}, "the words for 'skip' must be a list of text"),
        (["skip"], {"skip": ["next", ""]}, "the words for 'skip' must be a list of text"),
        (["skip"], ["next"], "must map a value to a list of words"),
    ],
)
def test_bad_enum_synonyms_fail_at_construction(enum: Any, synonyms: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        JarvisParameter("action", "string", enum_values=enum, enum_synonyms=synonyms)


def test_a_default_that_does_not_fit_the_type_fails_at_construction() -> None:
    with pytest.raises(ValueError, match="Default 'many' of 'count' does not fit"):
        JarvisParameter("count", "int", default="many")


def test_a_default_outside_the_enum_fails_at_construction() -> None:
    with pytest.raises(ValueError, match="not one of its enum_values: metric, imperial"):
        JarvisParameter("unit", "string", default="kelvin", enum_values=["metric", "imperial"])
    assert JarvisParameter("unit", "string", default="metric",
                           enum_values=["metric", "imperial"]).default == "metric"


@pytest.mark.parametrize(
    ("type_string", "default", "value"),
    [
        ("int", "1", 1),
        ("int", 3, 3),
        ("float", "0.5", 0.5),
        ("bool", "true", True),
        ("string", "hello", "hello"),
        ("date", "2026-01-18", dt.date(2026, 1, 18)),
        ("timedelta", "PT10M", dt.timedelta(minutes=10)),
        ("array<int>", "[1, 2]", [1, 2]),
        ("dict", '{"a": 1}', {"a": 1}),
    ],
)
def test_default_value_converts_text_defaults(type_string: str, default: Any, value: Any) -> None:
    assert JarvisParameter("p", type_string, default=default).default_value() == value


def test_default_value_of_a_datetime_uses_the_timezone() -> None:
    p = JarvisParameter("when", "datetime", default="2026-01-18T09:00")
    assert p.default_value("UTC") == dt.datetime(2026, 1, 18, 9, tzinfo=dt.UTC)
    assert JarvisParameter("x", "int").default_value() is None


# --- validate: the spec's passing and failing examples ---------------------------------
@pytest.mark.parametrize(
    ("param", "value"),
    [
        (JarvisParameter("count", "int"), 5),
        (JarvisParameter("ratio", "float"), 3),
        (JarvisParameter("dates", "array<datetime>"), ["2025-01-01"]),
        (JarvisParameter("op", "string", enum_values=["add", "subtract"]), "add"),
        (JarvisParameter("ticker", "string", required=True, description="Stock symbol"), "AAPL"),
        (JarvisParameter("count", "int", required=False, default="1"), 4),
        (JarvisParameter("operation", "string", required=True,
                         enum_values=["add", "subtract", "multiply", "divide"]), "divide"),
        (JarvisParameter("volume_level", "int", refinable=True), 60),
        (JarvisParameter("queue_option", "string", enum_values=["play", "next", "add"],
                         refinable=True), "next"),
        (JarvisParameter("flag", "bool"), False),
        (JarvisParameter("when", "date"), dt.date(2026, 1, 18)),
        (JarvisParameter("when", "datetime"), dt.datetime(2026, 1, 18, tzinfo=dt.UTC)),
        (JarvisParameter("wait", "timedelta"), dt.timedelta(minutes=5)),
        (JarvisParameter("tags", "list"), ["a", 1]),
        (JarvisParameter("options", "dict"), {"a": 1}),
    ],
)
def test_validate_passes(param: JarvisParameter, value: Any) -> None:
    assert param.validate(value) == (True, None)


@pytest.mark.parametrize(
    ("param", "value", "words"),
    [
        (JarvisParameter("count", "int"), "five", "Invalid type for 'count': expected an integer"),
        (JarvisParameter("flag", "bool"), "yes", "Invalid type for 'flag': expected a boolean"),
        (JarvisParameter("count", "int"), True, "expected an integer"),  # bool is never an int
        (JarvisParameter("ratio", "float"), True, "expected a number"),
        (JarvisParameter("ratio", "float"), "2.5", "expected a number"),
        (JarvisParameter("dates", "array<datetime>"), "2025-01-01", "expected a list"),
        (JarvisParameter("dates", "array<datetime>"), [5], "expected a list"),
        (JarvisParameter("when", "date"), dt.datetime(2026, 1, 1), "expected a date"),
        (JarvisParameter("name", "string"), 5, "expected a string"),
        (JarvisParameter("options", "dict"), [], "expected a JSON object"),
    ],
)
def test_validate_fails_on_type(param: JarvisParameter, value: Any, words: str) -> None:
    ok, message = param.validate(value)
    assert ok is False
    assert message is not None and words in message


def test_validate_enum_message_is_exactly_the_spec_text() -> None:
    p = JarvisParameter("op", "string", enum_values=["add", "subtract"])
    assert p.validate("multiply") == (
        False, "Invalid value 'multiply' for 'op'. Must be one of: add, subtract"
    )


def test_enum_values_compare_as_strings_for_non_string_types() -> None:
    level = JarvisParameter("level", "int", enum_values=["1", "2", "3"])
    assert level.validate(2) == (True, None)
    assert level.validate(4)[0] is False
    ratio = JarvisParameter("ratio", "float", enum_values=["1", "1.5"])
    # 1.0 is how a JSON number 1 may come back; it is the enum's "1".
    assert ratio.validate(1.0) == (True, None)
    assert ratio.validate(1.5) == (True, None)
    assert ratio.validate(2.0)[0] is False


def test_enum_applies_to_every_item_of_an_array() -> None:
    p = JarvisParameter("days", "array<string>", enum_values=["mon", "tue"])
    assert p.validate(["mon", "tue"]) == (True, None)
    assert p.validate(["mon", "sun"]) == (
        False, "Invalid value 'sun' for 'days'. Must be one of: mon, tue"
    )


def test_type_is_checked_before_the_enum() -> None:
    p = JarvisParameter("level", "int", enum_values=["1", "2"])
    ok, message = p.validate("1")
    assert ok is False and message is not None and "Invalid type" in message


class Percentage(IJarvisParameter):
    """A parameter class with its own check, as the spec's abstract-class example."""

    @property
    def name(self) -> str:
        return "volume"

    @property
    def param_type(self) -> str:
        return "int"

    @property
    def type(self) -> ParamType:
        return parse_type("int")

    @property
    def validation_function(self) -> Callable[[Any], bool] | None:
        return lambda v: 0 <= v <= 100

    @property
    def validation_error_message(self) -> str:
        return "Value must be between 0 and 100"


def test_custom_validation_function_of_an_ijarvisparameter_subclass() -> None:
    p = Percentage()
    assert p.validate(50) == (True, None)
    assert p.validate(150) == (False, "Value must be between 0 and 100 for 'volume'")
    # Type comes first: the custom function never sees a wrong-typed value.
    ok, message = p.validate("loud")
    assert ok is False and message is not None and "Invalid type" in message


def test_custom_validation_runs_after_the_enum() -> None:
    calls: list[Any] = []

    def check(value: Any) -> bool:
        calls.append(value)
        return value != "b"

    p = JarvisParameter("x", "string", enum_values=["a", "b"], validation_function=check,
                        validation_error_message="b is not allowed today")
    assert p.validate("c")[0] is False and calls == []
    assert p.validate("b") == (False, "b is not allowed today for 'x'")
    assert p.validate("a") == (True, None)
    assert calls == ["b", "a"]


def test_a_crashing_validation_function_fails_the_value_not_the_command() -> None:
    p = JarvisParameter("x", "int", validation_function=lambda v: v < 1 / 0)
    ok, message = p.validate(3)
    assert ok is False and message is not None and "ZeroDivisionError" in message


def test_a_huge_value_in_an_error_message_is_shortened() -> None:
    ok, message = JarvisParameter("name", "string").validate(10**5000)
    assert ok is False and message is not None and len(message) < 200


# --- schema forms --------------------------------------------------------------------
@pytest.mark.parametrize(
    ("param", "schema"),
    [
        (JarvisParameter("city", "string", description="City name"),
         {"type": "string", "description": "City name"}),
        (JarvisParameter("unit", "string", enum_values=["metric", "imperial"]),
         {"type": "string", "enum": ["metric", "imperial"]}),
        (JarvisParameter("dates", "array<datetime>", required=True, description="Target dates"),
         {"type": "array", "description": "Target dates",
          "items": {"type": "string", "format": "date-time"}}),
        (JarvisParameter("day", "date"), {"type": "string", "format": "date"}),
        (JarvisParameter("at", "time"), {"type": "string", "format": "time"}),
        (JarvisParameter("wait", "timedelta"), {"type": "string", "format": "duration"}),
        (JarvisParameter("volume_level", "int", description="Volume level 0-100",
                         refinable=True),
         {"type": "integer", "description": "Volume level 0-100", "_refinable": True}),
        (JarvisParameter("level", "int", enum_values=["1", "2"]),
         {"type": "integer", "enum": [1, 2]}),
        (JarvisParameter("loud", "bool", enum_values=["true"]),
         {"type": "boolean", "enum": [True]}),
        (JarvisParameter("days", "date[]", enum_values=["2026-01-18"]),
         {"type": "array", "enum": ["2026-01-18"],
          "items": {"type": "string", "format": "date"}}),
        (JarvisParameter("options", "dict"), {"type": "object"}),
        (JarvisParameter("tags", "list"), {"type": "array"}),
    ],
)
def test_to_schema(param: JarvisParameter, schema: dict[str, Any]) -> None:
    assert param.to_schema() == schema
    json.dumps(param.to_schema())  # always serialisable


def test_the_example_is_shown_to_the_llm_in_the_description() -> None:
    p = JarvisParameter("query", "string", description="Search query", example="recent errors")
    assert p.to_schema()["description"] == "Search query. Example: recent errors"
    only_example = JarvisParameter("limit", "int", example=10)
    assert only_example.to_schema()["description"] == "Example: 10"
    dated = JarvisParameter("day", "date", description="Day", example=dt.date(2026, 1, 18))
    assert dated.to_schema()["description"] == 'Day. Example: "2026-01-18"'


def test_to_dict_is_the_rich_json_form() -> None:
    p = JarvisParameter("day", "date", True, "Day to check", dt.date(2026, 1, 18), None, True,
                        "2026-01-19")
    assert p.to_dict() == {
        "name": "day",
        "type": "date",
        "required": True,
        "description": "Day to check",
        "enum_values": None,
        "refinable": True,
        "default": "2026-01-18",
        "example": "2026-01-19",
    }
    json.dumps(p.to_dict())
