"""`EmbeddedBackend`: a small GGUF model run in-process with llama-cpp-python.

Made for a 2-core machine without GPU: one model instance served by one thread, the system
prompt + tools evaluated once and kept (`PromptContext`: live in the context, as saved KV
states in a small LRU keyed by the prefix tokens, and on disk), and every tool call
produced under a grammar by the `Decoder`, which spends model evaluations only where the
output is open.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt

from jarvis.center.grounding import (
    durations_said,
    said_in_full,
    unsaid_required,
)
from jarvis.center.keywords import asks_for_information
from jarvis.center.llm.base import (
    LLMError,
    LLMPromptTooLongError,
    LLMReply,
    LLMRequest,
    LLMToolCall,
    LLMUnavailableError,
    TextSink,
)
from jarvis.center.llm.embedded import request_text
from jarvis.center.llm.embedded.answer_probe import AnswerProbe, AnswerProbeError
from jarvis.center.llm.embedded.grammar import arguments_schema, tool_name, value_grammar
from jarvis.center.llm.embedded.grounding import never_said, respelled_required_text
from jarvis.center.llm.embedded.model_thread import ModelThread
from jarvis.center.llm.embedded.options import EmbeddedOptions
from jarvis.center.llm.embedded.spoken_answer import (
    NO_TOOL,
    SAY_LABEL,
    looks_like_a_call,
    names_a_tool,
    speakable,
    whole_sentences,
    with_no_tool,
)
from jarvis.center.llm.model_store import ModelStoreError, resolve_model_path

try:  # optional dependency: the `embedded` extra
    import llama_cpp
except ImportError:  # pragma: no cover - exercised only without the extra
    llama_cpp = None  # type: ignore[assignment]

if llama_cpp is not None:
    from jarvis.center.llm.embedded.call_writer import CallWriter
    from jarvis.center.llm.embedded.decode_inputs import (
        DecodeSettings,
        Heard,
        KeyBiases,
        ValueChecks,
    )
    from jarvis.center.llm.embedded.decoder import Decoder, read_last_logits
    from jarvis.center.llm.embedded.first_token import call_or_text, first_tokens
    from jarvis.center.llm.embedded.grammar_sampler import GrammarSampler
    from jarvis.center.llm.embedded.loaded_model import LoadedModel, open_model


_T = TypeVar("_T")


def default_threads() -> int:
    """The cores this process may use (llama.cpp gains nothing from hyper-threads here)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        return max(1, os.cpu_count() or 1)



@dataclass
class _Turn:
    """A request as `_complete` prepared it: the prompt read, its grammar, the probe's say."""

    request: LLMRequest
    writer: CallWriter
    full: npt.NDArray[np.intc]
    prefix: npt.NDArray[np.intc]
    deadline: float
    info: dict[str, Any]  # as `PromptContext.restore` left it
    use_tools: bool
    pseudo: bool  # the `say` pseudo tool is offered
    choice_tools: list[dict[str, Any]]
    grammar: GrammarSampler | None
    opening: list[int] | None
    probe_score: float | None
    verdict: str | None
    prompt_ms: float


@dataclass
class _Outcome:
    """What a turn of `_complete` wrote, and the decoder it ended with."""

    decoder: Decoder
    content: str | None = None
    calls: list[LLMToolCall] = field(default_factory=list)
    finish: str = "stop"
    passes: int = 0  # forward passes of decoders given up on (`_rewind`)
    name_scores: dict[str, float] = field(default_factory=dict)


class EmbeddedBackend:
    """LLMBackend running a GGUF model in-process (Qwen2.5-Coder-0.5B by default).

    Args:
        model_path: a GGUF file; default `resolve_model_path()` (JARVIS_MODEL_PATH, else
            the prepared model in the data directory).
        options: how it loads, reads prompts and decodes (`EmbeddedOptions`, documented
            field by field; docs/embedded-llm.md explains the method).
        state_listener: called with the hidden states of every utterance (the answer
            probe's features); for training a probe (bench/train_answer_probe.py).
    """

    name = "embedded"

    def __init__(
        self,
        model_path: str | Path | None = None,
        options: EmbeddedOptions | None = None,
        *,
        state_listener: Callable[[dict[str, npt.NDArray[np.float32]]], None] | None = None,
    ) -> None:
        self.options = options = options or EmbeddedOptions()
        self.state_listener = state_listener
        self._probe: AnswerProbe | None = None
        self.n_threads = options.n_threads or default_threads()
        self._rng = np.random.default_rng(options.seed)
        self._model_path = Path(model_path) if model_path is not None else None
        # Every llama.cpp call runs on this one thread: see `_on_model_thread`.
        self._model_thread: ModelThread | None = None
        self._model_thread_lock = threading.Lock()
        self._model: LoadedModel | None = None  # read on the model thread at first use
        self._first_gap: float | None = None  # of the last call-or-answer decision (usage)
        # The last request's prompt and the tokens its reply wrote: see `_draft_source`.
        self._last_written: tuple[npt.NDArray[np.intc], list[int]] | None = None

    @property
    def prompt_style(self) -> str:
        """Which of the center's prompts this backend wants (read by the engine)."""
        return self.options.prompt_style

    @property
    def reads_date_hints(self) -> bool:
        """Date arguments come from the request's date hints, so the prompt needs no table."""
        return self.options.use_date_hints

    # --- loading --------------------------------------------------------------------------
    @property
    def model_path(self) -> Path:
        """The model file this backend loads (resolved on first use)."""
        if self._model_path is None:
            try:
                self._model_path = resolve_model_path()
            except ModelStoreError as exc:
                raise LLMUnavailableError(str(exc)) from exc
        return self._model_path

    def load(self) -> None:
        """Load the model now (otherwise done on first use); raises LLMUnavailableError."""
        self._on_model_thread(self._load)

    def _load(self) -> None:
        if self._model is not None:
            return
        if llama_cpp is None:
            raise LLMUnavailableError(
                "the embedded backend needs llama-cpp-python: "
                "pip install 'jarvis-assistant[embedded]'"
            )
        model = open_model(self.model_path, self.options, self.n_threads)
        try:
            self._probe = AnswerProbe.chosen(self.options.answer_probe, self.model_path,
                                             model.llm.n_embd())
        except AnswerProbeError as exc:
            model.close()
            raise LLMUnavailableError(str(exc)) from exc
        self._model = model

    @property
    def _loaded(self) -> LoadedModel:
        """The model, on the model thread once `_load` has run."""
        assert self._model is not None
        return self._model

    @property
    def answer_probe(self) -> AnswerProbe | None:
        """The probe in use (known once the model is loaded)."""
        return self._probe

    def close(self) -> None:
        """Free the model and the cached states, and stop the model thread."""
        with self._model_thread_lock:
            worker, self._model_thread = self._model_thread, None
        if worker is None:
            self._close()
            return
        worker.run(self._close)
        worker.stop()

    def _on_model_thread(self, work: Callable[..., _T], *args: Any) -> _T:
        """Run `work` on the backend's own long-lived thread (`ModelThread`) and wait."""
        with self._model_thread_lock:
            if self._model_thread is None:
                self._model_thread = ModelThread()
            worker = self._model_thread
        return worker.run(work, *args)

    def _close(self) -> None:
        model, self._model = self._model, None
        self._last_written = None
        if model is not None:
            model.close()

    # --- public API -------------------------------------------------------------------------
    def warm(
        self,
        messages_prefix: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        allow_direct_answer: bool = True,
    ) -> dict[str, Any]:
        """Evaluate a conversation's fixed start (system message + tools) ahead of time.

        Call it when a conversation starts; the first utterance then only pays for its own
        tokens. Returns timings. Messages after the first system message are included too
        (e.g. few-shot examples) if given. `allow_direct_answer` must match the requests
        to come: it decides whether the `say` pseudo tool is part of the prompt.
        """
        return self._on_model_thread(self._warm, messages_prefix, tools, allow_direct_answer)

    def _warm(
        self,
        messages_prefix: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        allow_direct_answer: bool,
    ) -> dict[str, Any]:
        started = time.perf_counter()
        self._load()
        model = self._loaded
        if tools and allow_direct_answer and self.options.no_tool_choice:
            tools = with_no_tool(tools)
        tokens = model.layout.start_tokens(messages_prefix, tools)
        if len(tokens) + 16 > self.options.n_ctx:
            raise LLMPromptTooLongError(
                f"the prompt prefix is {len(tokens)} tokens but the embedded model's "
                f"context is {self.options.n_ctx}"
            )
        if tools:
            model.grammar_for(tools)
        if model.context.holds(tokens):
            # Already read and saved: leave the context as it is, so the next request
            # also reuses what follows (`<|im_start|>user`) and waits for no evaluation.
            info = {"reused_tokens": len(tokens), "evaluated_tokens": 0,
                    "prefix_cache": "live"}
        else:
            info = model.context.restore(tokens, tokens, deadline=None)
        info["total_ms"] = round((time.perf_counter() - started) * 1000, 1)
        return info

    def complete(self, request: LLMRequest) -> LLMReply:
        """Run one completion; see the module docstring for how."""
        return self.stream(request, None)

    def stream(self, request: LLMRequest, on_text: TextSink | None) -> LLMReply:
        """`complete`, handing a plain-text reply (tools off) to `on_text` as it is written.
        An answer given in place of a call is handed on whole, since it may still be
        rewritten (`speakable`) or redone as a call."""
        started = time.perf_counter()
        deadline = time.monotonic() + request.timeout
        return self._on_model_thread(self._complete_now, request, started, deadline, on_text)

    def _complete_now(
        self, request: LLMRequest, started: float, deadline: float, on_text: TextSink | None
    ) -> LLMReply:
        self._load()
        try:
            return self._complete(request, started, deadline, on_text)
        except LLMError:
            raise
        except Exception as exc:  # a llama.cpp failure must reach the engine typed
            raise LLMUnavailableError(f"embedded model failed: {exc}") from exc

    # --- internals --------------------------------------------------------------------------
    def _complete(
        self, request: LLMRequest, started: float, deadline: float, on_text: TextSink | None
    ) -> LLMReply:
        """One completion on the model thread: read the prompt, decide, and write the reply."""
        turn = self._prepare(request, started, deadline)
        decoder = self._decoder(request, turn.full, turn.prefix, deadline, turn.opening,
                                turn.info)
        self._first_gap = None
        if turn.use_tools and turn.grammar is not None and turn.pseudo:
            outcome = self._turn_with_say(turn, turn.grammar, decoder)
        elif turn.use_tools and turn.grammar is not None:
            outcome = self._call_or_answer_turn(turn, turn.grammar, decoder)
        else:
            outcome = self._text_turn(request, decoder, on_text)
        content = outcome.content
        if turn.use_tools and content is not None:  # in place of a call: see speakable
            content = speakable(content, request_text.utterance(request),
                                request_text.not_to_copy(request))
        reply = self._reply(outcome.decoder, turn.full, turn.info, content, outcome.calls,
                            outcome.finish, started, turn.prompt_ms, outcome.passes)
        self._last_written = (turn.full, list(outcome.decoder.generated))
        self._note_decision(reply, turn, outcome.name_scores)
        return reply

    def _prepare(self, request: LLMRequest, started: float, deadline: float) -> _Turn:
        """The prompt read into the context, its grammar, and the answer probe's verdict."""
        model = self._loaded
        use_tools = bool(request.tools) and not request.tools_disabled
        choice_tools = request.tools
        pseudo = use_tools and request.allow_direct_answer and self.options.no_tool_choice
        if pseudo:
            choice_tools = with_no_tool(request.tools)
        full, prefix = model.layout.request_tokens(request.messages,
                                                   choice_tools if use_tools else None)
        if len(prefix) and not np.array_equal(full[: len(prefix)], prefix):
            prefix = full[:0]
        if len(full) + 16 > self.options.n_ctx:
            raise LLMPromptTooLongError(
                f"the prompt is {len(full)} tokens but the embedded model's context is "
                f"{self.options.n_ctx}; fewer tools, a shorter history or a larger n_ctx would fit"
            )
        grammar = model.grammar_for(choice_tools) if use_tools else None
        # Most requests with tools end in a call: its opening is read with the prompt.
        primed = use_tools and self.options.prime_call
        opening = model.call_opening(choice_tools) if primed else None
        # The answer probe reads the hidden states of the user's own words; it was trained
        # on a conversation's first utterance, so a follow-up is left to the model.
        want_states = bool(opening) and pseudo and request_text.first_utterance(request) and (
            self._probe is not None or self.state_listener is not None)
        info = model.context.restore(full, prefix, deadline=deadline, after=opening,
                                     states=want_states)
        states = info.pop("states", None)
        if states is not None and self.state_listener is not None:
            self.state_listener(states)
        probe_score = (self._probe.score(states)
                       if states is not None and self._probe is not None else None)
        verdict = ("call" if request.must_call or request.only_tool
                   else self._probe_verdict(request, probe_score))
        prompt_ms = (time.perf_counter() - started) * 1000
        return _Turn(request, CallWriter(model, self.options), full, prefix, deadline, info,
                     use_tools, pseudo, choice_tools, grammar, opening, probe_score, verdict,
                     prompt_ms)

    def _turn_with_say(self, turn: _Turn, grammar: GrammarSampler, decoder: Decoder) -> _Outcome:
        """The turn where `say` is offered beside the client's tools: a call, or an answer."""
        request = turn.request
        choice_tools = turn.choice_tools
        out = _Outcome(decoder)
        # When no command's keyword was heard, two signals must agree on a call: the
        # reply's first token, then the name choice with the pseudo tool. A keyword
        # heard is evidence enough to go straight to the name choice.
        wants_call, first_text = True, None
        heard = any(v > 0 for v in request.tool_hints.values())
        # Every tool declares keywords and none was heard.
        unheard = not heard and bool(request.tool_hints) and all(
            tool_name(t) in request.tool_hints for t in request.tools)
        if turn.verdict == "answer":
            wants_call = False
            _, first_text = first_tokens(self._loaded, out.decoder.logits(), request.tools)
        elif turn.verdict == "call":  # a request: only which command is left to choose
            choice_tools = request_text.only_tool(request)
            grammar, unheard = self._loaded.grammar_for(choice_tools), False
        elif self.options.first_token_check == "always" or (
                self.options.first_token_check == "unheard" and not heard):
            wants_call, first_text = self._call_or_text(out.decoder, request.tools)
        if not wants_call:
            out.content, out.finish = self._answer(request, out.decoder, first_text)
            if looks_like_a_call(out.content):
                # It wrote a call as text ('toggle porch light {"action": ...}'): redo
                # it as a call under the grammar, from the end of the prompt.
                self._redo(turn, out)
                wants_call, out.content = True, None
        if wants_call:
            out.calls = turn.writer.calls(out.decoder, choice_tools, grammar, request.tool_hints,
                                          request_text.user_turns(request), unheard=unheard,
                                          related=request.tool_relatedness)
            out.name_scores = out.decoder.name_scores
            out.finish = "tool_calls"
        if out.calls and out.calls[0].name == NO_TOOL and choice_tools is not request.tools:
            self._answer_for_say(turn, out)
        return out

    def _answer_for_say(self, turn: _Turn, out: _Outcome) -> None:
        """`say` was chosen: answer in words instead (or call, if the answer is a call)."""
        request = turn.request
        # Back to the end of the prompt (one token re-read), then answer in words.
        self._redo(turn, out)
        # Start from the best token that does not open a call (not a bare `{"`).
        _, first = first_tokens(self._loaded, out.decoder.logits(), request.tools)
        out.content, out.finish = self._answer(request, out.decoder, first)
        out.calls = []
        # `say` chosen, then a client tool's call written out (a made-up tool's,
        # `send_email {}`, is an answer: no client tool does that).
        if looks_like_a_call(out.content) and names_a_tool(out.content, request.tools):
            self._redo(turn, out)
            out.calls = turn.writer.calls(out.decoder, request.tools,
                                          self._loaded.grammar_for(request.tools),
                                          request.tool_hints, request_text.user_turns(request),
                                          related=request.tool_relatedness)
            out.content, out.finish = None, "tool_calls"

    def _call_or_answer_turn(
        self, turn: _Turn, grammar: GrammarSampler, decoder: Decoder
    ) -> _Outcome:
        """The turn without `say`: a call, or an answer when the first token asks for one."""
        request = turn.request
        out = _Outcome(decoder)
        wants_call, first_text = True, None
        if request.allow_direct_answer and not request.must_call and not request.only_tool:
            wants_call, first_text = self._call_or_text(decoder, request.tools)
        if wants_call:
            tools = request_text.only_tool(request)
            if tools is not request.tools:
                grammar = self._loaded.grammar_for(tools)
            out.calls = turn.writer.calls(decoder, tools, grammar, request.tool_hints,
                                          request_text.user_turns(request),
                                          related=request.tool_relatedness)
            out.finish = "tool_calls"
        else:
            out.content, out.finish = self._answer(request, decoder, first_text)
        return out

    def _text_turn(
        self, request: LLMRequest, decoder: Decoder, on_text: TextSink | None
    ) -> _Outcome:
        """A plain-text reply (no tools), under the response schema's grammar when given."""
        if request.response_schema:
            decoder.grammar = self._loaded.grammar(value_grammar(request.response_schema))
            decoder.grammar.reset()
        # A plain-text reply must not open a call, whatever the model would like.
        model = self._loaded
        content, truncated = decoder.text([model.special["<tool_call>"]], model.is_end,
                                          on_text=on_text)
        return _Outcome(decoder, content=content, finish="length" if truncated else "stop")

    def _redo(self, turn: _Turn, out: _Outcome) -> None:
        """`_rewind` for `out`: a fresh decoder, counting the passes the old one spent."""
        out.decoder, spent = self._rewind(turn.request, turn.full, turn.prefix, turn.deadline,
                                          out.decoder)
        out.passes += spent

    def _note_decision(
        self, reply: LLMReply, turn: _Turn, name_scores: dict[str, float]
    ) -> None:
        """Copy what decided call or answer, and what grounding changed, into `reply.usage`."""
        # What decided call or answer, for measuring (bench/accuracy.py reads the trace).
        if self._first_gap is not None:
            reply.usage["first_token_gap"] = self._first_gap
        if name_scores:
            reply.usage["name_scores"] = name_scores
        if turn.request.tool_hints:
            reply.usage["tool_hints"] = dict(turn.request.tool_hints)
        if turn.probe_score is not None:
            reply.usage["answer_probe"] = round(turn.probe_score, 3)
            reply.usage["probe_verdict"] = turn.verdict
        writer = turn.writer
        if writer.dropped:
            reply.usage["dropped_arguments"] = list(writer.dropped)
        if writer.respelled:
            reply.usage["respelled_arguments"] = list(writer.respelled)
        if writer.stopped_at:
            reply.usage["stopped_at_unsaid"] = list(writer.stopped_at)

    def _probe_verdict(self, request: LLMRequest, score: float | None) -> str | None:
        """"answer", "call", or None (the model's own signals decide) for a probe score.
        The probe was trained with many tool sets, so it judges any command's request."""
        if score is None or self._probe is None:
            return None
        if score < self.options.probe_call_below:
            return "call"
        if score <= self.options.probe_answer_above:
            return None
        # A request (not a question for information) with two of one command's keywords
        # (a plain tool's: declaration words weighing as much; one word alone is often
        # chat): the probe never saw that command, so the model's name choice decides.
        named = any(v >= 2 for v in request.tool_hints.values())
        question = asks_for_information(request_text.utterance(request) or "")
        return None if named and not question else "answer"

    def _rewind(
        self,
        request: LLMRequest,
        full: npt.NDArray[np.intc],
        prefix: npt.NDArray[np.intc],
        deadline: float,
        decoder: Any,
    ) -> tuple[Any, int]:
        """Back to the end of the prompt (one token re-read) for another try: a fresh
        decoder, and the passes the given-up one spent."""
        spent = decoder.stats.evals
        self._loaded.context.restore(full, prefix, deadline=deadline)
        return self._decoder(request, full, prefix, deadline), spent

    def _answer(self, request: LLMRequest, decoder: Any, first: int | None) -> tuple[str, str]:
        """A spoken answer: short (cut at a sentence end) when given in place of a call.

        After a tool result (the outcome in words) the request's own max_tokens applies.
        """
        last = request.messages[-1].get("role") if request.messages else None
        if last == "user":
            limit = len(decoder.generated) + self.options.answer_max_tokens
            decoder.max_tokens = min(decoder.max_tokens, limit)
        model = self._loaded
        content, truncated = decoder.text([model.special["<tool_call>"]], model.is_end,
                                          first=first)
        # The compact examples write answers as `-> say: ...`; the model may copy the label.
        content = SAY_LABEL.sub("", content, count=1)
        if not truncated:
            return content, "stop"
        return whole_sentences(content), "length"

    def _decoder(
        self,
        request: LLMRequest,
        full: npt.NDArray[np.intc],
        prefix: npt.NDArray[np.intc],
        deadline: float,
        opening: list[int] | None = None,
        info: dict[str, Any] | None = None,
    ) -> Any:
        """A decoder at the end of the prompt; `opening` and `info` as the context left them."""
        options = self.options
        utterance, said = request_text.user_turns(request), request_text.said_text(request)
        # Values are judged against what was said only where unsaid ones are dropped.
        grounded = utterance if options.drop_unsaid else None
        settings = DecodeSettings(
            deadline=deadline,
            # Drafted tokens are evaluated ahead of the reply: they need room in the context.
            max_tokens=min(request.max_tokens, options.n_ctx - len(full) - options.max_draft - 1),
            temperature=request.temperature, rng=self._rng,
            prompt=self._draft_source(full), draft_start=len(prefix),
            max_draft=options.max_draft,
            biases=KeyBiases(
                optional=options.optional_key_bias, undated=options.undated_key_bias,
                dated=options.dated_key_bias, choice=options.choice_bias,
                unsaid=options.unsaid_key_bias))
        heard = (Heard(request.date_hints, request.time_hints, durations_said(utterance or ""),
                       request.choice_hints, request.answers)
                 if options.use_date_hints
                 else Heard(choices=request.choice_hints, answered=request.answers))
        checks = ValueChecks(
            never_said=None if grounded is None else (
                lambda schema, choices: never_said(schema, grounded, choices)),
            copied=None if grounded is None else request_text.example_copy_check(request, said),
            said_in_full=lambda value: said_in_full(value, said),
            unsaid_required=self._unsaid_required(request))
        model = self._loaded
        decoder = Decoder(model.llm, model.vocab, settings, model.token_text(), heard, checks)
        if opening and info and "prompt_logits" in info:
            decoder.set_prompt_logits(info.pop("prompt_logits"))
            decoder.prime(opening, info.pop("after_logits"))
        else:
            decoder.set_prompt_logits(read_last_logits(model.llm))
        return decoder

    def _draft_source(self, full: npt.NDArray[np.intc]) -> npt.NDArray[np.intc]:
        """Where a reply's drafts are looked up: the prompt, and after it the last reply
        when the prompt is the same. The center asks again with the same prompt for one
        tool (a look-up before a question), and the values the model wrote the first time
        come again."""
        last = self._last_written
        if last is None or not np.array_equal(last[0], full):
            return full
        return np.concatenate([full, np.asarray(last[1], dtype=full.dtype)])

    def _unsaid_required(self, request: LLMRequest) -> Callable[[str, str, Any], bool] | None:
        """For the first request of a conversation, a check of a required value against
        what was said, the center's own (center/grounding.py): an unsaid one ends the call,
        and the center asks for it. Later turns are left whole: a value asked for once is
        the LLM's reading of the answer."""
        if not self.options.stop_at_unsaid or any(
                m.get("role") not in ("system", "user") for m in request.messages):
            return None
        said = "\n".join(str(m["content"]) for m in request.messages
                         if m.get("role") == "user" and isinstance(m.get("content"), str))
        tools = {tool_name(t): t for t in request.tools}
        times = bool(request.date_hints) or bool(request.time_hints)

        def unsaid(tool: str, key: str, value: Any) -> bool:
            # Judged as it will be sent: put in the user's words first (a word said in
            # other words, see grounding.respelled_required_text).
            value = respelled_required_text({key: value}, tools[tool], said).get(key, value)
            schema = {**arguments_schema(tools[tool]), "required": [key]}
            return bool(unsaid_required({key: value}, schema, said, times_said=times,
                                        tool=tool))
        return unsaid

    def _reply(
        self,
        decoder: Any,
        full: npt.NDArray[np.intc],
        info: dict[str, Any],
        content: str | None,
        calls: list[LLMToolCall],
        finish: str,
        started: float,
        prompt_ms: float,
        passes: int,
    ) -> LLMReply:
        total_ms = (time.perf_counter() - started) * 1000
        stats = decoder.stats
        usage: dict[str, Any] = {
            "prompt_tokens": len(full),
            "cached_tokens": info["reused_tokens"],
            "prompt_eval_tokens": info["evaluated_tokens"],
            "prefix_cache": info["prefix_cache"],
            "completion_tokens": len(decoder.generated),
            "sampled_tokens": stats.sampled,
            "forced_tokens": stats.forced,
            "drafted_tokens": stats.drafted,
            "draft_passes": stats.drafts,
            "evaluated_output_tokens": stats.evaluated,
            "forward_passes": stats.evals + passes,
            "prompt_ms": round(prompt_ms, 1),
            "generation_ms": round(total_ms - prompt_ms, 1),
            "total_ms": round(total_ms, 1),
            "finish_reason": finish,
            "model": self.model_path.name,
            **stats.extra,
        }
        return LLMReply(content=content, tool_calls=calls, usage=usage)

    def _call_or_text(
        self, decoder: Decoder, tools: list[dict[str, Any]]
    ) -> tuple[bool, int | None]:
        """Whether the reply is a call, judged from its first token (see first_token.py)."""
        wants_call, first_text, gap = call_or_text(self._loaded, decoder.logits(), tools,
                                                   self.options.direct_answer_margin)
        if gap is not None:
            self._first_gap = gap
        return wants_call, first_text
