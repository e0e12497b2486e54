"""`EmbeddedBackend`: a small GGUF model run in-process with llama-cpp-python.

Made for a 2-core machine without GPU: one model instance served by one thread, the system
prompt + tools evaluated once and kept (`PromptContext`: live in the context, as saved KV
states in a small LRU keyed by the prefix tokens, and on disk), and every tool call
produced under a grammar by the `Decoder`, which spends model evaluations only where the
output is open.
"""

from __future__ import annotations

import contextlib
import json
import os
import secrets
import threading
import time
from collections import OrderedDict
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
from jarvis.center.llm.embedded.cpu import cpu_lists_amx, without_weight_repacking
from jarvis.center.llm.embedded.grammar import (
    arguments_schema,
    name_option,
    name_prefix,
    tool_call_grammar,
    tool_name,
    value_grammar,
)
from jarvis.center.llm.embedded.grounding import (
    completed_values,
    dates_as_said,
    items_from_the_other_clause,
    never_said,
    respelled_required_text,
    unsaid_optional_arguments,
)
from jarvis.center.llm.embedded.model_thread import ModelThread
from jarvis.center.llm.embedded.options import EmbeddedOptions
from jarvis.center.llm.embedded.prompt import (
    FALLBACK_TEMPLATE,
    ChatPrompt,
    slim_tools,
    with_tool_signatures,
)
from jarvis.center.llm.embedded.prompt_state_cache import open_cache
from jarvis.center.llm.embedded.prompt_tokens import PromptTokenizer
from jarvis.center.llm.embedded.spoken_answer import (
    NO_TOOL,
    NO_TOOL_SCHEMA,
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
    from jarvis.center.llm.embedded.context import PromptContext
    from jarvis.center.llm.embedded.decode_inputs import (
        DecodeSettings,
        Heard,
        KeyBiases,
        TokenText,
        ValueChecks,
    )
    from jarvis.center.llm.embedded.decoder import Decoder, read_last_logits
    from jarvis.center.llm.embedded.grammar_sampler import GrammarSampler


_T = TypeVar("_T")
# Context kept free for the reply when choosing how to write the tools: a call with several
# values needs ~100 tokens, and a prompt that fills the context leaves the model mid-call.
_REPLY_ROOM = 256
# Context kept free after the stable system turn for a turn: the day's dates and clock, a
# few earlier turns and the utterance.
_TURN_ROOM = 512


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
        self._llm: Any = None
        self._vocab: Any = None
        self._prompt: ChatPrompt | None = None
        self._context: PromptContext | None = None  # made at load
        self._tokens: PromptTokenizer | None = None  # made at load
        self._grammars: OrderedDict[str, GrammarSampler] = OrderedDict()
        self._pieces: dict[int, bytes] = {}
        self._special: dict[str, int] = {}
        self._openings: dict[bytes, list[int]] = {}
        self._dropped: list[str] = []  # optional arguments of the last reply nobody said
        # Values of the last reply put in the user's words, or completed from them.
        self._respelled: list[str] = []
        self._stopped_at: list[str] = []  # a required value nobody said ended the call here
        # Set at load: see _quote_tails.
        self._tails: tuple[frozenset[int], npt.NDArray[np.int32]] = (frozenset(), np.zeros(
            0, dtype=np.int32))
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
        if self._llm is not None:
            return
        if llama_cpp is None:
            raise LLMUnavailableError(
                "the embedded backend needs llama-cpp-python: "
                "pip install 'jarvis-assistant[embedded]'"
            )
        path = self.model_path
        if not path.is_file():
            raise LLMUnavailableError(
                f"model file {path} does not exist; run `jarvis model prepare`"
            )
        repack = self.options.weight_repacking if self.options.weight_repacking is not None else (
            not cpu_lists_amx())
        try:
            with contextlib.nullcontext() if repack else without_weight_repacking(llama_cpp):
                llm = llama_cpp.Llama(
                    model_path=str(path),
                    n_ctx=self.options.n_ctx,
                    n_batch=self.options.n_batch,
                    n_threads=self.n_threads,
                    n_threads_batch=self.n_threads,
                    flash_attn=self.options.flash_attn,
                    verbose=False,
                )
        except (ValueError, RuntimeError, OSError) as exc:
            raise LLMUnavailableError(
                f"could not load the model {path}: {exc}. The file may be corrupt or not a "
                "GGUF model; run `jarvis model prepare --force` or fix JARVIS_MODEL_PATH."
            ) from exc
        template = llm.metadata.get("tokenizer.chat_template") or FALLBACK_TEMPLATE
        self._prompt = ChatPrompt(template)
        self._vocab = llama_cpp.llama_model_get_vocab(llm.model)
        self._llm = llm
        for text in ("<tool_call>", "</tool_call>", "<|im_start|>", "<|im_end|>", "\n"):
            ids = llm.tokenize(text.encode(), add_bos=False, special=True)
            if len(ids) != 1:
                self._llm = None
                raise LLMUnavailableError(
                    f"{path} does not look like a Qwen2.5-style model "
                    f"({text!r} is not one token); tool calls need <tool_call> tags"
                )
            self._special[text] = ids[0]
        self._tails = self._quote_tails()  # a vocabulary scan: at load, not in a request
        # Two stable texts per tool set (the tools' format check, the prefix), with and
        # without `say`.
        self._tokens = PromptTokenizer(self._tokenize, "<|im_start|>",
                                       4 * self.options.prefix_cache_size)
        self._probe = self._load_probe(path, llm.n_embd())
        # What a saved state depends on besides its tokens (n_threads does not change it;
        # repacked weights compute slightly different numbers).
        options = self.options
        disk = open_cache(options.prompt_cache_dir, path, {
            "n_ctx": options.n_ctx, "n_batch": options.n_batch, "flash_attn": options.flash_attn,
            "weight_repacking": repack, "llama_cpp": llama_cpp.__version__})
        self._context = PromptContext(llm, options, disk, self._special["<|im_start|>"])

    def _load_probe(self, path: Path, n_embd: int) -> AnswerProbe | None:
        source = self.options.answer_probe
        if source is None:
            return None
        try:
            probe = (AnswerProbe.for_model(path) if source == "auto"
                     else AnswerProbe.load(source))
        except AnswerProbeError as exc:
            self._unload()
            raise LLMUnavailableError(str(exc)) from exc
        if probe is not None and probe.n_embd != n_embd:
            self._unload()
            raise LLMUnavailableError(
                f"the answer probe {probe.source} is for a model with {probe.n_embd}-wide "
                f"states, but {path.name} has {n_embd}; train one for this model "
                "(bench/train_answer_probe.py) or pass answer_probe=None")
        return probe

    def _unload(self) -> None:
        llm, self._llm = self._llm, None
        if llm is not None:
            llm.close()

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
        for grammar in self._grammars.values():
            grammar.close()
        self._grammars.clear()
        if self._context is not None:
            self._context.clear()
            self._context = None
        self._openings.clear()
        self._last_written = None
        if self._tokens is not None:
            self._tokens.clear()
        if self._llm is not None:
            self._llm.close()
            self._llm = None

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
        assert self._prompt is not None
        if tools and allow_direct_answer and self.options.no_tool_choice:
            tools = with_no_tool(tools)
        messages, shown = self._shown(messages_prefix, tools,
                                      self._tool_format_for(messages_prefix, tools))
        assert self._tokens is not None
        tokens = self._tokens.stable(self._prompt.render(messages, shown,
                                                         add_generation_prompt=False))
        if len(tokens) + 16 > self.options.n_ctx:
            raise LLMPromptTooLongError(
                f"the prompt prefix is {len(tokens)} tokens but the embedded model's "
                f"context is {self.options.n_ctx}"
            )
        if tools:
            self._grammar_for(tools)
        assert self._context is not None
        if self._context.holds(tokens):
            # Already read and saved: leave the context as it is, so the next request
            # also reuses what follows (`<|im_start|>user`) and waits for no evaluation.
            info = {"reused_tokens": len(tokens), "evaluated_tokens": 0,
                    "prefix_cache": "live"}
        else:
            info = self._context.restore(tokens, tokens, deadline=None)
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
        self._dropped = []
        self._respelled = []
        self._stopped_at = []
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
        assert self._prompt is not None
        use_tools = bool(request.tools) and not request.tools_disabled
        choice_tools = request.tools
        pseudo = use_tools and request.allow_direct_answer and self.options.no_tool_choice
        if pseudo:
            choice_tools = with_no_tool(request.tools)
        full, prefix = self._prompt_tokens(request.messages, choice_tools if use_tools else None)
        if len(prefix) and not np.array_equal(full[: len(prefix)], prefix):
            prefix = full[:0]
        if len(full) + 16 > self.options.n_ctx:
            raise LLMPromptTooLongError(
                f"the prompt is {len(full)} tokens but the embedded model's context is "
                f"{self.options.n_ctx}; fewer tools, a shorter history or a larger n_ctx would fit"
            )
        grammar = self._grammar_for(choice_tools) if use_tools else None
        # Most requests with tools end in a call: its opening is read with the prompt.
        primed = use_tools and self.options.prime_call
        opening = self._call_opening(choice_tools) if primed else None
        # The answer probe reads the hidden states of the user's own words; it was trained
        # on a conversation's first utterance, so a follow-up is left to the model.
        want_states = bool(opening) and pseudo and request_text.first_utterance(request) and (
            self._probe is not None or self.state_listener is not None)
        assert self._context is not None
        info = self._context.restore(full, prefix, deadline=deadline, after=opening,
                                     states=want_states)
        states = info.pop("states", None)
        if states is not None and self.state_listener is not None:
            self.state_listener(states)
        probe_score = (self._probe.score(states)
                       if states is not None and self._probe is not None else None)
        verdict = ("call" if request.must_call or request.only_tool
                   else self._probe_verdict(request, probe_score))
        prompt_ms = (time.perf_counter() - started) * 1000
        return _Turn(request, full, prefix, deadline, info, use_tools, pseudo, choice_tools,
                     grammar, opening, probe_score, verdict, prompt_ms)

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
            _, first_text = self._first_tokens(out.decoder.logits(), request.tools)
        elif turn.verdict == "call":  # a request: only which command is left to choose
            choice_tools = request_text.only_tool(request)
            grammar, unheard = self._grammar_for(choice_tools), False
        elif self.options.first_token_check == "always" or (
                self.options.first_token_check == "unheard" and not heard):
            wants_call, first_text = self._call_or_text(out.decoder.logits(), request.tools)
        if not wants_call:
            out.content, out.finish = self._answer(request, out.decoder, first_text)
            if looks_like_a_call(out.content):
                # It wrote a call as text ('toggle porch light {"action": ...}'): redo
                # it as a call under the grammar, from the end of the prompt.
                self._redo(turn, out)
                wants_call, out.content = True, None
        if wants_call:
            out.calls = self._tool_calls(out.decoder, choice_tools, grammar, request.tool_hints,
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
        _, first = self._first_tokens(out.decoder.logits(), request.tools)
        out.content, out.finish = self._answer(request, out.decoder, first)
        out.calls = []
        # `say` chosen, then a client tool's call written out (a made-up tool's,
        # `send_email {}`, is an answer: no client tool does that).
        if looks_like_a_call(out.content) and names_a_tool(out.content, request.tools):
            self._redo(turn, out)
            out.calls = self._tool_calls(out.decoder, request.tools,
                                         self._grammar_for(request.tools),
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
            wants_call, first_text = self._call_or_text(decoder.logits(), request.tools)
        if wants_call:
            tools = request_text.only_tool(request)
            if tools is not request.tools:
                grammar = self._grammar_for(tools)
            out.calls = self._tool_calls(decoder, tools, grammar, request.tool_hints,
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
            decoder.grammar = self._grammar_text(value_grammar(request.response_schema))
            decoder.grammar.reset()
        # A plain-text reply must not open a call, whatever the model would like.
        content, truncated = decoder.text([self._special["<tool_call>"]], self._is_end,
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
        if self._dropped:
            reply.usage["dropped_arguments"] = list(self._dropped)
        if self._respelled:
            reply.usage["respelled_arguments"] = list(self._respelled)
        if self._stopped_at:
            reply.usage["stopped_at_unsaid"] = list(self._stopped_at)

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
        assert self._context is not None
        self._context.restore(full, prefix, deadline=deadline)
        return self._decoder(request, full, prefix, deadline), spent

    def _answer(self, request: LLMRequest, decoder: Any, first: int | None) -> tuple[str, str]:
        """A spoken answer: short (cut at a sentence end) when given in place of a call.

        After a tool result (the outcome in words) the request's own max_tokens applies.
        """
        last = request.messages[-1].get("role") if request.messages else None
        if last == "user":
            limit = len(decoder.generated) + self.options.answer_max_tokens
            decoder.max_tokens = min(decoder.max_tokens, limit)
        content, truncated = decoder.text([self._special["<tool_call>"]], self._is_end,
                                          first=first)
        # The compact examples write answers as `-> say: ...`; the model may copy the label.
        content = SAY_LABEL.sub("", content, count=1)
        if not truncated:
            return content, "stop"
        return whole_sentences(content), "length"

    def _call_opening(self, tools: list[dict[str, Any]]) -> list[int]:
        """The tokens every call of `tools` starts with, as the decoder will commit them."""
        texts = [(name_prefix() + name_option(tool_name(t))).encode() for t in tools]
        key = b"\0".join(texts)
        found = self._openings.get(key)
        if found is None:
            toks = [self._llm.tokenize(t, add_bos=False, special=False) for t in texts]
            shared = 0
            while all(len(t) > shared + 1 and t[shared] == toks[0][shared] for t in toks):
                shared += 1
            found = [self._special["<tool_call>"], self._special["\n"], *toks[0][:shared]]
            self._openings[key] = found
        return found

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
        tokens = TokenText(self._piece, self._is_special, self._is_end, self._tails)
        heard = (Heard(request.date_hints, request.time_hints, durations_said(utterance or ""),
                       request.choice_hints)
                 if options.use_date_hints else Heard(choices=request.choice_hints))
        checks = ValueChecks(
            never_said=None if grounded is None else (
                lambda schema, choices: never_said(schema, grounded, choices)),
            copied=None if grounded is None else request_text.example_copy_check(request, said),
            said_in_full=lambda value: said_in_full(value, said),
            unsaid_required=self._unsaid_required(request))
        decoder = Decoder(self._llm, self._vocab, settings, tokens, heard, checks)
        if opening and info and "prompt_logits" in info:
            decoder.set_prompt_logits(info.pop("prompt_logits"))
            decoder.prime(opening, info.pop("after_logits"))
        else:
            decoder.set_prompt_logits(read_last_logits(self._llm))
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

    def _name_bias(
        self, tools: list[dict[str, Any]], hints: dict[str, float], unheard: bool,
        related: dict[str, float] | None = None,
    ) -> list[float]:
        """Per tool, what is added to its name's logit: the keyword prior, the relatedness
        prior (0 for the most related tool, less for the others) and `say`'s bias.

        `say` gets `unheard_say_bias` more only when `unheard` (every client tool declares
        keywords and none was heard): a command without keywords must not lose to small talk.
        """
        related = related or {}
        closest = max(related.values(), default=0.0)
        bias = []
        for tool in tools:
            if tool is NO_TOOL_SCHEMA:
                extra = self.options.unheard_say_bias if unheard else 0.0
                bias.append(self.options.no_tool_bias + extra)
            else:
                name = tool_name(tool)
                count = min(hints.get(name, 0.0), self.options.keyword_cap)
                meaning = related.get(name, closest) - closest
                bias.append(self.options.keyword_bias * count
                            + self.options.relatedness_bias * meaning)
        return bias

    def _tool_calls(
        self,
        decoder: Decoder,
        tools: list[dict[str, Any]],
        grammar: GrammarSampler,
        hints: dict[str, float],
        utterance: str | None = None,
        *,
        unheard: bool = False,
        related: dict[str, float] | None = None,
    ) -> list[LLMToolCall]:
        """The reply's tool calls, written under `grammar` (at most `max_tool_calls`)."""
        calls: list[LLMToolCall] = []
        seen: set[tuple[str, str]] = set()
        for index in range(self.options.max_tool_calls):
            if index == 0:
                decoder.commit_raw([self._special["<tool_call>"], self._special["\n"]])
            bias = self._name_bias(tools, hints if index == 0 else {}, unheard,
                                   related if index == 0 else None)
            text = decoder.tool_call(tools, grammar, bias if any(bias) else None)
            if decoder.stopped_at is None:
                decoder.commit_raw([self._special["</tool_call>"]])
            else:
                self._stopped_at.append(decoder.stopped_at)
            parsed = json.loads(text)
            name = parsed["name"]
            if utterance is not None and self.options.drop_unsaid:
                tool = next(t for t in tools if tool_name(t) == name)
                self._ground(decoder, name, tool, parsed["arguments"], utterance)
            arguments = json.dumps(parsed["arguments"], ensure_ascii=False)
            if (name, arguments) in seen:  # a small model may repeat itself; once is enough
                break
            seen.add((name, arguments))
            calls.append(
                LLMToolCall(id="call_" + secrets.token_hex(8), name=name, arguments=arguments)
            )
            if index + 1 >= self.options.max_tool_calls or decoder.stopped_at is not None:
                break
            if not self._another_call(decoder):
                break
            decoder.commit_raw([self._special["<tool_call>"], self._special["\n"]])
        if not all(c.name in {tool_name(t) for t in tools} for c in calls):  # pragma: no cover
            raise LLMError("internal: a call names an unknown tool")
        return calls

    def _ground(
        self, decoder: Decoder, name: str, tool: dict[str, Any], arguments: dict[str, Any],
        utterance: str,
    ) -> None:
        """Ground a call's `arguments` in what was said, in place: drop, respell, complete."""
        days = [value[:10] for values in decoder.date_hints for value in values]
        redated = dates_as_said(arguments, tool, days, decoder.time_hints)
        arguments.update(redated)
        dropped = unsaid_optional_arguments(arguments, tool, utterance,
                                            decoder.choice_hints.get(name), days)
        # Copied from the prompt, then guessed again (see Decoder.sample_text).
        dropped += [k for k in dict.fromkeys(decoder.unsaid_keys)
                    if k in arguments and k not in dropped]
        for key in dropped:
            del arguments[key]
        self._dropped.extend(dropped)
        respelled = respelled_required_text(arguments, tool, utterance)
        arguments.update(respelled)
        completed = completed_values(arguments, tool, utterance)
        arguments.update(completed)
        regrounded = items_from_the_other_clause(arguments, tool, utterance)
        for key, items in regrounded.items():
            if items:
                arguments[key] = items
            else:  # nothing left to name: the command asks for it
                del arguments[key]
        self._respelled.extend([*redated, *respelled, *completed, *regrounded])

    def _another_call(self, decoder: Decoder) -> bool:
        """After a call's `</tool_call>`: whether the model writes another call."""
        # Qwen writes "\n" after </tool_call> whether or not another call follows; the
        # token after it tells: <tool_call> again, or the end of the turn.
        decoder.commit_raw([self._special["\n"]])
        logits = decoder.logits()
        end = max(logits[self._special["<|im_end|>"]], logits[int(self._llm.token_eos())])
        return not logits[self._special["<tool_call>"]] <= end

    def _call_or_text(
        self, logits: npt.NDArray[np.float32], tools: list[dict[str, Any]]
    ) -> tuple[bool, int | None]:
        """Whether the reply is a tool call, judged from its first token.

        Qwen2.5-Coder-0.5B rarely opens with the <tool_call> token: it starts a bare `{"`,
        a code fence, or "<" (the tag as text). All of those mean "a call"; the best other
        token is the start of a spoken answer. The call wins unless the answer's token
        is ahead by `direct_answer_margin` (measured: see docs/embedded-llm.md).
        """
        best_call, best_text = self._first_tokens(logits, tools)
        if best_call is not None and best_text is not None:
            self._first_gap = round(float(logits[best_call] - logits[best_text]), 3)
        if best_text is None:
            return True, None
        if best_call is None:
            return False, best_text
        wants_call = logits[best_call] + self.options.direct_answer_margin >= logits[best_text]
        return bool(wants_call), None if wants_call else best_text

    def _first_tokens(
        self, logits: npt.NDArray[np.float32], tools: list[dict[str, Any]]
    ) -> tuple[int | None, int | None]:
        """The best token that opens a call and the best one that starts an answer."""
        # Starting with a tool's name (`set_timer {...}`, as the compact examples are
        # written) is also a call; spoken answers start with a capital letter.
        names = tuple(tool_name(t).encode() for t in tools)
        top = np.argpartition(-logits, 256)[:256]
        top = top[np.argsort(-logits[top])]
        best_call = best_text = None
        for token in (int(t) for t in top):
            piece = self._piece(token).lstrip()
            intent = token == self._special["<tool_call>"] or piece.startswith((b"{", b"<", b"`"))
            intent = intent or (len(piece) >= 3 and any(n.startswith(piece) for n in names))
            if intent and best_call is None:
                best_call = token
            elif not intent and not self._is_end(token) and best_text is None and piece:
                best_text = token
            if best_call is not None and best_text is not None:
                break
        return best_call, best_text

    def _quote_tails(self) -> tuple[frozenset[int], npt.NDArray[np.int32]]:
        """Tokens that close a string, and those with text on both sides of a quote.

        Read from the vocabulary at load (see the decoder's `walk_value`): the first are
        the bare quote and every token that starts with one (`",`, `"}`); the second
        (`trash",`) are banned inside a string.
        """
        closers: set[int] = set()
        inner: list[int] = []
        # A piece holds a quote only where the token's own text does (a byte-level BPE
        # writes '"' as itself): the cheap text read picks the few pieces worth building.
        quoted = [token for token in range(self._llm.n_vocab())
                  if b'"' in llama_cpp.llama_vocab_get_text(self._vocab, token)]
        for token in quoted:
            piece = self._llm.detokenize([token], special=False)
            at = piece.find(b'"')
            if at == 0:
                closers.add(token)
            elif 0 < at < len(piece) - 1:
                inner.append(token)
        return frozenset(closers), np.array(inner, dtype=np.int32)

    def _prompt_tokens(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> tuple[npt.NDArray[np.intc], npt.NDArray[np.intc]]:
        """The prompt's tokens and those of its stable prefix (empty when none). Tools whose
        schemas would not fit the context are written as signatures, a third of the tokens."""
        assert self._prompt is not None and self._tokens is not None
        chosen = self._tool_format_for(messages, tools)
        for tool_format in dict.fromkeys((chosen, "signatures")):
            shown, rendered = self._shown(messages, tools, tool_format)
            full_text = self._prompt.render(shown, rendered, add_generation_prompt=True)
            prefix_text = self._prompt.system_prefix(shown, rendered)
            if not full_text.startswith(prefix_text):
                prefix_text = ""
            full = self._tokens.prompt(full_text, prefix_text)
            if len(full) + _REPLY_ROOM <= self.options.n_ctx:
                break  # else a long conversation: the tools as signatures leave it room
        return full, (self._tokens.stable(prefix_text) if prefix_text else full[:0])

    def _tool_format_for(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None
    ) -> str:
        """How `tools` are written: the configured format when the stable system turn with
        them leaves room for a turn and the reply, else signatures. Decided on what every
        request of the tool set shares, so a longer utterance never changes the prompt's
        prefix, which would be read again (15-35 s) and kept twice."""
        assert self._prompt is not None and self._tokens is not None
        if self.options.tool_format == "signatures" or not tools:
            return self.options.tool_format
        stable, shown = self._shown(messages[:1], tools, self.options.tool_format)
        text = self._prompt.render(stable, shown, add_generation_prompt=False)
        fits = len(self._tokens.stable(text)) + _TURN_ROOM + _REPLY_ROOM <= self.options.n_ctx
        return self.options.tool_format if fits else "signatures"

    def _shown(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None,
        tool_format: str | None = None,
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]] | None]:
        """The messages and tool schemas the template renders (the grammar gets the full ones).

        With `tool_format` "signatures" the tools are written into the system message and
        the template gets none.
        """
        if not tools:
            return messages, None
        if self.options.prompt_style == "full":
            return messages, tools
        if (tool_format or self.options.tool_format) == "signatures":
            return with_tool_signatures(messages, tools), None
        return messages, slim_tools(tools)

    def _is_end(self, token: int) -> bool:
        return token == self._special["<|im_end|>"] or bool(
            llama_cpp.llama_vocab_is_eog(self._vocab, token)
        )

    def _is_special(self, token: int) -> bool:
        return bool(llama_cpp.llama_vocab_is_control(self._vocab, token)) or self._is_end(token)

    def _piece(self, token: int) -> bytes:
        piece = self._pieces.get(token)
        if piece is None:
            piece = self._llm.detokenize([token], special=False)
            self._pieces[token] = piece
        return piece

    def _tokenize(self, text: str) -> npt.NDArray[np.intc]:
        # special=True: the template's own markers must become their special tokens
        # (message contents were cleaned of them by the prompt module).
        return np.array(
            self._llm.tokenize(text.encode("utf-8"), add_bos=False, special=True), dtype=np.intc
        )

    def _grammar_text(self, gbnf: str) -> GrammarSampler:
        sampler = self._grammars.get(gbnf)
        if sampler is None:
            try:
                sampler = GrammarSampler(self._vocab, gbnf)
            except ValueError as exc:
                raise LLMError(f"could not build a grammar for these tools: {exc}") from exc
            self._grammars[gbnf] = sampler
            while len(self._grammars) > 4 * self.options.prefix_cache_size:
                self._grammars.popitem(last=False)[1].close()
        self._grammars.move_to_end(gbnf)
        return sampler

    def _grammar_for(self, tools: list[dict[str, Any]]) -> GrammarSampler:
        return self._grammar_text(tool_call_grammar(tools))
