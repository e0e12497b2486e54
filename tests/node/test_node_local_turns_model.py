"""Follow-ups and answers with the real embedded model and the built-in commands.

"what's 5 plus 3" is answered on the node by the calculator's pre_route; "now multiply
that by 2" goes to a real center whose LLM only knows "that" from the exchange the node
sends along. Answers to the center's questions fill the value asked for and nothing else.
Skips when the model has not been prepared (fails with JARVIS_REQUIRE_MODEL=1).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

pytest.importorskip("llama_cpp", reason="the embedded extra is not installed")

from jarvis.center.llm.embedded import EmbeddedBackend
from jarvis.center.server import CenterServer
from jarvis.center.settings import CenterSettings
from jarvis.commands._schedule import speak_clock
from jarvis.node import JarvisCommandCenterClient, Node, NodeSettings, open_node
from jarvis.node.service import ToolCallRecord
from jarvis.protocol import ValidationRequest

pytestmark = pytest.mark.model


def _model_path() -> Path:
    from jarvis.center.llm.model_store import ModelStoreError, resolve_model_path

    try:
        return resolve_model_path()
    except ModelStoreError as exc:
        message = f"embedded model not prepared (run `jarvis model prepare`): {exc}"
        if os.environ.get("JARVIS_REQUIRE_MODEL") == "1":
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module")
def backend() -> Iterator[EmbeddedBackend]:
    # Module scope: resolved before `data_dir` points JARVIS_DATA_DIR at an empty folder.
    loaded = EmbeddedBackend(_model_path())
    loaded.load()
    yield loaded
    loaded.close()


@pytest.fixture
def node(backend: EmbeddedBackend, tmp_path: Path, data_dir: Path) -> Iterator[Node]:
    # A shared or slow CPU may need more than the default minute for the whole prompt.
    settings = CenterSettings(data_dir=tmp_path / "center", log_level="warning",
                              llm_timeout=600)
    with (CenterServer(settings=settings, backend=backend) as server,
          JarvisCommandCenterClient(server.url, timeout=900,
                                    key=server.add_node("node")) as client):
        node = open_node(NodeSettings(data_dir=data_dir, timezone="America/New_York",
                                      center_url=server.url), client=client)
        yield node
        node.close()


def _multiplied_8_by_2(record: ToolCallRecord) -> bool:
    arguments = record.arguments
    return (record.name == "calculate" and arguments.get("operation") == "multiply"
            and {arguments.get("num1"), arguments.get("num2")} == {8, 2})


def test_now_multiply_that_by_2_after_a_fast_path_sum(node: Node) -> None:
    service = node.service
    first = service.process_voice_command("what's 5 plus 3")
    assert first.pre_routed and first.wait_for_input, first
    assert first.message == "5 plus 3 is 8."

    # A question back would mean the model did not see the 8: fail rather than wait for stdin.
    second = service.process_voice_command("now multiply that by 2",
                                           validation_handler=lambda request: None)

    assert not second.pre_routed
    assert any(_multiplied_8_by_2(r) for r in second.tool_calls) or "16" in second.message, (
        second.message, [(r.name, r.arguments) for r in second.tool_calls])


def test_and_in_london_after_the_local_time_tells_the_time_there(node: Node) -> None:
    service = node.service
    first = service.process_voice_command("what time is it")
    assert first.pre_routed and first.message.startswith("It's"), first
    # The place is the one value the follow-up changes: the time command runs again there.
    second = service.process_voice_command("and in london?",
                                           validation_handler=lambda request: None)
    assert not second.pre_routed
    assert [(r.name, str(r.arguments.get("location", "")).lower())
            for r in second.tool_calls] == [("get_current_time", "london")], second
    assert "London" in second.message, second.message


class _User:
    """Answers each question with the next of `answers`, and keeps the questions."""

    def __init__(self, *answers: str) -> None:
        self.answers = list(answers)
        self.questions: list[str] = []

    def __call__(self, request: ValidationRequest) -> str | None:
        self.questions.append(request.question)
        return self.answers.pop(0) if self.answers else None


def test_a_time_given_as_an_answer_keeps_what_to_remind_about(node: Node) -> None:
    user = _User("in two hours")
    started = datetime.now(ZoneInfo("America/New_York"))
    done = node.service.process_voice_command("remind me to water the plants",
                                              validation_handler=user)
    assert user.questions == ["What time should I use?"], (user.questions, done.message)
    # The reminder's words are those of the request, its time two hours on from now.
    times = {speak_clock(started + timedelta(hours=2, minutes=m)) for m in (0, 1)}
    assert done.message.startswith("OK, I'll remind you to water the plants"), done.message
    assert any(t in done.message for t in times), (done.message, times)


def test_a_new_request_takes_no_value_from_the_one_before(node: Node) -> None:
    service = node.service
    service.process_voice_command("remind me to water the plants in two hours",
                                  validation_handler=_User())
    assert service.pending_conversation_id is not None  # a reminder may be refined
    user = _User("fifteen minutes")
    done = service.process_voice_command("set a timer", validation_handler=user)
    assert user.questions == ["What duration should I use?"], (user.questions, done.message)
    assert done.message == "Timer set for 15 minutes.", done.message
