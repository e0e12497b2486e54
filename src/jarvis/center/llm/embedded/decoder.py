"""Grammar-constrained decoding that spends as few model evaluations as possible.

`call_walker.py` decides where the output of a tool call is open (a choice, a free value)
and where the structure forces it; the decoder turns each step into as few model
evaluations as it can:

- forced text (`{"name": "`, keys, separators) is queued, tokenized as a whole and
  evaluated in one batch with whatever comes next, never sampled;
- a choice between known strings is decided from one set of logits, comparing only the
  tokens where the candidates diverge; the rest of the winner is forced text again;
- free values are sampled token by token. The llama.cpp grammar sampler checks the
  greedy token first and only filters wider when it is refused, because filtering the
  whole 150k vocabulary costs as much as a forward pass; a value copied from what was
  said is drafted from the prompt (prompt lookup) and checked in one batch;
- tokens after the last decision are never evaluated at all.

The llama.cpp grammar sees every token of the call, forced or sampled, so whatever the
walker does, the text stays inside the grammar; the result is parsed with `json` anyway.
"""

from __future__ import annotations

import codecs
import functools
import json
import time
from collections.abc import Callable, Sequence
from typing import Any

import llama_cpp
import numpy as np
import numpy.typing as npt

from jarvis.center.llm.base import LLMTimeoutError
from jarvis.center.llm.embedded.call_walker import CallWalker, DecodeError
from jarvis.center.llm.embedded.decode_inputs import (
    DecodeSettings,
    Heard,
    Stats,
    TokenText,
    ValueChecks,
)
from jarvis.center.llm.embedded.grammar_sampler import GrammarSampler
from jarvis.center.llm.embedded.json_text import (
    MAX_STRING_BYTES,
    closable,
    completes,
    json_value_end,
)

__all__ = ["DecodeError", "Decoder", "eval_batch", "read_last_logits"]

_TOP_K = 64  # candidates checked against the grammar before filtering the whole vocabulary
# Suffix lengths looked up in what was said, longest first. A value's first token rarely
# matches the utterance's own ("pick" after a quote, " pick" in the sentence), so one
# token is enough of a match in the few tokens after the system prompt.
_DRAFT_NGRAMS = (4, 3, 2, 1)


def _with_bias(
    logits: npt.NDArray[np.float32], tokens: Sequence[int], bias: Sequence[float]
) -> npt.NDArray[np.float32]:
    """A copy of `logits` with each option's `bias` added to its token (`choose`)."""
    shift: dict[int, float] = {}
    # Options sharing a token: the largest bias counts.
    for token, b in zip(tokens, bias, strict=True):
        shift[token] = max(b, shift.get(token, b))
    logits = logits.copy()
    for token, b in shift.items():
        logits[token] += b
    return logits


class Decoder(CallWalker):
    """One generation on a Llama whose context already holds the evaluated prompt.

    `last_logits` must hold the logits after the prompt's last token.
    """

    def __init__(self, llm: llama_cpp.Llama, vocab: Any, settings: DecodeSettings,
                 tokens: TokenText, heard: Heard | None = None,
                 checks: ValueChecks | None = None) -> None:
        self.llm = llm
        self.vocab = vocab
        self.deadline = settings.deadline
        self.max_tokens = settings.max_tokens
        self.temperature = settings.temperature
        self.rng = settings.rng or np.random.default_rng()
        self.piece = tokens.piece
        self.is_special = tokens.is_special
        self.is_end = tokens.is_end
        self._set_drafting(settings.prompt, settings.draft_start, settings.max_draft)
        self._set_hints(heard or Heard(), tokens.quote_tails)
        self._set_key_biases(settings.biases)
        self._set_grounding(checks or ValueChecks())
        self._start_output()

    def _set_drafting(
        self, prompt: npt.NDArray[np.intc] | None, draft_start: int, max_draft: int
    ) -> None:
        """Where prompt-lookup drafts come from, and how long they may be."""
        self.prompt = prompt if prompt is not None else np.zeros(0, dtype=np.intc)
        # Drafts come from the prompt after this position: what was said, not the system
        # prompt, whose examples are values the model must not copy (measured: a draft
        # from an example is nearly always refused, and costs its tokens all the same).
        self.draft_start = draft_start
        self.max_draft = max_draft if self.temperature <= 0 else 0  # drafts need greedy decoding

    def _set_grounding(self, checks: ValueChecks) -> None:
        """The backend's checks of values against what the user said."""
        self.never_said = checks.never_said
        self.copied = checks.copied
        self.said_in_full = checks.said_in_full
        self.unsaid_required = checks.unsaid_required

    def _start_output(self) -> None:
        """The empty state of a generation: nothing committed, pending or chosen yet."""
        self.stopped_at: str | None = None  # the key the last call ended before
        self._tool = ""  # the tool of the call being written
        self.unsaid_keys: list[str] = []  # optional keys of the last call to leave out
        self._call_start = 0  # where the current call's tokens start in `generated`
        self.stats = Stats()
        self.pending: list[int] = []  # chosen, not yet run through the model
        self.generated: list[int] = []
        self.overflow = b""  # sampled bytes past the step that sampled them
        self.buffer = b""  # decided text, not yet tokenized
        self.grammar: GrammarSampler | None = None
        self._logits: npt.NDArray[np.float32] | None = None
        self.first_scores: dict[int, float] = {}  # of the last choice, see `choose`
        self.name_scores: dict[str, float] = {}  # the tool-name step of the last call
        # Tokens already in the context after the prompt, evaluated with it (see `prime`).
        self._primed: list[int] = []
        self._primed_used = 0
        self._primed_logits: npt.NDArray[np.float32] | None = None

    # --- model access -------------------------------------------------------------------
    def check_deadline(self) -> None:
        if time.monotonic() > self.deadline:
            raise LLMTimeoutError("the embedded model did not finish within the request timeout")

    def set_prompt_logits(self, logits: npt.NDArray[np.float32]) -> None:
        self._logits = logits

    def prime(self, tokens: Sequence[int], logits_after: npt.NDArray[np.float32]) -> None:
        """Tell the decoder the context already holds `tokens` after the prompt.

        The backend evaluates the likely start of the reply (`<tool_call>` and the call's
        opening text) in the prompt's own batch, saving one forward pass. Committing those
        same tokens costs nothing; committing anything else drops them from the context.
        `logits_after`: the logits after the last of them.
        """
        self._primed = list(tokens)
        self._primed_used = 0
        self._primed_logits = logits_after

    def _drop_primed(self) -> None:
        self.llm.n_tokens -= len(self._primed)
        self._primed = []

    def logits(self) -> npt.NDArray[np.float32]:
        """Logits after everything committed so far; runs pending tokens as one batch."""
        if self._primed and self._primed_used:
            # Stopped inside the primed tokens, whose logits were not kept: read the last
            # committed one again.
            self._drop_primed()
            self.llm.n_tokens -= 1
            self.pending.append(self.generated[-1])
        if self.pending:
            self.check_deadline()
            started = time.perf_counter()
            self.llm.eval(self.pending)
            self.stats.eval_ms += (time.perf_counter() - started) * 1000
            self.stats.evals += 1
            self.stats.evaluated += len(self.pending)
            self.pending = []
            self._logits = read_last_logits(self.llm)
            self.check_deadline()
        if self._logits is None:
            raise DecodeError("no logits available (nothing evaluated)")
        return self._logits

    def _commit(
        self,
        tokens: Sequence[int],
        *,
        forced: bool,
        grammar: bool = True,
        evaluated: bool = False,
    ) -> None:
        for token in tokens:
            if grammar and self.grammar is not None:
                if not self.grammar.allowed(np.array([token], dtype=np.int32))[0]:
                    raise DecodeError(
                        f"internal: token {self.piece(token)!r} is outside the grammar"
                    )
                self.grammar.accept(token)
            if self._primed and not evaluated:
                if token == self._primed[0]:
                    self._primed.pop(0)
                    self._primed_used += 1
                    if not self._primed:
                        self._logits = self._primed_logits
                    self.generated.append(token)
                    self.stats.forced += 1
                    continue
                self._drop_primed()
            if not evaluated:
                self.pending.append(token)
            self.generated.append(token)
            if forced:
                self.stats.forced += 1
            else:
                self.stats.sampled += 1
        if len(self.generated) > self.max_tokens:
            raise DecodeError(
                f"the reply did not fit in max_tokens={self.max_tokens}; raise the limit"
            )

    def commit_raw(self, tokens: Sequence[int]) -> None:
        """Commit structural tokens outside the grammar (special tokens, newlines)."""
        self.flush()
        self._commit(tokens, forced=True, grammar=False)

    def tokenize(self, text: bytes) -> list[int]:
        return list(self.llm.tokenize(text, add_bos=False, special=False))

    # --- the three kinds of step ------------------------------------------------------------
    def literal(self, text: bytes) -> None:
        """Forced text: consumes already-sampled overflow first, queues the rest."""
        if self.overflow:
            k = min(len(self.overflow), len(text))
            if self.overflow[:k] != text[:k]:
                raise DecodeError(f"internal: expected {text!r}, model wrote {self.overflow!r}")
            self.overflow = self.overflow[k:]
            text = text[k:]
        self.buffer += text

    def flush(self) -> None:
        """Tokenize and commit the queued forced text (in one piece, so it tokenizes naturally)."""
        if self.buffer:
            text, self.buffer = self.buffer, b""
            self._commit(self.tokenize(text), forced=True)

    def choose(self, options: Sequence[bytes], bias: Sequence[float] | None = None) -> int:
        """Index of the option the model prefers; its text becomes part of the output.

        `bias`: added per option to its token's logit at every step where the options
        diverge (a prior, e.g. for the "no tool" choice). The logits of the first such
        step are kept in `self.first_scores` (option index -> logit, bias excluded).
        """
        self.first_scores = {}
        if len(options) == 1:
            self.literal(options[0])
            return 0
        indices = self._matching_overflow(options)
        if len(indices) == 1:
            self.literal(options[indices[0]])
            return indices[0]
        texts = [self.buffer + options[i][len(self.overflow) :] for i in indices]
        self.overflow = b""
        self.buffer = b""
        toks = [self.tokenize(t) for t in texts]
        chosen, pos = self._walk_options(indices, toks, bias)
        done = b"".join(self.piece(t) for t in toks[chosen][:pos])
        # The winner's remaining text joins the queue so it tokenizes with what follows.
        self.buffer = texts[chosen][len(done) :]
        return indices[chosen]

    def _matching_overflow(self, options: Sequence[bytes]) -> list[int]:
        """The indices of the options that agree with the sampled overflow (all without)."""
        indices = list(range(len(options)))
        if not self.overflow:
            return indices
        indices = [
            i
            for i in indices
            if options[i].startswith(self.overflow) or self.overflow.startswith(options[i])
        ]
        if not indices:
            raise DecodeError(f"internal: no option matches {self.overflow!r}")
        return indices

    def _walk_options(
        self, indices: list[int], toks: list[list[int]], bias: Sequence[float] | None
    ) -> tuple[int, int]:
        """Commit tokens until one option is left: its position in `toks`, tokens taken."""
        cands = list(range(len(indices)))
        pos = 0
        first_split = True
        while len(cands) > 1:
            nexts = sorted({toks[c][pos] for c in cands})
            if len(nexts) == 1:
                pick = nexts[0]
                self._commit([pick], forced=True)
            else:
                logits = self.logits()
                if first_split:
                    first_split = False
                    self.first_scores = {indices[c]: float(logits[toks[c][pos]]) for c in cands}
                if bias is not None:
                    # At every split, so options that share their first tokens (get_weather,
                    # get_current_time) are told apart by their bias too.
                    logits = _with_bias(logits, [toks[c][pos] for c in cands],
                                        [bias[indices[c]] for c in cands])
                pick = self._pick(logits, np.array(nexts, dtype=np.int32))
                self._commit([pick], forced=False)
            cands = [c for c in cands if toks[c][pos] == pick]
            pos += 1
        return cands[0], pos

    def sample_value(
        self,
        opening: bytes = b"",
        cap: int | None = None,
        banned: Sequence[int] = (),
        closers: frozenset[int] = frozenset(),
    ) -> bytes:
        """Sample one JSON value under the grammar; returns its text (incl. `opening`).

        `cap`: for a free string (opened with `"`), close it once it is this many bytes
        long; a small model fed word salad can otherwise repeat itself until max_tokens.
        `banned`: tokens never sampled; `closers`: tokens that end the string (see
        `walk_value`).
        """
        self.literal(opening)
        return self._sample_rest(opening, cap, banned, closers)

    def _sample_rest(
        self, value: bytes, cap: int | None, banned: Sequence[int], closers: frozenset[int]
    ) -> bytes:
        """The rest of a value whose opening text `value` is committed (see sample_value)."""
        if self.overflow:
            value += self.overflow
            self.overflow = b""
        self.flush()
        while (end := json_value_end(value)) is None:
            if cap is not None and len(value) > cap and closable(value):
                self.literal(b'"')
                value += b'"'
                continue
            run = self.sample_run(banned, functools.partial(completes, value), closers)
            if run is None:  # the string closes: its quote opens the next choice's options
                self.literal(b'"')
                value += b'"'
                continue
            if not run:
                raise DecodeError("the model ended its turn inside a value")
            for token in run:
                value += self.piece(token)
        self.overflow = value[end:]
        return value[:end]

    def sample_text(
        self, banned: Sequence[int], closers: frozenset[int], optional: str | None = None
    ) -> None:
        """A free string; asked once more, without the tokens that would begin it again,
        when `copied` says the model copied it from the prompt instead of taking it from
        what was said ("take out the trash", a prompt example, for "we need bread").

        The second answer of an `optional` key must be said in full (`said_in_full`), or
        the key goes to `unsaid_keys`: the command's default beats a second guess.
        """
        self.literal(b'"')
        self.flush()
        self.logits()  # what leads to the value is read: the point to come back to
        mark = (len(self.generated), self.llm.n_tokens, self._logits)
        value = json.loads(self._sample_rest(b'"', MAX_STRING_BYTES, banned, closers))
        if self.copied is None or not self.copied(value):
            return
        openings = self._openings(value, self.generated[mark[0]])
        self._back_to(*mark)
        self.stats.extra["copies_refused"] = self.stats.extra.get("copies_refused", 0) + 1
        again = json.loads(self._sample_rest(b'"', MAX_STRING_BYTES, [*banned, *openings],
                                             closers))
        if optional is not None and self.said_in_full is not None and not self.said_in_full(
                again):
            self.unsaid_keys.append(optional)

    def _openings(self, value: str, first: int) -> set[int]:
        """The tokens that could start `value` again: its first sampled token and the first
        token of each beginning of its first word ("t", "ta", "take"; "T", "Take")."""
        head = value.split(" ", 1)[0]
        found = {first}
        for text in {head, head.capitalize(), head.lower()}:
            for end in range(1, len(text) + 1):
                tokens = self.tokenize(text[:end].encode())
                if tokens:
                    found.add(tokens[0])
        return found

    def _back_to(
        self, generated: int, n_tokens: int, logits: npt.NDArray[np.float32] | None
    ) -> None:
        """Forget everything committed after `generated` tokens: the context, what is
        queued, and the grammar's state (replayed from the start of the call)."""
        del self.generated[generated:]
        self.llm.n_tokens = n_tokens  # the next evaluation drops the rest of the KV cache
        self._logits = logits
        self.pending, self.buffer, self.overflow = [], b"", b""
        if self.grammar is not None:
            self.grammar.reset()
            for token in self.generated[self._call_start :]:
                self.grammar.accept(token)

    def sample_token(self, banned: Sequence[int] = ()) -> int:
        """The best token the grammar (if any) allows, greedy or with temperature."""
        return self._best(self.logits(), banned)

    def sample_run(
        self,
        banned: Sequence[int] = (),
        done: Callable[[bytes], bool] | None = None,
        closers: frozenset[int] = frozenset(),
    ) -> list[int] | None:
        """Sample and commit one token, or several when a prompt-lookup draft is confirmed.

        Values are often copied from the prompt (a resolved date the center wrote there,
        a city the user said): the tokens that followed the current suffix in the prompt
        are checked in one forward pass instead of one pass each. Greedy only, so the
        result is exactly what token-by-token decoding would give. `done(text)`: whether the
        run's text so far completes what is being sampled; no draft token is taken after
        that, since what follows is the walker's decision, not the model's free text.
        None (nothing committed) when the model's token is one of `closers` (see
        `walk_value`).
        """
        token = self.sample_token(banned)
        if self.is_end(token):
            return []
        if token in closers:
            return None
        self._commit([token], forced=False)
        text = self.piece(token)
        draft = [] if done is not None and done(text) else self._draft(
            text, done, banned, closers)
        if not draft:
            return [token]
        run = [token]
        batch = self.pending + draft
        rows = self._eval_all(batch)
        self.stats.drafts += 1
        base = len(self.pending) - 1
        self.pending = []
        kept = base + 1
        nxt: int | None = None
        for i, guess in enumerate(draft):
            best = self._best(rows[base + i], banned)
            if best != guess or best in banned or best in closers:
                nxt = best
                break
            self._commit([guess], forced=False, evaluated=True)
            self.stats.drafted += 1
            run.append(guess)
            kept += 1
            text += self.piece(guess)
            if done is not None and done(text):
                break
        else:
            nxt = self._best(rows[base + len(draft)], banned)
        # Rejected draft tokens stay in the KV cache past n_tokens; the next eval drops them.
        self.llm.n_tokens -= len(batch) - kept
        self._logits = rows[kept - 1].copy()
        if nxt is not None and not self.is_end(nxt) and nxt not in closers:
            self._commit([nxt], forced=False)
            run.append(nxt)
        return run

    def _draft(
        self,
        text: bytes,
        done: Callable[[bytes], bool] | None,
        banned: Sequence[int],
        closers: frozenset[int],
    ) -> list[int]:
        """Tokens that followed the latest occurrence of the current suffix in what was
        said, up to the end of the value being sampled.

        `text`: the run's text so far; the draft stops before a token that would end the
        value (`done`), close it (`closers`) or is `banned`: those are the walker's to
        decide, so checking them would only cost their evaluation.
        """
        source = self.prompt[self.draft_start :]
        if self.max_draft <= 0 or len(source) < 2:
            return []
        history = self.generated[-max(_DRAFT_NGRAMS) :]
        for n in _DRAFT_NGRAMS:
            if len(history) < n:
                continue
            suffix = np.array(history[-n:], dtype=source.dtype)
            windows = np.lib.stride_tricks.sliding_window_view(source[:-1], n)
            hits = np.nonzero((windows == suffix).all(axis=1))[0]
            if len(hits):
                start = int(hits[-1]) + n
                return self._value_part(source[start : start + self.max_draft].tolist(),
                                        text, done, banned, closers)
        return []

    def _value_part(
        self,
        draft: list[int],
        text: bytes,
        done: Callable[[bytes], bool] | None,
        banned: Sequence[int],
        closers: frozenset[int],
    ) -> list[int]:
        """The leading tokens of `draft` that stay inside the value (see `_draft`)."""
        kept: list[int] = []
        for token in draft:
            if self.is_special(token) or token in closers or token in banned:
                break
            text += self.piece(token)
            if done is not None and done(text):
                break
            kept.append(token)
        return kept

    def _eval_all(self, tokens: list[int]) -> npt.NDArray[np.float32]:
        """Run `tokens` as one batch, returning the logits of every position."""
        self.check_deadline()
        started = time.perf_counter()
        rows = eval_batch(self.llm, tokens, range(len(tokens)))
        self.stats.eval_ms += (time.perf_counter() - started) * 1000
        self.stats.evals += 1
        self.stats.evaluated += len(tokens)
        return rows

    def _best(self, logits: npt.NDArray[np.float32], banned: Sequence[int] = ()) -> int:
        """The best token of `logits` that the grammar (if any) allows."""
        if len(banned):
            logits = logits.copy()
            logits[np.asarray(banned, dtype=np.int64)] = -np.inf
        if self.temperature <= 0:
            best = int(np.argmax(logits))
            if self.grammar is None or self.grammar.allowed(np.array([best], np.int32))[0]:
                return best
        top = np.argpartition(-logits, _TOP_K)[:_TOP_K].astype(np.int32)
        top = top[np.argsort(-logits[top])]
        if self.grammar is not None:
            top = top[self.grammar.allowed(top)]
            if len(top) == 0:  # rare: no top-k token fits; filter the whole vocabulary
                everything = np.arange(len(logits), dtype=np.int32)
                top = everything[self.grammar.allowed(everything) & np.isfinite(logits)]
                if len(top) == 0:
                    raise DecodeError("internal: the grammar admits no token")
                top = top[np.argsort(-logits[top])][:_TOP_K]
        return self._pick(logits, top)

    def _pick(self, logits: npt.NDArray[np.float32], ids: npt.NDArray[np.int32]) -> int:
        scores = logits[ids].astype(np.float64)
        if self.temperature <= 0 or len(ids) == 1:
            return int(ids[int(np.argmax(scores))])
        scores = (scores - scores.max()) / self.temperature
        probs = np.exp(scores)
        probs /= probs.sum()
        return int(self.rng.choice(ids, p=probs))

    # --- free text ---------------------------------------------------------------------
    def text(
        self, banned: Sequence[int], stop: Callable[[int], bool], first: int | None = None,
        on_text: Callable[[str], None] | None = None,
    ) -> tuple[str, bool]:
        """Free text until an end-of-turn token; returns (text, truncated by max_tokens).

        `first`: the first token when the caller already chose it from the same logits.
        `on_text`: gets the text piece by piece as it is written (pieces join to the text).
        """
        out = b""
        # A character may span tokens: pieces are cut at whole characters only.
        pieces = codecs.getincrementaldecoder("utf-8")(errors="replace")
        send = on_text or (lambda _piece: None)
        while True:
            token, first = (first, None) if first is not None else (self.sample_token(banned), None)
            ended = stop(token)
            if ended or len(self.generated) >= self.max_tokens:
                send(pieces.decode(b"", final=True))
                return out.decode("utf-8", errors="replace"), not ended
            self._commit([token], forced=False)
            out += self.piece(token)
            send(pieces.decode(self.piece(token)))
            if self.grammar is not None and json_value_end(out) is not None:
                # A response_schema value is complete: nothing after it may follow.
                send(pieces.decode(b"", final=True))
                return out.decode("utf-8", errors="replace"), False


def eval_batch(
    llm: llama_cpp.Llama, tokens: Sequence[int], rows: Sequence[int], *,
    output_all: bool = False,
) -> npt.NDArray[np.float32]:
    """Append `tokens` to the context in one forward pass; the logits at the indices `rows`.

    Anything in the KV cache past the context's end (a rejected draft, unused primed
    tokens) is dropped first. `output_all` marks every position as an output, as
    llama.cpp wants when the context computes embeddings (it warns otherwise).
    """
    n_past = llm.n_tokens
    llm._ctx.kv_cache_seq_rm(-1, n_past, -1)
    llm._batch.set_batch(batch=list(tokens), n_past=n_past, logits_all=output_all)
    for index in rows:
        llm._batch.batch.logits[index] = True
    llm._ctx.decode(llm._batch)
    llm.input_ids[n_past : n_past + len(tokens)] = tokens
    llm.n_tokens = n_past + len(tokens)
    n_vocab = llm.n_vocab()
    return np.stack([
        np.ctypeslib.as_array(llama_cpp.llama_get_logits_ith(llm.ctx, index), shape=(n_vocab,))
        for index in rows
    ])


def read_last_logits(llm: llama_cpp.Llama) -> npt.NDArray[np.float32]:
    """A copy of the logits of the last evaluated position."""
    ptr = llama_cpp.llama_get_logits_ith(llm.ctx, -1)
    return np.ctypeslib.as_array(ptr, shape=(llm.n_vocab(),)).copy()
