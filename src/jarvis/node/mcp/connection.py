"""One MCP server kept connected: started, watched, restarted with back-off, called with a deadline.

Everything here runs on the MCP event loop of `McpHub`. A connection's whole life (enter
the SDK client, list tools, wait, leave) is one task, because the SDK's task groups must
be left by the task that entered them; the supervisor only starts, awaits and cancels it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any, TextIO

import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

from jarvis.node.mcp.config import McpServerConfig

__all__ = ["Backoff", "McpConnection", "McpUnavailableError"]

log = logging.getLogger(__name__)


class McpUnavailableError(Exception):
    """A call that could not be made or answered; `str()` is a sentence a user can hear."""


@dataclass
class Backoff:
    """Seconds to wait before the next start: doubles after each failure, up to `maximum`."""

    first: float = 1.0
    maximum: float = 60.0
    current: float = 0.0

    def failed(self) -> float:
        self.current = self.first if self.current == 0 else min(self.current * 2, self.maximum)
        return self.current

    def reset(self) -> None:
        self.current = 0.0


class McpConnection:
    """A supervised connection to one server; `call` never raises anything but MCP results
    and `McpUnavailableError`."""

    def __init__(
        self, config: McpServerConfig, env: dict[str, str], headers: dict[str, str],
        backoff: Backoff | None = None, errlog: TextIO | None = None,
    ) -> None:
        self.config = config
        self._env = env  # secret values: kept here only, never logged or shown
        self._headers = headers
        self.backoff = backoff or Backoff()
        self._errlog = errlog or sys.stderr
        self.tools: list[types.Tool] | None = None
        self.last_error: str | None = None
        self.retry_at = 0.0
        self._client: Client | None = None
        self._ready = asyncio.Event()
        self._broken = asyncio.Event()
        self._first_try = asyncio.Event()
        self._stop = asyncio.Event()

    @property
    def name(self) -> str:
        return self.config.name

    # --- life ----------------------------------------------------------------------------
    async def supervise(self) -> None:
        """Start the server, wait while it lives, and start it again after a pause."""
        while not self._stop.is_set():
            await self._run_once()
            self._first_try.set()
            if self._stop.is_set():
                return
            delay = self.backoff.failed()
            self.retry_at = time.monotonic() + delay
            log.warning("MCP server %s: %s; starting it again in %g s",
                        self.name, self.last_error or "it stopped", delay)
            with contextlib.suppress(TimeoutError):  # a pause that `stop` cuts short
                await asyncio.wait_for(self._stop.wait(), delay)

    async def _run_once(self) -> None:
        """One start of the server, returning when it has stopped (or never started)."""
        self._ready.clear()
        self._broken.clear()
        life = asyncio.create_task(self._life())
        # A start ends when the server is ready, fails, takes too long, or the node stops.
        waits = [asyncio.create_task(self._ready.wait()), asyncio.create_task(self._stop.wait())]
        await asyncio.wait([life, *waits], timeout=self.config.start_timeout,
                           return_when=asyncio.FIRST_COMPLETED)
        for wait in waits:
            wait.cancel()
        if self._ready.is_set():
            self.backoff.reset()
            self._first_try.set()
        elif not life.done():
            life.cancel()
            if not self._stop.is_set():
                self.last_error = f"it did not start within {self.config.start_timeout:g} seconds"
        await asyncio.gather(life, return_exceptions=True)
        self._client = None

    async def _life(self) -> None:
        """Connect, list the tools, and stay connected until the connection breaks."""
        try:
            # The initialize handshake: every server speaks it, old and new protocol eras.
            # A slow start (a loaded Pi) is bounded by start_timeout; calls by their own wait_for.
            patience = max(self.config.start_timeout, self.config.call_timeout)
            async with Client(self._transport(), read_timeout_seconds=patience,
                              mode="legacy", cache=None) as client:
                listed = await client.list_tools()
                self.tools = list(listed.tools)
                self.last_error = None
                self._client = client
                self._ready.set()
                await self._watch(client)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # any failure is reported, never raised
            if not self._ready.is_set():
                self.last_error = f"it failed to start ({_describe(exc)})"
            elif self.last_error is None:
                self.last_error = f"it stopped ({_describe(exc)})"
        finally:
            self._client = None

    async def _watch(self, client: Client) -> None:
        """Return when the connection breaks, asking an idle server for its tools (ping is
        gone from the newer protocol) so a dead one is restarted before a call needs it."""
        interval = self.config.ping_interval
        while not self._broken.is_set():
            try:
                await asyncio.wait_for(self._broken.wait(), interval)
            except TimeoutError:
                try:
                    await asyncio.wait_for(client.list_tools(), self.config.call_timeout)
                except Exception as exc:  # whatever the failure, the server is gone
                    self._break(f"it stopped answering ({_describe(exc)})")

    def _transport(self) -> Any:
        if self.config.url:
            return _http_transport(self.config.url, self._headers)
        program, *args = self.config.command
        params = StdioServerParameters(command=program, args=args, env=self._env or None,
                                       cwd=self.config.cwd)
        return stdio_client(params, errlog=self._errlog)

    async def wait_first_try(self, timeout: float) -> bool:
        """True when the first start succeeded; False when it failed or took too long."""
        try:
            await asyncio.wait_for(self._first_try.wait(), timeout)
        except TimeoutError:
            return False
        return self._client is not None

    def stop(self) -> None:
        """End the connection and the server process (call on the MCP loop)."""
        self._stop.set()
        self._broken.set()

    # --- calls ---------------------------------------------------------------------------
    async def call(self, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        client = self._client
        if client is None:
            raise McpUnavailableError(self._unavailable())
        timeout = self.config.call_timeout
        try:
            result = await asyncio.wait_for(client.call_tool(tool, arguments), timeout)
        except TimeoutError:
            self._break(f"a call to {tool} took longer than {timeout:g} seconds")
            raise McpUnavailableError(
                f"The {self.name} server did not answer within {timeout:g} seconds; "
                "it is being restarted."
            ) from None
        except MCPError as exc:
            if exc.code in (CONNECTION_CLOSED, REQUEST_TIMEOUT):
                self._break("the connection closed")
                raise McpUnavailableError(
                    f"The {self.name} server stopped while answering; it is being restarted."
                ) from None
            raise McpUnavailableError(
                f"The {self.name} server refused the call to {tool}: {exc.message}"
            ) from None
        except Exception as exc:  # garbage on the wire, a broken pipe: restart the server
            self._break(_describe(exc))
            raise McpUnavailableError(
                f"The {self.name} server gave an answer that could not be read; "
                "it is being restarted."
            ) from None
        return result

    def _break(self, why: str) -> None:
        self.last_error = why
        self._client = None  # later calls hear why at once instead of trying a dying server
        self._broken.set()

    def _unavailable(self) -> str:
        why = self.last_error or "it is still starting"
        wait = max(0.0, self.retry_at - time.monotonic())
        later = f"; trying again in {wait:.0f} seconds" if wait >= 1 else ""
        return f"The {self.name} server is not available: {why}{later}."


@asynccontextmanager
async def _http_transport(url: str, headers: dict[str, str]) -> AsyncIterator[Any]:
    """Streamable HTTP with the configured headers (the SDK leaves the client to us)."""
    async with create_mcp_http_client(headers=headers or None) as http, \
            streamable_http_client(url, http_client=http) as streams:
        yield streams


def _describe(exc: BaseException) -> str:
    # Task groups wrap the real cause; show the innermost one.
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
