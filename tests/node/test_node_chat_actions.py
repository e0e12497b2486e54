"""An answer's buttons in `jarvis chat`: numbered choices, picked by number or by label.

`chat` runs its own center in-process with the scripted LLM from `JARVIS_LLM_SCRIPT`
(a protocol test: the script says which tool "the model" calls). The plugin command logs
every call, so the test sees which utterance each pick sent and in which conversation.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from jarvis.cli.main import app
from jarvis.node.actions import actions_of, pick_action
from jarvis.sdk import JarvisButton

runner = CliRunner()

OVEN = '''
import json
from jarvis.sdk import (CommandResponse, IJarvisCommand, JarvisButton, JarvisParameter,
                        PreRouteResult)

class Oven(IJarvisCommand):
    command_name = "oven"
    description = "Reads, sets or turns off the oven."
    parameters = [JarvisParameter("action", "string", required=True,
                                  enum_values=["status", "set", "off"]),
                  JarvisParameter("degrees", "int")]

    def pre_route(self, text):
        # Its own "turn it off" button is handled here, without the LLM.
        return PreRouteResult(arguments={"action": "off"}) if text == "turn the oven off" else None

    def run(self, request_info, **kwargs):
        with (self.context.data_dir / "oven-calls.jsonl").open("a") as log:
            log.write(json.dumps({"said": request_info.voice_command,
                                  "conversation_id": request_info.conversation_id,
                                  **kwargs}) + "\\n")
        if kwargs["action"] == "off":
            return CommandResponse.success_response(message="The oven is off.")
        degrees = kwargs.get("degrees") or 180
        return CommandResponse.success_response(
            message=f"The oven is at {degrees} degrees.",
            actions=[JarvisButton(text="Turn it off", action="turn the oven off",
                                  type="destructive"),
                     JarvisButton(text="Make it 200 degrees",
                                  action="set the oven to 200 degrees")])
'''


@pytest.fixture
def oven(data_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (data_dir / "commands").mkdir()
    (data_dir / "commands" / "oven.py").write_text(OVEN)
    script = [{"tool_calls": [{"name": "oven", "arguments": {"action": "status"}}]},
              {"tool_calls": [{"name": "oven", "arguments": {"action": "set", "degrees": 200}}]}]
    (data_dir / "script.json").write_text(json.dumps(script))
    monkeypatch.setenv("JARVIS_LLM_BACKEND", "scripted")
    monkeypatch.setenv("JARVIS_LLM_SCRIPT", str(data_dir / "script.json"))
    return data_dir


def _calls(data_dir: Path) -> list[dict[str, Any]]:
    lines = (data_dir / "oven-calls.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def test_choices_are_numbered_and_a_label_or_number_picks_one(oven: Path) -> None:
    said = "what is the oven status\nmake it 200 DEGREES!\n1\nexit\n"
    result = runner.invoke(app, ["chat"], input=said)

    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == [
        "jarvis> The oven is at 180 degrees.",
        "  1. Turn it off",
        "  2. Make it 200 degrees",
        "jarvis> The oven is at 200 degrees.",
        "  1. Turn it off",
        "  2. Make it 200 degrees",
        "jarvis> The oven is off.",
    ]
    first, by_label, by_number = _calls(oven)
    # The label sent the button's utterance, in the conversation the buttons came from.
    assert by_label["said"] == "set the oven to 200 degrees"
    assert by_label["conversation_id"] == first["conversation_id"] is not None
    assert (by_label["action"], by_label["degrees"]) == ("set", 200)
    # "1" picked "Turn it off", which the command's own pre_route handled locally.
    assert by_number == {"said": "turn the oven off", "conversation_id": None, "action": "off"}


def test_a_number_picks_and_other_words_are_ordinary_utterances(oven: Path) -> None:
    result = runner.invoke(app, ["chat"], input="what is the oven status\n2\n")
    assert result.exit_code == 0, result.output
    first, picked = _calls(oven)
    assert picked["said"] == "set the oven to 200 degrees"
    assert picked["conversation_id"] == first["conversation_id"]

    # Without choices on screen, "2" is just something the user said, for the LLM to answer.
    (oven / "oven-calls.jsonl").unlink()
    (oven / "script.json").write_text(json.dumps(["Two of what?"]))
    result = runner.invoke(app, ["chat"], input="2\n")
    assert result.exit_code == 0, result.output
    assert result.output.splitlines() == ["jarvis> Two of what?"]
    assert not (oven / "oven-calls.jsonl").exists()


def test_ask_json_carries_the_actions(oven: Path) -> None:
    result = runner.invoke(app, ["ask", "--json", "what is the oven status"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["actions"] == [
        {"text": "Turn it off", "action": "turn the oven off", "type": "destructive"},
        {"text": "Make it 200 degrees", "action": "set the oven to 200 degrees",
         "type": "primary"},
    ]


BUTTONS = [JarvisButton(text="Snooze 10 minutes", action="snooze the reminder"),
           JarvisButton(text="Dismiss", action="dismiss the reminder", type="secondary")]


@pytest.mark.parametrize(("said", "picked"), [
    ("1", 0), ("2", 1), (" two ", 1), ("number 1", 0), ("#2", 1), ("option one", 0),
    ("snooze 10 minutes", 0), ("Dismiss.", 1), ("dismiss the reminder", 1),
    ("3", None), ("0", None), ("dismiss it", None), ("", None), ("snooze", None),
])
def test_pick_action(said: str, picked: int | None) -> None:
    expected = None if picked is None else BUTTONS[picked]
    assert pick_action(said, BUTTONS) == expected
    assert pick_action(said, []) is None


def test_actions_of_skips_what_is_not_a_button() -> None:
    context = {"actions": [{"text": "Dismiss", "action": "dismiss"}, {"text": "no action"},
                           {"text": "Bad", "action": "x", "type": "purple"}]}
    assert actions_of(context) == [JarvisButton(text="Dismiss", action="dismiss")]
    assert actions_of(None) == [] and actions_of({}) == []
