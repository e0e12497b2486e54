"""The recognition hint comes from the commands' own declarations."""

from __future__ import annotations

from typing import Any

from jarvis.node.voice.vocabulary import recognition_hint
from jarvis.sdk import CommandExample, CommandResponse, IJarvisCommand, RequestInformation


class WaterPlants(IJarvisCommand):
    """A command nobody on the project wrote: its words must reach the hint."""

    command_name = "water_the_plants"
    description = "Water the balcony plants."

    @property
    def examples(self) -> list[CommandExample]:
        return [CommandExample("water the geraniums for two minutes"),
                CommandExample("give the ficus some water")]

    @property
    def keywords(self) -> list[str]:
        return ["irrigation"]

    def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
        return CommandResponse.success_response(message="Watered.")


class Lights(WaterPlants):
    command_name = "lights"

    @property
    def examples(self) -> list[CommandExample]:
        return [CommandExample("dim the lights in the kitchen")]

    @property
    def keywords(self) -> list[str]:
        return []


def test_every_command_contributes_its_examples_first() -> None:
    hint = recognition_hint([WaterPlants(), Lights()])
    assert hint.startswith("Water the geraniums for two minutes. Dim the lights in the kitchen.")
    assert "Irrigation." in hint and "Water the plants." in hint


def test_the_hint_stays_short() -> None:
    hint = recognition_hint([WaterPlants(), Lights()], max_chars=70)
    assert len(hint) <= 70
    assert "geraniums" in hint and "kitchen" in hint
