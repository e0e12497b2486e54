"""A node's registered commands in one shape, whether it sent `available_commands` (with
type strings) or only OpenAI tool definitions."""

from __future__ import annotations

from typing import Any

__all__ = ["commands_of"]


def _from_command(command: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": command.get("command_name"),
        "description": command.get("description") or "",
        "parameters": [
            {"name": p.get("name"), "type": p.get("type", "string"),
             "required": bool(p.get("required")), "description": p.get("description"),
             "enum": p.get("enum_values"), "example": p.get("example")}
            for p in command.get("parameters") or []
        ],
        "examples": [e.get("voice_command") for e in command.get("examples") or []
                     if isinstance(e, dict) and e.get("voice_command")],
    }


def _schema_type(schema: dict[str, Any]) -> str:
    kind = str(schema.get("type", "any"))
    if kind == "array" and isinstance(schema.get("items"), dict):
        return f"array<{_schema_type(schema['items'])}>"
    return f"{kind} ({schema['format']})" if schema.get("format") else kind


def _from_tool(tool: dict[str, Any]) -> dict[str, Any]:
    function = tool.get("function") or tool
    parameters = function.get("parameters") or {}
    required = set(parameters.get("required") or [])
    properties = parameters.get("properties") or {}
    return {
        "name": function.get("name"),
        "description": function.get("description") or "",
        "parameters": [
            {"name": name, "type": _schema_type(schema if isinstance(schema, dict) else {}),
             "required": name in required,
             "description": schema.get("description") if isinstance(schema, dict) else None,
             "enum": schema.get("enum") if isinstance(schema, dict) else None,
             "example": None}
            for name, schema in properties.items()
        ],
        "examples": [],
    }


def commands_of(conversation: dict[str, Any]) -> list[dict[str, Any]]:
    """The commands a stored conversation registered, sorted by name."""
    found = {str(c.get("command_name")): _from_command(c)
             for c in conversation.get("available_commands") or []}
    for tool in conversation.get("client_tools") or []:
        described = _from_tool(tool)
        # A command sent both ways is shown with its richer declaration.
        found.setdefault(str(described["name"]), described)
    return [found[name] for name in sorted(found)]
