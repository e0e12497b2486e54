"""The embedded backend's settings object: defaults, checks, and how bench scripts fill it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from jarvis.center.llm.embedded.options import EmbeddedOptions


def test_defaults_are_the_measured_ones_and_a_change_makes_a_new_object() -> None:
    options = EmbeddedOptions()
    assert (options.n_ctx, options.prompt_style, options.answer_probe) == (4096, "compact",
                                                                          "auto")
    changed = options.replace(no_tool_bias=2.0)
    assert changed.no_tool_bias == 2.0 and options.no_tool_bias == 1.5
    with pytest.raises(AttributeError):
        options.n_ctx = 512  # type: ignore[misc]  # frozen: shared safely between threads


@pytest.mark.parametrize(("values", "message"), [
    ({"prompt_style": "long"}, "prompt_style must be one of compact, full"),
    ({"tool_format": "yaml"}, "tool_format must be one of json, signatures"),
    ({"first_token_check": "sometimes"}, "first_token_check must be one of"),
    ({"n_ctx": 0}, "n_ctx must be at least 1"),
    ({"no_tool_bais": 1.0}, "unknown embedded backend option.*no_tool_bais"),
])
def test_a_wrong_option_is_refused_with_its_name(values: dict[str, object],
                                                 message: str) -> None:
    with pytest.raises(ValueError, match=message):
        EmbeddedOptions.from_mapping(values)


def test_bench_backend_args_become_options_or_a_clear_exit() -> None:
    sys.path.insert(0, str(Path(__file__).parents[1] / "bench"))
    try:
        from accuracy import backend_args
    finally:
        sys.path.pop(0)
    assert backend_args(["no_tool_bias=2.5", "answer_probe=null"]) == {
        "no_tool_bias": 2.5, "answer_probe": None}
    with pytest.raises(SystemExit, match="unknown embedded backend option"):
        backend_args(["no_such_option=1"])


def test_the_name_choice_leans_to_the_tools_the_request_means() -> None:
    from jarvis.center.llm.embedded.call_writer import name_bias
    from jarvis.center.llm.embedded.spoken_answer import NO_TOOL_SCHEMA

    tools = [{"type": "function", "function": {"name": n, "parameters": {}}}
             for n in ("find_bus", "play_song")]
    options = EmbeddedOptions(relatedness_bias=60.0)
    bias = name_bias(options, [*tools, NO_TOOL_SCHEMA], {}, False,
                     {"find_bus": 0.1, "play_song": 0.5})
    # The most related tool keeps its logit, the other loses 60 x 0.4; `say` is untouched.
    assert bias == pytest.approx([-24.0, 0.0, EmbeddedOptions().no_tool_bias])
    assert name_bias(options, tools, {}, False, None) == [0.0, 0.0]
