"""How related what the user said is to each tool, by the meaning of the words.

Each tool is known by the sentences of its own declaration: its name and description
("find bus: Find a bus journey for a given pair of cities"), each choice it offers with
its options ("find events: Type of event: Music, Sports": a concert is an event to find)
and, where the command declares them, its examples' requests. A request's relatedness to
a tool is the highest cosine between the request's sentence vector and those sentences'
vectors. Nothing here depends on which tools exist: what a tool means comes only from
what its author wrote, and a better description or an example in the users' own words
makes it better understood.

Tool sentences are encoded once and kept, in memory and on disk (kept_vectors.py): a
tool set is sent once per conversation and nodes send the same tools again and again; a
request costs one encoding.
"""

from __future__ import annotations

import re
import threading
from collections import OrderedDict
from pathlib import Path

import numpy as np

from jarvis.center.meaning.encoder import SentenceEncoder, Vector
from jarvis.center.meaning.kept_vectors import read_vectors, write_vectors
from jarvis.center.toolspec import ToolCatalog, ToolSpec

__all__ = ["Relatedness", "declaration_sentences"]

_KEPT = 4096  # tool sentences whose vectors are kept
_EXAMPLES = 8  # a command's examples read, at most
_OPTIONS = 12  # a choice's options read, at most


def declaration_sentences(spec: ToolSpec) -> list[str]:
    """The sentences that say what `spec` is for: name and description, its choices, then
    examples."""
    name = spec.name.replace("_", " ").replace("-", " ")
    first = f"{name}: {spec.description}" if spec.description else name
    choices = [f"{name}: {p.description or p.name.replace('_', ' ')}: "
               f"{', '.join(p.enum[:_OPTIONS])}" for p in spec.params.values() if p.enum]
    return [first, *choices, *_example_sentences(spec)]


def _example_sentences(spec: ToolSpec) -> list[str]:
    """The requests of the command's examples, each name they give said as the name of
    its parameter ("book a table at Nopa" -> "book a table at restaurant"): the places
    and titles an example happens to use say nothing of what the command is for, and
    would make any request naming them near it ("how do I get to nopa")."""
    found = []
    for request, values in spec.example_calls[:_EXAMPLES]:
        for key, value in values.items():
            if isinstance(value, str) and value[:1].isupper():  # a name, as it is written
                said_as = str(key).replace("_", " ")
                request = re.sub(rf"\b{re.escape(value)}\b", lambda _, s=said_as: s, request)
        if request:
            found.append(request)
    return found


class Relatedness:
    """Tool name -> relatedness (cosine, -1..1) of a request to each tool of a catalog."""

    def __init__(self, encoder: SentenceEncoder, kept_in: Path | None = None) -> None:
        """`kept_in`: the file the tool sentences' vectors are kept in across processes
        (None: in memory only)."""
        self.encoder = encoder
        self._kept: OrderedDict[str, Vector] = OrderedDict()
        self._lock = threading.Lock()
        self._file = kept_in
        if kept_in is not None:
            self._kept.update(list(read_vectors(kept_in, encoder.dimension).items())[-_KEPT:])

    @classmethod
    def load(cls, folder: Path, kept_in: Path | None = None) -> Relatedness:
        return cls(SentenceEncoder(folder), kept_in)

    def scores(self, request: str, catalog: ToolCatalog) -> dict[str, float]:
        """Every tool of `catalog` with its relatedness to `request` (empty for no words)."""
        if not request.strip() or not catalog.tools:
            return {}
        said = self.encoder.encode([request])[0]
        sentences = {name: declaration_sentences(spec) for name, spec in catalog.tools.items()}
        self._encode_missing([s for own in sentences.values() for s in own])
        return {name: round(float(np.max(self._vectors(own) @ said)), 4)
                for name, own in sentences.items()}

    def _encode_missing(self, sentences: list[str]) -> None:
        """Encode the sentences not kept yet, all at once, and keep them (on disk too)."""
        with self._lock:
            missing = [s for s in dict.fromkeys(sentences) if s not in self._kept]
        if not missing:
            return
        encoded = self.encoder.encode(missing)
        with self._lock:
            for sentence, vector in zip(missing, encoded, strict=True):
                self._kept[sentence] = vector
            while len(self._kept) > _KEPT:
                self._kept.popitem(last=False)
            kept = dict(self._kept)
        if self._file is not None:
            write_vectors(self._file, kept)

    def _vectors(self, sentences: list[str]) -> Vector:
        with self._lock:
            rows = [self._kept.get(s) for s in sentences]
        if any(row is None for row in rows):  # pushed out meanwhile by another thread
            return self.encoder.encode(sentences)
        return np.stack([r for r in rows if r is not None])
