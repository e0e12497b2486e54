"""fn tools: parameters read from the function's signature and docstring, and how it is called."""

from __future__ import annotations

import asyncio

import pytest
from yaml_tool_helpers import call, error_params

from jarvis.sdk.yaml_tools import ToolFileError


def props(tool):
    return tool.to_openai_tool_schema()["function"]["parameters"]


def fn_tool(load_one, module: str, attr: str = "f", extra: str = ""):
    return load_one(
        f"""
        tools:
          - name: t
            fn: {module}:{attr}
        {extra}
        """
    )


def test_plain_signature_without_annotations(load_one, fn_module):
    mod = fn_module(
        '''
        def f(a, b=3, c="x"):
            """Join things."""
            return f"{a}|{b!r}|{c!r}"
        '''
    )
    tool = fn_tool(load_one, mod)
    schema = props(tool)
    # No annotation: text; a default's own type is used when there is one.
    assert schema["properties"]["a"] == {"type": "string"}
    assert schema["properties"]["b"] == {"type": "integer"}
    assert schema["properties"]["c"] == {"type": "string"}
    assert schema["required"] == ["a"]
    assert tool.description == "Join things."
    assert call(tool, a="hi").message == "hi|3|'x'"
    assert call(tool, a="hi", b="7").message == "hi|7|'x'"


def test_annotated_scalars_defaults_and_optional(load_one, fn_module):
    mod = fn_module(
        '''
        from typing import Optional

        def f(name: str, count: int, ratio: float = 0.5, loud: bool = False,
              limit: Optional[int] = None, note: str | None = None) -> str:
            """Scalars."""
            return repr((name, count, ratio, loud, limit, note))
        '''
    )
    tool = fn_tool(load_one, mod)
    schema = props(tool)
    types = {k: v["type"] for k, v in schema["properties"].items()}
    assert types == {
        "name": "string", "count": "integer", "ratio": "number", "loud": "boolean",
        "limit": "integer", "note": "string",
    }
    assert schema["required"] == ["name", "count"]
    # Optional parameters left out reach the function as their defaults / None.
    assert call(tool, name="n", count=2).message == "('n', 2, 0.5, False, None, None)"
    assert call(tool, name="n", count="3", ratio="1.5", loud="true", limit=4).message == (
        "('n', 3, 1.5, True, 4, None)"
    )


def test_optional_without_default_is_passed_as_none(load_one, fn_module):
    mod = fn_module(
        '''
        from typing import Optional

        def f(city: Optional[str]) -> str:
            """Weather."""
            return f"city={city!r}"
        '''
    )
    tool = fn_tool(load_one, mod)
    assert props(tool)["required"] == []
    assert call(tool).message == "city=None"
    assert call(tool, city="Paris").message == "city='Paris'"


def test_lists_dicts_and_literals(load_one, fn_module):
    mod = fn_module(
        '''
        from typing import Literal

        def f(tags: list[str], counts: list[int], anything: list, opts: dict[str, int],
              unit: Literal["metric", "imperial"] = "metric") -> str:
            """Collections."""
            return repr((tags, counts, anything, opts, unit))
        '''
    )
    tool = fn_tool(load_one, mod)
    schema = props(tool)["properties"]
    assert schema["tags"] == {"type": "array", "items": {"type": "string"}}
    assert schema["counts"] == {"type": "array", "items": {"type": "integer"}}
    assert schema["anything"] == {"type": "array"}
    assert schema["opts"] == {"type": "object"}
    assert schema["unit"] == {"type": "string", "enum": ["metric", "imperial"]}
    response = call(tool, tags='["a", "b"]', counts=["1", 2], anything=[1, "x"], opts='{"k": 1}')
    assert response.message == "(['a', 'b'], [1, 2], [1, 'x'], {'k': 1}, 'metric')"
    bad = call(tool, tags=["a"], counts=[1], anything=[], opts={}, unit="kelvin")
    assert error_params(bad) == ["unit"]
    assert bad.context_data["valid_values"] == {"unit": ["metric", "imperial"]}


def test_datetime_types_are_parsed_before_the_call(load_one, fn_module):
    mod = fn_module(
        '''
        import datetime as dt

        def f(when: dt.datetime, day: dt.date, at: dt.time, lasting: dt.timedelta,
              days: list[dt.date] | None = None) -> dict:
            """Times."""
            return {"message": "ok", "types": [type(v).__name__ for v in (when, day, at, lasting)],
                    "days": [d.isoformat() for d in days or []], "utc": when.utcoffset().seconds}
        '''
    )
    tool = fn_tool(load_one, mod)
    schema = props(tool)["properties"]
    assert schema["when"] == {"type": "string", "format": "date-time"}
    assert schema["day"] == {"type": "string", "format": "date"}
    assert schema["at"] == {"type": "string", "format": "time"}
    assert schema["lasting"] == {"type": "string", "format": "duration"}
    assert schema["days"] == {"type": "array", "items": {"type": "string", "format": "date"}}
    response = call(
        tool, when="2026-01-18T09:30:00+01:00", day="2026-01-18", at="09:30", lasting="PT5M",
        days=["2026-01-19", "2026-01-20"],
    )
    assert response.success, response
    assert response.context_data["types"] == ["datetime", "date", "time", "timedelta"]
    assert response.context_data["days"] == ["2026-01-19", "2026-01-20"]
    assert response.context_data["utc"] == 3600
    bad = call(tool, when="tomorrow", day="2026-01-18", at="09:30", lasting="PT5M")
    assert error_params(bad) == ["when"]
    assert "Example: 2026-01-18T09:30:00Z" in bad.message


def test_future_annotations_are_resolved(load_one, fn_module):
    mod = fn_module(
        '''
        from __future__ import annotations
        import datetime

        def f(n: int, when: datetime.date | None = None) -> str:
            """Deferred annotations."""
            return f"{n + 1} {when}"
        '''
    )
    tool = fn_tool(load_one, mod)
    assert props(tool)["properties"]["n"] == {"type": "integer"}
    assert call(tool, n="41", when="2026-02-03").message == "42 2026-02-03"


def test_async_function(load_one, fn_module):
    mod = fn_module(
        '''
        import asyncio

        async def f(x: int) -> str:
            """Async."""
            await asyncio.sleep(0)
            return f"double {x * 2}"
        '''
    )
    tool = fn_tool(load_one, mod)
    assert call(tool, x="21").message == "double 42"

    async def from_inside_a_loop() -> str | None:
        # The node may call execute() from async code: the coroutine gets its own loop.
        return call(tool, x=5).message

    assert asyncio.run(from_inside_a_loop()) == "double 10"


GOOGLE = '''
def f(city: str, days: int = 1) -> str:
    """Weather forecast for a city.

    Looks the forecast up online.

    Args:
        city: The city name,
            as the user said it.
        days (int): How many days ahead.

    Returns:
        A sentence.
    """
    return city
'''

SPHINX = '''
def f(city: str, days: int = 1) -> str:
    """Weather forecast for a city.

    :param city: The city name,
        as the user said it.
    :param int days: How many days ahead.
    :returns: A sentence.
    """
    return city
'''

NUMPY = '''
def f(city: str, days: int = 1) -> str:
    """
    Weather forecast for a city.

    Parameters
    ----------
    city : str
        The city name,
        as the user said it.
    days : int, optional
        How many days ahead.

    Returns
    -------
    str
    """
    return city
'''


@pytest.mark.parametrize("source", [GOOGLE, SPHINX, NUMPY], ids=["google", "sphinx", "numpy"])
def test_docstring_styles(load_one, fn_module, source):
    tool = fn_tool(load_one, fn_module(source))
    assert tool.description == "Weather forecast for a city."
    schema = props(tool)["properties"]
    assert schema["city"]["description"] == "The city name, as the user said it."
    assert schema["days"]["description"] == "How many days ahead."


def test_declared_params_take_precedence_per_name(load_one, fn_module):
    mod = fn_module(GOOGLE)
    tool = load_one(
        f"""
        tools:
          - name: weather
            description: Forecast from the YAML file
            fn: {mod}:f
            params:
              - name: days
                description: Days from today, 0 for today
                example: 2
                required: false
        """
    )
    assert tool.description == "Forecast from the YAML file"
    schema = props(tool)
    # The type still comes from the annotation; the text from the declaration.
    assert schema["properties"]["days"] == {
        "type": "integer", "description": "Days from today, 0 for today. Example: 2",
    }
    assert schema["properties"]["city"]["description"] == "The city name, as the user said it."


def test_declared_param_missing_from_signature_is_a_load_error(load_one, fn_module, write_file):
    mod = fn_module(GOOGLE)
    path = write_file(
        "bad.yaml",
        f"""
        tools:
          - name: weather
            fn: {mod}:f
            params:
              - name: country
        """,
    )
    from jarvis.sdk.yaml_tools import load_tool_file

    with pytest.raises(ToolFileError) as info:
        load_tool_file(path)
    assert "country" in info.value.message and "city, days" in info.value.message
    # Line 1 is the blank line after the opening quotes: "- name: country" is line 6.
    assert info.value.line == 6 and info.value.tool == "weather"


def test_kwargs_function_accepts_declared_extra_params(load_one, fn_module):
    mod = fn_module(
        '''
        def f(**kwargs):
            """Anything."""
            return ",".join(f"{k}={v}" for k, v in sorted(kwargs.items()))
        '''
    )
    tool = load_one(
        f"""
        tools:
          - name: t
            fn: {mod}:f
            params:
              - name: a
                type: int
        """
    )
    assert call(tool, a="3").message == "a=3"


def test_positional_only_parameters(load_one, fn_module):
    mod = fn_module(
        '''
        def f(a: int, /, b: int = 2) -> int:
            """Add."""
            return a + b
        '''
    )
    assert call(fn_tool(load_one, mod), a=40).message == "42"


def test_unsupported_annotation_is_a_load_error(fn_module, write_file):
    mod = fn_module(
        '''
        class Thing: ...

        def f(x: Thing) -> str:
            """Nope."""
            return ""
        '''
    )
    path = write_file("bad.yaml", f"tools:\n  - name: t\n    fn: {mod}:f\n")
    from jarvis.sdk.yaml_tools import load_tool_file

    with pytest.raises(ToolFileError) as info:
        load_tool_file(path)
    assert "'x'" in info.value.message and info.value.line == 3


@pytest.mark.parametrize(
    ("body", "expected_message", "expected_context"),
    [
        ('return "plain text"', "plain text", {}),
        ('return {"message": "spoken", "count": 3}', "spoken", {"count": 3}),
        ('return {"count": 3}', None, {"count": 3}),
        ("return 42", "42", {}),
        ("return [1, 2]", "[1, 2]", {}),
        ("return None", "Done.", {}),
    ],
)
def test_return_values(load_one, fn_module, body, expected_message, expected_context):
    mod = fn_module(f'def f():\n    """R."""\n    {body}\n')
    response = call(fn_tool(load_one, mod))
    assert response.success
    assert response.message == expected_message
    for key, value in expected_context.items():
        assert response.context_data[key] == value


def test_dict_results_become_json(load_one, fn_module):
    mod = fn_module(
        '''
        import datetime as dt

        def f() -> dict:
            """D."""
            return {"when": dt.date(2026, 1, 2), "message": 5}
        '''
    )
    response = call(fn_tool(load_one, mod))
    assert response.context_data == {"when": "2026-01-02", "message": "5"}


def test_exceptions_become_tool_errors(load_one, fn_module):
    mod = fn_module(
        '''
        def f(x: int) -> str:
            """Fails."""
            raise RuntimeError(f"cannot handle {x}")
        '''
    )
    response = call(fn_tool(load_one, mod), x=3)
    assert not response.success and not response.is_validation_error
    assert response.message == "Tool 't' failed: RuntimeError: cannot handle 3"


def test_docstring_is_required_when_no_description(fn_module, write_file):
    mod = fn_module("def f(x):\n    return x\n")
    from jarvis.sdk.yaml_tools import load_tool_file

    with pytest.raises(ToolFileError, match="description"):
        load_tool_file(write_file("t.yaml", f"tools:\n  - name: t\n    fn: {mod}:f\n"))


def test_callable_attribute_path(load_one, fn_module):
    mod = fn_module(
        '''
        class Notes:
            @staticmethod
            def search(q: str) -> str:
                """Search notes."""
                return f"searched {q}"
        '''
    )
    assert call(fn_tool(load_one, mod, "Notes.search"), q="milk").message == "searched milk"
