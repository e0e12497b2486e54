from __future__ import annotations

import pytest
from command_helpers import make_context, request

from jarvis.commands.measurement import ConvertMeasurementCommand, find_unit


@pytest.fixture
def conv() -> ConvertMeasurementCommand:
    cmd = ConvertMeasurementCommand()
    cmd.bind(make_context())
    return cmd


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((10, "km", "miles"), "10 kilometers is 6.21 miles."),
        ((1, "mile", "kilometers"), "1 mile is 1.61 kilometers."),
        ((350, "°F", "celsius"), "350 degrees Fahrenheit is 176.7 degrees Celsius."),
        ((100, "degrees celsius", "F"), "100 degrees Celsius is 212 degrees Fahrenheit."),
        ((0, "C", "kelvin"), "0 degrees Celsius is 273.1 kelvin."),
        ((150, "lbs", "kg"), "150 pounds is 68.04 kilograms."),
        ((2, "liters", "cups"), "2 liters is 8.45 cups."),
        ((60, "mph", "km/h"), "60 miles per hour is 96.56 kilometers per hour."),
        ((3, "feet", "inches"), "3 feet is 36 inches."),
        ((1, "inch", "km"), "1 inch is 0.0000254 kilometers."),
    ],
)
def test_conversions(conv: ConvertMeasurementCommand, args: tuple, message: str) -> None:
    value, source, target = args
    response = conv.execute(request(), value=value, from_unit=source, to_unit=target)
    assert response.success, response.message
    assert response.message == message


def test_structured_result(conv: ConvertMeasurementCommand) -> None:
    data = conv.execute(request(), value=5, from_unit="kilograms", to_unit="pounds").context_data
    assert data["category"] == "mass"
    assert data["result"] == pytest.approx(11.0231, rel=1e-4)


def test_incompatible_units_validation_error(conv: ConvertMeasurementCommand) -> None:
    response = conv.execute(request(), value=5, from_unit="kg", to_unit="miles")
    assert response.is_validation_error
    error = response.context_data["errors"][0]
    assert error["param_name"] == "to_unit"
    assert "weight" in error["message"] and "length" in error["message"]
    assert "pounds" in error["valid_values"] and "miles" not in error["valid_values"]


def test_unknown_unit_validation_error(conv: ConvertMeasurementCommand) -> None:
    response = conv.execute(request(), value=5, from_unit="parsecs", to_unit="miles")
    assert response.is_validation_error
    assert response.context_data["errors"][0]["param_name"] == "from_unit"
    assert "kilometers" in response.context_data["valid_values"]["from_unit"]


def test_post_process_number_words_and_values_in_units(conv: ConvertMeasurementCommand) -> None:
    fixed = conv.post_process_tool_call({"value": "ten", "from_unit": "10 km",
                                         "to_unit": "miles"}, "")
    assert fixed == {"value": 10.0, "from_unit": "km", "to_unit": "miles"}


def test_how_many_of_one_unit_in_another_converts_the_other(
        conv: ConvertMeasurementCommand) -> None:
    # The units written in the order said are put the way the question means them.
    fixed = conv.post_process_tool_call(
        {"value": 1, "from_unit": "tablespoons", "to_unit": "cups"},
        "how many tablespoons in a cup")
    assert (fixed["from_unit"], fixed["to_unit"]) == ("cups", "tablespoons")
    assert conv.execute(request(), **fixed).message == "1 cup is 16 tablespoons."
    fixed = conv.post_process_tool_call(
        {"value": 2, "from_unit": "pounds", "to_unit": "grams"},
        "how many grams are there in 2 pounds?")
    assert (fixed["from_unit"], fixed["to_unit"]) == ("pounds", "grams")
    third = conv.post_process_tool_call({"value": 3, "from_unit": "km", "to_unit": "miles"},
                                       "how many km in 3 miles")
    assert (third["from_unit"], third["to_unit"]) == ("miles", "km")


@pytest.mark.parametrize("alias", ["km", "Kilometers", "kilometre", "KMs"])
def test_aliases(alias: str) -> None:
    unit = find_unit(alias)
    assert unit is not None and unit.name == "kilometer"


def test_find_unit_unknown() -> None:
    assert find_unit("furlongs") is None and find_unit("") is None
