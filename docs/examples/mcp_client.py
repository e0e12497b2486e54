"""Talk to `jarvis mcp serve` with the official MCP client: list, call, and a refused value.

    python docs/examples/mcp_client.py

It starts the server itself over stdio (as Claude Desktop or an IDE would), with this
process's environment, so JARVIS_DATA_DIR and the secrets' key settings carry over.
"""

from __future__ import annotations

import asyncio
import os
import sys

import mcp_types as types
from mcp import Client, StdioServerParameters

# The same as running `jarvis mcp serve`, without needing `jarvis` on PATH.
SERVER = StdioServerParameters(command=sys.executable,
                               args=["-m", "jarvis.cli.main", "mcp", "serve"],
                               env=dict(os.environ))


def text_of(result: types.CallToolResult) -> str:
    return " ".join(b.text for b in result.content if isinstance(b, types.TextContent))


async def main() -> None:
    async with Client(SERVER) as client:
        tools = (await client.list_tools()).tools
        print(f"{len(tools)} tools, e.g. {', '.join(sorted(t.name for t in tools)[:4])}")
        product = await client.call_tool(
            "calculate", {"num1": 6, "num2": 7, "operation": "multiply"})
        print("calculate:", text_of(product))
        refused = await client.call_tool(
            "calculate", {"num1": 6, "num2": 7, "operation": "modulo"})
        print("refused:" if refused.is_error else "accepted:", text_of(refused))


if __name__ == "__main__":
    asyncio.run(main())
