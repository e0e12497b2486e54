"""Checking the LLM's client tool calls against the declared types, before the node sees them.

Nothing is guessed here: a bad call produces problems, and the engine shows them to
the LLM in a retry message (or, when retries run out, asks the user). The one rewrite
is the command's own: an enum synonym it declared ("next") becomes its value ("skip").
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from jarvis.center.toolspec import ParamSpec, ToolCatalog, ToolSpec
from jarvis.sdk import is_llm_artifact
from jarvis.sdk.parameter import range_problem
from jarvis.sdk.types import show_value

__all__ = ["CallProblem", "check_call", "retry_message"]

_TEMPORAL = {"date", "datetime", "time", "timedelta"}


@dataclass(frozen=True)
class CallProblem:
    """One thing wrong with one tool call; `param` is None when the whole call is bad."""

    tool_call_id: str
    tool_name: str
    param: str | None
    problem: str
    expected: str | None = None
    valid_values: tuple[str, ...] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool_call_id": self.tool_call_id,
            "tool": self.tool_name,
            "parameter": self.param,
            "problem": self.problem,
            "expected": self.expected,
            "valid_values": list(self.valid_values) if self.valid_values else None,
        }

    def line(self) -> str:
        """One line of the retry message."""
        if self.param is None:
            return f"- {self.tool_name}: {self.problem}"
        text = f"- {self.tool_name}, parameter '{self.param}': {self.problem}"
        if self.expected:
            text += f". Expected format: {self.expected}"
        if self.valid_values:
            text += f". Valid values: {', '.join(self.valid_values)}"
        return text


def _enum_text(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def _check_param(spec: ParamSpec, value: Any) -> tuple[str, str | None] | None:
    """(problem, expected) for a present value, or None when it is fine."""
    if spec.type is not None:
        problem = spec.type.check(value)
        if problem:
            return problem, spec.type.describe()
    candidates = value if isinstance(value, list) else [value]
    if spec.enum is not None:
        for candidate in candidates:
            if _enum_text(candidate) not in spec.enum and str(candidate) not in spec.enum:
                return f"'{candidate}' is not one of the valid values", None
    for candidate in candidates:
        problem = range_problem(candidate, spec.minimum, spec.maximum)
        if problem:
            return problem, _range_text(spec)
    return None


def _range_text(spec: ParamSpec) -> str:
    """ "a number from 0 to 100", "a number of at least 1"."""
    low, high = (show_value(b) if b is not None else None for b in (spec.minimum, spec.maximum))
    if low is not None and high is not None:
        return f"a number from {low} to {high}"
    return f"a number of at least {low}" if low is not None else f"a number of at most {high}"


def _declared_value(spec: ParamSpec, value: Any) -> Any:
    """`value` with any declared synonym of an enum value replaced by that value."""
    if not spec.synonyms or spec.enum is None:
        return value
    if isinstance(value, list):
        return [_declared_value(spec, item) for item in value]
    if not isinstance(value, str) or value in spec.enum:
        return value
    said = value.strip().lower()
    owners = [v for v, words in spec.synonyms.items() if said in (w.lower() for w in words)]
    return owners[0] if len(owners) == 1 else value


def check_call(
    call_id: str, name: str, arguments: str, catalog: ToolCatalog
) -> tuple[dict[str, Any] | None, list[CallProblem]]:
    """Parse and check one client tool call: (arguments or None, problems)."""
    tool: ToolSpec | None = catalog.tools.get(name)
    if tool is None:
        known = ", ".join(sorted(catalog.tools)) or "none"
        problem = f"there is no tool '{name}'; tools: {known}"
        return None, [CallProblem(call_id, name, None, problem)]
    try:
        args = json.loads(arguments) if arguments and arguments.strip() else {}
    except json.JSONDecodeError as exc:
        return None, [
            CallProblem(call_id, name, None, f"the arguments are not valid JSON ({exc.msg})")
        ]
    if not isinstance(args, dict):
        return None, [CallProblem(call_id, name, None, "the arguments must be a JSON object")]
    problems: list[CallProblem] = []
    for spec in tool.params.values():
        value = args.get(spec.name)
        expected = spec.type.describe() if spec.type is not None else None
        if value is None:
            if spec.required:
                problems.append(
                    CallProblem(call_id, name, spec.name, "this required parameter is missing",
                                expected, spec.enum)
                )
            continue
        # Placeholders such as "none" for an optional parameter just mean "left out".
        if not spec.required and is_llm_artifact(value):
            continue
        if spec.required and isinstance(value, str) and not value.strip():
            problems.append(
                CallProblem(call_id, name, spec.name, "this required parameter is empty",
                            expected, spec.enum)
            )
            continue
        value = args[spec.name] = _declared_value(spec, value)
        found = _check_param(spec, value)
        if found is not None:
            problem, expected_text = found
            problems.append(
                CallProblem(call_id, name, spec.name, problem, expected_text or expected, spec.enum)
            )
    return (args if not problems else None), problems


def retry_message(problems: list[CallProblem], catalog: ToolCatalog, attempt: int) -> str:
    """The system message that asks the LLM to call again with corrected arguments."""
    lines = [
        f"Your tool call was invalid and was NOT run (attempt {attempt}). "
        "Call the tool again with corrected arguments:",
        *(p.line() for p in problems),
    ]
    temporal = False
    for p in problems:
        tool = catalog.tools.get(p.tool_name)
        spec = tool.params.get(p.param) if tool and p.param else None
        if spec is not None and spec.type is not None:
            kind = spec.type.item.kind if spec.type.is_array and spec.type.item else spec.type.kind
            temporal = temporal or kind in _TEMPORAL
    if temporal:
        lines.append(
            "Use absolute values: copy them from the resolved dates table, or call "
            "resolve_relative_date with the user's phrase first."
        )
    lines.append("If you cannot know a value, call ask_user with a short question instead.")
    return "\n".join(lines)
