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
unless the parameter says `allow_dash: true` or the element follows a literal "--" read by
the same program (`landing` decides which program reads which element).
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Mapping, Set
from dataclasses import dataclass
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
# Past this many argv shapes (optional parts times list lengths), load time checks a few.
MAX_SHAPES = 512


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
        return cls("".join(str(p) for p in program.pieces), tuple(items))

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

    def shapes(self, always: Set[str], arrays: Set[str]) -> list[tuple[Element, ...]]:
        """The argv shapes (elements, without the program) the template can render to.

        An element or group with a placeholder outside `always` may be dropped, a
        conditional may be off, and a lone list placeholder stands for 0, 1 or 2 elements.
        Past MAX_SHAPES, only the fullest and the emptiest shapes are returned.
        """
        choices = [_item_variants(item, always, arrays) for item in self.items]
        if math.prod(len(c) for c in choices) > MAX_SHAPES:
            return [sum((c[-1] for c in choices), ()), sum((c[0] for c in choices), ())]
        return [sum(combo, ()) for combo in itertools.product(*choices)]

    # --- rendering ----------------------------------------------------------------------
    def render(self, values: Mapping[str, Any], types: Mapping[str, ParamType]) -> list[str]:
        """The argv for one call. `values` holds every parameter that has a value."""
        return [self.program, *(text for text, _ in self.render_shaped(values, types))]

    def render_shaped(
        self, values: Mapping[str, Any], types: Mapping[str, ParamType]
    ) -> list[tuple[str, Element]]:
        """The arguments for one call (program left out), each with the element it came from."""
        rendered: list[tuple[str, Element]] = []
        for item in self.items:
            if isinstance(item, Element):
                elements: tuple[Element, ...] = (item,)
            elif isinstance(item, Group) or _is_set(values.get(item.when)):
                elements = item.elements
            else:
                continue
            if not all(n in values for e in elements for n in e.names):
                continue
            for element in elements:
                rendered.extend(
                    (text, element) for text in self._render_element(element, values, types)
                )
        return rendered

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


def _expansions(element: Element, arrays: Set[str]) -> list[tuple[Element, ...]]:
    """What a kept element renders to: a lone list placeholder gives 0, 1 or more elements."""
    names = element.names
    if len(element.pieces) == 1 and names and names[0] in arrays:
        return [(), (element,), (element, element)]
    return [(element,)]


def _element_variants(
    element: Element, always: Set[str], arrays: Set[str]
) -> list[tuple[Element, ...]]:
    kept = _expansions(element, arrays)
    return kept if set(element.names) <= always else [(), *kept]


def _item_variants(item: Item, always: Set[str], arrays: Set[str]) -> list[tuple[Element, ...]]:
    """The element sequences one item can render to, emptiest first, fullest last."""
    if isinstance(item, Element):
        return _element_variants(item, always, arrays)
    parts = [_expansions(e, arrays) for e in item.elements]
    full = [sum(combo, ()) for combo in itertools.product(*parts)]
    optional = isinstance(item, Conditional) or not all(
        set(e.names) <= always for e in item.elements
    )
    return [(), *full] if optional else full


def _is_set(value: Any) -> bool:
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    return True


def check_caller_value(
    name: str, ptype: ParamType, value: Any, *, dash_sensitive: bool, ends_command: bool = False
) -> None:
    """Refuse a caller's value that could smuggle an option, end a `find -exec` command
    (`ends_command`) or hold a NUL byte."""
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
        if ends_command and text in (";", "+"):
            raise ArgvError(
                name, f"Invalid value for '{name}': '{text}' would end the command find runs"
            )
