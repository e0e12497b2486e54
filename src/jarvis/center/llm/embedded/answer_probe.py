"""The answer probe: a linear read-out of the model's hidden state that tells a request for
a command from small talk, a general question or a request no command can do.

The 0.5B model's own signals (its first token, the logit of the `say` pseudo tool) overlap
for "how many hours of sleep does a teenager need" and "set a timer for an hour"; its
hidden state does not. A logistic regression over three states read in the prompt's last
batch (so no extra forward pass) separates them:

- `end`: the last position of the prompt (after `<|im_start|>assistant\\n`);
- `name`: the position where a tool's name is chosen (after `<tool_call>\\n{"name": "`);
- `mean`: the mean over the tokens of the user's words.

The weights are trained by `bench/train_answer_probe.py` for one model file, with many
tool sets in the prompt (the built-in commands, and services written outside this project
beside them), and shipped as `answer_probes/<sha256>.json`. The score is the log-odds that
the utterance asks for no tool, whatever the commands of the request.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from jarvis.center.llm.model_store import recorded_sha256

PROBES_DIR = Path(__file__).parent / "answer_probes"
FEATURES = ("name", "end", "mean")
FORMAT = 2


class AnswerProbeError(ValueError):
    """A probe file that cannot be used: unreadable, another format, another model size."""


@dataclass(frozen=True)
class AnswerProbe:
    """`score(states)`: log-odds that the utterance wants no tool (> 0: answer in words)."""

    weights: npt.NDArray[np.float32]
    bias: float
    n_embd: int
    source: str
    model_sha256: str | None = None

    @classmethod
    def load(cls, path: str | Path) -> AnswerProbe:
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise AnswerProbeError(f"cannot read the answer probe {path}: {exc}") from exc
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise AnswerProbeError(f"{path} is not an answer probe of format {FORMAT}")
        if tuple(data.get("features", ())) != FEATURES:
            raise AnswerProbeError(f"{path}: features must be {list(FEATURES)}")
        try:
            n_embd = int(data["n_embd"])
            weights = np.asarray(data["weights"], dtype=np.float32)
            bias = float(data["bias"])
        except (KeyError, TypeError, ValueError) as exc:
            raise AnswerProbeError(f"{path}: malformed answer probe ({exc})") from exc
        if weights.shape != (len(FEATURES) * n_embd,) or not np.all(np.isfinite(weights)):
            raise AnswerProbeError(
                f"{path}: expected {len(FEATURES) * n_embd} finite weights, got "
                f"{weights.shape[0] if weights.ndim == 1 else weights.shape}")
        return cls(weights, bias, n_embd, str(path), data.get("model_sha256"))

    @classmethod
    def for_model(cls, model_path: Path, probes_dir: Path = PROBES_DIR) -> AnswerProbe | None:
        """The shipped probe of a prepared (verified) model file, if there is one."""
        digest = recorded_sha256(model_path)
        if digest is None:
            return None
        path = probes_dir / f"{digest}.json"
        return cls.load(path) if path.is_file() else None

    @classmethod
    def chosen(cls, source: str | Path | None, model_path: Path, n_embd: int
               ) -> AnswerProbe | None:
        """The probe an option names ("auto": the model's shipped one; None: none), checked
        against the model's width (AnswerProbeError when it cannot be used)."""
        if source is None:
            return None
        probe = cls.for_model(model_path) if source == "auto" else cls.load(source)
        if probe is not None and probe.n_embd != n_embd:
            raise AnswerProbeError(
                f"the answer probe {probe.source} is for a model with {probe.n_embd}-wide "
                f"states, but {model_path.name} has {n_embd}; train one for this model "
                "(bench/train_answer_probe.py) or pass answer_probe=None")
        return probe

    def score(self, states: dict[str, npt.NDArray[np.float32]]) -> float:
        features = np.concatenate([np.asarray(states[k], dtype=np.float32) for k in FEATURES])
        return float(features @ self.weights + self.bias)


def probe_document(
    weights: npt.NDArray[np.float64], bias: float, n_embd: int, model_sha256: str,
    trained_on: dict[str, Any],
) -> dict[str, Any]:
    """The JSON document of a trained probe (written by bench/train_answer_probe.py)."""
    return {
        "format": FORMAT,
        "features": list(FEATURES),
        "n_embd": n_embd,
        "model_sha256": model_sha256,
        "trained_on": trained_on,
        "bias": round(float(bias), 6),
        "weights": [float(f"{w:.6g}") for w in weights],
    }
