"""The argv template of an exec tool: parsed once at load time, rendered for every call.

An exec template is a list. Its first element is the program (plain text, no placeholder).
Every other element is one of:

- a string, e.g. `"{path}"` or `"--format={fmt}"`: exactly one argv element;
- a group, a nested list such as `["--limit", "{limit}"]`: its elements are kept or dropped
  together;
- a conditional, a mapping `{when: verbose, args: ["-l"]}`: `args` are added only when the
  parameter `verbose` has a true value (for a bool) or any value (for other types).

A string or group is dropped when any placeholder in it has no value (an optional
parameter the caller left out and that has no default). A string that is exactly one
placeholder of a list parameter becomes one argv element per item; elsewhere lists and
objects are written as JSON. Values are never split, globbed or read by a shell.

Option smuggling: a caller's value that would begin an argv element with "-" is refused,
unless the parameter says `allow_dash: true` or the element follows a literal "--".
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any

from jarvis.sdk.types import ParamType
from jarvis.sdk.yaml_tools.template import Placeholder, TemplateError, parse_template

__all__ = [
    "ArgvError",
    "ArgvTemplate",
    "Conditional",
    "Element",
    "Group",
    "check_caller_value",
    "render_value",
]

END_OF_OPTIONS = "--"
# Programs that run code given on the command line, and the option letters that do it.
_SHELLS = ("sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox", "fish", "csh", "tcsh")
_CODE_OPTIONS: dict[str, str] = {
    **{shell: "c" for shell in _SHELLS},
    "python": "c", "perl": "eE", "ruby": "e", "node": "e", "php": "r", "awk": "", "lua": "e",
}


class ArgvError(ValueError):
    """A value that cannot go into the command line; names the parameter."""

    def __init__(self, param: str, message: str) -> None:
        super().__init__(message)
        self.param = param


@dataclass(frozen=True)
class Element:
    """One argv element: literal text and placeholders."""

    pieces: tuple[str | Placeholder, ...]

    @property
    def names(self) -> list[str]:
        return [p.name for p in self.pieces if isinstance(p, Placeholder)]

    @property
    def is_end_of_options(self) -> bool:
        return self.pieces == (END_OF_OPTIONS,)

    def leading_names(self) -> list[str]:
        """Placeholders that may supply the element's first character."""
        leading: list[str] = []
        for piece in self.pieces:
            if not isinstance(piece, Placeholder):
                break
            leading.append(piece.name)
        return leading


@dataclass(frozen=True)
class Group:
    """Elements kept or dropped together."""

    elements: tuple[Element, ...]


@dataclass(frozen=True)
class Conditional:
    """Elements added only when a parameter is set (true, for a bool)."""

    when: str
    elements: tuple[Element, ...]


Item = Element | Group | Conditional


def render_value(ptype: ParamType | None, value: Any) -> str:
    """A parameter value as argv text: bools as true/false, lists and objects as JSON."""
    if ptype is not None:
        value = ptype.to_wire(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return repr(value)
    return json.dumps(value, ensure_ascii=False)


def _element(raw: Any, environ: Mapping[str, str], where: str) -> Element:
    if isinstance(raw, bool) or not isinstance(raw, str | int | float):
        raise TemplateError(f"{where}: expected text, got {type(raw).__name__}")
    return Element(tuple(parse_template(str(raw), environ)))


@dataclass(frozen=True)
class ArgvTemplate:
    """A parsed exec template."""

    program: str
    items: tuple[Item, ...]

    @classmethod
    def parse(cls, raw: Any, environ: Mapping[str, str]) -> ArgvTemplate:
        """Raises TemplateError (with the index of the bad element) for a malformed template."""
        if isinstance(raw, str):
            raise TemplateError(
                "exec must be a list of arguments, e.g. [\"du\", \"-sh\", \"{path}\"]; "
                "a single string is not split"
            )
        if not isinstance(raw, list) or not raw:
            raise TemplateError("exec must be a non-empty list of arguments")
        program = _element(raw[0], environ, "exec[0]")
        if program.names or not program.pieces:
            raise TemplateError("exec[0], the program, must be fixed text without placeholders")
        items: list[Item] = []
        for index, entry in enumerate(raw[1:], start=1):
            where = f"exec[{index}]"
            if isinstance(entry, list):
                if not entry:
                    raise TemplateError(f"{where}: an empty group")
                group = [_element(e, environ, f"{where}[{i}]") for i, e in enumerate(entry)]
                items.append(Group(tuple(group)))
            elif isinstance(entry, dict):
                if set(entry) != {"when", "args"}:
                    raise TemplateError(
                        f"{where}: a conditional has exactly the keys 'when' and 'args'"
                    )
                when, args = entry["when"], entry["args"]
                if not isinstance(when, str) or not isinstance(args, list) or not args:
                    raise TemplateError(
                        f"{where}: 'when' is a parameter name, 'args' a non-empty list"
                    )
                elements = [_element(e, environ, f"{where}.args[{i}]") for i, e in enumerate(args)]
                items.append(Conditional(when, tuple(elements)))
            else:
                items.append(_element(entry, environ, where))
        template = cls("".join(str(p) for p in program.pieces), tuple(items))
        template._refuse_values_in_shell_scripts()
        return template

    def _refuse_values_in_shell_scripts(self) -> None:
        """A value inside `sh -c "..."` would be parsed by the shell: refuse the template."""
        name = re.sub(r"[0-9.]+$", "", PurePath(self.program).name)  # python3.11 -> python
        letters = _CODE_OPTIONS.get(name)
        if letters is None:
            return
        elements = self._elements_in_order()
        code: Element | None = None
        if not letters:
            code = elements[0] if elements else None  # awk: the program is the first operand
        else:
            flag = re.compile(rf"-[a-zA-Z]*[{letters}][a-zA-Z]*|--eval")
            # Only the interpreter's own options count: they stop at the first operand.
            for index, element in enumerate(elements[:-1]):
                text = "".join(p for p in element.pieces if isinstance(p, str))
                if element.names or not text.startswith("-"):
                    break
                if flag.fullmatch(text):
                    code = elements[index + 1]
                    break
        if code is not None and code.names:
            raise TemplateError(
                f"a placeholder inside the code given to {name} would be run as code; "
                "pass the value as a separate argument instead, e.g. "
                '["sh", "-c", "du -sh -- \\"$1\\"", "sh", "{path}"]'
            )

    # --- what the template refers to ---------------------------------------------------
    def referenced_names(self) -> set[str]:
        names: set[str] = set()
        for item in self.items:
            if isinstance(item, Element):
                names.update(item.names)
            else:
                for element in item.elements:
                    names.update(element.names)
                if isinstance(item, Conditional):
                    names.add(item.when)
        return names

    def dash_sensitive_names(self) -> set[str]:
        """Parameters whose value may start an argv element before any literal "--"."""
        sensitive: set[str] = set()
        for element in self._elements_in_order():
            if element.is_end_of_options:
                break
            sensitive.update(element.leading_names())
        return sensitive

    def _elements_in_order(self) -> list[Element]:
        ordered: list[Element] = []
        for item in self.items:
            ordered.extend([item] if isinstance(item, Element) else item.elements)
        return ordered

    # --- rendering ----------------------------------------------------------------------
    def render(self, values: Mapping[str, Any], types: Mapping[str, ParamType]) -> list[str]:
        """The argv for one call. `values` holds every parameter that has a value."""
        argv = [self.program]
        for item in self.items:
            if isinstance(item, Element):
                if all(n in values for n in item.names):
                    argv.extend(self._render_element(item, values, types))
            elif isinstance(item, Group):
                if all(n in values for e in item.elements for n in e.names):
                    for element in item.elements:
                        argv.extend(self._render_element(element, values, types))
            elif _is_set(values.get(item.when)) and all(
                n in values for e in item.elements for n in e.names
            ):
                for element in item.elements:
                    argv.extend(self._render_element(element, values, types))
        return argv

    @staticmethod
    def _render_element(
        element: Element, values: Mapping[str, Any], types: Mapping[str, ParamType]
    ) -> list[str]:
        pieces = element.pieces
        if len(pieces) == 1 and isinstance(pieces[0], Placeholder):
            name = pieces[0].name
            ptype = types.get(name)
            value = values[name]
            if ptype is not None and ptype.is_array and isinstance(value, list | tuple):
                item_type = ptype.item
                return [render_value(item_type, v) for v in value]
        text = ""
        for piece in pieces:
            if isinstance(piece, Placeholder):
                text += render_value(types.get(piece.name), values[piece.name])
            else:
                text += piece
        return [text]


def _is_set(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    return True


def check_caller_value(
    name: str, ptype: ParamType, value: Any, *, dash_sensitive: bool
) -> None:
    """Refuse a caller's value that could smuggle an option or hold a NUL byte."""
    texts = (
        [render_value(ptype.item, v) for v in value]
        if ptype.is_array and isinstance(value, list | tuple)
        else [render_value(ptype, value)]
    )
    for text in texts:
        if "\x00" in text:
            raise ArgvError(name, f"Invalid value for '{name}': NUL bytes are not allowed")
        if dash_sensitive and text.startswith("-"):
            raise ArgvError(
                name,
                f"Invalid value for '{name}': it must not start with '-' "
                f"(it would be read as an option), got '{text}'",
            )
