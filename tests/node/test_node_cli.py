"""`jarvis ask`, `jarvis chat` and `jarvis secrets` as a user runs them.

`ask` and `chat` start their own center in-process; its LLM is the scripted backend read
from `JARVIS_LLM_SCRIPT` (a protocol test: the script says which tools "the model" calls).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from jarvis.cli.main import app
from jarvis.node.store import NodeStore

runner = CliRunner()

ADDER = '''
from jarvis.sdk import CommandResponse, IJarvisCommand, JarvisParameter

class AddNumbers(IJarvisCommand):
    command_name = "add_numbers"
    description = "Adds two numbers."
    parameters = [JarvisParameter("a", "float", required=True),
                  JarvisParameter("b", "float", required=True)]

    def run(self, request_info, **kwargs):
        total = kwargs["a"] + kwargs["b"]
        return CommandResponse.follow_up_response(message=f"That makes {total:g}.")
'''


@pytest.fixture
def scripted(data_dir: Path, monkeypatch: pytest.MonkeyPatch):
    (data_dir / "commands").mkdir()
    (data_dir / "commands" / "adder.py").write_text(ADDER)

    def write(replies: list) -> Path:
        path = data_dir / "script.json"
        path.write_text(json.dumps(replies))
        monkeypatch.setenv("JARVIS_LLM_BACKEND", "scripted")
        monkeypatch.setenv("JARVIS_LLM_SCRIPT", str(path))
        return path

    return write


def _add(a: float, b: float) -> dict:
    return {"tool_calls": [{"name": "add_numbers", "arguments": {"a": a, "b": b}}]}


def test_ask_runs_the_full_pipeline_with_an_in_process_center(scripted) -> None:
    scripted([_add(5, 3)])
    result = runner.invoke(app, ["ask", "sum up my numbers 5 and 3"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "That makes 8."


def test_ask_json_prints_the_structured_result(scripted) -> None:
    scripted([_add(2, 2)])
    result = runner.invoke(app, ["ask", "--json", "sum up two and two"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["message"] == "That makes 4."
    assert data["stop_reason"] == "complete" and data["pre_routed"] is False
    [call] = data["tool_calls"]
    assert call["name"] == "add_numbers" and call["arguments"] == {"a": 2, "b": 2}
    assert call["success"] is True
    assert {"center_ms", "total_ms"} <= set(data["timings"])


def test_chat_reads_piped_stdin_and_follows_up(scripted) -> None:
    scripted([_add(5, 3), _add(8, 2)])
    utterances = "sum up my numbers 5 and 3\n\nand add 2 to the 8\nexit\nnever read\n"
    result = runner.invoke(app, ["chat"], input=utterances)
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("jarvis>")]
    assert lines == ["jarvis> That makes 8.", "jarvis> That makes 10."]


def test_chat_follows_up_on_a_fast_path_answer(scripted) -> None:
    # "what's 5 plus 3" never reaches the scripted LLM; the follow-up does, with its context
    scripted([{"tool_calls": [{"name": "calculate",
                               "arguments": {"num1": 8, "num2": 2, "operation": "multiply"}}]}])
    result = runner.invoke(app, ["chat"], input="what's 5 plus 3\nnow multiply that by 2\n")
    assert result.exit_code == 0, result.output
    lines = [line for line in result.output.splitlines() if line.startswith("jarvis>")]
    assert lines == ["jarvis> 5 plus 3 is 8.", "jarvis> 8 times 2 is 16."]


AQUARIUM = '''
from jarvis.sdk import CommandResponse, IJarvisCommand, PreRouteResult

class Aquarium(IJarvisCommand):
    command_name = "aquarium"
    description = "Aquarium care."

    def pre_route(self, text):
        hit = text == "feed the aquarium fish"
        return PreRouteResult(spoken_response="The fish are fed.") if hit else None

    def run(self, request_info, **kwargs):
        return CommandResponse.success_response(message="paused")
'''


def test_pre_routed_ask_needs_no_language_model(data_dir: Path, monkeypatch) -> None:
    # the default embedded backend has no model here; a pre-routed utterance never needs it
    (data_dir / "commands").mkdir()
    (data_dir / "commands" / "aquarium.py").write_text(AQUARIUM)
    monkeypatch.setenv("JARVIS_MODEL_PATH", str(data_dir / "no-model.gguf"))
    result = runner.invoke(app, ["ask", "feed the aquarium fish"])
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "The fish are fed."

    result = runner.invoke(app, ["ask", "what is the meaning of life"])
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    assert "no-model.gguf" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_chat_without_a_language_model_answers_locally_and_says_why_for_the_rest(
        data_dir: Path, monkeypatch) -> None:
    # chat starts its center early; without a model that start fails quietly, and the
    # first utterance that needs the center says why, once
    (data_dir / "commands").mkdir()
    (data_dir / "commands" / "aquarium.py").write_text(AQUARIUM)
    monkeypatch.setenv("JARVIS_MODEL_PATH", str(data_dir / "no-model.gguf"))
    result = runner.invoke(app, ["chat"], input="feed the aquarium fish\n")
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "jarvis> The fish are fed."

    result = runner.invoke(app, ["chat"],
                           input="feed the aquarium fish\nwhat is the meaning of life\n")
    assert result.exit_code == 1
    assert "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    assert lines[0] == "jarvis> The fish are fed."
    assert len(lines) == 2 and "no-model.gguf" in lines[1]


def test_unreachable_center_is_one_clear_line(data_dir: Path) -> None:
    utterance = "tell me a story about owls"
    result = runner.invoke(app, ["ask", "--center", "http://127.0.0.1:9", utterance])
    assert result.exit_code == 1
    assert result.output.strip() == (
        "Error: cannot reach the center at http://127.0.0.1:9 (ConnectError)"
    )


def test_secrets_set_from_stdin_list_and_delete(data_dir: Path) -> None:
    value = "tok-ghp-5d41402abc4b2a76"
    result = runner.invoke(app, ["secrets", "set", "HOME_ASSISTANT_TOKEN"], input=value + "\n")
    assert result.exit_code == 0, result.output
    assert value not in result.output
    assert NodeStore(data_dir).secrets.get_secret("HOME_ASSISTANT_TOKEN") == value
    assert all(value.encode() not in p.read_bytes() for p in data_dir.glob("node.db*"))

    result = runner.invoke(app, ["secrets", "list"])
    assert result.exit_code == 0, result.output
    assert "HOME_ASSISTANT_TOKEN (integration, string): set" in result.output
    assert value not in result.output

    result = runner.invoke(app, ["secrets", "delete", "HOME_ASSISTANT_TOKEN"])
    assert result.exit_code == 0, result.output
    assert NodeStore(data_dir).secrets.get_secret("HOME_ASSISTANT_TOKEN") is None
    result = runner.invoke(app, ["secrets", "delete", "HOME_ASSISTANT_TOKEN"])
    assert result.exit_code == 1 and "no secret named HOME_ASSISTANT_TOKEN" in result.output


def test_secrets_set_uses_the_declared_scope(data_dir: Path) -> None:
    from jarvis.sdk import JarvisSecret

    NodeStore(data_dir).secrets.seed(JarvisSecret("HA_URL", "Home Assistant URL", scope="node"))
    result = runner.invoke(app, ["secrets", "set", "HA_URL"], input="http://ha.local:8123")
    assert result.exit_code == 0, result.output
    assert "(node)" in result.output
    assert NodeStore(data_dir).secrets.get_secret("HA_URL", "node") == "http://ha.local:8123"

    result = runner.invoke(app, ["secrets", "set", "HA_URL", "--scope", "user"], input="x")
    assert result.exit_code == 0
    assert NodeStore(data_dir).secrets.get_secret("HA_URL", "user") == "x"


def test_secrets_set_refuses_an_empty_value(data_dir: Path) -> None:
    result = runner.invoke(app, ["secrets", "set", "EMPTY"], input="\n")
    assert result.exit_code == 1
    assert "empty value" in result.output
    assert not (data_dir / "node.db").exists()


def test_chat_starts_its_center_while_the_first_line_is_typed(scripted, data_dir: Path) -> None:
    scripted([_add(5, 3)])
    chat = subprocess.Popen([sys.executable, "-m", "jarvis.cli.main", "chat"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        waited = 0.0
        # Nothing typed yet: the center (its database in the data directory) starts anyway.
        while not (data_dir / "center.db").exists() and waited < 60:
            assert chat.poll() is None, chat.communicate()
            time.sleep(0.1)
            waited += 0.1
        assert (data_dir / "center.db").exists()
        out, err = chat.communicate("sum up my numbers 5 and 3\n", timeout=120)
    finally:
        if chat.poll() is None:
            chat.kill()
    assert chat.returncode == 0, err
    assert "jarvis> That makes 8." in out
