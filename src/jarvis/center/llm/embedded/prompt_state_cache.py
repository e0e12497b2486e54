"""Read prompt prefixes kept on disk, so a new process does not read them again.

The embedded backend saves the KV state of sequence 0 after a prompt prefix (the system
turn with the tools) as bytes (`llama_state_seq_get_data`) and keeps a few in memory. On
a 2-core machine reading a ~2,800-token prefix takes 15-30 s, which every fresh process
(`jarvis ask`, a restarted `jarvis serve`) paid before its first answer. This module keeps
those same bytes in `<data dir>/prompt-cache/`, one file per prefix:

    MAGIC | header length (4 bytes, little-endian) | header (JSON) | tokens (int32 LE) | state

The header records what the state depends on (the model file, the context settings, the
llama-cpp-python version: `context`), the sizes and a CRC-32 of tokens + state. A file
whose header, sizes or checksum disagree is a miss: it is logged, deleted and read again.
The file name is a hash of the context and the tokens, so a new model, other settings or
another tool set simply never find the old files; only the `max_files` most recently used
are kept.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import struct
import tempfile
import time
import zlib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from jarvis.center.llm.model_store import recorded_sha256
from jarvis.paths import data_dir

__all__ = ["AUTO", "PromptStateCache", "default_cache_dir", "model_identity", "open_cache"]

log = logging.getLogger(__name__)

AUTO = "auto"
MAGIC = b"JARVIS-PROMPT-STATE\n"
FORMAT = 1
SUFFIX = ".state"
DEFAULT_MAX_FILES = 8
# A temporary file this old was left by a writer that died; a live one takes well under
# a second to write.
_STALE_TMP_S = 3600.0
_LENGTH = struct.Struct("<I")


class CorruptStateError(ValueError):
    """A state file that cannot be this cache's entry for the asked tokens."""


def default_cache_dir() -> Path:
    """`<data dir>/prompt-cache` (`JARVIS_DATA_DIR`, else ~/.local/share/jarvis)."""
    return data_dir() / "prompt-cache"


def model_identity(path: Path) -> str:
    """What names the model's weights: the SHA-256 its verified sidecar records, else the
    file's resolved path, size and modification time (hashing 0.5-1 GB at every start
    would cost more than the cache saves)."""
    digest = recorded_sha256(path)
    if digest is not None:
        return f"sha256:{digest}"
    stat = path.stat()
    return f"file:{path.resolve()}:{stat.st_size}:{stat.st_mtime_ns}"


def _tokens_bytes(tokens: npt.ArrayLike) -> bytes:
    return np.ascontiguousarray(tokens, dtype="<i4").tobytes()


class PromptStateCache:
    """Saved prompt states in one folder, for one model and context (`context`).

    Args:
        directory: the folder (created on first save).
        context: everything a state depends on besides its tokens: model identity,
            context settings, library version. JSON-serialisable; it is part of the key
            and checked again in each file's header.
        max_files: how many states are kept (the most recently used).
    """

    def __init__(self, directory: Path, context: Mapping[str, Any], *,
                 max_files: int = DEFAULT_MAX_FILES) -> None:
        self.directory = Path(directory)
        self.max_files = max(1, max_files)
        # The JSON round trip makes the comparison with a header's copy exact (tuples
        # become lists, keys strings).
        self.context: dict[str, Any] = json.loads(json.dumps(dict(context), sort_keys=True))
        self._context_key = json.dumps(self.context, sort_keys=True).encode("utf-8")

    # --- public ---------------------------------------------------------------------------
    def path_for(self, tokens: npt.ArrayLike) -> Path:
        """The file that holds (or would hold) the state after `tokens`."""
        digest = hashlib.sha256(self._context_key + b"\0" + _tokens_bytes(tokens))
        return self.directory / (digest.hexdigest() + SUFFIX)

    def load(self, tokens: npt.ArrayLike) -> bytes | None:
        """The saved state after exactly `tokens`, or None (absent, or unusable: deleted)."""
        path = self.path_for(tokens)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as exc:
            log.info("cannot read the prompt state %s (%s); reading the prompt instead",
                     path, exc)
            return None
        try:
            state = self._parse(data, _tokens_bytes(tokens))
        except CorruptStateError as exc:
            self._drop(path, str(exc))
            return None
        with contextlib.suppress(OSError):  # recency for `max_files`; a race is harmless
            os.utime(path)
        return state

    def save(self, tokens: npt.ArrayLike, state: bytes) -> Path | None:
        """Write the state atomically (never half a file under the final name), then keep
        only the `max_files` newest. Failures are logged, never raised: it is a cache."""
        path = self.path_for(tokens)
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._write(path, self._encode(_tokens_bytes(tokens), state))
        except OSError as exc:
            log.info("cannot save the prompt state to %s: %s", self.directory, exc)
            return None
        self.prune()
        return path

    def discard(self, tokens: npt.ArrayLike, reason: str) -> None:
        """Delete the file of `tokens`: llama.cpp refused its state (`reason`)."""
        self._drop(self.path_for(tokens), reason)

    def prune(self) -> None:
        """Keep the `max_files` most recently used states; remove dead writers' leftovers."""
        try:
            entries = list(os.scandir(self.directory))
        except OSError:
            return
        states: list[tuple[float, str]] = []
        now = time.time()
        for entry in entries:
            try:
                mtime = entry.stat().st_mtime
            except OSError:  # removed meanwhile by another process
                continue
            if entry.name.endswith(SUFFIX):
                states.append((mtime, entry.path))
            elif entry.name.endswith(".tmp") and now - mtime > _STALE_TMP_S:
                self._remove(Path(entry.path))
        states.sort(reverse=True)
        for _, old in states[self.max_files:]:
            self._remove(Path(old))

    # --- file format ----------------------------------------------------------------------
    def _encode(self, tokens: bytes, state: bytes) -> bytes:
        header = json.dumps({
            "format": FORMAT,
            "context": self.context,
            "n_tokens": len(tokens) // 4,
            "state_bytes": len(state),
            "crc32": zlib.crc32(state, zlib.crc32(tokens)),
        }, sort_keys=True).encode("utf-8")
        return b"".join((MAGIC, _LENGTH.pack(len(header)), header, tokens, state))

    def _parse(self, data: bytes, tokens: bytes) -> bytes:
        """The state in `data`, checked against this cache's context and `tokens`."""
        if not data.startswith(MAGIC) or len(data) < len(MAGIC) + _LENGTH.size:
            raise CorruptStateError("not a prompt state file")
        start = len(MAGIC) + _LENGTH.size
        (header_len,) = _LENGTH.unpack_from(data, len(MAGIC))
        try:
            header = json.loads(data[start:start + header_len])
        except ValueError as exc:  # also UnicodeDecodeError
            raise CorruptStateError(f"unreadable header ({exc})") from None
        if not isinstance(header, dict) or header.get("format") != FORMAT:
            raise CorruptStateError("another file format")
        if header.get("context") != self.context:
            # The name hashes the context, so only a collision or a copied file gets here.
            raise CorruptStateError("made for another model or settings")
        body = memoryview(data)[start + header_len:]
        n_state = header.get("state_bytes")
        if (not isinstance(n_state, int) or header.get("n_tokens") != len(tokens) // 4
                or len(body) != len(tokens) + n_state):
            raise CorruptStateError("truncated, or for other tokens")
        if body[:len(tokens)] != tokens:
            raise CorruptStateError("made for other tokens")
        if zlib.crc32(body[len(tokens):], zlib.crc32(tokens)) != header.get("crc32"):
            raise CorruptStateError("checksum mismatch")
        return bytes(body[len(tokens):])

    # --- files ----------------------------------------------------------------------------
    @staticmethod
    def _write(path: Path, data: bytes) -> None:
        # A unique temporary name beside the target: two processes saving the same prefix
        # each rename a complete file, and a reader never sees a partial one.
        fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def _drop(self, path: Path, reason: str) -> None:
        log.info("discarding the prompt state %s: %s", path.name, reason)
        self._remove(path)

    @staticmethod
    def _remove(path: Path) -> None:
        with contextlib.suppress(OSError):
            path.unlink()


def open_cache(setting: str | Path | None, model_path: Path, settings: Mapping[str, Any], *,
               max_files: int = DEFAULT_MAX_FILES) -> PromptStateCache | None:
    """The cache a backend option names ("auto" for `default_cache_dir()`, a folder, or
    None: off) for the model at `model_path` and the context `settings` the state depends
    on. A data directory or model file that cannot be read turns it off, with a log line."""
    if setting is None:
        return None
    try:
        directory = default_cache_dir() if setting == AUTO else Path(setting).expanduser()
        context = {"format": FORMAT, "model": model_identity(model_path), **settings}
    except OSError as exc:
        log.info("prompt states will not be kept on disk: %s", exc)
        return None
    return PromptStateCache(directory, context, max_files=max_files)
