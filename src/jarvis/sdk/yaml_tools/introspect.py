"""A Python function's signature and docstring -> the parameters and description of a tool."""

from __future__ import annotations

import collections.abc
import datetime as dt
import inspect
import json
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from jarvis.sdk.yaml_tools.docstrings import parse_docstring

__all__ = ["FunctionSignature", "IntrospectedParam", "annotation_to_type", "introspect"]

_SCALARS: dict[Any, str] = {
    str: "str",
    int: "int",
    float: "float",
    bool: "bool",
    dt.datetime: "datetime",
    dt.date: "date",
    dt.time: "time",
    dt.timedelta: "timedelta",
}
_LISTS = (list, tuple, set, frozenset, collections.abc.Sequence, collections.abc.Iterable)
_DICTS = (dict, collections.abc.Mapping)


@dataclass
class IntrospectedParam:
    """What a function's signature says about one parameter."""

    name: str
    type: str
    required: bool
    default: Any = None
    description: str | None = None
    enum_values: list[str] | None = None
    positional_only: bool = False
    has_default: bool = False


@dataclass
class FunctionSignature:
    """Everything a tool needs to know to call a function."""

    summary: str
    params: dict[str, IntrospectedParam]
    accepts_any_keyword: bool
    is_async: bool


def annotation_to_type(annotation: Any) -> tuple[str, bool, list[str] | None]:
    """(type string, whether None is allowed, enum values) for an annotation.

    Raises TypeError for annotations no tool parameter type can carry.
    """
    if annotation is inspect.Parameter.empty or annotation is Any:
        return "str", False, None
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(annotation) if a is not type(None)]
        optional = len(members) < len(typing.get_args(annotation))
        if len(members) != 1:
            raise TypeError(f"union {annotation!r} has more than one non-None type")
        type_string, _, enum = annotation_to_type(members[0])
        return type_string, optional, enum
    if origin is typing.Literal:
        values = typing.get_args(annotation)
        if not values or not all(isinstance(v, str) for v in values):
            raise TypeError(f"{annotation!r}: only Literal of strings is supported")
        return "str", False, list(values)
    if annotation in _SCALARS:
        return _SCALARS[annotation], False, None
    if annotation in _LISTS or origin in _LISTS:
        args = [a for a in typing.get_args(annotation) if a is not Ellipsis]
        if not args or args[0] is Any:
            return "list", False, None
        if len(set(args)) != 1 or args[0] not in _SCALARS:
            raise TypeError(f"{annotation!r}: list items must all be one scalar type")
        return f"array<{_SCALARS[args[0]]}>", False, None
    if annotation in _DICTS or origin in _DICTS:
        return "dict", False, None
    raise TypeError(f"annotation {annotation!r} has no tool parameter type")


def _default_for_schema(value: Any) -> Any:
    """A default worth showing (plain JSON values only); None when not."""
    if value is None:
        return None
    try:
        json.dumps(value)
    except (TypeError, ValueError):
        return None
    return value


def introspect(func: Callable[..., Any]) -> FunctionSignature:
    """Read the signature, type hints and docstring of `func`.

    Raises TypeError for a signature that cannot become a tool (e.g. an unsupported
    annotation or a required *args).
    """
    signature = inspect.signature(func)
    try:
        hints = typing.get_type_hints(func)
    except Exception as exc:  # an annotation that does not resolve is the author's mistake
        raise TypeError(f"cannot resolve the type hints of {func!r}: {exc}") from exc
    doc = parse_docstring(inspect.getdoc(func))
    params: dict[str, IntrospectedParam] = {}
    accepts_any_keyword = False
    for name, parameter in signature.parameters.items():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            accepts_any_keyword = True
            continue
        if parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            continue
        annotation = hints.get(name, parameter.annotation)
        has_default = parameter.default is not inspect.Parameter.empty
        if annotation is inspect.Parameter.empty and has_default and parameter.default is not None:
            annotation = type(parameter.default)
        try:
            type_string, optional, enum = annotation_to_type(annotation)
        except TypeError as exc:
            raise TypeError(f"parameter '{name}': {exc}") from exc
        params[name] = IntrospectedParam(
            name=name,
            type=type_string,
            required=not has_default and not optional,
            default=_default_for_schema(parameter.default) if has_default else None,
            description=doc.params.get(name),
            enum_values=enum,
            positional_only=parameter.kind is inspect.Parameter.POSITIONAL_ONLY,
            has_default=has_default,
        )
    return FunctionSignature(
        summary=doc.summary,
        params=params,
        accepts_any_keyword=accepts_any_keyword,
        is_async=inspect.iscoroutinefunction(func),
    )
