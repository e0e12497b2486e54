"""The execution service used as its reference documents show it: no arguments at all.

The center is the real app on a loopback port with a scripted LLM (the test is about the
protocol); the built-in weather command runs for real against a loopback stand-in for
Open-Meteo, so nothing leaves the machine.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from jarvis.center.llm.scripted import ScriptedBackend, tool_call
from jarvis.center.server import CenterServer
from jarvis.center.settings import CenterSettings
from jarvis.node import CenterError, CommandExecutionService, VoiceCommandResult

MIAMI = {"name": "Miami", "latitude": 25.77427, "longitude": -80.19366,
         "timezone": "America/New_York", "country": "United States", "admin1": "Florida"}


def _forecast(query: dict[str, list[str]]) -> dict[str, Any]:
    day = query["start_date"][0]
    return {
        "current": {"temperature_2m": 27.8, "apparent_temperature": 30.1, "weather_code": 0,
                    "wind_speed_10m": 9.0},
        "daily": {"time": [day], "weather_code": [0], "temperature_2m_max": [29.6],
                  "temperature_2m_min": [22.9], "precipitation_probability_max": [40]},
    }


class _OpenMeteo(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        query = parse_qs(parts.query)
        if parts.path == "/v1/search":
            found = query["name"][0].lower() == "miami"
            body: dict[str, Any] = {"results": [MIAMI]} if found else {}
        else:
            body = _forecast(query)
        data = json.dumps(body).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def open_meteo(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _OpenMeteo)
    url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    monkeypatch.setenv("JARVIS_OPEN_METEO_URL", url)
    monkeypatch.setenv("JARVIS_OPEN_METEO_GEOCODING_URL", url)
    try:
        yield url
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def center(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[CenterServer]:
    backend = ScriptedBackend([tool_call("get_weather", city="Miami")])
    settings = CenterSettings(data_dir=tmp_path / "center", log_level="warning")
    server = CenterServer(settings, backend).start()
    monkeypatch.setenv("JARVIS_CENTER_URL", server.url)
    monkeypatch.setenv("JARVIS_CENTER_KEY", server.add_node("node"))
    try:
        yield server
    finally:
        server.stop()


def test_the_documented_example_runs_as_written(
    data_dir: Path, open_meteo: str, center: CenterServer, capsys: pytest.CaptureFixture[str]
) -> None:
    # The reference example, with only its import path translated to this package.
    service = CommandExecutionService()

    # Process a voice command with tool calling
    result = service.process_voice_command(
        "What's the weather in Miami?",
        register_tools=True  # Register available tools
    )

    print(result["message"])  # Speaks final response

    service.close()
    spoken = capsys.readouterr().out.strip()
    assert spoken == ("Right now in Miami it's 28 degrees and clear skies. "
                      "Today's high is 30 and the low 23, with a 40 percent chance of rain.")
    assert result.message == spoken and result["stop_reason"] == "complete"
    assert [call.name for call in result["tool_calls"]] == ["get_weather"]
    # The defaults came from the environment: the built-ins, this data folder, this center.
    assert service.settings.data_dir == data_dir and service.settings.timezone == "Europe/Paris"
    assert (data_dir / "node.db").exists()
    assert "set_timer" in service.registry and "reminder" in service.registry
    request = center.backend.requests[0]
    offered = {tool["function"]["name"] for tool in request.tools}
    assert {"get_weather", "set_timer", "reminder"} <= offered


def test_the_result_reads_as_attributes_and_as_a_mapping() -> None:
    result = VoiceCommandResult(message="Done.", stop_reason="complete", conversation_id="c1")
    assert result["message"] == result.message == "Done."
    assert result.get("wait_for_input") is False and result.get("nope") is None
    assert "conversation_id" in result and "nope" not in result
    assert dict(result) == result.to_dict()
    assert list(result)[:3] == ["message", "stop_reason", "conversation_id"]
    with pytest.raises(KeyError):
        result["to_dict"]


def test_without_a_center_the_service_says_how_to_configure_one(data_dir: Path) -> None:
    with CommandExecutionService() as service:
        assert service.client is None
        with pytest.raises(CenterError, match="set JARVIS_CENTER_URL"):
            service.process_voice_command("What's the weather in Miami?")
