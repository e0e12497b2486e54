"""`PromptContext`: the model's context brought to a prompt with as little reading as can be.

A prompt is read once: every request of a conversation starts with the same system turn
and tools (the prefix), so its KV state is kept three ways, tried in this order:

1. live: the context still holds the start of the new prompt (the last request's);
2. in memory: a small LRU of saved sequence states, keyed by the prefix tokens;
3. on disk: the state an earlier process saved (`PromptStateCache`), so that the first
   request after a start answers in seconds instead of reading the prompt again.

Only what none of them holds is evaluated. The last batch can carry the likely start of
the reply and, for the answer probe, hand back the hidden states it needs.
"""

from __future__ import annotations

import ctypes
import hashlib
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import llama_cpp
import numpy as np
import numpy.typing as npt

from jarvis.center.llm.base import LLMError, LLMTimeoutError
from jarvis.center.llm.embedded.decoder import eval_batch
from jarvis.center.llm.embedded.options import EmbeddedOptions
from jarvis.center.llm.embedded.prompt_state_cache import PromptStateCache

__all__ = ["PromptContext", "Tokens"]

Tokens = npt.NDArray[np.intc]
# Longest last batch whose hidden states the answer probe reads: each of its positions costs
# a 600 KB logits row. Beyond it the model's own signals decide, as without a probe.
_STATES_MAX_BATCH = 64


@dataclass
class _Saved:
    """A saved KV state of sequence 0 after `tokens` (the system turn with the tools)."""

    tokens: Tokens
    state: bytes


def _key(tokens: Tokens) -> bytes:
    return hashlib.sha256(tokens.tobytes()).digest()


def _common(a: Tokens, b: Tokens) -> int:
    """How many tokens `a` and `b` start with in common."""
    n = min(len(a), len(b))
    if n == 0:
        return 0
    diff = np.nonzero(a[:n] != b[:n])[0]
    return int(diff[0]) if len(diff) else n


class PromptContext:
    """Sequence 0 of a loaded `llama_cpp.Llama`, and the prompt states kept for it.

    `user_start` is the token that opens a turn (`<|im_start|>`): the answer probe reads
    the states of the user's own words, between the last two of them.
    """

    def __init__(self, llm: Any, options: EmbeddedOptions, disk: PromptStateCache | None,
                 user_start: int) -> None:
        self.llm = llm
        self.options = options
        self.disk = disk
        self.user_start = user_start
        self._saved: OrderedDict[bytes, _Saved] = OrderedDict()

    def holds(self, tokens: Tokens) -> bool:
        """Whether `tokens` were read and saved, and the context holds them now."""
        return _key(tokens) in self._saved and _common(self._live(), tokens) == len(tokens)

    def clear(self) -> None:
        self._saved.clear()

    def restore(self, full: Tokens, prefix: Tokens, *, deadline: float | None,
                after: list[int] | None = None, states: bool = False) -> dict[str, Any]:
        """Bring the context to `full` reusing what is kept (saving `prefix` when new);
        leaves the logits of the last token. The info returned says what was reused.

        `after`: tokens evaluated right after `full` in the same batch (the likely start of
        the reply); the logits after `full` and after them are returned in the info as
        `prompt_logits` and `after_logits`. `states`: also read the hidden states the
        answer probe needs from that batch (`info["states"]`, see `_read_states`).
        """
        info, reused_now = self._reuse(full, prefix, deadline)
        if not after:
            if reused_now < len(full):
                self.evaluate(full[reused_now:], deadline)
            return info
        info.update(self._eval_with_after(full, reused_now, after, deadline, states))
        return info

    def evaluate(self, tokens: Tokens, deadline: float | None) -> None:
        """Read `tokens` after what the context holds."""
        # In n_batch chunks so a request's timeout is noticed during a long cold prompt.
        for start in range(0, len(tokens), self.options.n_batch):
            if deadline is not None and time.monotonic() > deadline:
                raise LLMTimeoutError("the embedded model timed out reading the prompt")
            self.llm.eval(tokens[start : start + self.options.n_batch].tolist())

    def _live(self) -> Tokens:
        return np.asarray(self.llm.input_ids[: self.llm.n_tokens], dtype=np.intc)

    def _reuse(self, full: Tokens, prefix: Tokens, deadline: float | None
               ) -> tuple[dict[str, Any], int]:
        """Bring the longest kept start of `full` into the context (reading and saving
        `prefix` when new); the reuse info and how many tokens of `full` the context holds."""
        # A prefix neither live nor in memory may have been read by an earlier process.
        from_disk = self._from_disk(prefix, _common(self._live(), full))
        live = _common(self._live(), full)
        best = self._longest_saved(full, live)
        source = "disk" if from_disk else "live" if live > 0 else "none"
        if best is not None:
            self._load(best)
            reused = len(best.tokens)
            source = "lru"
        else:
            reused = live
            self.llm.n_tokens = live
        # Always evaluate at least one token: the reply starts from its logits.
        reused = min(reused, len(full) - 1)
        self.llm.n_tokens = min(self.llm.n_tokens, reused)
        evaluated = len(full) - reused
        if len(prefix) > reused and _key(prefix) not in self._saved:
            self.evaluate(full[reused : len(prefix)], deadline)
            self._save(prefix)
            reused_now = len(prefix)
            source = "miss"
        else:
            reused_now = reused
        info: dict[str, Any] = {"reused_tokens": reused, "evaluated_tokens": evaluated,
                                "prefix_cache": source}
        return info, reused_now

    def _longest_saved(self, full: Tokens, live: int) -> _Saved | None:
        """The longest saved prefix of `full` longer than the `live` tokens, if any."""
        best: _Saved | None = None
        for saved in self._saved.values():
            n = len(saved.tokens)
            longer = n > live and n <= len(full) and (best is None or n > len(best.tokens))
            if longer and np.array_equal(full[:n], saved.tokens):
                best = saved
        return best

    def _eval_with_after(self, full: Tokens, start: int, after: list[int],
                         deadline: float | None, states: bool) -> dict[str, Any]:
        """Evaluate `full[start:]` then `after`; the logits (and states) `restore` returns."""
        # The rest of the prompt and `after` in one batch, keeping the logits of both ends.
        rest = full[start:]
        head = max(0, len(rest) + len(after) - self.options.n_batch)
        if head:
            self.evaluate(rest[:head], deadline)
        tail = [*rest[head:].tolist(), *after]
        if deadline is not None and time.monotonic() > deadline:
            raise LLMTimeoutError("the embedded model timed out reading the prompt")
        found: dict[str, Any] = {}
        ends = [len(rest) - head - 1, len(tail) - 1]
        if not states or len(tail) > _STATES_MAX_BATCH:
            found["prompt_logits"], found["after_logits"] = eval_batch(self.llm, tail, ends)
            return found
        # llama.cpp then outputs every position of the batch: ~50 ms more on 2 cores, and
        # a logits row (600 KB) per position, hence the bound.
        llama_cpp.llama_set_embeddings(self.llm.ctx, True)
        try:
            found["prompt_logits"], found["after_logits"] = eval_batch(
                self.llm, tail, ends, output_all=True)
            found["states"] = self._read_states(full, start + head, len(tail))
        finally:
            llama_cpp.llama_set_embeddings(self.llm.ctx, False)
        return found

    def _read_states(self, full: Tokens, batch_start: int, batch_len: int
                     ) -> dict[str, npt.NDArray[np.float32]]:
        """The answer probe's features from the last batch (see `answer_probe.py`).

        `full` ends with the user's turn and the assistant's header, and the batch, which
        began at `full[batch_start]`, ends with the call opening.
        """
        ctx, n_embd = self.llm.ctx, self.llm.n_embd()

        def state(index: int) -> npt.NDArray[np.float32] | None:
            if not 0 <= index < batch_len:
                return None
            ptr = llama_cpp.llama_get_embeddings_ith(ctx, index)
            return np.ctypeslib.as_array(ptr, shape=(n_embd,)).copy() if ptr else None

        end = state(len(full) - 1 - batch_start)
        name = state(batch_len - 1)
        if end is None or name is None:
            raise LLMError("internal: the answer probe's states were not computed")
        starts = np.nonzero(full == self.user_start)[0]
        said = []
        if len(starts) >= 2:  # the user's words: after `<|im_start|>user\n`, before <|im_end|>
            for position in range(int(starts[-2]) + 3, int(starts[-1]) - 2):
                row = state(position - batch_start)
                if row is not None:
                    said.append(row)
        mean = np.mean(said, axis=0).astype(np.float32) if said else end
        return {"end": end, "name": name, "mean": mean}

    def _save(self, tokens: Tokens) -> None:
        """Save sequence 0's KV state; the context must hold exactly `tokens`."""
        assert self.llm.n_tokens == len(tokens)
        ctx = self.llm.ctx
        size = llama_cpp.llama_state_seq_get_size(ctx, 0)
        buf = (ctypes.c_uint8 * size)()
        written = llama_cpp.llama_state_seq_get_data(ctx, buf, size, 0)
        saved = _Saved(tokens.copy(), bytes(buf)[:written])
        self._keep(saved)
        if self.disk is not None:
            # Once per new prefix, right after reading it for 15-35 s: writing the file
            # (~35 MB for the built-in prompt) takes 50-70 ms, not worth deferring.
            self.disk.save(saved.tokens, saved.state)

    def _keep(self, saved: _Saved) -> None:
        self._saved[_key(saved.tokens)] = saved
        while len(self._saved) > self.options.prefix_cache_size:
            self._saved.popitem(last=False)

    def _from_disk(self, prefix: Tokens, live: int) -> bool:
        """Bring `prefix` into the context from the state an earlier process saved, when
        it is not live or in memory; whether it was there and llama.cpp took it."""
        if self.disk is None or not len(prefix) or live >= len(prefix) or (
                _key(prefix) in self._saved):
            return False
        state = self.disk.load(prefix)
        if state is None:
            return False
        saved = _Saved(prefix.copy(), state)
        try:
            self._load(saved)
        except LLMError:
            self.llm.n_tokens = 0  # sequence 0 was cleared before the refusal
            self.disk.discard(prefix, "llama.cpp could not restore it")
            return False
        self._keep(saved)
        return True

    def _load(self, saved: _Saved) -> None:
        ctx = self.llm.ctx
        mem = llama_cpp.llama_get_memory(ctx)
        llama_cpp.llama_memory_seq_rm(mem, 0, -1, -1)
        buf = (ctypes.c_uint8 * len(saved.state)).from_buffer_copy(saved.state)
        if llama_cpp.llama_state_seq_set_data(ctx, buf, len(saved.state), 0) == 0:
            raise LLMError("internal: could not restore a saved prompt state")
        n = len(saved.tokens)
        self.llm.input_ids[:n] = saved.tokens
        self.llm.n_tokens = n
        key = _key(saved.tokens)
        if key in self._saved:
            self._saved.move_to_end(key)
