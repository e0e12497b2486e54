"""Command parameters: a name, a parsed type, and the rules the LLM and the pipeline follow."""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Any

from jarvis.sdk.types import ParamType, ParamTypeError, parse_type, show_value

__all__ = ["LLM_ARTIFACTS", "IJarvisParameter", "JarvisParameter", "is_llm_artifact",
           "range_problem"]

# Small models often write these instead of leaving an optional parameter out.
LLM_ARTIFACTS = frozenset({"default", "none", "null", ""})


def is_llm_artifact(value: Any) -> bool:
    """True for the placeholder strings an LLM sends instead of omitting a parameter."""
    return isinstance(value, str) and value.strip().lower() in LLM_ARTIFACTS


class IJarvisParameter(ABC):
    """The parameter interface; subclass it to add a `validation_function`."""

    @property
    @abstractmethod
    def name(self) -> str: ...

    @property
    @abstractmethod
    def param_type(self) -> str:
        """The type string as declared, e.g. 'array<datetime>'."""

    @property
    @abstractmethod
    def type(self) -> ParamType:
        """The parsed type."""

    @property
    def required(self) -> bool:
        return False

    @property
    def description(self) -> str | None:
        return None

    @property
    def default(self) -> Any:
        return None

    @property
    def enum_values(self) -> list[str] | None:
        return None

    @property
    def enum_synonyms(self) -> dict[str, list[str]] | None:
        """Enum value -> the words people say for it ("next" for "skip"); a routing hint."""
        return None

    @property
    def refinable(self) -> bool:
        return False

    @property
    def minimum(self) -> float | None:
        """The smallest value a number (or each number of an array) may take."""
        return None

    @property
    def maximum(self) -> float | None:
        """The largest value a number (or each number of an array) may take."""
        return None

    @property
    def example(self) -> Any:
        return None

    @property
    def validation_function(self) -> Callable[[Any], bool] | None:
        return None

    @property
    def validation_error_message(self) -> str | None:
        return None

    # --- validation ---------------------------------------------------------------------
    def validate(self, value: Any) -> tuple[bool, str | None]:
        """Type, then enum and range, then the custom function: (ok, error message)."""
        if not self.type.accepts(value):
            return False, (
                f"Invalid type for '{self.name}': expected {self.type.describe()}, "
                f"got {show_value(value)}"
            )
        enum_error = self._enum_error(value) or self._range_error(value)
        if enum_error:
            return False, enum_error
        check = self.validation_function
        if check is not None:
            try:
                passed = bool(check(value))
            except Exception as exc:  # a faulty check must fail the value, not the command
                passed = False
                detail = f" ({type(exc).__name__}: {exc})"
            else:
                detail = ""
            if not passed:
                message = self.validation_error_message or f"Invalid value {show_value(value)}"
                return False, f"{message} for '{self.name}'{detail}"
        return True, None

    def _enum_error(self, value: Any) -> str | None:
        """Enum values are compared as strings; for an array every item must be one."""
        if self.enum_values is None:
            return None
        allowed = [str(v) for v in self.enum_values]
        typed = self._schema_enum()  # 1.0 matches "1" for a float parameter
        for candidate in value if self.type.is_array else [value]:
            if str(candidate) not in allowed and candidate not in typed:
                return (
                    f"Invalid value '{candidate}' for '{self.name}'. "
                    f"Must be one of: {', '.join(allowed)}"
                )
        return None

    def _range_error(self, value: Any) -> str | None:
        """A number below `minimum` or above `maximum`; for an array, any item that is."""
        for candidate in value if self.type.is_array else [value]:
            problem = range_problem(candidate, self.minimum, self.maximum)
            if problem:
                return f"Invalid value for '{self.name}': {problem}"
        return None

    def default_value(self, tz: Any = None) -> Any:
        """The declared default as a Python value (defaults may be written as text)."""
        if self.default is None:
            return None
        return self.type.from_text(self.default, tz)

    # --- schema -------------------------------------------------------------------------
    def llm_description(self) -> str | None:
        """The description the LLM reads, with the example appended when there is one."""
        if self.example is None:
            return self.description
        example = self.example
        if not isinstance(example, str):
            example = json.dumps(self._json_safe(example), default=str)
        base = (self.description or "").rstrip()
        if base and not base.endswith((".", "!", "?")):
            base += "."
        return f"{base} Example: {example}".strip()

    def to_schema(self) -> dict[str, Any]:
        """The JSON schema of this parameter inside the tool's `properties`."""
        schema = self.type.json_schema()
        description = self.llm_description()
        ordered: dict[str, Any] = {"type": schema.pop("type")}
        if "format" in schema:
            ordered["format"] = schema.pop("format")
        if description is not None:
            ordered["description"] = description
        if self.enum_values is not None:
            ordered["enum"] = self._schema_enum()
        ordered.update(schema)
        # JSON schema's bounds; an array's bounds are its items' (declared only for numbers).
        for key, bound in (("minimum", self.minimum), ("maximum", self.maximum)):
            if bound is not None:
                (ordered["items"] if self.type.is_array else ordered)[key] = bound
        if self.refinable:
            ordered["_refinable"] = True
        return ordered

    def _schema_enum(self) -> list[Any]:
        # Enums are declared as strings; the schema shows numbers and booleans in their JSON type.
        target = self.type.item if self.type.is_array else self.type
        if target is None or target.kind not in ("int", "float", "bool"):
            return [str(v) for v in self.enum_values or []]
        try:
            return [target.from_text(str(v)) for v in self.enum_values or []]
        except ParamTypeError:
            return [str(v) for v in self.enum_values or []]

    def to_dict(self) -> dict[str, Any]:
        """The richer form used in `get_command_schema()`."""
        form: dict[str, Any] = {
            "name": self.name,
            "type": self.param_type,
            "required": self.required,
            "description": self.description,
            "enum_values": list(self.enum_values) if self.enum_values is not None else None,
            "refinable": self.refinable,
            "default": self._json_safe(self.default),
            "example": self._json_safe(self.example),
        }
        for key, bound in (("minimum", self.minimum), ("maximum", self.maximum)):
            if bound is not None:  # sent only when declared, like the synonyms
                form[key] = bound
        if self.enum_synonyms:  # a Jarvis extension: sent only when declared
            form["enum_synonyms"] = {str(value): [str(w) for w in said]
                                     for value, said in self.enum_synonyms.items()}
        return form

    def _json_safe(self, value: Any) -> Any:
        # A default or example given as a date/time object is shown in its wire form.
        try:
            return self.type.to_wire(value)
        except ParamTypeError:
            return str(value)

    def __repr__(self) -> str:
        kind = type(self).__name__
        return f"{kind}({self.name!r}, {self.param_type!r}, required={self.required})"


class JarvisParameter(IJarvisParameter):
    """A concrete parameter. An unknown type string raises ValueError here, at construction."""

    def __init__(
        self,
        name: str,
        param_type: str,
        required: bool = False,
        description: str | None = None,
        default: Any = None,
        enum_values: list[str] | None = None,
        refinable: bool = False,
        example: Any = None,
        validation_function: Callable[[Any], bool] | None = None,
        validation_error_message: str | None = None,
        enum_synonyms: dict[str, list[str]] | None = None,
        minimum: float | None = None,
        maximum: float | None = None,
    ) -> None:
        if not isinstance(name, str) or not name.isidentifier():
            raise ValueError(f"Parameter name must be an identifier, got {name!r}")
        self._name = name
        self._param_type = param_type
        self._type = parse_type(param_type)
        self._required = bool(required)
        self._description = description
        self._default = default
        if isinstance(enum_values, str | bytes | dict):
            raise ValueError(f"enum_values of '{name}' must be a list, got {enum_values!r}")
        self._enum_values = [str(v) for v in enum_values] if enum_values is not None else None
        self._enum_synonyms = _checked_synonyms(name, enum_synonyms, self._enum_values)
        self._refinable = bool(refinable)
        self._minimum, self._maximum = _checked_bounds(name, self._type, minimum, maximum)
        self._example = example
        self._validation_function = validation_function
        self._validation_error_message = validation_error_message
        if default is not None:
            try:
                # Any zone will do here: a naive datetime default is read in the node's zone.
                typed_default = self.default_value("UTC")
            except ValueError as exc:
                raise ValueError(f"Default {default!r} of '{name}' does not fit: {exc}") from exc
            if self._enum_error(typed_default):
                raise ValueError(
                    f"Default {default!r} of '{name}' is not one of its enum_values: "
                    f"{', '.join(self._enum_values or [])}"
                )
            if self._range_error(typed_default):
                raise ValueError(f"Default {default!r} of '{name}' is out of its range: "
                                 f"{self._range_error(typed_default)}")

    @property
    def name(self) -> str:
        return self._name

    @property
    def param_type(self) -> str:
        return self._param_type

    @property
    def type(self) -> ParamType:
        return self._type

    @property
    def required(self) -> bool:
        return self._required

    @property
    def description(self) -> str | None:
        return self._description

    @property
    def default(self) -> Any:
        return self._default

    @property
    def enum_values(self) -> list[str] | None:
        return self._enum_values

    @property
    def enum_synonyms(self) -> dict[str, list[str]] | None:
        return self._enum_synonyms

    @property
    def refinable(self) -> bool:
        return self._refinable

    @property
    def minimum(self) -> float | None:
        return self._minimum

    @property
    def maximum(self) -> float | None:
        return self._maximum

    @property
    def example(self) -> Any:
        return self._example

    @property
    def validation_function(self) -> Callable[[Any], bool] | None:
        return self._validation_function

    @property
    def validation_error_message(self) -> str | None:
        return self._validation_error_message


def range_problem(value: Any, minimum: float | None, maximum: float | None) -> str | None:
    """What puts the number `value` outside `minimum`..`maximum`; None for anything else."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        return None
    if minimum is not None and value < minimum:
        return f"{show_value(value)} is below the minimum of {show_value(minimum)}"
    if maximum is not None and value > maximum:
        return f"{show_value(value)} is above the maximum of {show_value(maximum)}"
    return None


def _checked_bounds(name: str, kind: ParamType, minimum: Any, maximum: Any) -> \
        tuple[float | None, float | None]:
    """`minimum` and `maximum` as declared, or ValueError naming what is wrong with them."""
    if minimum is None and maximum is None:
        return None, None
    target = kind.item if kind.is_array else kind
    if target is None or target.kind not in ("int", "float"):
        raise ValueError(f"minimum and maximum of '{name}' need a number type, not {kind.name}")
    for bound in (minimum, maximum):
        if bound is not None and (not isinstance(bound, int | float) or isinstance(bound, bool)
                                  or bound != bound or bound in (float("inf"), float("-inf"))):
            raise ValueError(f"minimum and maximum of '{name}' must be numbers, got {bound!r}")
    if minimum is not None and maximum is not None and minimum > maximum:
        raise ValueError(f"minimum {minimum} of '{name}' is above its maximum {maximum}")
    return minimum, maximum


def _checked_synonyms(
    name: str, synonyms: Any, enum_values: list[str] | None
) -> dict[str, list[str]] | None:
    """`enum_synonyms` as declared, or ValueError naming what is wrong with it."""
    if synonyms is None:
        return None
    if enum_values is None:
        raise ValueError(f"enum_synonyms of '{name}' need enum_values")
    if not isinstance(synonyms, dict):
        raise ValueError(f"enum_synonyms of '{name}' must map a value to a list of words")
    checked: dict[str, list[str]] = {}
    for value, said in synonyms.items():
        if str(value) not in enum_values:
            raise ValueError(
                f"enum_synonyms of '{name}': '{value}' is not one of its enum_values: "
                f"{', '.join(enum_values)}"
            )
        if isinstance(said, str) or not isinstance(said, list | tuple) or not all(
                isinstance(w, str) and w.strip() for w in said):
            raise ValueError(
                f"enum_synonyms of '{name}': the words for '{value}' must be a list of text"
            )
        checked[str(value)] = [w.strip() for w in said]
    return checked
