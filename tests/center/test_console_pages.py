"""The console's pages over real HTTP (no browser): login, refusals and bad input, against
a real center with a scripted LLM. The browser tests drive the same pages in Chromium."""

from __future__ import annotations

from typing import Any

import pytest
from center_helpers import CALCULATOR_COMMAND, conversation_id

from jarvis.center.auth import COOKIE
from jarvis.center.llm.scripted import ScriptedBackend, tool_call

TOKEN = "console-pages-token-2b7f"


@pytest.fixture
def center(make_center: Any) -> Any:
    backend = ScriptedBackend([tool_call("calculate", num1=1, num2=2, operation="add")])
    running = make_center(backend, admin_token=TOKEN)
    cid = conversation_id()
    running.start(cid, [], commands=[CALCULATOR_COMMAND])
    return running


def _login(center: Any) -> None:
    response = center.client.post("/console/login", data={"token": TOKEN})
    assert response.status_code == 303 and response.headers["location"] == "/console"
    cookie = response.headers["set-cookie"]
    assert TOKEN not in cookie
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and "Path=/console" in cookie


@pytest.mark.parametrize("path", ["/console", "/console/commands", "/console/model",
                                  "/console/try", "/console/conversations/x"])
def test_pages_send_strangers_to_the_login_form(center: Any, path: str) -> None:
    response = center.client.get(path)
    assert response.status_code == 303 and response.headers["location"] == "/console/login"
    wrong = center.client.get(path, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    center.client.cookies.set(COOKIE, "forged", path="/console")
    assert center.client.get(path).status_code == 303


def test_login_with_the_form_then_logout(center: Any) -> None:
    refused = center.client.post("/console/login", data={"token": "guess"})
    assert refused.status_code == 401 and "not the admin token" in refused.text
    _login(center)
    page = center.client.get("/console")
    assert page.status_code == 200 and "kitchen-pi" in page.text
    out = center.client.post("/console/logout")
    assert out.status_code == 303
    assert center.client.get("/console").status_code == 303


@pytest.mark.parametrize("form", [
    {"node": "kitchen-pi", "text": ""},
    {"node": "kitchen-pi", "text": "x" * 5000},
    {"node": "kitchen-pi", "text": "bell\x07"},
    {"node": "nobody", "text": "what is 1 plus 2"},
    {"text": "what is 1 plus 2"},
])
def test_try_it_refuses_bad_input_with_a_page(center: Any, form: dict[str, str]) -> None:
    _login(center)
    response = center.client.post("/console/try", data=form)
    assert response.status_code == 422, response.text
    assert 'id="try-error"' in response.text


def test_try_it_runs_a_turn_without_running_its_tool(center: Any) -> None:
    _login(center)
    response = center.client.post("/console/try",
                                  data={"node": "kitchen-pi", "text": "what is 1 plus 2"})
    assert response.status_code == 303
    page = center.client.get(response.headers["location"])
    assert page.status_code == 200
    assert "tool calls are shown, not run" in page.text and "calculate" in page.text


@pytest.mark.parametrize("query", ["limit=0", "offset=-5", "limit=x", "node="])
def test_bad_page_parameters_are_422(center: Any, query: str) -> None:
    _login(center)
    assert center.client.get(f"/console?{query}").status_code == 422


def test_unknown_conversation_page_is_404(center: Any) -> None:
    _login(center)
    response = center.client.get("/console/conversations/%3Cscript%3E")
    assert response.status_code == 404
    assert "&lt;script&gt;" in response.text and "<script>" not in response.text
