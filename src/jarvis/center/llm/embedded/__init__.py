"""The embedded LLM backend: a GGUF model run in-process by llama.cpp."""

from jarvis.center.llm.embedded.backend import EmbeddedBackend
from jarvis.center.llm.embedded.options import EmbeddedOptions

__all__ = ["EmbeddedBackend", "EmbeddedOptions"]
