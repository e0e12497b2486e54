"""HTTP client of the command center API (the node's only way to talk to the center).

The voice-command calls take an optional `on_sentence`: the turn is then streamed
(`.../stream`), each sentence of the spoken answer goes to it as soon as the center has
it, and the call returns the same response as without it.
"""

from __future__ import annotations

import logging
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

import httpx
from pydantic import BaseModel, ValidationError

from jarvis.node.turn_stream import SentenceHandler, StreamedTurnError, read_turn
from jarvis.protocol import (
    API_PREFIX,
    EVENT_STREAM,
    ContinueRequest,
    ConversationStartRequest,
    ConversationStartResponse,
    LocalTurn,
    NodeContext,
    ToolCallingResponse,
    ToolResult,
    VoiceCommandRequest,
    WhoAmIResponse,
)

__all__ = [
    "CenterCertificateError", "CenterError", "CenterUnreachableError", "JarvisCommandCenterClient",
]

log = logging.getLogger(__name__)

_Response = TypeVar("_Response", bound=BaseModel)

# Only failures where the request never reached the center are retried: a POST that did
# reach it may already have advanced the conversation.
_RETRYABLE = (httpx.ConnectError, httpx.ConnectTimeout)


class CenterError(Exception):
    """The center answered with an error, or with something that is not the protocol."""

    def __init__(self, message: str, status_code: int | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status_code = status_code


class CenterUnreachableError(CenterError):
    """The center could not be reached (after the retries) or did not answer in time."""


class CenterCertificateError(CenterUnreachableError):
    """The center's TLS certificate is not one this node trusts (wrong CA, wrong host name)."""


def _tls_context(ca_file: Path | str | None) -> ssl.SSLContext | bool:
    """Certificates signed by `ca_file` only (a home CA), else httpx's default trust."""
    if ca_file is None:
        return True
    try:
        return ssl.create_default_context(cafile=str(Path(ca_file).expanduser()))
    except (OSError, ssl.SSLError) as exc:
        raise CenterError(f"cannot use {ca_file} as the center's CA certificate: {exc}") from exc


def _untrusted(exc: BaseException) -> ssl.SSLCertVerificationError | None:
    """The certificate failure behind a connection error, if that is what it was."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ssl.SSLCertVerificationError):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


# The longest `Retry-After` a node waits out before sending a refused request again; a
# longer wait is the center's 429 error for the caller (a person is waiting for an answer).
_MAX_RETRY_AFTER = 5.0


def _short_wait(response: httpx.Response) -> float | None:
    """Seconds to wait before resending a request refused with 429, when short enough."""
    if response.status_code != 429:
        return None
    try:
        wait = float(response.headers.get("retry-after", ""))
    except ValueError:
        return None
    return wait if 0 <= wait <= _MAX_RETRY_AFTER else None


# OpenSSL's X509_V_ERR_HOSTNAME_MISMATCH and X509_V_ERR_IP_ADDRESS_MISMATCH.
_NAME_MISMATCH = (62, 64)


def _distrust(base_url: str, refused: ssl.SSLCertVerificationError) -> str:
    """Why the center's certificate was refused, and what to change."""
    why = str(refused.verify_message or refused.reason).rstrip(".")
    if refused.verify_code in _NAME_MISMATCH:
        hint = "use a center URL with a name the certificate was made for"
    else:
        hint = "set JARVIS_CENTER_CA to the CA certificate that signed it"
    return f"the center at {base_url} has a certificate this node does not trust ({why}); {hint}"


def _broken(base_url: str, exc: httpx.TransportError, late: str) -> CenterUnreachableError:
    """The error for a connection that failed; `late` says what a timeout means here."""
    if isinstance(exc, httpx.TimeoutException):
        return CenterUnreachableError(f"the center at {base_url} {late}")
    return CenterUnreachableError(f"connection to the center at {base_url} failed: {exc}")


def _parsed(response: httpx.Response, path: str, model: type[_Response]) -> _Response:
    """The answer's body as `model`, or CenterError when it is not one."""
    try:
        return model.model_validate(response.json())
    except (ValueError, ValidationError) as exc:
        raise CenterError(f"unexpected answer from the center for {path}: {exc}") from exc


def _error_message(response: httpx.Response) -> str:
    """The center's own words for an error: `error`, else FastAPI's `detail`, else the text."""
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        error = body.get("error")
        detail = body.get("detail")
        if isinstance(error, str) and error:
            if isinstance(detail, str) and detail and detail != error:
                return f"{error}: {detail}"
            return error
        if isinstance(detail, str) and detail:
            return detail
        if isinstance(detail, list) and detail:
            parts = []
            for item in detail:
                if isinstance(item, dict):
                    where = ".".join(str(p) for p in item.get("loc", []) if p != "body")
                    msg = str(item.get("msg", ""))
                    parts.append(f"{where}: {msg}" if where else msg)
            if parts:
                return "; ".join(parts)
    text = response.text.strip()
    return text[:500] if text else f"HTTP {response.status_code}"


class JarvisCommandCenterClient:
    """Typed calls to `/api/v0/...`; one instance per node, safe to reuse across commands."""

    def __init__(
        self,
        base_url: str | Callable[[], str],
        *,
        timeout: float = 120.0,
        connect_timeout: float = 5.0,
        retries: int = 3,
        backoff: float = 0.25,
        transport: httpx.BaseTransport | None = None,
        ca_file: Path | str | None = None,
        key: str | Callable[[], str | None] | None = None,
    ) -> None:
        """`ca_file`: the CA certificate (PEM) that signed the center's certificate, for a
        center on https with a certificate of its own (`JARVIS_CENTER_CA`).
        `key`: this node's key, sent as `Authorization: Bearer` with every request (a
        callable is asked on the first request, after the base URL)."""
        # A callable base URL is resolved on the first request (e.g. a center started on
        # demand), so utterances handled locally never pay for it.
        self._resolve = None if isinstance(base_url, str) else base_url
        self._resolve_lock = threading.Lock()
        self.base_url = base_url.rstrip("/") if isinstance(base_url, str) else ""
        self.retries = max(0, retries)
        self.backoff = backoff
        self._http = httpx.Client(
            base_url=self.base_url,
            timeout=httpx.Timeout(timeout, connect=connect_timeout),
            transport=transport,
            verify=_tls_context(ca_file),
        )
        self._key_source = key if callable(key) else None
        if isinstance(key, str):
            self._set_key(key)

    # --- lifecycle ----------------------------------------------------------------------
    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> JarvisCommandCenterClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- API ----------------------------------------------------------------------------
    def start_conversation(
        self,
        conversation_id: str,
        node_context: NodeContext,
        client_tools: list[dict[str, Any]],
        available_commands: list[dict[str, Any]] | None = None,
    ) -> ConversationStartResponse:
        """Register this node's tools for a new conversation."""
        body = ConversationStartRequest.model_validate(
            {
                "conversation_id": conversation_id,
                "node_context": node_context,
                "client_tools": client_tools,
                "available_commands": available_commands,
            }
        )
        return self._post("/conversation/start", body, ConversationStartResponse)

    def send_command(
        self,
        voice_command: str,
        conversation_id: str,
        node_context: NodeContext | None = None,
        local_turns: list[LocalTurn] | None = None,
        *,
        on_sentence: SentenceHandler | None = None,
    ) -> ToolCallingResponse:
        """Send an utterance (after the exchanges the node answered itself, if any); the
        answer says what the node must do next."""
        body = VoiceCommandRequest(
            voice_command=voice_command, conversation_id=conversation_id,
            node_context=node_context, local_turns=local_turns or None,
        )
        return self._turn("/voice/command", body, on_sentence)

    def send_tool_results(
        self, conversation_id: str, tool_results: list[ToolResult], *,
        on_sentence: SentenceHandler | None = None,
    ) -> ToolCallingResponse:
        """Send the outputs of every tool the center asked for in one turn."""
        body = ContinueRequest(conversation_id=conversation_id, tool_results=tool_results)
        return self._turn("/voice/command/continue", body, on_sentence)

    def send_validation_response(
        self, conversation_id: str, validation_response: str, *,
        on_sentence: SentenceHandler | None = None,
    ) -> ToolCallingResponse:
        """Send the user's answer to a clarifying question."""
        body = ContinueRequest(
            conversation_id=conversation_id, validation_response=validation_response
        )
        return self._turn("/voice/command/continue", body, on_sentence)

    def whoami(self) -> WhoAmIResponse:
        """The node the center knows this client's key as (401 CenterError without one)."""
        with self._request("/whoami", None) as response:
            return _parsed(response, "/whoami", WhoAmIResponse)

    # --- transport ----------------------------------------------------------------------
    def _set_key(self, key: str | None) -> None:
        if key:
            self._http.headers["Authorization"] = f"Bearer {key}"

    def _refusal(self, response: httpx.Response) -> str:
        """The center's error, with the way out when the node's key was refused."""
        message = _error_message(response)
        if response.status_code == 401:
            message += f" (set up this node with: jarvis node login {self.base_url})"
        return message

    def _turn(
        self, path: str, body: BaseModel, on_sentence: SentenceHandler | None
    ) -> ToolCallingResponse:
        """A turn, streamed to `on_sentence` when one is given."""
        if on_sentence is None:
            return self._post(path, body, ToolCallingResponse)
        with self._request(path + "/stream", body, stream=True) as response:
            if EVENT_STREAM not in response.headers.get("content-type", ""):
                response.read()
                return _parsed(response, path, ToolCallingResponse)
            try:
                return read_turn(response.iter_lines(), on_sentence)
            except StreamedTurnError as exc:
                raise CenterError(exc.message, exc.status_code) from exc
            except httpx.TransportError as exc:
                raise _broken(self.base_url, exc, "stopped sending in the middle of an answer"
                              ) from exc

    def _post(self, path: str, body: BaseModel, model: type[_Response]) -> _Response:
        with self._request(path, body) as response:
            return _parsed(response, path, model)

    @contextmanager
    def _request(
        self, path: str, body: BaseModel | None, stream: bool = False
    ) -> Iterator[httpx.Response]:
        """The center's answer to `body` (a GET without one; its body still to be read
        when `stream`); an error status raises `CenterError`."""
        payload = body.model_dump(mode="json", exclude_none=True) if body is not None else None
        response = self._send(API_PREFIX + path, payload, stream)
        try:
            wait = _short_wait(response)
            if wait is not None:
                # Over the node's rate limit: nothing was stored, so the same request may go
                # again.
                response.close()
                time.sleep(wait)
                response = self._send(API_PREFIX + path, payload, stream)
            if response.status_code >= 400:
                response.read()
                raise CenterError(self._refusal(response), response.status_code)
            yield response
        finally:
            response.close()

    def _ensure_base_url(self) -> None:
        with self._resolve_lock:
            if self._resolve is not None:
                self.base_url = self._resolve().rstrip("/")
                self._http.base_url = httpx.URL(self.base_url)
                self._resolve = None
            if self._key_source is not None:
                self._set_key(self._key_source())
                self._key_source = None

    def _send(
        self, path: str, payload: dict[str, Any] | None, stream: bool = False
    ) -> httpx.Response:
        """POST `payload` (GET when None), retried while the center cannot be reached."""
        if self._resolve is not None or self._key_source is not None:
            self._ensure_base_url()
        # A streamed answer is read as it arrives; its body stays open until closed.
        request = self._http.build_request(
            "GET" if payload is None else "POST", path, json=payload,
            headers={"Accept": EVENT_STREAM} if stream else None)
        attempt = 0
        while True:
            try:
                return self._http.send(request, stream=stream)
            except _RETRYABLE as exc:
                refused = _untrusted(exc)
                if refused is not None:
                    raise CenterCertificateError(_distrust(self.base_url, refused)) from exc
                if attempt >= self.retries:
                    raise CenterUnreachableError(
                        f"cannot reach the center at {self.base_url} ({exc.__class__.__name__})"
                    ) from exc
                delay = self.backoff * (2**attempt)
                log.debug("center unreachable (%s); retrying in %.2fs", exc, delay)
                time.sleep(delay)
                attempt += 1
            except httpx.TransportError as exc:
                raise _broken(self.base_url, exc, "did not answer in time") from exc
