"""The openai backend against a real loopback HTTP server, and LLM failures end to end."""

from __future__ import annotations

import json
import logging
import socket
import time
from typing import Any

import pytest
from center_helpers import WEATHER_TOOL, conversation_id
from fake_openai import FakeOpenAI, completion

from jarvis.center.llm import create_backend
from jarvis.center.llm.base import (
    LLMBadResponseError,
    LLMRequest,
    LLMTimeoutError,
    LLMUnavailableError,
)
from jarvis.center.llm.openai import OpenAIBackend
from jarvis.center.llm.scripted import ScriptedBackend, text, tool_call
from jarvis.center.settings import CenterSettings

SECRET_KEY = "sk-test-0123456789abcdef"


@pytest.fixture
def fake() -> Any:
    with FakeOpenAI() as server:
        yield server


def _openai_center(make_center: Any, fake: FakeOpenAI, **settings: Any) -> Any:
    return make_center(
        None,
        llm_backend="openai",
        llm_base_url=fake.url,
        llm_model="qwen-test",
        llm_api_key=SECRET_KEY,
        **settings,
    )


def test_openai_backend_full_flow(make_center: Any, fake: FakeOpenAI,
                                  caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    fake.plan.extend([
        ("json", completion(calls=[("open_weather_command", {"city": "Miami"})])),
        ("json", completion("It's 73 and sunny in Miami.")),
    ])
    center = _openai_center(make_center, fake)
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    reply = center.command(cid, "weather in Miami")
    assert reply["stop_reason"] == "tool_calls"
    call = reply["tool_calls"][0]
    done = center.results(cid, (call["id"], {"success": True, "context": {"temp": 73}}))
    assert done == {
        "commands": [],
        "request_information": {"voice_command": "weather in Miami", "conversation_id": cid},
        "stop_reason": "complete",
        "assistant_message": "It's 73 and sunny in Miami.",
        "tool_calls": None,
        "validation_request": None,
    }
    first, second = fake.requests
    assert first["path"] == "/v1/chat/completions"
    assert first["body"]["model"] == "qwen-test"
    assert {t["function"]["name"] for t in first["body"]["tools"]} >= {"open_weather_command"}
    assert "tools" not in second["body"]  # wording the answer: tools switched off
    assert second["body"]["messages"][-2]["role"] == "tool"
    assert fake.headers[0]["Authorization"] == f"Bearer {SECRET_KEY}"
    # The key never reaches a log line, the health endpoint or the stored trace.
    assert SECRET_KEY not in caplog.text
    assert SECRET_KEY not in center.client.get("/health").text
    assert SECRET_KEY not in json.dumps(center.store.turns(cid), default=str)
    assert SECRET_KEY not in repr(center.server.app.state.backend)


def test_llm_timeout_is_an_error_and_the_conversation_survives(make_center: Any,
                                                                fake: FakeOpenAI) -> None:
    fake.plan.extend([
        ("sleep", 60),
        ("json", completion(calls=[("open_weather_command", {"city": "Oslo"})])),
    ])
    # Long enough that the retry's answer arrives in time on a busy machine.
    center = _openai_center(make_center, fake, llm_timeout=2.0)
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    failed = center.command(cid, "weather in oslo")
    assert failed["stop_reason"] == "error"
    assert "took too long" in failed["assistant_message"]
    assert failed["tool_calls"] is None
    assert center.store.turns(cid)[-1]["trace"]["error"].startswith("LLMTimeoutError")
    # Nothing of the failed request entered the history: the same request works again.
    retried = center.command(cid, "weather in oslo")
    assert retried["stop_reason"] == "tool_calls"
    messages = fake.requests[-1]["body"]["messages"]
    assert [m["content"] for m in messages if m["role"] == "user"] == ["weather in oslo"]


def test_a_reply_that_must_be_a_call_asks_the_server_for_one(fake: FakeOpenAI) -> None:
    call = completion(calls=[("open_weather_command", {"city": "Oslo"})])
    fake.plan.extend([("json", completion("Sure.")), ("json", call), ("json", call)])
    backend = OpenAIBackend(base_url=fake.url)
    messages = [{"role": "user", "content": "weather in oslo"}]
    backend.complete(LLMRequest(messages=messages, tools=[WEATHER_TOOL]))
    backend.complete(LLMRequest(messages=messages, tools=[WEATHER_TOOL], must_call=True))
    backend.complete(LLMRequest(messages=messages, tools=[WEATHER_TOOL],
                                only_tool="open_weather_command"))
    backend.close()
    assert [r["body"]["tool_choice"] for r in fake.requests] == [
        "auto", "required",
        {"type": "function", "function": {"name": "open_weather_command"}}]


@pytest.mark.parametrize("part", ["headers", "body"])
def test_llm_timeout_bounds_a_server_that_drips_its_answer(fake: FakeOpenAI, part: str) -> None:
    # A byte every half second never trips a per-read timeout; the whole answer would
    # take minutes.
    fake.plan.extend([("drip", 0.5, part), ("json", completion("back again"))])
    backend = OpenAIBackend(base_url=fake.url, timeout=1.5)
    request = LLMRequest(messages=[{"role": "user", "content": "hi"}])
    started = time.monotonic()
    with pytest.raises(LLMTimeoutError, match=r"within 1\.5s"):
        backend.complete(request)
    assert time.monotonic() - started < 2.5
    # The next call is served as usual.
    assert backend.complete(request).content == "back again"
    backend.close()


def test_dripping_llm_server_is_an_error_at_llm_timeout(make_center: Any,
                                                        fake: FakeOpenAI) -> None:
    fake.plan.extend([
        ("drip", 0.5, "body"),
        ("json", completion(calls=[("open_weather_command", {"city": "Oslo"})])),
    ])
    center = _openai_center(make_center, fake, llm_timeout=1.5)
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    started = time.monotonic()
    failed = center.command(cid, "weather in oslo")
    assert time.monotonic() - started < 3.0
    assert failed["stop_reason"] == "error"
    assert "took too long" in failed["assistant_message"]
    assert center.command(cid, "weather in oslo")["stop_reason"] == "tool_calls"


@pytest.mark.parametrize(
    ("step", "spoken"),
    [
        (("status", 500, "internal error"), "couldn't reach the language model"),
        (("status", 503, "loading model"), "couldn't reach the language model"),
        (("raw", b"<html>not json</html>"), "couldn't understand"),
        (("json", {"choices": []}), "couldn't understand"),
        (("json", {"choices": [{"message": {"content": None}}]}), "couldn't understand"),
        (("status", 400, "bad request"), "couldn't understand"),
    ],
)
def test_misbehaving_llm_server_gives_error_never_500(
    make_center: Any, fake: FakeOpenAI, step: tuple[Any, ...], spoken: str
) -> None:
    fake.plan.append(step)
    center = _openai_center(make_center, fake)
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    reply = center.command(cid, "weather please")
    assert reply["stop_reason"] == "error"
    assert spoken in reply["assistant_message"]


def test_unknown_tool_from_the_llm_is_retried_then_an_error(make_center: Any,
                                                            fake: FakeOpenAI) -> None:
    bad = completion(calls=[("get_forecast", {"city": "Paris"})])
    fake.plan.extend([("json", bad)] * 3)
    center = _openai_center(make_center, fake)
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    reply = center.command(cid, "forecast for paris")
    assert reply["stop_reason"] == "error"
    assert len(fake.requests) == 3
    note = fake.requests[1]["body"]["messages"][-2]["content"]
    assert "there is no tool 'get_forecast'" in note and "open_weather_command" in note


def test_dead_llm_server(make_center: Any) -> None:
    with socket.socket() as sock:  # a port nobody listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    center = make_center(None, llm_backend="openai", llm_base_url=f"http://127.0.0.1:{port}/v1")
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    reply = center.command(cid, "weather")
    assert reply["stop_reason"] == "error"
    assert reply["assistant_message"].startswith("I couldn't reach the language model")


def test_failure_while_wording_keeps_the_tool_calls_pending(make_center: Any) -> None:
    def broken(_request: LLMRequest) -> Any:
        raise RuntimeError("segfault in the model")  # not an LLMError: still no 500

    backend = ScriptedBackend(
        [tool_call("open_weather_command", city="Lima"), broken, text("Lima is mild.")]
    )
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    call = center.command(cid, "weather in lima")["tool_calls"][0]
    result = (call["id"], {"success": True, "context": {"temp": 20}})
    failed = center.results(cid, result)
    assert failed["stop_reason"] == "error"
    assert "couldn't understand" in failed["assistant_message"]
    # The node can send the same results again once the model is back.
    done = center.results(cid, result)
    assert done["assistant_message"] == "Lima is mild."


def test_openai_backend_maps_errors_directly(fake: FakeOpenAI) -> None:
    fake.plan.extend([("sleep", 60), ("status", 502, "bad gateway"), ("raw", b"{")])
    backend = OpenAIBackend(base_url=fake.url, timeout=1.0)
    request = LLMRequest(messages=[{"role": "user", "content": "hi"}])
    with pytest.raises(LLMTimeoutError):
        backend.complete(request)
    with pytest.raises(LLMUnavailableError):
        backend.complete(request)
    with pytest.raises(LLMBadResponseError):
        backend.complete(request)
    fake.plan.append(("json", {"choices": [{"message": {
        "content": None,
        "tool_calls": [{"id": "x", "function": {"name": "f", "arguments": {"a": 1}}}],
    }}]}))
    reply = backend.complete(request)
    assert reply.tool_calls[0].name == "f" and json.loads(reply.tool_calls[0].arguments) == {"a": 1}
    backend.close()


def test_factory_builds_each_backend(tmp_path: Any) -> None:
    script = tmp_path / "script.json"
    script.write_text(json.dumps([
        {"tool_calls": [{"name": "open_weather_command", "arguments": {"city": "Bonn"}}]},
        "It's raining in Bonn.",
    ]))
    scripted = create_backend(CenterSettings(llm_backend="scripted", llm_script=script))
    assert isinstance(scripted, ScriptedBackend)
    first = scripted.complete(LLMRequest(messages=[]))
    assert first.tool_calls[0].name == "open_weather_command"
    assert scripted.complete(LLMRequest(messages=[])).content == "It's raining in Bonn."
    with pytest.raises(LLMBadResponseError, match="script exhausted"):
        scripted.complete(LLMRequest(messages=[]))

    openai = create_backend(CenterSettings(llm_backend="openai", llm_base_url="http://x/v1"))
    assert isinstance(openai, OpenAIBackend) and openai.base_url == "http://x/v1"

    from jarvis.center.llm import BackendConfigError

    with pytest.raises(BackendConfigError, match="JARVIS_LLM_SCRIPT"):
        create_backend(CenterSettings(llm_backend="scripted"))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(BackendConfigError, match="cannot read the LLM script"):
        create_backend(CenterSettings(llm_backend="scripted", llm_script=bad))
