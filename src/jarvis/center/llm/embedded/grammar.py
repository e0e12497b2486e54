"""OpenAI tool schemas -> a GBNF grammar (llama.cpp) that only admits valid tool calls.

The grammar covers one tool call as Qwen2.5 writes it between `<tool_call>` tags:

    {"name": "<tool>", "arguments": {<args in schema order>}}\n

Choices made here, and mirrored exactly by the decoder (`decoder.py`), which walks the
same structure to batch the tokens the grammar forces:

- separators are `", "` and `": "`, the spacing of `json.dumps` and of the chat template,
  so the output looks like the calls the model was trained on;
- object keys come in schema order, required ones always, optional ones may be skipped;
  a fixed order makes most keys forced text instead of sampled text;
- `format` date / date-time / time / duration become constrained strings matching the
  center's strict wire rules (date-time needs seconds and an offset);
- enums and consts are an alternation of their JSON literals;
- arrays hold at most `maxItems`, else `MAX_ARRAY_ITEMS`, items.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

# Primitive rules shared by every grammar; names are prefixed to avoid clashes with tools.
_PRIMITIVES: dict[str, str] = {
    "j-char": r'[^"\\\x7F\x00-\x1F] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})',
    "j-string": r'"\"" j-char* "\""',
    "j-integer": r'"-"? ("0" | [1-9] [0-9]{0,15})',
    "j-number": r'j-integer ("." [0-9]{1,15})? ([eE] [-+]? [0-9]{1,3})?',
    "j-boolean": r'"true" | "false"',
    "j-null": r'"null"',
    "j-value": "j-object | j-array | j-string | j-number | j-boolean | j-null",
    "j-object": r'"{" (j-string ": " j-value (", " j-string ": " j-value)*)? "}"',
    "j-array": r'"[" (j-value (", " j-value)*)? "]"',
    "f-date": r'[0-9]{4} "-" ("0" [1-9] | "1" [0-2]) "-" ("0" [1-9] | [12] [0-9] | "3" [01])',
    "f-hhmm": r'([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9]',
    "f-offset": r'"Z" | [+-] ([01] [0-9] | "2" [0-3]) ":" [0-5] [0-9]',
    "f-date-string": r'"\"" f-date "\""',
    "f-datetime-string": (
        r'"\"" f-date "T" f-hhmm ":" [0-5] [0-9] ("." [0-9]{1,6})? f-offset "\""'
    ),
    "f-time-string": r'"\"" f-hhmm (":" [0-5] [0-9] ("." [0-9]{1,6})?)? f-offset? "\""',
    "f-dur-date": (
        r'[0-9]+ "Y" ([0-9]+ "M" ([0-9]+ "D")?)? | [0-9]+ "M" ([0-9]+ "D")? | [0-9]+ "D"'
    ),
    "f-dur-time": (
        r'[0-9]+ "H" ([0-9]+ "M" ([0-9]+ "S")?)? | [0-9]+ "M" ([0-9]+ "S")? | [0-9]+ "S"'
    ),
    "f-duration-string": (
        r'"\"P" ([0-9]+ "W" | f-dur-date ("T" f-dur-time)? | "T" f-dur-time) "\""'
    ),
}

# Most items of an array without maxItems: more than anyone says in one sentence.
MAX_ARRAY_ITEMS = 12

_FORMAT_RULES = {
    "date": "f-date-string",
    "date-time": "f-datetime-string",
    "time": "f-time-string",
    "duration": "f-duration-string",
}
_TYPE_RULES = {
    "string": "j-string",
    "integer": "j-integer",
    "number": "j-number",
    "boolean": "j-boolean",
    "null": "j-null",
    "object": "j-object",
    "array": "j-array",
}


def array_bounds(schema: dict[str, Any]) -> tuple[int, int]:
    """(1 or 0, most items) of an array schema, as the grammar allows them."""
    # An empty list means the same as leaving the key out, and a small model offered "[]"
    # takes it when unsure; only an explicit minItems 0 allows it.
    min_items = schema.get("minItems", 1)
    # Bounded: a small model unsure when to stop repeats a date until max_tokens.
    max_items = schema.get("maxItems", MAX_ARRAY_ITEMS)
    if not isinstance(max_items, int) or max_items < 1:
        max_items = MAX_ARRAY_ITEMS
    return (1 if not isinstance(min_items, int) or min_items >= 1 else 0), max_items


def gbnf_literal(text: str) -> str:
    """A GBNF string literal for `text` (escapes quotes, backslashes and control chars)."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif ch == "\r":
            out.append("\\r")
        elif ch == "\t":
            out.append("\\t")
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\x{ord(ch):02X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def json_literal(value: Any) -> str:
    """The JSON text of an enum/const value, as the model must write it."""
    return json.dumps(value, ensure_ascii=False)


def ordered_properties(schema: dict[str, Any]) -> list[tuple[str, dict[str, Any], bool]]:
    """(key, schema, required) in schema order: the key order of generated arguments."""
    props = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    return [
        (key, sub if isinstance(sub, dict) else {}, key in required) for key, sub in props.items()
    ]


def is_structured_object(schema: dict[str, Any]) -> bool:
    """An object with declared properties (walked key by key) rather than a free dict."""
    return _schema_type(schema) == "object" and isinstance(schema.get("properties"), dict)


def _schema_type(schema: dict[str, Any]) -> str | None:
    kind = schema.get("type")
    if isinstance(kind, str):
        return kind
    if kind is None and isinstance(schema.get("properties"), dict):
        return "object"
    return None


@dataclass
class GrammarBuilder:
    """Accumulates named rules; identical bodies share one rule."""

    rules: dict[str, str] = field(default_factory=dict)
    _by_body: dict[str, str] = field(default_factory=dict)
    _counter: int = 0

    def rule(self, hint: str, body: str) -> str:
        """Name of a rule with this body, created if new."""
        if body in self._by_body:
            return self._by_body[body]
        self._counter += 1
        safe = "".join(c if c.isalnum() else "-" for c in hint.lower()).strip("-") or "r"
        name = f"{safe[:40]}-{self._counter}"
        self.rules[name] = body
        self._by_body[body] = name
        return name

    def value(self, schema: dict[str, Any], hint: str = "v") -> str:
        """A GBNF expression for a value following `schema` (unknown keywords are ignored)."""
        if not isinstance(schema, dict) or not schema:
            return "j-value"
        if "const" in schema:
            return gbnf_literal(json_literal(schema["const"]))
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            body = " | ".join(gbnf_literal(json_literal(v)) for v in schema["enum"])
            return self.rule(hint + "-enum", body)
        for combinator in ("anyOf", "oneOf"):
            options = schema.get(combinator)
            if isinstance(options, list) and options:
                body = " | ".join(self.value(opt, hint) for opt in options)
                return self.rule(hint + "-any", body)
        kind = schema.get("type")
        if isinstance(kind, list):
            body = " | ".join(self.value({**schema, "type": k}, hint) for k in kind)
            return self.rule(hint + "-types", body)
        kind = _schema_type(schema)
        if kind == "string":
            fmt = schema.get("format")
            return _FORMAT_RULES.get(fmt, "j-string") if isinstance(fmt, str) else "j-string"
        if kind == "array":
            items = schema.get("items")
            if not isinstance(items, dict) or not items:
                return "j-array"
            item = self.value(items, hint + "-item")
            min_items, max_items = array_bounds(schema)
            more = f'(", " {item}){{0,{max_items - 1}}}' if max_items > 1 else ""
            optional = "" if min_items else "?"
            body = f'"[" ({item} {more}){optional} "]"'
            return self.rule(hint + "-array", body)
        if kind == "object":
            if is_structured_object(schema):
                return self.object(schema, hint)
            return "j-object"
        return _TYPE_RULES.get(kind or "", "j-value")

    def object(self, schema: dict[str, Any], hint: str = "obj") -> str:
        """Keys in schema order; a required key is always present, an optional one may not be."""
        props = ordered_properties(schema)
        if not props:
            return gbnf_literal("{}")
        pairs = [
            gbnf_literal(json.dumps(key, ensure_ascii=False) + ": ") + " " + self.value(sub, key)
            for key, sub, _ in props
        ]
        n = len(props)
        # members(i, first): the members from property i on (`first`: none written yet).
        # It may be empty when every property from i on is optional: callers add `?`.
        names: dict[tuple[int, bool], str] = {}

        def ref(i: int, first: bool) -> str:
            if i >= n:
                return ""
            nullable = all(not req for _, _, req in props[i:])
            return names[(i, first)] + ("?" if nullable else "")

        for i in range(n - 1, -1, -1):
            # Skipping keys is an alternative of the rule itself, so only members(0, first)
            # and members(i>0, not first) are ever referenced.
            for first in (True,) if i == 0 else (False,):
                alts = []
                for j in range(i, n):
                    sep = "" if first else gbnf_literal(", ") + " "
                    alts.append(f"{sep}{pairs[j]} {ref(j + 1, False)}".strip())
                    if props[j][2]:  # a required key cannot be skipped
                        break
                tag = "f" if first else ""
                names[(i, first)] = self.rule(f"{hint}-m{i}{tag}", " | ".join(alts))
        return self.rule(hint + "-object", f'"{{" {ref(0, True)} "}}"')

    def render(self, root_body: str) -> str:
        """The full grammar text with `root` and every primitive it may reference."""
        lines = [f"root ::= {root_body}"]
        lines += [f"{name} ::= {body}" for name, body in self.rules.items()]
        lines += [f"{name} ::= {body}" for name, body in _PRIMITIVES.items()]
        return "\n".join(lines) + "\n"


def tool_name(tool: dict[str, Any]) -> str:
    """The function name of an OpenAI tool schema."""
    return str((tool.get("function") or tool).get("name", ""))


def tool_parameters(tool: dict[str, Any]) -> dict[str, Any]:
    """The parameters schema of an OpenAI tool schema ({} when absent)."""
    params = (tool.get("function") or tool).get("parameters")
    return params if isinstance(params, dict) else {}


def arguments_schema(tool: dict[str, Any]) -> dict[str, Any]:
    """The arguments schema, normalised to an object (a tool without parameters takes {})."""
    params = tool_parameters(tool)
    if not params or not is_structured_object(params):
        return {"type": "object", "properties": {}}
    return params


def name_prefix() -> str:
    """Text that opens a call, before the tool name."""
    return '{"name": "'


def name_option(name: str) -> str:
    """Text from the tool name to the arguments value."""
    return json.dumps(name, ensure_ascii=False)[1:] + ', "arguments": '


def tool_call_grammar(tools: list[dict[str, Any]]) -> str:
    """GBNF for one call of any of `tools`, followed by the newline before `</tool_call>`."""
    builder = GrammarBuilder()
    alternatives = []
    for tool in tools:
        name = tool_name(tool)
        args = builder.object(arguments_schema(tool), "a-" + name)
        alternatives.append(f"{gbnf_literal(name_option(name))} {args}")
    calls = builder.rule("call", " | ".join(alternatives))
    return builder.render(f'{gbnf_literal(name_prefix())} {calls} "}}\\n"')


def value_grammar(schema: dict[str, Any]) -> str:
    """GBNF for one JSON value following `schema` (used for `response_schema`)."""
    builder = GrammarBuilder()
    return builder.render(builder.value(schema, "response"))
