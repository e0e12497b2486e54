"""MCP both ways: the node's commands as MCP tools, and MCP servers' tools as commands.

`config` reads the server list, `schema_map` maps a tool's JSON schema onto Jarvis
parameters, `connection` keeps one server alive, `hub` runs the connections on a
background loop, `tool_command` is a tool as a command, `tool_cache` remembers each
server's tools, `loader` registers them, and `serve` offers a registry's commands to MCP
clients.
"""

from jarvis.node.mcp.config import (
    McpConfigError,
    McpServerConfig,
    SecretRef,
    load_mcp_config,
)
from jarvis.node.mcp.connection import Backoff, McpUnavailableError
from jarvis.node.mcp.hub import McpHub
from jarvis.node.mcp.loader import add_mcp_commands
from jarvis.node.mcp.tool_command import McpToolCommand

__all__ = [
    "Backoff",
    "McpConfigError",
    "McpHub",
    "McpServerConfig",
    "McpToolCommand",
    "McpUnavailableError",
    "SecretRef",
    "add_mcp_commands",
    "load_mcp_config",
]
