"""A real MCP server for the tests, written with the official SDK.

Run as `python sample_server.py` (stdio) or `python sample_server.py --http PORT`.
Some tools misbehave on purpose: `stall` hangs, `crash` kills the process, `babble`
writes garbage on the protocol stream and then hangs.
"""

from __future__ import annotations

import datetime as dt
import os
import sys
import time
from typing import Literal

from mcp.server import MCPServer

server = MCPServer("sample")


@server.tool()
def convert_temperature(value: float, unit: Literal["celsius", "fahrenheit"]) -> str:
    """Convert a temperature to the other unit."""
    if unit == "celsius":
        return f"{value:g} °C is {value * 9 / 5 + 32:g} °F"
    return f"{value:g} °F is {(value - 32) * 5 / 9:g} °C"


@server.tool()
def plan_meeting(day: dt.date, attendees: list[str], minutes: int = 30) -> str:
    """Plan a meeting on a day with some people."""
    names = ", ".join(attendees)
    return f"Meeting on {day.strftime('%A %d %B %Y')} for {minutes} minutes with {names}"


@server.tool()
def tag_items(items: list[dict[str, int]] | str) -> str:
    """Tag items given as a list of name->count objects, or as one word."""
    return f"tagged {items!r}"


@server.tool()
def token_length(variable: str) -> str:
    """How long an environment variable of the server is (never its value)."""
    value = os.environ.get(variable)
    return f"{variable} has {len(value)} characters" if value else f"{variable} is not set"


@server.tool()
def stall(seconds: float) -> str:
    """Take this long to answer."""
    time.sleep(seconds)
    return "finally"


@server.tool()
def crash() -> str:
    """End the server process at once."""
    os._exit(3)


@server.tool()
def babble() -> str:
    """Write garbage on the protocol stream, then hang."""
    os.write(1, b"this is not JSON-RPC\n")
    time.sleep(3600)
    return "never"


if __name__ == "__main__":
    if os.environ.get("SAMPLE_PID_FILE"):  # lets a test check that the process has ended
        with open(os.environ["SAMPLE_PID_FILE"], "w", encoding="utf-8") as pid_file:
            pid_file.write(str(os.getpid()))
    if len(sys.argv) == 3 and sys.argv[1] == "--http":
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        server.run()
