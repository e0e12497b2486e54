"""Prompt states on disk: the cache module with real files, then two real processes.

The last test (marked `model`) runs the embedded backend in two fresh processes sharing a
cache folder, and skips (fails when JARVIS_REQUIRE_MODEL=1) without the prepared model.
"""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from jarvis.center.llm.embedded.prompt_state_cache import (
    MAGIC,
    SUFFIX,
    PromptStateCache,
    default_cache_dir,
    model_identity,
    open_cache,
)

CONTEXT = {"model": "sha256:abc", "n_ctx": 4096, "n_batch": 256, "flash_attn": False,
           "llama_cpp": "0.3.0"}
TOKENS = np.arange(300, dtype=np.intc)
STATE = bytes(range(256)) * 64


def _cache(tmp_path: Path, **kwargs: Any) -> PromptStateCache:
    return PromptStateCache(tmp_path / "cache", {**CONTEXT, **kwargs.pop("context", {})},
                            **kwargs)


def _files(cache: PromptStateCache) -> list[str]:
    return sorted(p.name for p in cache.directory.iterdir())


def test_a_saved_state_is_found_again_by_another_instance(tmp_path: Path) -> None:
    path = _cache(tmp_path).save(TOKENS, STATE)
    assert path is not None and path.read_bytes().startswith(MAGIC)
    # A new instance stands for a new process: nothing shared but the folder.
    assert _cache(tmp_path).load(TOKENS.copy()) == STATE
    assert _files(_cache(tmp_path)) == [path.name]  # no temporary file left behind


def test_other_tokens_or_an_empty_folder_are_a_miss(tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    assert cache.load(TOKENS) is None  # the folder does not even exist yet
    cache.save(TOKENS, STATE)
    assert cache.load(TOKENS[:-1]) is None
    longer = np.append(TOKENS, 7).astype(np.intc)
    assert cache.load(longer) is None
    assert cache.load(TOKENS) == STATE


def test_the_key_changes_with_the_model_settings_and_tokens(tmp_path: Path) -> None:
    base = _cache(tmp_path)
    other_model = _cache(tmp_path, context={"model": "sha256:def"})
    other_ctx = _cache(tmp_path, context={"n_ctx": 2048})
    other_lib = _cache(tmp_path, context={"llama_cpp": "0.3.1"})
    changed = TOKENS.copy()
    changed[10] += 1
    paths = {base.path_for(TOKENS), other_model.path_for(TOKENS), other_ctx.path_for(TOKENS),
             other_lib.path_for(TOKENS), base.path_for(changed)}
    assert len(paths) == 5
    base.save(TOKENS, STATE)
    assert other_model.load(TOKENS) is None and other_ctx.load(TOKENS) is None
    assert base.load(TOKENS) == STATE


@pytest.mark.parametrize("damage", ["flip_state", "truncate", "garbage", "empty", "header"])
def test_a_damaged_file_is_a_logged_miss_and_is_deleted(
    tmp_path: Path, damage: str, caplog: pytest.LogCaptureFixture
) -> None:
    cache = _cache(tmp_path)
    path = cache.save(TOKENS, STATE)
    assert path is not None
    data = bytearray(path.read_bytes())
    if damage == "flip_state":
        data[-5] ^= 0xFF
    elif damage == "truncate":
        del data[-100:]
    elif damage == "garbage":
        data = bytearray(b"\x00" * 500)
    elif damage == "empty":
        data = bytearray()
    else:  # a header that is not JSON
        data[len(MAGIC) + 6] = 0xFF
    path.write_bytes(bytes(data))
    with caplog.at_level(logging.INFO, logger="jarvis.center.llm.embedded.prompt_state_cache"):
        assert cache.load(TOKENS) is None
    assert not path.exists()
    assert any("discarding the prompt state" in r.getMessage() for r in caplog.records)
    cache.save(TOKENS, STATE)  # read again, saved again
    assert cache.load(TOKENS) == STATE


def test_a_file_made_for_another_model_under_this_name_is_refused(tmp_path: Path) -> None:
    mine, theirs = _cache(tmp_path), _cache(tmp_path / "x", context={"model": "sha256:def"})
    written = theirs.save(TOKENS, STATE)
    assert written is not None
    mine.directory.mkdir(parents=True)
    mine.path_for(TOKENS).write_bytes(written.read_bytes())  # copied in by hand
    assert mine.load(TOKENS) is None and not mine.path_for(TOKENS).exists()


def test_only_the_most_recently_used_files_are_kept(tmp_path: Path) -> None:
    cache = _cache(tmp_path, max_files=3)
    prefixes = [np.full(20, i, dtype=np.intc) for i in range(5)]
    for age, tokens in enumerate(prefixes[:3]):
        path = cache.save(tokens, STATE)
        assert path is not None
        os.utime(path, (1000 + age, 1000 + age))  # saved in this order, long ago
    assert cache.load(prefixes[0]) == STATE  # used now: the newest
    cache.save(prefixes[3], STATE)
    cache.save(prefixes[4], STATE)
    kept = {i for i, tokens in enumerate(prefixes) if cache.path_for(tokens).exists()}
    assert kept == {0, 3, 4}
    assert len([n for n in _files(cache) if n.endswith(SUFFIX)]) == 3


def test_a_dead_writers_temporary_file_is_cleaned_up(tmp_path: Path) -> None:
    cache = _cache(tmp_path)
    cache.directory.mkdir(parents=True)
    stale = cache.directory / "x.state.123.tmp"
    fresh = cache.directory / "y.state.456.tmp"
    stale.write_bytes(b"half")
    fresh.write_bytes(b"half")
    os.utime(stale, (1000, 1000))
    cache.save(TOKENS, STATE)
    assert not stale.exists() and fresh.exists()  # `fresh` may be another process's write


def test_a_folder_that_cannot_be_written_is_no_error(tmp_path: Path) -> None:
    blocker = tmp_path / "cache"
    blocker.write_text("a file where the folder should be")
    cache = PromptStateCache(blocker, CONTEXT)
    assert cache.save(TOKENS, STATE) is None
    assert cache.load(TOKENS) is None


def test_the_model_is_named_by_its_recorded_digest_else_by_its_file(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"weights")
    by_file = model_identity(model)
    assert by_file.startswith("file:") and str(model.stat().st_size) in by_file
    os.utime(model, (5, 5))
    assert model_identity(model) != by_file  # replaced in place: another key
    (tmp_path / "m.gguf.sha256").write_text(f"{'ab' * 32} {model.stat().st_size}\n")
    assert model_identity(model) == "sha256:" + "ab" * 32


def test_open_cache_follows_the_option(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"weights")
    monkeypatch.setenv("JARVIS_DATA_DIR", str(tmp_path / "data"))
    assert open_cache(None, model, {}) is None
    auto = open_cache("auto", model, {"n_ctx": 512})
    assert auto is not None and auto.directory == default_cache_dir()
    assert auto.directory == tmp_path / "data" / "prompt-cache"
    assert auto.context["n_ctx"] == 512 and auto.context["model"].startswith("file:")
    chosen = open_cache(tmp_path / "mine", model, {})
    assert chosen is not None and chosen.directory == tmp_path / "mine"
    assert open_cache("auto", tmp_path / "absent.gguf", {}) is None  # no model: no cache


# --- two real processes ----------------------------------------------------------------------

# Run by a fresh interpreter: one cold request, as `jarvis ask` makes after starting.
CHILD = """
import json, sys
from jarvis.center.llm.base import LLMRequest
from jarvis.center.llm.embedded import EmbeddedBackend
from jarvis.center.llm.embedded.options import EmbeddedOptions

spec = json.load(sys.stdin)
backend = EmbeddedBackend(spec["model"], EmbeddedOptions(prompt_cache_dir=spec["cache"]))
reply = backend.complete(LLMRequest(messages=spec["messages"], tools=spec["tools"],
                                    allow_direct_answer=False, max_tokens=60, timeout=600.0))
backend.close()
print(json.dumps({"usage": reply.usage,
                  "calls": [[c.name, json.loads(c.arguments)] for c in reply.tool_calls]}))
"""

TIMER = {"type": "function", "function": {
    "name": "set_timer", "description": "Start a countdown timer.",
    "parameters": {"type": "object", "properties": {
        "seconds": {"type": "integer", "description": "Length in seconds"}},
        "required": ["seconds"]}}}
WEATHER = {"type": "function", "function": {
    "name": "get_weather", "description": "Weather forecast for a city.",
    "parameters": {"type": "object", "properties": {
        "location": {"type": "string", "description": "City name"}},
        "required": ["location"]}}}


def _model_path() -> Path:
    from jarvis.center.llm.model_store import ModelStoreError, resolve_model_path

    try:
        return resolve_model_path()
    except ModelStoreError as exc:
        message = f"embedded model not prepared (run `jarvis model prepare`): {exc}"
        if os.environ.get("JARVIS_REQUIRE_MODEL") == "1":
            pytest.fail(message)
        pytest.skip(message)


def _ask_in_a_new_process(spec: dict[str, Any]) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-c", CHILD], input=json.dumps(spec),
                          capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.model
def test_a_second_process_reads_the_prompt_state_from_disk(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp", reason="the embedded extra is not installed")
    spec = {
        "model": str(_model_path()),
        "cache": str(tmp_path / "prompt-cache"),
        "tools": [TIMER, WEATHER],
        "messages": [
            {"role": "system", "content": "You are Jarvis, a voice assistant. Call a tool "
                                          "when one fits; otherwise answer briefly."},
            {"role": "user", "content": "set a timer for 5 minutes"},
        ],
    }
    first = _ask_in_a_new_process(spec)
    assert first["usage"]["prefix_cache"] == "miss"
    assert len(list((tmp_path / "prompt-cache").glob("*.state"))) == 1
    second = _ask_in_a_new_process(spec)
    assert second["usage"]["prefix_cache"] == "disk"
    # Only the user's turn is read; the system turn with the tools came from the file.
    assert second["usage"]["prompt_eval_tokens"] * 4 < first["usage"]["prompt_eval_tokens"]
    assert second["calls"] == first["calls"] and first["calls"][0][0] == "set_timer"
