"""Commands defined for the node tests, so they do not depend on the built-in commands
(and a transport that counts what the node sends)."""

from __future__ import annotations

import base64
import hashlib
import zipfile
from pathlib import Path
from typing import Any, ClassVar

import httpx

from jarvis.sdk import (
    CommandResponse,
    IJarvisCommand,
    JarvisParameter,
    JarvisSecret,
    PreRouteResult,
    RequestInformation,
)


class CountingTransport(httpx.HTTPTransport):
    """Counts the HTTP requests the node really sends."""

    def __init__(self) -> None:
        super().__init__()
        self.paths: list[str] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        self.paths.append(request.url.path)
        return super().handle_request(request)


class Recording(IJarvisCommand):
    """Remembers every call to `run` (kwargs and request info)."""

    def __init__(self) -> None:
        self.calls: list[tuple[RequestInformation, dict[str, Any]]] = []

    @property
    def command_name(self) -> str:
        raise NotImplementedError

    @property
    def description(self) -> str:
        raise NotImplementedError

    def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
        self.calls.append((request_info, kwargs))
        return self.answer(**kwargs)

    def answer(self, **kwargs: Any) -> CommandResponse:
        return CommandResponse.success_response(message="ok")


class PauseMusic(Recording):
    command_name = "control_music"
    description = "Pause, resume or skip the music."
    parameters: ClassVar[list[JarvisParameter]] = [
        JarvisParameter("action", "string", required=True, enum_values=["pause", "resume", "skip"])
    ]

    def pre_route(self, voice_command: str) -> PreRouteResult | None:
        if voice_command.lower().strip(" .!") in ("pause", "pause the music"):
            return PreRouteResult(arguments={"action": "pause"}, spoken_response="Paused.")
        return None

    def answer(self, **kwargs: Any) -> CommandResponse:
        return CommandResponse.success_response(message=f"Music: {kwargs['action']}.")


class Forecast(Recording):
    command_name = "get_forecast"
    description = "Weather forecast for a city on one or more days."
    parameters: ClassVar[list[JarvisParameter]] = [
        JarvisParameter("city", "string", required=True, description="City name"),
        JarvisParameter("dates", "array<datetime>", description="Days to forecast"),
    ]

    def answer(self, **kwargs: Any) -> CommandResponse:
        days = ", ".join(d.strftime("%A %d %B") for d in kwargs.get("dates", []))
        return CommandResponse.success_response(
            context_data={"city": kwargs["city"], "days": days},
            message=f"Sunny in {kwargs['city']} on {days}.",
        )


class Thermometer(Recording):
    command_name = "read_thermometer"
    description = "Reads the room thermometer."

    def answer(self, **kwargs: Any) -> CommandResponse:
        raise RuntimeError("sensor offline")


class HomeAssistantWeather(Recording):
    command_name = "ha_weather"
    description = "Weather from Home Assistant."

    @property
    def required_secrets(self) -> list[JarvisSecret]:
        return [JarvisSecret("HOME_ASSISTANT_TOKEN", "Long-lived access token")]

    def answer(self, **kwargs: Any) -> CommandResponse:
        token = self.get_secret("HOME_ASSISTANT_TOKEN")
        size = len(token or "")
        return CommandResponse.success_response(message=f"HA answered with a {size}-char token")


class LightColour(Recording):
    command_name = "set_light_colour"
    description = "Sets the colour of the lights."
    parameters: ClassVar[list[JarvisParameter]] = [
        JarvisParameter("colour", "string", required=True, enum_values=["red", "green", "blue"])
    ]

    def answer(self, **kwargs: Any) -> CommandResponse:
        return CommandResponse.success_response(message=f"The lights are {kwargs['colour']}.")


class Calculator(Recording):
    command_name = "calc_add"
    description = "Adds two numbers."
    parameters: ClassVar[list[JarvisParameter]] = [JarvisParameter("a", "float", required=True),
                  JarvisParameter("b", "float", required=True)]

    def answer(self, **kwargs: Any) -> CommandResponse:
        total = kwargs["a"] + kwargs["b"]
        return CommandResponse.follow_up_response(
            context_data={"result": total}, message=f"That makes {total:g}."
        )


class CurrentTime(Recording):
    command_name = "tell_time"
    description = "Tells the current time."

    def answer(self, **kwargs: Any) -> CommandResponse:
        return CommandResponse.success_response(message="It is noon.")


def all_test_commands() -> list[Recording]:
    return [PauseMusic(), Forecast(), Thermometer(), HomeAssistantWeather(), LightColour(),
            Calculator(), CurrentTime()]


def _record(files: dict[str, bytes]) -> bytes:
    lines = []
    for name, content in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(content).digest()).rstrip(b"=").decode()
        lines.append(f"{name},sha256={digest},{len(content)}")
    return ("\n".join(lines) + "\n").encode()


def build_wheel(directory: Path, name: str = "jarvis_tinypkg", version: str = "0.1") -> Path:
    """A tiny pure-Python wheel, built by hand so no build backend or network is needed."""
    directory.mkdir(parents=True, exist_ok=True)
    info = f"{name}-{version}.dist-info"
    files = {
        f"{name}/__init__.py": b"VALUE = 42\n",
        f"{info}/METADATA": f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n".encode(),
        f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: hand\nRoot-Is-Purelib: true\n"
        b"Tag: py3-none-any\n",
    }
    files[f"{info}/RECORD"] = _record(files) + f"{info}/RECORD,,\n".encode()
    wheel = directory / f"{name}-{version}-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, content in files.items():
            archive.writestr(path, content)
    return wheel
