"""The embedded LLM backend: a small GGUF model run in-process with llama-cpp-python."""

from jarvis.center.llm.embedded.backend import EmbeddedBackend

__all__ = ["EmbeddedBackend"]
