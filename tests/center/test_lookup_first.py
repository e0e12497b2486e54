"""A request that names nothing to book is a look-up first (center/lookup_first.py).

The relatedness is the real sentence encoder's; the LLM is scripted, since these tests are
about what the engine does with the tool a model chose.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from center_helpers import function_tool, scripted_turn

from jarvis.center.llm.base import LLMTimeoutError
from jarvis.center.llm.scripted import ScriptedBackend, tool_calls
from jarvis.center.lookup_first import lookup_instead, search_instead, trade_instead
from jarvis.center.meaning import Relatedness
from jarvis.center.toolspec import build_catalog

TEXT = {"type": "string"}
CARS = function_tool(
    "get_cars_available",
    {"pickup_city": TEXT, "pickup_date": TEXT, "dropoff_date": TEXT, "car_type": TEXT},
    ["pickup_city", "pickup_date", "dropoff_date"],
    "Search for available rental cars by city and date")
RESERVE = function_tool(
    "reserve_car",
    {"pickup_location": TEXT, "pickup_date": TEXT, "dropoff_date": TEXT, "car_type": TEXT},
    ["pickup_location", "pickup_date", "dropoff_date", "car_type"],
    "Reserve car rental for given dates and location")
SET_TIMER = function_tool("set_timer", {"minutes": {"type": "integer"}}, ["minutes"],
                          "Start a countdown timer")
CHECK_TIMERS = function_tool("check_timers", {}, [], "Say how long is left on the timers")


def _lookup(relatedness: Relatedness, said: str, chosen: str,
            arguments: dict[str, Any] | None = None) -> str | None:
    catalog = build_catalog([CARS, RESERVE, SET_TIMER, CHECK_TIMERS], None)
    found = lookup_instead(catalog.tools[chosen], arguments or {}, catalog, said,
                           relatedness.scores(said, catalog))
    return found.name if found else None


def test_a_booking_nothing_was_chosen_for_is_looked_up_first(
        relatedness: Relatedness) -> None:
    assert _lookup(relatedness, "I need a rental car for the 12th",
                   "reserve_car") == "get_cars_available"
    # Its own word said, the booking stays.
    assert _lookup(relatedness, "reserve me a car for the 12th", "reserve_car") is None
    # Any verb of trading says it: to "book" a car is to reserve one.
    assert _lookup(relatedness, "book me a car for the 12th", "reserve_car") is None
    assert _lookup(relatedness, "I would like to book a rental car for the 12th",
                   "reserve_car") is None
    # A place the booking holds under a name of its own is the search's city all the same.
    assert _lookup(relatedness, "I need a rental car at SFO airport", "reserve_car",
                   {"pickup_location": "SFO airport"}) == "get_cars_available"
    # A tool that needs nothing is no look-up: "set a timer" asks for how long.
    assert _lookup(relatedness, "I need a timer", "set_timer") is None
    # Without relatedness nothing is tried.
    catalog = build_catalog([CARS, RESERVE], None)
    assert lookup_instead(catalog.tools["reserve_car"], {}, catalog, "a rental car", {}) is None


FIND_CLINIC = function_tool(
    "find_clinic",
    {"town": {"type": "string", "description": "Town where the physician works"},
     "specialty": {"type": "string", "description": "Specialty of the physician"}},
    ["town", "specialty"], "Search for a medical practice by town and specialty")
BOOK_VISIT = function_tool(
    "book_visit",
    {"physician_name": {"type": "string", "description": "Name of the physician"},
     "visit_date": TEXT, "visit_time": TEXT},
    ["physician_name", "visit_date", "visit_time"],
    "Book a visit with a named physician at a date and time")


def test_a_look_up_is_of_the_kind_its_parameters_describe(relatedness: Relatedness) -> None:
    # Only the look-up's parameters say it finds physicians; that makes it one of a kind
    # with the booking, and "physician" no word of the booking's own.
    catalog = build_catalog([FIND_CLINIC, BOOK_VISIT], None)

    def lookup(said: str, arguments: dict[str, Any] | None = None) -> str | None:
        found = lookup_instead(catalog.tools["book_visit"], arguments or {}, catalog, said,
                               relatedness.scores(said, catalog))
        return found.name if found else None

    assert lookup("I need to find a physician") == "find_clinic"
    assert lookup("book me a visit with a physician") is None
    # A value only the booking takes names what to book: the physician is chosen.
    assert lookup("I need to find physician Anna Berg",
                  {"physician_name": "Anna Berg"}) is None


def _turn(tmp_path: Path, relatedness: Relatedness, utterance: str, *replies: Any,
          tools: list[dict[str, Any]] | None = None) -> tuple[Any, ScriptedBackend]:
    return scripted_turn(tmp_path, utterance, replies, tools or [CARS, RESERVE], relatedness)


def test_the_center_asks_about_the_look_up_instead(tmp_path: Path,
                                                   relatedness: Relatedness) -> None:
    response, backend = _turn(tmp_path, relatedness, "I need a rental car for tomorrow",
                              tool_calls(("reserve_car", {})),
                              tool_calls(("get_cars_available", {})))
    assert response.stop_reason == "validation_required"
    assert response.validation_request.tool_name == "get_cars_available"
    assert response.validation_request.parameter_name == "pickup_city"
    # The second request, on the same prompt, leaves the look-up as the only choice.
    assert [r.only_tool for r in backend.requests] == [None, "get_cars_available"]
    assert backend.requests[1].messages == backend.requests[0].messages
    # The look-up's request failing, the question about the first tool stands.
    (tmp_path / "failed").mkdir()
    response, _ = _turn(tmp_path / "failed", relatedness, "I need a rental car for tomorrow",
                        tool_calls(("reserve_car", {})),
                        LLMTimeoutError("the model took too long"))
    assert response.validation_request.tool_name == "reserve_car"
    # Asked to reserve, it asks about the reservation: one request.
    (tmp_path / "own").mkdir()
    response, backend = _turn(tmp_path / "own", relatedness, "reserve a car for tomorrow",
                              tool_calls(("reserve_car", {})))
    assert response.validation_request.tool_name == "reserve_car"
    assert len(backend.requests) == 1


PLAYER = function_tool(
    "media_player",
    {"action": {"type": "string", "enum": ["play", "pause", "skip", "volume"]},
     "query": {"type": "string", "description": "For play: the song, artist or album"}},
    ["action"], "Play music (a song, artist or album), or pause, skip or set the volume")
FIND_SONGS = function_tool(
    "lookup_music",
    {"genre": {"type": "string", "description": "Genre of the song"},
     "artist": {"type": "string", "description": "Artist who performed the song"},
     "album": {"type": "string", "description": "Album the song belongs to"}},
    [], "Search for songs by genre, artist or album")


def test_a_request_to_find_calls_the_tool_that_searches(relatedness: Relatedness) -> None:
    catalog = build_catalog([PLAYER, FIND_SONGS, SET_TIMER], None)

    def search(said: str, chosen: str = "media_player",
               arguments: dict[str, Any] | None = None) -> str | None:
        found = search_instead(catalog.tools[chosen], arguments or {"action": "play"},
                               catalog, said, relatedness.scores(said, catalog))
        return found.name if found else None

    assert search("Can you please find me Linkin Park songs?",
                  arguments={"action": "play", "query": "Linkin Park"}) == "lookup_music"
    assert search("I'm looking for some music off the album Expectations.") == "lookup_music"
    assert search("Can you recommend a song?") == "lookup_music"
    # No verb of searching, or the player's own verb said: the player's call stands.
    assert search("put on some Linkin Park songs") is None
    assert search("find a Linkin Park song and play it") is None
    # The tool that searches keeps its call; a tool of another kind is never searched for.
    assert search("find me some songs", "lookup_music", {}) is None
    assert search("find me a timer for 5 minutes", "set_timer", {"minutes": 5}) is None


FIND_A_SONG = function_tool(
    "lookup_song",
    {"genre": {"type": "string", "description": "Genre of the song"},
     "artist": {"type": "string", "description": "Artist who performed the song"},
     "album": {"type": "string", "description": "Album the song belongs to"}},
    [], "Search for a song")
EVENTS = function_tool(
    "find_events",
    {"category": {"type": "string", "description": "Music or sports"}, "city": TEXT},
    ["category", "city"], "Find events in a given city")


def test_a_search_of_the_players_kin_is_tried_for_a_word_of_the_player(
        relatedness: Relatedness) -> None:
    def search(said: str, *tools: dict[str, Any]) -> str | None:
        catalog = build_catalog([PLAYER, *tools], None)
        found = search_instead(catalog.tools["media_player"], {"action": "play"}, catalog,
                               said, relatedness.scores(said, catalog))
        return found.name if found else None

    # "music" is no word of the search's; the two speak of songs, artists and albums.
    assert search("I'm searching for music.", FIND_A_SONG) == "lookup_song"
    # One word in common ("music") makes no kin.
    assert search("I'm searching for music.", EVENTS) is None


def test_the_center_searches_instead_of_playing(tmp_path: Path,
                                               relatedness: Relatedness) -> None:
    response, backend = _turn(
        tmp_path, relatedness, "Can you find me some Linkin Park songs?",
        tool_calls(("media_player", {"action": "play", "query": "Linkin Park"})),
        tool_calls(("lookup_music", {"artist": "Linkin Park"})), tools=[PLAYER, FIND_SONGS])
    assert response.stop_reason == "tool_calls"
    assert [(c.function.name, c.function.parsed_arguments()) for c in response.tool_calls] == [
        ("lookup_music", {"artist": "Linkin Park"})]
    assert [r.only_tool for r in backend.requests] == [None, "lookup_music"]
    # Asked to play, it plays: one request.
    _kept(tmp_path / "play", relatedness, "play some Linkin Park songs",
          ("media_player", {"action": "play", "query": "Linkin Park"}), [PLAYER, FIND_SONGS])


def _kept(folder: Path, relatedness: Relatedness, said: str, call: tuple[str, dict[str, Any]],
          tools: list[dict[str, Any]]) -> None:
    """The model's call is sent as it came, after one request."""
    folder.mkdir()
    response, backend = _turn(folder, relatedness, said, tool_calls(call), tools=tools)
    assert [c.function.name for c in response.tool_calls] == [call[0]]
    assert len(backend.requests) == 1


def test_a_verb_both_names_share_makes_no_two_tools_of_one_kind(
        relatedness: Relatedness) -> None:
    restaurants = function_tool("find_restaurants", {"cuisine": TEXT, "city": TEXT},
                                ["cuisine", "city"],
                                "Find a restaurant of a particular cuisine in a city")
    dentist = function_tool("find_provider", {"city": TEXT}, ["city"],
                            "Find a dentist by location and optionally by services offered")
    catalog = build_catalog([restaurants, dentist], None)
    said = "I'd like to find a place to eat in Mill Valley"
    found = lookup_instead(catalog.tools["find_restaurants"], {"city": "Mill Valley"},
                           catalog, said, relatedness.scores(said, catalog))
    assert found is None  # "find" of both names: a dentist is no place to eat


BUY_TICKET = function_tool(
    "buy_bus_ticket",
    {"origin": TEXT, "destination": TEXT, "departure_date": TEXT, "departure_time": TEXT},
    ["origin", "destination", "departure_date", "departure_time"],
    "Buy tickets for a bus journey")
FIND_BUS = function_tool(
    "find_bus", {"origin": TEXT, "destination": TEXT, "departure_date": TEXT},
    ["origin", "destination", "departure_date"], "Find a bus journey for a given date")


def test_what_is_searched_for_may_be_said_in_the_bookings_words(
        relatedness: Relatedness) -> None:
    catalog = build_catalog([BUY_TICKET, FIND_BUS, SET_TIMER], None)

    def search(said: str) -> str | None:
        found = search_instead(catalog.tools["buy_bus_ticket"], {}, catalog, said,
                               relatedness.scores(said, catalog))
        return found.name if found else None

    # "tickets" is the purchase's own word, yet what is to be found.
    assert search("I need to find bus tickets") == "find_bus"
    # Its verb of trading said, the purchase stands.
    assert search("find and buy me bus tickets to Fresno") is None
    assert search("I want to book bus tickets") is None


def test_a_search_asked_for_stays_a_search(relatedness: Relatedness) -> None:
    events = function_tool("find_events", {"city": TEXT, "kind": TEXT}, ["city", "kind"],
                           "Find events in a given city")
    diary = function_tool("get_events", {"day": TEXT}, ["day"],
                          "Get list of all calendar events for the user on a given day")
    catalog = build_catalog([events, diary], None)
    for said in ["I'd like to look for some events.", "Search for events please"]:
        found = lookup_instead(catalog.tools["find_events"], {}, catalog, said,
                               relatedness.scores(said, catalog))
        assert found is None, said  # the calendar needs fewer values, but reads, not searches


FIND_CAMPSITE = function_tool(
    "find_campsite", {"park": TEXT, "site_type": TEXT}, ["park"],
    "Find a campsite in a national park")
RESERVE_CAMPSITE = function_tool(
    "reserve_campsite",
    {"campsite_name": TEXT, "park": TEXT, "arrival_date": TEXT, "nights": TEXT},
    ["campsite_name", "park", "arrival_date", "nights"],
    "Reserve a selected campsite for given dates")


def test_a_request_to_book_calls_the_tool_that_books(relatedness: Relatedness) -> None:
    catalog = build_catalog([FIND_CAMPSITE, RESERVE_CAMPSITE, FIND_BUS], None)

    def trade(said: str, chosen: str = "find_campsite") -> str | None:
        found = trade_instead(catalog.tools[chosen], {}, catalog, said,
                              relatedness.scores(said, catalog))
        return found.name if found else None

    assert trade("I want to book a campsite in Yosemite") == "reserve_campsite"
    assert trade("I'd like to make a campsite reservation") == "reserve_campsite"
    # A verb of searching said, or none of trading, the search stands.
    assert trade("Can you find me a campsite to book?") is None
    assert trade("I need a campsite in Yosemite") is None
    # Nothing that books a bus: the search stands.
    assert trade("I want to book a bus", "find_bus") is None


def test_the_center_books_instead_of_searching(tmp_path: Path,
                                              relatedness: Relatedness) -> None:
    response, backend = _turn(
        tmp_path, relatedness, "I want to book a campsite in Yosemite",
        tool_calls(("find_campsite", {"park": "Yosemite"})),
        tool_calls(("reserve_campsite", {})), tools=[FIND_CAMPSITE, RESERVE_CAMPSITE])
    assert response.stop_reason == "validation_required"
    assert response.validation_request.tool_name == "reserve_campsite"
    assert response.validation_request.parameter_name == "campsite_name"
    assert [r.only_tool for r in backend.requests] == [None, "reserve_campsite"]
    # A value only the search takes keeps it: the kind of site is searched for.
    _kept(tmp_path / "kind", relatedness, "I want to book a tent campsite in Yosemite",
          ("find_campsite", {"park": "Yosemite", "site_type": "tent"}),
          [FIND_CAMPSITE, RESERVE_CAMPSITE])


def _flight_tool(name: str, description: str, *extra: str) -> dict[str, Any]:
    keys = ["origin_city", "destination_city", *extra, "departure_date"]
    return function_tool(name, dict.fromkeys(keys, TEXT), keys, description)


FLIGHTS = [
    _flight_tool("search_oneway_flight", "Search for one-way flights to a destination"),
    _flight_tool("search_roundtrip_flights", "Search for round-trip flights to a destination",
                 "return_date"),
    _flight_tool("reserve_oneway_flight", "Reserve a one-way flight", "airlines"),
    _flight_tool("reserve_roundtrip_flights", "Reserve a round-trip flight", "airlines",
                 "return_date"),
]


def test_a_look_up_nothing_said_names_leaves_the_first_question(
        tmp_path: Path, relatedness: Relatedness) -> None:
    # The one-way booking needs fewer values, but is the farthest of the four in meaning.
    said = "Get me tickets for a flight with Delta, leaving at 9:15"
    response, backend = _turn(
        tmp_path, relatedness, said,
        tool_calls(("reserve_roundtrip_flights", {"airlines": "Delta"})),
        tool_calls(("reserve_oneway_flight", {"airlines": "Delta"})), tools=FLIGHTS)
    assert [r.only_tool for r in backend.requests] == [None, "reserve_oneway_flight"]
    assert response.stop_reason == "validation_required"
    assert response.validation_request.tool_name == "reserve_roundtrip_flights"
    assert response.validation_request.parameter_name == "origin_city"
