"""Docstrings -> a summary and per-parameter descriptions (Google, Sphinx and NumPy styles)."""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass, field

__all__ = ["ParsedDocstring", "parse_docstring"]

_GOOGLE_HEADERS = {"args", "arguments", "parameters", "params", "keyword args", "keyword arguments"}
_GOOGLE_SECTION = re.compile(r"^\s*(?P<title>[A-Za-z][A-Za-z ]*):\s*$")
_GOOGLE_ITEM = re.compile(r"^(?P<name>\*{0,2}\w+)\s*(?:\((?P<type>[^)]*)\))?\s*:\s*(?P<desc>.*)$")
_SPHINX_FIELD = re.compile(r"^\s*:(?P<kind>\w+)(?:\s+(?P<rest>[^:]*))?:\s*(?P<desc>.*)$")
_NUMPY_RULE = re.compile(r"^\s*-{3,}\s*$")
_NUMPY_ITEM = re.compile(r"^(?P<name>\*{0,2}\w+)\s*(?::\s*(?P<type>.*))?$")


@dataclass
class ParsedDocstring:
    """The first paragraph, and what each documented parameter is."""

    summary: str = ""
    params: dict[str, str] = field(default_factory=dict)


def parse_docstring(doc: str | None) -> ParsedDocstring:
    """Read a docstring; unknown layouts give just the summary."""
    if not doc:
        return ParsedDocstring()
    lines = inspect.cleandoc(doc).splitlines()
    parsed = ParsedDocstring(summary=_summary(lines))
    parsed.params.update(_numpy_params(lines))
    parsed.params.update(_google_params(lines))
    parsed.params.update(_sphinx_params(lines))
    return parsed


def _summary(lines: list[str]) -> str:
    paragraph: list[str] = []
    for line in lines:
        stripped = line.strip()
        is_section = bool(_GOOGLE_SECTION.match(line)) or stripped.startswith(":")
        if not stripped or is_section or _NUMPY_RULE.match(line):
            if paragraph or is_section:
                break
            continue
        paragraph.append(stripped)
    # A NumPy section title sits on the line before its rule; it is not part of the summary.
    return " ".join(paragraph).strip()


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


def _join(parts: list[str]) -> str:
    return " ".join(p.strip() for p in parts if p.strip())


def _google_params(lines: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    index = 0
    while index < len(lines):
        header = _GOOGLE_SECTION.match(lines[index])
        index += 1
        if not header or header["title"].strip().lower() not in _GOOGLE_HEADERS:
            continue
        base = None
        current: str | None = None
        parts: list[str] = []
        while index < len(lines):
            line = lines[index]
            if not line.strip():
                index += 1
                continue
            indent = _indent(line)
            if base is None:
                base = indent
            if indent < base or (indent == base and _GOOGLE_SECTION.match(line)) or indent == 0:
                break
            item = _GOOGLE_ITEM.match(line.strip()) if indent == base else None
            if item:
                if current:
                    found[current] = _join(parts)
                current, parts = item["name"].lstrip("*"), [item["desc"]]
            elif current:
                parts.append(line)
            index += 1
        if current:
            found[current] = _join(parts)
    return found


def _sphinx_params(lines: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    current: str | None = None
    parts: list[str] = []
    for line in lines:
        match = _SPHINX_FIELD.match(line)
        if match:
            if current:
                found[current] = _join(parts)
            current, parts = None, []
            if match["kind"] in ("param", "parameter", "arg", "argument", "key", "keyword"):
                words = (match["rest"] or "").split()
                if words:
                    current, parts = words[-1], [match["desc"]]
        elif current and line.strip() and _indent(line) > 0:
            parts.append(line)
        elif current:
            found[current] = _join(parts)
            current, parts = None, []
    if current:
        found[current] = _join(parts)
    return found


def _numpy_params(lines: list[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    index = 0
    while index + 1 < len(lines):
        title = lines[index].strip().lower()
        if title in ("parameters", "other parameters") and _NUMPY_RULE.match(lines[index + 1]):
            index += 2
            current: str | None = None
            parts: list[str] = []
            while index < len(lines):
                line = lines[index]
                if index + 1 < len(lines) and _NUMPY_RULE.match(lines[index + 1]):
                    break  # the next section's title
                if line.strip() and _indent(line) == 0:
                    item = _NUMPY_ITEM.match(line.strip())
                    if current:
                        found[current] = _join(parts)
                    current, parts = (item["name"].lstrip("*"), []) if item else (None, [])
                elif current:
                    parts.append(line)
                index += 1
            if current:
                found[current] = _join(parts)
            continue
        index += 1
    return found
