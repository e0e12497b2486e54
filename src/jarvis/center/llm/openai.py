"""A backend for any OpenAI-compatible chat-completions server.

llama.cpp's `llama-server`, Ollama, vLLM, LM Studio and OpenAI itself all accept
`POST {base_url}/chat/completions` with `messages` and `tools`. Failures map onto the
`LLMError` family: timeouts, unreachable or 5xx servers, and answers that are not a
chat completion. The API key is sent as a bearer token and never logged.
"""

from __future__ import annotations

import json
import logging
from typing import Any

import httpx

from jarvis.center.llm.base import (
    LLMBadResponseError,
    LLMReply,
    LLMRequest,
    LLMTimeoutError,
    LLMToolCall,
    LLMUnavailableError,
)

__all__ = ["OpenAIBackend"]

log = logging.getLogger(__name__)


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
            body["tool_choice"] = "auto" if request.allow_direct_answer else "required"
        if request.response_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "reply", "schema": request.response_schema},
            }
        return body

    def complete(self, request: LLMRequest) -> LLMReply:
        url = f"{self.base_url}/chat/completions"
        timeout = min(self.timeout, request.timeout) if request.timeout else self.timeout
        try:
            response = self._client.post(url, json=self._body(request), timeout=timeout)
        except httpx.TimeoutException as exc:
            raise LLMTimeoutError(f"no answer from {url} within {timeout:g}s") from exc
        except httpx.HTTPError as exc:
            raise LLMUnavailableError(f"cannot reach {url}: {type(exc).__name__}") from exc
        if response.status_code >= 500 or response.status_code in (401, 403, 404, 429):
            raise LLMUnavailableError(
                f"{url} answered HTTP {response.status_code}: {_snippet(response.text)}"
            )
        if response.status_code >= 400:
            raise LLMBadResponseError(
                f"{url} refused the request (HTTP {response.status_code}): "
                f"{_snippet(response.text)}"
            )
        try:
            data = response.json()
        except ValueError as exc:
            raise LLMBadResponseError(f"{url} answered with something that is not JSON") from exc
        return _parse(data)


def _snippet(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
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
