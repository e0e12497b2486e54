"""The model as the embedded backend reads it: llama.cpp's model and vocabulary, the chat
template, the special tokens a call is written with, and what the decoder needs to know of
the tokens. Loaded once, on the backend's model thread, and used only there.
"""

from __future__ import annotations

import contextlib
import logging
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import llama_cpp
import numpy as np
import numpy.typing as npt

from jarvis.center.llm.base import LLMError, LLMUnavailableError
from jarvis.center.llm.embedded.context import PromptContext
from jarvis.center.llm.embedded.cpu import cpu_lists_amx, without_weight_repacking
from jarvis.center.llm.embedded.decode_inputs import TokenText
from jarvis.center.llm.embedded.grammar import (
    name_option,
    name_prefix,
    tool_call_grammar,
    tool_name,
)
from jarvis.center.llm.embedded.grammar_sampler import GrammarSampler
from jarvis.center.llm.embedded.options import EmbeddedOptions
from jarvis.center.llm.embedded.prompt import FALLBACK_TEMPLATE, ChatPrompt
from jarvis.center.llm.embedded.prompt_layout import PromptLayout
from jarvis.center.llm.embedded.prompt_state_cache import open_cache
from jarvis.center.llm.embedded.prompt_tokens import PromptTokenizer

__all__ = ["LoadedModel", "open_model"]

# The tags a Qwen2.5-style template writes a call with, each one token of its vocabulary.
SPECIAL_TEXTS = ("<tool_call>", "</tool_call>", "<|im_start|>", "<|im_end|>", "\n")


def open_model(path: Path, options: EmbeddedOptions, n_threads: int) -> LoadedModel:
    """Read the GGUF file at `path` (LLMUnavailableError, saying what to do, when it cannot)."""
    if not path.is_file():
        raise LLMUnavailableError(f"model file {path} does not exist; run `jarvis model prepare`")
    repack = options.weight_repacking if options.weight_repacking is not None else (
        not cpu_lists_amx())
    try:
        with (contextlib.nullcontext() if repack else without_weight_repacking(llama_cpp),
              _output_left_alone()):
            llm = llama_cpp.Llama(
                model_path=str(path), n_ctx=options.n_ctx, n_batch=options.n_batch,
                n_threads=n_threads, n_threads_batch=n_threads,
                flash_attn=options.flash_attn, verbose=False,
            )
    except (ValueError, RuntimeError, OSError) as exc:
        raise LLMUnavailableError(
            f"could not load the model {path}: {exc}. The file may be corrupt or not a "
            "GGUF model; run `jarvis model prepare --force` or fix JARVIS_MODEL_PATH."
        ) from exc
    try:
        return LoadedModel(llm, path, options, repack)
    except BaseException:
        llm.close()
        raise


@contextlib.contextmanager
def _output_left_alone() -> Iterator[None]:
    """A load that leaves the process's stdout and stderr alone. Quiet (`verbose=False`),
    llama-cpp-python also points file descriptors 1 and 2 at /dev/null while it reads the
    model, for every thread: an answer printed meanwhile (a node in the same process
    answering without the model) was lost. llama.cpp's log is silenced instead, all of
    it: a few lines of the load come at a level the quiet setting lets through."""
    modules = (llama_cpp.llama, llama_cpp._internals)
    saved = [module.suppress_stdout_stderr for module in modules]
    quiet = llama_cpp.llama.set_verbose
    for module in modules:
        module.suppress_stdout_stderr = _NoRedirect
    llama_cpp.llama.set_verbose = _silent
    try:
        yield
    finally:
        llama_cpp.llama.set_verbose = quiet
        for module, original in zip(modules, saved, strict=True):
            module.suppress_stdout_stderr = original


def _silent(verbose: bool) -> None:
    """llama.cpp's log callback prints nothing at all."""
    llama_cpp._logger.logger.setLevel(logging.CRITICAL + 1)


class _NoRedirect(contextlib.nullcontext[None]):
    """Stands in for llama-cpp-python's `suppress_stdout_stderr(disable=...)`."""

    def __init__(self, disable: bool = True) -> None:
        super().__init__()


class LoadedModel:
    """A read model and its vocabulary's answers, kept where a request asks them often."""

    def __init__(self, llm: Any, path: Path, options: EmbeddedOptions, repack: bool) -> None:
        self.llm = llm
        self.vocab = llama_cpp.llama_model_get_vocab(llm.model)
        self.options = options
        self.prompt = ChatPrompt(llm.metadata.get("tokenizer.chat_template") or FALLBACK_TEMPLATE)
        self.special = {text: self._one_token(path, text) for text in SPECIAL_TEXTS}
        self._pieces: dict[int, bytes] = {}
        self._grammars: OrderedDict[str, GrammarSampler] = OrderedDict()
        self._openings: dict[bytes, list[int]] = {}
        self.tails = self._quote_tails()  # a vocabulary scan: at load, not in a request
        # Two stable texts per tool set (the tools' format check, the prefix), with and
        # without `say`.
        self.tokens = PromptTokenizer(self.tokenize, "<|im_start|>",
                                      4 * options.prefix_cache_size)
        self.layout = PromptLayout(self.prompt, self.tokens, options)
        # What a saved state depends on besides its tokens (n_threads does not change it;
        # repacked weights compute slightly different numbers).
        disk = open_cache(options.prompt_cache_dir, path, {
            "n_ctx": options.n_ctx, "n_batch": options.n_batch, "flash_attn": options.flash_attn,
            "weight_repacking": repack, "llama_cpp": llama_cpp.__version__})
        self.context = PromptContext(llm, options, disk, self.special["<|im_start|>"])

    def _one_token(self, path: Path, text: str) -> int:
        ids = self.llm.tokenize(text.encode(), add_bos=False, special=True)
        if len(ids) != 1:
            raise LLMUnavailableError(
                f"{path} does not look like a Qwen2.5-style model "
                f"({text!r} is not one token); tool calls need <tool_call> tags"
            )
        return int(ids[0])

    # --- tokens -----------------------------------------------------------------------------
    def is_end(self, token: int) -> bool:
        return token == self.special["<|im_end|>"] or bool(
            llama_cpp.llama_vocab_is_eog(self.vocab, token))

    def is_special(self, token: int) -> bool:
        return bool(llama_cpp.llama_vocab_is_control(self.vocab, token)) or self.is_end(token)

    def piece(self, token: int) -> bytes:
        piece = self._pieces.get(token)
        if piece is None:
            piece = self.llm.detokenize([token], special=False)
            self._pieces[token] = piece
        return piece

    def tokenize(self, text: str) -> npt.NDArray[np.intc]:
        # special=True: the template's own markers must become their special tokens
        # (message contents were cleaned of them by the prompt module).
        return np.array(
            self.llm.tokenize(text.encode("utf-8"), add_bos=False, special=True), dtype=np.intc
        )

    def token_text(self) -> TokenText:
        """What the decoder needs to know of the tokens."""
        return TokenText(self.piece, self.is_special, self.is_end, self.tails)

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
        quoted = [token for token in range(self.llm.n_vocab())
                  if b'"' in llama_cpp.llama_vocab_get_text(self.vocab, token)]
        for token in quoted:
            piece = self.llm.detokenize([token], special=False)
            at = piece.find(b'"')
            if at == 0:
                closers.add(token)
            elif 0 < at < len(piece) - 1:
                inner.append(token)
        return frozenset(closers), np.array(inner, dtype=np.int32)

    # --- calls ------------------------------------------------------------------------------
    def grammar(self, gbnf: str) -> GrammarSampler:
        """llama.cpp's sampler for `gbnf`, the last few kept (building one takes a while)."""
        sampler = self._grammars.get(gbnf)
        if sampler is None:
            try:
                sampler = GrammarSampler(self.vocab, gbnf)
            except ValueError as exc:
                raise LLMError(f"could not build a grammar for these tools: {exc}") from exc
            self._grammars[gbnf] = sampler
            while len(self._grammars) > 4 * self.options.prefix_cache_size:
                self._grammars.popitem(last=False)[1].close()
        self._grammars.move_to_end(gbnf)
        return sampler

    def grammar_for(self, tools: list[dict[str, Any]]) -> GrammarSampler:
        return self.grammar(tool_call_grammar(tools))

    def call_opening(self, tools: list[dict[str, Any]]) -> list[int]:
        """The tokens every call of `tools` starts with, as the decoder will commit them."""
        texts = [(name_prefix() + name_option(tool_name(t))).encode() for t in tools]
        key = b"\0".join(texts)
        found = self._openings.get(key)
        if found is None:
            toks = [self.llm.tokenize(t, add_bos=False, special=False) for t in texts]
            shared = 0
            while all(len(t) > shared + 1 and t[shared] == toks[0][shared] for t in toks):
                shared += 1
            found = [self.special["<tool_call>"], self.special["\n"], *toks[0][:shared]]
            self._openings[key] = found
        return found

    def close(self) -> None:
        """Free the grammars, the kept states and the model."""
        for grammar in self._grammars.values():
            grammar.close()
        self._grammars.clear()
        self.context.clear()
        self._openings.clear()
        self.tokens.clear()
        self.llm.close()
