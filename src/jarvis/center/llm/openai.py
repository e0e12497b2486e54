"""A backend for any OpenAI-compatible chat-completions server.

llama.cpp's `llama-server`, Ollama, vLLM, LM Studio and OpenAI itself all accept
`POST {base_url}/chat/completions` with `messages` and `tools`. Failures map onto the
`LLMError` family: timeouts, unreachable or 5xx servers, and answers that are not a
chat completion. The API key is sent as a bearer token and never logged.

The timeout is a deadline for the whole answer. httpx's timeouts bound each socket
operation, so a server sending a byte every few seconds would never trip them; each call
therefore runs on a thread of its own, and the caller stops waiting at the deadline
whatever the server does (that thread stops at the next byte that arrives late).

`stream` asks for the answer as server-sent events (`"stream": true`) and hands its text
on piece by piece; the same deadline bounds the whole stream.
"""

from __future__ import annotations

import json
import logging
import queue
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

import httpx

from jarvis.center.llm.base import (
    LLMBadResponseError,
    LLMReply,
    LLMRequest,
    LLMTimeoutError,
    LLMToolCall,
    LLMUnavailableError,
    TextSink,
)
from jarvis.center.llm.openai_stream import StreamedReply

__all__ = ["OpenAIBackend"]

log = logging.getLogger(__name__)

# Far more than any chat completion; a server streaming without end is cut off here.
_MAX_ANSWER_BYTES = 16 * 1024 * 1024

_T = TypeVar("_T")


class OpenAIBackend:
    """Talks to `{base_url}/chat/completions` over httpx."""

    name = "openai"

    def __init__(
        self,
        base_url: str = "http://127.0.0.1:8080/v1",
        model: str | None = None,
        api_key: str | None = None,
        timeout: float = 60.0,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout = timeout
        headers = {"Content-Type": "application/json"}
        if api_key:
            headers["Authorization"] = f"Bearer {api_key}"
        self._client = httpx.Client(headers=headers, transport=transport)

    def close(self) -> None:
        self._client.close()

    def __repr__(self) -> str:  # the key must never show up in logs
        return f"OpenAIBackend(base_url={self.base_url!r}, model={self.model!r})"

    def _body(self, request: LLMRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model or "default",
            "messages": request.messages,
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stream": False,
        }
        if request.tools and not request.tools_disabled:
            body["tools"] = request.tools
            free = request.allow_direct_answer and not request.must_call
            body["tool_choice"] = "auto" if free else "required"
            if request.only_tool:
                body["tool_choice"] = {"type": "function",
                                       "function": {"name": request.only_tool}}
        if request.response_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": request.response_schema},
            }
        return body

    def _deadline(self, request: LLMRequest) -> tuple[str, float, float]:
        """The URL, the timeout and the monotonic deadline of one call."""
        timeout = min(self.timeout, request.timeout) if request.timeout else self.timeout
        return f"{self.base_url}/chat/completions", timeout, time.monotonic() + timeout

    def complete(self, request: LLMRequest) -> LLMReply:
        url, timeout, deadline = self._deadline(request)
        body = self._body(request)
        status, data = _on_call_thread(
            lambda: self._post(url, body, timeout, deadline), url, timeout, deadline)
        return _reply(url, status, data)

    def stream(self, request: LLMRequest, on_text: TextSink) -> LLMReply:
        """`complete`, with the answer's text handed to `on_text` as the server sends it."""
        url, timeout, deadline = self._deadline(request)
        body = {**self._body(request), "stream": True}
        gate = _Gate(on_text)
        try:
            return _on_call_thread(
                lambda: self._post_stream(url, body, timeout, deadline, gate.send),
                url, timeout, deadline)
        finally:
            gate.close()  # a call thread still reading must not reach the caller any more

    def _post_stream(
        self, url: str, body: dict[str, Any], timeout: float, deadline: float,
        on_text: TextSink,
    ) -> LLMReply:
        """On a call thread: the streamed answer, its text handed on as it arrives."""
        late = LLMTimeoutError(f"no complete answer from {url} within {timeout:g}s")
        try:
            with self._client.stream("POST", url, json=body, timeout=timeout) as response:
                if response.status_code >= 400 or "event-stream" not in response.headers.get(
                        "content-type", ""):
                    # An error, or a server that answers in one piece whatever it is asked.
                    reply = _reply(url, response.status_code,
                                   _read(response, url, deadline, late))
                    if reply.content and not reply.tool_calls:
                        on_text(reply.content)
                    return reply
                return _read_events(response, url, deadline, late, on_text)
        except httpx.TimeoutException as exc:
            raise late from exc
        except httpx.HTTPError as exc:
            raise LLMUnavailableError(f"cannot reach {url}: {type(exc).__name__}") from exc

    def _post(
        self, url: str, body: dict[str, Any], timeout: float, deadline: float
    ) -> tuple[int, bytes]:
        """On a call thread: the answer's status and body, read while the deadline holds."""
        late = LLMTimeoutError(f"no complete answer from {url} within {timeout:g}s")
        try:
            with self._client.stream("POST", url, json=body, timeout=timeout) as response:
                return response.status_code, _read(response, url, deadline, late)
        except httpx.TimeoutException as exc:
            raise late from exc
        except httpx.HTTPError as exc:
            raise LLMUnavailableError(f"cannot reach {url}: {type(exc).__name__}") from exc


class _Gate:
    """Hands pieces of text on until closed: a late call thread's pieces go nowhere."""

    def __init__(self, on_text: TextSink) -> None:
        self._on_text = on_text
        self._lock = threading.Lock()
        self._open = True

    def send(self, piece: str) -> None:
        with self._lock:
            if self._open and piece:
                self._on_text(piece)

    def close(self) -> None:
        with self._lock:
            self._open = False


def _on_call_thread(work: Callable[[], _T], url: str, timeout: float, deadline: float) -> _T:
    """`work()` run on a thread of its own; its result, or LLMTimeoutError at the deadline."""
    answers: queue.SimpleQueue[_T | BaseException] = queue.SimpleQueue()

    def call() -> None:
        try:
            answers.put(work())
        except BaseException as exc:  # handed to the caller, which raises it
            answers.put(exc)

    # A daemon thread: one still reading a dripping answer never holds up shutdown.
    threading.Thread(target=call, name="llm-http", daemon=True).start()
    try:
        answer = answers.get(timeout=max(0.0, deadline - time.monotonic()))
    except queue.Empty as exc:
        raise LLMTimeoutError(f"no complete answer from {url} within {timeout:g}s") from exc
    if isinstance(answer, BaseException):
        raise answer
    return answer


def _read(response: httpx.Response, url: str, deadline: float, late: LLMTimeoutError) -> bytes:
    """The whole body, read while the deadline holds and up to the size limit."""
    chunks: list[bytes] = []
    size = 0
    for chunk in response.iter_bytes():
        if time.monotonic() > deadline:
            raise late
        size += len(chunk)
        if size > _MAX_ANSWER_BYTES:
            raise LLMBadResponseError(f"{url} answered with more than {_MAX_ANSWER_BYTES} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _read_events(
    response: httpx.Response, url: str, deadline: float, late: LLMTimeoutError,
    on_text: TextSink,
) -> LLMReply:
    """A streamed answer read line by line, its text handed on as each piece arrives."""
    streamed = StreamedReply()
    size = 0
    for line in response.iter_lines():
        if time.monotonic() > deadline:
            raise late
        size += len(line) + 1
        if size > _MAX_ANSWER_BYTES:
            raise LLMBadResponseError(f"{url} answered with more than {_MAX_ANSWER_BYTES} bytes")
        on_text(streamed.line(line))
        if streamed.finished:
            break
    return streamed.reply()


def _reply(url: str, status: int, data: bytes) -> LLMReply:
    """The answer as a reply, or the `LLMError` its status or content calls for."""
    if status >= 500 or status in (401, 403, 404, 429):
        raise LLMUnavailableError(f"{url} answered HTTP {status}: {_snippet(data)}")
    if status >= 400:
        raise LLMBadResponseError(
            f"{url} refused the request (HTTP {status}): {_snippet(data)}"
        )
    try:
        parsed = json.loads(data)
    except ValueError as exc:
        raise LLMBadResponseError(f"{url} answered with something that is not JSON") from exc
    return _parse(parsed)


def _snippet(data: bytes, limit: int = 200) -> str:
    text = " ".join(data.decode("utf-8", "replace").split())
    return text if len(text) <= limit else text[:limit] + "..."


def _parse(data: Any) -> LLMReply:
    try:
        message = data["choices"][0]["message"]
    except (KeyError, IndexError, TypeError) as exc:
        raise LLMBadResponseError("the answer has no choices[0].message") from exc
    if not isinstance(message, dict):
        raise LLMBadResponseError("choices[0].message is not an object")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise LLMBadResponseError("message.content is not text")
    calls: list[LLMToolCall] = []
    for index, raw in enumerate(message.get("tool_calls") or []):
        function = raw.get("function") if isinstance(raw, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise LLMBadResponseError(f"tool call {index} has no function name")
        arguments = function.get("arguments", "{}")
        if not isinstance(arguments, str):  # some servers send the object itself
            arguments = json.dumps(arguments)
        calls.append(LLMToolCall(str(raw.get("id") or ""), function["name"], arguments))
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    return LLMReply(content=content, tool_calls=calls, usage=usage)
