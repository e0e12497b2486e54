"""The node's MCP servers, connected on one background event loop.

Commands run on the node's threads and call `McpHub.call`, which hands the call to the
loop and waits at most the server's deadline (plus a margin for the hand-over), so a
hung server can delay an answer but never the node.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import sys
import threading
from collections.abc import Iterable
from typing import Any, TextIO

import mcp_types as types

from jarvis.node.mcp.config import McpServerConfig
from jarvis.node.mcp.connection import Backoff, McpConnection, McpUnavailableError

__all__ = ["McpHub"]

_HAND_OVER_MARGIN = 5.0
_CLOSE_WAIT = 10.0


class McpHub:
    """Owns the loop thread and one supervised `McpConnection` per server."""

    def __init__(self, errlog: TextIO | None = None) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="jarvis-mcp",
                                        daemon=True)
        self._thread.start()
        self._devnull: TextIO | None = None
        self._errlog = errlog or self._stderr()
        self.connections: dict[str, McpConnection] = {}
        self._supervisors: list[concurrent.futures.Future[None]] = []

    def start(
        self, servers: Iterable[tuple[McpServerConfig, dict[str, str], dict[str, str]]],
        backoff: Backoff | None = None,
    ) -> None:
        """Start every server (config, env, headers) and wait for each one's first try."""
        started = []
        for config, env, headers in servers:
            connection = McpConnection(config, env, headers, backoff=_copy(backoff),
                                       errlog=self._errlog)
            self.connections[config.name] = connection
            self._supervisors.append(self._submit(connection.supervise()))
            started.append(connection)
        longest = max((c.config.start_timeout for c in started), default=0.0) + 1
        waits = [c.wait_first_try(c.config.start_timeout + 1) for c in started]
        if waits:
            with contextlib.suppress(concurrent.futures.TimeoutError,
                                     concurrent.futures.CancelledError):
                # a margin over the starts' own limits, in case the loop is stopped meanwhile
                self._submit(_gather(waits)).result(timeout=longest + _HAND_OVER_MARGIN)

    def call(self, server: str, tool: str, arguments: dict[str, Any]) -> types.CallToolResult:
        """The tool's result, or `McpUnavailableError` with a sentence saying why not."""
        connection = self.connections[server]
        if self._loop.is_closed() or not self._thread.is_alive():
            raise McpUnavailableError(f"The {server} server has been stopped with the node.")
        future = self._submit(connection.call(tool, arguments))
        deadline = connection.config.call_timeout + _HAND_OVER_MARGIN
        try:
            return future.result(timeout=deadline)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise McpUnavailableError(
                f"The {server} server did not answer within {deadline:g} seconds."
            ) from None

    def close(self) -> None:
        """Stop every server process and the loop; safe to call twice."""
        if not self._thread.is_alive():
            return
        for connection in self.connections.values():
            self._loop.call_soon_threadsafe(connection.stop)
        for supervisor in self._supervisors:
            try:
                supervisor.result(timeout=_CLOSE_WAIT)
            except (concurrent.futures.TimeoutError, concurrent.futures.CancelledError):
                supervisor.cancel()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=_CLOSE_WAIT)
        if not self._thread.is_alive():
            self._loop.close()
        if self._devnull is not None:
            self._devnull.close()

    def _stderr(self) -> TextIO:
        """Where server processes write their stderr: ours, or nowhere when ours has no file
        descriptor (a test runner's or a notebook's captured stream)."""
        try:
            sys.stderr.fileno()
        except (AttributeError, OSError, ValueError):
            self._devnull = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115
            return self._devnull
        return sys.stderr

    def __enter__(self) -> McpHub:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _submit(self, coroutine: Any) -> concurrent.futures.Future[Any]:
        return asyncio.run_coroutine_threadsafe(coroutine, self._loop)


async def _gather(waits: list[Any]) -> list[Any]:
    return list(await asyncio.gather(*waits))


def _copy(backoff: Backoff | None) -> Backoff | None:
    return Backoff(backoff.first, backoff.maximum) if backoff is not None else None
