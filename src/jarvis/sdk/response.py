"""What commands return and receive: responses, validation results, pre-route hits, buttons."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "CommandResponse",
    "JarvisButton",
    "PreRouteResult",
    "RequestInformation",
    "ValidationResult",
]


class JarvisButton(BaseModel):
    """A button a UI (the mobile app) may render under the answer."""

    model_config = ConfigDict(frozen=True)

    text: str
    action: str
    type: Literal["primary", "secondary", "destructive"] = "primary"


class ValidationResult(BaseModel):
    """The outcome of one check in `validate_call`.

    `success=False` is an error; `suggested_value` (with or without an error) replaces the
    parameter's value before `run`, which is how fuzzy matching corrects a near miss.
    """

    success: bool
    param_name: str | None = None
    command_name: str | None = None
    message: str | None = None
    valid_values: list[Any] | None = None
    suggested_value: Any = None


class PreRouteResult(BaseModel):
    """A `pre_route` hit: run the command with these arguments and skip the LLM."""

    arguments: dict[str, Any] = Field(default_factory=dict)
    spoken_response: str | None = None


class RequestInformation(BaseModel):
    """Where a call comes from; passed to `run`.

    `refines_tool_call_id` names an earlier call this one changes ("actually make it 20
    minutes" after "set a timer for 10 minutes"): a command that made something with
    that call changes it rather than making a second one.
    """

    voice_command: str = ""
    conversation_id: str | None = None
    node_id: str | None = None
    room: str | None = None
    timezone: str | None = None
    tool_call_id: str | None = None
    refines_tool_call_id: str | None = None


class CommandResponse(BaseModel):
    """What `run` returns. `context_data["message"]` is what gets spoken.

    `llm_wording=True` asks the center to have the LLM word the answer from
    `context_data` even when a message is present.
    """

    success: bool = True
    context_data: dict[str, Any] = Field(default_factory=dict)
    wait_for_input: bool = False
    actions: list[JarvisButton] | None = None
    error_details: str | None = None
    llm_wording: bool = False

    @property
    def message(self) -> str | None:
        """The speakable text: the context's message, else the error details."""
        message = self.context_data.get("message")
        if isinstance(message, str) and message.strip():
            return message
        return self.error_details

    @property
    def is_validation_error(self) -> bool:
        return bool(self.context_data.get("_validation_error"))

    @classmethod
    def success_response(
        cls,
        context_data: dict[str, Any] | None = None,
        wait_for_input: bool = False,
        actions: list[JarvisButton] | None = None,
        message: str | None = None,
        llm_wording: bool = False,
    ) -> CommandResponse:
        data = dict(context_data or {})
        if message is not None:
            data["message"] = message
        return cls(
            success=True,
            context_data=data,
            wait_for_input=wait_for_input,
            actions=actions,
            llm_wording=llm_wording,
        )

    @classmethod
    def follow_up_response(
        cls,
        context_data: dict[str, Any] | None = None,
        actions: list[JarvisButton] | None = None,
        message: str | None = None,
        llm_wording: bool = False,
    ) -> CommandResponse:
        """A success that keeps the conversation open for a follow-up without a wake word."""
        return cls.success_response(
            context_data, wait_for_input=True, actions=actions, message=message,
            llm_wording=llm_wording,
        )

    @classmethod
    def error_response(
        cls, message: str, context_data: dict[str, Any] | None = None
    ) -> CommandResponse:
        data = dict(context_data or {})
        data.setdefault("message", message)
        return cls(success=False, context_data=data, error_details=message)

    @classmethod
    def validation_error(cls, results: list[ValidationResult]) -> CommandResponse:
        """Failed checks, with their valid values, so the LLM can retry or the user be asked."""
        errors = [r for r in results if not r.success] or list(results)
        text = "; ".join(
            r.message or f"Invalid value for '{r.param_name}'" for r in errors
        )
        context: dict[str, Any] = {
            "_validation_error": True,
            "message": text,
            "errors": [
                {
                    "param_name": r.param_name,
                    "message": r.message,
                    "valid_values": r.valid_values,
                }
                for r in errors
            ],
            "valid_values": {
                r.param_name or "": r.valid_values for r in errors if r.valid_values is not None
            },
        }
        return cls(success=False, context_data=context, error_details=text)
