"""`get_weather`: current conditions and daily forecasts from Open-Meteo (no API key).

Base URLs come from `JARVIS_OPEN_METEO_URL` and `JARVIS_OPEN_METEO_GEOCODING_URL`
(defaults: the public Open-Meteo servers), so a local server can stand in for them.
"""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from typing import Any
from zoneinfo import ZoneInfo

import httpx

from jarvis.commands._numbers import format_number
from jarvis.sdk import (
    CommandAntipattern,
    CommandExample,
    CommandResponse,
    IJarvisCommand,
    JarvisParameter,
    JarvisSecret,
    RequestInformation,
    ValidationResult,
)

__all__ = [
    "DEFAULT_FORECAST_URL",
    "DEFAULT_GEOCODING_URL",
    "FORECAST_DAYS",
    "GetWeatherCommand",
    "Place",
    "WeatherError",
    "describe_code",
]

DEFAULT_FORECAST_URL = "https://api.open-meteo.com"
DEFAULT_GEOCODING_URL = "https://geocoding-api.open-meteo.com"
FORECAST_DAYS = 16
TIMEOUT_SECONDS = 6.0

_CODES = {
    0: "clear skies", 1: "mostly clear", 2: "partly cloudy", 3: "overcast",
    45: "foggy", 48: "foggy with frost", 51: "light drizzle", 53: "drizzle",
    55: "heavy drizzle", 56: "freezing drizzle", 57: "heavy freezing drizzle",
    61: "light rain", 63: "rain", 65: "heavy rain", 66: "freezing rain",
    67: "heavy freezing rain", 71: "light snow", 73: "snow", 75: "heavy snow",
    77: "snow grains", 80: "light showers", 81: "showers", 82: "heavy showers",
    85: "snow showers", 86: "heavy snow showers", 95: "thunderstorms",
    96: "thunderstorms with hail", 99: "thunderstorms with heavy hail",
}


def describe_code(code: Any) -> str:
    """A WMO weather code as words ("partly cloudy")."""
    try:
        return _CODES.get(int(code), "unsettled weather")
    except (TypeError, ValueError):
        return "unknown conditions"


class WeatherError(Exception):
    """A failure to speak: the service is down, or the place is unknown."""


@dataclass(frozen=True)
class Place:
    name: str
    latitude: float
    longitude: float
    timezone: str | None
    country: str | None
    admin1: str | None

    @property
    def spoken(self) -> str:
        return self.name


def _base(env: str, default: str) -> str:
    return (os.environ.get(env) or default).rstrip("/")


def _get(client: httpx.Client, url: str, params: dict[str, Any]) -> dict[str, Any]:
    try:
        response = client.get(url, params=params)
    except httpx.HTTPError as exc:
        raise WeatherError("I couldn't reach the weather service right now.") from exc
    try:
        body = response.json()
    except ValueError:
        body = {}
    if response.status_code >= 400 or (isinstance(body, dict) and body.get("error")):
        reason = body.get("reason") if isinstance(body, dict) else None
        raise WeatherError(
            "The weather service could not answer" + (f": {reason}" if reason else ".")
        )
    if not isinstance(body, dict):
        raise WeatherError("The weather service sent an answer I could not read.")
    return body


def geocode(client: httpx.Client, city: str) -> Place:
    """The best match for "Paris" or "Paris, Texas"; WeatherError when there is none."""
    name, _, qualifier = (part.strip() for part in city.partition(","))
    body = _get(client, f"{_base('JARVIS_OPEN_METEO_GEOCODING_URL', DEFAULT_GEOCODING_URL)}"
                "/v1/search", {"name": name, "count": 10, "language": "en", "format": "json"})
    results = [r for r in body.get("results") or [] if isinstance(r, dict)]
    if qualifier:
        wanted = qualifier.lower()
        preferred = [
            r for r in results
            if wanted in {str(r.get(k, "")).lower() for k in ("country", "admin1", "country_code")}
        ]
        results = preferred or results
    if not results:
        raise WeatherError(f"I couldn't find a place called {city}.")
    best = results[0]
    try:
        return Place(str(best["name"]), float(best["latitude"]), float(best["longitude"]),
                     best.get("timezone"), best.get("country"), best.get("admin1"))
    except (KeyError, TypeError, ValueError) as exc:
        raise WeatherError("The weather service sent an answer I could not read.") from exc


def forecast(
    client: httpx.Client, place: Place, start: dt.date, end: dt.date, imperial: bool
) -> dict[str, Any]:
    params: dict[str, Any] = {
        "latitude": place.latitude,
        "longitude": place.longitude,
        "current": "temperature_2m,apparent_temperature,weather_code,wind_speed_10m",
        "daily": "weather_code,temperature_2m_max,temperature_2m_min,"
                 "precipitation_probability_max",
        "timezone": place.timezone or "auto",
        "start_date": start.isoformat(),
        "end_date": end.isoformat(),
    }
    if imperial:
        params["temperature_unit"] = "fahrenheit"
        params["wind_speed_unit"] = "mph"
    return _get(client, f"{_base('JARVIS_OPEN_METEO_URL', DEFAULT_FORECAST_URL)}/v1/forecast",
                params)


def _degrees(value: Any) -> str:
    return format_number(float(value), 0) if isinstance(value, int | float) else "unknown"


_SNOW_CODES = {71, 73, 75, 77, 85, 86}


def _chance_text(probability: Any, code: Any) -> str:
    """", with an 80 percent chance of rain" (only when the chance is worth a mention)."""
    if not isinstance(probability, int | float) or probability < 20:
        return ""
    number = format_number(float(probability), 0)
    article = "an" if number.startswith(("8", "11", "18")) and len(number) in (1, 2) else "a"
    kind = "snow" if code in _SNOW_CODES else "rain"
    return f", with {article} {number} percent chance of {kind}"


def _day_name(day: dt.date, today: dt.date) -> str:
    delta = (day - today).days
    if delta == 0:
        return "today"
    if delta == 1:
        return "tomorrow"
    return f"on {day:%A}" if delta < 7 else f"on {day:%A}, {day:%B} {day.day}"


def _daily_by_date(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The forecast's daily columns as one entry per ISO date ("2026-01-19")."""
    daily = data.get("daily") or {}
    by_date: dict[str, dict[str, Any]] = {}
    for index, day_text in enumerate(daily.get("time") or []):
        def pick(key: str, index: int = index) -> Any:
            values = daily.get(key) or []
            return values[index] if index < len(values) else None

        by_date[day_text] = {
            "date": day_text,
            "code": pick("weather_code"),
            "conditions": describe_code(pick("weather_code")),
            "high": pick("temperature_2m_max"),
            "low": pick("temperature_2m_min"),
            "precipitation_probability": pick("precipitation_probability_max"),
        }
    return by_date


def _day_sentence(
    place: Place, info: dict[str, Any], day: dt.date, today: dt.date, current: dict[str, Any]
) -> str:
    """One day's weather in a sentence; today's opens with the conditions right now."""
    rain = info["precipitation_probability"]
    rain_text = _chance_text(rain, info["code"])
    if day == today and current:
        return (
            f"Right now in {place.spoken} it's {_degrees(current.get('temperature_2m'))} "
            f"degrees and {describe_code(current.get('weather_code'))}. Today's high is "
            f"{_degrees(info['high'])} and the low {_degrees(info['low'])}{rain_text}."
        )
    when = _day_name(day, today)
    return (
        f"{when[0].upper() + when[1:]} in {place.spoken}: {info['conditions']}, "
        f"high {_degrees(info['high'])} and low {_degrees(info['low'])} "
        f"degrees{rain_text}."
    )


class GetWeatherCommand(IJarvisCommand):
    """Weather now and forecasts up to 16 days ahead for a city."""

    @property
    def command_name(self) -> str:
        return "get_weather"

    @property
    def description(self) -> str:
        return (
            "Current weather or the forecast (temperature, rain, snow, wind) for a city, "
            "today or on coming days."
        )

    @property
    def parameters(self) -> list[JarvisParameter]:
        return [
            JarvisParameter("city", "string", refinable=True,
                            description="City name, optionally with country or state "
                                        "('Paris, France'); omit for the home city",
                            example="London"),
            JarvisParameter("resolved_datetimes", "array<datetime>", refinable=True,
                            description="The days asked about, as ISO-8601 date-times from "
                                        "resolve_relative_date; omit for today"),
            JarvisParameter("unit", "string", enum_values=["metric", "imperial"], refinable=True,
                            # The prompt shows a description up to its first "(" or ";".
                            description="metric is Celsius, imperial is Fahrenheit; omit "
                                        "unless the user asks for one",
                            enum_synonyms={"metric": ["celsius", "centigrade", "metric"],
                                           "imperial": ["fahrenheit", "imperial"]}),
        ]

    @property
    def required_secrets(self) -> list[JarvisSecret]:
        return [
            JarvisSecret("DEFAULT_WEATHER_CITY", "City used when none is named, e.g. 'Boston'",
                         scope="node", required=False, is_sensitive=False),
            JarvisSecret("DEFAULT_WEATHER_UNIT", "metric or imperial (default metric)",
                         scope="node", required=False, is_sensitive=False),
        ]

    @property
    def examples(self) -> list[CommandExample]:
        return [
            CommandExample("what's the weather like", {}, is_primary=True),
            CommandExample("what's the weather in Paris", {"city": "Paris"}),
            CommandExample("will it rain in Seattle tomorrow",
                           {"city": "Seattle",
                            "resolved_datetimes": ["2026-01-19T00:00:00-08:00"]}),
            CommandExample("how hot will it be this weekend in fahrenheit",
                           {"resolved_datetimes": ["2026-01-24T00:00:00-05:00",
                                                   "2026-01-25T00:00:00-05:00"],
                            "unit": "imperial"}),
        ]

    @property
    def rules(self) -> list[str]:
        return [
            "Omit city for the weather at home",
            "For a day other than today, resolve it first and pass resolved_datetimes",
        ]

    @property
    def antipatterns(self) -> list[CommandAntipattern]:
        return [
            CommandAntipattern("get_current_time", "'What time is it' or 'what day is it' is "
                               "get_current_time, not weather."),
            CommandAntipattern("convert_measurement", "'What is 30 celsius in fahrenheit' is "
                               "convert_measurement."),
        ]

    @property
    def keywords(self) -> list[str]:
        return ["weather", "forecast", "rain", "snow", "temperature", "hot", "cold", "sunny",
                "wind", "umbrella", "cloudy", "storm", "humid", "outside", "jacket", "coat",
                "chilly", "freezing", "sunscreen"]

    def post_process_tool_call(self, args: dict[str, Any], voice_command: str) -> dict[str, Any]:
        fixed = dict(args)
        unit = fixed.get("unit")
        if isinstance(unit, str):
            lowered = unit.strip().lower()
            if lowered in ("fahrenheit", "f", "us", "imperial units", "°f"):
                fixed["unit"] = "imperial"
            elif lowered in ("celsius", "c", "si", "metric units", "°c", "centigrade"):
                fixed["unit"] = "metric"
        if isinstance(fixed.get("resolved_datetimes"), str):
            fixed["resolved_datetimes"] = [fixed["resolved_datetimes"]]
        city = fixed.get("city")
        if isinstance(city, str) and city.strip().lower() in ("here", "home", "local",
                                                             "my location", "current location"):
            fixed.pop("city")
        return fixed

    def validate_call(self, **kwargs: Any) -> list[ValidationResult]:
        results = super().validate_call(**kwargs)
        if not kwargs.get("city") and not self.get_secret("DEFAULT_WEATHER_CITY", "node"):
            results.append(ValidationResult(
                success=False, param_name="city", command_name=self.command_name,
                message="Which city do you want the weather for? (No home city is set: "
                        "jarvis secrets set DEFAULT_WEATHER_CITY --scope node)",
            ))
        return results

    def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
        city = kwargs.get("city") or self.get_secret("DEFAULT_WEATHER_CITY", "node") or ""
        unit = kwargs.get("unit") or (self.get_secret("DEFAULT_WEATHER_UNIT", "node") or "metric")
        imperial = unit.strip().lower() == "imperial"
        zone_name = request_info.timezone or self.context.timezone
        today = dt.datetime.now(ZoneInfo(zone_name)).date() if zone_name else dt.date.today()
        days = sorted({d.date() for d in kwargs.get("resolved_datetimes") or []}) or [today]
        if days[0] < today:
            return CommandResponse.error_response("I can only tell the weather for today and "
                                                  "the coming days, not past days.")
        if (days[-1] - today).days >= FORECAST_DAYS:
            return CommandResponse.error_response(
                f"I can only see the forecast {FORECAST_DAYS} days ahead.")
        try:
            with httpx.Client(timeout=TIMEOUT_SECONDS) as client:
                place = geocode(client, city)
                data = forecast(client, place, days[0], days[-1], imperial)
        except WeatherError as exc:
            return CommandResponse.error_response(str(exc), {"city": city})
        return self._answer(place, data, days, today, imperial)

    def _answer(
        self, place: Place, data: dict[str, Any], days: list[dt.date], today: dt.date,
        imperial: bool,
    ) -> CommandResponse:
        by_date = _daily_by_date(data)
        current = data.get("current") or {}
        sentences = []
        reported = []
        for day in days:
            info = by_date.get(day.isoformat())
            if info is None:
                continue
            reported.append(info)
            sentences.append(_day_sentence(place, info, day, today, current))
        if not sentences:
            return CommandResponse.error_response(
                "The weather service had no forecast for that day.", {"city": place.name})
        return CommandResponse.success_response(
            {
                "city": place.name,
                "country": place.country,
                "region": place.admin1,
                "unit": "imperial" if imperial else "metric",
                "temperature_unit": "°F" if imperial else "°C",
                "current": {
                    "temperature": current.get("temperature_2m"),
                    "feels_like": current.get("apparent_temperature"),
                    "conditions": describe_code(current.get("weather_code")),
                    "wind_speed": current.get("wind_speed_10m"),
                } if current else None,
                "days": reported,
            },
            message=" ".join(sentences),
        )
