"""The HTTP API between node and center, as pydantic models shared by both sides."""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = [
    "API_PREFIX",
    "AvailableCommand",
    "CommandParameterSpec",
    "ContinueRequest",
    "ConversationStartRequest",
    "ConversationStartResponse",
    "ErrorResponse",
    "LocalTurn",
    "NodeContext",
    "RequestInformationModel",
    "StopReason",
    "ToolCall",
    "ToolCallFunction",
    "ToolCallingResponse",
    "ToolOutput",
    "ToolResult",
    "ValidationRequest",
    "VoiceCommandRequest",
    "WhoAmIResponse",
]

API_PREFIX = "/api/v0"

StopReason = Literal["tool_calls", "validation_required", "complete", "error"]

# Limits that keep one request from exhausting a small center.
MAX_TEXT = 4_000
MAX_TOOLS = 200
# Fast-path exchanges one voice command may carry, and the JSON size of each one's
# arguments and output: context for a follow-up, not a transcript.
MAX_LOCAL_TURNS = 5
MAX_LOCAL_JSON = 8_000
# OpenAI's rule for function names; a name the LLM could not have called is refused.
TOOL_NAME_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
# What an IANA zone name looks like ("America/Argentina/Buenos_Aires", "Etc/GMT+5"); the
# name is checked before it reaches the file system ("America" is a directory there).
_ZONE_NAME = re.compile(r"[A-Za-z0-9_+-]+(?:/[A-Za-z0-9_+-]+)*")
_MAX_ZONE = 64
# Control characters (C0, DEL, C1) and lone surrogates: no id carries them, and text
# carries none but tab and line breaks. PostgreSQL cannot store a NUL, UTF-8 no surrogate.
_ID_REFUSED = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff]")
_TEXT_REFUSED = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\ud800-\udfff]")
_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _refuse(value: str, refused: re.Pattern[str], what: str) -> str:
    found = refused.search(value)
    if found is not None:
        raise ValueError(f"must not contain {what} (found U+{ord(found.group()):04X})")
    return value


def _plain_id(value: str) -> str:
    return _refuse(value, _ID_REFUSED, "control characters")


def _plain_text(value: str) -> str:
    return _refuse(value, _TEXT_REFUSED, "control characters other than tab and line breaks")


# Deeper JSON than any request needs; far below where recursive code (validation,
# serialisation) would run out of stack on a small body of brackets.
MAX_JSON_DEPTH = 64

# A node of parsed JSON while it is walked: (value, key in its parent, parent node, depth).
_Node = tuple[Any, Any, Any, int]


def _path(node: _Node) -> str:
    keys = []
    while node is not None:
        _value, key, node, _depth = node
        if key is not None:
            keys.append(str(key))
    return ".".join(reversed(keys)) or "body"


def _json_problem(data: Any) -> str | None:
    """What makes parsed JSON unusable, if anything: too deep, or a lone surrogate in a text
    (UTF-8 cannot encode it, so nothing could store or send it). Walked without recursion."""
    stack: list[_Node] = [(data, None, None, 0)]
    while stack:
        node = stack.pop()
        value, _key, _parent, depth = node
        if isinstance(value, str):
            if _SURROGATE.search(value):
                return f"{_path(node)}: text must be valid Unicode (a lone surrogate was found)"
            continue
        if isinstance(value, dict):
            items: Any = value.items()
        elif isinstance(value, list):
            items = enumerate(value)
        else:
            continue
        if depth >= MAX_JSON_DEPTH:
            return f"{_path(node)}: nested deeper than {MAX_JSON_DEPTH} levels"
        for key, item in items:
            if isinstance(key, str) and _SURROGATE.search(key):
                return f"{_path(node)}: a key must be valid Unicode (a lone surrogate was found)"
            stack.append((item, key, node, depth + 1))
    return None


# Ids (conversations, tool calls) and labels (node, room) refuse every control character;
# what people say or read refuses all but tab and line breaks.
Identifier = Annotated[str, Field(min_length=1, max_length=200), AfterValidator(_plain_id)]
Text = Annotated[str, AfterValidator(_plain_text)]
Label = Annotated[str, Field(max_length=200), AfterValidator(_plain_id)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _Request(_Model):
    """A request body: checked as a whole for JSON nothing downstream could take."""

    @model_validator(mode="before")
    @classmethod
    def _usable_json(cls, data: Any) -> Any:
        problem = _json_problem(data)
        if problem is not None:
            raise ValueError(problem)
        return data


class NodeContext(_Model):
    timezone: str = "UTC"
    node_id: Label | None = None
    room: Label | None = None

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str) -> str:
        shown = value if len(value) <= _MAX_ZONE else value[:_MAX_ZONE] + "..."
        problem = f"unknown IANA timezone {shown!r}: expected a name like 'Europe/Berlin'"
        if len(value) > _MAX_ZONE or not _ZONE_NAME.fullmatch(value):
            raise ValueError(problem)
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
            raise ValueError(problem) from exc
        return value


class CommandParameterSpec(_Model):
    """One parameter in `available_commands` (the richer form with type strings)."""

    name: str
    type: str = "string"
    required: bool = False
    description: str | None = None
    enum_values: list[str] | None = None
    # Enum value -> words people say for it; the center weighs them when a value is chosen.
    enum_synonyms: dict[str, list[str]] | None = None
    refinable: bool = False
    default: Any = None
    example: Any = None
    # Bounds of a number (JSON schema's `minimum` / `maximum`); None when not declared.
    minimum: int | float | None = None
    maximum: int | float | None = None


class AvailableCommand(_Model):
    """`IJarvisCommand.get_command_schema()` as sent by the node."""

    command_name: str
    description: str = ""
    parameters: list[CommandParameterSpec] = Field(default_factory=list)
    examples: list[dict[str, Any]] = Field(default_factory=list)
    rules: list[str] = Field(default_factory=list)
    critical_rules: list[str] = Field(default_factory=list)
    antipatterns: list[dict[str, Any]] = Field(default_factory=list)
    allow_direct_answer: bool = False
    keywords: list[str] = Field(default_factory=list)


class ConversationStartRequest(_Request):
    conversation_id: Identifier
    node_context: NodeContext = Field(default_factory=NodeContext)
    client_tools: list[dict[str, Any]] = Field(default_factory=list, max_length=MAX_TOOLS)
    available_commands: list[AvailableCommand] | None = Field(default=None, max_length=MAX_TOOLS)


class ConversationStartResponse(_Model):
    status: Literal["success"] = "success"
    conversation_id: str


class WhoAmIResponse(_Model):
    """The node a key belongs to; `authenticated` is false when the center runs without keys."""

    node: str | None = None
    authenticated: bool = True


class ToolOutput(_Model):
    success: bool = True
    message: str | None = None
    context: dict[str, Any] | None = None
    # Jarvis extensions: the command wants the LLM to word the answer from `context`;
    # the command keeps the conversation open for a follow-up.
    llm_wording: bool = False
    wait_for_input: bool = False


def _check_small_json(value: Any, what: str) -> None:
    """Refuse what JSON cannot carry (NaN, objects) or what would crowd the LLM's context."""
    try:
        text = json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what} must be plain JSON: {exc}") from exc
    if len(text) > MAX_LOCAL_JSON:
        raise ValueError(f"{what} is {len(text)} characters of JSON; the limit is {MAX_LOCAL_JSON}")


class LocalTurn(_Model):
    """One exchange the node answered itself (pre-routed, no LLM) before this utterance."""

    voice_command: Text = Field(min_length=1, max_length=MAX_TEXT)
    tool_name: str = Field(pattern=TOOL_NAME_PATTERN)
    # The node's id of the call: a later call that refines it names this id in `refines`.
    tool_call_id: Identifier | None = None
    # The arguments pre_route gave the command: never secrets, which are read inside it.
    arguments: dict[str, Any] = Field(default_factory=dict)
    output: ToolOutput
    # What the user heard (a pre-route's spoken_response, or the command's message).
    assistant_message: Text | None = Field(default=None, max_length=MAX_TEXT)

    @field_validator("arguments")
    @classmethod
    def _arguments_json(cls, value: dict[str, Any]) -> dict[str, Any]:
        _check_small_json(value, "arguments")
        return value

    @field_validator("output")
    @classmethod
    def _output_json(cls, value: ToolOutput) -> ToolOutput:
        _check_small_json({"message": value.message, "context": value.context}, "output")
        return value


class VoiceCommandRequest(_Request):
    voice_command: Text = Field(min_length=1, max_length=MAX_TEXT)
    conversation_id: Identifier
    node_context: NodeContext | None = None
    # Fast-path exchanges since the node last spoke to the center, oldest first: the center
    # puts them in the history before `voice_command`, so "that" in a follow-up is known.
    local_turns: list[LocalTurn] | None = Field(default=None, max_length=MAX_LOCAL_TURNS)


class ToolResult(_Model):
    tool_call_id: Identifier
    output: ToolOutput


class ContinueRequest(_Request):
    conversation_id: Identifier
    tool_results: list[ToolResult] | None = None
    validation_response: Text | None = Field(default=None, max_length=MAX_TEXT)


class ToolCallFunction(_Model):
    name: str
    arguments: str  # a JSON object as text, as in the OpenAI API

    def parsed_arguments(self) -> dict[str, Any]:
        value = json.loads(self.arguments or "{}")
        if not isinstance(value, dict):
            raise ValueError("tool call arguments are not a JSON object")
        return value


class ToolCall(_Model):
    id: str
    type: Literal["function"] = "function"
    function: ToolCallFunction
    # A Jarvis extension: the id of the earlier call this one changes ("actually make it
    # 20 minutes"); the command replaces what that call made instead of making another.
    refines: str | None = None


class ValidationRequest(_Model):
    question: str
    parameter_name: str | None = None
    options: list[str] | None = None
    tool_call_id: str | None = None
    # The tool whose value is asked for, when the question is about one tool's parameter.
    tool_name: str | None = None


class RequestInformationModel(_Model):
    voice_command: str = ""
    conversation_id: str


class ToolCallingResponse(_Model):
    commands: list[Any] = Field(default_factory=list)
    request_information: RequestInformationModel
    stop_reason: StopReason
    assistant_message: str | None = None
    tool_calls: list[ToolCall] | None = None
    validation_request: ValidationRequest | None = None

    @property
    def conversation_id(self) -> str:
        return self.request_information.conversation_id


class ErrorResponse(_Model):
    error: str
    detail: Any = None
