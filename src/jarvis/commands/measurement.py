"""`convert_measurement`: length, mass, volume, temperature and speed conversions."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from jarvis.commands._numbers import format_number, parse_number
from jarvis.sdk import (
    CommandAntipattern,
    CommandExample,
    CommandResponse,
    IJarvisCommand,
    JarvisParameter,
    RequestInformation,
    ValidationResult,
)

__all__ = ["UNITS", "ConvertMeasurementCommand", "Unit", "convert", "find_unit"]


@dataclass(frozen=True)
class Unit:
    """A unit; `factor` is its size in the category's base unit (temperature is special)."""

    name: str
    plural: str
    category: str
    factor: float
    aliases: tuple[str, ...] = ()


UNITS: tuple[Unit, ...] = (
    # length, base: meter
    Unit("millimeter", "millimeters", "length", 0.001, ("mm", "millimetre")),
    Unit("centimeter", "centimeters", "length", 0.01, ("cm", "centimetre")),
    Unit("meter", "meters", "length", 1.0, ("m", "metre")),
    Unit("kilometer", "kilometers", "length", 1000.0, ("km", "kilometre", "kms", "klicks")),
    Unit("inch", "inches", "length", 0.0254, ("in", '"')),
    Unit("foot", "feet", "length", 0.3048, ("ft", "'", "foots")),
    Unit("yard", "yards", "length", 0.9144, ("yd", "yds")),
    Unit("mile", "miles", "length", 1609.344, ("mi",)),
    Unit("nautical mile", "nautical miles", "length", 1852.0, ("nmi",)),
    # mass, base: kilogram
    Unit("milligram", "milligrams", "mass", 1e-6, ("mg", "milligramme")),
    Unit("gram", "grams", "mass", 0.001, ("g", "gr", "gramme")),
    Unit("kilogram", "kilograms", "mass", 1.0, ("kg", "kgs", "kilo", "kilos", "kilogramme")),
    Unit("metric ton", "metric tons", "mass", 1000.0, ("tonne", "tonnes", "t")),
    Unit("ounce", "ounces", "mass", 0.028349523125, ("oz",)),
    Unit("pound", "pounds", "mass", 0.45359237, ("lb", "lbs")),
    Unit("stone", "stone", "mass", 6.35029318, ("st", "stones")),
    Unit("ton", "tons", "mass", 907.18474, ("short ton", "us ton")),
    # volume, base: liter
    Unit("milliliter", "milliliters", "volume", 0.001, ("ml", "millilitre", "mls")),
    Unit("liter", "liters", "volume", 1.0, ("l", "litre", "ltr")),
    Unit("teaspoon", "teaspoons", "volume", 0.00492892159375, ("tsp",)),
    Unit("tablespoon", "tablespoons", "volume", 0.01478676478125, ("tbsp", "tbs")),
    Unit("fluid ounce", "fluid ounces", "volume", 0.0295735295625, ("fl oz", "floz")),
    Unit("cup", "cups", "volume", 0.2365882365, ()),
    Unit("pint", "pints", "volume", 0.473176473, ("pt",)),
    Unit("quart", "quarts", "volume", 0.946352946, ("qt",)),
    Unit("gallon", "gallons", "volume", 3.785411784, ("gal", "us gallon")),
    Unit("imperial gallon", "imperial gallons", "volume", 4.54609, ("uk gallon",)),
    Unit("cubic meter", "cubic meters", "volume", 1000.0, ("m3", "m^3", "cubic metre")),
    # temperature (converted through Celsius)
    Unit("degree Celsius", "degrees Celsius", "temperature", 1.0,
         ("celsius", "c", "°c", "centigrade")),
    Unit("degree Fahrenheit", "degrees Fahrenheit", "temperature", 1.0,
         ("fahrenheit", "f", "°f")),
    Unit("kelvin", "kelvin", "temperature", 1.0, ("k", "kelvins")),
    # speed, base: meters per second
    Unit("meter per second", "meters per second", "speed", 1.0,
         ("m/s", "mps", "metres per second")),
    Unit("kilometer per hour", "kilometers per hour", "speed", 1000 / 3600,
         ("km/h", "kph", "kmh", "kmph", "kilometres per hour", "km per hour")),
    Unit("mile per hour", "miles per hour", "speed", 1609.344 / 3600, ("mph", "mi/h")),
    Unit("knot", "knots", "speed", 1852 / 3600, ("kn", "kt", "kts")),
    Unit("foot per second", "feet per second", "speed", 0.3048, ("ft/s", "fps")),
)


def _key(text: str) -> str:
    text = text.strip().lower().replace("°", " °").replace("_", " ")
    text = re.sub(r"\s+", " ", text).strip()
    text = re.sub(r"^(?:degrees?|deg)\s+", "", text)
    return text.replace(" °", "°").replace("° ", "°")


def _build_lookup() -> dict[str, Unit]:
    lookup: dict[str, Unit] = {}
    for unit in UNITS:
        for spelling in (unit.name, unit.plural, *unit.aliases):
            lookup[_key(spelling)] = unit
    return lookup


_LOOKUP = _build_lookup()


def find_unit(text: object) -> Unit | None:
    """"km", "Kilometers", "°F", "lbs" -> the unit; None when unknown."""
    if not isinstance(text, str) or not text.strip():
        return None
    key = _key(text)
    if key in _LOOKUP:
        return _LOOKUP[key]
    for suffix in ("es", "s"):  # plural forms not listed ("kgs", "cups")
        if key.endswith(suffix) and key[: -len(suffix)] in _LOOKUP:
            return _LOOKUP[key[: -len(suffix)]]
    return None


def _to_celsius(value: float, unit: Unit) -> float:
    if unit.name == "degree Fahrenheit":
        return (value - 32) * 5 / 9
    if unit.name == "kelvin":
        return value - 273.15
    return value


def _from_celsius(value: float, unit: Unit) -> float:
    if unit.name == "degree Fahrenheit":
        return value * 9 / 5 + 32
    if unit.name == "kelvin":
        return value + 273.15
    return value


def convert(value: float, source: Unit, target: Unit) -> float:
    """Convert between two units of the same category (ValueError otherwise)."""
    if source.category != target.category:
        raise ValueError(f"Cannot convert {source.plural} ({source.category}) "
                         f"to {target.plural} ({target.category})")
    if source.category == "temperature":
        return _from_celsius(_to_celsius(value, source), target)
    return value * source.factor / target.factor


def _speakable(value: float) -> str:
    """Rounded for the ear: 6.21, 1609.3, 0.000621."""
    size = abs(value)
    if size == 0 or size >= 100:
        return format_number(value, 1)
    if size >= 1:
        return format_number(value, 2)
    digits = 2 - math.floor(math.log10(size))  # three significant digits
    return format_number(value, min(digits, 12))


def _amount(value: float, unit: Unit) -> str:
    text = _speakable(value)
    return f"{text} {unit.name if text in ('1', '-1') else unit.plural}"


_KIND = {"length": "length", "mass": "weight", "volume": "volume",
         "temperature": "temperature", "speed": "speed"}


def _units_of(category: str | None) -> list[str]:
    return [u.plural for u in UNITS if category is None or u.category == category]


# "how many tablespoons (are there) in a cup": the unit asked for, then the one it is in.
_HOW_MANY_IN = re.compile(
    r"\bhow many (?P<target>[a-z ]+?) (?:are )?(?:there )?in (?:a |an |one |[\d.,]+ )?"
    r"(?P<source>[a-z ]+?)\W*$")


class ConvertMeasurementCommand(IJarvisCommand):
    """Converts a value from one unit to another."""

    @property
    def command_name(self) -> str:
        return "convert_measurement"

    @property
    def description(self) -> str:
        return (
            "Convert a measurement between units of length, weight, volume, temperature "
            "or speed ('how many miles is 10 kilometers', '350 fahrenheit in celsius')."
        )

    @property
    def parameters(self) -> list[JarvisParameter]:
        return [
            JarvisParameter("value", "float", required=True, refinable=True,
                            description="The number to convert",
                            example=10),
            JarvisParameter("from_unit", "string", required=True,
                            description="The unit of the value, e.g. kilometers, pounds, cups, "
                                        "fahrenheit, mph", example="kilometers"),
            JarvisParameter("to_unit", "string", required=True, refinable=True,
                            description="The unit to convert to", example="miles"),
        ]

    @property
    def examples(self) -> list[CommandExample]:
        return [
            CommandExample("how many miles is 10 kilometers",
                           {"value": 10, "from_unit": "kilometers", "to_unit": "miles"},
                           is_primary=True),
            CommandExample("convert 350 fahrenheit to celsius",
                           {"value": 350, "from_unit": "fahrenheit", "to_unit": "celsius"}),
            CommandExample("how many cups are in 2 liters",
                           {"value": 2, "from_unit": "liters", "to_unit": "cups"}),
            CommandExample("what is 150 pounds in kilograms",
                           {"value": 150, "from_unit": "pounds", "to_unit": "kilograms"}),
            CommandExample("60 miles per hour in kilometers per hour",
                           {"value": 60, "from_unit": "mph", "to_unit": "km/h"}),
        ]

    @property
    def critical_rules(self) -> list[str]:
        return [
            "In 'how many X in N Y', the value is N, from_unit is Y and to_unit is X",
        ]

    @property
    def rules(self) -> list[str]:
        return ["Units can be written as words or abbreviations: km, lbs, °F, mph, ml"]

    @property
    def antipatterns(self) -> list[CommandAntipattern]:
        return [
            CommandAntipattern("calculate", "Plain arithmetic ('5 times 3') is calculate."),
            CommandAntipattern("get_weather", "'What's the temperature outside' is get_weather."),
        ]

    @property
    def keywords(self) -> list[str]:
        # Units, not question words: "how many" is as often small talk ("how many legs
        # does a spider have") as a conversion.
        return ["convert", "miles", "kilometers", "pounds", "celsius", "fahrenheit", "cups",
                "inches", "feet", "meters", "centimeters", "grams", "kilograms", "kilos",
                "ounces", "liters", "gallons", "quarts", "pints", "yards", "tablespoons",
                "teaspoons", "mph"]

    def post_process_tool_call(self, args: dict[str, Any], voice_command: str) -> dict[str, Any]:
        fixed = dict(args)
        if isinstance(fixed.get("value"), str):
            number = parse_number(fixed["value"])
            if number is not None:
                fixed["value"] = number
        for name in ("from_unit", "to_unit"):
            value = fixed.get(name)
            if isinstance(value, str):  # "10 km" -> "km"; validate_call canonicalizes spellings
                fixed[name] = re.sub(r"^[0-9.,\s]+(?=[^\s0-9])", "", value.strip())
        asked = _HOW_MANY_IN.search(voice_command.lower())
        units = (find_unit(fixed.get("from_unit")), find_unit(fixed.get("to_unit")))
        if asked and None not in units and units == (find_unit(asked["target"]),
                                                     find_unit(asked["source"])):
            # "how many tablespoons in a cup" converts cups to tablespoons; a small model
            # writes the units in the order said.
            fixed["from_unit"], fixed["to_unit"] = fixed["to_unit"], fixed["from_unit"]
        return fixed

    def validate_call(self, **kwargs: Any) -> list[ValidationResult]:
        results = super().validate_call(**kwargs)
        source = find_unit(kwargs.get("from_unit"))
        target = find_unit(kwargs.get("to_unit"))
        for name, unit in (("from_unit", source), ("to_unit", target)):
            raw = kwargs.get(name)
            if raw is None:
                continue
            if unit is None:
                results.append(ValidationResult(
                    success=False, param_name=name, command_name=self.command_name,
                    message=f"Unknown unit '{raw}'", valid_values=_units_of(None),
                ))
            elif raw != unit.plural:
                results.append(ValidationResult(
                    success=True, param_name=name, command_name=self.command_name,
                    suggested_value=unit.plural,
                ))
        if source and target and source.category != target.category:
            results.append(ValidationResult(
                success=False, param_name="to_unit", command_name=self.command_name,
                message=(f"Cannot convert {source.plural}, a {_KIND[source.category]}, to "
                         f"{target.plural}, a {_KIND[target.category]}"),
                valid_values=[u for u in _units_of(source.category) if u != source.plural],
            ))
        return results

    def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
        value: float = kwargs["value"]
        source = find_unit(kwargs["from_unit"])
        target = find_unit(kwargs["to_unit"])
        assert source is not None and target is not None  # validate_call made sure
        result = convert(value, source, target)
        return CommandResponse.success_response(
            {
                "value": value,
                "from_unit": source.plural,
                "to_unit": target.plural,
                "category": source.category,
                "result": result,
                "result_text": _speakable(result),
            },
            message=f"{_amount(value, source)} is {_amount(result, target)}.",
        )
