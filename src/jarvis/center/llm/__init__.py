"""LLM backends and the factory that picks one from the settings.

`JARVIS_LLM_BACKEND` (or `llm_backend` in the settings):
- `embedded` (default): llama.cpp in-process, `jarvis.center.llm.embedded.EmbeddedBackend`;
- `openai`: any OpenAI-compatible `/v1/chat/completions` server (`JARVIS_LLM_BASE_URL`,
  `JARVIS_LLM_MODEL`, `JARVIS_LLM_API_KEY`);
- `scripted`: replays the JSON list of replies in `JARVIS_LLM_SCRIPT` (demos and tests).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from jarvis.center.llm.base import (
    LLMBackend,
    LLMBadResponseError,
    LLMError,
    LLMPromptTooLongError,
    LLMReply,
    LLMRequest,
    LLMTimeoutError,
    LLMToolCall,
    LLMUnavailableError,
    StreamingLLMBackend,
    TextSink,
    complete_streaming,
)

if TYPE_CHECKING:
    from jarvis.center.settings import CenterSettings

__all__ = [
    "BackendConfigError",
    "LLMBackend",
    "LLMBadResponseError",
    "LLMError",
    "LLMPromptTooLongError",
    "LLMReply",
    "LLMRequest",
    "LLMTimeoutError",
    "LLMToolCall",
    "LLMUnavailableError",
    "StreamingLLMBackend",
    "TextSink",
    "complete_streaming",
    "create_backend",
]


class BackendConfigError(ValueError):
    """The chosen backend cannot be built from the settings (missing file, module, ...)."""


def create_backend(settings: CenterSettings | None = None) -> LLMBackend:
    """Build the backend the settings name."""
    if settings is None:
        from jarvis.center.settings import load_settings

        settings = load_settings()
    name = settings.llm_backend
    if name == "openai":
        from jarvis.center.llm.openai import OpenAIBackend

        return OpenAIBackend(
            base_url=settings.llm_base_url,
            model=settings.llm_model,
            api_key=settings.llm_api_key.get_secret_value() if settings.llm_api_key else None,
            timeout=settings.llm_timeout,
        )
    if name == "scripted":
        from jarvis.center.llm.scripted import ScriptedBackend, load_script

        if settings.llm_script is None:
            raise BackendConfigError(
                "the scripted backend needs a script: set JARVIS_LLM_SCRIPT to a JSON file"
            )
        try:
            replies = load_script(settings.llm_script)
        except ValueError as exc:
            raise BackendConfigError(str(exc)) from exc
        return ScriptedBackend(replies, loop=settings.llm_script_loop)
    if name == "embedded":
        return _embedded(settings)
    raise BackendConfigError(f"unknown LLM backend '{name}' (embedded, openai or scripted)")


def _embedded(settings: CenterSettings) -> LLMBackend:
    try:
        module: Any = importlib.import_module("jarvis.center.llm.embedded")
    except ImportError as exc:
        raise BackendConfigError(
            f"the embedded LLM backend is not available ({exc}); install jarvis-assistant"
            "[embedded] or set JARVIS_LLM_BACKEND=openai"
        ) from exc
    cls = module.EmbeddedBackend
    factory = getattr(cls, "from_settings", None)
    return factory(settings) if callable(factory) else cls()
