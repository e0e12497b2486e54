"""What requests and tools mean: a sentence encoder and the relatedness it gives."""

from __future__ import annotations

import functools
import logging
from pathlib import Path
from typing import Literal

from jarvis.center.meaning.kept_vectors import default_vectors_file
from jarvis.center.meaning.model import (
    SENTENCE_ENCODER,
    encoder_folder,
    encoder_ready,
    prepare_encoder,
)
from jarvis.center.meaning.relatedness import Relatedness, declaration_sentences

__all__ = [
    "SENTENCE_ENCODER",
    "Relatedness",
    "declaration_sentences",
    "encoder_folder",
    "encoder_ready",
    "load_relatedness",
    "prepare_encoder",
]

log = logging.getLogger(__name__)


def load_relatedness(mode: Literal["auto", "on", "off"], data_dir: Path | None = None
                     ) -> Relatedness | None:
    """The center's relatedness for a `relatedness` setting: None when "off", or when
    "auto" and the encoder is not prepared (said once in the log); "on" without the
    encoder raises `ModelMissingError` naming the command that prepares it."""
    if mode == "off" or (mode == "auto" and not encoder_ready(data_dir)):
        if mode == "auto":
            log.warning("the sentence encoder is not prepared: commands are matched by their "
                        "words only. `%s` prepares it.", SENTENCE_ENCODER.prepare_command)
        return None
    return _shared(encoder_folder(data_dir), default_vectors_file())


@functools.lru_cache(maxsize=2)
def _shared(folder: Path, kept_in: Path | None) -> Relatedness:
    # One encoder per process: its weights are read once however many centers start.
    return Relatedness.load(folder, kept_in)
