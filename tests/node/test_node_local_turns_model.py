"""A follow-up after the fast path with the real embedded model and the built-in commands.

"what's 5 plus 3" is answered on the node by the calculator's pre_route; "now multiply
that by 2" goes to a real center whose LLM only knows "that" from the exchange the node
sends along. Skips when the model has not been prepared (fails with JARVIS_REQUIRE_MODEL=1).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp", reason="the embedded extra is not installed")

from jarvis.center.llm.embedded import EmbeddedBackend
from jarvis.center.server import CenterServer
from jarvis.center.settings import CenterSettings
from jarvis.node import JarvisCommandCenterClient, Node, NodeSettings, open_node
from jarvis.node.service import ToolCallRecord

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
