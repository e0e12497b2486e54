"""get_weather against a real local HTTP server that answers like Open-Meteo."""

from __future__ import annotations

import copy
import datetime as dt
import json
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from command_helpers import TZ, LocalServer, Recorded, make_context, request

from jarvis.commands.weather import GetWeatherCommand, describe_code

DATA = Path(__file__).parent / "data"
GEOCODING = json.loads((DATA / "open_meteo_geocoding_paris.json").read_text())
FORECAST = json.loads((DATA / "open_meteo_forecast_template.json").read_text())


def _forecast(record: Recorded) -> tuple[int, dict]:
    """Answer for the asked date range, as the real service does."""
    start = dt.date.fromisoformat(record.query["start_date"][0])
    end = dt.date.fromisoformat(record.query["end_date"][0])
    body = copy.deepcopy(FORECAST)
    count = (end - start).days + 1
    first = (start - _today()).days  # the template's entry i is the forecast for today + i
    body["daily"] = {k: v[first:first + count] for k, v in body["daily"].items()}
    body["daily"]["time"] = [(start + dt.timedelta(days=i)).isoformat() for i in range(count)]
    if record.query.get("temperature_unit") == ["fahrenheit"]:
        body["current"]["temperature_2m"] = 45.7
        body["daily"]["temperature_2m_max"] = [48.4, 47.1, 44.0, 35.2][first:first + count]
        body["daily"]["temperature_2m_min"] = [36.1, 39.2, 34.0, 27.3][first:first + count]
    return 200, body


def _geocoding(record: Recorded) -> tuple[int, dict]:
    if record.query["name"][0].lower() == "paris":
        return 200, GEOCODING
    return 200, {"generationtime_ms": 0.3}  # what the service sends when nothing matches


@pytest.fixture
def weather_server(local_server: LocalServer, monkeypatch: pytest.MonkeyPatch) -> LocalServer:
    local_server.route("GET", "/v1/search", _geocoding)
    local_server.route("GET", "/v1/forecast", _forecast)
    monkeypatch.setenv("JARVIS_OPEN_METEO_URL", local_server.url)
    monkeypatch.setenv("JARVIS_OPEN_METEO_GEOCODING_URL", local_server.url)
    return local_server


def _today() -> dt.date:
    return dt.datetime.now(ZoneInfo(TZ)).date()


def _at(day: dt.date) -> str:
    return dt.datetime.combine(day, dt.time(0), ZoneInfo(TZ)).isoformat()


def test_current_weather(weather_server: LocalServer) -> None:
    cmd = GetWeatherCommand().bind(make_context())
    response = cmd.execute(request("what's the weather in Paris"), city="Paris")
    assert response.success, response.message
    assert response.message == ("Right now in Paris it's 8 degrees and partly cloudy. "
                                "Today's high is 9 and the low 2.")
    assert response.context_data["country"] == "France"
    assert response.context_data["current"]["feels_like"] == 4.9
    search, forecast = weather_server.requests
    assert search.query["name"] == ["Paris"]
    assert forecast.query["latitude"] == ["48.85341"]
    assert forecast.query["timezone"] == ["Europe/Paris"]
    assert forecast.query["start_date"] == [_today().isoformat()]
    assert "temperature_unit" not in forecast.query


def test_tomorrow_and_imperial(weather_server: LocalServer) -> None:
    cmd = GetWeatherCommand().bind(make_context())
    tomorrow = _today() + dt.timedelta(days=1)
    response = cmd.execute(request(), city="Paris", resolved_datetimes=[_at(tomorrow)],
                           unit="imperial")
    assert response.message == ("Tomorrow in Paris: light rain, high 47 and low 39 degrees, "
                                "with an 85 percent chance of rain.")
    assert response.context_data["temperature_unit"] == "°F"
    forecast = weather_server.requests[-1]
    assert forecast.query["temperature_unit"] == ["fahrenheit"]
    assert forecast.query["end_date"] == [tomorrow.isoformat()]


def test_weekend_gives_one_sentence_per_day(weather_server: LocalServer) -> None:
    cmd = GetWeatherCommand().bind(make_context())
    days = [_today() + dt.timedelta(days=3), _today() + dt.timedelta(days=4)]
    response = cmd.execute(request(), city="Paris", resolved_datetimes=[_at(d) for d in days])
    assert response.message.count(" in Paris: ") == 2
    assert response.message.startswith(f"On {days[0]:%A} in Paris: light snow, high 2 and low -3 ")
    assert f"On {days[1]:%A} in Paris: clear skies" in response.message
    assert "60 percent chance of snow" in response.message
    assert [d["date"] for d in response.context_data["days"]] == [d.isoformat() for d in days]


def test_country_qualifier_picks_the_right_paris(weather_server: LocalServer) -> None:
    cmd = GetWeatherCommand().bind(make_context())
    response = cmd.execute(request(), city="Paris, Texas")
    assert response.context_data["region"] == "Texas"
    assert weather_server.requests[-1].query["timezone"] == ["America/Chicago"]


def test_default_city_from_node_secret(weather_server: LocalServer) -> None:
    ctx = make_context({("DEFAULT_WEATHER_CITY", "node"): "Paris"})
    response = GetWeatherCommand().bind(ctx).execute(request("what's the weather like"))
    assert response.success and response.context_data["city"] == "Paris"


def test_no_city_and_no_default_asks(weather_server: LocalServer) -> None:
    response = GetWeatherCommand().bind(make_context()).execute(request())
    assert response.is_validation_error
    assert response.context_data["errors"][0]["param_name"] == "city"
    assert weather_server.requests == []


def test_unknown_city_is_spoken(weather_server: LocalServer) -> None:
    response = GetWeatherCommand().bind(make_context()).execute(request(), city="Qwertyville")
    assert not response.success
    assert response.message == "I couldn't find a place called Qwertyville."


def test_service_error_reason_is_spoken(local_server: LocalServer,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    local_server.route("GET", "/v1/search", _geocoding)
    local_server.route("GET", "/v1/forecast",
                       (400, {"error": True, "reason": "Latitude must be in range"}))
    monkeypatch.setenv("JARVIS_OPEN_METEO_URL", local_server.url)
    monkeypatch.setenv("JARVIS_OPEN_METEO_GEOCODING_URL", local_server.url)
    response = GetWeatherCommand().bind(make_context()).execute(request(), city="Paris")
    assert not response.success
    assert response.message == "The weather service could not answer: Latitude must be in range"


def test_network_down_is_spoken(closed_port_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("JARVIS_OPEN_METEO_URL", closed_port_url)
    monkeypatch.setenv("JARVIS_OPEN_METEO_GEOCODING_URL", closed_port_url)
    response = GetWeatherCommand().bind(make_context()).execute(request(), city="Paris")
    assert not response.success
    assert response.message == "I couldn't reach the weather service right now."


def test_past_and_far_dates_are_refused(weather_server: LocalServer) -> None:
    cmd = GetWeatherCommand().bind(make_context())
    past = cmd.execute(request(), city="Paris",
                       resolved_datetimes=[_at(_today() - dt.timedelta(days=2))])
    assert not past.success and "past" in past.message
    far = cmd.execute(request(), city="Paris",
                      resolved_datetimes=[_at(_today() + dt.timedelta(days=30))])
    assert not far.success and "16 days" in far.message
    assert weather_server.requests == []


def test_post_process_and_codes() -> None:
    cmd = GetWeatherCommand()
    assert cmd.post_process_tool_call({"unit": "fahrenheit", "city": "here",
                                       "resolved_datetimes": "2026-01-18T00:00:00Z"}, "") == {
        "unit": "imperial", "resolved_datetimes": ["2026-01-18T00:00:00Z"]}
    assert describe_code(0) == "clear skies" and describe_code(95) == "thunderstorms"
    assert describe_code(None) == "unknown conditions"
