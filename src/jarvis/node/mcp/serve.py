"""The node's commands offered to MCP clients (Claude Desktop, IDEs, agent frameworks).

Each command is a tool whose input schema is the command's own JSON schema (the one the
center sees: YAML overrides are not parameters, secrets are never parameters). A call
runs through `CommandExecutionService.run_command`, the node's `execute()` path; the
answer's message is the tool's text and its context the structured content. A refused
value is a tool error naming the parameter and the values it may take.
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server
from mcp.server.stdio import stdio_server
from starlette.applications import Starlette

from jarvis.node.service import CommandExecutionService
from jarvis.protocol import ToolOutput
from jarvis.sdk import IJarvisCommand

__all__ = ["build_server", "http_app", "serve_stdio", "tool_of", "tool_result"]

log = logging.getLogger(__name__)

SERVER_NAME = "jarvis"


def tool_of(command: IJarvisCommand) -> types.Tool:
    """The MCP tool of a command: its name, description and parameters' JSON schema."""
    function = command.to_openai_tool_schema()["function"]
    return types.Tool(name=function["name"], description=function["description"],
                      input_schema=function["parameters"])


def tool_result(output: ToolOutput) -> types.CallToolResult:
    """A command's answer as an MCP result; a failure is a tool error the model can read."""
    text = output.message or ("Done." if output.success else "The command failed.")
    if not output.success:
        text = _with_valid_values(text, output.context or {})
    context = {k: v for k, v in (output.context or {}).items() if not k.startswith("_")}
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        structured_content=context or None,
        is_error=not output.success,
    )


def _with_valid_values(text: str, context: dict[str, Any]) -> str:
    """Append each refused parameter's valid values, unless the message already lists them."""
    extra = []
    for error in context.get("errors") or []:
        values = error.get("valid_values") if isinstance(error, dict) else None
        if values and not all(str(v) in text for v in values):
            shown = ", ".join(str(v) for v in values)
            extra.append(f"Valid values for '{error.get('param_name')}': {shown}.")
    return " ".join([text.rstrip(), *extra]) if extra else text


def build_server(service: CommandExecutionService) -> Server[Any]:
    """An MCP server listing the service's commands and running them one at a time."""
    one_at_a_time = anyio.CapacityLimiter(1)  # commands are written for one caller at a time

    async def list_tools(ctx: Any, params: Any) -> types.ListToolsResult:
        tools = []
        for command in service.registry:
            try:
                tools.append(tool_of(command))
            except Exception as exc:  # one broken schema must not hide the other commands
                log.warning("not offered over MCP: %s: %s", command.command_name, exc)
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        arguments = dict(params.arguments or {})
        result = await anyio.to_thread.run_sync(
            service.run_command, params.name, arguments, limiter=one_at_a_time)
        return tool_result(result.output)

    return Server(SERVER_NAME, on_list_tools=list_tools, on_call_tool=call_tool,
                  instructions="Jarvis voice-assistant commands of this node.")


async def serve_stdio(server: Server[Any]) -> None:
    """Serve one client on stdin/stdout until it disconnects."""
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def http_app(server: Server[Any], host: str = "127.0.0.1") -> Starlette:
    """The streamable HTTP app (path `/mcp`); serve it with uvicorn."""
    return server.streamable_http_app(host=host)
