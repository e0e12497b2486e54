"""The embedded backend: grammar and decoder pieces alone, then the real model.

Tests marked `model` load the prepared Qwen2.5-Coder-0.5B once per module and skip
(fail when JARVIS_REQUIRE_MODEL=1), saying so, when it has not been prepared.
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import Any

import pytest

from jarvis.center.llm.base import (
    LLMBackend,
    LLMRequest,
    LLMTimeoutError,
    LLMUnavailableError,
)
from jarvis.center.llm.embedded.grammar import gbnf_literal, tool_call_grammar, value_grammar
from jarvis.center.llm.embedded.prompt import ChatPrompt, normalize_messages

llama_cpp = pytest.importorskip("llama_cpp", reason="the embedded extra is not installed")

from jarvis.center.llm.embedded import EmbeddedBackend  # noqa: E402
from jarvis.center.llm.embedded.json_text import json_value_end  # noqa: E402
from jarvis.center.llm.embedded.options import EmbeddedOptions  # noqa: E402
from jarvis.center.llm.embedded.request_text import not_to_copy  # noqa: E402
from jarvis.center.llm.embedded.spoken_answer import (  # noqa: E402
    CANNOT_HELP,
    looks_like_a_call,
    speakable,
    whole_sentences,
    with_no_tool,
)

DATETIME = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "Weather forecast for a city on some dates.",
        "parameters": {
            "type": "object",
            "properties": {
                "location": {"type": "string", "description": "City name"},
                "dates": {
                    "type": "array",
                    "items": {"type": "string", "format": "date-time"},
                    "description": "Days to forecast, ISO-8601 with timezone",
                },
            },
            "required": ["location"],
        },
    },
}
CALCULATOR = {
    "type": "function",
    "function": {
        "name": "calculate",
        "description": "Arithmetic on two numbers.",
        "parameters": {
            "type": "object",
            "properties": {
                "operation": {
                    "type": "string",
                    "enum": ["add", "subtract", "multiply", "divide"],
                },
                "a": {"type": "number"},
                "b": {"type": "number"},
            },
            "required": ["operation", "a", "b"],
        },
    },
}
TIMER = {
    "type": "function",
    "function": {
        "name": "set_timer",
        "description": "Start a countdown timer.",
        "parameters": {
            "type": "object",
            "properties": {"seconds": {"type": "integer", "description": "Length in seconds"}},
            "required": ["seconds"],
        },
    },
}
TOOLS = [WEATHER, CALCULATOR, TIMER]
SYSTEM = (
    "You are Jarvis, a voice assistant. Call a tool when one fits; otherwise answer briefly.\n"
    "Now: 2025-06-12T10:00:00+02:00. Tomorrow: 2025-06-13T00:00:00+02:00."
)


def _request(text: str, **kwargs: Any) -> LLMRequest:
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}]
    # A generous timeout: these tests check outputs, not speed, and CI machines may be busy.
    options = {"tools": TOOLS, "max_tokens": 120, "timeout": 600.0, **kwargs}
    return LLMRequest(messages=messages, **options)


# --- without the model -----------------------------------------------------------------------


def test_grammar_mentions_every_tool_and_enum() -> None:
    gbnf = tool_call_grammar(TOOLS)
    assert gbnf.startswith("root ::= ")
    for expected in ("get_weather", "calculate", "set_timer", '\\"multiply\\"', "f-datetime"):
        assert expected in gbnf


def test_gbnf_literal_escapes() -> None:
    assert gbnf_literal('a"b\\c\n') == '"a\\"b\\\\c\\n"'


def test_value_grammar_for_response_schema() -> None:
    gbnf = value_grammar({"type": "object", "properties": {"ok": {"type": "boolean"}}})
    assert '"\\"ok\\": "' in gbnf


def test_a_call_written_as_text_is_recognised() -> None:
    assert looks_like_a_call('play {"action": "play"}')
    assert looks_like_a_call("turn off the kitchen light {}")
    assert not looks_like_a_call("Good evening! What can I do for you?")


def test_a_call_written_as_text_is_never_spoken() -> None:
    assert speakable('square_root {"value": 9}') == CANNOT_HELP
    assert speakable('"tell_joke"') == CANNOT_HELP
    assert speakable("Leonardo da Vinci painted it.") == "Leonardo da Vinci painted it."


def test_no_answer_to_speak_becomes_cant_help() -> None:
    said = "call my sister"
    assert speakable("call my sister", said) == CANNOT_HELP  # the request said back
    assert speakable("Book me a flight to Rome.", "book me a flight to rome") == CANNOT_HELP
    assert speakable("I'm hungry, I would like to eat.", "Im hungry I would like to eat"
                      ) == CANNOT_HELP  # with or without its apostrophe
    assert speakable("1", "how many legs does a spider have") == CANNOT_HELP  # a bare number
    context = "Today is Wednesday 2026-01-14 (timezone America/New_York)."
    assert speakable(context, "um", [context]) == CANNOT_HELP
    # A copied sentence goes, the rest of the answer stays.
    assert speakable(context + " It was lovely.", "the weather was lovely yesterday",
                      [context]) == "It was lovely."
    # An example request of the prompt sounds done when nothing was.
    assert speakable("Set a timer for 5 minutes.", "set a",
                      ["set a timer for 5 minutes"]) == CANNOT_HELP
    # Short replies in the user's words, and real answers, stay.
    assert speakable("Good night!", "good night") == "Good night!"
    assert speakable("Okay.", "okay") == "Okay."
    # ... but a word or two of a request said back is no answer to it.
    assert speakable("doctor", "Hi, I need to find a doctor.") == CANNOT_HELP
    assert speakable("Find apartment", "Can you find me an apartment?") == CANNOT_HELP
    assert speakable("Hello!", "can you say hello") == "Hello!"
    assert speakable("Paris is the capital of France.", "what is the capital of france",
                      [context]) == "Paris is the capital of France."


def test_what_an_answer_must_not_copy_comes_from_the_prompt() -> None:
    prompt = ('You are Jarvis.\n\nExamples:\n"set a timer for 5 minutes" -> set_timer '
              '{"duration": "PT5M"}\n"good evening" -> say: Good evening!')
    request = LLMRequest(messages=[
        {"role": "system", "content": prompt},
        {"role": "system", "content": "Today is Wednesday 2026-01-14."},
        {"role": "user", "content": "um"}])
    assert not_to_copy(request) == ["set a timer for 5 minutes",
                                     "Today is Wednesday 2026-01-14."]


@pytest.mark.parametrize(
    ("buf", "end"),
    [
        (b'"Par', None),
        (b'"Paris"}', 7),
        (b'"a\\"b",', 6),
        (b"12", None),
        (b"12,", 2),
        (b'["2025", "x"]}}', 13),
        (b'{"a": [1, {"b": "}"}]}', 22),
        (b"true}", 4),
    ],
)
def test_json_value_end(buf: bytes, end: int | None) -> None:
    assert json_value_end(buf) == end


def test_messages_are_normalised_for_the_template() -> None:
    messages = normalize_messages(
        [
            {"role": "user", "content": "hi <|im_end|> there"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c1",
                        "type": "function",
                        "function": {"name": "x", "arguments": '{"a": 1}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "c1", "content": {"ok": True}},
        ]
    )
    assert messages[0]["content"] == "hi  there"
    assert messages[1]["tool_calls"][0]["function"]["arguments"] == {"a": 1}
    assert messages[2]["content"] == '{"ok": true}'


def test_fallback_template_renders_tools_and_calls() -> None:
    from jarvis.center.llm.embedded.prompt import FALLBACK_TEMPLATE

    prompt = ChatPrompt(FALLBACK_TEMPLATE)
    text = prompt.render(
        [
            {"role": "system", "content": "S"},
            {"role": "user", "content": "U"},
            {
                "role": "assistant",
                "tool_calls": [{"function": {"name": "set_timer", "arguments": '{"seconds": 5}'}}],
            },
            {"role": "tool", "content": "done"},
        ],
        [TIMER],
        add_generation_prompt=True,
    )
    assert text.startswith("<|im_start|>system\nS\n\n# Tools")
    assert '"name": "set_timer"' in text and "<tool_response>\ndone\n</tool_response>" in text
    assert text.endswith("<|im_start|>assistant\n")


def test_missing_model_is_a_clear_unavailable_error(tmp_path: Path) -> None:
    backend = EmbeddedBackend(tmp_path / "absent.gguf")
    with pytest.raises(LLMUnavailableError, match="jarvis model prepare"):
        backend.complete(_request("hello"))


def test_corrupt_model_is_a_clear_unavailable_error(tmp_path: Path) -> None:
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"not a gguf at all")
    with pytest.raises(LLMUnavailableError, match="could not load the model"):
        EmbeddedBackend(bad).load()


# --- with the real model ---------------------------------------------------------------------


def _model_path() -> Path:
    from jarvis.center.llm.model_store import ModelStoreError, resolve_model_path

    try:
        return resolve_model_path()
    except ModelStoreError as exc:
        message = f"embedded model not prepared (run `jarvis model prepare`): {exc}"
        if os.environ.get("JARVIS_REQUIRE_MODEL") == "1":
            pytest.fail(message)
        pytest.skip(message)


@pytest.fixture(scope="module")
def backend() -> Any:
    instance = EmbeddedBackend(_model_path())
    instance.load()
    yield instance
    instance.close()


def _model(backend: EmbeddedBackend) -> Any:
    """The backend's loaded model (its vocabulary, prompt layout and tokens)."""
    backend.load()
    return backend._loaded


def _request_tokens(backend: EmbeddedBackend, messages: list[dict[str, Any]],
                    tools: list[dict[str, Any]]) -> Any:
    """The prompt's tokens and its stable prefix's, as the backend reads a request."""
    layout = _model(backend).layout
    return backend._on_model_thread(layout.request_tokens, messages, tools)


def _check_arguments(name: str, arguments: dict[str, Any]) -> None:
    """The call matches the schema exactly (the grammar's promise)."""
    tool = next(t for t in TOOLS if t["function"]["name"] == name)
    params = tool["function"]["parameters"]
    assert set(params["required"]) <= set(arguments) <= set(params["properties"])
    if name == "get_weather":
        assert isinstance(arguments["location"], str)
        for value in arguments.get("dates", []):
            assert DATETIME.match(value), value
    elif name == "calculate":
        assert arguments["operation"] in {"add", "subtract", "multiply", "divide"}
        assert all(isinstance(arguments[k], int | float) for k in ("a", "b"))
        assert not any(isinstance(arguments[k], bool) for k in ("a", "b"))
    else:
        assert isinstance(arguments["seconds"], int) and not isinstance(arguments["seconds"], bool)


FUZZ = [
    "What's the weather in Paris tomorrow?",
    "will it rain in berlin",
    "weather for Tokyo today and tomorrow",
    "How hot will it be in Madrid on the 13th?",
    "forecast oslo",
    "What is 12 times 7?",
    "divide 100 by 4",
    "add three and four",
    "what's 2.5 minus 0.75",
    "multiply nineteen by twenty",
    "Set a timer for 5 minutes",
    "timer 90 seconds",
    "wake me in half an hour",
    "start a countdown of 2 minutes for the pasta",
    "set a 30 second timer",
    "uh, weather? London, I guess",
    "calculate 1e3 divided by 8",
    "ten minute timer please",
    "is it sunny in Rome",
    "'; DROP TABLE tools; -- what's 5 + 5",
]


@pytest.mark.model
def test_every_reply_is_a_valid_call(backend: EmbeddedBackend) -> None:
    # Warm what these requests read: no direct answer, so no `no_tool` pseudo tool.
    backend.warm([{"role": "system", "content": SYSTEM}], TOOLS, allow_direct_answer=False)
    for text in FUZZ:
        reply = backend.complete(_request(text, allow_direct_answer=False))
        assert len(reply.tool_calls) == 1, (text, reply)
        call = reply.tool_calls[0]
        assert call.id.startswith("call_")
        arguments = json.loads(call.arguments)
        _check_arguments(call.name, arguments)
        assert reply.usage["prefix_cache"] in {"live", "lru"}


@pytest.mark.model
def test_obvious_calls_pick_the_right_tool_and_enum(backend: EmbeddedBackend) -> None:
    reply = backend.complete(_request("What is 6 times 7?", allow_direct_answer=False))
    assert reply.tool_calls[0].name == "calculate"
    assert json.loads(reply.tool_calls[0].arguments)["operation"] == "multiply"
    reply = backend.complete(_request("What's the weather in Paris tomorrow?"))
    call = reply.tool_calls[0]
    assert call.name == "get_weather"
    assert json.loads(call.arguments)["location"] == "Paris"


@pytest.mark.model
def test_small_talk_gets_a_direct_answer(backend: EmbeddedBackend) -> None:
    reply = backend.complete(_request("Hello, how are you?", max_tokens=40))
    assert reply.tool_calls == []
    assert reply.content and reply.content.strip()


def test_a_cut_answer_ends_at_its_last_sentence_end() -> None:
    assert whole_sentences("Rome was founded in 753 BC. It grew into an emp") == (
        "Rome was founded in 753 BC.")
    assert whole_sentences('He said "go!" and left. Then') == 'He said "go!" and left.'
    assert whole_sentences("Pi is 3.14159 and then some") == "Pi is 3.14159 and then some"
    assert whole_sentences("no sentence end at all ") == "no sentence end at all"


@pytest.mark.model
def test_a_spoken_answer_is_kept_short(backend: EmbeddedBackend,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(backend, "options", backend.options.replace(answer_max_tokens=12))
    reply = backend.complete(_request("Tell me everything about the history of the "
                                      "Roman empire, in great detail.", max_tokens=300))
    assert reply.tool_calls == []
    assert reply.content and reply.content.strip()
    # 12 tokens at most; cut back to a sentence end when one was reached.
    assert reply.usage["completion_tokens"] <= 12
    assert len(reply.content.split()) <= 12


def _timer_set(result: str) -> list[dict[str, Any]]:
    """A conversation whose timer call came back with `result`: the answer is words."""
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "Set a timer for 5 minutes"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "call_1",
                    "type": "function",
                    "function": {"name": "set_timer", "arguments": '{"seconds": 300}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "call_1", "content": result},
    ]


@pytest.mark.model
def test_tools_disabled_gives_free_text(backend: EmbeddedBackend) -> None:
    reply = backend.complete(
        LLMRequest(messages=_timer_set('{"ok": true}'), tools=TOOLS, tools_disabled=True,
                   max_tokens=30)
    )
    assert reply.tool_calls == [] and reply.content


@pytest.mark.model
def test_text_is_streamed_as_it_is_written(backend: EmbeddedBackend) -> None:
    pieces: list[str] = []
    result = '{"ok": true, "ends_at": "10:05", "label": "tea"}'
    reply = backend.stream(LLMRequest(messages=_timer_set(result), tools=TOOLS,
                                      tools_disabled=True, max_tokens=40), pieces.append)
    assert reply.content and "".join(pieces) == reply.content
    assert len([p for p in pieces if p]) > 1  # token by token, not whole at the end
    # An answer in place of a call may still be rewritten: it is never handed on early.
    pieces.clear()
    hello = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "hello"}]
    backend.stream(LLMRequest(messages=hello, tools=TOOLS, max_tokens=20), pieces.append)
    assert pieces == []


@pytest.mark.model
def test_response_schema_is_enforced(backend: EmbeddedBackend) -> None:
    schema = {
        "type": "object",
        "properties": {"mood": {"type": "string", "enum": ["happy", "sad"]}},
        "required": ["mood"],
    }
    reply = backend.complete(
        LLMRequest(
            messages=[{"role": "user", "content": "I won the lottery! How do I feel?"}],
            response_schema=schema,
            max_tokens=20,
        )
    )
    assert json.loads(reply.content or "")["mood"] in {"happy", "sad"}


@pytest.mark.model
def test_two_tool_sets_keep_their_prefix(backend: EmbeddedBackend) -> None:
    other = [{"role": "system", "content": "You control the lights."}]
    lights = {
        "type": "function",
        "function": {
            "name": "lights",
            "parameters": {
                "type": "object",
                "properties": {"on": {"type": "boolean"}},
                "required": ["on"],
            },
        },
    }
    backend.warm(other, [lights])
    reply = backend.complete(
        LLMRequest(messages=[*other, {"role": "user", "content": "lights off"}], tools=[lights])
    )
    assert reply.tool_calls and json.loads(reply.tool_calls[0].arguments)["on"] in {True, False}
    reply = backend.complete(_request("set a timer for 10 seconds", allow_direct_answer=False))
    assert reply.usage["prefix_cache"] == "lru"  # restored, not re-read
    assert reply.usage["prompt_eval_tokens"] < 40


@pytest.mark.model
def test_timeout_is_reported(backend: EmbeddedBackend) -> None:
    with pytest.raises(LLMTimeoutError):
        backend.complete(_request("Tell me a long story", timeout=0.0))


@pytest.mark.model
def test_concurrent_requests_are_serialised(backend: EmbeddedBackend) -> None:
    assert isinstance(backend, LLMBackend)
    results: list[Any] = []

    def ask(text: str) -> None:
        results.append(backend.complete(_request(text, allow_direct_answer=False)))

    threads = [threading.Thread(target=ask, args=(t,)) for t in ("timer 10 seconds", "2 plus 2")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 2 and all(len(r.tool_calls) == 1 for r in results)


@pytest.mark.model
def test_the_model_runs_on_one_thread_whoever_calls(
    backend: EmbeddedBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    # llama.cpp's compute threads belong to the calling thread: one caller thread keeps
    # them warm (docs/embedded-llm.md, "One model thread").
    ran_on: list[int] = []
    original = backend._complete

    def recording(*args: Any) -> Any:
        ran_on.append(threading.get_ident())
        return original(*args)

    monkeypatch.setattr(backend, "_complete", recording)
    backend.complete(_request("2 plus 2", allow_direct_answer=False))
    worker = threading.Thread(
        target=backend.complete, args=(_request("3 plus 3", allow_direct_answer=False),))
    worker.start()
    worker.join()
    assert len(ran_on) == 2 and ran_on[0] == ran_on[1]
    assert ran_on[0] not in (threading.get_ident(), worker.ident)


REQUIRED_NUMBERS = [CALCULATOR, TIMER]  # every tool needs a number the user must say


@pytest.mark.model
def test_a_tool_the_user_named_keeps_its_call(
    backend: EmbeddedBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(backend, "options", backend.options.replace(first_token_check="never"))
    heard = {"calculate": 0.0, "set_timer": 1.0}
    reply = backend.complete(_request("start the timer", tools=REQUIRED_NUMBERS,
                                      tool_hints=heard))
    assert [c.name for c in reply.tool_calls] == ["set_timer"]


@pytest.mark.model
def test_warming_the_live_prefix_evaluates_nothing(backend: EmbeddedBackend) -> None:
    system = [{"role": "system", "content": SYSTEM}]
    backend.warm(system, TOOLS, allow_direct_answer=False)
    backend.complete(_request("set a timer for 10 seconds", allow_direct_answer=False))
    info = backend.warm(system, TOOLS, allow_direct_answer=False)
    assert info["evaluated_tokens"] == 0 and info["prefix_cache"] == "live"
    reply = backend.complete(_request("set a timer for 20 seconds", allow_direct_answer=False))
    # What followed the prefix (the user turn's opening, "set a timer for") was kept.
    assert reply.usage["prefix_cache"] == "live"
    assert reply.usage["cached_tokens"] > info["reused_tokens"]
    assert json.loads(reply.tool_calls[0].arguments)["seconds"] == 20


CONVERT_UNITS = {"type": "function", "function": {
    "name": "convert_measurement", "description": "Convert a measurement between units.",
    "parameters": {"type": "object", "properties": {
        "value": {"type": "number"},
        "from_unit": {"type": "string", "description": "The unit of the value, e.g. kilometers"},
        "to_unit": {"type": "string"}},
        "required": ["value", "from_unit", "to_unit"]}}}
CONVERT_EXAMPLE = ('You are Jarvis. Example: "how many miles is 10 kilometers" -> '
                   'convert_measurement {"value": 10, "from_unit": "kilometers", '
                   '"to_unit": "miles"}')


@pytest.mark.model
def test_a_unit_said_in_other_words_stays_the_users(backend: EmbeddedBackend) -> None:
    # The example pulls the 0.5B model to "kilometers" for "kilos": a copy of the example
    # is asked again, and the user's word (one kilo or several) wins either way.
    request = LLMRequest(messages=[{"role": "system", "content": CONVERT_EXAMPLE},
                                  {"role": "user", "content": "what is 68 kilos in pounds"}],
                         tools=[CONVERT_UNITS], max_tokens=80, timeout=600.0,
                         allow_direct_answer=False)
    [call] = backend.complete(request).tool_calls
    arguments = json.loads(call.arguments)
    assert arguments.pop("from_unit") in {"kilos", "kilo"}
    assert arguments == {"value": 68, "to_unit": "pounds"}


@pytest.mark.model
def test_the_prepared_model_reads_its_answer_probe(backend: EmbeddedBackend) -> None:
    assert backend.answer_probe is not None
    reply = backend.complete(_request("why is the sky blue", max_tokens=40))
    assert reply.usage["answer_probe"] > backend.options.probe_answer_above
    assert reply.usage["probe_verdict"] == "answer" and reply.tool_calls == []
    reply = backend.complete(_request("set a timer for 25 minutes"))
    assert reply.usage["answer_probe"] < 0 and reply.tool_calls[0].name == "set_timer"
    # Without a spoken answer to choose, there is nothing for the probe to decide.
    reply = backend.complete(_request("set a timer for 25 minutes", allow_direct_answer=False))
    assert "answer_probe" not in reply.usage


@pytest.mark.model
def test_the_answer_probe_can_be_turned_off_and_must_fit_the_model(tmp_path: Path) -> None:
    off = EmbeddedBackend(_model_path(), EmbeddedOptions(answer_probe=None))
    try:
        reply = off.complete(_request("why is the sky blue", max_tokens=40))
        assert off.answer_probe is None and "answer_probe" not in reply.usage
    finally:
        off.close()
    narrow = tmp_path / "narrow.json"
    narrow.write_text(json.dumps({"format": 2, "features": ["name", "end", "mean"],
                                  "n_embd": 4, "bias": 0.0, "weights": [0.0] * 12}))
    with pytest.raises(LLMUnavailableError, match="4-wide states"):
        EmbeddedBackend(_model_path(), EmbeddedOptions(answer_probe=narrow)).load()


COPY_EXAMPLES = (
    'You are Jarvis. Examples: "remind me to take out the trash" -> reminder '
    '{"text": "take out the trash"}\n"add milk and eggs to my shopping list" -> '
    'shopping_list {"items": ["milk", "eggs"]}')
REMINDER = {"type": "function", "function": {
    "name": "reminder", "description": "Set a reminder.",
    "parameters": {"type": "object", "properties": {
        "text": {"type": "string", "description": "What to remind about"}},
        "required": ["text"]}}}
SHOPPING = {"type": "function", "function": {
    "name": "shopping_list", "description": "Add items to the shopping list.",
    "parameters": {"type": "object", "properties": {
        "items": {"type": "array", "items": {"type": "string"}}}, "required": ["items"]}}}


def _said(text: str, system: str = COPY_EXAMPLES, tools: list[dict[str, Any]] | None = None,
          **kwargs: Any) -> LLMRequest:
    options = {"max_tokens": 80, "timeout": 600.0, "allow_direct_answer": False, **kwargs}
    return LLMRequest(messages=[{"role": "system", "content": system},
                                {"role": "user", "content": text}],
                      tools=tools or [REMINDER, SHOPPING], **options)


@pytest.mark.model
def test_a_value_copied_from_a_prompt_example_is_asked_again(backend: EmbeddedBackend) -> None:
    refused = 0
    for text in ("we need bread", "add eggs, cheese and orange juice to my shopping list",
                 "remind me about the car"):
        reply = backend.complete(_said(text))
        arguments = json.loads(reply.tool_calls[0].arguments)
        values = [*arguments.get("items", []), arguments.get("text")]
        # Whatever the model reached for first, no example value stands in for the user's.
        assert not {"take out the trash", "milk"} & set(values), (text, arguments)
        refused += reply.usage.get("copies_refused", 0)
    assert refused >= 1  # "we need bread" is first written "take out the trash"


def _call_meaning(reply: Any) -> tuple[str, dict[str, Any]]:
    """A reply's first call, its text values without a closing full stop."""
    call = reply.tool_calls[0]
    arguments = json.loads(call.arguments)
    return call.name, {k: v.rstrip(".") if isinstance(v, str) else v
                       for k, v in arguments.items()}


@pytest.mark.model
def test_drafting_changes_the_speed_never_the_call(
    backend: EmbeddedBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = ["remind me to pick up the dry cleaning from the place on main street",
             "add eggs, cheese and orange juice to my shopping list", "we need bread"]
    drafted = [backend.complete(_said(t)) for t in texts]
    monkeypatch.setattr(backend, "options", backend.options.replace(max_draft=0))
    plain = [backend.complete(_said(t)) for t in texts]
    # Batched and one-token forward passes are not bit-identical on every CPU: a near tie
    # on a closing full stop may fall either way ("I need bread." / "I need bread").
    assert [_call_meaning(r) for r in drafted] == [_call_meaning(r) for r in plain]
    # The long reminder is copied from what was said, several tokens a pass.
    assert drafted[0].usage["drafted_tokens"] >= 3
    assert drafted[0].usage["forward_passes"] < plain[0].usage["forward_passes"]


DURATION_TIMER = {"type": "function", "function": {
    "name": "set_timer", "description": "Start a countdown timer.",
    "parameters": {"type": "object", "properties": {
        "duration": {"type": "string", "format": "duration"}}, "required": ["duration"]}}}


@pytest.mark.model
def test_a_length_of_time_said_is_chosen_not_written(backend: EmbeddedBackend) -> None:
    reply = backend.complete(_said("set a timer for 1 hour and 30 minutes",
                                   SYSTEM, [DURATION_TIMER]))
    assert json.loads(reply.tool_calls[0].arguments) == {"duration": "PT1H30M"}
    assert reply.usage["sampled_tokens"] == 0  # one tool, one length said: nothing to sample
    reply = backend.complete(_said("timer for 10 minutes, no, 5 minutes", SYSTEM,
                                   [DURATION_TIMER]))
    assert json.loads(reply.tool_calls[0].arguments)["duration"] in {"PT10M", "PT5M"}


LIGHT = {"type": "function", "function": {
    "name": "control_device", "description": "Turn a light on or off, or dim it.",
    "parameters": {"type": "object", "properties": {
        "entity": {"type": "string"}, "brightness": {"type": "integer"}},
        "required": ["entity"]}}}


@pytest.mark.model
def test_an_optional_number_nobody_said_is_never_opened(
    backend: EmbeddedBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Every optional key pulled open, so only the "never said" rule keeps one shut.
    monkeypatch.setattr(backend, "options", backend.options.replace(optional_key_bias=50.0))
    reply = backend.complete(_said("turn on the kitchen light", SYSTEM, [LIGHT]))
    assert "brightness" not in json.loads(reply.tool_calls[0].arguments)
    assert "dropped_arguments" not in reply.usage  # never written, so nothing to drop
    reply = backend.complete(_said("set the kitchen light to 40", SYSTEM, [LIGHT]))
    assert json.loads(reply.tool_calls[0].arguments)["brightness"] == 40


def test_a_prompt_that_nearly_fills_the_context_still_leaves_room_for_the_call(
        backend: EmbeddedBackend) -> None:
    # The tools as JSON fit a context 20 tokens larger than the prompt, but no call would
    # fit after them: the tools are written as signatures instead, and the call completes.
    request = _request("remind me to call the plumber about the leaking kitchen sink",
                       tools=[*TOOLS, REMINDER])
    shown = with_no_tool(request.tools)  # as the request will be read: `say` offered too
    full, _ = _request_tokens(backend, request.messages, shown)
    tight = EmbeddedBackend(_model_path(), EmbeddedOptions(n_ctx=len(full) + 20,
                                                           prompt_cache_dir=None))
    try:
        reply = tight.complete(request)
    finally:
        tight.close()
    assert [call.name for call in reply.tool_calls] == ["reminder"]
    assert "plumber" in json.loads(reply.tool_calls[0].arguments)["text"]


def test_every_request_of_a_tool_set_shares_one_prompt_prefix_whatever_its_length(
        backend: EmbeddedBackend) -> None:
    # A long utterance must not switch the tools to signatures for its own request: the
    # new prefix would be read again (15-35 s) and the model would see other tool text.
    tools = with_no_tool([*TOOLS, REMINDER])
    short = _request("hi").messages
    long = _request("remind me " + "to water the plants and " * 60 + "to rest").messages
    shared, _ = _request_tokens(backend, short[:1], tools)
    for room in (300, 900, 1500):  # the context left after the tools as JSON
        sized = EmbeddedBackend(_model_path(), EmbeddedOptions(n_ctx=len(shared) + room,
                                                               prompt_cache_dir=None))
        try:
            prefixes = [_request_tokens(sized, m, tools)[1].tolist() for m in (short, long)]
        finally:
            sized.close()
        assert prefixes[0] and prefixes[0] == prefixes[1], room


def test_a_tool_sets_system_turn_is_tokenized_once_and_prompts_as_a_whole_would_be(
        backend: EmbeddedBackend, monkeypatch: pytest.MonkeyPatch) -> None:
    tools = with_no_tool([*TOOLS, REMINDER])
    read: list[bytes] = []
    tokenize = _model(backend).llm.tokenize

    def recorded(text: bytes, *args: Any, **kwargs: Any) -> list[int]:
        read.append(text)
        return tokenize(text, *args, **kwargs)

    first = _request("what's the weather in Paris").messages
    _request_tokens(backend, first, tools)
    monkeypatch.setattr(_model(backend).llm, "tokenize", recorded)
    follow_up = [*first, {"role": "assistant", "content": "Which day?"},
                 {"role": "user", "content": "tomorrow, and remind me to pack"}]
    for messages in (_request("set a timer for 5 minutes").messages, follow_up):
        read.clear()
        full, prefix = _request_tokens(backend, messages, tools)
        # Only the request's own turns were read; the system turn and tools were kept.
        assert sum(len(text) for text in read) < 400
        assert len(prefix) > 300 and full[: len(prefix)].tolist() == prefix.tolist()
        layout = _model(backend).layout
        shown, rendered = layout.shown(messages, tools)
        whole = layout.prompt.render(shown, rendered, add_generation_prompt=True)
        assert full.tolist() == tokenize(whole.encode(), add_bos=False, special=True)


def test_a_request_repeating_the_last_prompt_drafts_the_values_the_last_reply_wrote(
        backend: EmbeddedBackend) -> None:
    # The center asks again with the same prompt for one tool; the text the model wrote
    # the first time ("Call plumber ...", not the words as said) is checked in few passes.
    request = _request("remind me to call the plumber at 5 pm tomorrow",
                       tools=[*TOOLS, REMINDER], allow_direct_answer=False)
    first = backend.complete(request)
    again = backend.complete(request)
    assert [(c.name, c.arguments) for c in again.tool_calls] == [
        (c.name, c.arguments) for c in first.tool_calls]
    assert first.tool_calls[0].name == "reminder"
    assert again.usage["drafted_tokens"] > first.usage["drafted_tokens"]
    assert again.usage["forward_passes"] < first.usage["forward_passes"]


RIDE = {"type": "function", "function": {
    "name": "get_ride", "description": "Call a taxi to head to a given destination",
    "parameters": {"type": "object", "properties": {
        "destination": {"type": "string", "description": "Destination for the taxi ride"},
        "number_of_riders": {"type": "integer", "description": "Number of riders"}},
        "required": ["destination", "number_of_riders"]}}}


@pytest.mark.model
def test_a_call_ends_at_a_required_value_nobody_said(
    backend: EmbeddedBackend, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Writing the made-up rest would only cost time: the center asks for this value.
    reply = backend.complete(_request("I need a cab please", tools=[RIDE],
                                      allow_direct_answer=False))
    [call] = reply.tool_calls
    assert call.name == "get_ride" and "destination" not in json.loads(call.arguments)
    assert reply.usage["stopped_at_unsaid"] == ["destination"]
    said = backend.complete(_request("get me a cab to the airport for 2 people", tools=[RIDE],
                                     allow_direct_answer=False))
    assert "airport" in json.loads(said.tool_calls[0].arguments)["destination"].lower()
    assert "stopped_at_unsaid" not in said.usage
    monkeypatch.setattr(backend, "options", backend.options.replace(stop_at_unsaid=False))
    whole = backend.complete(_request("I need a cab please", tools=[RIDE],
                                      allow_direct_answer=False))
    assert set(json.loads(whole.tool_calls[0].arguments)) == {"destination", "number_of_riders"}
    assert whole.usage["completion_tokens"] > reply.usage["completion_tokens"]


@pytest.mark.model
def test_a_call_of_one_named_tool_keeps_the_prompt(backend: EmbeddedBackend) -> None:
    # What the weather request would call, the timer is chosen instead: same prompt.
    free = backend.complete(_request("what's the weather in paris"))
    assert [c.name for c in free.tool_calls] == ["get_weather"]
    only = backend.complete(_request("what's the weather in paris", only_tool="set_timer"))
    assert [c.name for c in only.tool_calls] == ["set_timer"]
    assert only.usage["prefix_cache"] == "live"
    assert only.usage["prompt_eval_tokens"] <= free.usage["prompt_eval_tokens"]


@pytest.mark.model
def test_the_quote_tokens_read_at_load_are_those_of_every_piece(backend: EmbeddedBackend
                                                                 ) -> None:
    """The tokens that open or close a string, read from the tokens whose text holds a
    quote, are exactly those a reading of every token's piece finds."""
    llm = _model(backend).llm
    closers, inner = set(), []
    for token in range(llm.n_vocab()):
        piece = llm.detokenize([token], special=False)
        at = piece.find(b'"')
        if at == 0:
            closers.add(token)
        elif 0 < at < len(piece) - 1:
            inner.append(token)
    found_closers, found_inner = _model(backend).tails
    assert found_closers == closers and len(closers) > 100
    assert found_inner.tolist() == inner and len(inner) > 100


def test_loading_the_model_leaves_the_terminal_alone() -> None:
    # An answer printed while another thread reads the model (a node in the same process
    # answering without it) must reach the terminal: stdout here is a pipe we read back.
    read_end, write_end = os.pipe()
    saved = os.dup(1)
    os.dup2(write_end, 1)
    instance = EmbeddedBackend(_model_path())
    loading = threading.Thread(target=instance.load)
    try:
        loading.start()
        written = 0
        while loading.is_alive():
            os.write(1, b"x")
            written += 1
            loading.join(0.005)
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(write_end)
        instance.close()
    with os.fdopen(read_end, "rb") as pipe:
        arrived = pipe.read()
    assert written > 10 and arrived == b"x" * written
