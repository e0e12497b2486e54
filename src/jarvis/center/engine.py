"""The tool-calling engine: conversation turns in, stop reasons out. No web framework here.

One request is one `_Turn`: it reads the conversation, talks to the LLM (running server
tools and validation retries in between), and writes the new messages, the new pending
state and a trace in one store transaction before the response goes back.

Pending states kept with the conversation:
- `{"kind": "tool_calls", "calls": [{"id", "name"}], "node_failures": n}`: the node runs
  these and sends their results;
- `{"kind": "validation", "question", "parameter_name", "options", "tool_call_id",
  "node_failures": n}`: the user is asked, the answer comes back as `validation_response`.

A streamed turn (`events`, see turn_events.py) runs the same way. The only differences:
the LLM's wording of tool results reaches the events while it is written (no check
applies to it: the tools ran), and the tool calls or the rest of the answer follow once
the turn is stored. An answer given in place of a call is checked whole first, since
one claiming sentence (claims.py) turns all of it into a refusal.
"""

from __future__ import annotations

import json
import logging
import os
import re
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from jarvis.center import dates
from jarvis.center.acting import acts, declared_actions
from jarvis.center.claims import (
    REFUSAL,
    asks_for_something,
    asks_for_things,
    asks_the_user_back,
    declines,
    echoes_a_declaration,
    lists_a_tools_words,
    offers_help,
    promises_a_deed,
    promises_action,
    restates_an_example,
    settles_the_users_question,
    states_tool_facts,
    unsaid_specifics,
    writes_a_call,
)
from jarvis.center.evocation import (
    EVOKED_BY_MEANING,
    among_the_nearest,
    distinct_values,
    evokes,
    values_heard,
    without_names,
)
from jarvis.center.grounding import (
    ISO_DAY,
    derived_numbers,
    free_text,
    repeated_values,
    said_in_full,
    unsaid_optional,
    unsaid_required,
)
from jarvis.center.keywords import (
    asks_a_question,
    asks_how_much,
    asks_how_to,
    description_hints,
    description_words,
    keyword_hints,
    opens_with,
)
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
    complete_streaming,
)
from jarvis.center.local_turns import local_turn_messages
from jarvis.center.lookup_first import lookup_instead, search_instead, trade_instead
from jarvis.center.meaning import Relatedness
from jarvis.center.prompt import (
    compact_dates_message,
    compact_system_prompt,
    context_message,
    system_prompt,
)
from jarvis.center.ratelimit import RateLimiter
from jarvis.center.refine import refinement
from jarvis.center.remarks import only_remarks
from jarvis.center.server_tools import ASK_USER, SERVER_TOOL_NAMES, SERVER_TOOLS, run_server_tool
from jarvis.center.spoken_numbers import digits_for_numbers
from jarvis.center.store import (
    ConcurrentUpdateError,
    ConversationOwnedError,
    ConversationRecord,
    Store,
    TurnWrite,
)
from jarvis.center.toolspec import ToolCatalog, build_catalog, catalog_for
from jarvis.center.turn_events import TurnEvents
from jarvis.center.validation import CallProblem, check_call, retry_message
from jarvis.protocol import (
    ContinueRequest,
    ConversationStartRequest,
    RequestInformationModel,
    ToolCall,
    ToolCallFunction,
    ToolCallingResponse,
    ToolResult,
    ValidationRequest,
    VoiceCommandRequest,
)

__all__ = [
    "BadRequestError",
    "ConflictError",
    "ConversationNotFoundError",
    "Engine",
    "EngineConfig",
    "MalformedRequestError",
]

log = logging.getLogger(__name__)

# Longest tool result (JSON text) put into the prompt; a small model has a small context.
MAX_TOOL_CONTENT = 8_000
# The tools a request is nearest in meaning that a turn's trace lists.
_RELATED_TRACED = 3

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


def default_clock() -> Callable[[], datetime]:
    """The center's clock: real time, or the fixed `JARVIS_FAKE_NOW` (benchmarks and tests).

    `JARVIS_FAKE_NOW` is an ISO-8601 date-time with offset, e.g. 2026-01-14T10:00:00-05:00;
    every turn then sees that instant, so relative dates resolve the same on every run.
    """
    fake = os.environ.get("JARVIS_FAKE_NOW", "").strip()
    if not fake:
        return lambda: datetime.now(UTC)
    try:
        fixed = datetime.fromisoformat(fake)
    except ValueError as exc:
        raise ValueError(f"JARVIS_FAKE_NOW={fake!r} is not an ISO-8601 date-time") from exc
    if fixed.tzinfo is None:
        raise ValueError(f"JARVIS_FAKE_NOW={fake!r} needs a UTC offset")
    return lambda: fixed


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


@dataclass
class EngineConfig:
    max_retries: int = 2
    max_tool_loops: int = 4
    direct_tool_message: bool = True
    history_messages: int = 40
    llm_timeout: float = 60.0
    llm_max_tokens: int = 512
    # Spoken numbers as digits in the user's messages ("ninety minutes" -> "90 minutes").
    digits_for_numbers: bool = True


class _LLMFailed(Exception):
    def __init__(self, error: LLMError) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass
class _Turn:
    """The working state of one request."""

    record: ConversationRecord
    endpoint: str
    voice_command: str
    catalog: ToolCatalog
    now: datetime
    started: float
    new_messages: list[dict[str, Any]] = field(default_factory=list)
    # Failed attempts and retry instructions: shown to the LLM in this request only.
    scratch: list[dict[str, Any]] = field(default_factory=list)
    history: list[dict[str, Any]] | None = None
    node_context: dict[str, Any] | None = None
    node_failures: int = 0
    # (tool, parameter) pairs already asked for in this exchange: never asked twice.
    asked: set[tuple[str, str]] = field(default_factory=set)
    # Call id -> keys a refinement carried over from the previous call (see refine.py).
    carried: dict[str, frozenset[str]] = field(default_factory=dict)
    # (tool, id of the call it changes) when this turn refines the last call.
    refines: tuple[str, str] | None = None
    # Set for a streamed request: where its tool calls and sentences go.
    events: TurnEvents | None = None
    # Text -> tool name -> relatedness by meaning (see center/meaning), once per text.
    related: dict[str, dict[str, float]] = field(default_factory=dict)
    # The utterance's keyword and choice hints, read once for every LLM request of the turn.
    tool_hints: dict[str, float] | None = None
    choice_hints: dict[str, dict[str, list[str]]] | None = None
    trace: dict[str, Any] = field(
        default_factory=lambda: {"llm_calls": [], "retries": [], "server_tools": [],
                                 "tool_calls": [], "tool_results": [], "stages_ms": {}}
    )

    def stage(self, name: str, since: float) -> float:
        now = time.perf_counter()
        stages = self.trace["stages_ms"]
        stages[name] = round(stages.get(name, 0.0) + (now - since) * 1000, 3)
        return now


def _new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:16]}"


def _assistant_tool_message(calls: list[LLMToolCall], content: str | None) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": content,
        "tool_calls": [
            {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
            for c in calls
        ],
    }


def _tool_message(call_id: str, name: str, payload: Any) -> dict[str, Any]:
    content = json.dumps(payload, ensure_ascii=False, default=str)
    if len(content) > MAX_TOOL_CONTENT:
        content = content[:MAX_TOOL_CONTENT] + " ...(truncated)"
    return {"role": "tool", "tool_call_id": call_id, "name": name, "content": content}


def _refined_id(turn: _Turn, call: LLMToolCall, calls: list[LLMToolCall]) -> str | None:
    """The id of the call `call` changes: a refinement's one call to the refined tool (by
    name, so a retried call still says it)."""
    if turn.refines is None or call.name != turn.refines[0]:
        return None
    return turn.refines[1] if sum(c.name == call.name for c in calls) == 1 else None


def _unique_ids(calls: list[LLMToolCall]) -> list[LLMToolCall]:
    """Give every call a distinct, non-empty id (some servers repeat or omit them)."""
    seen: set[str] = set()
    out = []
    for call in calls:
        call_id = call.id if call.id and call.id not in seen else _new_call_id()
        seen.add(call_id)
        out.append(LLMToolCall(call_id, call.name, call.arguments or "{}"))
    return out


def _parameter_question(param: str | None, options: Sequence[str] | None = None,
                        kind: str | None = None) -> str:
    """The spoken question for one parameter's value ("Which account type: checking or
    savings?")."""
    words = (param or "value").replace("_", " ")
    if options:
        shown = list(options[:8])
        choices = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]
        return f"Which {words}: {choices}?"
    if kind == "bool":
        return f"{words[:1].upper()}{words[1:]}: yes or no?"
    return f"What {words} should I use?"


# Validation problems that only say a required value is absent: asked for, never retried
# (a retry would have the model make one up).
_ABSENT = ("this required parameter is missing", "this required parameter is empty")


def _check_continue_shape(request: ContinueRequest) -> None:
    """A continue carries exactly one of a non-empty `tool_results` or an answer."""
    results, answer = request.tool_results, request.validation_response
    if results is not None and answer is not None:
        raise MalformedRequestError(
            "tool_results", "send either tool_results or validation_response, not both"
        )
    if results is None and answer is None:
        raise MalformedRequestError(
            "tool_results", "send tool_results or validation_response (neither was given)"
        )
    if results is not None and not results:
        raise MalformedRequestError("tool_results", "must hold at least one result")
    if answer is not None and not answer.strip():
        raise MalformedRequestError("validation_response", "must not be empty")


class Engine:
    """Runs conversations against an LLM backend and a store."""

    def __init__(
        self,
        store: Store,
        backend: LLMBackend,
        config: EngineConfig | None = None,
        clock: Callable[[], datetime] | None = None,
        on_turn: Callable[[TurnWrite], None] | None = None,
        limiter: RateLimiter | None = None,
        relatedness: Relatedness | None = None,
    ) -> None:
        """`on_turn` sees every turn once it is committed (metrics); `relatedness` weighs
        what the user said against each tool's declaration by meaning (None: words only)."""
        self.store = store
        self.relatedness = relatedness
        self.on_turn = on_turn
        self.backend = backend
        self.config = config or EngineConfig()
        self.limiter = limiter
        self._clock = clock or default_clock()
        # Small local models get the compact prompt (see prompt.compact_system_prompt).
        self.compact = getattr(backend, "prompt_style", "full") == "compact"
        # A backend that fills date arguments from the date hints needs no date table.
        self.date_table = not getattr(backend, "reads_date_hints", False)

    # --- endpoints --------------------------------------------------------------------
    def start(self, request: ConversationStartRequest, node: str | None = None) -> bool:
        """Register (or replace) a conversation's tools; True when it is new.

        `node`: the authenticated node, which owns the conversation (None: no owner).
        """
        self._admit(node or request.node_context.node_id)
        commands = (
            [c.model_dump() for c in request.available_commands]
            if request.available_commands is not None
            else None
        )
        try:
            catalog = build_catalog(request.client_tools, commands)
        except (ValueError, KeyError, TypeError) as exc:
            field_name = "available_commands" if commands else "client_tools"
            raise MalformedRequestError(field_name, f"invalid tools: {exc}") from exc
        clashing = sorted(set(catalog.tools) & SERVER_TOOL_NAMES)
        if clashing:
            raise MalformedRequestError(
                "client_tools",
                f"tool name(s) {', '.join(clashing)} are reserved for the center's own tools",
            )
        try:
            created = self.store.start(
                request.conversation_id,
                request.node_context.model_dump(),
                request.client_tools,
                commands,
                owner=node,
            )
        except ConversationOwnedError as exc:
            raise ConversationNotFoundError(request.conversation_id) from exc
        except ConcurrentUpdateError as exc:
            raise ConflictError(
                f"conversation '{request.conversation_id}' was started by another request "
                "at the same time; send this request again"
            ) from exc
        self._warm_prefix(request.conversation_id)
        return created

    def _warm_prefix(self, conversation_id: str) -> None:
        """Have a backend that can (embedded) read the stable prompt prefix in the background."""
        warm = getattr(self.backend, "warm", None)
        if not callable(warm):
            return
        record = self.store.load(conversation_id)
        if record is None:
            return
        catalog = catalog_for(record.tools_key, record.client_tools, record.available_commands)
        turn = _Turn(record, "start", "", catalog, self._clock(), time.perf_counter())
        messages = self._messages(turn, with_history=False)
        prefix = messages if self.compact else messages[:-1]

        def run() -> None:
            try:
                warm(prefix, self._tools(turn), allow_direct_answer=True)
            except Exception as exc:  # a failed warm-up only costs the first request time
                log.info("could not warm the LLM prefix: %s", exc)

        threading.Thread(target=run, name="llm-warm", daemon=True).start()

    def command(
        self, request: VoiceCommandRequest, node: str | None = None,
        events: TurnEvents | None = None,
    ) -> ToolCallingResponse:
        """A new utterance in a conversation (of `node`, when authenticated); `events`
        streams the turn as it goes."""
        turn = self._begin(request.conversation_id, node, "command", request.voice_command)
        turn.events = events
        # Kept in the trace too: a failed turn writes no messages, and the console shows it.
        turn.trace["voice_command"] = request.voice_command
        if request.node_context is not None:
            turn.node_context = request.node_context.model_dump()
        self._abandon_pending(turn)
        # What the node answered itself comes first, so a follow-up's "that" has a referent.
        turn.new_messages.extend(
            local_turn_messages(request.local_turns, turn.catalog.tools, self._heard))
        turn.new_messages.append({"role": "user", "content": self._heard(request.voice_command)})
        return self._finish(turn, lambda: self._infer(turn, first=self._refined(turn)))

    def continue_(
        self, request: ContinueRequest, node: str | None = None,
        events: TurnEvents | None = None,
    ) -> ToolCallingResponse:
        """Tool results from the node, or the user's answer to a clarification question
        (in a conversation of `node`, when authenticated); `events` streams the turn."""
        _check_continue_shape(request)
        record = self._load(request.conversation_id, node)
        turn = self._begin_from(record, node, "continue", record.voice_command)
        turn.events = events
        pending = record.pending or {}
        waiting = pending.get("kind")
        if request.tool_results is not None:
            if waiting == "validation":
                raise BadRequestError("the conversation waits for the user's validation_response")
            self._accept_results(turn, pending, request.tool_results)
            return self._finish(turn, lambda: self._after_results(turn, request.tool_results))
        if waiting != "validation":
            raise BadRequestError(
                "no question is waiting for a validation_response"
                + ("; the conversation waits for tool_results" if waiting == "tool_calls" else
                   "; send a new utterance to /api/v0/voice/command")
            )
        answer = (request.validation_response or "").strip()
        # The user's answer is new information: the node's failure count starts again.
        turn.asked = {(str(t), str(p)) for t, p in pending.get("asked", [])}
        turn.new_messages.append({"role": "user", "content": self._heard(answer)})
        turn.trace["validation_response"] = answer
        return self._finish(turn, lambda: self._infer(turn))

    def _heard(self, text: str) -> str:
        """What the user said as the LLM reads it (and the history keeps it)."""
        return digits_for_numbers(text) if self.config.digits_for_numbers else text

    # --- request plumbing -------------------------------------------------------------
    def _load(self, conversation_id: str, node: str | None) -> ConversationRecord:
        """The conversation; another node's is as unknown as one never started."""
        record = self.store.load(conversation_id)
        if record is None or (node is not None and record.owner != node):
            raise ConversationNotFoundError(conversation_id)
        return record

    def _begin(
        self, conversation_id: str, node: str | None, endpoint: str, voice_command: str
    ) -> _Turn:
        return self._begin_from(self._load(conversation_id, node), node, endpoint, voice_command)

    def _admit(self, node_id: Any) -> None:
        """Count a request against its node's rate limit (RateLimitedError when over it)."""
        if self.limiter is not None:
            self.limiter.admit(node_id if isinstance(node_id, str) and node_id else "")

    def _begin_from(
        self, record: ConversationRecord, node: str | None, endpoint: str, voice_command: str
    ) -> _Turn:
        started = time.perf_counter()
        # The rate limit counts per authenticated node; without keys, per declared node_id.
        self._admit(node or record.node_context.get("node_id"))
        try:
            catalog = catalog_for(record.tools_key, record.client_tools, record.available_commands)
        except (ValueError, KeyError, TypeError) as exc:  # stored by an older, laxer center
            raise BadRequestError(f"the conversation's tools are invalid: {exc}") from exc
        return _Turn(record, endpoint, voice_command, catalog, self._clock(), started)

    def _finish(
        self, turn: _Turn, body: Callable[[], tuple[ToolCallingResponse, dict[str, Any] | None]]
    ) -> ToolCallingResponse:
        try:
            response, pending = body()
            update = True
        except _LLMFailed as failed:
            # The conversation stays exactly as it was, so the same request can be retried.
            error = failed.error
            message = next(
                (m for cls, m in LLM_ERROR_MESSAGES.items() if isinstance(error, cls)),
                LLM_ERROR_DEFAULT,
            )
            turn.trace["error"] = f"{type(error).__name__}: {error}"
            response, pending, update = self._response(turn, "error", message), None, False
        write = TurnWrite(
            endpoint=turn.endpoint,
            new_messages=turn.new_messages,
            pending=pending,
            voice_command=turn.voice_command if turn.endpoint == "command" else None,
            node_context=turn.node_context,
            stop_reason=response.stop_reason,
            duration_ms=round((time.perf_counter() - turn.started) * 1000, 3),
            trace=turn.trace,
            update_conversation=update,
        )
        try:
            self.store.commit(turn.record, write)
        except ConcurrentUpdateError as exc:
            raise ConflictError(
                f"conversation '{turn.record.id}' was changed by another request; "
                "send this request again"
            ) from exc
        if self.on_turn is not None:
            try:
                self.on_turn(write)
            except Exception:  # the turn is committed: its answer must still go back
                log.exception("the turn observer failed")
        if turn.events is not None:
            turn.events.finish(response)
        return response

    def _response(
        self,
        turn: _Turn,
        stop_reason: str,
        message: str | None = None,
        calls: list[LLMToolCall] | None = None,
        validation: ValidationRequest | None = None,
    ) -> ToolCallingResponse:
        return ToolCallingResponse(
            request_information=RequestInformationModel(
                voice_command=turn.voice_command, conversation_id=turn.record.id
            ),
            stop_reason=stop_reason,  # type: ignore[arg-type]
            assistant_message=message,
            tool_calls=(
                [
                    ToolCall(id=c.id, function=ToolCallFunction(name=c.name, arguments=c.arguments),
                             refines=_refined_id(turn, c, calls))
                    for c in calls
                ]
                if calls
                else None
            ),
            validation_request=validation,
        )

    def _abandon_pending(self, turn: _Turn) -> None:
        """Close tool calls the node never answered, so the history stays well-formed."""
        pending = turn.record.pending or {}
        if pending.get("kind") != "tool_calls":
            return
        for call in pending.get("calls", []):
            turn.new_messages.append(
                _tool_message(call["id"], call["name"],
                              {"success": False, "message": "Not run: the user moved on."})
            )
        turn.trace["abandoned_tool_calls"] = [c["id"] for c in pending.get("calls", [])]

    # --- tool results -----------------------------------------------------------------
    def _accept_results(
        self, turn: _Turn, pending: dict[str, Any], results: list[ToolResult]
    ) -> None:
        expected = {c["id"]: c["name"] for c in pending.get("calls", [])} if (
            pending.get("kind") == "tool_calls") else {}
        ids = [r.tool_call_id for r in results]
        unknown = [i for i in ids if i not in expected]
        if unknown:
            waiting = ", ".join(expected) or "none"
            raise BadRequestError(
                f"unknown tool_call_id(s): {', '.join(unknown)}; awaiting results for: {waiting}"
            )
        if len(set(ids)) != len(ids):
            raise BadRequestError("a tool_call_id appears more than once in tool_results")
        missing = [i for i in expected if i not in ids]
        if missing:
            raise BadRequestError(f"tool results missing for tool_call_id(s): {', '.join(missing)}")
        turn.node_failures = int(pending.get("node_failures", 0))
        by_id = {r.tool_call_id: r for r in results}
        for call_id, name in expected.items():
            output = by_id[call_id].output
            payload: dict[str, Any] = {"success": output.success}
            if output.message:
                payload["message"] = output.message
            if output.context:
                payload["context"] = output.context
            turn.new_messages.append(_tool_message(call_id, name, payload))
            turn.trace["tool_results"].append(
                {"id": call_id, "name": name, "success": output.success,
                 "validation_error": _is_validation_error(output.context)}
            )

    def _after_results(
        self, turn: _Turn, results: list[ToolResult]
    ) -> tuple[ToolCallingResponse, dict[str, Any] | None]:
        failed_validation = [r for r in results if _is_validation_error(r.output.context)]
        if failed_validation:
            turn.node_failures += 1
            if turn.node_failures > self.config.max_retries:
                return self._ask_after_node_failures(turn, failed_validation)
            turn.trace["retries"].append(
                {"source": "node", "attempt": turn.node_failures,
                 "tool_call_ids": [r.tool_call_id for r in failed_validation]}
            )
            return self._infer(turn, node_errors=_node_errors(failed_validation))
        if self.config.direct_tool_message and len(results) == 1:
            output = results[0].output
            if output.message and output.message.strip() and not output.llm_wording:
                turn.trace["direct_message"] = True
                return self._complete(turn, output.message.strip())
        reply = self._call_llm(turn, tools_disabled=True)
        text = (reply.content or "").strip()
        if not text:
            # The model said nothing: speak what the tools said rather than silence.
            text = " ".join(r.output.message for r in results if r.output.message) or (
                "Done." if all(r.output.success for r in results) else "That didn't work."
            )
        return self._complete(turn, text)

    def _ask_after_node_failures(
        self, turn: _Turn, failed: list[ToolResult]
    ) -> tuple[ToolCallingResponse, dict[str, Any] | None]:
        errors = _node_errors(failed)
        params = {e.get("param_name") for e in errors if e.get("param_name")}
        if len(params) == 1:
            param = params.pop()
            options = next(
                (e.get("valid_values") for e in errors if e.get("valid_values")), None
            )
            values = [str(o) for o in options] if options else None
            call_id = failed[0].tool_call_id
            return self._ask_user(turn, _parameter_question(param, values), param, values,
                                  call_id, _call_name(turn, call_id))
        message = next((r.output.message for r in failed if r.output.message), None)
        return self._error(turn, message or "I couldn't get that command right. Please rephrase.")

    # --- refinable follow-ups (refine.py) ----------------------------------------------
    def _refined(self, turn: _Turn) -> LLMReply | None:
        """The last call again with the values this follow-up changes; None when the
        utterance is no change of it (then the LLM reads it as usual)."""
        if turn.history is None:
            since = time.perf_counter()
            turn.history = self.store.history(turn.record)
            turn.stage("history", since)
        found = refinement(
            [*turn.history, *turn.new_messages[:-1]], turn.catalog.tools,
            turn.new_messages[-1]["content"],
            ask=lambda messages, tools: self._call_llm(turn, focus=(messages, tools)),
            names_another=lambda name: self._names_another_tool(turn, name))
        if found is None:
            return None
        call_id = _new_call_id()
        turn.carried[call_id] = found.carried
        turn.trace["refined"] = {"tool": found.name, "changed": found.changed}
        if found.refines:
            turn.refines = (found.name, found.refines)
        return LLMReply(tool_calls=[LLMToolCall(
            call_id, found.name, json.dumps(found.arguments, ensure_ascii=False))])

    def _names_another_tool(self, turn: _Turn, name: str) -> bool:
        """Whether the words point at another command more than at `name` (its keywords,
        or a value of its own choices, count for it)."""
        hints = self._tool_hints(turn)
        own = hints.get(name, 0.0) + len(self._choice_hints(turn).get(name, {}))
        return any(v > own for other, v in hints.items() if other != name)

    # --- LLM loop ---------------------------------------------------------------------
    def _infer(
        self, turn: _Turn, node_errors: list[dict[str, Any]] | None = None,
        first: LLMReply | None = None,
    ) -> tuple[ToolCallingResponse, dict[str, Any] | None]:
        """Call the LLM until it answers, asks the user, or makes valid client calls;
        `first` stands for the first reply when it is known already (a refinement)."""
        retries = 0
        loops = 0
        pressed = looked = False
        while True:
            reply, first = (first, None) if first is not None else (self._call_llm(turn), None)
            calls = _unique_ids(reply.tool_calls)
            if not calls and not pressed and self._words_for_a_call(turn, reply, node_errors):
                # It answered what a tool does ("Yes, I can call you a cab now.").
                pressed = True
                first = self._the_call_meant(turn, reply)
                if first is not None:
                    continue
            if not calls:
                return self._answered(turn, reply, node_errors)
            asked = next((c for c in calls if c.name == ASK_USER), None)
            if asked is not None:
                return self._llm_asks_user(turn, asked)
            server = [c for c in calls if c.name in SERVER_TOOL_NAMES]
            if server:
                loops += 1
                if loops > self.config.max_tool_loops:
                    return self._error(turn, "I got stuck working that out. Please rephrase.")
                self._run_server_tools(turn, server)
                continue
            calls, problems = self._check_calls(turn, calls)
            unasked = None if pressed else self._not_asked_for(turn, calls)
            if unasked is not None:
                # "is a sedan better than a hatchback", "the pizza was delicious": a
                # question or a remark is answered in words.
                pressed = True
                turn.trace[unasked] = [c.name for c in calls]
                first = self._call_llm(turn, tools_disabled=True)
                continue
            ask = self._value_to_ask(turn, calls, problems)
            # The call asked about, else a lone valid call about to be sent.
            target = (ask[0], ask[2]) if ask is not None else (
                (calls[0].name, calls[0].id) if len(calls) == 1 and not problems else None)
            arguments = _arguments_of(calls, target[1]) if target is not None else None
            if not looked and target is not None:
                lookup = self._lookup_first(turn, target[0], arguments, asking=ask is not None)
                if lookup is not None:
                    looked, first = True, lookup
                    continue
            if ask is not None:
                return self._ask_for(turn, *ask, arguments=arguments)
            if not problems:
                return self._send_calls(turn, calls, reply)
            retries += 1
            _trace_retry(turn, calls, problems, retries)
            if retries > self.config.max_retries:
                return self._give_up(turn, problems)
            self._add_retry(turn, calls, problems, retries)

    def _the_call_meant(self, turn: _Turn, reply: LLMReply) -> LLMReply | None:
        """The same request once more, for the call an answer in words stands for, less
        the values in it the user did not say (asked for next, as in any call)."""
        turn.trace["answer_for_a_call"] = (reply.content or "")[:200]
        again = self._call_llm(turn, must_call=True)
        return self._said_only(turn, again)

    def _send_calls(
        self, turn: _Turn, calls: list[LLMToolCall], reply: LLMReply
    ) -> tuple[ToolCallingResponse, dict[str, Any] | None]:
        """Valid calls go to the node, those of tools the user named (none: the refusal)."""
        calls = self._named_calls(turn, calls)
        if not calls:
            return self._complete(turn, REFUSAL)
        turn.new_messages.append(_assistant_tool_message(calls, reply.content))
        turn.trace["tool_calls"].extend({"id": c.id, "name": c.name} for c in calls)
        pending = {
            "kind": "tool_calls",
            "calls": [{"id": c.id, "name": c.name} for c in calls],
            "node_failures": turn.node_failures,
        }
        message = reply.content.strip() if reply.content and reply.content.strip() else None
        return self._response(turn, "tool_calls", message, calls=calls), pending

    def _answered(
        self, turn: _Turn, reply: LLMReply, node_errors: list[dict[str, Any]] | None
    ) -> tuple[ToolCallingResponse, dict[str, Any] | None]:
        """The LLM answered in words: a question after a node's validation error, a made-up
        result (refused), or the answer."""
        text = (reply.content or "").strip()
        if not text:
            raise _LLMFailed(LLMBadResponseError("empty reply (no text, no tool calls)"))
        if node_errors and text.endswith("?"):
            # After a node's validation error a question is a clarification request.
            params = {e.get("param_name") for e in node_errors if e.get("param_name")}
            param = params.pop() if len(params) == 1 else None
            options = next(
                (e.get("valid_values") for e in node_errors if e.get("valid_values")), None
            )
            return self._ask_user(turn, text, param,
                                  [str(o) for o in options] if options else None, None)
        if not turn.trace["server_tools"] and (states_tool_facts(text)
                                               or self._stands_in_for_a_tool(turn, text)
                                               or _echoes(turn, text)):
            # Said in place of a call, a reported result is made up; a tool's
            # declaration written out is no answer.
            turn.trace["refused_answer"] = text
            text = REFUSAL
        return self._complete(turn, text)

    def _words_for_a_call(
        self, turn: _Turn, reply: LLMReply, node_errors: list[dict[str, Any]] | None
    ) -> bool:
        """Whether an answer in words stands where a call of a tool the request means
        (relatedness, see center/meaning) belongs: it promises the action ("Yes, I can call
        you a cab now."), settles a question about the user's things or a moment that only a
        tool can ("Yes, my rice is ready."), or, to a request for something done or found
        (an order for what a tool is declared to do: "play hey jude", a question after
        things to find: "what are some cool places to visit?" too), gives a result nobody
        said ("Here are some cool places: 1. Paris ..."), asks the user back ("Which city
        are you leaving from?"), as the tool's parameters would, offers help as if nothing
        were asked ("How can I assist you today?"), declines what a tool is there for
        ("Sorry, I can't help with that.") or writes out a tool's declaration ("Find a
        restaurant of a particular cuisine"). Specifics alone are no sign of a call: an
        answer to a question about the world has them too, and such a question can be near a
        tool in meaning. Not after a node's validation error or a server tool's result."""
        text = (reply.content or "").strip()
        if not text or node_errors or turn.trace["server_tools"] or not self._tools(turn):
            return False
        related = self._related(turn, turn.voice_command).values()
        if max(related, default=0.0) < EVOKED_BY_MEANING:
            return False
        if promises_action(text) or settles_the_users_question(text, turn.voice_command):
            return True
        said = turn.voice_command or ""
        return (asks_for_something(said) or asks_for_things(said)
                or self._orders_a_tool(turn)) and (
            asks_the_user_back(text) or offers_help(text) or declines(text)
            or states_tool_facts(text) or bool(unsaid_specifics(text, _said_in(turn)))
            or _echoes(turn, text))

    def _orders_a_tool(self, turn: _Turn) -> bool:
        """Whether the request opens with what a tool it means is declared to do ("play
        hey jude" to a player whose action `play` is, "book a table" to a tool that
        reserves one), an order put without "can you" or "I want"."""
        said = turn.voice_command or ""
        if said.rstrip().endswith("?"):
            return False
        related = self._related(turn, said)
        return any(opens_with(said, declared_actions(spec))
                   for name, spec in turn.catalog.tools.items()
                   if related.get(name, 0.0) >= EVOKED_BY_MEANING)

    def _value_to_ask(
        self, turn: _Turn, calls: list[LLMToolCall], problems: list[CallProblem]
    ) -> tuple[str, str, str] | None:
        """(tool, parameter, call id) of the value to ask the user for: one a call lacks
        comes first (the rest is retried after it), else one nothing said accounts for."""
        absent = [p for p in problems if p.problem in _ABSENT and p.param is not None]
        if absent:
            return absent[0].tool_name, str(absent[0].param), absent[0].tool_call_id
        return None if problems else self._first_unsaid(turn, calls)

    def _lookup_first(self, turn: _Turn, tool: str, arguments: dict[str, Any] | None,
                      asking: bool) -> LLMReply | None:
        """Before asking for a value of `tool` (`asking`) or sending its lone call, whose
        call holds `arguments` (None: no readable call), in the first turn of a
        conversation: a call to a look-up the request means as much (see
        lookup_first.py), or None."""
        spec = turn.catalog.tools.get(tool)
        if turn.history or spec is None or arguments is None:
            return None
        said, related = turn.voice_command, self._related(turn, turn.voice_command)
        other = (search_instead(spec, arguments, turn.catalog, said, related)
                 or trade_instead(spec, arguments, turn.catalog, said, related))
        if other is None and asking:
            other = lookup_instead(spec, arguments, turn.catalog, said, related)
        if other is None:
            return None
        turn.trace["lookup_first"] = {"from": tool, "to": other.name}
        try:
            reply = self._call_llm(turn, only_tool=other.name)
        except _LLMFailed:  # the question about the first tool stands
            return None
        if not reply.tool_calls or any(c.name != other.name for c in reply.tool_calls):
            return None
        if not all(self._call_named(turn, c) for c in reply.tool_calls):
            # Nothing said names the look-up: the question about the first tool stands.
            turn.trace["lookup_first"]["unnamed"] = True
            return None
        return reply

    @staticmethod
    def _not_asked_for(turn: _Turn, calls: list[LLMToolCall]) -> str | None:
        """The trace key saying why `calls` answer nothing the user asked for: a remark on
        how something was (remarks.py), a question for an amount that says no number ("a
        cup" says one, "a blue whale" none) and whose call lacks an amount it needs ("how
        many miles is it from London to Leeds" asks for the distance, it gives none), or a
        question for information (keywords.asks_a_question) that every call acts on
        instead (acting.py)."""
        if not calls:
            return None
        said = turn.voice_command or ""
        if only_remarks(said):
            return "remark_not_acted_on"
        if (asks_how_much(said) and not derived_numbers(said)
                and any(_lacks_a_value(turn, c, _AMOUNT_KINDS) for c in calls)):
            return "amount_asked_about"
        if asks_how_to(said) and any(_lacks_a_value(turn, c) for c in calls):
            return "method_asked_about"
        if not asks_a_question(said):
            return None
        for call in calls:
            spec, arguments = turn.catalog.tools.get(call.name), _parsed(call)
            if spec is None or arguments is None or not acts(spec, arguments):
                return None
        return "question_not_acted_on"

    @staticmethod
    def _said_only(turn: _Turn, reply: LLMReply) -> LLMReply | None:
        """`reply`'s calls without the required free-text values not said word for word,
        which are asked for next, as in any call (None: no readable call, or an optional
        value nobody said: without it the call would do what nobody asked)."""
        said, calls, left_out = _said_in(turn), [], []
        for call in reply.tool_calls:
            spec, arguments = turn.catalog.tools.get(call.name), _parsed(call)
            if spec is None or arguments is None:
                return None
            props = spec.parameters.get("properties") or {}
            kept = {k: v for k, v in arguments.items()
                    if not (isinstance(v, str) and free_text(props.get(k) or {})
                            and not ISO_DAY.fullmatch(v) and not said_in_full(v, said))}
            unsaid = sorted(set(arguments) - set(kept))
            if set(unsaid) - set(spec.parameters.get("required") or []):
                return None
            if unsaid:
                left_out.append({"tool": call.name, "parameters": unsaid})
            calls.append(LLMToolCall(call.id, call.name, json.dumps(kept, ensure_ascii=False)))
        if not calls:
            return None
        if left_out:  # traced only for a reply that is taken
            turn.trace["unsaid_in_the_call_meant"] = left_out
        return replace(reply, tool_calls=calls)

    def _call_llm(
        self, turn: _Turn, tools_disabled: bool = False,
        focus: tuple[list[dict[str, Any]], list[dict[str, Any]]] | None = None,
        must_call: bool = False, only_tool: str | None = None,
    ) -> LLMReply:
        """One LLM request for the turn; `focus` (messages, tools) replaces the prompt and
        the tools and asks for a call (a refinement's focused decision)."""
        since = time.perf_counter()
        history_before = turn.trace["stages_ms"].get("history", 0.0)
        messages, tools = focus or (self._messages(turn), self._tools(turn))
        request = LLMRequest(
            messages=messages,
            tools=[] if tools_disabled else tools,
            # Always: a command's allow_direct_answer says whether the LLM may answer in that
            # command's place, but small talk that matches no command must get words, not
            # whichever command the model finds least wrong.
            allow_direct_answer=focus is None,
            tools_disabled=tools_disabled,
            must_call=must_call,
            only_tool=only_tool,
            tool_hints={} if tools_disabled else self._tool_hints(turn),
            tool_relatedness={} if tools_disabled or focus is not None
            else self._related(turn, turn.voice_command),
            choice_hints={} if tools_disabled else self._choice_hints(turn),
            date_hints=[] if tools_disabled else self._date_hints(turn),
            time_hints=[] if tools_disabled else dates.times_heard(turn.voice_command or ""),
            timeout=self.config.llm_timeout,
            max_tokens=self.config.llm_max_tokens,
        )
        # Building the prompt is its own stage; reading the history inside it is not.
        history_ms = turn.trace["stages_ms"].get("history", 0.0) - history_before
        since = turn.stage("prompt", since + history_ms / 1000)
        entry: dict[str, Any] = {"tools_disabled": tools_disabled,
                                 "messages": len(request.messages)}
        for key, value in (("must_call", must_call), ("only_tool", only_tool),
                           ("focused", focus is not None)):
            if value:
                entry[key] = value
        turn.trace["llm_calls"].append(entry)
        try:
            reply = self._ask_llm(turn, request)
        except LLMError as exc:
            entry["error"] = f"{type(exc).__name__}: {exc}"
            raise _LLMFailed(exc) from exc
        except Exception as exc:  # a misbehaving backend must not become a 500
            log.exception("LLM backend %s failed", getattr(self.backend, "name", "?"))
            entry["error"] = f"{type(exc).__name__}: {exc}"
            raise _LLMFailed(LLMBadResponseError(f"backend failure: {exc}")) from exc
        if not isinstance(reply, LLMReply):
            entry["error"] = "not an LLMReply"
            raise _LLMFailed(LLMBadResponseError("backend returned something that is not a reply"))
        entry["ms"] = round((time.perf_counter() - since) * 1000, 3)
        entry["tool_calls"] = [{"name": c.name, "arguments": c.arguments} for c in reply.tool_calls]
        if reply.content:
            entry["content"] = reply.content[:500]
        if reply.usage:
            entry["usage"] = reply.usage
        turn.stage("llm", since)
        return reply

    def _ask_llm(self, turn: _Turn, request: LLMRequest) -> LLMReply:
        """The backend's reply; a streamed turn's wording of tool results (tools off) goes
        to the events as it is written, and what was sent is what the reply says."""
        if turn.events is None or not request.tools_disabled:
            return self.backend.complete(request)
        try:
            reply = complete_streaming(self.backend, request, turn.events.text)
        finally:
            streamed = turn.events.stop_listening()
        if streamed and isinstance(reply, LLMReply) and streamed != reply.content:
            log.warning("backend %s streamed text that is not its reply's; keeping the streamed",
                        getattr(self.backend, "name", "?"))
            reply.content = streamed
        return reply

    @staticmethod
    def _tool_hints(turn: _Turn) -> dict[str, float]:
        """Routing keywords of each client tool heard in this turn's utterance."""
        if not turn.voice_command:
            return {}
        if turn.tool_hints is not None:
            return turn.tool_hints
        keywords = {name: spec.keywords for name, spec in turn.catalog.tools.items()}
        heard = keyword_hints(turn.voice_command, keywords)
        # Every tool that declares keywords is listed (0.0: none heard), so a backend can
        # tell "nothing named" from "nothing known".
        hints = {name: heard.get(name, 0.0) for name, words in keywords.items() if words}
        # A tool without keywords is known by its own name and description; listed only
        # when one of their words was heard, since they are no full list of its words.
        plain = {name: f"{name} {spec.description}" for name, spec in turn.catalog.tools.items()
                 if not keywords[name]}
        if plain:
            hints |= description_hints(turn.voice_command, description_words(plain))
        turn.tool_hints = hints
        return hints

    def _related(self, turn: _Turn, text: str) -> dict[str, float]:
        """Tool name -> how related `text` is to the tool's declaration (empty: not known)."""
        if self.relatedness is None or not text:
            return {}
        if text not in turn.related:
            since = time.perf_counter()
            turn.related[text] = self.relatedness.scores(text, turn.catalog)
            turn.stage("relatedness", since)
            if text == turn.voice_command:  # the tools the request is nearest, for the log
                nearest = sorted(turn.related[text].items(), key=lambda kv: -kv[1])
                turn.trace["related"] = dict(nearest[:_RELATED_TRACED])
        return turn.related[text]

    @staticmethod
    def _choice_hints(turn: _Turn) -> dict[str, dict[str, list[str]]]:
        """Per tool and enum parameter, the values whose declared synonyms were said."""
        if not turn.voice_command:
            return {}
        if turn.choice_hints is not None:
            return turn.choice_hints
        hints: dict[str, dict[str, list[str]]] = {}
        for name, spec in turn.catalog.tools.items():
            for param in spec.params.values():
                heard = keyword_hints(turn.voice_command, param.synonyms) if param.synonyms else {}
                if heard:
                    hints.setdefault(name, {})[param.name] = list(heard)
        turn.choice_hints = hints
        return hints

    @staticmethod
    def _date_hints(turn: _Turn) -> list[list[str]]:
        """Resolved values of the relative dates named in this turn's utterance."""
        if not turn.voice_command:
            return []
        zone = _zone(turn)
        try:
            return dates.dates_heard(turn.voice_command, zone, turn.now)
        except ValueError:  # an unknown zone: the model copies from the prompt instead
            return []

    def _tools(self, turn: _Turn) -> list[dict[str, Any]]:
        # The compact style leaves the server tools out: a small model confuses them with the
        # client's (get_current_datetime vs get_current_time) and each costs a round trip.
        if self.compact:
            return list(turn.catalog.openai_tools)
        return [*turn.catalog.openai_tools, *SERVER_TOOLS]

    def _messages(self, turn: _Turn, with_history: bool = True) -> list[dict[str, Any]]:
        node_context = turn.node_context or turn.record.node_context
        if not with_history:
            turn.history = []
        if turn.history is None:
            since = time.perf_counter()
            turn.history = self.store.history(turn.record)
            turn.stage("history", since)
        history = turn.history[-self.config.history_messages :]
        # A window must not open with tool results or an assistant reply cut from its question.
        while history and history[0].get("role") != "user":
            history = history[1:]
        if not history and turn.history:
            history = [m for m in turn.history if m.get("role") == "user"][-1:]
        if self.compact:
            # Stable prompt, then the day's dates and clock (both cached as the prefix), then
            # the turn and nothing after it: every token after the utterance costs each turn.
            return [
                {"role": "system",
                 "content": compact_system_prompt(turn.catalog, turn.record.tools_key)},
                {"role": "system", "content": compact_dates_message(
                    node_context, turn.now, table=self.date_table)},
                *history,
                *turn.new_messages,
                *turn.scratch,
            ]
        return [
            {"role": "system",
             "content": system_prompt(turn.catalog, turn.record.tools_key)},
            *history,
            *turn.new_messages,
            *turn.scratch,
            {"role": "system", "content": context_message(node_context, turn.now)},
        ]

    def _check_calls(
        self, turn: _Turn, calls: list[LLMToolCall]
    ) -> tuple[list[LLMToolCall], list[CallProblem]]:
        """The calls as checked (declared enum synonyms written as their values), problems."""
        since = time.perf_counter()
        problems: list[CallProblem] = []
        checked: list[LLMToolCall] = []
        for call in calls:
            args, found = check_call(call.id, call.name, call.arguments, turn.catalog)
            problems.extend(found)
            if args is not None and args != json.loads((call.arguments or "").strip() or "{}"):
                call = LLMToolCall(call.id, call.name, json.dumps(args, ensure_ascii=False))
            checked.append(call)
        turn.stage("validate", since)
        return checked, problems

    def _add_retry(
        self, turn: _Turn, calls: list[LLMToolCall], problems: list[CallProblem], attempt: int
    ) -> None:
        turn.scratch.append(_assistant_tool_message(calls, None))
        for call in calls:
            mine = [p.line().lstrip("- ") for p in problems if p.tool_call_id == call.id]
            turn.scratch.append(
                _tool_message(call.id, call.name,
                              {"success": False,
                               "error": "invalid arguments, not run" if mine else
                               "not run because another call was invalid",
                               "problems": mine})
            )
        turn.scratch.append(
            {"role": "system", "content": retry_message(problems, turn.catalog, attempt)}
        )

    def _give_up(
        self, turn: _Turn, problems: list[CallProblem]
    ) -> tuple[ToolCallingResponse, dict[str, Any] | None]:
        params = {(p.tool_name, p.param) for p in problems}
        if len(params) == 1 and problems[0].param is not None:
            problem = problems[0]
            values = list(problem.valid_values) if problem.valid_values else None
            return self._ask_user(turn, _parameter_question(problem.param, values),
                                  problem.param, values, problem.tool_call_id, problem.tool_name)
        return self._error(
            turn, "Sorry, I couldn't work out how to do that. Could you say it another way?"
        )

    def _first_unsaid(self, turn: _Turn, calls: list[LLMToolCall]) -> tuple[str, str, str] | None:
        """(tool, parameter, call id) of the first required value of `calls` that nothing
        said in the conversation accounts for, and that was not asked for already. Optional
        values nothing accounts for are taken out of `calls` on the way."""
        said = _said_in(turn)
        zone = _zone(turn)
        try:
            days = dates.dates_heard(said, zone, turn.now)
            # Line by line: two clock times in a conversation ("at 5 pm", then "make it
            # 6 pm") are each a time said, not one unreadable time.
            times = bool(days or any(dates.times_heard(line) for line in said.splitlines()))
        except ValueError:  # an unknown zone: any date said is taken as said
            days, times = [], True
        # How many phrases said each day.
        days_said = Counter(day for phrase in days for day in {v[:10] for v in phrase})
        for index, call in enumerate(calls):
            spec = turn.catalog.tools[call.name]
            synonyms = {p.name: p.synonyms for p in spec.params.values() if p.synonyms}
            schema = spec.parameters
            arguments = json.loads(call.arguments or "{}")
            # Values a refinement carried over were accounted for when first said.
            carried = turn.carried.get(call.id, frozenset())
            checked = {k: v for k, v in arguments.items() if k not in carried}
            required = [str(k) for k in schema.get("required") or []]
            # A value the call holds twice, said once, is not yet said for the first key.
            repeated = repeated_values(checked, schema, said, tool=call.name,
                                       days_said=days_said)
            unsaid = unsaid_required(checked, schema, said, synonyms, times_said=times,
                                     tool=call.name)
            for param in [k for k in required if k in unsaid or k in repeated]:
                if (call.name, param) not in turn.asked:
                    turn.trace["unsaid"] = {"tool": call.name, "parameter": param}
                    return call.name, param, call.id
            # Optional values nobody asked for are left out: the command's defaults apply.
            dropped = unsaid_optional(checked, schema, said, synonyms, times_said=times,
                                      tool=call.name)
            dropped += [k for k in repeated if k not in required and k not in dropped]
            if dropped:
                kept = {k: v for k, v in arguments.items() if k not in dropped}
                calls[index] = LLMToolCall(call.id, call.name, json.dumps(kept, ensure_ascii=False))
                turn.trace.setdefault("dropped_unsaid", []).append(
                    {"tool": call.name, "parameters": dropped})
        return None

    def _ask_for(
        self, turn: _Turn, tool: str, param: str, tool_call_id: str | None,
        arguments: dict[str, Any] | None = None,
    ) -> tuple[ToolCallingResponse, dict[str, Any] | None]:
        """Ask the user for one value of `tool` (absent, or not said; `arguments`: what its
        call holds); a tool nothing the user said names is no request of theirs (see
        evocation.py): nothing to ask."""
        if not self._named(turn, tool, arguments):
            turn.trace["unevoked"] = {"tool": tool, "parameter": param}
            return self._complete(turn, REFUSAL)
        spec = turn.catalog.tools[tool].params.get(param)
        options = list(spec.enum) if spec is not None and spec.enum else None
        kind = spec.type.kind if spec is not None and spec.type is not None else None
        return self._ask_user(turn, _parameter_question(param, options, kind), param, options,
                              tool_call_id, tool)

    def _named(self, turn: _Turn, tool: str, arguments: Any = None, values_said: int = 0
               ) -> bool:
        """Whether what the user said in the conversation names `tool` (see evocation.py),
        weighed by meaning once more without the names the call (`arguments`) took from it."""
        said = _user_words(turn)
        # The first turn's words are this utterance, already weighed for the LLM request.
        text = turn.voice_command if said == self._heard(turn.voice_command) else said
        spec, related = turn.catalog.tools[tool], self._related(turn, text)
        near = among_the_nearest(tool, related)
        if evokes(said, spec, related.get(tool), values_said, near=near):
            return True
        if evokes(said, spec, None, values_said):
            turn.trace["far_from_request"] = tool  # a shared word or values, meaning apart
        # Words and values are weighed above; without the call's names only meaning is left.
        rest = without_names(text, arguments, spec)
        if rest == text or self._related(turn, rest).get(tool, 0.0) < EVOKED_BY_MEANING:
            return False
        turn.trace["named_without_names"] = tool
        return True

    def _stands_in_for_a_tool(self, turn: _Turn, text: str) -> bool:
        """Whether an answer in words to a request that means a tool gives specifics nobody
        said or promises the action, or one to any request for something done or found
        gives specifics nobody said or promises an act or a search (see claims.py): words
        in place of a tool's result. Meaning, not a shared word: among twenty tools some
        word of some declaration is in nearly every question ("what's the longest river
        in africa")."""
        specifics = unsaid_specifics(text, _said_in(turn))
        if (specifics or promises_a_deed(text)) and asks_for_something(turn.voice_command):
            # A made-up result of a request, served by a tool or not, or a promise that no
            # call keeps ("Yes, I can call a cab for you.").
            return True
        if settles_the_users_question(text, turn.voice_command):
            return True  # "Yes, my rice is ready.": a state nobody reported
        if not (promises_action(text) or specifics):
            return False
        related = self._related(turn, turn.voice_command).values()
        return max(related, default=0.0) >= EVOKED_BY_MEANING

    def _named_calls(self, turn: _Turn, calls: list[LLMToolCall]) -> list[LLMToolCall]:
        """The calls of tools the user named; a call of a tool nothing said names is a
        look-alike the model reached for, no request of the user's. Values left in a call
        were said (see `_first_unsaid`)."""
        named = [call for call in calls if self._call_named(turn, call)]
        if len(named) < len(calls):
            turn.trace["unevoked_calls"] = [c.name for c in calls if c not in named]
        return named

    def _call_named(self, turn: _Turn, call: LLMToolCall) -> bool:
        """Whether the user named the tool of `call`, by words, meaning or its values."""
        arguments = json.loads(call.arguments or "{}")
        heard = values_heard(arguments, turn.catalog.tools[call.name], _user_words(turn))
        return self._named(turn, call.name, arguments,
                           distinct_values(heard, _zone(turn), turn.now))

    def _run_server_tools(self, turn: _Turn, calls: list[LLMToolCall]) -> None:
        since = time.perf_counter()
        zone = _zone(turn)
        turn.new_messages.append(_assistant_tool_message(calls, None))
        for call in calls:
            result = run_server_tool(call.name, call.arguments, zone, turn.now)
            turn.new_messages.append(_tool_message(call.id, call.name, result))
            turn.trace["server_tools"].append(
                {"id": call.id, "name": call.name, "arguments": call.arguments, "result": result}
            )
        turn.stage("server_tools", since)

    def _llm_asks_user(
        self, turn: _Turn, call: LLMToolCall
    ) -> tuple[ToolCallingResponse, dict[str, Any] | None]:
        try:
            args = json.loads(call.arguments or "{}")
        except json.JSONDecodeError:
            args = {}
        args = args if isinstance(args, dict) else {}
        question = args.get("question")
        if not isinstance(question, str) or not question.strip():
            question = "Could you tell me a bit more?"
        param = args.get("parameter_name") if isinstance(args.get("parameter_name"), str) else None
        options = args.get("options")
        options = [str(o) for o in options] if isinstance(options, list) and options else None
        return self._ask_user(turn, question.strip(), param or None, options, None)

    # --- outcomes -----------------------------------------------------------------------
    def _ask_user(
        self,
        turn: _Turn,
        question: str,
        param: str | None,
        options: list[str] | None,
        tool_call_id: str | None,
        tool_name: str | None = None,
    ) -> tuple[ToolCallingResponse, dict[str, Any] | None]:
        # The question is kept as the assistant's words, so the answer reads naturally after it.
        turn.new_messages.append({"role": "assistant", "content": question})
        validation = ValidationRequest(
            question=question, parameter_name=param, options=options, tool_call_id=tool_call_id,
            tool_name=tool_name,
        )
        asked = sorted(turn.asked | ({(tool_name, param)} if tool_name and param else set()))
        pending = {"kind": "validation", **validation.model_dump(),
                   "node_failures": turn.node_failures, "asked": [list(a) for a in asked]}
        return self._response(turn, "validation_required", question,
                              validation=validation), pending

    def _complete(
        self, turn: _Turn, text: str
    ) -> tuple[ToolCallingResponse, dict[str, Any] | None]:
        turn.new_messages.append({"role": "assistant", "content": text})
        return self._response(turn, "complete", text), None

    def _error(self, turn: _Turn, text: str) -> tuple[ToolCallingResponse, dict[str, Any] | None]:
        turn.new_messages.append({"role": "assistant", "content": text})
        turn.trace["error"] = text
        return self._response(turn, "error", text), None


def _lacks_a_value(turn: _Turn, call: LLMToolCall, kinds: frozenset[str] | None = None
                  ) -> bool:
    """Whether `call` lacks a required value (of one of `kinds`: a number or a length of
    time for an amount), or holds one nothing said accounts for."""
    spec, arguments = turn.catalog.tools.get(call.name), _parsed(call)
    if spec is None or arguments is None:
        return False
    wanted = [p.name for p in spec.params.values() if p.required and (
        kinds is None or (p.type is not None and p.type.kind in kinds))]
    unsaid = unsaid_required(arguments, spec.parameters, _said_in(turn), tool=call.name)
    return any(arguments.get(name) is None or name in unsaid for name in wanted)


_AMOUNT_KINDS = frozenset({"int", "float", "timedelta"})


def _echoes(turn: _Turn, text: str) -> bool:
    """Whether an answer writes out the declaration of a tool of the turn, a call of one,
    a request its examples or description quote, or its keywords (see claims.py)."""
    tools = turn.catalog.tools
    keys = {name: list(spec.params) for name, spec in tools.items()}
    return writes_a_call(text, keys) or echoes_a_declaration(
        text, [(spec.name, spec.description) for spec in tools.values()],
        turn.voice_command or "",
    ) or restates_an_example(text, _example_requests(turn), turn.voice_command or "") or (
        lists_a_tools_words(text, [spec.keywords for spec in tools.values()]))


def _example_requests(turn: _Turn) -> list[str]:
    """The requests the tools' examples give, and those their descriptions quote."""
    return [request for spec in turn.catalog.tools.values()
            for request in (*spec.example_requests,
                            *_QUOTED_REQUEST.findall(spec.description or ""))]


# A request a description quotes: "Use for 'what is 5 plus 3'".
_QUOTED_REQUEST = re.compile(r"'([^']{6,80})'")


def _trace_retry(turn: _Turn, calls: list[LLMToolCall], problems: list[CallProblem],
                 attempt: int) -> None:
    turn.trace["retries"].append(
        {"source": "center", "attempt": attempt,
         "calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls],
         "problems": [p.to_dict() for p in problems]}
    )


def _is_validation_error(context: dict[str, Any] | None) -> bool:
    return bool(context) and bool(context.get("_validation_error"))  # type: ignore[union-attr]


def _node_errors(results: list[ToolResult]) -> list[dict[str, Any]]:
    """The `errors` of validation-error results, with `valid_values` filled per parameter."""
    out: list[dict[str, Any]] = []
    for result in results:
        context = result.output.context or {}
        by_param = context.get("valid_values")
        by_param = by_param if isinstance(by_param, dict) else {}
        errors = context.get("errors") if isinstance(context.get("errors"), list) else []
        for error in errors:
            if isinstance(error, dict):
                entry = dict(error)
                if not entry.get("valid_values") and entry.get("param_name") in by_param:
                    entry["valid_values"] = by_param[entry["param_name"]]
                out.append(entry)
        if not errors:
            for param, values in by_param.items():
                out.append({"param_name": param, "valid_values": values})
    return out


def _arguments_of(calls: list[LLMToolCall], call_id: str) -> dict[str, Any] | None:
    """The arguments of the call `call_id` among `calls` (empty when they are no object;
    None when there is no such call or its arguments are no JSON)."""
    call = next((c for c in calls if c.id == call_id), None)
    return _parsed(call) if call is not None else None


def _parsed(call: LLMToolCall) -> dict[str, Any] | None:
    """A call's arguments (empty when they are no object; None when they are no JSON)."""
    try:
        arguments = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        return None
    return arguments if isinstance(arguments, dict) else {}


def _call_name(turn: _Turn, call_id: str) -> str | None:
    for call in (turn.record.pending or {}).get("calls", []):
        if call.get("id") == call_id:
            return str(call.get("name"))
    return None


def _contents(turn: _Turn, roles: tuple[str, ...]) -> str:
    """The text of the conversation's messages of `roles`, one message a line."""
    messages = [*(turn.history or []), *turn.new_messages]
    return "\n".join(str(m["content"]) for m in messages
                     if m.get("role") in roles and isinstance(m.get("content"), str))


def _user_words(turn: _Turn) -> str:
    """Everything the user said in the conversation, one turn a line."""
    return _contents(turn, ("user",))


def _zone(turn: _Turn) -> str:
    """The node's timezone for this turn (UTC when it sent none)."""
    return (turn.node_context or turn.record.node_context).get("timezone") or "UTC"


def _said_in(turn: _Turn) -> str:
    """What the conversation said that a value may come from: the user's turns and the
    tools' results (a follow-up such as "now times 3" uses an earlier result)."""
    return _contents(turn, ("user", "tool"))
