"""An MCP server's tool as a Jarvis command: mapped parameters, the same pipeline, a deadline.

`execute()` runs as for every command (secrets, required parameters, type and enum
checks, coercion); `validate_call` adds the tool's own JSON schema, so a value the
Jarvis types cannot express is still checked before the server sees it. Whatever the
server does (refuses, hangs, dies, answers garbage) the caller gets a `CommandResponse`.
"""

from __future__ import annotations

import json
from typing import Any, Protocol

import jsonschema
import mcp_types as types

from jarvis.node.mcp.config import McpServerConfig
from jarvis.node.mcp.connection import McpUnavailableError
from jarvis.node.mcp.schema_map import map_input_schema
from jarvis.sdk import (
    CommandResponse,
    IJarvisCommand,
    JarvisParameter,
    JarvisSecret,
    RequestInformation,
    ValidationResult,
)

__all__ = ["McpCaller", "McpToolCommand"]

_MESSAGE_LIMIT = 4000


class McpCaller(Protocol):
    def call(self, server: str, tool: str, arguments: dict[str, Any]) -> types.CallToolResult: ...


class McpToolCommand(IJarvisCommand):
    """One tool of one MCP server, under `name` (the tool's, or namespaced on a clash)."""

    def __init__(self, name: str, tool: types.Tool, server: McpServerConfig,
                 caller: McpCaller) -> None:
        self._name = name
        self.tool = tool
        self.server = server
        self._caller = caller
        self._mapped = map_input_schema(dict(tool.input_schema or {}))
        self._by_name = {m.parameter.name: m for m in self._mapped}
        self._validator = _validator(tool.input_schema)

    @property
    def command_name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        text = self.tool.description or self.tool.title or f"The {self.tool.name} tool"
        return f"{text.strip()} (from the MCP server '{self.server.name}')"

    @property
    def parameters(self) -> list[JarvisParameter]:
        return [m.parameter for m in self._mapped]

    @property
    def required_secrets(self) -> list[JarvisSecret]:
        return self.server.secrets

    def validate_call(self, **kwargs: Any) -> list[ValidationResult]:
        results = super().validate_call(**kwargs)
        if results or self._validator is None:
            return results
        wire, bad = self._to_wire(kwargs, coerced=False)
        if bad:
            return bad
        for error in self._validator.iter_errors(wire):
            results.append(self._schema_failure(error))
        return results[:5]

    def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
        wire, bad = self._to_wire(kwargs, coerced=True)
        if bad:
            return CommandResponse.validation_error(bad)
        try:
            result = self._caller.call(self.server.name, self.tool.name, wire)
        except McpUnavailableError as exc:
            return CommandResponse.error_response(str(exc), {"mcp_server": self.server.name})
        return _response(self.server.name, self.tool.name, result)

    # --- wire form -----------------------------------------------------------------------
    def _to_wire(self, kwargs: dict[str, Any], coerced: bool
                 ) -> tuple[dict[str, Any], list[ValidationResult]]:
        """Arguments under the tool's own names, JSON parameters parsed, dates as text."""
        wire: dict[str, Any] = {}
        bad: list[ValidationResult] = []
        for name, value in kwargs.items():
            mapped = self._by_name.get(name)
            if mapped is None:
                continue
            if mapped.as_json:
                parsed = _parse_json(value)
                if parsed is _INVALID:
                    bad.append(self._failure(mapped.parameter, f"'{name}' is not valid JSON"))
                    continue
                value = parsed
            elif coerced:
                value = mapped.parameter.type.to_wire(value)
            wire[mapped.wire_name] = value
        return wire, bad

    def _schema_failure(self, error: jsonschema.ValidationError) -> ValidationResult:
        wire_name = next((str(p) for p in error.absolute_path), None)
        mapped = next((m for m in self._mapped if m.wire_name == wire_name), None)
        param = mapped.parameter if mapped is not None else None
        name = param.name if param is not None else wire_name
        enum = error.schema.get("enum") if isinstance(error.schema, dict) else None
        return ValidationResult(
            success=False, param_name=name, command_name=self._name,
            message=f"Invalid value for '{name}': {error.message}" if name else error.message,
            valid_values=[str(v) for v in enum] if isinstance(enum, list) else None,
        )


_INVALID = object()


def _parse_json(value: Any) -> Any:
    """A JSON parameter's text parsed; a bare word that is not JSON counts as a string."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        stripped = value.strip()
        return _INVALID if stripped[:1] in ("{", "[") else value


def _validator(schema: Any) -> jsonschema.protocols.Validator | None:
    if not isinstance(schema, dict):
        return None
    try:
        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
    except (jsonschema.SchemaError, jsonschema.exceptions.UnknownType):
        return None  # the Jarvis types still check what they can
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def _response(server: str, tool: str, result: types.CallToolResult) -> CommandResponse:
    """The tool's text (and structured content) as a response the LLM words for the user."""
    texts = [block.text for block in result.content if isinstance(block, types.TextContent)]
    text = "\n".join(t for t in texts if t.strip())[:_MESSAGE_LIMIT]
    context: dict[str, Any] = {"mcp_server": server, "mcp_tool": tool}
    if isinstance(result.structured_content, dict):
        context["result"] = result.structured_content
    if result.is_error:
        why = text or "it gave no reason"
        return CommandResponse.error_response(f"The {tool} tool of {server} failed: {why}", context)
    return CommandResponse.success_response(context, message=text or "Done.", llm_wording=True)
