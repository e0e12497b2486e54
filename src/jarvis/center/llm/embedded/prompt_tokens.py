"""Prompt text to tokens, tokenizing a tool set's stable system turn once.

Every request of a tool set starts with the same system turn (2,000-3,000 tokens on a node
of twenty tools), which llama.cpp's tokenizer takes several milliseconds to read on a
small CPU, and a request needs it three times: to choose how the tools are written, as
the prompt's prefix and inside the whole prompt. The stable turns' tokens are kept, and a
prompt that starts with one is tokenized only from where that turn ends.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable

import numpy as np
import numpy.typing as npt

__all__ = ["PromptTokenizer"]

Tokens = npt.NDArray[np.intc]


class PromptTokenizer:
    """`tokenize` with the tokens of the last `size` stable texts kept.

    `turn_start` is the special token that opens a turn (`<|im_start|>`). llama.cpp cuts
    text at special tokens before anything else, so a prompt cut where a turn starts
    tokenizes as its two parts do, and the kept tokens of the first part stand for it.
    """

    def __init__(self, tokenize: Callable[[str], Tokens], turn_start: str, size: int) -> None:
        self._tokenize = tokenize
        self._turn_start = turn_start
        self._size = size
        self._kept: OrderedDict[str, Tokens] = OrderedDict()

    def stable(self, text: str) -> Tokens:
        """The tokens of a text many requests share (a system turn with its tools)."""
        tokens = self._kept.get(text)
        if tokens is None:
            tokens = self._tokenize(text)
            tokens.flags.writeable = False  # shared by every request of the tool set
            self._kept[text] = tokens
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
        else:
            self._kept.move_to_end(text)
        return tokens

    def prompt(self, text: str, prefix: str) -> Tokens:
        """The tokens of `text`, a whole prompt whose stable start is `prefix` ("": none)."""
        rest = text[len(prefix):]
        if not prefix or not text.startswith(prefix) or not rest.startswith(self._turn_start):
            return self._tokenize(text)
        return np.concatenate([self.stable(prefix), self._tokenize(rest)])

    def clear(self) -> None:
        self._kept.clear()
