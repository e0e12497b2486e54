"""The `jarvis` command: each part of Jarvis adds its own sub-commands."""

from __future__ import annotations

import typer

from jarvis.cli import mcp_cmd, model_cmd, node_cmds, nodes_cmd, serve_cmd, tools_cmd, voice_cmds

app = typer.Typer(
    name="jarvis",
    help="Jarvis, a private self-hostable voice assistant.",
    no_args_is_help=True,
    add_completion=False,
)

for part in (serve_cmd, nodes_cmd, node_cmds, voice_cmds, model_cmd, tools_cmd, mcp_cmd):
    part.register(app)


if __name__ == "__main__":
    app()
