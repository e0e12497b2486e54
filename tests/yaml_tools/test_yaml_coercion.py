"""Validation and lossless coercion of arguments before a tool runs."""

from __future__ import annotations

import pytest
from yaml_tool_helpers import call, error_params

from jarvis.sdk.types import ParamTypeError, parse_type
from jarvis.sdk.yaml_tools import coerce_lossless

CONVERTED = [
    ("int", "5", 5),
    ("int", " -12 ", -12),
    ("int", 7.0, 7),
    ("int", 9, 9),
    ("float", "2.5", 2.5),
    ("float", "3", 3.0),
    ("float", 4, 4.0),
    ("float", "1e3", 1000.0),
    ("bool", "true", True),
    ("bool", "False", False),
    ("bool", True, True),
    ("list", '["a", 1]', ["a", 1]),
    ("list", ["x"], ["x"]),
    ("array<int>", '["1", 2]', [1, 2]),
    ("array<string>", '["a", "b"]', ["a", "b"]),
    ("array<bool>", ["true", False], [True, False]),
    ("dict", '{"a": 1}', {"a": 1}),
    ("dict", {"a": 1}, {"a": 1}),
    ("str", "hello", "hello"),
    ("str", 42, "42"),
    # A str parameter keeps text that looks like something else.
    ("str", "5", "5"),
    ("str", "true", "true"),
    ("str", '["a"]', '["a"]'),
    ("str", '{"a": 1}', '{"a": 1}'),
    ("str", "2.50", "2.50"),
    ("date", "2026-01-18", "2026-01-18"),
    ("datetime", "2026-01-18T09:30:00Z", "2026-01-18T09:30:00Z"),
]

REFUSED = [
    ("int", "five"),
    ("int", "5.5"),
    ("int", 5.5),
    ("int", "5.0"),
    ("int", True),
    ("int", "0x10"),
    ("int", [5]),
    ("float", "two"),
    ("float", "nan"),
    ("float", "inf"),
    ("float", False),
    ("bool", "yes"),
    ("bool", "1"),
    ("bool", 1),
    ("bool", 0),
    ("list", "a,b"),
    ("list", '{"a": 1}'),
    ("list", "[1, 2"),
    ("list", 5),
    ("array<int>", '["x"]'),
    ("array<int>", "[1.5]"),
    ("dict", "[1, 2]"),
    ("dict", "a=1"),
    ("dict", ["a"]),
    ("str", True),
    ("str", 2.5),
    ("str", ["a"]),
    ("str", {"a": 1}),
    ("date", "18/01/2026"),
    ("datetime", "2026-01-18T09:30:00"),
    ("time", "9h30"),
    ("timedelta", "5 minutes"),
]


@pytest.mark.parametrize(("type_string", "value", "expected"), CONVERTED)
def test_converted(type_string, value, expected):
    result = coerce_lossless(parse_type(type_string), value)
    assert result == expected
    assert type(result) is type(expected)


@pytest.mark.parametrize(("type_string", "value"), REFUSED)
def test_refused(type_string, value):
    with pytest.raises(ParamTypeError):
        coerce_lossless(parse_type(type_string), value)


@pytest.fixture
def typed_tool(load_one, fn_module):
    mod = fn_module(
        '''
        def f(**kwargs):
            """Echo the Python values."""
            return {"message": "ok", "got": {k: [type(v).__name__, v] for k, v in kwargs.items()}}
        '''
    )
    return load_one(
        f"""
        tools:
          - name: typed
            fn: {mod}:f
            params:
              - {{name: text, type: str, required: false}}
              - {{name: count, type: int, required: false, example: 3}}
              - {{name: ratio, type: float, required: false}}
              - {{name: flag, type: bool, required: false}}
              - {{name: items, type: list, required: false, example: ["milk", "eggs"]}}
              - {{name: options, type: dict, required: false}}
              - {{name: day, type: date, required: false}}
        """
    )


def test_pipeline_converts_what_small_models_send(typed_tool):
    response = call(
        typed_tool, text="007", count="5", ratio="2.5", flag="false",
        items='["milk", "eggs"]', options='{"size": "L"}',
    )
    assert response.success, response
    assert response.context_data["got"] == {
        "text": ["str", "007"],
        "count": ["int", 5],
        "ratio": ["float", 2.5],
        "flag": ["bool", False],
        "items": ["list", ["milk", "eggs"]],
        "options": ["dict", {"size": "L"}],
    }


def test_refusal_names_parameter_type_and_example(typed_tool):
    response = call(typed_tool, count="five", items="milk, eggs")
    assert sorted(error_params(response)) == ["count", "items"]
    by_param = {e["param_name"]: e["message"] for e in response.context_data["errors"]}
    assert "'count'" in by_param["count"] and "int" in by_param["count"]
    assert "Example: 3" in by_param["count"]
    assert "'items'" in by_param["items"] and "list" in by_param["items"]
    assert 'Example: ["milk", "eggs"]' in by_param["items"]


def test_unknown_parameter_is_refused_with_the_known_ones(typed_tool):
    response = call(typed_tool, colour="red")
    assert error_params(response) == ["colour"]
    message = response.context_data["errors"][0]["message"]
    assert "Unknown parameter 'colour'" in message
    assert "text, count, ratio, flag, items, options, day" in message


def test_missing_required_is_a_validation_error_with_the_example(load_one, fn_module):
    mod = fn_module('def f(path: str):\n    """Measure."""\n    return path\n')
    tool = load_one(
        f"""
        tools:
          - name: du
            fn: {mod}:f
            params:
              - name: path
                description: Folder to measure
                example: /home/me/Music
        """
    )
    response = call(tool)
    assert error_params(response) == ["path"]
    assert response.message == (
        "Missing required parameter 'path' (Folder to measure): expected a string. "
        "Example: /home/me/Music"
    )


def test_llm_placeholders_for_optional_params_are_dropped(typed_tool):
    response = call(typed_tool, text="none", count="null")
    assert response.success
    assert response.context_data["got"] == {}
