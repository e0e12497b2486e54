"""Where each value of an exec template lands in the command that finally runs.

The argv is read the way the programs in it read theirs (see `programs`): through
launchers (`env`, `nice`, `timeout 5`, `xargs`, `busybox`, `find -exec`, ...) down to
the program that finally runs, and into interpreters (`sh -c`, `python -c`, `awk`, `sed`).
A value must never land:

- in code an interpreter runs, or among an interpreter's options (they can load code);
- where a launcher takes the program to run, or where an interpreter takes its script;
- where such a program reads options, when the value may start with "-" (`allow_dash`).

An argument of an unknown program that names an interpreter is read as code the unknown
program may run (`docker exec box sh -c ...`). Values are opaque: only the template's
literal text decides, so no value can steer the reading.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence, Set
from dataclasses import dataclass, field
from typing import Literal

from jarvis.sdk.yaml_tools.argv import END_OF_OPTIONS, Element
from jarvis.sdk.yaml_tools.programs import Grammar, grammar_for, is_code_variable
from jarvis.sdk.yaml_tools.template import Placeholder

__all__ = ["Hazard", "Landing", "environment_hazards", "land", "land_all"]

Role = Literal["code", "program", "script", "option", "interpreter-option"]
_EXEC_PRIMARIES = frozenset({"-exec", "-execdir", "-ok", "-okdir"})
_EXEC_TERMINATORS = frozenset({";", "+"})
_CODE_ADVICE = (
    "pass the value as a separate argument and refer to it from fixed code, e.g. "
    '["sh", "-c", "du -sh -- \\"$1\\"", "sh", "{path}"]'
)
_ADVICE: dict[str, str] = {
    "code": _CODE_ADVICE,
    "interpreter-option": _CODE_ADVICE,
    "program": "name the program in the tool file and pass values only as its arguments",
    "script": "name the script in the tool file and pass values only as its arguments",
    "option": "put a literal \"--\" before it, or leave out allow_dash",
}


@dataclass(frozen=True)
class Hazard:
    """A placeholder whose value would land where a program runs it."""

    name: str
    program: str
    role: Role
    detail: str = ""

    def describe(self) -> str:
        """One sentence naming the placeholder, the program and why it is refused."""
        where = f" ({self.detail})" if self.detail else ""
        what = {
            "code": f"would be run as code by {self.program}{where}",
            "program": f"would name the program {self.program} runs{where}",
            "script": f"would name the script {self.program} runs{where}",
            "option": f"could be read as an option of {self.program}, which runs programs{where}",
            "interpreter-option": (
                f"would be read among the options of {self.program}, which can load code{where}"
            ),
        }[self.role]
        return f"the value of '{{{self.name}}}' {what}; {_ADVICE[self.role]}"


@dataclass
class Landing:
    """What a template's values may reach: refused placements and value checks to make."""

    hazards: list[Hazard] = field(default_factory=list)
    # Values that may begin an element a program reads options from: no leading "-".
    dashed: set[str] = field(default_factory=set)
    # Values that could end a `find -exec` command early: never exactly ";" or "+".
    terminators: set[str] = field(default_factory=set)

    def merge(self, other: Landing) -> None:
        self.hazards.extend(h for h in other.hazards if h not in self.hazards)
        self.dashed |= other.dashed
        self.terminators |= other.terminators


def land(program: str, elements: Sequence[Element], allow_dash: Set[str] = frozenset()) -> Landing:
    """Read `program elements...` and report where its placeholders land."""
    reader = _Reader(elements, allow_dash)
    reader.program(program, 0, len(elements))
    return reader.landing


def land_all(
    program: str, shapes: Iterable[Sequence[Element]], allow_dash: Set[str] = frozenset()
) -> Landing:
    """The union of `land` over every shape the argv can take."""
    total = Landing()
    for shape in shapes:
        total.merge(land(program, shape, allow_dash))
    return total


def environment_hazards(
    program: str, env: Mapping[str, Sequence[str | Placeholder]]
) -> list[Hazard]:
    """Values in environment variables that load code or choose programs (LD_PRELOAD, PATH)."""
    return [
        Hazard(piece.name, program, "code", f"the environment variable {key}")
        for key, pieces in env.items()
        if is_code_variable(key)
        for piece in pieces
        if isinstance(piece, Placeholder)
    ]


def _prefix(element: Element) -> str:
    """The literal text before the element's first placeholder."""
    text = ""
    for piece in element.pieces:
        if isinstance(piece, Placeholder):
            break
        text += piece
    return text


def _literal(element: Element) -> str | None:
    """The element's text when it holds no placeholder."""
    if element.names:
        return None
    return "".join(p for p in element.pieces if isinstance(p, str))


@dataclass(frozen=True)
class _Scope:
    """One program's stretch of the argv: elements[start:stop] are its arguments."""

    name: str
    grammar: Grammar
    stop: int


class _Reader:
    """Walks one concrete shape of the argv, program by program."""

    def __init__(self, elements: Sequence[Element], allow_dash: Set[str]) -> None:
        self.el = list(elements)
        self.allow_dash = allow_dash
        self.landing = Landing()

    def refuse(self, element: Element, scope: _Scope, role: Role, detail: str = "") -> None:
        for name in element.names:
            hazard = Hazard(name, scope.name, role, detail)
            if hazard not in self.landing.hazards:
                self.landing.hazards.append(hazard)

    # --- programs -------------------------------------------------------------------------
    def program(self, name: str, start: int, stop: int) -> None:
        grammar = grammar_for(name)
        if grammar is None:
            self.unknown(start, stop)
        elif grammar.operands == "find":
            self.find(_Scope(name, grammar, stop), start)
        else:
            self.options(_Scope(name, grammar, stop), start, "")

    def unknown(self, start: int, stop: int) -> None:
        """Arguments of a program Jarvis does not know: data, unless one names an interpreter."""
        ended = False
        for index in range(start, stop):
            element = self.el[index]
            text = _literal(element)
            if text == END_OF_OPTIONS and not ended:
                ended = True
                continue
            if not ended:
                self.landing.dashed.update(element.leading_names())
            grammar = grammar_for(text) if text is not None else None
            if text is not None and grammar is not None and grammar.is_interpreter:
                self.program(text, index + 1, stop)

    def data(self, start: int, stop: int, ended: bool) -> None:
        """Plain arguments: a value may still begin an option until a literal "--"."""
        for element in self.el[start:stop]:
            if _literal(element) == END_OF_OPTIONS:
                ended = True
            elif not ended:
                self.landing.dashed.update(element.leading_names())

    # --- options ----------------------------------------------------------------------------
    def options(self, scope: _Scope, index: int, code: str) -> None:
        """Read `scope`'s options from `index`; `code` is "given" or "flag" once code is set."""
        grammar = scope.grammar
        ended = opens = False
        while index < scope.stop:
            element = self.el[index]
            prefix = _prefix(element)
            if not prefix:
                self.value_where_options_are(scope, element)
                break
            if _literal(element) == END_OF_OPTIONS and grammar.dashdash_ends_options:
                index, ended = index + 1, True
                break
            if not _is_option(prefix, element, grammar):
                break
            if grammar.options_run_code:
                self.refuse(element, scope, "interpreter-option")
            opens = opens or any(f"-{c}" in grammar.open_flags for c in prefix[1:])
            index, code, ending = self.option(scope, index, code)
            if ending:
                break
        self.operands(scope, index, code, ended)
        if opens:
            for element in self.el[index : scope.stop]:
                self.refuse(element, scope, "code", "a file name ending in '|' is run as a command")

    def value_where_options_are(self, scope: _Scope, element: Element) -> None:
        leading = element.leading_names()
        self.landing.dashed.update(leading)
        for name in leading:
            if name in self.allow_dash:
                self.refuse(Element((Placeholder(name),)), scope, "option",
                            "allow_dash lets it start with '-'")

    def option(self, scope: _Scope, index: int, code: str) -> tuple[int, str, bool]:
        """Read the option at `index`: (next index, code state, whether options end)."""
        grammar = scope.grammar
        element = self.el[index]
        prefix = _prefix(element)
        takes = grammar.data_options | grammar.code_options
        if prefix.startswith("--"):
            name, equals, _ = prefix.partition("=")
            if not equals and element.names:
                self.refuse(element, scope, "option", "the value would name the option")
                return index + 1, code, False
            if equals:
                self.argument(scope, name, element)
                return index + 1, _code_after(grammar, name, code), name in grammar.ending_options
            if name in takes:
                self.next_argument(scope, name, index)
                return index + 2, _code_after(grammar, name, code), name in grammar.ending_options
            return index + 1, code, False
        if _literal(element) in takes:  # a multi-letter option after one dash: zip -TT
            name = prefix
            self.next_argument(scope, name, index)
            return index + 2, _code_after(grammar, name, code), name in grammar.ending_options
        sign, letters = prefix[0], prefix[1:]
        for position, letter in enumerate(letters):
            name = sign + letter
            if name in grammar.code_flags:
                code = "flag"
            if name not in takes:
                continue
            new_code = _code_after(grammar, name, code)
            ending = name in grammar.ending_options
            if position + 1 < len(letters) or element.names:
                self.argument(scope, name, element)  # the rest of the element is the argument
                return index + 1, new_code, ending
            self.next_argument(scope, name, index)
            return index + 2, new_code, ending
        if element.names:
            self.refuse(element, scope, "option", "the value would add option letters")
        return index + 1, code, False

    def argument(self, scope: _Scope, option: str, element: Element) -> None:
        if option in scope.grammar.code_options:
            self.refuse(element, scope, "code", f"the argument of {option}")
        elif scope.grammar.options_run_code:
            self.refuse(element, scope, "interpreter-option", f"the argument of {option}")

    def next_argument(self, scope: _Scope, option: str, index: int) -> None:
        if index + 1 >= scope.stop:
            return
        element = self.el[index + 1]
        self.landing.dashed.update(element.leading_names())
        self.argument(scope, option, element)

    # --- operands ---------------------------------------------------------------------------
    def operands(self, scope: _Scope, index: int, code: str, ended: bool) -> None:
        grammar, stop = scope.grammar, scope.stop
        kind = grammar.operands
        if code == "given" or kind == "data":
            self.data(index, stop, ended)
            return
        if code == "flag" or kind in ("script", "code"):
            if index < stop:
                first = self.el[index]
                if code == "flag" or kind == "code":
                    self.refuse(first, scope, "code", "its program text")
                else:
                    self.refuse(first, scope, "script")
                if not ended:
                    self.landing.dashed.update(first.leading_names())
            self.data(index + 1, stop, ended)
            return
        skipped = min(index + grammar.skip, stop)
        self.data(index, skipped, ended)
        if kind == "shell":
            for element in self.el[skipped:stop]:
                self.refuse(element, scope, "code", "its arguments are joined into a shell command")
            return
        self.command(scope, skipped)

    def command(self, scope: _Scope, index: int) -> None:
        """A launcher's operands from `index`: NAME=value assignments (env), then a program."""
        while scope.grammar.assignments and index < scope.stop and "=" in _prefix(self.el[index]):
            variable = _prefix(self.el[index]).partition("=")[0]
            if is_code_variable(variable):
                self.refuse(self.el[index], scope, "code", f"the environment variable {variable}")
            index += 1
        if index >= scope.stop:
            return
        element = self.el[index]
        text = _literal(element)
        if text in scope.grammar.code_options and index + 1 < scope.stop:
            # flock FILE -c CODE: the option comes after the operands.
            self.refuse(self.el[index + 1], scope, "code", f"the argument of {text}")
            self.data(index + 2, scope.stop, False)
            return
        if text is None:
            self.refuse(element, scope, "program")
            self.data(index + 1, scope.stop, False)
            return
        self.program(text, index + 1, scope.stop)

    def find(self, scope: _Scope, index: int) -> None:
        """find's paths and expression; `-exec CMD ... ;` runs CMD with its own argv."""
        while index < scope.stop:
            element = self.el[index]
            if _literal(element) not in _EXEC_PRIMARIES:
                self.landing.dashed.update(element.leading_names())  # "--" ends no expression
                index += 1
                continue
            end = self.terminator(index + 1, scope.stop)
            for inner in self.el[index + 1 : end]:
                if not _prefix(inner) and not any(isinstance(p, str) for p in inner.pieces):
                    self.landing.terminators.update(inner.names)
            if index + 1 < end:
                sub = _Scope("find", scope.grammar, end)
                self.command(sub, index + 1)
            index = end + 1


    def terminator(self, start: int, stop: int) -> int:
        """The index of the literal ";" or "+" that ends a `-exec` command (or `stop`)."""
        for index in range(start, stop):
            if _literal(self.el[index]) in _EXEC_TERMINATORS:
                return index
        return stop


def _is_option(prefix: str, element: Element, grammar: Grammar) -> bool:
    signs = ("-", "+") if grammar.plus_options else ("-",)
    if not prefix.startswith(signs):
        return False
    return len(prefix) > 1 or bool(element.names)


def _code_after(grammar: Grammar, option: str, code: str) -> str:
    return "given" if option in grammar.given_by and code != "flag" else code
