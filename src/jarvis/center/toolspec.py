"""What the center knows about a conversation's client tools: names, parameter types, enums.

Built from `available_commands` (type strings such as `array<datetime>`) when the node
sends them, else derived from the OpenAI JSON schemas in `client_tools`. Parsed once per
distinct tool set and cached, so requests never re-parse their tools.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any

from jarvis.protocol.models import MAX_TOOLS, TOOL_NAME_PATTERN
from jarvis.sdk import ParamType, parse_type

__all__ = [
    "MAX_SCHEMA_DEPTH", "ParamSpec", "ToolCatalog", "ToolSpec", "build_catalog", "catalog_for",
    "type_from_schema",
]

# Nesting levels of one tool's `parameters` schema: objects of arrays of objects fit in a
# few; more only inflates the prompt (the body's own limit is 64 levels).
MAX_SCHEMA_DEPTH = 12
_TOOL_NAME = re.compile(TOOL_NAME_PATTERN)

_FORMAT_KINDS = {"date": "date", "date-time": "datetime", "time": "time", "duration": "timedelta"}
_JSON_KINDS = {"integer": "int", "number": "float", "boolean": "bool", "object": "dict"}


@dataclass(frozen=True)
class ParamSpec:
    """One parameter: its type (None: any JSON value), whether it is required, its enum."""

    name: str
    type: ParamType | None
    required: bool = False
    enum: tuple[str, ...] | None = None
    description: str | None = None
    example: Any = None
    # Enum value -> the words people say for it (`JarvisParameter.enum_synonyms`).
    synonyms: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # A follow-up may change just this value of the last call (`"_refinable": true`).
    refinable: bool = False
    # Bounds of a number, or of each number of an array (JSON schema's minimum/maximum).
    minimum: float | None = None
    maximum: float | None = None


@dataclass(frozen=True)
class ToolSpec:
    """One client tool as the center validates it."""

    name: str
    description: str
    params: dict[str, ParamSpec]
    schema: dict[str, Any]
    # The `get_command_schema()` form when the node sent it (examples, rules, ...).
    command: dict[str, Any] | None = None

    @property
    def parameters(self) -> dict[str, Any]:
        """The tool's `parameters` JSON schema ({} when it declares none)."""
        return self.schema.get("function", self.schema).get("parameters") or {}

    @property
    def example_calls(self) -> list[tuple[str, dict[str, Any]]]:
        """The command's examples, in order: each request ("" where one gives none) and
        the values it expects ({} where it gives none)."""
        examples = (self.command or {}).get("examples") or []
        return [(str(e.get("voice_command") or "").strip(), _expected_values(e))
                for e in examples if isinstance(e, dict)]

    @property
    def keywords(self) -> list[str]:
        """The routing keywords the command declares (none for a plain tool)."""
        return [str(k) for k in (self.command or {}).get("keywords") or []]

    @property
    def example_requests(self) -> list[str]:
        """The requests of the command's examples, in order ("" where one gives none)."""
        return [request for request, _ in self.example_calls]


def _expected_values(example: dict[str, Any]) -> dict[str, Any]:
    values = example.get("expected_parameters")
    return values if isinstance(values, dict) else {}


@dataclass
class ToolCatalog:
    """Every client tool of a conversation."""

    tools: dict[str, ToolSpec] = field(default_factory=dict)

    @property
    def openai_tools(self) -> list[dict[str, Any]]:
        return [t.schema for t in self.tools.values()]


def type_from_schema(schema: dict[str, Any]) -> ParamType | None:
    """A JSON schema property -> ParamType; None when it has no usable type."""
    kind = schema.get("type")
    if isinstance(kind, list):
        kinds = [k for k in kind if k != "null"]
        kind = kinds[0] if len(kinds) == 1 else None
    if not isinstance(kind, str):
        return None
    if kind == "string":
        return parse_type(_FORMAT_KINDS.get(str(schema.get("format", "")), "string"))
    if kind in _JSON_KINDS:
        return parse_type(_JSON_KINDS[kind])
    if kind == "array":
        items = schema.get("items")
        item = type_from_schema(items) if isinstance(items, dict) else None
        if item is None or item.is_array or item.kind == "dict":
            return parse_type("array")
        return parse_type(f"array<{item.kind}>")
    return None


def _checked_name(name: Any, where: str) -> str:
    """A tool name the LLM can call (OpenAI's rule: letters, digits, _ and -, 1-64)."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"every client tool needs {where}")
    if not _TOOL_NAME.fullmatch(name):
        shown = name if len(name) <= 64 else name[:64] + "..."
        raise ValueError(
            f"tool name {shown!r} must be 1-64 letters, digits, '_' or '-' ({where})")
    return name


def _depth(value: Any) -> int:
    """Nesting levels of objects and arrays in `value` (a scalar is 0), without recursion."""
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(
            item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level + 1)
        stack.extend((child, level + 1) for child in children)
    return deepest


def _function_of(tool: dict[str, Any]) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """The tool's name, function object and parameters schema, each checked for its shape."""
    function = tool.get("function")
    function = tool if function is None else function
    if not isinstance(function, dict):
        raise ValueError("a client tool's function must be an object")
    name = _checked_name(function.get("name"), "function.name")
    if not isinstance(function.get("description", ""), str | None):
        raise ValueError(f"tool '{name}': description must be text")
    parameters = function.get("parameters") or {}
    if not isinstance(parameters, dict):
        raise ValueError(f"tool '{name}': parameters must be a JSON schema object")
    if _depth(parameters) > MAX_SCHEMA_DEPTH:
        raise ValueError(
            f"tool '{name}': parameters are nested deeper than {MAX_SCHEMA_DEPTH} levels")
    if not isinstance(parameters.get("properties") or {}, dict):
        raise ValueError(f"tool '{name}': parameters.properties must be an object")
    required = parameters.get("required") or []
    if not isinstance(required, list) or not all(isinstance(r, str) for r in required):
        raise ValueError(f"tool '{name}': parameters.required must be a list of names")
    return name, function, parameters


def _spec_from_schema(tool: dict[str, Any]) -> ToolSpec:
    name, function, parameters = _function_of(tool)
    properties = parameters.get("properties") or {}
    required = set(parameters.get("required") or [])
    params: dict[str, ParamSpec] = {}
    for pname, pschema in properties.items():
        pschema = pschema if isinstance(pschema, dict) else {}
        enum = pschema.get("enum")
        if enum is None and isinstance(pschema.get("items"), dict):
            enum = pschema["items"].get("enum")
        description = pschema.get("description")
        params[pname] = ParamSpec(
            name=pname,
            type=type_from_schema(pschema),
            required=pname in required,
            enum=tuple(_enum_text(v) for v in enum) if isinstance(enum, list) else None,
            description=description if isinstance(description, str) else None,
            refinable=pschema.get("_refinable") is True,
            **_bounds(pschema.get("items") if pschema.get("type") == "array" else pschema),
        )
    schema = {"type": "function", "function": dict(function)}
    return ToolSpec(name, str(function.get("description") or ""), params, schema)


def _bounds(schema: Any) -> dict[str, float]:
    """The numeric `minimum` / `maximum` of a schema (or of a command's parameter); a bound
    that is no number is ignored, as an unknown keyword would be."""
    if not isinstance(schema, dict):
        return {}
    return {key: schema[key] for key in ("minimum", "maximum")
            if isinstance(schema.get(key), int | float) and not isinstance(schema[key], bool)}


def _enum_text(value: Any) -> str:
    """Enums are compared as strings; JSON booleans as true/false."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _synonyms(declared: Any, enum: list[Any] | None) -> dict[str, tuple[str, ...]]:
    """The declared synonyms of enum values that exist; anything malformed is ignored."""
    if not isinstance(declared, dict) or enum is None:
        return {}
    values = {_enum_text(v) for v in enum}
    return {str(value): tuple(str(w) for w in said)
            for value, said in declared.items()
            if str(value) in values and isinstance(said, list) and said}


def _spec_from_command(command: dict[str, Any], schema: dict[str, Any] | None) -> ToolSpec:
    name = command["command_name"]
    params: dict[str, ParamSpec] = {}
    properties: dict[str, Any] = {}
    for p in command.get("parameters") or []:
        try:
            ptype = parse_type(p.get("type") or "string")
        except ValueError as exc:
            raise ValueError(f"command '{name}', parameter '{p.get('name')}': {exc}") from exc
        enum = p.get("enum_values")
        params[p["name"]] = ParamSpec(
            name=p["name"],
            type=ptype,
            required=bool(p.get("required")),
            enum=tuple(_enum_text(v) for v in enum) if enum is not None else None,
            description=p.get("description"),
            example=p.get("example"),
            synonyms=_synonyms(p.get("enum_synonyms"), enum),
            refinable=p.get("refinable") is True,
            **_bounds(p),
        )
        prop = dict(ptype.json_schema())
        (prop.setdefault("items", {}) if ptype.is_array else prop).update(_bounds(p))
        if p.get("description"):
            prop["description"] = p["description"]
        if enum is not None:
            if ptype.is_array:
                prop.setdefault("items", {})["enum"] = [str(v) for v in enum]
            else:
                prop["enum"] = [str(v) for v in enum]
        if p.get("refinable") is True:
            prop["_refinable"] = True
        properties[p["name"]] = prop
    if schema is None:
        schema = {
            "type": "function",
            "function": {
                "name": name,
                "description": command.get("description") or "",
                "parameters": {
                    "type": "object",
                    "properties": properties,
                    "required": [n for n, s in params.items() if s.required],
                },
            },
        }
    return ToolSpec(name, str(command.get("description") or ""), params, schema, command)


def build_catalog(
    client_tools: list[dict[str, Any]], available_commands: list[dict[str, Any]] | None
) -> ToolCatalog:
    """Parse a conversation's tools; raises ValueError naming the first bad one."""
    by_name: dict[str, ToolSpec] = {}
    for tool in client_tools:
        if not isinstance(tool, dict):
            raise ValueError("every client tool must be an object")
        spec = _spec_from_schema(tool)
        by_name[spec.name] = spec
    for command in available_commands or []:
        name = _checked_name(command.get("command_name"), "command_name")
        existing = by_name.get(name)
        by_name[name] = _spec_from_command(command, existing.schema if existing else None)
    if len(by_name) > MAX_TOOLS:
        raise ValueError(f"{len(by_name)} tools; a conversation has at most {MAX_TOOLS}")
    return ToolCatalog(by_name)


_cache: OrderedDict[str, ToolCatalog] = OrderedDict()
_cache_lock = threading.Lock()


def catalog_for(
    key: str, client_tools: list[dict[str, Any]], available_commands: list[dict[str, Any]] | None
) -> ToolCatalog:
    """`build_catalog`, cached by `key` (the tools' JSON text)."""
    with _cache_lock:
        found = _cache.get(key)
        if found is not None:
            _cache.move_to_end(key)
            return found
    catalog = build_catalog(client_tools, available_commands)
    with _cache_lock:
        _cache[key] = catalog
        while len(_cache) > 256:
            _cache.popitem(last=False)
    return catalog

