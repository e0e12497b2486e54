"""What one decoding is given (settings, the model's tokens, what was heard, the value
checks) and the counters it hands back."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import numpy.typing as npt


@dataclass
class Stats:
    """Counters for the usage block of a reply."""

    forced: int = 0  # tokens taken from the structure, never sampled
    drafted: int = 0  # sampled tokens accepted from a prompt-lookup draft (no own pass)
    drafts: int = 0  # draft verifications run
    sampled: int = 0  # tokens chosen from the model's logits
    evaluated: int = 0  # output tokens run through the model
    evals: int = 0  # forward passes (batches) during generation
    eval_ms: float = 0.0
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class KeyBiases:
    """Priors added to the logits of optional keys and of choices the user said (the
    `EmbeddedOptions` fields of the same names, `*_key_bias` and `choice_bias`)."""

    optional: float = 0.0
    undated: float = 0.0
    dated: float = 0.0
    choice: float = 0.0
    unsaid: float = 0.0


@dataclass(frozen=True)
class DecodeSettings:
    """How one generation runs: its limits, sampling and prompt-lookup drafts."""

    deadline: float
    max_tokens: int
    temperature: float = 0.0
    rng: np.random.Generator | None = None
    # Drafts are looked up in `prompt` after `draft_start` (what was said and, when the
    # request repeats the last prompt, the last reply; not the system prompt), at most
    # `max_draft` tokens long.
    prompt: npt.NDArray[np.intc] | None = None
    draft_start: int = 0
    max_draft: int = 10
    biases: KeyBiases = field(default_factory=KeyBiases)


@dataclass(frozen=True)
class TokenText:
    """What the decoder needs to know of the model's tokens."""

    piece: Callable[[int], bytes]  # a token's bytes
    is_special: Callable[[int], bool] = lambda token: False
    is_end: Callable[[int], bool] = lambda token: False
    # Tokens with text after a quote, and their quote-free ids (see walk_value).
    quote_tails: tuple[frozenset[int], Sequence[int]] = (frozenset(), ())


@dataclass(frozen=True)
class Heard:
    """What the request said, as the center resolved it: read at the decoder's choices."""

    dates: Sequence[Sequence[str]] = ()
    times: Sequence[str] | None = None  # None: not known, a time is left to the model
    durations: Sequence[str] = ()  # ISO-8601
    choices: Mapping[str, Mapping[str, Sequence[str]]] | None = None  # tool -> param -> said
    answered: tuple[str, str] | None = None  # (tool, key) the last message answers: written


@dataclass(frozen=True)
class ValueChecks:
    """The backend's checks of values against what the user said (None: not checked)."""

    # (schema, enum values heard) -> whether no value of that optional key could be one
    # the user said; opening such a key gets the `unsaid` bias.
    never_said: Callable[[dict[str, Any], Sequence[str]], bool] | None = None
    # Whether a free string was copied from the prompt rather than said: see sample_text.
    copied: Callable[[str], bool] | None = None
    said_in_full: Callable[[str], bool] | None = None
    # (tool, key, value) -> whether nothing said accounts for a required free-text value:
    # the call ends before it, and the center asks for it (no time spent on the rest).
    unsaid_required: Callable[[str, str, Any], bool] | None = None
