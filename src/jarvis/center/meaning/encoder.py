"""`SentenceEncoder`: a sentence-embedding model (all-MiniLM-L6-v2) run with numpy.

The model is a 6-layer BERT (22M parameters) trained to place sentences that mean the
same thing near each other; its vectors say how related a request is to a tool's own
description without the two sharing a word. A request of 30 tokens takes about 13 ms on
two cores with plain numpy, in float32 throughout, so no inference library is needed: the
tokenizer is Hugging Face `tokenizers`, the weights a safetensors file read into numpy,
and the forward pass the standard BERT encoder with mean pooling.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt

__all__ = ["SentenceEncoder"]

Vector = npt.NDArray[np.float32]

_HEADS = 12
_EPS = 1e-12
_MAX_TOKENS = 128  # requests and tool descriptions are short; longer text is cut


def _layer_norm(x: Vector, weight: Vector, bias: Vector) -> Vector:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + _EPS) * weight + bias


def _erf(x: Vector) -> Vector:
    """erf to 1.5e-7 (Abramowitz & Stegun 7.1.26): numpy has none, BERT's GELU needs it."""
    sign = np.sign(x)
    x = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * x)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741
                + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-x * x))


def _gelu(x: Vector) -> Vector:
    # Python floats keep the float32 weights' type; a numpy float64 would widen every
    # later layer to float64 and copy each weight matrix to match, three times slower.
    return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)))


class SentenceEncoder:
    """Unit vectors for sentences; `encode` is thread-safe (the tokenizer is not)."""

    def __init__(self, folder: Path) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.enable_truncation(_MAX_TOKENS)
        self._tokenizer.no_padding()
        self._w = load_file(str(folder / "model.safetensors"))
        self._layers = len({k.split(".")[2] for k in self._w if k.startswith("encoder.layer.")})
        self._lock = threading.Lock()

    def encode(self, texts: Sequence[str]) -> Vector:
        """One L2-normalised row per text (mean of the last layer over its tokens)."""
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        with self._lock:
            ids = [e.ids for e in self._tokenizer.encode_batch(list(texts))]
        return np.stack([self._sentence(np.asarray(i, dtype=np.int64)) for i in ids])

    @property
    def dimension(self) -> int:
        return int(self._w["embeddings.word_embeddings.weight"].shape[1])

    def _sentence(self, ids: npt.NDArray[np.int64]) -> Vector:
        w = self._w
        x = (w["embeddings.word_embeddings.weight"][ids]
             + w["embeddings.position_embeddings.weight"][: len(ids)]
             + w["embeddings.token_type_embeddings.weight"][0])
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"])
        for layer in range(self._layers):
            x = self._block(x, f"encoder.layer.{layer}.")
        pooled = x.mean(0)
        return (pooled / max(float(np.linalg.norm(pooled)), 1e-9)).astype(np.float32)

    def _dense(self, x: Vector, name: str) -> Vector:
        return x @ self._w[name + ".weight"].T + self._w[name + ".bias"]

    def _block(self, x: Vector, p: str) -> Vector:
        """One transformer layer: self-attention, then the feed-forward part, each with a
        residual connection and layer norm."""
        n, d = x.shape
        head = d // _HEADS
        q, k, v = (self._dense(x, f"{p}attention.self.{m}").reshape(n, _HEADS, head)
                   .transpose(1, 0, 2) for m in ("query", "key", "value"))
        scores = q @ k.transpose(0, 2, 1) / math.sqrt(head)
        scores = np.exp(scores - scores.max(-1, keepdims=True))
        attention = scores / scores.sum(-1, keepdims=True)
        context = (attention @ v).transpose(1, 0, 2).reshape(n, d)
        x = _layer_norm(x + self._dense(context, f"{p}attention.output.dense"),
                        self._w[f"{p}attention.output.LayerNorm.weight"],
                        self._w[f"{p}attention.output.LayerNorm.bias"])
        hidden = _gelu(self._dense(x, f"{p}intermediate.dense"))
        return _layer_norm(x + self._dense(hidden, f"{p}output.dense"),
                           self._w[f"{p}output.LayerNorm.weight"],
                           self._w[f"{p}output.LayerNorm.bias"])
