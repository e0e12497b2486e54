"""YAML loading that remembers where every value was written, for errors with line numbers."""

from __future__ import annotations

from typing import Any

import yaml

from jarvis.sdk.yaml_tools.errors import ToolDefinitionError

__all__ = ["LineDict", "LineList", "line_of", "load_yaml"]

_TIMESTAMP_TAG = "tag:yaml.org,2002:timestamp"


class LineDict(dict[str, Any]):
    """A mapping from the file; `line` is where it starts, `key_lines[key]` where each key is."""

    line: int | None = None
    key_lines: dict[str, int]


class LineList(list[Any]):
    """A sequence from the file; `item_lines[i]` is where item i is written."""

    line: int | None = None
    item_lines: list[int]


def line_of(container: Any, key: str | int, fallback: int | None = None) -> int | None:
    """The line of `container[key]`, else of the container, else `fallback`."""
    if isinstance(container, LineDict) and isinstance(key, str) and key in container.key_lines:
        return container.key_lines[key]
    in_list = isinstance(container, LineList) and isinstance(key, int)
    if in_list and 0 <= key < len(container.item_lines):
        return container.item_lines[key]
    return getattr(container, "line", None) or fallback


def load_yaml(text: str) -> Any:
    """Parse one YAML document into plain values, dicts and lists carrying line numbers.

    Raises ToolDefinitionError for a syntax error or a key written twice in one mapping.
    Timestamps stay the text they were written as ("2026-01-18"), so every value is JSON.
    """
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
        problem = getattr(exc, "problem", None) or str(exc)
        line = mark.line + 1 if mark is not None else None
        raise ToolDefinitionError(f"invalid YAML: {problem}", line) from exc
    if node is None:
        return None
    constructor = yaml.SafeLoader("")
    return _convert(node, constructor)


def _convert(node: yaml.Node, constructor: yaml.SafeLoader) -> Any:
    line = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        # With a merge key (<<: *defaults) the mapping's own keys may override merged ones.
        merges = any(k.tag == "tag:yaml.org,2002:merge" for k, _ in node.value)
        constructor.flatten_mapping(node)
        out = LineDict()
        out.line = line
        out.key_lines = {}
        for key_node, value_node in node.value:
            key = _convert(key_node, constructor)
            if not isinstance(key, str):
                raise ToolDefinitionError(
                    f"keys must be text, got {key!r}", key_node.start_mark.line + 1
                )
            if key in out and not merges:
                raise ToolDefinitionError(f"'{key}' is written twice", key_node.start_mark.line + 1)
            out[key] = _convert(value_node, constructor)
            out.key_lines[key] = key_node.start_mark.line + 1
        return out
    if isinstance(node, yaml.SequenceNode):
        items = LineList()
        items.line = line
        items.item_lines = []
        for item in node.value:
            items.append(_convert(item, constructor))
            items.item_lines.append(item.start_mark.line + 1)
        return items
    if node.tag == _TIMESTAMP_TAG:
        return node.value
    try:
        return constructor.construct_object(node, deep=True)
    except yaml.YAMLError as exc:
        raise ToolDefinitionError(f"invalid value: {exc}", line) from exc
