"""`minimum` / `maximum` of a number parameter: the schema says them, the pipeline refuses
a value outside them, and a declaration that cannot hold is refused at construction."""

from __future__ import annotations

from typing import Any

import pytest

from jarvis.sdk import JarvisParameter


def test_the_schema_and_the_command_form_carry_the_bounds() -> None:
    volume = JarvisParameter("volume", "int", minimum=0, maximum=100, refinable=True)
    assert volume.to_schema() == {"type": "integer", "minimum": 0, "maximum": 100,
                                  "_refinable": True}
    assert (volume.to_dict()["minimum"], volume.to_dict()["maximum"]) == (0, 100)
    levels = JarvisParameter("levels", "array<float>", minimum=0.5)
    assert levels.to_schema()["items"] == {"type": "number", "minimum": 0.5}
    plain = JarvisParameter("count", "int")
    assert "minimum" not in plain.to_schema() and "minimum" not in plain.to_dict()


@pytest.mark.parametrize(("value", "error"), [
    (0, None), (100, None), (55, None),
    (-1, "Invalid value for 'volume': -1 is below the minimum of 0"),
    (101, "Invalid value for 'volume': 101 is above the maximum of 100"),
])
def test_a_value_outside_the_range_is_refused(value: int, error: str | None) -> None:
    volume = JarvisParameter("volume", "int", minimum=0, maximum=100)
    assert volume.validate(value) == (error is None, error)


def test_one_bound_alone_and_every_item_of_an_array() -> None:
    assert JarvisParameter("count", "int", minimum=1).validate(10**6) == (True, None)
    levels = JarvisParameter("levels", "float[]", maximum=1.0)
    assert levels.validate([0.2, 0.9]) == (True, None)
    assert levels.validate([0.2, 1.5])[1] == (
        "Invalid value for 'levels': 1.5 is above the maximum of 1.0")


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"param_type": "string", "minimum": 1}, "need a number type"),
    ({"param_type": "timedelta", "maximum": 3}, "need a number type"),
    ({"param_type": "int", "minimum": "1"}, "must be numbers"),
    ({"param_type": "int", "maximum": True}, "must be numbers"),
    ({"param_type": "float", "maximum": float("nan")}, "must be numbers"),
    ({"param_type": "int", "minimum": 5, "maximum": 1}, "is above its maximum"),
    ({"param_type": "int", "minimum": 1, "default": 0}, "out of its range"),
])
def test_a_range_that_cannot_hold_is_refused(kwargs: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        JarvisParameter("level", **kwargs)
