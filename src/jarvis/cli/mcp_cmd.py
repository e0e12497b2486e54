"""jarvis mcp serve: the node's commands as MCP tools, over stdio or streamable HTTP."""

from __future__ import annotations

import logging
import sys
from typing import Annotated

import typer

mcp_app = typer.Typer(
    help="Model Context Protocol: offer this node's commands to MCP clients.",
    no_args_is_help=True,
)


def register(app: typer.Typer) -> None:
    """Add this part's commands to the main app."""
    app.add_typer(mcp_app, name="mcp")


@mcp_app.command("serve")
def serve(
    http: Annotated[
        bool, typer.Option("--http", help="Serve streamable HTTP at /mcp instead of stdio.")
    ] = False,
    host: Annotated[str, typer.Option(help="HTTP address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="HTTP port.")] = 8765,
) -> None:
    """Serve every command of this node (built-in, Python, YAML, MCP servers') as MCP tools."""
    import anyio

    from jarvis.cli.node_cmds import fail
    from jarvis.node.mcp.serve import build_server, http_app, serve_stdio
    from jarvis.node.runtime import open_node
    from jarvis.node.settings import NodeSettings
    from jarvis.node.store import SecretKeyError

    # stdout carries the protocol on stdio: every log line goes to stderr.
    logging.basicConfig(stream=sys.stderr, level=logging.WARNING)
    try:
        settings = NodeSettings.from_env()
        settings.center_url = None  # commands run here; no center is involved
        node = open_node(settings)
    except (ValueError, SecretKeyError) as exc:
        fail(str(exc))
    with node:
        for problem in node.registry.problems:
            print(f"Warning: {problem}", file=sys.stderr)
        server = build_server(node.service)
        if not http:
            anyio.run(serve_stdio, server)
            return
        import uvicorn

        print(f"MCP endpoint: http://{host}:{port}/mcp", file=sys.stderr)
        uvicorn.run(http_app(server, host), host=host, port=port, log_level="warning")
