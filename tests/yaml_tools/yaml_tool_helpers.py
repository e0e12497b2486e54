"""Shared by the YAML tools tests."""

from __future__ import annotations

from typing import Any

from jarvis.sdk import CommandResponse, RequestInformation
from jarvis.sdk.yaml_tools import YamlTool


def call(tool: YamlTool, **arguments: Any) -> CommandResponse:
    """Run a tool the way the node does: post_process_tool_call, then execute."""
    args = tool.post_process_tool_call(dict(arguments), "")
    return tool.execute(RequestInformation(voice_command="test"), **args)


def error_params(response: CommandResponse) -> list[str]:
    """The parameter names a validation error complains about."""
    assert response.is_validation_error, response
    return [e["param_name"] for e in response.context_data["errors"]]
