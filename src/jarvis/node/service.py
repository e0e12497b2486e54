"""The node's side of a conversation: local pre-routing, then the tool-calling loop.

`CommandExecutionService.process_voice_command` first asks every command's `pre_route`;
a hit runs the command at once and the center is never contacted. Otherwise it registers
the node's commands for a new conversation, sends the utterance and follows the center's
`stop_reason` (run tools, ask the user, or finish) until the conversation completes.

With `on_sentence`, every word of the answer goes to it as soon as it is known: the
center's answer sentence by sentence while the center still writes it (a streamed turn),
any other answer (a local command's, an error) whole at the end. Questions go to the
validation handler, never to `on_sentence`.
"""

from __future__ import annotations

import json
import logging
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from pydantic import ValidationError

from jarvis.node.actions import actions_of
from jarvis.node.center_login import center_login
from jarvis.node.client import CenterError, JarvisCommandCenterClient
from jarvis.node.context import load_registry
from jarvis.node.first_use import PackageGate, PackagesUnavailableError, Progress
from jarvis.node.registry import CommandRegistry
from jarvis.node.settings import NodeSettings
from jarvis.node.store import NodeStore
from jarvis.node.tool_result_formatter import (
    format_missing_packages,
    format_missing_secrets,
    format_tool_error,
    format_tool_result,
)
from jarvis.node.turn_stream import SentenceHandler
from jarvis.protocol import (
    LocalTurn,
    NodeContext,
    ToolCall,
    ToolCallingResponse,
    ToolOutput,
    ToolResult,
    ValidationRequest,
)
from jarvis.protocol.models import MAX_LOCAL_TURNS, MAX_TEXT
from jarvis.sdk import (
    CommandResponse,
    IJarvisCommand,
    JarvisButton,
    MissingSecretsError,
    PreRouteResult,
    RequestInformation,
)

__all__ = [
    "CommandExecutionService",
    "ToolCallRecord",
    "ValidationHandler",
    "VoiceCommandResult",
    "console_validation_handler",
]

log = logging.getLogger(__name__)

ValidationHandler = Callable[[ValidationRequest], str | None]

DEFAULT_MAX_ROUND_TRIPS = 10
MAX_UTTERANCE = MAX_TEXT


def console_validation_handler(request: ValidationRequest) -> str | None:
    """Ask the clarifying question on the terminal; None when input has ended."""
    print(request.question)
    if request.options:
        print("Options: " + ", ".join(request.options))
    try:
        return input("> ").strip()
    except EOFError:
        return None


@dataclass
class ToolCallRecord:
    """One command run during an utterance: what was asked and what it answered."""

    tool_call_id: str | None
    name: str
    arguments: dict[str, Any]
    success: bool
    message: str | None
    output: dict[str, Any]
    duration_ms: float
    error_type: str | None = None


@dataclass(eq=False)
class VoiceCommandResult(Mapping[str, Any]):
    """The answer to speak and how it came about: `result.message` or `result["message"]`."""

    message: str
    stop_reason: str
    conversation_id: str | None
    pre_routed: bool = False
    wait_for_input: bool = False
    tool_calls: list[ToolCallRecord] = field(default_factory=list)
    round_trips: int = 0
    timings: dict[str, float] = field(default_factory=dict)
    # Buttons under the answer; picking one sends its `action` as the next utterance.
    actions: list[JarvisButton] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["actions"] = [action.model_dump() for action in self.actions]
        return data

    # Read-only mapping over the fields, so `result["message"]` works like `result.message`.
    def __getitem__(self, key: str) -> Any:
        if key not in self._keys():
            raise KeyError(key)
        return getattr(self, key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys())

    def __len__(self) -> int:
        return len(self._keys())

    @classmethod
    def _keys(cls) -> tuple[str, ...]:
        return tuple(f.name for f in fields(cls))


class _Clock:
    """Milliseconds spent per phase of one utterance."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.phases: dict[str, float] = {}

    def add(self, phase: str, since: float) -> None:
        elapsed = (time.perf_counter() - since) * 1000
        self.phases[phase] = self.phases.get(phase, 0.0) + elapsed

    def finish(self) -> dict[str, float]:
        self.add("total_ms", self.started)
        return {k: round(v, 3) for k, v in self.phases.items()}


class _Relay:
    """Hands the center's sentences on, counting them and timing the first."""

    def __init__(self, on_sentence: SentenceHandler | None, clock: _Clock) -> None:
        self.on_sentence = on_sentence
        self.clock = clock
        self.count = 0

    @property
    def handler(self) -> SentenceHandler | None:
        """What the client calls per sentence (None: the turn is not streamed)."""
        return self if self.on_sentence is not None else None

    def __call__(self, sentence: str) -> None:
        if self.count == 0:
            self.clock.add("first_sentence_ms", self.clock.started)
        self.count += 1
        assert self.on_sentence is not None
        self.on_sentence(sentence)

    def rest(self, result: VoiceCommandResult) -> VoiceCommandResult:
        """`result`, once its message went to `on_sentence` (unless streamed already)."""
        streamed = self.count > 0 and result.stop_reason == "complete"
        if self.on_sentence is not None and result.message and not streamed:
            self.on_sentence(result.message)
        return result


def _waits(turn: LocalTurn) -> bool:
    """Whether a kept fast-path exchange waits for input (or offers choices)."""
    return turn.output.wait_for_input or bool(actions_of(turn.output.context))


class CommandExecutionService:
    """Runs utterances for one node; keeps a conversation open when a command asks to.

    Every argument has a default read from the node's settings (`NodeSettings.from_env`):
    the registry holds every command found for `settings.data_dir`, and the client talks to
    `settings.center_url` (`JARVIS_CENTER_URL`). What the service opened itself it closes in
    `close()` (or at the end of a `with` block).
    """

    def __init__(
        self,
        registry: CommandRegistry | None = None,
        client: JarvisCommandCenterClient | None = None,
        settings: NodeSettings | None = None,
        *,
        validation_handler: ValidationHandler | None = None,
        max_round_trips: int = DEFAULT_MAX_ROUND_TRIPS,
        progress: Progress | None = None,
    ) -> None:
        self.settings = settings or NodeSettings.from_env()
        self._opened: list[NodeStore | JarvisCommandCenterClient | CommandRegistry] = []
        store = NodeStore(self.settings.data_dir)
        self._opened.append(store)
        if registry is None:
            store.migrate()
            registry = load_registry(self.settings, store)
            self._opened.append(registry)  # its MCP servers stop with the service
        login = center_login(self.settings, store) if client is None else None
        if login is not None and login.url:
            client = JarvisCommandCenterClient(login.url, ca_file=self.settings.center_ca,
                                               key=login.key)
            self._opened.append(client)
        self.registry = registry
        self.client = client
        # Missing `required_packages` are installed on a command's first use.
        self.packages = PackageGate(
            self.settings.data_dir, allowed=self.settings.auto_install, progress=progress
        )
        self.validation_handler = validation_handler or console_validation_handler
        self.max_round_trips = max_round_trips
        self._pending_conversation_id: str | None = None
        # The last answer waits for input (listen again without the wake word).
        self._listening = False
        # Fast-path exchanges awaiting a follow-up; the next center request carries them.
        self._local_turns: list[LocalTurn] = []

    def close(self) -> None:
        """Close the store and client this service opened itself (never those passed in)."""
        while self._opened:
            self._opened.pop().close()

    def __enter__(self) -> CommandExecutionService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # --- state ----------------------------------------------------------------------------
    @property
    def pending_conversation_id(self) -> str | None:
        """The conversation the next utterance continues, if any: after an answer that waits
        for input, or after a command whose refinable values the next words may change."""
        return self._pending_conversation_id

    @property
    def pending_local_turns(self) -> list[LocalTurn]:
        """Exchanges answered locally that the next utterance sent to the center carries."""
        return list(self._local_turns)

    @property
    def awaiting_follow_up(self) -> bool:
        """True when the next utterance is awaited without the wake word: the last answer,
        local or from the center, waits for input or offers actions."""
        return self._listening

    def end_conversation(self) -> None:
        self._pending_conversation_id = None
        self._listening = False
        self._local_turns = []

    def node_context(self) -> NodeContext:
        return NodeContext(
            timezone=self.settings.timezone, node_id=self.settings.node_id, room=self.settings.room
        )

    def tool_definitions(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """`client_tools` (OpenAI schemas) and `available_commands` (rich schemas)."""
        client_tools: list[dict[str, Any]] = []
        available: list[dict[str, Any]] = []
        for command in self.registry:
            try:
                tool = command.to_openai_tool_schema()
                schema = command.get_command_schema()
            except Exception as exc:  # one broken command must not hide the others
                log.warning("skipping %s: its schema failed: %s", command.command_name, exc)
                continue
            client_tools.append(tool)
            available.append(schema)
        return client_tools, available

    # --- entry point ------------------------------------------------------------------------
    def process_voice_command(
        self,
        text: str,
        register_tools: bool = True,
        validation_handler: ValidationHandler | None = None,
        on_sentence: SentenceHandler | None = None,
    ) -> VoiceCommandResult:
        """One utterance from text to the answer to speak.

        `on_sentence` gets the answer as it becomes known (see the module docstring); the
        result's `message` is the whole of it all the same.

        Raises `CenterError` when the center cannot be reached or rejects a request, and
        `ValueError` for an empty or over-long utterance.
        """
        clock = _Clock()
        text = text.strip()
        if not text:
            raise ValueError("empty utterance")
        if len(text) > MAX_UTTERANCE:
            raise ValueError(
                f"utterance too long ({len(text)} characters; the limit is {MAX_UTTERANCE})"
            )
        started = time.perf_counter()
        hit = self._pre_route(text)
        clock.add("pre_route_ms", started)
        relay = _Relay(on_sentence, clock)
        if hit is not None:
            command, route = hit
            self._pending_conversation_id = None  # a local command starts a new topic
            return relay.rest(self._run_pre_routed(command, route, text, clock))
        if self.client is None:
            raise CenterError(
                "no command center is configured for this node (set JARVIS_CENTER_URL)"
            )
        return relay.rest(self._converse(text, register_tools, validation_handler, relay))

    # --- pre-routing ------------------------------------------------------------------------
    def _pre_route(self, text: str) -> tuple[IJarvisCommand, PreRouteResult] | None:
        for command in self.registry:
            try:
                route = command.pre_route(text)
            except Exception as exc:  # a faulty matcher must not block the others
                log.warning("%s.pre_route failed: %s", command.command_name, exc)
                continue
            if route is not None:
                return command, route
        return None

    def _run_pre_routed(
        self,
        command: IJarvisCommand,
        route: PreRouteResult,
        text: str,
        clock: _Clock,
    ) -> VoiceCommandResult:
        started = time.perf_counter()
        # An id of the node's own: a later refinement of this call names it.
        call_id = f"local-{uuid.uuid4().hex[:12]}"
        result, record = self._execute(command, dict(route.arguments), text, None, call_id)
        clock.add("tools_ms", started)
        output = result.output
        if output.success and route.spoken_response:
            message = route.spoken_response
        else:
            message = output.message or ("Done." if output.success else "That did not work.")
        wait_for_input = output.success and output.wait_for_input
        actions = actions_of(output.context) if output.success else []
        # A refinable value ran: "actually make it 20 minutes" may follow, which only the
        # center can read, so the exchange goes with it (without listening for it).
        kept = False
        if wait_for_input or actions or self._refinable_ran([record]):
            kept = self._remember_local_turn(text, record, output, message)
            wait_for_input = wait_for_input and kept
        else:
            self._local_turns = []  # nothing to follow up on: a later utterance starts afresh
        self._listening = kept and bool(wait_for_input or actions)
        return VoiceCommandResult(
            message=message,
            stop_reason="complete" if output.success else "error",
            conversation_id=None,
            pre_routed=True,
            wait_for_input=wait_for_input,
            tool_calls=[record],
            timings=clock.finish(),
            actions=actions,
        )

    def _remember_local_turn(
        self, text: str, record: ToolCallRecord, output: ToolOutput, message: str
    ) -> bool:
        """Keep a follow-up-worthy exchange for the center; False when it cannot be sent.

        It joins the ones before it only while they all wait for input: one kept only for
        a change of its values ("set a timer for 10 minutes") is no referent for what
        follows a later answer, and its values would be read into the follow-up."""
        try:
            turn = LocalTurn(
                voice_command=text,
                tool_name=record.name,
                tool_call_id=record.tool_call_id,
                # pre_route's arguments as run: secrets are read inside the command, never here.
                arguments=record.arguments,
                output=output,
                assistant_message=message,
            )
        except ValidationError as exc:
            log.info("%s: its answer cannot be sent as context: %s", record.name, exc)
            self._local_turns = []
            return False
        last = self._local_turns[-1] if self._local_turns else None
        earlier = self._local_turns if last is not None and _waits(last) else []
        self._local_turns = [*earlier, turn][-MAX_LOCAL_TURNS:]
        return True

    # --- the conversation loop ---------------------------------------------------------------
    def _converse(
        self,
        text: str,
        register_tools: bool,
        validation_handler: ValidationHandler | None,
        relay: _Relay,
    ) -> VoiceCommandResult:
        assert self.client is not None
        clock, stream = relay.clock, relay.handler
        handler = validation_handler or self.validation_handler
        records: list[ToolCallRecord] = []
        conversation_id, response = self._open_conversation(text, register_tools, relay)
        round_trips = 1
        wait_for_input = False
        actions: list[JarvisButton] = []
        while response.stop_reason in ("tool_calls", "validation_required"):
            if round_trips >= self.max_round_trips:
                return _stopped("Sorry, I could not finish that request.", "error",
                                conversation_id, records, round_trips, clock)
            if response.stop_reason == "tool_calls":
                calls = response.tool_calls or []
                if not calls:
                    return self._protocol_error(
                        "the center asked for tools but named none",
                        conversation_id, records, round_trips, clock,
                    )
                results = self._run_tool_calls(calls, text, conversation_id, records, clock)
                wait_for_input = any(r.output.wait_for_input for r in results)
                actions = [a for r in results for a in actions_of(r.output.context)]
                started = time.perf_counter()
                response = self.client.send_tool_results(
                    conversation_id, results, on_sentence=stream)
                clock.add("center_ms", started)
            else:
                answered = self._ask_user(response, handler, conversation_id, relay)
                if answered is None:
                    return _stopped("Okay, never mind.", "complete",
                                    conversation_id, records, round_trips, clock)
                response = answered
            round_trips += 1
        return self._final_result(
            response, conversation_id, records, round_trips, wait_for_input, actions, clock
        )

    def _open_conversation(
        self, text: str, register_tools: bool, relay: _Relay
    ) -> tuple[str, ToolCallingResponse]:
        """Send `text` on in the pending conversation, or else in a new one (registering the
        tools when `register_tools`); the conversation's id and the center's response."""
        assert self.client is not None
        context = self.node_context()
        conversation_id = self._pending_conversation_id
        self._pending_conversation_id, self._listening = None, False
        local_turns, self._local_turns = self._local_turns, []
        if conversation_id is not None:
            response = self._resume(text, conversation_id, context, local_turns, relay)
            if response is not None:
                return conversation_id, response
        conversation_id = str(uuid.uuid4())
        started = time.perf_counter()
        if register_tools:
            client_tools, available = self.tool_definitions()
            self.client.start_conversation(conversation_id, context, client_tools, available)
            local_turns = _offered(local_turns, client_tools)
        response = self.client.send_command(
            text, conversation_id, context, local_turns, on_sentence=relay.handler)
        relay.clock.add("center_ms", started)
        return conversation_id, response

    def _resume(
        self,
        text: str,
        conversation_id: str,
        context: NodeContext,
        local_turns: list[LocalTurn],
        relay: _Relay,
    ) -> ToolCallingResponse | None:
        """The center's response to `text` in an open conversation; None when it is gone."""
        assert self.client is not None
        started = time.perf_counter()
        try:
            response: ToolCallingResponse | None = self.client.send_command(
                text, conversation_id, context, local_turns, on_sentence=relay.handler)
        except CenterError as exc:
            if exc.status_code != 404:
                raise
            log.info("conversation %s is gone; starting a new one", conversation_id)
            response = None
        relay.clock.add("center_ms", started)
        return response

    def _run_tool_calls(
        self,
        calls: list[ToolCall],
        text: str,
        conversation_id: str,
        records: list[ToolCallRecord],
        clock: _Clock,
    ) -> list[ToolResult]:
        """Run the tools the center asked for, in order, adding each run to `records`."""
        started = time.perf_counter()
        results = []
        for call in calls:
            result, record = self._run_tool_call(call, text, conversation_id)
            results.append(result)
            records.append(record)
        clock.add("tools_ms", started)
        return results

    def _ask_user(
        self,
        response: ToolCallingResponse,
        handler: ValidationHandler,
        conversation_id: str,
        relay: _Relay,
    ) -> ToolCallingResponse | None:
        """Put the center's question to the user and send the answer back; None when the
        user gave none."""
        assert self.client is not None
        request = response.validation_request or ValidationRequest(
            question=response.assistant_message or "Could you say that more precisely?"
        )
        started = time.perf_counter()
        answer = handler(request)
        relay.clock.add("user_ms", started)
        if not answer:
            return None
        started = time.perf_counter()
        answered = self.client.send_validation_response(
            conversation_id, answer, on_sentence=relay.handler)
        relay.clock.add("center_ms", started)
        return answered

    def _final_result(
        self,
        response: ToolCallingResponse,
        conversation_id: str,
        records: list[ToolCallRecord],
        round_trips: int,
        wait_for_input: bool,
        actions: list[JarvisButton],
        clock: _Clock,
    ) -> VoiceCommandResult:
        """The result of a finished exchange; keeps the conversation open when it may go on."""
        if response.stop_reason == "complete":
            message = response.assistant_message or ""
            # A picked button, or a change of a refinable value ("actually make it 20
            # minutes"), continues this conversation.
            if wait_for_input or actions or self._refinable_ran(records):
                self._pending_conversation_id = conversation_id
            self._listening = bool(wait_for_input or actions)
        else:
            message = response.assistant_message or "Sorry, something went wrong."
            wait_for_input, actions = False, []
        return VoiceCommandResult(
            message=message,
            stop_reason=response.stop_reason,
            conversation_id=conversation_id,
            wait_for_input=wait_for_input,
            tool_calls=records,
            round_trips=round_trips,
            timings=clock.finish(),
            actions=actions,
        )

    def _protocol_error(
        self,
        why: str,
        conversation_id: str,
        records: list[ToolCallRecord],
        round_trips: int,
        clock: _Clock,
    ) -> VoiceCommandResult:
        log.warning("conversation %s: %s", conversation_id, why)
        return _stopped("Sorry, something went wrong.", "error",
                        conversation_id, records, round_trips, clock)

    # --- running commands ------------------------------------------------------------------
    def run_command(
        self, name: str, arguments: dict[str, Any], voice_command: str = ""
    ) -> ToolResult:
        """One command run outside a conversation (an MCP client's call), with the same
        `post_process_tool_call` -> `execute()` path and the same error results."""
        call_id = f"call-{uuid.uuid4().hex[:12]}"
        command = self.registry.get(name)
        if command is None:
            return format_tool_error(call_id, f"unknown command '{name}'")
        try:
            arguments = command.post_process_tool_call(dict(arguments), voice_command)
        except Exception as exc:
            log.warning("%s.post_process_tool_call failed: %s", name, exc)
            return format_tool_error(call_id, exc, name)
        result, _ = self._execute(command, arguments, voice_command, None, call_id)
        return result

    def _refinable_ran(self, records: list[ToolCallRecord]) -> bool:
        """Whether a command with a refinable parameter ran: the next utterance may change
        one of its values, which only this conversation's center knows."""
        for record in records:
            command = self.registry.get(record.name) if record.success else None
            if command is not None and any(p.refinable for p in command.parameters):
                return True
        return False

    def _run_tool_call(
        self, call: ToolCall, text: str, conversation_id: str
    ) -> tuple[ToolResult, ToolCallRecord]:
        name = call.function.name
        command = self.registry.get(name)
        if command is None:
            result = format_tool_error(call.id, f"unknown tool '{name}'")
            return result, self._record(call.id, name, {}, result, 0.0, "UnknownTool")
        try:
            arguments = call.function.parsed_arguments()
        except ValueError as exc:
            result = format_tool_error(call.id, f"arguments are not a JSON object: {exc}", name)
            return result, self._record(call.id, name, {}, result, 0.0, "BadArguments")
        try:
            arguments = command.post_process_tool_call(dict(arguments), text)
        except Exception as exc:
            log.warning("%s.post_process_tool_call failed: %s", name, exc)
            result = format_tool_error(call.id, exc, name)
            return result, self._record(call.id, name, arguments, result, 0.0, type(exc).__name__)
        return self._execute(command, arguments, text, conversation_id, call.id,
                             refines=call.refines)

    def _execute(
        self,
        command: IJarvisCommand,
        arguments: dict[str, Any],
        text: str,
        conversation_id: str | None,
        tool_call_id: str | None,
        refines: str | None = None,
    ) -> tuple[ToolResult, ToolCallRecord]:
        """`execute()` with every failure turned into a result the LLM and user can read;
        `refines` is the id of the earlier call this one changes."""
        name = command.command_name
        call_id = tool_call_id or f"local-{uuid.uuid4().hex[:12]}"
        info = RequestInformation(
            voice_command=text,
            conversation_id=conversation_id,
            node_id=self.settings.node_id,
            room=self.settings.room,
            timezone=self.settings.timezone,
            tool_call_id=tool_call_id,
            refines_tool_call_id=refines,
        )
        started = time.perf_counter()
        error_type: str | None = None
        try:
            self.packages.ensure(command)
            response = command.execute(info, **arguments)
            if not isinstance(response, CommandResponse):
                raise TypeError(f"run() returned {type(response).__name__}, not CommandResponse")
            result = format_tool_result(call_id, response)
        except PackagesUnavailableError as exc:
            error_type = type(exc).__name__
            log.warning("%s: %s", name, exc.message)
            result = format_missing_packages(call_id, exc.message, exc.requirements)
        except MissingSecretsError as exc:
            error_type = type(exc).__name__
            scopes = {s.key: s.scope for s in _safe_secrets(command)}
            if exc.command_name is None:
                exc.command_name = name
            log.info("%s: missing secrets %s", name, ", ".join(exc.missing))
            result = format_missing_secrets(call_id, exc, scopes)
        except Exception as exc:
            error_type = type(exc).__name__
            log.warning("%s raised %s: %s", name, error_type, exc)
            result = format_tool_error(call_id, exc, name)
        duration = (time.perf_counter() - started) * 1000
        return result, self._record(tool_call_id, name, arguments, result, duration, error_type)

    @staticmethod
    def _record(
        tool_call_id: str | None,
        name: str,
        arguments: dict[str, Any],
        result: ToolResult,
        duration_ms: float,
        error_type: str | None = None,
    ) -> ToolCallRecord:
        return ToolCallRecord(
            tool_call_id=tool_call_id,
            name=name,
            arguments=json.loads(json.dumps(arguments, default=str)),
            success=result.output.success,
            message=result.output.message,
            output=result.output.model_dump(mode="json"),
            duration_ms=round(duration_ms, 3),
            error_type=error_type,
        )


def _stopped(
    message: str,
    stop_reason: str,
    conversation_id: str,
    records: list[ToolCallRecord],
    round_trips: int,
    clock: _Clock,
) -> VoiceCommandResult:
    """The result of an exchange that ended before the center's final answer."""
    return VoiceCommandResult(
        message=message,
        stop_reason=stop_reason,
        conversation_id=conversation_id,
        tool_calls=records,
        round_trips=round_trips,
        timings=clock.finish(),
    )


def _offered(turns: list[LocalTurn], client_tools: list[dict[str, Any]]) -> list[LocalTurn]:
    """The turns whose command was registered (the center refuses the others)."""
    names = {tool.get("function", {}).get("name") for tool in client_tools}
    return [turn for turn in turns if turn.tool_name in names]


def _safe_secrets(command: IJarvisCommand) -> list[Any]:
    try:
        return list(command.required_secrets)
    except Exception:
        return []

