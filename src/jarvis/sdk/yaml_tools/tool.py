"""The commands a tool file declares: a Python function tool and a command-line tool.

Both run through the SDK's `execute()` pipeline. What they add to it:

- arguments are checked strictly: an unknown name (an override's name included) is a
  validation error listing the known parameters, and a missing required parameter is a
  validation error naming its description and example;
- values are coerced where nothing is lost (see `coercion`), as suggested values;
- override values are merged in `run`, after every check, and masked in everything the
  tool returns, so they never reach the caller, the LLM or a log line.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import inspect
import json
import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from jarvis.sdk.command import CommandExample, IJarvisCommand
from jarvis.sdk.parameter import JarvisParameter
from jarvis.sdk.response import CommandResponse, RequestInformation, ValidationResult
from jarvis.sdk.types import ParamType, ParamTypeError
from jarvis.sdk.yaml_tools.argv import (
    ArgvError,
    ArgvTemplate,
    Element,
    check_caller_value,
    render_value,
)
from jarvis.sdk.yaml_tools.coercion import coerce_lossless, sample_value
from jarvis.sdk.yaml_tools.landing import Landing, environment_hazards, land
from jarvis.sdk.yaml_tools.runner import (
    SAFE_PATH,
    OutputTooLargeError,
    ProcessTimeoutError,
    ProgramNotFoundError,
    run_process,
)
from jarvis.sdk.yaml_tools.template import Placeholder

__all__ = ["ExecTool", "FunctionTool", "YamlTool"]

log = logging.getLogger(__name__)

MASK = "[hidden]"
# Shorter override values are not masked in output: they would blot out ordinary words.
MIN_MASKED_LENGTH = 4
STDERR_SHOWN = 1000


class YamlTool(IJarvisCommand):
    """A command declared in a tool file."""

    # Unknown names (a caller trying to set an override) are refused, not silently dropped.
    strict_arguments = True

    def __init__(
        self,
        *,
        name: str,
        description: str,
        parameters: list[JarvisParameter],
        overrides: Mapping[str, Any],
        override_types: Mapping[str, ParamType] | None = None,
        source_path: Path,
        line: int | None = None,
        examples: list[CommandExample] | None = None,
    ) -> None:
        self._name = name
        self._description = description
        self._parameters = list(parameters)
        self._by_name = {p.name: p for p in self._parameters}
        self.__overrides = dict(overrides)
        self._override_types = dict(override_types or {})
        self._masked = sorted(
            {
                text
                for value in self.__overrides.values()
                for text in _texts_of(value)
                if len(text) >= MIN_MASKED_LENGTH
            },
            key=len,
            reverse=True,
        )
        self.source_path = source_path
        self.line = line
        self._examples = list(examples or [])

    # --- what the command is -----------------------------------------------------------
    @property
    def command_name(self) -> str:
        return self._name

    @property
    def description(self) -> str:
        return self._description

    @property
    def parameters(self) -> list[JarvisParameter]:
        return list(self._parameters)

    @property
    def examples(self) -> list[CommandExample]:
        return list(self._examples)

    @property
    def override_names(self) -> list[str]:
        """The names of the hidden parameters (never their values)."""
        return sorted(self.__overrides)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self._name!r}, source={str(self.source_path)!r})"

    # --- argument checks ------------------------------------------------------------------
    def validate_call(self, **kwargs: Any) -> list[ValidationResult]:
        results: list[ValidationResult] = []
        known = [p.name for p in self._parameters]
        for name in kwargs:
            if name not in self._by_name:
                listed = ", ".join(known) if known else "none"
                results.append(
                    self._error(name, f"Unknown parameter '{name}'. Known parameters: {listed}",
                                valid_values=known)
                )
        for param in self._parameters:
            value = kwargs.get(param.name)
            if value is None:
                if param.required:
                    results.append(self._error(param.name, self._missing_text(param)))
                continue
            results.extend(self._check_value(param, value))
        return results

    def _check_value(self, param: JarvisParameter, value: Any) -> list[ValidationResult]:
        try:
            coerced = coerce_lossless(param.type, value)
        except ParamTypeError as exc:
            return [self._error(param.name, self._type_text(param, exc), param.enum_values)]
        ok, message = param.validate(coerced)
        if not ok:
            return [self._error(param.name, message, param.enum_values)]
        try:
            self._check_for_program(param, coerced)
        except ArgvError as exc:
            return [self._error(param.name, str(exc))]
        if type(coerced) is not type(value) or coerced != value:
            return [
                ValidationResult(
                    success=True,
                    param_name=param.name,
                    command_name=self._name,
                    suggested_value=coerced,
                )
            ]
        return []

    def _check_for_program(self, param: JarvisParameter, value: Any) -> None:
        """Tool-specific checks of one caller value (exec tools refuse option smuggling)."""

    def _error(
        self, name: str, message: str | None, valid_values: list[Any] | None = None
    ) -> ValidationResult:
        return ValidationResult(
            success=False,
            param_name=name,
            command_name=self._name,
            message=message,
            valid_values=list(valid_values) if valid_values else None,
        )

    @staticmethod
    def _example_text(param: JarvisParameter) -> str:
        """" Example: ..." from the declared example, else a sample of the type (not for text)."""
        example = param.example
        if example is None and param.type.kind != "string":
            example = sample_value(param.type)
        if example is None:
            return ""
        return f" Example: {example if isinstance(example, str) else json.dumps(example)}"

    def _type_text(self, param: JarvisParameter, exc: Exception) -> str:
        return (
            f"Invalid value for '{param.name}' (type {param.type.name}): {exc}."
            f"{self._example_text(param)}"
        )

    def _missing_text(self, param: JarvisParameter) -> str:
        about = f" ({param.description})" if param.description else ""
        return (
            f"Missing required parameter '{param.name}'{about}: expected "
            f"{param.type.describe()}.{self._example_text(param)}"
        )

    # --- running -----------------------------------------------------------------------
    def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
        values = {**kwargs, **self.__overrides}
        log.debug("yaml tool %s: running", self._name)
        try:
            response = self._invoke(values)
        except Exception as exc:  # a failing tool is an error result, never a crash
            text = self.mask(f"{type(exc).__name__}: {exc}")
            log.debug("yaml tool %s failed: %s", self._name, text)
            return CommandResponse.error_response(f"Tool '{self._name}' failed: {text}")
        return self._masked_response(response)

    def _invoke(self, values: dict[str, Any]) -> CommandResponse:
        raise NotImplementedError

    # --- keeping override values out of what comes back -----------------------------------
    def mask(self, text: str) -> str:
        """`text` with every override value replaced by a marker."""
        for secret in self._masked:
            text = text.replace(secret, MASK)
        return text

    def _mask_data(self, value: Any) -> Any:
        if isinstance(value, str):
            return self.mask(value)
        if isinstance(value, dict):
            return {self._mask_data(k): self._mask_data(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self._mask_data(v) for v in value]
        return value

    def _masked_response(self, response: CommandResponse) -> CommandResponse:
        if not self._masked:
            return response
        return response.model_copy(
            update={
                "context_data": self._mask_data(response.context_data),
                "error_details": (
                    self.mask(response.error_details) if response.error_details else None
                ),
            }
        )


def _texts_of(value: Any) -> list[str]:
    """The texts of an override value worth masking: its strings (numbers and booleans
    would blot out ordinary output)."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict | list | tuple):
        items = value.values() if isinstance(value, dict) else value
        return [text for item in items for text in _texts_of(item)]
    return []


class FunctionTool(YamlTool):
    """A tool that calls a Python function (sync or async)."""

    def __init__(
        self,
        *,
        func: Callable[..., Any],
        positional_only: list[str] | None = None,
        pass_none_for: list[str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._func = func
        self._positional_only = list(positional_only or [])
        self._pass_none_for = list(pass_none_for or [])

    def _invoke(self, values: dict[str, Any]) -> CommandResponse:
        call = dict(values)
        for name in self._pass_none_for:
            call.setdefault(name, None)  # an Optional parameter without a default
        args = [call.pop(name) for name in self._positional_only if name in call]
        result = self._func(*args, **call)
        if inspect.isawaitable(result):
            result = _await(result)
        return _to_response(result)


def _await(awaitable: Any) -> Any:
    """Run a coroutine to completion from sync code, even inside a running event loop."""

    async def wrapper() -> Any:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wrapper())
    # This thread already runs a loop (the caller is async): use a fresh loop elsewhere.
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, wrapper()).result()


def _to_response(result: Any) -> CommandResponse:
    """A function's return value -> a response: str is spoken, a dict is the context."""
    if isinstance(result, CommandResponse):
        return result
    if isinstance(result, dict):
        data = json.loads(json.dumps(result, default=str))
        message = data.get("message")
        if message is not None and not isinstance(message, str):
            data["message"] = str(message)
        return CommandResponse.success_response(data)
    if result is None:
        return CommandResponse.success_response(message="Done.")
    return CommandResponse.success_response(message=str(result))


class ExecTool(YamlTool):
    """A tool that runs a program with an argv built from a template, never through a shell."""

    def __init__(
        self,
        *,
        template: ArgvTemplate,
        env: Mapping[str, list[str | Placeholder]],
        cwd: Path | None,
        timeout: float,
        max_output: int,
        landing: Landing,
        allow_dash: set[str] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self._template = template
        self._env = dict(env)
        self._cwd = cwd
        self._timeout = timeout
        self._max_output = max_output
        self._allow_dash = frozenset(allow_dash or ())
        self._dash_sensitive = landing.dashed - self._allow_dash
        self._ends_command = set(landing.terminators)

    @property
    def timeout(self) -> float:
        return self._timeout

    @property
    def max_output(self) -> int:
        return self._max_output

    def _check_for_program(self, param: JarvisParameter, value: Any) -> None:
        check_caller_value(
            param.name, param.type, value, dash_sensitive=param.name in self._dash_sensitive,
            ends_command=param.name in self._ends_command,
        )

    def refusal(self, shaped: list[tuple[str, Element]]) -> str | None:
        """Why this exact command line must not run, read again as the programs will read it."""
        landing = land(self._template.program, [e for _, e in shaped], self._allow_dash)
        hazards = [*environment_hazards(self._template.program, self._env), *landing.hazards]
        if hazards:
            return hazards[0].describe()
        for text, element in shaped:
            dashed = set(element.leading_names()) & (landing.dashed - self._allow_dash)
            if dashed and text.startswith("-"):
                return f"the value of '{{{sorted(dashed)[0]}}}' would be read as an option"
            ends = set(element.names) & landing.terminators
            if ends and text in (";", "+") and element.leading_names() == element.names:
                return f"the value of '{{{sorted(ends)[0]}}}' would end the command find runs"
        return None

    def _types(self) -> dict[str, ParamType]:
        return {**self._override_types, **{p.name: p.type for p in self._parameters}}

    def _environment(self, values: Mapping[str, Any]) -> dict[str, str]:
        types = self._types()
        env: dict[str, str] = {}
        for key, pieces in self._env.items():
            names = [p.name for p in pieces if isinstance(p, Placeholder)]
            if not all(n in values for n in names):
                continue  # a variable fed by an omitted optional parameter stays unset
            env[key] = "".join(
                render_value(types.get(p.name), values[p.name]) if isinstance(p, Placeholder)
                else p
                for p in pieces
            )
        env.setdefault("PATH", SAFE_PATH)
        return env

    def _invoke(self, values: dict[str, Any]) -> CommandResponse:
        shaped = self._template.render_shaped(values, self._types())
        refusal = self.refusal(shaped)
        if refusal is not None:
            log.warning("yaml tool %s: refused to run: %s", self._name, refusal)
            return CommandResponse.error_response(f"Tool '{self._name}' refused to run: {refusal}")
        argv = [self._template.program, *(text for text, _ in shaped)]
        try:
            result = run_process(
                argv,
                env=self._environment(values),
                cwd=self._cwd,
                timeout=self._timeout,
                max_output=self._max_output,
            )
        except (ProgramNotFoundError, ProcessTimeoutError, OutputTooLargeError) as exc:
            log.debug("yaml tool %s: %s", self._name, type(exc).__name__)
            return CommandResponse.error_response(f"Tool '{self._name}' failed: {exc}")
        stdout = result.stdout.decode("utf-8", errors="replace").strip()
        if result.exit_code != 0:
            stderr = _trim(result.stderr.decode("utf-8", errors="replace"))
            log.debug("yaml tool %s: exit code %d", self._name, result.exit_code)
            detail = f": {stderr}" if stderr else ""
            return CommandResponse.error_response(
                f"Tool '{self._name}' failed with exit code {result.exit_code}{detail}",
                context_data={"exit_code": result.exit_code},
            )
        return CommandResponse.success_response(
            {"exit_code": 0}, message=stdout if stdout else "Done (no output)."
        )


def _trim(text: str, limit: int = STDERR_SHOWN) -> str:
    """The end of stderr (where the error usually is), stripped and at most `limit` characters."""
    text = text.strip()
    if len(text) <= limit:
        return text
    return "..." + text[-(limit - 3):]
