"""The tool-calling engine: conversation turns in, stop reasons out. No web framework here.

One request is one `Turn`: it reads the conversation, talks to the LLM (running server
tools and validation retries in between), and writes the new messages, the new pending
state and a trace in one store transaction before the response goes back.

The judgements the loop makes live beside it, each in its own module: what a turn holds
and reads (turn.py), what its utterance says outright (turn_hints.py), whether the user
named a tool (naming.py), words where a call belongs and calls where words belong
(answer_or_call.py), values in a call that nothing said (unsaid_values.py), and what the
node sends back (node_results.py).

Pending states kept with the conversation:
- `{"kind": "tool_calls", "calls": [{"id", "name"}], "node_failures": n, "asked"}`: the
  node runs these and sends their results;
- `{"kind": "validation", "question", "parameter_name", "options", "tool_call_id",
  "node_failures": n, "asked"}`: the user is asked, the answer comes back as
  `validation_response`. `asked` lists the (tool, parameter) of each question of the
  request so far, once per time asked.

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
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from jarvis.center.answer_or_call import (
    echoes,
    not_asked_for,
    stands_in_for_a_tool,
    words_for_a_call,
)
from jarvis.center.answered_call import keep_given
from jarvis.center.capabilities import asks_what_i_can_do, what_i_can_do
from jarvis.center.chat_messages import (
    assistant_tool_message,
    new_call_id,
    tool_message,
    unique_ids,
)
from jarvis.center.claims import REFUSAL, states_tool_facts
from jarvis.center.conversation_errors import (
    BadRequestError,
    ConflictError,
    ConversationNotFoundError,
    LLMFailed,
    MalformedRequestError,
    llm_error_message,
)
from jarvis.center.llm.base import (
    LLMBackend,
    LLMBadResponseError,
    LLMError,
    LLMReply,
    LLMRequest,
    LLMToolCall,
    complete_streaming,
)
from jarvis.center.local_turns import local_turn_messages
from jarvis.center.lookup_first import lookup_instead, search_instead, trade_instead
from jarvis.center.meaning import Relatedness
from jarvis.center.naming import call_named, named, named_calls
from jarvis.center.new_request import is_a_new_request
from jarvis.center.node_results import (
    accept_results,
    call_name,
    calls_in,
    check_continue_shape,
    is_validation_error,
    lacks_what_the_node_needs,
    validation_errors,
)
from jarvis.center.prompt import (
    compact_dates_message,
    compact_system_prompt,
    context_message,
    system_prompt,
)
from jarvis.center.questions import MAX_ASKS, not_caught, parameter_question
from jarvis.center.ratelimit import RateLimiter
from jarvis.center.refine import refinement
from jarvis.center.server_tools import ASK_USER, SERVER_TOOL_NAMES, SERVER_TOOLS, run_server_tool
from jarvis.center.spoken_numbers import digits_for_numbers
from jarvis.center.store import (
    ConcurrentUpdateError,
    ConversationOwnedError,
    ConversationRecord,
    Store,
    TurnWrite,
)
from jarvis.center.toolspec import build_catalog, catalog_for
from jarvis.center.turn import GivenCall, Turn, arguments_of, parsed, zone
from jarvis.center.turn_events import TurnEvents
from jarvis.center.turn_hints import choice_hints, date_hints, time_hints, tool_hints
from jarvis.center.unsaid_values import said_only, said_values, value_to_ask
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

__all__ = ["Engine", "EngineConfig", "default_clock"]

log = logging.getLogger(__name__)


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


def _refined_id(turn: Turn, call: LLMToolCall, calls: list[LLMToolCall]) -> str | None:
    """The id of the call `call` changes: a refinement's one call to the refined tool (by
    name, so a retried call still says it)."""
    if turn.refines is None or call.name != turn.refines[0]:
        return None
    return turn.refines[1] if sum(c.name == call.name for c in calls) == 1 else None


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
        turn = Turn(record, "start", "", catalog, self._clock(), time.perf_counter(),
                    relatedness=self.relatedness)
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
        return self._take_request(turn, request.voice_command)

    def continue_(
        self, request: ContinueRequest, node: str | None = None,
        events: TurnEvents | None = None,
    ) -> ToolCallingResponse:
        """Tool results from the node, or the user's answer to a clarification question
        (in a conversation of `node`, when authenticated); `events` streams the turn."""
        check_continue_shape(request)
        record = self._load(request.conversation_id, node)
        turn = self._begin_from(record, node, "continue", record.voice_command)
        turn.events = events
        pending = record.pending or {}
        waiting = pending.get("kind")
        turn.asked = Counter((str(t), str(p)) for t, p in pending.get("asked", []))
        if request.tool_results is not None:
            if waiting == "validation":
                raise BadRequestError("the conversation waits for the user's validation_response")
            accept_results(turn, pending, request.tool_results)
            return self._finish(turn, lambda: self._after_results(turn, request.tool_results))
        if waiting != "validation":
            raise BadRequestError(
                "no question is waiting for a validation_response"
                + ("; the conversation waits for tool_results" if waiting == "tool_calls" else
                   "; send a new utterance to /api/v0/voice/command")
            )
        answer = (request.validation_response or "").strip()
        if is_a_new_request(turn, answer, pending.get("tool_name")):
            return self._new_request(turn, answer)
        # The user's answer is new information: the node's failure count starts again.
        if pending.get("tool_name") and pending.get("parameter_name"):
            turn.answering = (str(pending["tool_name"]), str(pending["parameter_name"]))
            turn.given = self._given(turn, pending)
        turn.answer = answer
        turn.new_messages.append({"role": "user", "content": self._heard(answer)})
        turn.trace["validation_response"] = answer
        return self._finish(turn, lambda: self._infer(turn))

    def _given(self, turn: Turn, pending: dict[str, Any]) -> GivenCall | None:
        """The values given before the question: those said of the call the center
        asked about, else the node's refused call's (None: neither is known)."""
        tool, param = turn.answering or ("", "")
        if isinstance(pending.get("given"), dict):
            return GivenCall(tool, dict(pending["given"]), param)
        call_id = str(pending.get("tool_call_id"))
        call = next((c for c in calls_in(self._history(turn)) if c.id == call_id), None)
        arguments = parsed(call) if call is not None and call.name == tool else None
        return GivenCall(tool, arguments, param) if arguments is not None else None

    def _new_request(self, turn: Turn, text: str) -> ToolCallingResponse:
        """The user moved on instead of answering: `text` is taken as a request of its
        own, the question left unanswered (see new_request.py)."""
        turn.voice_command, turn.heard_command = text, self._heard(text)
        turn.asked = Counter()  # the questions were about the request left behind
        turn.trace["voice_command"] = text
        turn.trace["answered_with_a_request"] = True
        return self._take_request(turn, text)

    def _take_request(self, turn: Turn, text: str) -> ToolCallingResponse:
        """The user's request `text`, worked out: what the assistant can do is told from
        the tools; anything else goes to the LLM (a change of the last call first)."""
        turn.new_messages.append({"role": "user", "content": self._heard(text)})
        if asks_what_i_can_do(text):
            turn.trace["capabilities"] = True
            return self._finish(turn, lambda: self._complete(turn, what_i_can_do(turn.catalog)))
        return self._finish(turn, lambda: self._infer(turn, first=self._refined(turn)))

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
    ) -> Turn:
        return self._begin_from(self._load(conversation_id, node), node, endpoint, voice_command)

    def _admit(self, node_id: Any) -> None:
        """Count a request against its node's rate limit (RateLimitedError when over it)."""
        if self.limiter is not None:
            self.limiter.admit(node_id if isinstance(node_id, str) and node_id else "")

    def _begin_from(
        self, record: ConversationRecord, node: str | None, endpoint: str, voice_command: str
    ) -> Turn:
        started = time.perf_counter()
        # The rate limit counts per authenticated node; without keys, per declared node_id.
        self._admit(node or record.node_context.get("node_id"))
        try:
            catalog = catalog_for(record.tools_key, record.client_tools, record.available_commands)
        except (ValueError, KeyError, TypeError) as exc:  # stored by an older, laxer center
            raise BadRequestError(f"the conversation's tools are invalid: {exc}") from exc
        return Turn(record, endpoint, voice_command, catalog, self._clock(), started,
                    relatedness=self.relatedness, heard_command=self._heard(voice_command))

    def _finish(
        self, turn: Turn, body: Callable[[], tuple[ToolCallingResponse, dict[str, Any] | None]]
    ) -> ToolCallingResponse:
        try:
            response, pending = body()
            update = True
        except LLMFailed as failed:
            # The conversation stays exactly as it was, so the same request can be retried.
            error = failed.error
            turn.trace["error"] = f"{type(error).__name__}: {error}"
            response, pending, update = (
                self._response(turn, "error", llm_error_message(error)), None, False)
        write = TurnWrite(
            endpoint=turn.endpoint,
            new_messages=turn.new_messages,
            pending=pending,
            # A new utterance, or a request given in place of an answer, is the request now.
            voice_command=turn.voice_command if (
                turn.endpoint == "command" or turn.voice_command != turn.record.voice_command)
            else None,
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
        turn: Turn,
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

    def _abandon_pending(self, turn: Turn) -> None:
        """Close tool calls the node never answered, so the history stays well-formed."""
        pending = turn.record.pending or {}
        if pending.get("kind") != "tool_calls":
            return
        for call in pending.get("calls", []):
            turn.new_messages.append(
                tool_message(call["id"], call["name"],
                             {"success": False, "message": "Not run: the user moved on."})
            )
        turn.trace["abandoned_tool_calls"] = [c["id"] for c in pending.get("calls", [])]

    # --- tool results -----------------------------------------------------------------
    def _after_results(
        self, turn: Turn, results: list[ToolResult]
    ) -> tuple[ToolCallingResponse, dict[str, Any] | None]:
        failed_validation = [r for r in results if is_validation_error(r.output.context)]
        if failed_validation:
            turn.node_failures += 1
            if turn.node_failures > self.config.max_retries or lacks_what_the_node_needs(
                    failed_validation, self._history(turn)):
                return self._ask_after_node_failures(turn, failed_validation)
            turn.trace["retries"].append(
                {"source": "node", "attempt": turn.node_failures,
                 "tool_call_ids": [r.tool_call_id for r in failed_validation]}
            )
            return self._infer(turn, node_errors=validation_errors(failed_validation))
        if self.config.direct_tool_message and len(results) == 1:
            output = results[0].output
            if output.message and output.message.strip() and not output.llm_wording:
                turn.trace["direct_message"] = True
                return self._complete(turn, output.message.strip())
        reply = self._call_llm(turn, tools_disabled=True, wording=True)
        text = (reply.content or "").strip()
        if not text:
            # The model said nothing: speak what the tools said rather than silence.
            text = " ".join(r.output.message for r in results if r.output.message) or (
                "Done." if all(r.output.success for r in results) else "That didn't work."
            )
        return self._complete(turn, text)

    def _ask_after_node_failures(
        self, turn: Turn, failed: list[ToolResult]
    ) -> tuple[ToolCallingResponse, dict[str, Any] | None]:
        errors = validation_errors(failed)
        params = {e.get("param_name") for e in errors if e.get("param_name")}
        if len(params) == 1:
            param = params.pop()
            options = next(
                (e.get("valid_values") for e in errors if e.get("valid_values")), None
            )
            values = [str(o) for o in options] if options else None
            call_id = failed[0].tool_call_id
            tool = call_name(turn, call_id)
            return self._ask_value(turn, tool, param, values, call_id, _kind_of(turn, tool, param))
        message = next((r.output.message for r in failed if r.output.message), None)
        return self._error(turn, message or "I couldn't get that command right. Please rephrase.")

    # --- refinable follow-ups (refine.py) ----------------------------------------------
    def _refined(self, turn: Turn) -> LLMReply | None:
        """The last call again with the values this follow-up changes; None when the
        utterance is no change of it (then the LLM reads it as usual)."""
        found = refinement(
            [*self._history(turn), *turn.new_messages[:-1]], turn.catalog.tools,
            turn.new_messages[-1]["content"],
            ask=lambda messages, tools: self._call_llm(turn, focus=(messages, tools)),
            names_another=lambda name: self._names_another_tool(turn, name))
        if found is None:
            return None
        call_id = new_call_id()
        turn.carried[call_id] = found.carried
        turn.trace["refined"] = {"tool": found.name, "changed": found.changed}
        if found.refines:
            turn.refines = (found.name, found.refines)
        return LLMReply(tool_calls=[LLMToolCall(
            call_id, found.name, json.dumps(found.arguments, ensure_ascii=False))])

    def _names_another_tool(self, turn: Turn, name: str) -> bool:
        """Whether the words point at another command more than at `name` (its keywords,
        or a value of its own choices, count for it)."""
        hints = tool_hints(turn)
        own = hints.get(name, 0.0) + len(choice_hints(turn).get(name, {}))
        return any(v > own for other, v in hints.items() if other != name)

    # --- LLM loop ---------------------------------------------------------------------
    def _infer(
        self, turn: Turn, node_errors: list[dict[str, Any]] | None = None,
        first: LLMReply | None = None,
    ) -> tuple[ToolCallingResponse, dict[str, Any] | None]:
        """Call the LLM until it answers, asks the user, or makes valid client calls;
        `first` stands for the first reply when it is known already (a refinement)."""
        retries = 0
        loops = 0
        pressed = looked = False
        while True:
            reply, first = (first, None) if first is not None else (self._call_llm(turn), None)
            calls = keep_given(turn, unique_ids(reply.tool_calls))
            if not calls and not pressed and words_for_a_call(turn, reply, node_errors):
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
            unasked = None if pressed else not_asked_for(turn, calls)
            if unasked is not None:
                # "is a sedan better than a hatchback", "the pizza was delicious": a
                # question or a remark is answered in words.
                pressed = True
                turn.trace[unasked] = [c.name for c in calls]
                first = self._call_llm(turn, tools_disabled=True)
                continue
            ask = value_to_ask(turn, calls, problems)
            # The call asked about, else a lone valid call about to be sent.
            target = (ask[0], ask[2]) if ask is not None else (
                (calls[0].name, calls[0].id) if len(calls) == 1 and not problems else None)
            arguments = arguments_of(calls, target[1]) if target is not None else None
            if not looked and target is not None:
                lookup = self._lookup_first(turn, target[0], arguments, asking=ask is not None)
                if lookup is not None:
                    looked, first = True, lookup
                    continue
            if ask is not None:
                self._keep_for_the_answer(turn, calls, ask)
                return self._ask_for(turn, *ask, arguments=arguments)
            if not problems:
                return self._send_calls(turn, calls, reply)
            retries += 1
            _trace_retry(turn, calls, problems, retries)
            if retries > self.config.max_retries:
                return self._give_up(turn, problems)
            self._add_retry(turn, calls, problems, retries)

    def _keep_for_the_answer(self, turn: Turn, calls: list[LLMToolCall],
                             ask: tuple[str, str, str]) -> None:
        """The values said so far of the call asked about, for the call after the answer."""
        tool, param, call_id = ask
        call = next((c for c in calls if c.id == call_id), None)
        if call is not None:
            turn.given = GivenCall(tool, said_values(turn, call), param)

    def _the_call_meant(self, turn: Turn, reply: LLMReply) -> LLMReply | None:
        """The same request once more, for the call an answer in words stands for, less
        the values in it the user did not say (asked for next, as in any call)."""
        turn.trace["answer_for_a_call"] = (reply.content or "")[:200]
        again = self._call_llm(turn, must_call=True)
        return said_only(turn, again)

    def _send_calls(
        self, turn: Turn, calls: list[LLMToolCall], reply: LLMReply
    ) -> tuple[ToolCallingResponse, dict[str, Any] | None]:
        """Valid calls go to the node, those of tools the user named (none: the refusal)."""
        calls = named_calls(turn, calls)
        if not calls:
            return self._complete(turn, REFUSAL)
        turn.new_messages.append(assistant_tool_message(calls, reply.content))
        turn.trace["tool_calls"].extend({"id": c.id, "name": c.name} for c in calls)
        pending = {
            "kind": "tool_calls",
            "calls": [{"id": c.id, "name": c.name} for c in calls],
            "node_failures": turn.node_failures,
            "asked": [list(a) for a in sorted(turn.asked.elements())],
        }
        message = reply.content.strip() if reply.content and reply.content.strip() else None
        return self._response(turn, "tool_calls", message, calls=calls), pending

    def _answered(
        self, turn: Turn, reply: LLMReply, node_errors: list[dict[str, Any]] | None
    ) -> tuple[ToolCallingResponse, dict[str, Any] | None]:
        """The LLM answered in words: a question after a node's validation error, a made-up
        result (refused), or the answer."""
        text = (reply.content or "").strip()
        if not text:
            raise LLMFailed(LLMBadResponseError("empty reply (no text, no tool calls)"))
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
                                               or stands_in_for_a_tool(turn, text)
                                               or echoes(turn, text)):
            # Said in place of a call, a reported result is made up; a tool's
            # declaration written out is no answer.
            turn.trace["refused_answer"] = text
            text = REFUSAL
        return self._complete(turn, text)

    def _lookup_first(self, turn: Turn, tool: str, arguments: dict[str, Any] | None,
                      asking: bool) -> LLMReply | None:
        """Before asking for a value of `tool` (`asking`) or sending its lone call, whose
        call holds `arguments` (None: no readable call), in the first turn of a
        conversation: a call to a look-up the request means as much (see
        lookup_first.py), or None."""
        spec = turn.catalog.tools.get(tool)
        if turn.history or spec is None or arguments is None:
            return None
        said, related = turn.voice_command, turn.related(turn.voice_command)
        other = (search_instead(spec, arguments, turn.catalog, said, related)
                 or trade_instead(spec, arguments, turn.catalog, said, related))
        if other is None and asking:
            other = lookup_instead(spec, arguments, turn.catalog, said, related)
        if other is None:
            return None
        turn.trace["lookup_first"] = {"from": tool, "to": other.name}
        try:
            reply = self._call_llm(turn, only_tool=other.name)
        except LLMFailed:  # the question about the first tool stands
            return None
        if not reply.tool_calls or any(c.name != other.name for c in reply.tool_calls):
            return None
        if not all(call_named(turn, c) for c in reply.tool_calls):
            # Nothing said names the look-up: the question about the first tool stands.
            turn.trace["lookup_first"]["unnamed"] = True
            return None
        return reply

    def _call_llm(
        self, turn: Turn, tools_disabled: bool = False,
        focus: tuple[list[dict[str, Any]], list[dict[str, Any]]] | None = None,
        must_call: bool = False, only_tool: str | None = None, wording: bool = False,
    ) -> LLMReply:
        """One LLM request for the turn; `focus` (messages, tools) replaces the prompt and
        the tools and asks for a call (a refinement's focused decision); `wording`: the
        words for tool results that ran, which a streamed turn sends as they come."""
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
            tool_hints={} if tools_disabled else tool_hints(turn),
            tool_relatedness={} if tools_disabled or focus is not None
            else turn.related(turn.voice_command),
            choice_hints={} if tools_disabled else choice_hints(turn),
            date_hints=[] if tools_disabled else date_hints(turn),
            time_hints=[] if tools_disabled else time_hints(turn),
            answers=turn.answering,
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
            reply = self._ask_llm(turn, request, wording)
        except LLMError as exc:
            entry["error"] = f"{type(exc).__name__}: {exc}"
            raise LLMFailed(exc) from exc
        except Exception as exc:  # a misbehaving backend must not become a 500
            log.exception("LLM backend %s failed", getattr(self.backend, "name", "?"))
            entry["error"] = f"{type(exc).__name__}: {exc}"
            raise LLMFailed(LLMBadResponseError(f"backend failure: {exc}")) from exc
        if not isinstance(reply, LLMReply):
            entry["error"] = "not an LLMReply"
            raise LLMFailed(LLMBadResponseError("backend returned something that is not a reply"))
        entry["ms"] = round((time.perf_counter() - since) * 1000, 3)
        entry["tool_calls"] = [{"name": c.name, "arguments": c.arguments} for c in reply.tool_calls]
        if reply.content:
            entry["content"] = reply.content[:500]
        if reply.usage:
            entry["usage"] = reply.usage
        turn.stage("llm", since)
        return reply

    def _ask_llm(self, turn: Turn, request: LLMRequest, wording: bool) -> LLMReply:
        """The backend's reply; a streamed turn's `wording` of tool results goes to the
        events as it is written, and what was sent is what the reply says. An answer in
        words in place of a call is checked whole first (it may be refused)."""
        if turn.events is None or not wording:
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

    def _tools(self, turn: Turn) -> list[dict[str, Any]]:
        # The compact style leaves the server tools out: a small model confuses them with the
        # client's (get_current_datetime vs get_current_time) and each costs a round trip.
        if self.compact:
            return list(turn.catalog.openai_tools)
        return [*turn.catalog.openai_tools, *SERVER_TOOLS]

    def _history(self, turn: Turn) -> list[dict[str, Any]]:
        """The conversation's stored messages, read once a turn."""
        if turn.history is None:
            since = time.perf_counter()
            turn.history = self.store.history(turn.record)
            turn.stage("history", since)
        return turn.history

    def _messages(self, turn: Turn, with_history: bool = True) -> list[dict[str, Any]]:
        node_context = turn.node_context or turn.record.node_context
        if not with_history:
            turn.history = []
        history = self._history(turn)[-self.config.history_messages :]
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
        self, turn: Turn, calls: list[LLMToolCall]
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
        self, turn: Turn, calls: list[LLMToolCall], problems: list[CallProblem], attempt: int
    ) -> None:
        turn.scratch.append(assistant_tool_message(calls, None))
        for call in calls:
            mine = [p.line().lstrip("- ") for p in problems if p.tool_call_id == call.id]
            turn.scratch.append(
                tool_message(call.id, call.name,
                              {"success": False,
                               "error": "invalid arguments, not run" if mine else
                               "not run because another call was invalid",
                               "problems": mine})
            )
        turn.scratch.append(
            {"role": "system", "content": retry_message(problems, turn.catalog, attempt)}
        )

    def _give_up(
        self, turn: Turn, problems: list[CallProblem]
    ) -> tuple[ToolCallingResponse, dict[str, Any] | None]:
        params = {(p.tool_name, p.param) for p in problems}
        if len(params) == 1 and problems[0].param is not None:
            problem = problems[0]
            values = list(problem.valid_values) if problem.valid_values else None
            return self._ask_value(turn, problem.tool_name, problem.param, values,
                                   problem.tool_call_id)
        return self._error(
            turn, "Sorry, I couldn't work out how to do that. Could you say it another way?"
        )

    def _ask_for(
        self, turn: Turn, tool: str, param: str, tool_call_id: str | None,
        arguments: dict[str, Any] | None = None,
    ) -> tuple[ToolCallingResponse, dict[str, Any] | None]:
        """Ask the user for one value of `tool` (absent, or not said; `arguments`: what its
        call holds); a tool nothing the user said names is no request of theirs (see
        evocation.py): nothing to ask."""
        if not named(turn, tool, arguments):
            turn.trace["unevoked"] = {"tool": tool, "parameter": param}
            return self._complete(turn, REFUSAL)
        spec = turn.catalog.tools[tool].params.get(param)
        options = list(spec.enum) if spec is not None and spec.enum else None
        return self._ask_value(turn, tool, param, options, tool_call_id,
                               _kind_of(turn, tool, param))

    def _ask_value(
        self, turn: Turn, tool: str | None, param: str, options: list[str] | None,
        tool_call_id: str | None, kind: str | None = None,
    ) -> tuple[ToolCallingResponse, dict[str, Any] | None]:
        """Ask for `param` of `tool`. An answer that still leaves the value unsaid is asked
        once more, then let go: no call is sent with a value the user did not give."""
        question = parameter_question(param, options, kind)
        times = turn.asked[(tool, param)] if tool else 0
        if times >= MAX_ASKS:
            turn.trace["unanswered"] = {"tool": tool, "parameter": param}
            return self._complete(turn, not_caught(param))
        if times:
            question = f"Sorry, I didn't catch that. {question}"
        return self._ask_user(turn, question, param, options, tool_call_id, tool)

    def _run_server_tools(self, turn: Turn, calls: list[LLMToolCall]) -> None:
        since = time.perf_counter()
        where = zone(turn)
        turn.new_messages.append(assistant_tool_message(calls, None))
        for call in calls:
            result = run_server_tool(call.name, call.arguments, where, turn.now)
            turn.new_messages.append(tool_message(call.id, call.name, result))
            turn.trace["server_tools"].append(
                {"id": call.id, "name": call.name, "arguments": call.arguments, "result": result}
            )
        turn.stage("server_tools", since)

    def _llm_asks_user(
        self, turn: Turn, call: LLMToolCall
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
        turn: Turn,
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
        asked = sorted([*turn.asked.elements(), *([(tool_name, param)] if tool_name and param
                                                  else [])])
        pending = {"kind": "validation", **validation.model_dump(),
                   "node_failures": turn.node_failures, "asked": [list(a) for a in asked]}
        given = turn.given
        if given is not None and (given.tool, given.answered) == (tool_name, param):
            pending["given"] = given.arguments
        return self._response(turn, "validation_required", question,
                              validation=validation), pending

    def _complete(
        self, turn: Turn, text: str
    ) -> tuple[ToolCallingResponse, dict[str, Any] | None]:
        turn.new_messages.append({"role": "assistant", "content": text})
        return self._response(turn, "complete", text), None

    def _error(self, turn: Turn, text: str) -> tuple[ToolCallingResponse, dict[str, Any] | None]:
        turn.new_messages.append({"role": "assistant", "content": text})
        turn.trace["error"] = text
        return self._response(turn, "error", text), None


def _kind_of(turn: Turn, tool: str | None, param: str) -> str | None:
    """The declared kind of `param` of `tool` ("int", "str", ...), None when unknown."""
    spec = turn.catalog.tools[tool].params.get(param) if tool in turn.catalog.tools else None
    return spec.type.kind if spec is not None and spec.type is not None else None


def _trace_retry(turn: Turn, calls: list[LLMToolCall], problems: list[CallProblem],
                 attempt: int) -> None:
    turn.trace["retries"].append(
        {"source": "center", "attempt": attempt,
         "calls": [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls],
         "problems": [p.to_dict() for p in problems]}
    )


