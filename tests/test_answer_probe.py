"""The answer probe: its file, its score, when it may overrule the model, and its training.

The real model's use of the shipped probe is tested in tests/center/test_center_embedded.py.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from jarvis.center.llm.base import LLMRequest
from jarvis.center.llm.embedded.answer_probe import (
    FEATURES,
    PROBES_DIR,
    AnswerProbe,
    AnswerProbeError,
    probe_document,
)
from jarvis.center.llm.model_store import spec_for

N = 4  # a tiny model's state width, for files written here


def _document(**changes: Any) -> dict[str, Any]:
    weights = np.arange(len(FEATURES) * N, dtype=np.float64) / 10
    document = probe_document(weights, -1.0, N, "ab" * 32, {"utterances": 3})
    document.update(changes)
    return document


def _write(tmp_path: Path, document: dict[str, Any], name: str = "probe.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_a_probe_file_round_trips_and_scores_its_three_states(tmp_path: Path) -> None:
    probe = AnswerProbe.load(_write(tmp_path, _document()))
    assert probe.n_embd == N and probe.model_sha256 == "ab" * 32
    states = {"name": np.ones(N), "end": np.zeros(N), "mean": np.full(N, 2.0)}
    # name weights 0..0.3 (sum 0.6), end 0.4..0.7 (times 0), mean 0.8..1.1 (sum 3.8 * 2)
    assert probe.score(states) == pytest.approx(0.6 + 7.6 - 1.0, rel=1e-5)


@pytest.mark.parametrize(("changes", "message"), [
    ({"format": 99}, "format"),
    ({"features": ["end"]}, "features"),
    ({"weights": [0.5, 1.0]}, "expected 12 finite weights"),
    ({"weights": [float("nan")] * 12}, "finite"),
    ({"n_embd": "wide"}, "malformed"),
])
def test_a_malformed_probe_file_is_refused_clearly(
    tmp_path: Path, changes: dict[str, Any], message: str
) -> None:
    with pytest.raises(AnswerProbeError, match=message):
        AnswerProbe.load(_write(tmp_path, _document(**changes)))


def test_an_unreadable_probe_file_is_refused_clearly(tmp_path: Path) -> None:
    path = tmp_path / "probe.json"
    path.write_text("{not json", encoding="utf-8")
    with pytest.raises(AnswerProbeError, match="cannot read the answer probe"):
        AnswerProbe.load(path)
    with pytest.raises(AnswerProbeError, match="cannot read"):
        AnswerProbe.load(tmp_path / "absent.json")


def test_the_probe_of_a_model_is_found_by_its_verified_digest(tmp_path: Path) -> None:
    model = tmp_path / "model.gguf"
    model.write_bytes(b"weights")
    probes = tmp_path / "probes"
    probes.mkdir()
    _write(probes, _document(), name=f"{'cd' * 32}.json")
    assert AnswerProbe.for_model(model, probes) is None  # never verified: no sidecar
    (tmp_path / "model.gguf.sha256").write_text(f"{'cd' * 32} {len(b'weights')}\n")
    assert AnswerProbe.for_model(model, probes) is not None
    model.write_bytes(b"other weights")  # changed since it was verified
    assert AnswerProbe.for_model(model, probes) is None


@pytest.mark.parametrize(("model", "width"), [("0.5b", 896), ("1.5b", 1536)])
def test_each_prepared_model_ships_a_probe_trained_on_foreign_commands(
        model: str, width: int) -> None:
    path = PROBES_DIR / f"{spec_for(model).sha256}.json"
    assert AnswerProbe.load(path).n_embd == width  # the model's hidden size
    trained_on = json.loads(path.read_text())["trained_on"]
    corpora = set(trained_on["corpora"])
    assert corpora and not corpora & {"fresh", "sealed"}  # the measuring sets stay unseen
    # Services of other people's tools, from the split that only trains.
    assert len(trained_on["sgd_train_services"]) >= 20 and trained_on["sgd_nodes"] >= 5


# --- when the probe may overrule the model (no model needed) ---------------------------------

llama_cpp = pytest.importorskip("llama_cpp", reason="the embedded extra is not installed")

from jarvis.center.llm.embedded import EmbeddedBackend  # noqa: E402
from jarvis.center.llm.embedded.options import EmbeddedOptions  # noqa: E402
from jarvis.center.llm.embedded.request_text import first_utterance  # noqa: E402


def _tool(name: str) -> dict[str, Any]:
    return {"type": "function", "function": {"name": name, "description": name,
                                             "parameters": {"type": "object", "properties": {}}}}


def _verdict(score: float, hints: dict[str, float], tools: tuple[str, ...] = (
        "set_timer", "get_weather"), said: str = "x") -> str | None:
    backend = EmbeddedBackend(Path("unused.gguf"), EmbeddedOptions(
        probe_answer_above=1.0, probe_call_below=-2.0))
    backend._probe = AnswerProbe(np.zeros(3 * N, dtype=np.float32), 0.0, N, "test")
    request = LLMRequest(messages=[{"role": "user", "content": said}],
                         tools=[_tool(t) for t in tools], tool_hints=hints)
    return backend._probe_verdict(request, score)


def test_the_probe_decides_only_where_it_is_sure() -> None:
    assert _verdict(3.0, {"set_timer": 1.0}) == "answer"
    assert _verdict(-3.0, {}) == "call"
    assert _verdict(0.0, {"set_timer": 1.0}) is None  # the model's own signals decide


def test_the_probe_judges_any_commands_request_but_not_a_request_with_two_of_its_keywords(
) -> None:
    tools = ("set_timer", "get_weather", "wikipedia")
    # Commands it never saw, one keyword heard or none: trained with many tool sets.
    assert _verdict(3.0, {"wikipedia": 1.0}, tools) == "answer"
    assert _verdict(-3.0, {"wikipedia": 1.0}, tools) == "call"
    assert _verdict(0.5, {}, tools) is None
    # Two keywords its author declared for one command: the model's name choice decides.
    assert _verdict(3.0, {"wikipedia": 2.0}, tools, "look up the moon on wikipedia") is None
    assert _verdict(3.0, {"wikipedia": 1.0, "set_timer": 1.0}, tools) == "answer"
    # A question for information with two of them stays the probe's to answer.
    assert _verdict(3.0, {"wikipedia": 2.0}, tools,
                    "how do people look things up on wikipedia") == "answer"


def test_the_probe_reads_only_a_conversations_first_utterance() -> None:
    def request(*roles: str) -> LLMRequest:
        return LLMRequest(messages=[{"role": r, "content": "x"} for r in roles])

    assert first_utterance(request("system", "user"))
    assert first_utterance(request("system", "system", "user"))
    assert not first_utterance(request("system", "user", "assistant", "user"))  # a follow-up
    assert not first_utterance(request("system", "user", "assistant", "tool"))  # a result


# --- training ---------------------------------------------------------------------------------


def _trainer() -> Any:
    path = Path(__file__).parents[1] / "bench" / "train_answer_probe.py"
    sys.path.insert(0, str(path.parent))
    try:
        spec = importlib.util.spec_from_file_location("train_answer_probe", path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module  # its dataclasses look their module up
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(path.parent))
    return module


def test_training_finds_the_direction_that_separates_the_two_kinds() -> None:
    trainer = _trainer()
    rng = np.random.default_rng(7)
    x = rng.normal(size=(400, 12)) * 3.0 + 5.0
    y = (x[:, 4] - x[:, 9] > 0).astype(float)  # only two of twelve features matter
    weights, bias = trainer.fit(x, y, lam=1.0)
    predicted = (x @ weights + bias) > 0
    assert (predicted == (y == 1)).mean() > 0.97
    assert abs(weights[4]) > 5 * np.abs(np.delete(weights, [4, 9])).max()


def test_the_rule_the_trainer_reports_is_the_backends() -> None:
    trainer = _trainer()
    score = np.array([3.0, 3.0, 0.0, 0.0, -3.0])
    called = np.array([True, False, True, False, False])
    assert trainer.policy(score, called, 1.0, -2.0).tolist() == [False, False, True, False,
                                                                 True]
