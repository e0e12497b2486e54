"""Tool sentences' vectors kept on disk, so a new process does not encode its tools again.

Encoding the sentences of a dozen tools' declarations takes a second or more on two
cores: without this file a one-shot `jarvis ask`, or a restarted center, would pay it
before its first answer. One `.npz` file (`sentences`, `vectors`; no pickled objects) per
encoder, in `<data dir>/sentence-vectors/`, named by the encoder's pinned digests, so
another encoder never reads them. It is rewritten (to a temporary name, then renamed)
when new sentences were encoded. A file that cannot be read is a miss: logged, deleted,
and the sentences are encoded again. Deleting the folder is always safe.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import tempfile
import zipfile
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from jarvis.center.meaning.encoder import Vector
from jarvis.center.meaning.model import SENTENCE_ENCODER
from jarvis.paths import data_dir

__all__ = ["default_vectors_file", "read_vectors", "write_vectors"]

log = logging.getLogger(__name__)

_FORMAT = "1"


def default_vectors_file() -> Path | None:
    """`<data dir>/sentence-vectors/<encoder>.npz`; None when the data directory cannot
    be made (the vectors are then kept in memory only)."""
    identity = hashlib.sha256("\n".join(
        [_FORMAT, *(f.sha256 for f in SENTENCE_ENCODER.files)]).encode()).hexdigest()[:16]
    try:
        return data_dir() / "sentence-vectors" / f"{SENTENCE_ENCODER.name}-{identity}.npz"
    except OSError as exc:
        log.info("tool sentence vectors will not be kept on disk: %s", exc)
        return None


def read_vectors(path: Path, dimension: int) -> dict[str, Vector]:
    """Sentence -> unit vector, as kept in `path` (empty when there is no usable file)."""
    if not path.is_file():
        return {}
    try:
        with np.load(path, allow_pickle=False) as found:
            sentences, vectors = found["sentences"], found["vectors"]
        if vectors.dtype != np.float32 or vectors.shape != (len(sentences), dimension):
            raise ValueError(f"vectors of shape {vectors.shape}, not (n, {dimension}) floats")
        return {str(s): v for s, v in zip(sentences, vectors, strict=True)}
    except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile) as exc:
        log.info("discarding the tool sentence vectors %s: %s", path.name, exc)
        with contextlib.suppress(OSError):
            path.unlink()
        return {}


def write_vectors(path: Path, kept: Mapping[str, Vector]) -> None:
    """Keep `kept` in `path`; a failure to write is logged, never raised (it only costs
    the next process the encoding)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # A unique temporary name: two processes each rename a complete file.
        fd, tmp = tempfile.mkstemp(prefix=path.stem + ".", suffix=".npz", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez(fh, sentences=np.array(list(kept), dtype=str),
                         vectors=np.stack(list(kept.values())).astype(np.float32))
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except (OSError, ValueError) as exc:
        log.info("could not keep the tool sentence vectors in %s: %s", path, exc)
