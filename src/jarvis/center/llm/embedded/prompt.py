"""The prompt text, rendered with the chat template stored in the GGUF file.

Qwen2.5's template puts the tool schemas in the system turn (`<tools>` ... `</tools>`)
and expects calls as `<tool_call>{"name": .., "arguments": {..}}</tool_call>`; using the
model's own template keeps the prompt identical to what it was trained on.
"""

from __future__ import annotations

import json
import re
from datetime import datetime
from typing import Any

from jinja2.sandbox import ImmutableSandboxedEnvironment

# Turn markers a message must not smuggle in (they would end the turn early).
_CONTROL_MARKERS = ("<|im_start|>", "<|im_end|>", "<|endoftext|>")


def _tojson(value: Any, indent: int | None = None) -> str:
    # Like Hugging Face's template filter: keep key order and non-ASCII text as-is
    # (jinja2's own tojson sorts keys and HTML-escapes, which the model never saw).
    return json.dumps(value, ensure_ascii=False, indent=indent)


def _raise(message: str) -> None:
    raise ValueError(message)


def _clean(text: str) -> str:
    for marker in _CONTROL_MARKERS:
        text = text.replace(marker, "")
    return text


def normalize_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """OpenAI messages -> what the template expects.

    Tool-call arguments become objects (the template serialises them itself), missing
    content becomes "", non-string tool results become JSON, control markers are removed.
    """
    out: list[dict[str, Any]] = []
    for message in messages:
        msg = dict(message)
        content = msg.get("content")
        if content is None:
            content = ""
        elif isinstance(content, list):  # OpenAI content parts: keep the text ones
            content = "".join(
                str(part.get("text", "")) for part in content if isinstance(part, dict)
            )
        elif not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False)
        msg["content"] = _clean(content)
        if msg.get("tool_calls"):
            calls = []
            for call in msg["tool_calls"]:
                function = dict(call.get("function") or call)
                arguments = function.get("arguments")
                if isinstance(arguments, str):
                    try:
                        function["arguments"] = json.loads(arguments) if arguments else {}
                    except json.JSONDecodeError:
                        function["arguments"] = arguments
                calls.append({**call, "function": function})
            msg["tool_calls"] = calls
        out.append(msg)
    return out


_EXAMPLE_TAIL = re.compile(r"\s*(?:Example|e\.g\.)\s*:?.*$", re.IGNORECASE | re.DOTALL)


# How much of a parameter's description the compact prompt shows.
DESCRIPTION_LIMIT = 70


def first_clause(text: str, limit: int = DESCRIPTION_LIMIT) -> str:
    """The part of a description the compact prompt shows: up to the first "; ", " (" or
    ". ", examples removed, at most `limit` characters."""
    text = _EXAMPLE_TAIL.sub("", " ".join(str(text).split()))
    text = re.split(r"; | \(|\. ", text, maxsplit=1)[0].rstrip(" .;,")
    return text if len(text) <= limit else text[:limit].rsplit(" ", 1)[0]


def _slim_schema(schema: dict[str, Any], limit: int) -> dict[str, Any]:
    keep = ("type", "enum", "const", "format", "items", "properties", "required",
            "minimum", "maximum")
    out: dict[str, Any] = {}
    for key in keep:
        if key not in schema:
            continue
        value = schema[key]
        if key == "items" and isinstance(value, dict):
            value = _slim_schema(value, limit)
        elif key == "properties" and isinstance(value, dict):
            value = {k: _slim_schema(v, limit) if isinstance(v, dict) else v
                     for k, v in value.items()}
        out[key] = value
    if schema.get("description") and limit > 0:
        out["description"] = first_clause(schema["description"], limit)
    if "anyOf" in schema or "oneOf" in schema:  # rare; show them whole rather than wrong
        return dict(schema)
    return out


def slim_tools(
    tools: list[dict[str, Any]], param_limit: int = DESCRIPTION_LIMIT
) -> list[dict[str, Any]]:
    """The tool schemas as the prompt shows them in the compact style.

    Same JSON shape the model was trained on (so it still reads them well), but parameter
    descriptions cut to their first clause without examples (a model copies an example
    such as 'Paris, France' into calls), and keywords that do not help it choose dropped.
    The grammar still uses the full schemas.
    """
    slim: list[dict[str, Any]] = []
    for tool in tools:
        function = tool.get("function", tool)
        entry: dict[str, Any] = {"name": function.get("name")}
        if function.get("description"):
            entry["description"] = " ".join(str(function["description"]).split())
        params = function.get("parameters")
        if isinstance(params, dict):
            entry["parameters"] = _slim_schema(params, param_limit)
        slim.append({"type": "function", "function": entry})
    return slim


# The Hermes tool section Qwen2.5 was trained on, around one entry per tool (the signature
# format and FALLBACK_TEMPLATE both write it).
TOOLS_HEADER = (
    "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\n"
    "You are provided with function signatures within <tools></tools> XML tags:\n<tools>"
)
TOOLS_FOOTER = (
    "\n</tools>\n\nFor each function call, return a json object with function name and "
    "arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n"
    '{"name": <function-name>, "arguments": <args-json-object>}\n</tool_call>'
)


def _type_text(schema: dict[str, Any]) -> str:
    """A parameter's type as a signature writes it: `"a" | "b"`, `int`, `datetime[]`."""
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return " | ".join(json.dumps(v, ensure_ascii=False) for v in schema["enum"])
    kind = schema.get("type")
    if kind == "array":
        items = schema.get("items")
        return (_type_text(items) if isinstance(items, dict) else "any") + "[]"
    if kind == "string" and schema.get("format") in ("date", "date-time", "time", "duration"):
        return "datetime" if schema["format"] == "date-time" else str(schema["format"])
    names = {"integer": "int", "number": "float", "boolean": "bool", "string": "str",
             "object": "dict"}
    return names.get(str(kind), "any")


def tool_signature(tool: dict[str, Any], param_limit: int = DESCRIPTION_LIMIT) -> str:
    """One tool as a line of Python-like signature and its description.

    A third of the tokens of the JSON schema: on 2 cores every prompt token slows every
    request (attention reads them all), and a coder model reads signatures fluently.
    Optional parameters get `= None`; each parameter's short description follows.
    """
    function = tool.get("function", tool)
    params = function.get("parameters") if isinstance(function.get("parameters"), dict) else {}
    required = set(params.get("required") or [])
    args, notes = [], []
    for name, schema in (params.get("properties") or {}).items():
        schema = schema if isinstance(schema, dict) else {}
        text = f"{name}: {_type_text(schema)}"
        args.append(text if name in required else text + " = None")
        if schema.get("description") and param_limit > 0:
            notes.append(f"{name}: {first_clause(schema['description'], param_limit)}.")
    description = " ".join(str(function.get("description") or "").split())
    return " ".join([f"{function.get('name')}({', '.join(args)})", "-", description, *notes])


def with_tool_signatures(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """`messages` with the tool section, signatures inside, ending the first system message.

    Rendered with no tools, this gives the template's own layout with shorter entries.
    """
    section = TOOLS_HEADER + "".join("\n" + tool_signature(t) for t in tools) + TOOLS_FOOTER
    if messages and messages[0].get("role") == "system":
        first = messages[0]
        return [{**first, "content": str(first.get("content") or "") + section}, *messages[1:]]
    return [{"role": "system", "content": section.lstrip("\n")}, *messages]


class ChatPrompt:
    """Renders messages + tools with a Jinja chat template (HF semantics)."""

    def __init__(self, template: str, bos_token: str = "", eos_token: str = "") -> None:
        env = ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True)
        env.filters["tojson"] = _tojson
        env.globals["raise_exception"] = _raise
        env.globals["strftime_now"] = lambda fmt: datetime.now().strftime(fmt)
        self._template = env.from_string(template)
        self._bos = bos_token
        self._eos = eos_token

    def render(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        *,
        add_generation_prompt: bool,
    ) -> str:
        return self._template.render(
            messages=normalize_messages(messages),
            tools=tools or None,
            add_generation_prompt=add_generation_prompt,
            bos_token=self._bos,
            eos_token=self._eos,
        )

    def system_prefix(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> str:
        """The rendered leading system turns (with the tools): what a conversation shares.

        Every system message before the first other message counts (the center puts the
        stable prompt and the day's dates there); a final system message never does.

        Empty when the conversation has no system message, or when the template does not
        render it as a plain prefix of the full prompt.
        """
        lead = 0
        while lead < len(messages) - 1 and messages[lead].get("role") == "system":
            lead += 1
        if lead == 0:
            return ""
        return self.render(messages[:lead], tools, add_generation_prompt=False)


# Used when a GGUF carries no template: ChatML with Hermes-style tools, which is what
# Qwen2.5 expects and what the decoder produces.
FALLBACK_TEMPLATE = r"""
{%- set sys = messages[0].content if messages and messages[0].role == 'system' else '' -%}
<|im_start|>system
{{ sys }}
{%- if tools -%}
{{ """ + json.dumps(TOOLS_HEADER) + r""" }}
{%- for tool in tools %}{{ "\n" + (tool | tojson) }}{% endfor -%}
{{ """ + json.dumps(TOOLS_FOOTER) + r""" }}
{%- endif %}<|im_end|>
{% for m in messages -%}
{%- if loop.first and m.role == 'system' -%}
{%- elif m.role == 'tool' -%}
<|im_start|>user
<tool_response>
{{ m.content }}
</tool_response><|im_end|>
{% elif m.tool_calls -%}
<|im_start|>assistant
{%- if m.content %}

{{ m.content }}
{%- endif %}
{%- for c in m.tool_calls %}

<tool_call>
{"name": "{{ c.function.name }}", "arguments": {{ c.function.arguments | tojson }}}
</tool_call>
{%- endfor %}<|im_end|>
{% else -%}
<|im_start|>{{ m.role }}
{{ m.content }}<|im_end|>
{% endif -%}
{%- endfor -%}
{%- if add_generation_prompt %}<|im_start|>assistant
{% endif -%}
"""
