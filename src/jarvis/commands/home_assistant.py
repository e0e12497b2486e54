"""`control_device`: switch, dim and lock Home Assistant devices over its REST API.

Needs the secrets `HOME_ASSISTANT_URL` (e.g. http://homeassistant.local:8123) and
`HOME_ASSISTANT_TOKEN` (a long-lived access token). Device names are checked against
`/api/states` (cached briefly); a near miss is corrected, an unknown name is refused
with the list of known names.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

import httpx
from rapidfuzz import fuzz, utils

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

__all__ = ["ACTIONS", "ControlDeviceCommand", "Entity", "HomeAssistantError"]

ACTIONS = ("turn_on", "turn_off", "toggle", "lock", "unlock", "set_brightness")
# What people say for each action; the center favours the action whose words were said.
_SAID_ACTIONS = {
    "turn_on": ["turn on", "switch on", "power on", "enable", "activate"],
    "turn_off": ["turn off", "switch off", "shut off", "power off", "disable", "kill"],
    "toggle": ["toggle", "flip"],
    "lock": ["lock"],
    "unlock": ["unlock"],
    "set_brightness": ["dim", "brighten", "brightness", "percent"],
}
CACHE_SECONDS = 30.0
TIMEOUT_SECONDS = 5.0
MATCH_CUTOFF = 80
# Domains a voice command can sensibly switch; sensors and the like are left out.
CONTROLLABLE = (
    "light", "switch", "fan", "lock", "cover", "media_player", "input_boolean", "climate",
    "scene", "script", "vacuum", "humidifier", "siren", "automation",
)
_ACTION_ALIASES = {
    "on": "turn_on", "switch_on": "turn_on", "turnon": "turn_on", "enable": "turn_on",
    "start": "turn_on", "open": "turn_on", "activate": "turn_on",
    "off": "turn_off", "switch_off": "turn_off", "turnoff": "turn_off", "disable": "turn_off",
    "stop": "turn_off", "close": "turn_off", "deactivate": "turn_off", "shut_off": "turn_off",
    "switch": "toggle", "flip": "toggle",
    "dim": "set_brightness", "brighten": "set_brightness", "brightness": "set_brightness",
    "set": "set_brightness",
}
_COVER_SERVICES = {"turn_on": "open_cover", "turn_off": "close_cover", "toggle": "toggle"}


class HomeAssistantError(Exception):
    """Home Assistant could not be reached or refused the call (a spoken message)."""


@dataclass(frozen=True)
class Entity:
    entity_id: str
    name: str
    state: str

    @property
    def domain(self) -> str:
        return self.entity_id.split(".", 1)[0]


_cache: dict[str, tuple[float, list[Entity]]] = {}
_cache_lock = threading.Lock()


def _entities_from(states: Any) -> list[Entity]:
    entities = []
    for item in states if isinstance(states, list) else []:
        if not isinstance(item, dict) or "entity_id" not in item:
            continue
        entity_id = str(item["entity_id"])
        if entity_id.split(".", 1)[0] not in CONTROLLABLE:
            continue
        attributes = item.get("attributes") or {}
        name = attributes.get("friendly_name") or entity_id.split(".", 1)[-1].replace("_", " ")
        entities.append(Entity(entity_id, str(name), str(item.get("state", ""))))
    return entities


class ControlDeviceCommand(IJarvisCommand):
    """Turns Home Assistant devices on and off, dims lights, locks doors."""

    @property
    def command_name(self) -> str:
        return "control_device"

    @property
    def description(self) -> str:
        return (
            "Control a smart-home device through Home Assistant: turn lights, switches and "
            "fans on or off, set a light's brightness, lock or unlock a door."
        )

    @property
    def parameters(self) -> list[JarvisParameter]:
        return [
            JarvisParameter("action", "string", required=True, enum_values=list(ACTIONS),
                            description="What to do with the device",
                            enum_synonyms=_SAID_ACTIONS),
            JarvisParameter("entity", "string", required=True,
                            description="The device's name as the user says it, e.g. "
                                        "'kitchen light', or its entity id (light.kitchen)",
                            example="living room lamp"),
            JarvisParameter("brightness", "int", refinable=True, minimum=0, maximum=100,
                            description="Brightness percent 0-100, only for set_brightness"),
        ]

    @property
    def required_secrets(self) -> list[JarvisSecret]:
        return [
            JarvisSecret("HOME_ASSISTANT_URL", "Base URL, e.g. http://homeassistant.local:8123",
                         value_type="url", is_sensitive=False),
            JarvisSecret("HOME_ASSISTANT_TOKEN", "A long-lived access token (your HA profile)"),
        ]

    @property
    def examples(self) -> list[CommandExample]:
        return [
            CommandExample("turn on the kitchen light",
                           {"action": "turn_on", "entity": "kitchen light"}, is_primary=True),
            CommandExample("switch off the living room lamp",
                           {"action": "turn_off", "entity": "living room lamp"}),
            CommandExample("dim the bedroom light to 30 percent",
                           {"action": "set_brightness", "entity": "bedroom light",
                            "brightness": 30}),
            CommandExample("lock the front door", {"action": "lock", "entity": "front door"}),
        ]

    @property
    def critical_rules(self) -> list[str]:
        return [
            "action is one of turn_on, turn_off, toggle, lock, unlock, set_brightness",
            "entity is the device name only, without 'the' and without the action words",
        ]

    @property
    def rules(self) -> list[str]:
        return ["'make it brighter' after a brightness change refines brightness"]

    @property
    def antipatterns(self) -> list[CommandAntipattern]:
        return [CommandAntipattern("music", "Playing, pausing or changing the volume of music "
                                   "is music, not control_device.")]

    @property
    def keywords(self) -> list[str]:
        return ["turn on", "turn off", "light", "lamp", "switch", "lock", "unlock", "dim",
                "brightness", "fan", "thermostat", "heating", "plug", "outlet", "garage",
                "door", "blinds", "television", "brighter", "dimmer", "shut off"]

    # --- small-model fixes ---------------------------------------------------------------------
    def post_process_tool_call(self, args: dict[str, Any], voice_command: str) -> dict[str, Any]:
        fixed = dict(args)
        action = fixed.get("action")
        if isinstance(action, str):
            key = action.strip().lower().replace(" ", "_").replace("-", "_")
            fixed["action"] = key if key in ACTIONS else _ACTION_ALIASES.get(key, action)
        brightness = fixed.get("brightness")
        if isinstance(brightness, str):
            digits = brightness.strip().rstrip("%").strip()
            if digits.isdigit():
                fixed["brightness"] = int(digits)
        elif isinstance(brightness, float) and brightness == int(brightness):
            fixed["brightness"] = int(brightness)
        if fixed.get("brightness") is not None and fixed.get("action") in (None, "turn_on"):
            fixed["action"] = "set_brightness"
        entity = fixed.get("entity")
        if isinstance(entity, str):
            fixed["entity"] = entity.strip().removeprefix("the ").strip()
        return fixed

    # --- Home Assistant --------------------------------------------------------------------------
    def _connection(self) -> tuple[str, dict[str, str]]:
        url = (self.get_secret("HOME_ASSISTANT_URL") or "").rstrip("/")
        token = self.get_secret("HOME_ASSISTANT_TOKEN") or ""
        return url, {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def _request(self, method: str, path: str, payload: dict[str, Any] | None = None) -> Any:
        url, headers = self._connection()
        try:
            with httpx.Client(timeout=TIMEOUT_SECONDS) as client:
                response = client.request(method, f"{url}{path}", headers=headers, json=payload)
        except httpx.HTTPError as exc:
            raise HomeAssistantError("I couldn't reach Home Assistant.") from exc
        if response.status_code == 401:
            raise HomeAssistantError("Home Assistant refused the access token; check "
                                     "HOME_ASSISTANT_TOKEN.")
        if response.status_code >= 400:
            raise HomeAssistantError(
                f"Home Assistant answered with an error ({response.status_code}).")
        try:
            return response.json()
        except ValueError as exc:
            raise HomeAssistantError("Home Assistant sent an answer I could not read.") from exc

    def entities(self) -> list[Entity]:
        """The controllable entities, from a cache at most `CACHE_SECONDS` old."""
        url, _ = self._connection()
        with _cache_lock:
            cached = _cache.get(url)
            if cached and time.monotonic() - cached[0] < CACHE_SECONDS:
                return cached[1]
        entities = _entities_from(self._request("GET", "/api/states"))
        with _cache_lock:
            _cache[url] = (time.monotonic(), entities)
        return entities

    def resolve(self, wanted: str, action: str | None = None) -> tuple[Entity | None, bool]:
        """The entity meant by `wanted`, and whether it was an exact match."""
        entities = self.entities()
        key = wanted.strip().lower()
        for entity in entities:
            if key in (entity.entity_id.lower(), entity.name.lower()):
                return entity, True
        pool = entities
        if action in ("lock", "unlock"):
            pool = [e for e in entities if e.domain == "lock"] or entities
        elif action == "set_brightness":
            pool = [e for e in entities if e.domain == "light"] or entities
        best: tuple[float, float, Entity] | None = None
        for entity in pool:
            for label in (entity.name, entity.entity_id.split(".", 1)[1].replace("_", " ")):
                a, b = utils.default_process(key), utils.default_process(label)
                # token_set_ratio finds "bedroom light" in "Bedroom Ceiling Light"; the plain
                # ratio breaks ties ("kitchen" -> Kitchen Light before Kitchen Fan).
                score = (fuzz.token_set_ratio(a, b), fuzz.ratio(a, b), entity)
                if score[0] >= MATCH_CUTOFF and (best is None or score[:2] > best[:2]):
                    best = score
        return (best[2] if best else None), False

    def validate_call(self, **kwargs: Any) -> list[ValidationResult]:
        results = super().validate_call(**kwargs)
        wanted = kwargs.get("entity")
        if not isinstance(wanted, str) or not wanted.strip():
            return results
        try:
            entity, exact = self.resolve(wanted, kwargs.get("action"))
        except HomeAssistantError:
            return results  # run() reports the outage in words
        if entity is None:
            results.append(ValidationResult(
                success=False, param_name="entity", command_name=self.command_name,
                message=f"There is no device called '{wanted}'",
                valid_values=sorted(e.name for e in self.entities())[:60],
            ))
        elif not exact or wanted != entity.entity_id:
            results.append(ValidationResult(
                success=True, param_name="entity", command_name=self.command_name,
                suggested_value=entity.entity_id,
                message=None if exact else f"'{wanted}' taken as {entity.name}",
            ))
        action = kwargs.get("action")
        if entity is not None and action in ("lock", "unlock") and entity.domain != "lock":
            results.append(ValidationResult(
                success=False, param_name="entity", command_name=self.command_name,
                message=f"{entity.name} is not a lock",
                valid_values=[e.name for e in self.entities() if e.domain == "lock"] or None,
            ))
        if action == "set_brightness" and kwargs.get("brightness") is None:
            results.append(ValidationResult(
                success=False, param_name="brightness", command_name=self.command_name,
                message="Which brightness, from 0 to 100 percent?",
            ))
        return results

    def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
        action: str = kwargs["action"]
        brightness: int | None = kwargs.get("brightness")
        try:
            entity, _ = self.resolve(kwargs["entity"], action)
            if entity is None:
                return CommandResponse.error_response(
                    f"I couldn't find a device called {kwargs['entity']}.")
            domain, service, data = self._service(entity, action, brightness)
            self._request("POST", f"/api/services/{domain}/{service}", data)
        except HomeAssistantError as exc:
            return CommandResponse.error_response(str(exc))
        done = {
            "turn_on": f"Turned on the {entity.name}.",
            "turn_off": f"Turned off the {entity.name}.",
            "toggle": f"Toggled the {entity.name}.",
            "lock": f"Locked the {entity.name}.",
            "unlock": f"Unlocked the {entity.name}.",
            "set_brightness": f"Set the {entity.name} to {brightness} percent.",
        }[action]
        if action == "set_brightness" and brightness == 0:
            done = f"Turned off the {entity.name}."
        return CommandResponse.success_response(
            {"entity_id": entity.entity_id, "name": entity.name, "action": action,
             "service": f"{domain}.{service}", "brightness": brightness},
            message=done,
        )

    @staticmethod
    def _service(
        entity: Entity, action: str, brightness: int | None
    ) -> tuple[str, str, dict[str, Any]]:
        data: dict[str, Any] = {"entity_id": entity.entity_id}
        if action in ("lock", "unlock"):
            return "lock", action, data
        if action == "set_brightness":
            if brightness == 0:
                return "light", "turn_off", data
            data["brightness_pct"] = brightness
            return "light", "turn_on", data
        if entity.domain == "cover":
            return "cover", _COVER_SERVICES[action], data
        if entity.domain == "lock":
            return "lock", "lock" if action == "turn_on" else "unlock", data
        if entity.domain in ("scene", "script") and action == "turn_on":
            return entity.domain, "turn_on", data
        if entity.domain in ("light", "switch", "fan", "input_boolean", "media_player",
                             "climate", "humidifier", "siren", "automation", "vacuum"):
            return entity.domain, action, data
        return "homeassistant", action, data
