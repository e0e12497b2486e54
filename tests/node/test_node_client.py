"""The center client: retries only when the center cannot be reached, typed errors."""

from __future__ import annotations

import socket
import time

import httpx
import pytest

from jarvis.node import CenterError, CenterUnreachableError, JarvisCommandCenterClient


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_unreachable_center_is_retried_with_backoff_then_reported() -> None:
    url = f"http://127.0.0.1:{_closed_port()}"
    client = JarvisCommandCenterClient(url, retries=2, backoff=0.05)
    started = time.perf_counter()
    with pytest.raises(CenterUnreachableError, match=f"cannot reach the center at {url}"):
        client.send_command("hello", "c1")
    assert time.perf_counter() - started >= 0.05 + 0.1  # two waits: 0.05 s, then 0.1 s


def test_http_errors_are_not_retried_and_carry_the_center_message() -> None:
    seen: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request.url.path)
        return httpx.Response(409, json={"error": "conversation 'c1' was changed", "detail": None})

    client = JarvisCommandCenterClient(
        "http://center.test", transport=httpx.MockTransport(handler), retries=3
    )
    with pytest.raises(CenterError) as caught:
        client.send_tool_results("c1", [])
    assert caught.value.status_code == 409
    assert caught.value.message == "conversation 'c1' was changed"
    assert seen == ["/api/v0/voice/command/continue"]


def test_a_response_that_is_not_the_protocol_is_a_center_error() -> None:
    client = JarvisCommandCenterClient(
        "http://center.test",
        transport=httpx.MockTransport(lambda r: httpx.Response(200, json={"hello": "world"})),
    )
    with pytest.raises(CenterError, match="unexpected answer from the center"):
        client.send_validation_response("c1", "yes")
