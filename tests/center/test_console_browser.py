"""The console in a real browser: Playwright drives Debian's Chromium against a real center
(uvicorn on a loopback port, SQLite) whose LLM is scripted (the test checks the console,
not the model's choices). Screenshots go to `test-output/console/` (git-ignored).

Skipped, with the reason, only where Chromium or Playwright is not installed; `make test`
installs both where it can.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from center_helpers import CALCULATOR_COMMAND, Center, conversation_id

from jarvis.center.llm.scripted import ScriptedBackend, text, tool_call
from jarvis.center.server import CenterServer
from jarvis.center.settings import CenterSettings

TOKEN = "browser-test-admin-token-93e1"
SHOTS = Path(__file__).resolve().parents[2] / "test-output" / "console"


def _chromium() -> str | None:
    configured = os.environ.get("JARVIS_CHROMIUM")
    if configured:
        return configured if Path(configured).is_file() else None
    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install -e '.[dev]')")
    executable = _chromium()
    if executable is None and os.environ.get("JARVIS_CHROMIUM"):
        pytest.skip(f"JARVIS_CHROMIUM={os.environ['JARVIS_CHROMIUM']} is not a file")
    if executable is None:
        pytest.skip("Chromium is not installed (apt-get install chromium, or set "
                    "JARVIS_CHROMIUM to its path)")
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, headless=True)
        yield launched
        launched.close()


@pytest.fixture
def center(tmp_path: Path) -> Iterator[Center]:
    backend = ScriptedBackend([
        # The node's own conversation: a call, its result, the answer.
        tool_call("calculate", num1=2, num2=2, operation="add"),
        text("Two plus two is four."),
        # The request typed in "Try it".
        tool_call("calculate", num1=6, num2=7, operation="multiply"),
    ])
    settings = CenterSettings(data_dir=tmp_path, admin_token=TOKEN, log_level="warning",
                              direct_tool_message=False)
    running = Center(CenterServer(settings, backend).start())
    yield running
    running.close()


def _node_conversation(center: Center) -> str:
    """What a node does: register its commands, send an utterance, return the result."""
    cid = conversation_id()
    center.start(cid, [], commands=[CALCULATOR_COMMAND])
    call = center.command(cid, "what is 2 plus 2")["tool_calls"][0]
    center.results(cid, (call["id"], {"success": True, "context": {"result": 4}}))
    return cid


def _shot(page: Any, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=True)


def test_login_try_it_and_a_conversations_trace(browser: Any, center: Center) -> None:
    cid = _node_conversation(center)
    page = browser.new_page()
    page.goto(f"{center.url}/console")
    assert page.url.endswith("/console/login")
    page.fill("input[name=token]", "not-the-token")
    page.click("button[type=submit]")
    assert page.locator("#login-error").inner_text() == "That is not the admin token."
    page.fill("input[name=token]", TOKEN)
    page.click("button[type=submit]")
    page.wait_for_url(f"{center.url}/console")
    assert "what is 2 plus 2" in page.locator("#conversations").inner_text()
    _shot(page, "conversations")

    page.click("text=Try it")
    page.select_option("select[name=node]", "kitchen-pi")
    page.fill("textarea[name=text]", "what is 6 times 7")
    page.click("button:has-text('Send')")
    page.wait_for_url("**/console/conversations/console-*")
    turn = page.locator("section.turn").first
    assert "“what is 6 times 7”" in turn.inner_text()
    assert turn.locator(".tool-call .tool-name").inner_text() == "calculate"
    assert '"operation":"multiply"' in turn.locator(".tool-call").inner_text().replace(" ", "")
    stages = turn.locator(".timeline .bar").evaluate_all("bars => bars.map(b => b.dataset.stage)")
    assert {"prompt", "llm", "validate"} <= set(stages)
    assert turn.locator(".timeline .bar-llm").bounding_box()["width"] > 0
    _shot(page, "try-it")

    page.goto(f"{center.url}/console")
    page.click(f"a[href='/console/conversations/{cid}']")
    answered = page.locator("section.turn").nth(1)
    assert "Answer: Two plus two is four." in answered.inner_text()
    assert answered.locator(".timeline .bar-node").count() == 1
    assert not answered.locator("pre.trace").is_visible()
    answered.locator("summary", has_text="Trace").click()
    assert answered.locator("pre.trace").is_visible()
    assert '"stages_ms"' in answered.locator("pre.trace").inner_text()
    _shot(page, "conversation-trace")
    page.close()


def test_commands_and_model_pages(browser: Any, center: Center) -> None:
    _node_conversation(center)
    context = browser.new_context(extra_http_headers={"Authorization": f"Bearer {TOKEN}"})
    page = context.new_page()
    page.goto(f"{center.url}/console/commands")
    command = page.locator("[id='command-kitchen-pi-calculate']")
    rows = command.locator("tbody tr").all_inner_texts()
    assert [r.split("\t")[:3] for r in rows] == [
        ["num1", "float", "yes"], ["num2", "float", "yes"],
        ["operation", "string one of add, subtract, multiply, divide", "yes"]]
    assert "“what is 2 plus 2”" in command.inner_text()
    _shot(page, "commands")
    page.goto(f"{center.url}/console/model")
    assert page.locator("#model tr").first.inner_text().split("\t") == ["Backend", "scripted"]
    _shot(page, "model")
    context.close()
