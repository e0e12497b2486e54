"""What the center tells the embedded model about the utterance, and what it does with it."""

from __future__ import annotations

from datetime import datetime

from jarvis.center.dates import dates_heard, times_heard
from jarvis.center.grounding import content_words, durations_said, is_said
from jarvis.center.llm.embedded.grammar import array_bounds, tool_call_grammar
from jarvis.center.llm.embedded.grounding import (
    completed_values,
    dates_as_said,
    items_from_the_other_clause,
    never_said,
    respelled_required_text,
    unsaid_optional_arguments,
)

NOW = datetime.fromisoformat("2026-01-14T10:00:00-05:00")  # a Wednesday
ZONE = "America/New_York"

SHOPPING = {"type": "function", "function": {"name": "shopping_list", "parameters": {
    "type": "object",
    "properties": {"action": {"type": "string", "enum": ["add", "read"]},
                   "items": {"type": "array", "items": {"type": "string"}},
                   "store": {"type": "string"}},
    "required": ["action"]}}}


def test_dates_heard_are_the_phrases_said_in_order() -> None:
    assert dates_heard("will it rain tomorrow in seattle", ZONE, NOW) == [
        ["2026-01-15T00:00:00-05:00"]]
    assert dates_heard("the weather this weekend and on friday", ZONE, NOW) == [
        ["2026-01-17T00:00:00-05:00", "2026-01-18T00:00:00-05:00"],
        ["2026-01-16T00:00:00-05:00"]]
    assert dates_heard("what time is it", ZONE, NOW) == []


def test_dates_heard_take_modifiers_and_the_time_of_day_said() -> None:
    # The longest phrase wins: "tomorrow morning" is not also "tomorrow".
    assert dates_heard("wake me tomorrow morning", ZONE, NOW) == [["2026-01-15T09:00:00-05:00"]]
    assert dates_heard("remind me tomorrow at 5 pm", ZONE, NOW) == [["2026-01-15T17:00:00-05:00"]]
    assert dates_heard("lunch next friday", ZONE, NOW) == [["2026-01-23T00:00:00-05:00"]]


def test_dates_heard_beyond_the_table_and_through_typos() -> None:
    assert dates_heard("remind me on march 3rd to pay", ZONE, NOW) == [
        ["2026-03-03T00:00:00-05:00"]]
    assert dates_heard("remind me on the 5th of june at 5 pm", ZONE, NOW) == [
        ["2026-06-05T17:00:00-04:00"]]
    assert dates_heard("remind me in 3 days", ZONE, NOW) == [["2026-01-17T00:00:00-05:00"]]
    assert dates_heard("whats the weather tomorow", ZONE, NOW) == [["2026-01-15T00:00:00-05:00"]]
    assert dates_heard("may i have a song", ZONE, NOW) == []


def test_dates_heard_as_days_of_the_month_and_weekdays_of_a_week() -> None:
    # One phrase each, not a weekday and a whole week.
    assert dates_heard("dinner on monday next week", ZONE, NOW) == [
        ["2026-01-19T00:00:00-05:00"]]
    assert dates_heard("a car from the 20th of this month", ZONE, NOW) == [
        ["2026-01-20T00:00:00-05:00"]]
    assert dates_heard("a flight on the 16th and back on the 19th", ZONE, NOW) == [
        ["2026-01-16T00:00:00-05:00"], ["2026-01-19T00:00:00-05:00"]]
    # A month said with the day is one phrase; a word ordinal alone is no date.
    assert dates_heard("on the 5th of june", ZONE, NOW) == [["2026-06-05T00:00:00-04:00"]]
    assert dates_heard("play the first song", ZONE, NOW) == []


def test_times_heard_are_clock_times_both_halves_when_unsaid() -> None:
    assert times_heard("remind me at 7:30 pm to call") == ["19:30"]
    assert times_heard("wake me at half past 7") == ["07:30", "19:30"]
    assert times_heard("at noon") == ["12:00"]
    assert times_heard("remind me tonight") == []


def test_a_value_is_said_when_a_word_of_it_was_heard() -> None:
    assert is_said("kitchen light", "turn of the kitchen lights")
    assert is_said("Boston", "whats the whether in boston")
    assert not is_said("Tokyo", "what time is it")


def test_only_words_that_carry_meaning_tell_a_value_was_said() -> None:
    # "the" is in both, and says nothing: the reminder text was copied from an example.
    assert not is_said("take out the trash", "don't let me forget the dentist on thursday")
    assert content_words("take out the trash") == ["take", "out", "trash"]
    assert content_words("the one") == ["one"]
    assert content_words("to the") == ["to", "the"]  # nothing else: every word counts
    assert is_said("the", "turn the light on")


def test_lengths_of_time_said_are_durations() -> None:
    assert durations_said("set a timer for 3 minutes") == ["PT3M"]
    assert durations_said("a timer for 1 hour 30 minutes") == ["PT1H30M"]
    assert durations_said("1 hour and 30 minutes") == ["PT1H30M"]
    assert durations_said("give me half an hour") == ["PT30M"]  # not also "an hour"
    assert durations_said("90 seconds") == ["PT1M30S"]
    assert durations_said("2.5 minutes") == ["PT2M30S"]
    assert durations_said("ten minuets please") == ["PT10M"]  # misheard unit
    # Two lengths said apart stay apart; a unit without an amount is no duration.
    assert durations_said("in 10 minutes and 5 minutes") == ["PT10M", "PT5M"]
    assert durations_said("a few minutes") == []
    assert durations_said("what time is it") == []


def test_an_optional_key_no_said_value_could_fill_is_known_before_it_is_opened() -> None:
    number = {"type": "integer"}
    assert never_said(number, "turn on the lights")
    assert not never_said(number, "set the lights to 40 percent")
    unit = {"type": "string", "enum": ["metric", "imperial"],
            "description": "metric is Celsius, imperial is Fahrenheit"}
    assert never_said(unit, "is it raining in glasgow")
    assert not never_said(unit, "how hot is it in celsius")
    assert not never_said(unit, "how hot is it", ["metric"])  # a declared synonym was said
    assert not never_said({"type": "string"}, "anything")  # free text: judged once written


def test_array_bounds_follow_the_schema() -> None:
    assert array_bounds({"type": "array"}) == (1, 12)
    assert array_bounds({"type": "array", "minItems": 0, "maxItems": 3}) == (0, 3)
    assert array_bounds({"type": "array", "maxItems": 0}) == (1, 12)


def test_unsaid_optional_free_text_is_found_but_enums_and_said_items_are_kept() -> None:
    made_up = {"action": "read", "items": ["milk", "eggs"], "store": "Walmart"}
    assert unsaid_optional_arguments(made_up, SHOPPING, "read me the shopping list") == [
        "items", "store"]
    said = {"action": "add", "items": ["milk", "bred"], "store": "the corner shop"}
    heard = "add milk and bread from the corner shop"
    assert unsaid_optional_arguments(said, SHOPPING, heard) == []


WEATHER_ON = {"type": "function", "function": {"name": "get_weather", "parameters": {
    "type": "object",
    "properties": {"city": {"type": "string", "description": "Name of the city"},
                   "date": {"type": "string", "description": "Date for the weather"}},
    "required": ["city"]}}}


def test_an_iso_date_for_plain_text_is_put_as_the_day_said() -> None:
    # "weather for nyc on march 2nd": the model's year and hour were made up.
    made_up = {"city": "NYC", "date": "2025-03-02T10:00:00+02:00"}
    assert dates_as_said(made_up, WEATHER_ON, ["2019-03-02"], []) == {"date": "2019-03-02"}
    # The day of the month decides between two days said; a clock time said stays.
    assert dates_as_said({"date": "2025-03-09T17:00:00"}, WEATHER_ON,
                         ["2019-03-02", "2019-03-09"], ["17:00"]) == {
        "date": "2019-03-09T17:00"}
    # No day said: left as written, for grounding to drop as unsaid.
    assert dates_as_said(made_up, WEATHER_ON, [], []) == {}
    assert unsaid_optional_arguments(made_up, WEATHER_ON, "weather for nyc") == ["date"]
    said = {"city": "NYC", "date": "2019-03-02"}
    assert unsaid_optional_arguments(said, WEATHER_ON, "weather for nyc on march 2nd",
                                     days=["2019-03-02"]) == []


def test_an_optional_choice_is_kept_when_its_declared_synonym_was_said() -> None:
    weather = {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object", "properties": {"unit": {
            "type": "string", "enum": ["metric", "imperial"],
            "description": "metric is Celsius, imperial is Fahrenheit"}}}}}
    asked = "how warm is it in lisbon in centigrade"
    assert unsaid_optional_arguments({"unit": "metric"}, weather, asked) == ["unit"]
    assert unsaid_optional_arguments({"unit": "metric"}, weather, asked,
                                     {"unit": ["metric"]}) == []
    assert unsaid_optional_arguments({"unit": "imperial"}, weather, asked,
                                     {"unit": ["metric"]}) == ["unit"]


def test_an_item_that_names_the_list_is_the_request_and_the_thing_is_in_the_other_clause(
) -> None:
    todo = {"type": "function", "function": {"name": "todo_list", "parameters": {
        **SHOPPING["function"]["parameters"]}}}
    said = "I finished the laundry, check it off my to do list"
    assert items_from_the_other_clause(
        {"action": "complete", "items": ["check it off my to do list"]}, todo, said) == {
        "items": ["laundry"]}
    said = "we're running low on washing up liquid, stick it on the shopping list"
    assert items_from_the_other_clause(
        {"action": "add", "items": ["stick it on the shopping list"]}, SHOPPING, said) == {
        "items": ["washing up liquid"]}
    # With no other clause, the item ends where the list's name begins.
    assert items_from_the_other_clause(
        {"action": "add", "items": ["finish the report on my todo list"]}, todo,
        "put finish the report on my todo list") == {"items": ["finish the report"]}
    # Items that do not name the list stay; an item that is only the name goes.
    assert items_from_the_other_clause(
        {"action": "add", "items": ["milk", "eggs"]}, SHOPPING,
        "add milk and eggs to the shopping list") == {}
    assert items_from_the_other_clause(
        {"action": "add", "items": ["the shopping list"]}, SHOPPING,
        "add to the shopping list") == {"items": []}


def test_an_optional_value_that_only_names_the_tool_is_no_value() -> None:
    joke = {"type": "function", "function": {"name": "tell_joke", "parameters": {
        "type": "object", "properties": {"topic": {"type": "string"}}}}}
    assert unsaid_optional_arguments({"topic": "jokes"}, joke, "tell me a joke") == ["topic"]
    assert unsaid_optional_arguments({"topic": "cats"}, joke, "a joke about cats") == []
    assert unsaid_optional_arguments({"topic": "cat jokes"}, joke, "cat jokes please") == []
    # The tool's name in the plural, the value in the singular: still only its name.
    movies = {"type": "function", "function": {"name": "find_movies", "parameters": {
        "type": "object", "properties": {"genre": {"type": "string"}}}}}
    assert unsaid_optional_arguments({"genre": "movie"}, movies, "find a movie at the Lark"
                                     ) == ["genre"]
    assert unsaid_optional_arguments({"genre": "comedy"}, movies, "a comedy movie") == []


def test_an_optional_choice_nobody_asked_for_is_dropped() -> None:
    weather = {"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"},
                       "unit": {"type": "string", "enum": ["metric", "imperial"],
                                "description": "metric is Celsius, imperial is Fahrenheit; "
                                               "omit unless the user asks for one"}}}}}
    chosen = {"city": "Glasgow", "unit": "metric"}
    assert unsaid_optional_arguments(chosen, weather, "is it raining in glasgow") == ["unit"]
    assert unsaid_optional_arguments(chosen, weather, "glasgow weather in celsius") == []
    assert unsaid_optional_arguments(chosen, weather, "metric please, glasgow") == []
    # Words after the first clause do not count ("unless the user asks").
    assert unsaid_optional_arguments(chosen, weather, "glasgow, unless it rains") == ["unit"]


def test_unsaid_optional_numbers_are_found() -> None:
    lamp = {"type": "function", "function": {"name": "lamp", "parameters": {
        "type": "object",
        "properties": {"entity": {"type": "string"}, "brightness": {"type": "integer"},
                       "level": {"type": "number", "enum": [1, 2]}},
        "required": ["entity"]}}}
    invented = {"entity": "lamp", "brightness": 100, "level": 2}
    assert unsaid_optional_arguments(invented, lamp, "turn on the lamp") == ["brightness"]
    assert unsaid_optional_arguments(invented, lamp, "lamp to 100 percent") == []
    assert unsaid_optional_arguments({"entity": "x", "brightness": 1000}, lamp, "1,000") == []
    # Small numbers stay words in the utterance.
    assert unsaid_optional_arguments({"entity": "x", "brightness": 2}, lamp, "two lamps") == []


def test_arrays_without_max_items_are_bounded_in_the_grammar() -> None:
    tool = {"type": "function", "function": {"name": "weather", "parameters": {
        "type": "object",
        "properties": {"days": {"type": "array",
                                "items": {"type": "string", "format": "date"}},
                       "pair": {"type": "array", "items": {"type": "integer"},
                                "maxItems": 2}}}}}
    gbnf = tool_call_grammar([tool])
    assert "{0,11}" in gbnf  # 12 items at most by default
    assert "{0,1}" in gbnf  # maxItems honoured


CONVERT = {"type": "function", "function": {"name": "convert_measurement", "parameters": {
    "type": "object",
    "properties": {"value": {"type": "number"}, "from_unit": {"type": "string"},
                   "to_unit": {"type": "string"}, "note": {"type": "string"}},
    "required": ["value", "from_unit", "to_unit"]}}}


def test_required_text_said_in_other_words_is_put_in_the_users_words() -> None:
    kilos = {"value": 68, "from_unit": "kilometers", "to_unit": "pounds"}
    assert respelled_required_text(kilos, CONVERT, "what is 68 kilos in pounds") == {
        "from_unit": "kilos"}


def test_required_text_with_nothing_alike_said_or_already_said_is_left_alone() -> None:
    made_up = {"value": 1, "from_unit": "celsius", "to_unit": "tablespoons"}
    assert respelled_required_text(made_up, CONVERT, "how many tablespoons in a cup") == {}
    said = {"value": 5, "from_unit": "miles", "to_unit": "kilometers"}
    assert respelled_required_text(said, CONVERT, "convert 5 miles to kilometers") == {}
    # Two heard words start alike: which one was meant is not for this rule to guess.
    two = {"value": 5, "from_unit": "kilometers", "to_unit": "pounds"}
    assert respelled_required_text(two, CONVERT, "5 kilos or kilograms in pounds") == {}
    # Optional values are not its business.
    note = {"value": 5, "from_unit": "miles", "to_unit": "kilometers", "note": "kilometers"}
    assert "note" not in respelled_required_text(note, CONVERT, "5 kilos in miles")


def test_values_cut_short_of_what_was_said_are_completed() -> None:
    cut = {"value": 100, "from_unit": "kilometers", "to_unit": "miles"}
    assert completed_values(cut, CONVERT, "convert 100 kilometers per hour to miles per hour"
                            ) == {"from_unit": "kilometers per hour", "to_unit": "miles per hour"}
    unsigned = {"value": 40, "from_unit": "celsius", "to_unit": "fahrenheit"}
    assert completed_values(unsigned, CONVERT, "what's -40 celsius in fahrenheit") == {
        "value": -40}
    # Said both ways, or already in full: left alone.
    assert completed_values(unsigned, CONVERT, "-40 celsius or 40 celsius in fahrenheit") == {}
    # A number written with a thousands comma is read, not a failure.
    grams = {"value": 1590, "from_unit": "grams", "to_unit": "pounds"}
    assert completed_values(grams, CONVERT, "what's 1,590 grams in pounds") == {}
    full = {"value": 5, "from_unit": "miles per hour", "to_unit": "km/h"}
    assert completed_values(full, CONVERT, "5 miles per hour in km/h") == {}


DEVICE = {"type": "function", "function": {"name": "control_device", "parameters": {
    "type": "object",
    "properties": {"entity": {"type": "string"}, "topic": {"type": "string"},
                   "items": {"type": "array", "items": {"type": "string"}}},
    "required": ["entity"]}}}


def test_a_value_said_a_unit_of_time_after_is_per_that_unit() -> None:
    # "an hour" after a unit is "per hour", in whichever spelling the unit was said.
    cut = {"value": 70, "from_unit": "miles per hour", "to_unit": "kilometers"}
    assert completed_values(cut, CONVERT, "how many kilometres an hour is seventy miles per "
                            "hour") == {"to_unit": "kilometers per hour"}
    # An hour that says when is no rate.
    note = {"entity": "call mom"}
    assert completed_values(note, DEVICE, "remind me to call mom an hour from now") == {}


def test_a_name_said_with_words_that_describe_it_keeps_them() -> None:
    assert completed_values({"entity": "light"}, DEVICE, "can you turn the landing light off"
                            ) == {"entity": "landing light"}
    assert completed_values({"entity": "x", "items": ["apples", "milk"]}, DEVICE,
                            "add the red apples and milk") == {"items": ["red apples", "milk"]}
    # Right after its determiner, already whole, or no name: left alone.
    assert completed_values({"entity": "light"}, DEVICE, "turn on the light") == {}
    assert completed_values({"entity": "living room light"}, DEVICE,
                            "turn on the living room lights") == {}
    assert completed_values({"entity": "x", "topic": "dogs"}, DEVICE,
                            "tell me a joke about dogs") == {}
    assert completed_values({"entity": "down"}, DEVICE, "turn the music down a bit") == {}
    # Another clause is not a description.
    assert completed_values({"entity": "x", "items": ["stick it on my tasks"]}, DEVICE,
                            "renew the car insurance, stick it on my tasks") == {}

