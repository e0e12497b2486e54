"""Whether a call's values were said, or follow from what was said (center.grounding)."""

from __future__ import annotations

from typing import Any

from jarvis.center.grounding import (
    derived_numbers,
    repeated_values,
    unsaid_optional,
    unsaid_required,
)

# The words said for each operation, as a command declares them (`enum_synonyms`): the
# operation is then the LLM's reading of the request.
SAID_OPERATIONS = {"operation": {"add": ["plus"], "multiply": ["times", "percent"],
                                 "divide": ["divided", "half"]}}


def _unsaid(arguments: dict[str, Any], tool: dict[str, Any], said: str) -> list[str]:
    return unsaid_required(arguments, tool["function"]["parameters"], said, SAID_OPERATIONS)


CALCULATE = {"type": "function", "function": {"name": "calculate", "parameters": {
    "type": "object",
    "properties": {"num1": {"type": "number"}, "num2": {"type": "number"},
                   "operation": {"type": "string", "enum": ["add", "multiply", "divide"]}},
    "required": ["num1", "num2", "operation"]}}}
TIMER = {"type": "function", "function": {"name": "set_timer", "parameters": {
    "type": "object",
    "properties": {"duration": {"type": "string", "format": "duration"},
                   "label": {"type": "string"}},
    "required": ["duration"]}}}


def test_required_numbers_nobody_said_are_invented() -> None:
    spider = {"num1": 1, "num2": 1, "operation": "multiply"}
    assert _unsaid(spider, CALCULATE, "how many legs does a spider have") == [
        "num1", "num2"]
    root = {"num1": 81, "num2": 2, "operation": "divide"}
    assert _unsaid(root, CALCULATE, "what's the square root of 81") == ["num2"]
    said = {"num1": 12, "num2": 7, "operation": "multiply"}
    assert _unsaid(said, CALCULATE, "what is 12 times 7") == []


CONVERT = {"type": "function", "function": {"name": "convert", "parameters": {
    "type": "object",
    "properties": {"value": {"type": "number"}, "from_unit": {"type": "string"},
                   "to_unit": {"type": "string"}},
    "required": ["value", "from_unit", "to_unit"]}}}


def test_a_plural_no_spelling_rule_makes_is_the_word_said() -> None:
    # "six foot" is said in feet, and "two feet" in foot; a word like neither is not said.
    feet = {"value": 6, "from_unit": "feet", "to_unit": "centimeters"}
    assert _unsaid(feet, CONVERT, "how tall is six foot in centimetres") == []
    foot = {"value": 2, "from_unit": "foot", "to_unit": "inches"}
    assert _unsaid(foot, CONVERT, "two feet in inches") == []
    assert _unsaid(feet, CONVERT, "how tall is six fathoms in centimetres") == ["from_unit"]


def test_numbers_said_as_words_percentages_or_earlier_in_the_conversation() -> None:
    half = {"num1": 30, "num2": 2, "operation": "divide"}
    assert _unsaid(half, CALCULATE, "what's half of 30") == []
    percent = {"num1": 80, "num2": 0.15, "operation": "multiply"}
    assert _unsaid(percent, CALCULATE, "15 percent of 80") == []
    # A percentage is one of a number said: a question about one says no 100.
    hundred = {"num1": 100, "num2": 100, "operation": "multiply"}
    assert _unsaid(hundred, CALCULATE, "what percent of the earth is covered by water") == [
        "num1", "num2"]
    signed = {"num1": 5, "num2": -3, "operation": "multiply"}
    assert _unsaid(signed, CALCULATE, "what is 5 times -3") == []
    follow_up = {"num1": 84, "num2": 3, "operation": "multiply"}
    said = "what is 12 times 7\nThe answer is 84.\nnow times three"
    assert _unsaid(follow_up, CALCULATE, said) == []


def test_numbers_said_with_thousands_grouped_or_a_decimal_comma() -> None:
    million = {"num1": 1000000, "num2": 4, "operation": "divide"}
    assert _unsaid(million, CALCULATE, "divide 1,000,000 by 4") == []
    assert _unsaid(million, CALCULATE, "divide 1,000 by 4") == ["num1"]
    decimal = {"num1": 2.5, "num2": 4, "operation": "multiply"}
    assert _unsaid(decimal, CALCULATE, "what is 2,5 times 4") == []


def test_a_duration_needs_a_unit_of_time_said() -> None:
    assert _unsaid(
        {"duration": "PT5M"}, TIMER, "go back to the previous track") == ["duration"]
    # A number alone is no length of time: the volume, not a 50-minute timer.
    assert _unsaid(
        {"duration": "PT50M"}, TIMER, "set the volume to fifty") == ["duration"]
    assert _unsaid({"duration": "PT10M"}, TIMER, "ten minuets") == []
    assert _unsaid({"duration": "PT30S"}, TIMER, "30 secs please") == []
    assert _unsaid(
        {"duration": "PT5M"}, TIMER, "lights in the house") == ["duration"]
    assert _unsaid({"duration": "PT30M"}, TIMER, "give me half an hour") == []
    assert _unsaid(
        {"duration": "PT1H"}, TIMER, "give me half an hour") == ["duration"]
    assert _unsaid({"duration": "PT90M"}, TIMER, "a 90 minute timer") == []
    # The amount must be one said: "a second" is no 5-minute timer.
    assert _unsaid(
        {"duration": "PT5M"}, TIMER, "hold on a second") == ["duration"]
    assert _unsaid(
        {"duration": "PT1H30M"}, TIMER, "a timer for 1 hour 30 minutes") == []
    assert _unsaid({"duration": "PT1M30S"}, TIMER, "90 seconds") == []
    assert _unsaid({"duration": "PT5M"}, TIMER, "5 more minutes") == []
    assert _unsaid({"duration": "PT5M"}, TIMER, "a few minutes") == []
    # A unit said alone must be the value's: "a few hours" is no 5-minute timer.
    assert _unsaid({"duration": "PT2H"}, TIMER, "for a few hours") == []
    assert _unsaid({"duration": "PT5M"}, TIMER, "for a few hours") == ["duration"]
    # Optional values are not its business (unsaid_optional_arguments drops those).
    assert _unsaid({"duration": "PT1M", "label": "x"}, TIMER, "1 min") == []


def test_lengths_of_time_and_bounds_are_derived_numbers() -> None:
    assert {600.0, 10.0, 1 / 6} <= derived_numbers("set a 10 minute timer")
    assert 1800.0 in derived_numbers("give me half an hour")
    level = {"type": "object", "required": ["level"],
             "properties": {"level": {"type": "integer", "minimum": 0, "maximum": 100}}}
    assert unsaid_required({"level": 100}, level, "volume to max") == []
    assert unsaid_required({"level": 0}, level, "lowest volume please") == []
    assert unsaid_required({"level": 50}, level, "half volume") == []
    assert unsaid_required({"level": 70}, level, "turn it up") == ["level"]


def test_text_choices_flags_and_dates_must_be_said() -> None:
    ride = {"type": "object", "required": ["destination", "shared", "account", "day"],
            "properties": {"destination": {"type": "string"}, "shared": {"type": "boolean"},
                           "account": {"type": "string", "enum": ["checking", "savings"]},
                           "day": {"type": "string", "format": "date"}}}
    invented = {"destination": "Los Angeles", "shared": True, "account": "checking",
                "day": "2019-03-08"}
    assert unsaid_required(invented, ride, "i need a cab") == [
        "destination", "shared", "account", "day"]
    # A choice the command describes with synonyms is the LLM's to read.
    described = {"account": {"checking": ["current account"]}}
    assert "account" not in unsaid_required(invented, ride, "i need a cab", described)
    said = "a shared cab to los angeles from my savings on friday"
    assert unsaid_required({**invented, "account": "savings"}, ride, said,
                           times_said=True) == []
    # A date said in words ("on friday") is resolved by the center: `times_said`.
    assert "day" not in unsaid_required(invented, ride, "a cab on friday", times_said=True)
    # Missing keys are validation's business, not this check's.
    assert unsaid_required({}, ride, "i need a cab") == []


def test_an_iso_date_written_for_plain_text_is_said_when_a_date_was() -> None:
    # A date declared as a plain string ("Date of the event"), written as a day.
    events = {"type": "object", "required": ["date", "city"],
              "properties": {"date": {"type": "string", "description": "Date of the event"},
                             "city": {"type": "string"}}}
    written = {"date": "2019-03-01", "city": "LA"}
    assert unsaid_required(written, events, "events in la today", times_said=True) == []
    assert unsaid_required(written, events, "events in la") == ["date"]
    # A time of day says no day.
    assert unsaid_required(written, events, "events in la at 7 pm", times_said=True) == [
        "date"]
    with_hour = {"date": "2019-03-01T10:00:00-08:00", "city": "LA"}
    assert unsaid_required(with_hour, events, "events in la") == ["date"]


def test_a_day_is_no_time_of_day() -> None:
    visit = {"type": "object", "required": ["visit_time", "visit_date"],
             "properties": {"visit_time": {"type": "string", "description": "Time of visit"},
                            "visit_date": {"type": "string", "description": "Date of visit"}}}
    # "this Sunday" is a day: written at both keys, the time of day is still unsaid.
    written = {"visit_time": "2019-03-03", "visit_date": "2019-03-03"}
    assert unsaid_required(written, visit, "book a visit this sunday please",
                           times_said=True) == ["visit_time"]
    said = {"visit_time": "10:30", "visit_date": "2019-03-03"}
    assert unsaid_required(said, visit, "a visit this sunday at 10:30",
                           times_said=True) == []


def test_a_flag_is_said_by_its_own_words_not_by_the_tools_name() -> None:
    ride = {"type": "object", "required": ["shared_ride"],
            "properties": {"shared_ride": {"type": "boolean"}}}
    assert unsaid_required({"shared_ride": False}, ride, "i need a ride",
                           tool="get_ride") == ["shared_ride"]
    assert unsaid_required({"shared_ride": True}, ride, "a shared ride please",
                           tool="get_ride") == []
    # The words that frame a flag say nothing of it.
    kids = {"type": "object", "required": ["good_for_kids"],
            "properties": {"good_for_kids": {"type": "boolean"}}}
    assert unsaid_required({"good_for_kids": True}, kids, "any good museums in town?",
                           tool="find_attractions") == ["good_for_kids"]
    assert unsaid_required({"good_for_kids": True}, kids, "a museum the kids would like",
                           tool="find_attractions") == []
    # A close form of the tool's own word is that word ("timer" for `all_timers`).
    every = {"type": "object", "required": ["all_timers"],
             "properties": {"all_timers": {"type": "boolean"}}}
    assert unsaid_required({"all_timers": True}, every, "cancel the eggs timer",
                           tool="cancel_timer") == ["all_timers"]
    assert unsaid_required({"all_timers": True}, every, "cancel all timers",
                           tool="cancel_timer") == []


def test_numbers_counted_in_a_unit_of_time_take_the_lengths_said_in_it() -> None:
    from jarvis.center.grounding import in_unit, unit_of_time

    assert unit_of_time("duration_seconds", {"type": "integer"}) == 1.0
    assert unit_of_time("length", {"description": "Length of the timer in minutes"}) == 60.0
    assert unit_of_time("count", {"description": "How many"}) is None
    # Short forms count as the unit, but "min" in a declaration names a minimum.
    assert unit_of_time("delay_hrs", {"type": "integer"}) == 3600.0
    assert unit_of_time("min_level", {"description": "The min brightness"}) is None
    assert in_unit(["PT10M", "PT1H30M"], 1.0, whole=True) == ["600", "5400"]
    assert in_unit(["PT90S"], 60.0, whole=True) == []  # not a whole number of minutes
    assert in_unit(["PT90S"], 60.0, whole=False) == ["1.5"]


def test_a_parameters_own_description_copied_as_its_value_is_not_said() -> None:
    event = {"type": "object", "required": ["event_name", "city"], "properties": {
        "event_name": {"type": "string", "description": "The event name"},
        "city": {"type": "string", "description": "The city where the event is taking place"}}}
    copied = {"event_name": "The event name",
              "city": "The city where the event is taking place"}
    assert unsaid_required(copied, event, "i wanna know some dates for events") == [
        "event_name", "city"]
    said = {"event_name": "Hamilton", "city": "the city"}
    assert unsaid_required(said, event, "dates for hamilton in the city") == []


MEDIA = {"type": "object", "required": ["song_name", "genre"], "properties": {
    "song_name": {"type": "string", "description": "Name of the song"},
    "genre": {"type": "string", "description": "Genre of the song"},
    "album": {"type": "string", "description": "Album of the song"}}}


def test_a_value_whose_only_words_said_name_a_parameter_is_not_said() -> None:
    # "song" says what kind of value is wanted; "The Last" is made up.
    assert unsaid_required({"song_name": "The Last Song", "genre": "pop"}, MEDIA,
                           "I want to hear a pop song") == ["song_name"]
    # Another parameter's name is no value of this one.
    assert unsaid_required({"song_name": "K", "genre": "album"}, MEDIA,
                           "find songs in album K") == ["genre"]
    # A name holding its kind stands when its other words were said too, and so does a
    # value made only of its own parameter's name, all said.
    assert unsaid_required({"song_name": "Last Song", "genre": "pop"}, MEDIA,
                           "play Last Song, it's pop") == []
    assert unsaid_required({"song_name": "Song for You", "genre": "pop"}, MEDIA,
                           "play Song for You, it's pop") == []
    # Words of a description are no kind: they hold examples ("e.g. /home/me/Music").
    folder = {"type": "object", "required": ["path"], "properties": {
        "path": {"type": "string", "description": "Folder to measure, e.g. /home/me/Music"}}}
    assert unsaid_required({"path": "/srv/music-folder"}, folder,
                           "how big is my music folder") == []


INNS = {"type": "object", "required": ["town"], "properties": {
    "town": {"type": "string", "description": "Town of the inn"},
    "stars": {"type": "integer", "description": "Star rating"}}}


def test_a_count_beside_the_tools_kind_and_a_parameters_name_is_no_value() -> None:
    # A rating and the kind of thing the tool finds: no town in it.
    assert unsaid_required({"town": "3 stars inn"}, INNS, "find a room in a 3 stars inn",
                           tool="search_inn") == ["town"]
    # A name beside the kind stands.
    assert unsaid_required({"town": "Ashford inn"}, INNS, "a 3 stars inn in Ashford",
                           tool="search_inn") == []
    assert unsaid_required({"town": "Ashford 3"}, INNS, "an inn in Ashford 3",
                           tool="search_inn") == []


SONGS = {"type": "object", "properties": {
    "genre": {"type": "string"}, "artist": {"type": "string"}, "album": {"type": "string"},
    "day": {"type": "string"}, "back": {"type": "string"}}}


def test_a_value_said_once_fills_one_parameter_the_last_written() -> None:
    written = {"genre": "Night Train", "artist": "Jason Aldean", "album": "Night Train"}
    said = "Can you find songs from Jason Aldean's album Night Train?"
    assert repeated_values(written, SONGS, said) == ["genre"]
    # Articles aside, the same words; said twice, they may fill two parameters.
    assert repeated_values({"artist": "the Wanted", "album": "The Wanted"}, SONGS,
                           "songs by The Wanted") == ["artist"]
    assert repeated_values({"genre": "Paris", "album": "Paris"}, SONGS,
                           "from Paris to Paris") == []
    # A day said once fills the first of two dates; "the same day" says it again.
    twice = {"back": "2019-03-02", "day": "2019-03-02"}
    once = {"2019-03-02": 1}
    assert repeated_values(twice, SONGS, "a car on the 2nd", days_said=once) == ["back"]
    assert repeated_values(twice, SONGS, "on the 2nd, back the same day",
                           days_said=once) == []
    assert repeated_values(twice, SONGS, "from the 2nd to the 2nd",
                           days_said={"2019-03-02": 2}) == []


EATERIES = {"type": "object", "required": ["city"], "properties": {
    "city": {"type": "string"}, "cuisine": {"type": "string"}}}


def test_a_word_heard_only_as_a_close_form_of_another_values_word_is_that_values() -> None:
    said = "I want a reasonably priced place to eat. Can you search in Santa Rosa."
    # "Santosa" is no word said; it is close only to "santa", which the city holds.
    assert repeated_values({"cuisine": "Santosa", "city": "Santa Rosa"}, EATERIES,
                           said) == ["cuisine"]
    # A word said as it is, or close to a word no other value holds, stays.
    assert repeated_values({"cuisine": "Sushi", "city": "Santa Rosa"}, EATERIES,
                           "sushi in santa rosa") == []
    assert repeated_values({"cuisine": "Sushis", "city": "Santa Rosa"}, EATERIES,
                           "sushi in santa rosa") == []


MOVIES = {"type": "object", "properties": {
    "genre": {"type": "string"}, "directed_by": {"type": "string"},
    "location": {"type": "string"}, "theater_name": {"type": "string"},
    "text": {"type": "string"}, "place": {"type": "string"}}}


def test_a_value_written_again_inside_another_with_its_name_fills_one_parameter() -> None:
    said = "I want to find some online movies directed by Rachel Lears."
    assert repeated_values({"genre": "directed by Rachel Lears",
                            "directed_by": "Rachel Lears"}, MOVIES, said) == ["genre"]
    said = "Will you find a movie at Alameda Theatre & Cineplex?"
    assert repeated_values({"location": "Alameda Theatre & Cineplex",
                            "theater_name": "Cineplex"}, MOVIES, said) == ["location"]
    # So is the tool's name: "movies" of `find_movies`.
    said = "I want to watch a movie. I like Stephen Merchant movies."
    written = {"genre": "Stephen Merchant movies", "directed_by": "Stephen Merchant"}
    assert repeated_values(written, MOVIES, said, tool="find_movies") == ["genre"]
    assert repeated_values(written, MOVIES, said, tool="set_reminder") == []
    # A value inside another without its parameter's name is the user's own words twice.
    assert repeated_values({"text": "buy milk at Safeway", "place": "Safeway"}, MOVIES,
                           "remind me to buy milk at Safeway") == []


SIGHTS = {"type": "object", "required": ["town"], "properties": {
    "town": {"type": "string", "description": "Town to look in"},
    "kind": {"type": "string", "enum": ["Museum", "Historical Landmark", "Park"]}}}


def test_a_choice_is_said_by_the_words_that_tell_it_from_the_others() -> None:
    sights = {"type": "object", "required": ["kind"], "properties": {"kind": {
        "type": "string", "enum": ["Place of Worship", "Theme Park", "Park", "Museum"]}}}
    # "places" is a word of one option, but not all that tells it from the others.
    assert unsaid_required({"kind": "Place of Worship"}, sights,
                           "any interesting places to visit?") == ["kind"]
    assert unsaid_required({"kind": "Place of Worship"}, sights,
                           "a place of worship to visit") == []
    # "Park" has no word of its own: a word of it said is enough, as "theme" is for
    # "Theme Park".
    assert unsaid_required({"kind": "Park"}, sights, "a theme park please") == []
    assert unsaid_required({"kind": "Theme Park"}, sights, "a park please") == ["kind"]
    airlines = {"type": "object", "required": ["airline"], "properties": {"airline": {
        "type": "string", "enum": ["United Airlines", "Delta Airlines"]}}}
    # The word every option has ("airlines") tells none of them.
    assert unsaid_required({"airline": "United Airlines"}, airlines,
                           "a flight with united") == []
    assert unsaid_required({"airline": "Delta Airlines"}, airlines,
                           "a flight on any airline") == ["airline"]


def test_another_parameters_option_is_no_free_text_value() -> None:
    shows = {"type": "object", "required": ["city"], "properties": {
        "city": {"type": "string"}, "genre": {"type": "string"},
        "show_type": {"type": "string", "enum": ["regular", "3d", "imax"]}}}
    said = "I want to watch a 3d movie in Emeryville"
    assert unsaid_optional({"city": "Emeryville", "genre": "3D"}, shows, said) == ["genre"]
    assert unsaid_optional({"city": "Emeryville", "genre": "comedy"}, shows,
                           "a 3d comedy in Emeryville") == []


def test_an_option_chosen_is_no_free_text_value_too() -> None:
    said = "I would like to see a historical landmark"
    assert repeated_values({"town": "Historical Landmark", "kind": "Historical Landmark"},
                           SIGHTS, said) == ["town"]
    # Said twice, the words may be both the option and a place's name.
    assert repeated_values({"town": "Park", "kind": "Park"}, SIGHTS,
                           "a park in Park City, Park that is") == []
    assert repeated_values({"town": "Oslo", "kind": "Museum"}, SIGHTS,
                           "a museum in Oslo") == []


FLIGHTS = {"type": "object", "required": ["origin_city", "destination_city"], "properties": {
    "origin_city": {"type": "string", "description": "City of origin"},
    "destination_city": {"type": "string", "description": "City of destination"}}}


def test_a_place_said_as_one_end_of_a_journey_is_not_the_other() -> None:
    said = "can you search for flights to Sydney?"
    assert unsaid_required({"origin_city": "Sydney"}, FLIGHTS, said) == ["origin_city"]
    assert unsaid_required({"destination_city": "Sydney"}, FLIGHTS, said) == []
    both = {"origin_city": "Fresno", "destination_city": "LA"}
    assert unsaid_required(both, FLIGHTS, "a flight from Fresno to LA") == []
    swapped = {"origin_city": "LA", "destination_city": "Fresno"}
    assert unsaid_required(swapped, FLIGHTS, "a flight from Fresno to LA") == [
        "origin_city", "destination_city"]
    # Said with no word of direction, a place may be either.
    assert unsaid_required({"origin_city": "Sydney"}, FLIGHTS, "Sydney flights please") == []
    # A place said in short is found where it was said.
    bus = {"origin": "San Francisco", "destination": "San Fran"}
    assert unsaid_required(bus, FLIGHTS_BY_NAME, "a bus to San Fran") == ["origin"]
    assert unsaid_required(bus, FLIGHTS_BY_NAME, "a bus from San Fran") == ["destination"]


FLIGHTS_BY_NAME = {"type": "object", "required": ["origin", "destination"], "properties": {
    "origin": {"type": "string"}, "destination": {"type": "string"}}}
RENTAL = {"type": "object", "required": ["pickup_city", "album"], "properties": {
    "pickup_city": {"type": "string", "description": "City in which to pick up rental car"},
    "album": {"type": "string", "description": "Album the song belongs to"}}}


def test_to_in_a_description_is_no_end_of_a_journey() -> None:
    # "in which to pick up" is an infinitive, not a destination: a city said after
    # "from" stands, as does an album said after "from".
    said = "I need a rental from Concord, playing songs from Thriller"
    assert unsaid_required({"pickup_city": "Concord", "album": "Thriller"}, RENTAL,
                           said) == []


def test_a_clock_time_written_for_plain_text_is_said_when_that_time_was() -> None:
    dentist = {"type": "object", "required": ["appointment_time"], "properties": {
        "appointment_time": {"type": "string", "description": "Time for the appointment"}}}
    said = "anything available at half past 2 in the afternoon?"
    for written in ("14:30", "2:30 PM", "2:30 pm", "02:30"):
        assert unsaid_required({"appointment_time": written}, dentist, said) == [], written
    assert unsaid_required({"appointment_time": "16:30"}, dentist, said) == [
        "appointment_time"]
    assert unsaid_required({"appointment_time": "10:00"}, dentist, "a dentist please") == [
        "appointment_time"]


PLACES = {"type": "object", "required": ["location"], "properties": {
    "location": {"type": "string"}, "theater_name": {"type": "string"}}}


def test_a_name_nobody_said_is_not_said_though_a_word_of_it_was() -> None:
    # "new" was said, "York" was not: the city is made up and asked for.
    assert unsaid_required({"location": "New York"}, PLACES,
                           "I'm visiting a new place, find me something to see") == [
        "location"]
    assert unsaid_optional({"location": "SF", "theater_name": "Amanda Eastridge"}, PLACES,
                           "a movie at AMC Eastridge in SF") == ["theater_name"]
    # A name said in short stands: its start, or without a short word of it.
    for value, said in [("San Francisco", "a salon in San Fran"),
                        ("Las Vegas", "a trip to vegas"), ("San Jose", "in san jose")]:
        assert unsaid_required({"location": value}, PLACES, said) == [], value
