"""What goes wrong with a conversation request, as the API reports it, and what the user
hears when the LLM fails."""

from __future__ import annotations

from jarvis.center.llm.base import (
    LLMBadResponseError,
    LLMError,
    LLMPromptTooLongError,
    LLMTimeoutError,
    LLMUnavailableError,
)

__all__ = [
    "BadRequestError",
    "ConflictError",
    "ConversationNotFoundError",
    "LLMFailed",
    "MalformedRequestError",
    "llm_error_message",
]

LLM_ERROR_MESSAGES: dict[type[LLMError], str] = {
    LLMTimeoutError: "The language model took too long to answer. Please try again.",
    LLMUnavailableError: (
        "I couldn't reach the language model. Please check that it is running and try again."
    ),
    LLMPromptTooLongError: (
        "That is more than the language model can read at once: there are too many commands "
        "or too much conversation for its context. Please start a new conversation or use a "
        "model with a larger context."
    ),
    LLMBadResponseError: (
        "The language model gave an answer I couldn't understand. Please try again."
    ),
}
LLM_ERROR_DEFAULT = "I couldn't reach the language model, so I can't answer that right now."


class ConversationNotFoundError(LookupError):
    """The conversation id was never started on this center (or its database)."""

    def __init__(self, conversation_id: str) -> None:
        super().__init__(
            f"unknown conversation '{conversation_id}': call /api/v0/conversation/start first"
        )
        self.conversation_id = conversation_id


class BadRequestError(ValueError):
    """The request does not fit the conversation's state (e.g. unknown tool_call_ids)."""


class MalformedRequestError(BadRequestError):
    """The body is well-formed JSON but its content is unusable; `field` names the culprit."""

    def __init__(self, field_name: str, message: str) -> None:
        super().__init__(f"{field_name}: {message}")
        self.field = field_name


class ConflictError(RuntimeError):
    """Two requests changed the same conversation at once; the later one must retry."""


class LLMFailed(Exception):
    """The LLM could not answer a turn; the turn ends with `llm_error_message`."""

    def __init__(self, error: LLMError) -> None:
        super().__init__(str(error))
        self.error = error


def llm_error_message(error: LLMError) -> str:
    """What the user hears when the LLM failed with `error`."""
    return next((m for cls, m in LLM_ERROR_MESSAGES.items() if isinstance(error, cls)),
                LLM_ERROR_DEFAULT)
