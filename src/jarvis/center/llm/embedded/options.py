"""The embedded backend's settings: one frozen object instead of thirty arguments.

Every field has the default the project measured as best (docs/embedded-llm.md, "Options"
and the results table); `bench/accuracy.py --backend-arg KEY=VALUE` and
`bench/sgd.py --backend-arg KEY=VALUE` try another value of any field.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_CHOICES = {
    "prompt_style": ("compact", "full"),
    "tool_format": ("json", "signatures"),
    "first_token_check": ("always", "unheard", "never"),
}


@dataclass(frozen=True)
class EmbeddedOptions:
    """How the embedded backend loads its model, reads prompts and decodes replies."""

    # --- the model and its context -----------------------------------------------------------
    n_threads: int | None = None  # CPU threads; None: every core the process may use
    n_ctx: int = 4096  # system prompt + tools + history + reply, in tokens
    n_batch: int = 256  # tokens per forward pass while reading the prompt
    flash_attn: bool = False  # slower on a 2-core CPU
    # llama.cpp's weight repacking; None: off where the CPU lists AMX (see `cpu.py`).
    weight_repacking: bool | None = None
    seed: int | None = None  # for sampling at temperature > 0

    # --- the prompt ---------------------------------------------------------------------------
    # "compact": the center's short prompt listing the tools itself; "full": its long one
    # with the schemas rendered by the model's template.
    prompt_style: str = "compact"
    # "json": slimmed schemas; "signatures": one Python-like line per tool (a third of the
    # tokens; used anyway for tool sets whose schemas do not fit n_ctx).
    tool_format: str = "json"
    prefix_cache_size: int = 4  # tool sets whose read system prompt stays in memory
    # Where read prompt states are kept across processes: "auto" (<data dir>/prompt-cache),
    # a folder, or None (memory only). See `prompt_state_cache.py`.
    prompt_cache_dir: str | Path | None = "auto"

    # --- call or answer -----------------------------------------------------------------------
    no_tool_choice: bool = True  # offer the `say` pseudo tool when an answer is allowed
    no_tool_bias: float = 1.5  # added to `say` when the name is chosen
    direct_answer_margin: float = 0.0  # call side of the first-token rule (no `say`)
    unheard_say_bias: float = 6.0  # added to `say` when no command's keyword was heard
    first_token_check: str = "unheard"  # when the reply's first token must agree on a call
    prime_call: bool = True  # read a call's opening with the prompt (most requests call)
    # The answer probe: "auto" (the one shipped for the model file), a path, or None (off);
    # a score above `probe_answer_above` is answered, below `probe_call_below` is called.
    answer_probe: str | Path | None = "auto"
    probe_answer_above: float = 2.0
    probe_call_below: float = -2.0
    answer_max_tokens: int = 60  # a spoken answer in place of a call ends at a sentence

    # --- choosing the tool and its values -----------------------------------------------------
    max_tool_calls: int = 1  # calls in one reply (the 0.5B model hardly ever chains)
    keyword_bias: float = 4.0  # added to a tool's name per keyword heard ...
    keyword_cap: float = 3.0  # ... counting at most this many
    # Added to a tool's name: this times (its relatedness - the most related tool's).
    relatedness_bias: float = 60.0
    choice_bias: float = 8.0  # toward an enum value whose synonym the user said
    optional_key_bias: float = 0.0  # added to opening an optional argument
    unsaid_key_bias: float = -100.0  # opening an optional argument nobody said (-100: never)
    undated_key_bias: float = -100.0  # an optional date argument when no date was heard
    dated_key_bias: float = 5.0  # ... and when one was
    use_date_hints: bool = True  # dates come from the center's hints, not a prompt table
    drop_unsaid: bool = True  # optional values nobody said are left out
    stop_at_unsaid: bool = True  # a first request's call ends at a required value unsaid
    max_draft: int = 10  # prompt-lookup draft tokens checked per pass (0: none)

    def __post_init__(self) -> None:
        for field, allowed in _CHOICES.items():
            if getattr(self, field) not in allowed:
                raise ValueError(f"{field} must be one of {', '.join(allowed)}, "
                                 f"not {getattr(self, field)!r}")
        for field in ("n_ctx", "n_batch", "prefix_cache_size", "max_tool_calls",
                      "answer_max_tokens"):
            if getattr(self, field) < 1:
                raise ValueError(f"{field} must be at least 1")

    @classmethod
    def from_mapping(cls, values: dict[str, Any]) -> EmbeddedOptions:
        """Options from a mapping (e.g. `--backend-arg` pairs); unknown keys are refused."""
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - known)
        if unknown:
            raise ValueError(f"unknown embedded backend option(s): {', '.join(unknown)}; "
                             f"known: {', '.join(sorted(known))}")
        return cls(**values)

    def replace(self, **changes: Any) -> EmbeddedOptions:
        return dataclasses.replace(self, **changes)
