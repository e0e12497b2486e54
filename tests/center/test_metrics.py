"""`/metrics` over real HTTP against a real center (uvicorn, loopback port) with a scripted
LLM, and the JSON log format."""

from __future__ import annotations

import json
import logging
from typing import Any

from center_helpers import CALCULATOR_COMMAND, WEATHER_TOOL, conversation_id
from prometheus_client.parser import text_string_to_metric_families

from jarvis.center.llm.base import LLMReply, LLMTimeoutError, LLMToolCall
from jarvis.center.llm.scripted import ScriptedBackend, text, tool_call
from jarvis.center.logs import JsonFormatter, uvicorn_log_config


def _samples(center: Any) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    response = center.client.get("/metrics")
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/plain")
    found = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def _value(samples: dict[Any, float], name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def _timeout(_request: Any) -> LLMReply:
    raise LLMTimeoutError("no answer in 60 s")


def test_turns_llm_retries_validation_and_errors_are_counted(make_center: Any) -> None:
    usage = {"prompt_tokens": 120, "completion_tokens": 8}
    backend = ScriptedBackend([
        LLMReply(tool_calls=[LLMToolCall("c1", "calculate",
                                         '{"num1": "x", "num2": 1, "operation": "add"}')],
                 usage=usage),
        tool_call("calculate", num1=2, num2=1, operation="add"),
        text("Three."),
        _timeout,
    ])
    center = make_center(backend, direct_tool_message=False)
    cid = conversation_id()
    center.start(cid, [], commands=[CALCULATOR_COMMAND])
    call = center.command(cid, "what is 2 plus 1")["tool_calls"][0]
    center.results(cid, (call["id"], {"success": True, "context": {"result": 3}}))
    failed = center.command(cid, "and plus 4")
    assert failed["stop_reason"] == "error"
    assert center.client.get("/api/v0/nope").status_code == 404

    samples = _samples(center)
    assert _value(samples, "jarvis_turns_total", endpoint="command", stop_reason="tool_calls") == 1
    assert _value(samples, "jarvis_turns_total", endpoint="continue", stop_reason="complete") == 1
    assert _value(samples, "jarvis_turns_total", endpoint="command", stop_reason="error") == 1
    assert _value(samples, "jarvis_llm_tokens_total", backend="scripted", kind="prompt") == 120
    assert _value(samples, "jarvis_llm_tokens_total", backend="scripted", kind="completion") == 8
    # Three completions answered; the timed-out one has no latency.
    assert _value(samples, "jarvis_llm_call_duration_seconds_count", backend="scripted") == 3
    assert _value(samples, "jarvis_validation_retries_total", source="center") == 1
    assert _value(samples, "jarvis_validation_failures_total", source="center") == 1
    assert _value(samples, "jarvis_errors_total", kind="LLMTimeoutError") == 1
    assert _value(samples, "jarvis_errors_total", kind="http_4xx") == 1
    assert _value(samples, "jarvis_turn_duration_seconds_count", endpoint="command") == 2
    assert _value(samples, "jarvis_stage_duration_seconds_count", stage="validate") >= 1
    route = "/api/v0/voice/command"
    assert _value(samples, "jarvis_http_requests_total", method="POST", route=route,
                  status="200") == 2
    assert _value(samples, "jarvis_http_request_duration_seconds_count", method="POST",
                  route=route) == 2
    # A path nobody routes shares one label, whatever it was.
    assert _value(samples, "jarvis_http_requests_total", method="GET", route="unmatched",
                  status="404") == 1


def test_node_validation_errors_are_counted(make_center: Any) -> None:
    backend = ScriptedBackend([tool_call("open_weather_command", city="Pariss"),
                               tool_call("open_weather_command", city="Paris")])
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    call = center.command(cid, "weather in paris")["tool_calls"][0]
    context = {"_validation_error": True,
               "errors": [{"param_name": "city", "message": "unknown city"}]}
    again = center.results(cid, (call["id"], {"success": False, "context": context}))
    assert again["stop_reason"] == "tool_calls"
    samples = _samples(center)
    assert _value(samples, "jarvis_validation_failures_total", source="node") == 1
    assert _value(samples, "jarvis_validation_retries_total", source="node") == 1


def test_json_log_lines_carry_the_message_and_extras() -> None:
    record = logging.LogRecord("jarvis.center", logging.WARNING, __file__, 1,
                               "turn %s took %d ms", ("c1", 12), None)
    record.conversation_id = "c1"
    line = json.loads(JsonFormatter().format(record))
    assert line["level"] == "warning" and line["logger"] == "jarvis.center"
    assert line["message"] == "turn c1 took 12 ms" and line["conversation_id"] == "c1"
    assert line["time"].endswith("+00:00")
    config = uvicorn_log_config("json")
    assert config is not None and config["formatters"]["json"]["()"] is JsonFormatter
    assert uvicorn_log_config("text") is None


def test_jarvis_serve_writes_json_log_lines(tmp_path: Any) -> None:
    """`jarvis serve` (scripted LLM) with log_format json: every line on stderr is JSON."""
    import os
    import socket
    import subprocess
    import sys
    import time

    import httpx

    script = tmp_path / "replies.json"
    script.write_text('["Hello."]')
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "JARVIS_LOG_FORMAT": "json", "JARVIS_LLM_BACKEND": "scripted",
           "JARVIS_LLM_SCRIPT": str(script), "JARVIS_DATA_DIR": str(tmp_path),
           "JARVIS_CONFIG": ""}
    server = subprocess.Popen(
        [sys.executable, "-m", "jarvis.cli.main", "serve", "--port", str(port)],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/health").status_code == 200:
                    break
            except httpx.TransportError:
                assert server.poll() is None, server.stderr.read() if server.stderr else ""
                assert time.monotonic() < deadline, "jarvis serve did not start"
                time.sleep(0.1)
    finally:
        server.terminate()
        _out, errors = server.communicate(timeout=30)
    lines = [json.loads(line) for line in errors.splitlines() if line.strip()]
    assert any("Uvicorn running" in line["message"] for line in lines), errors
    assert all({"time", "level", "logger", "message"} <= set(line) for line in lines)
