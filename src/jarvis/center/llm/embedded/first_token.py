"""Call or answer, read from the reply's first token: the best token that opens a call
against the best one that starts a spoken answer.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from jarvis.center.llm.embedded.grammar import tool_name
from jarvis.center.llm.embedded.loaded_model import LoadedModel

__all__ = ["call_or_text", "first_tokens"]

Logits = npt.NDArray[np.float32]


def first_tokens(model: LoadedModel, logits: Logits,
                 tools: list[dict[str, Any]]) -> tuple[int | None, int | None]:
    """The best token that opens a call and the best one that starts an answer."""
    # Starting with a tool's name (`track_parcel {...}`, as the compact examples are written)
    # is also a call; spoken answers start with a capital letter.
    names = tuple(tool_name(t).encode() for t in tools)
    top = np.argpartition(-logits, 256)[:256]
    top = top[np.argsort(-logits[top])]
    best_call = best_text = None
    for token in (int(t) for t in top):
        piece = model.piece(token).lstrip()
        intent = token == model.special["<tool_call>"] or piece.startswith((b"{", b"<", b"`"))
        intent = intent or (len(piece) >= 3 and any(n.startswith(piece) for n in names))
        if intent and best_call is None:
            best_call = token
        elif not intent and not model.is_end(token) and best_text is None and piece:
            best_text = token
        if best_call is not None and best_text is not None:
            break
    return best_call, best_text


def call_or_text(
    model: LoadedModel, logits: Logits, tools: list[dict[str, Any]], margin: float
) -> tuple[bool, int | None, float | None]:
    """Whether the reply is a tool call, the answer's first token if not, and the gap
    between the two best tokens (for measuring).

    Qwen2.5-Coder-0.5B rarely opens with the <tool_call> token: it starts a bare `{"`,
    a code fence, or "<" (the tag as text). All of those mean "a call"; the best other
    token is the start of a spoken answer. The call wins unless the answer's token is
    ahead by `margin` (`direct_answer_margin`, measured: see docs/embedded-llm.md).
    """
    best_call, best_text = first_tokens(model, logits, tools)
    gap = None
    if best_call is not None and best_text is not None:
        gap = round(float(logits[best_call] - logits[best_text]), 3)
    if best_text is None:
        return True, None, gap
    if best_call is None:
        return False, best_text, gap
    wants_call = logits[best_call] + margin >= logits[best_text]
    return bool(wants_call), None if wants_call else best_text, gap
