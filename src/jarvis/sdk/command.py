"""Commands: what the LLM sees of them, and the fixed pipeline that runs them.

A command author subclasses `IJarvisCommand` (also exported as `JarvisCommandBase`),
declares `command_name`, `description` and `parameters`, and writes `run`. Everything
else has a sensible default. `execute` is final: it always runs secrets -> required
params -> `validate_call` (suggested values applied) -> defaults -> coercion -> `run`.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar, final

from jarvis.sdk.context import CommandContext
from jarvis.sdk.packages import JarvisPackage
from jarvis.sdk.parameter import IJarvisParameter, is_llm_artifact
from jarvis.sdk.response import (
    CommandResponse,
    PreRouteResult,
    RequestInformation,
    ValidationResult,
)
from jarvis.sdk.secrets import JarvisSecret, MissingSecretsError
from jarvis.sdk.types import ParamTypeError

__all__ = ["CommandAntipattern", "CommandExample", "IJarvisCommand", "JarvisCommandBase"]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CommandExample:
    """An utterance and the arguments it should produce; at most one is primary."""

    voice_command: str
    expected_parameters: dict[str, Any] = field(default_factory=dict)
    is_primary: bool = False

    def to_dict(self) -> dict[str, Any]:
        return {
            "voice_command": self.voice_command,
            "expected_parameters": dict(self.expected_parameters),
            "is_primary": self.is_primary,
        }


@dataclass(frozen=True)
class CommandAntipattern:
    """Another command this one is confused with, and why the other one is right there."""

    command_name: str
    description: str

    def to_dict(self) -> dict[str, Any]:
        return {"command_name": self.command_name, "description": self.description}


class IJarvisCommand(ABC):
    """The base of every command. Subclasses must not override `execute`."""

    _FINAL_METHODS: ClassVar[tuple[str, ...]] = ("execute",)
    # True: undeclared arguments reach validate_call (to be refused there) and missing
    # required parameters are left for validate_call to report, instead of being dropped
    # and raising ValueError. Declarative tools use it to refuse a caller-set override.
    strict_arguments: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        for name in cls._FINAL_METHODS:
            # getattr, not cls.__dict__: a mixin earlier in the MRO must not replace it either.
            if getattr(cls, name) is not getattr(IJarvisCommand, name):
                raise TypeError(
                    f"{cls.__name__} overrides {name}(); customise validate_call, "
                    "post_process_tool_call or run instead"
                )

    # --- what the command is -----------------------------------------------------------
    @property
    @abstractmethod
    def command_name(self) -> str: ...

    @property
    @abstractmethod
    def description(self) -> str: ...

    @property
    def parameters(self) -> list[IJarvisParameter]:
        return []

    @property
    def required_secrets(self) -> list[JarvisSecret]:
        return []

    @property
    def all_possible_secrets(self) -> list[JarvisSecret]:
        """Every secret the command may read; installation seeds a row for each."""
        return list(self.required_secrets)

    @property
    def required_packages(self) -> list[JarvisPackage]:
        return []

    @property
    def examples(self) -> list[CommandExample]:
        return []

    @property
    def rules(self) -> list[str]:
        return []

    @property
    def critical_rules(self) -> list[str]:
        return []

    @property
    def antipatterns(self) -> list[CommandAntipattern]:
        return []

    @property
    def allow_direct_answer(self) -> bool:
        """Whether the LLM may answer without calling this command."""
        return False

    @property
    def keywords(self) -> list[str]:
        return []

    # --- the node's context -------------------------------------------------------------
    @property
    def context(self) -> CommandContext:
        ctx = self.__dict__.get("_context")
        if ctx is None:
            ctx = CommandContext()
            self.__dict__["_context"] = ctx
        return ctx

    def bind(self, context: CommandContext) -> IJarvisCommand:
        """Attach the node's secrets, storage and data folder."""
        self.__dict__["_context"] = context
        return self

    def get_secret(self, key: str, scope: str = "integration") -> str | None:
        return self.context.secrets.get_secret(key, scope)

    # --- hooks ----------------------------------------------------------------------------
    def pre_route(self, voice_command: str) -> PreRouteResult | None:
        """Return a result to run this command at once, without the LLM."""
        return None

    def post_process_tool_call(self, args: dict[str, Any], voice_command: str) -> dict[str, Any]:
        """Fix common LLM mistakes in the arguments before `execute`."""
        return args

    def validate_call(self, **kwargs: Any) -> list[ValidationResult]:
        """Type, enum and custom checks of every given parameter; extend for more."""
        results: list[ValidationResult] = []
        for param in self.parameters:
            value = kwargs.get(param.name)
            if value is None:
                continue
            ok, message = param.validate(value)
            if not ok:
                results.append(self._failure(param, message))
        return results

    @abstractmethod
    def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse: ...

    def init_data(self) -> dict[str, Any]:
        """First-install setup (may be interactive); returns a summary."""
        return {}

    # --- the pipeline ---------------------------------------------------------------------
    @final
    def execute(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
        """Secrets -> required params -> validate_call -> defaults -> coercion -> run."""
        self._validate_secrets()
        kwargs = self._drop_artifacts_and_unknown(kwargs)
        self._validate_params(kwargs)
        results = self.validate_call(**kwargs)
        suggested = {
            r.param_name: r.suggested_value
            for r in results
            if r.suggested_value is not None and r.param_name
        }
        # An error that carries its own suggestion is auto-corrected; every other error stands.
        uncorrected = [
            r for r in results if not r.success and r.suggested_value is None
        ] + self._check_suggestions(suggested)
        if uncorrected:
            return CommandResponse.validation_error(uncorrected)
        kwargs.update(suggested)
        tz = request_info.timezone or self.context.timezone
        try:
            kwargs = self._coerce(kwargs, tz)
        except _CoercionFailure as failure:
            return CommandResponse.validation_error([failure.result])
        response = self.run(request_info, **kwargs)
        if not isinstance(response, CommandResponse):
            raise TypeError(
                f"{self.command_name}.run() returned {type(response).__name__}, "
                "not a CommandResponse"
            )
        return response

    def _check_suggestions(self, suggested: dict[str | None, Any]) -> list[ValidationResult]:
        """A suggested value must itself pass its parameter's type and enum checks."""
        failures = []
        for param in self.parameters:
            if param.name in suggested:
                ok, message = param.validate(suggested[param.name])
                if not ok:
                    failures.append(self._failure(param, f"Suggested value rejected: {message}"))
        return failures

    def _failure(self, param: IJarvisParameter, message: str | None) -> ValidationResult:
        return ValidationResult(
            success=False,
            param_name=param.name,
            command_name=self.command_name,
            message=message,
            valid_values=list(param.enum_values) if param.enum_values else None,
        )

    def _validate_secrets(self) -> None:
        missing = [
            s.key
            for s in self.required_secrets
            if s.required and not self.get_secret(s.key, s.scope)
        ]
        if missing:
            raise MissingSecretsError(missing, self.command_name)

    def _validate_params(self, kwargs: dict[str, Any]) -> None:
        if self.strict_arguments:
            return  # validate_call reports missing parameters as validation errors
        missing = [p.name for p in self.parameters if p.required and kwargs.get(p.name) is None]
        if missing:
            raise ValueError(f"Missing required params: {', '.join(missing)}")

    def _drop_artifacts_and_unknown(self, kwargs: dict[str, Any]) -> dict[str, Any]:
        declared = {p.name: p for p in self.parameters}
        kept: dict[str, Any] = {}
        for name, value in kwargs.items():
            param = declared.get(name)
            if param is None and self.strict_arguments:
                kept[name] = value
            elif param is None:
                log.debug("%s: ignoring undeclared argument %s", self.command_name, name)
            elif not param.required and (value is None or _is_placeholder(param, value)):
                continue
            else:
                kept[name] = value
        return kept

    def _coerce(self, kwargs: dict[str, Any], tz: str | None) -> dict[str, Any]:
        out = dict(kwargs)
        for param in self.parameters:
            try:
                if param.name in out:
                    out[param.name] = param.type.coerce(out[param.name], tz)
                elif param.default is not None:
                    out[param.name] = param.default_value(tz)
            except ParamTypeError as exc:
                raise _CoercionFailure(
                    self._failure(param, f"Invalid value for '{param.name}': {exc}")
                ) from exc
        return out

    # --- what the LLM sees ------------------------------------------------------------------
    def to_openai_tool_schema(self) -> dict[str, Any]:
        """The OpenAI function-calling schema of this command."""
        params = self.parameters
        return {
            "type": "function",
            "function": {
                "name": self.command_name,
                "description": self.description,
                "parameters": {
                    "type": "object",
                    "properties": {p.name: p.to_schema() for p in params},
                    "required": [p.name for p in params if p.required],
                },
            },
        }

    def get_command_schema(self) -> dict[str, Any]:
        """The richer definition the center builds its prompt and type checks from."""
        examples = self.examples
        if sum(1 for e in examples if e.is_primary) > 1:
            raise ValueError(f"{self.command_name}: at most one example may be primary")
        return {
            "command_name": self.command_name,
            "description": self.description,
            "parameters": [p.to_dict() for p in self.parameters],
            "examples": [e.to_dict() for e in examples],
            "rules": list(self.rules),
            "critical_rules": list(self.critical_rules),
            "antipatterns": [a.to_dict() for a in self.antipatterns],
            "allow_direct_answer": self.allow_direct_answer,
            "keywords": list(self.keywords),
        }


def _is_placeholder(param: IJarvisParameter, value: Any) -> bool:
    # "none" is a real answer when the parameter's own enum offers it.
    if param.enum_values is not None and value in param.enum_values:
        return False
    return is_llm_artifact(value)


class _CoercionFailure(Exception):
    def __init__(self, result: ValidationResult) -> None:
        super().__init__(result.message)
        self.result = result


# The specs use both names for the same base class.
JarvisCommandBase = IJarvisCommand
