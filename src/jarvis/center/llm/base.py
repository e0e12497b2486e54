"""The LLM backend protocol: chat messages and tools in, assistant text and tool calls out.

Every backend (OpenAI-compatible HTTP, embedded llama.cpp, scripted) implements
`LLMBackend.complete`; one that can hand on its answer's text while the model writes it
also implements `StreamingLLMBackend.stream`. Messages use the OpenAI chat format (role
system / user / assistant / tool; assistant messages may carry `tool_calls`, tool
messages carry `tool_call_id`), because every server Jarvis talks to speaks it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

# Receives the reply's text piece by piece, as the model writes it.
TextSink = Callable[[str], None]


class LLMError(Exception):
    """Base class of every failure a backend reports; the engine turns it into `error`."""


class LLMTimeoutError(LLMError):
    """The backend did not answer within the request's timeout."""


class LLMUnavailableError(LLMError):
    """The backend could not be reached or answered with a server error."""


class LLMPromptTooLongError(LLMError):
    """The prompt (tools + history + utterance) does not fit in the model's context window."""


class LLMBadResponseError(LLMError):
    """The backend answered, but not with something that could be understood."""


@dataclass(frozen=True)
class LLMToolCall:
    """One tool call as the model produced it; `arguments` is the raw JSON text."""

    id: str
    name: str
    arguments: str


@dataclass
class LLMRequest:
    """Everything a backend needs for one completion."""

    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)
    # Whether the model may answer in plain text instead of calling a tool.
    allow_direct_answer: bool = True
    # Set when the engine wants a plain-text reply only (e.g. wording a tool result).
    tools_disabled: bool = False
    # Set when words were refused in place of a call the request means: the same prompt,
    # but the reply must be a call (a backend that can, rules the answer in words out).
    must_call: bool = False
    # Set to a tool's name when the reply must be a call of that tool: the same prompt,
    # the choice made (a backend that can, rules everything else out).
    only_tool: str | None = None
    # Tool name -> how many of its routing keywords the utterance contains, for every tool
    # that declares keywords. A prior a backend may weigh into its tool choice.
    tool_hints: dict[str, float] = field(default_factory=dict)
    # Tool name -> how related the utterance is to the tool's own declaration by meaning
    # (cosine of sentence vectors, see center/meaning). A prior a backend may weigh in.
    tool_relatedness: dict[str, float] = field(default_factory=dict)
    # Tool name -> parameter -> the enum values whose declared synonyms the utterance
    # contains ("next song": music's action "skip"). A backend may favour them.
    choice_hints: dict[str, dict[str, list[str]]] = field(default_factory=dict)
    # The resolved values of the relative dates the utterance names ("tomorrow", "this
    # weekend"), one list per phrase, in the wire format. A backend may restrict date
    # arguments to them; none heard suggests a date argument would be made up.
    date_hints: list[list[str]] = field(default_factory=list)
    # The clock time said ("at 7 pm") as HH:MM, both readings when am/pm was not said.
    time_hints: list[str] = field(default_factory=list)
    # (tool, parameter) the user's last message answers a question about ("What city
    # should I use?" -> "paris"): a backend that can has a call of that tool write it.
    answers: tuple[str, str] | None = None
    # Optional JSON schema the reply text must follow (backends that can, enforce it).
    response_schema: dict[str, Any] | None = None
    timeout: float = 60.0
    max_tokens: int = 512
    temperature: float = 0.0


@dataclass
class LLMReply:
    """What the model said: text, tool calls, or both."""

    content: str | None = None
    tool_calls: list[LLMToolCall] = field(default_factory=list)
    # Backend-specific figures for the trace (tokens, timings); never shown to users.
    usage: dict[str, Any] = field(default_factory=dict)


@runtime_checkable
class LLMBackend(Protocol):
    """A synchronous LLM backend; the center calls it from a worker thread."""

    name: str

    def complete(self, request: LLMRequest) -> LLMReply:
        """Run one completion; raise an `LLMError` subclass on failure."""
        ...


@runtime_checkable
class StreamingLLMBackend(LLMBackend, Protocol):
    """A backend that can also hand on the reply's text while it is being written."""

    def stream(self, request: LLMRequest, on_text: TextSink) -> LLMReply:
        """Like `complete`, calling `on_text` with each piece of the reply's text as it is
        produced. The pieces join to exactly the reply's `content`. A backend that must see
        a text whole before it is final (one it may still rewrite or turn into a call)
        sends no pieces for it; `on_text` is never called once this method has returned
        or raised."""
        ...


def complete_streaming(backend: LLMBackend, request: LLMRequest, on_text: TextSink) -> LLMReply:
    """`backend.stream` when the backend can stream, else `backend.complete`."""
    if isinstance(backend, StreamingLLMBackend):
        return backend.stream(request, on_text)
    return backend.complete(request)
