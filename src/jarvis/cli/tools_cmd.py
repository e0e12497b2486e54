"""jarvis tools (YAML-declared tools): list them, check a file, call one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from jarvis.paths import data_dir
from jarvis.sdk import CommandContext, RequestInformation
from jarvis.sdk.types import ParamTypeError
from jarvis.sdk.yaml_tools import (
    ExecTool,
    ToolFileError,
    YamlTool,
    load_tool_paths,
    tool_paths_from_env,
)

tools_app = typer.Typer(
    help="Tools declared in YAML files (<data dir>/tools and JARVIS_TOOLS).",
    no_args_is_help=True,
)

PathsOption = Annotated[
    list[Path] | None,
    typer.Option("--path", "-p", help="Also load this tool file or folder (repeatable)."),
]


def register(app: typer.Typer) -> None:
    """Add this part's commands to the main app."""
    app.add_typer(tools_app, name="tools")


def _load(extra: list[Path] | None) -> tuple[list[YamlTool], list[ToolFileError]]:
    return load_tool_paths(tool_paths_from_env(data_dir()) + list(extra or []))


def _print_errors(errors: list[ToolFileError]) -> None:
    for error in errors:
        typer.echo(f"error: {error}", err=True)


@tools_app.command("list")
def list_tools(paths: PathsOption = None) -> None:
    """Show the loaded tools and the files that failed to load."""
    tools, errors = _load(paths)
    if not tools:
        typer.echo("No YAML tools loaded.")
    for tool in tools:
        kind = "exec" if isinstance(tool, ExecTool) else "fn"
        params = ", ".join(
            f"{p.name}: {p.type.name}{'' if p.required else '?'}" for p in tool.parameters
        )
        typer.echo(f"{tool.command_name} [{kind}] ({params})  {tool.source_path}:{tool.line}")
        typer.echo(f"    {tool.description}")
    _print_errors(errors)


@tools_app.command("check")
def check(files: Annotated[list[Path], typer.Argument(help="Tool files or folders.")]) -> None:
    """Validate tool files and print the tool schemas the LLM would see (exit 1 on errors)."""
    tools, errors = load_tool_paths(files)
    schemas = [tool.to_openai_tool_schema() for tool in tools]
    if schemas:
        typer.echo(json.dumps(schemas, indent=2, ensure_ascii=False))
    _print_errors(errors)
    if errors:
        raise typer.Exit(1)
    typer.echo(f"{len(tools)} tool(s) OK.", err=True)


def _parse_arguments(tool: YamlTool, pairs: list[str]) -> dict[str, Any]:
    """key=value pairs -> arguments, each converted with its type's lossless text rules."""
    types = {p.name: p.type for p in tool.parameters}
    arguments: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise typer.BadParameter(f"expected key=value, got '{pair}'")
        ptype = types.get(key)
        try:
            arguments[key] = ptype.from_text(value) if ptype is not None else value
        except ParamTypeError:
            arguments[key] = value  # the pipeline reports it with the parameter's example
    return arguments


@tools_app.command("call")
def call(
    name: Annotated[str, typer.Argument(help="The tool's name.")],
    arguments: Annotated[
        list[str] | None, typer.Argument(help="Arguments as key=value.")
    ] = None,
    paths: PathsOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the whole response.")] = False,
) -> None:
    """Run one tool through the command pipeline and print its result."""
    tools, errors = _load(paths)
    tool = next((t for t in tools if t.command_name == name), None)
    if tool is None:
        _print_errors(errors)
        known = ", ".join(t.command_name for t in tools) or "none"
        typer.echo(f"No tool named '{name}'. Loaded tools: {known}", err=True)
        raise typer.Exit(2)
    tool.bind(CommandContext(data_dir=data_dir()))
    args = tool.post_process_tool_call(_parse_arguments(tool, arguments or []), "")
    response = tool.execute(RequestInformation(voice_command=""), **args)
    if as_json:
        typer.echo(json.dumps(response.model_dump(mode="json"), indent=2, ensure_ascii=False))
    else:
        typer.echo(response.message or "")
    if not response.success:
        raise typer.Exit(1)
