"""Turn what a command returned (or raised) into the `ToolResult` the center reads."""

from __future__ import annotations

import json
from typing import Any

from jarvis.protocol import ToolOutput, ToolResult
from jarvis.sdk import CommandResponse, MissingSecretsError

__all__ = [
    "format_missing_packages",
    "format_missing_secrets",
    "format_tool_error",
    "format_tool_result",
    "missing_secrets_message",
]


def _json_safe(value: Any) -> Any:
    """Context data may hold dates or other objects: send what JSON can carry."""
    return json.loads(json.dumps(value, default=str))


def format_tool_result(tool_call_id: str, response: CommandResponse) -> ToolResult:
    """A command's response, validation errors included (the center reads `_validation_error`)."""
    context = _json_safe(response.context_data) if response.context_data else None
    if response.actions:
        context = dict(context or {})
        context["actions"] = [a.model_dump() for a in response.actions]
    return ToolResult(
        tool_call_id=tool_call_id,
        output=ToolOutput(
            success=response.success,
            message=response.message,
            context=context,
            llm_wording=response.llm_wording,
            wait_for_input=response.wait_for_input,
        ),
    )


def format_tool_error(
    tool_call_id: str, error: BaseException | str, command_name: str | None = None
) -> ToolResult:
    """A failure the LLM should see (and may explain), never a crash of the node."""
    if isinstance(error, BaseException):
        detail = str(error) or error.__class__.__name__
        kind = error.__class__.__name__
    else:
        detail, kind = error, "Error"
    where = f"{command_name} failed: " if command_name else ""
    return ToolResult(
        tool_call_id=tool_call_id,
        output=ToolOutput(
            success=False,
            message=f"{where}{detail}",
            context={"error": detail, "error_type": kind},
        ),
    )


def missing_secrets_message(
    error: MissingSecretsError, scopes: dict[str, str] | None = None
) -> str:
    """What the user hears: which setting is missing and the exact command that sets it."""
    keys = error.missing or ["a secret"]
    who = f"The {error.command_name} command" if error.command_name else "This command"
    listed = keys[0] if len(keys) == 1 else ", ".join(keys[:-1]) + f" and {keys[-1]}"
    howto = []
    for key in keys:
        scope = (scopes or {}).get(key, "integration")
        option = f" --scope {scope}" if scope != "integration" else ""
        howto.append(f"jarvis secrets set {key}{option}")
    verb = "set it with" if len(keys) == 1 else "set them with"
    return f"{who} needs {listed}; {verb}: {' and '.join(howto)}"


def format_missing_secrets(
    tool_call_id: str, error: MissingSecretsError, scopes: dict[str, str] | None = None
) -> ToolResult:
    """A failed result whose message tells the user which setting to configure."""
    message = missing_secrets_message(error, scopes)
    return ToolResult(
        tool_call_id=tool_call_id,
        output=ToolOutput(
            success=False,
            message=message,
            context={"error": message, "missing_secrets": list(error.missing)},
        ),
    )


def format_missing_packages(
    tool_call_id: str, message: str, requirements: list[str]
) -> ToolResult:
    """A failed result saying which packages the command lacks and what to do about it."""
    return ToolResult(
        tool_call_id=tool_call_id,
        output=ToolOutput(
            success=False,
            message=message,
            context={"error": message, "missing_packages": list(requirements)},
        ),
    )
