"""The example command of docs/commands.md runs, end to end, through execute()."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from jarvis.sdk import CommandContext, IJarvisCommand, MemoryStorage, RequestInformation

EXAMPLE = Path(__file__).resolve().parents[2] / "docs" / "examples" / "hello_command.py"


class Secrets:
    def __init__(self, values: dict[str, str]) -> None:
        self.values = values

    def get_secret(self, key: str, scope: str = "integration") -> str | None:
        return self.values.get(key)


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("hello_command_example", EXAMPLE)
    assert spec is not None and spec.loader is not None, f"cannot load {EXAMPLE}"
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def command() -> IJarvisCommand:
    cmd = _load().SayHelloCommand()
    cmd.bind(CommandContext(secrets=Secrets({}), storage=MemoryStorage(), timezone="UTC"))
    return cmd


REQ = RequestInformation(voice_command="say hello")


def call(cmd: IJarvisCommand, utterance: str, **args: Any) -> Any:
    """What the node does with an LLM tool call: post-process, then execute."""
    return cmd.execute(REQ, **cmd.post_process_tool_call(dict(args), utterance))


def test_a_plain_greeting_uses_the_defaults(command: IJarvisCommand) -> None:
    response = call(command, "say hello to Ada", name="Ada")
    assert response.success
    assert response.message == "Hello Ada!"
    assert response.context_data == {"name": "Ada", "greeted_times": 1, "message": "Hello Ada!"}
    assert response.actions[0].action == "say_hello:Ada"
    json.dumps(response.model_dump(mode="json"))


def test_types_enums_dates_and_storage(command: IJarvisCommand) -> None:
    response = call(command, "greet Grace twice in Deutsch, she visits on the 23rd",
                    name="Grace", language="Deutsch", times=2, next_visit="2026-01-23")
    assert response.message == "Hallo Grace! Hallo Grace! See you on Friday."
    assert call(command, "hi grace", name="Grace").context_data["greeted_times"] == 2
    assert command.context.storage.get("hello", "Grace") == 2


def test_a_near_miss_name_is_corrected(command: IJarvisCommand) -> None:
    assert call(command, "hello gracie", name="gracie").message == "Hello Grace!"


def test_an_unknown_name_asks_again_with_the_valid_values(command: IJarvisCommand) -> None:
    response = call(command, "hello bob", name="Bob")
    assert response.is_validation_error
    assert response.context_data["valid_values"] == {"name": ["Ada", "Grace", "Linus"]}
    command.context.storage.set("household", "members", ["Bob"])
    assert call(command, "hello bob", name="Bob").message == "Hello Bob!"


def test_llm_artifacts_are_treated_as_omitted(command: IJarvisCommand) -> None:
    response = call(command, "hello ada", name="Ada", language="default", times="none",
                    next_visit="null")
    assert response.message == "Hello Ada!"


def test_a_bad_enum_value_is_a_validation_error(command: IJarvisCommand) -> None:
    response = call(command, "hello ada in klingon", name="Ada", language="klingon")
    assert response.is_validation_error
    assert response.context_data["errors"][0]["message"] == (
        "Invalid value 'klingon' for 'language'. Must be one of: english, german, spanish"
    )


def test_pre_route_skips_the_llm(command: IJarvisCommand) -> None:
    hit = command.pre_route("Hello Linus")
    assert hit is not None and hit.arguments == {"name": "linus"}
    # 'linus' is corrected to 'Linus' by validate_call's suggestion.
    assert command.execute(REQ, **hit.arguments).message == "Hello Linus!"
    assert command.pre_route("hello there my friend") is None


def test_the_optional_secret_is_used_when_set() -> None:
    cmd = _load().SayHelloCommand()
    cmd.bind(CommandContext(secrets=Secrets({"HELLO_SIGN_OFF": "Have a nice day."}),
                            storage=MemoryStorage()))
    assert cmd.execute(REQ, name="Ada").message == "Hello Ada! Have a nice day."


def test_what_the_llm_sees(command: IJarvisCommand) -> None:
    tool = command.to_openai_tool_schema()["function"]
    assert tool["parameters"]["required"] == ["name"]
    assert tool["parameters"]["properties"]["language"] == {
        "type": "string", "description": "Language of the greeting",
        "enum": ["english", "german", "spanish"], "_refinable": True,
    }
    assert tool["parameters"]["properties"]["next_visit"]["format"] == "date"
    schema = command.get_command_schema()
    assert schema["examples"][0]["is_primary"] is True
    json.dumps(schema)


DOC = EXAMPLE.parents[1] / "commands.md"


def _python_blocks() -> list[str]:
    text = DOC.read_text(encoding="utf-8")
    return [block.split("```", 1)[0] for block in text.split("```python\n")[1:]]


def test_the_smallest_command_of_the_doc_runs() -> None:
    block = next(b for b in _python_blocks() if "class RollDice" in b)
    namespace: dict[str, Any] = {}
    exec(compile(block, str(DOC), "exec"), namespace)
    cmd = namespace["RollDice"]()
    response = cmd.execute(RequestInformation(), count=3)
    assert len(response.context_data["rolls"]) == 3
    assert response.message == f"You rolled {sum(response.context_data['rolls'])}."
    assert len(cmd.execute(RequestInformation()).context_data["rolls"]) == 1  # the default


def test_the_testing_snippet_of_the_doc_runs() -> None:
    block = next(b for b in _python_blocks() if "cmd = SayHelloCommand()" in b)
    namespace: dict[str, Any] = {
        "SayHelloCommand": _load().SayHelloCommand,
        "CommandContext": CommandContext,
        "MemoryStorage": MemoryStorage,
        "RequestInformation": RequestInformation,
    }
    exec(compile(block, str(DOC), "exec"), namespace)
    assert namespace["response"].message == "Hello Ada!"
