"""Answers in words that report what only a tool could know are refused."""

from __future__ import annotations

import json
from typing import Any

import pytest
from center_helpers import CALCULATOR_COMMAND, WEATHER_TOOL, conversation_id, function_tool

from jarvis.center.claims import (
    REFUSAL,
    asks_for_something,
    asks_for_things,
    asks_the_user_back,
    declines,
    echoes_a_declaration,
    lists_a_tools_words,
    promises_a_deed,
    promises_action,
    restates_an_example,
    settles_the_users_question,
    states_tool_facts,
    unsaid_specifics,
    writes_a_call,
)
from jarvis.center.llm.scripted import ScriptedBackend, text, tool_calls


@pytest.mark.parametrize("answer", [
    "The weather in Atlanta, GA is sunny with a mild breeze.",
    "It's 22 degrees in London.",
    "Timer stopped.",
    "I've booked a table for you at 7 pm.",
    "Your balance is $1,200.",
    "There are 10 minutes left on the pizza timer.",
    "I have added milk to your list.",
    "The lights are now off.",
    "It is 3:45.",
    "Here are some Italian restaurants in San Jose.",
    "I found 3 flights to Chicago.",
    "Your table is confirmed.",
    "Your reservation is on March 6th.",
    "Now playing Hello by Adele.",
    "You could visit: 1. The Great Wall of China, a UNESCO site. 2. The Louvre.",
    "Some options:\n1) Cafe Roma\n2) Sushi Bar",
    "Attractions:\n\n1. The Great Wall of China: a UNESCO site,\nwith 1,000 km of walls. 2.",
])
def test_reports_of_results_are_tool_facts(answer: str) -> None:
    assert states_tool_facts(answer)


@pytest.mark.parametrize("answer", [
    "Hello! How can I help?",
    "A spider has eight legs.",
    "The capital of Peru is Lima.",
    "Mix 1. flour and sugar first.",
    "You're welcome!",
    "I'm doing well, thanks for asking.",
    "Sorry, I can't help with that.",
    "May I know where you want to go?",
    "There are many ways to cook rice.",
])
def test_small_talk_and_general_knowledge_are_not(answer: str) -> None:
    assert not states_tool_facts(answer)


def test_a_made_up_result_is_spoken_as_a_refusal(make_center: Any) -> None:
    backend = ScriptedBackend([text("The weather in Atlanta is sunny and 75 degrees."),
                               text("Lima is the capital of Peru.")])
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    reply = center.command(cid, "what's the weather like in atlanta")
    assert (reply["stop_reason"], reply["assistant_message"]) == ("complete", REFUSAL)
    kept = center.command(cid, "what's the capital of peru")
    assert kept["assistant_message"] == "Lima is the capital of Peru."


@pytest.mark.parametrize(("answer", "said", "specifics"), [
    ("Historical Landmark: The Golden Gate Bridge", "find me a historical landmark",
     ["Golden", "Gate", "Bridge"]),
    ("Oneway flight: 100 miles to Chicago", "I need a oneway flight", ["100", "Chicago"]),
    ("Your dentist is free on Friday.", "book the dentist", ["Friday"]),
    ("Lima is the capital of Peru.", "what's the capital of peru", []),
    ("Sure! Which city are you leaving from?", "I need a bus", []),
    ("Reno it is: 2 seats.", "2 seats to Reno", []),
])
def test_specifics_nobody_said(answer: str, said: str, specifics: list[str]) -> None:
    assert unsaid_specifics(answer, said) == specifics


def test_requests_for_something_are_told_from_questions() -> None:
    assert asks_for_something("I need a oneway flight for a trip I have coming up.")
    assert asks_for_something("Hello, I would like to search for events.")
    assert asks_for_something("can you find me a dentist")
    assert not asks_for_something("how many moons does jupiter have")
    assert not asks_for_something("who won the world cup in 2010")
    # A request in a later sentence or clause, and a question about the user's own things.
    assert asks_for_something("I am so bored, please help me find a movie by Hitchcock.")
    assert asks_for_something("What's my balance?")
    assert asks_for_something("when is my flight")
    assert not asks_for_something("my sister is getting married in june")
    # A clause after a conjunction.
    assert asks_for_something("I'm travelling to Denver and I need a place to stay.")
    assert asks_for_something("I am feeling hungry so I would like to find a place to eat.")
    assert not asks_for_something("my brother and I went skiing last winter")
    assert asks_for_something("I feel like watching a movie.")
    assert not asks_for_something("I feel like I'm coming down with a cold")
    # "help" before what is to be done asks for it; "help," before a question does not.
    assert asks_for_something("help call a cab")
    assert not asks_for_something("help, what is the capital of peru")


@pytest.mark.parametrize("said", [
    "I wish to reserve a table for two.",
    "I'm looking to rent a car in Fresno.",
    "I'm trying to find a dentist nearby.",
    "I am interested in seeing a concert this weekend.",
    "I got to book the home",
    "We have to catch a bus to Reno on the 5th.",
    "We'd love to see a play tomorrow.",
    "Check the weather in Paris for me.",
    "Find a hair stylist in Berkeley.",
    # A want after "and" with its subject left out, or with a word between.
    "I am going on a short break and need a hotel room.",
    "I'm not familiar with this area and would like to find a place to eat.",
    "I really want to find a movie to watch.",
    "I will need a rental car until the 4th of March.",
    "I am in need of a doctor.",
    "I will be visiting Austin and am looking for some fun places to go.",
    "We're looking for a place to stay in Reno.",
    "I think I want to plan an outing in Toronto.",
    "Are you able to help me find a bus?",
    "Can I get a flight ticket to Atlanta?",
])
def test_a_want_a_need_or_an_order_is_a_request(said: str) -> None:
    assert asks_for_something(said)


@pytest.mark.parametrize(("said", "asks"), [
    ("What are some cool places to visit?", True),
    ("Any tourist traps that you recommend?", True),
    ("Is there a bus to Fresno on Friday?", True),
    ("Are there any concerts this weekend?", True),
    ("Do you have any suggestions for a place to eat?", True),
    ("where can I get a haircut", True),
    ("how do restaurants come up with their menus", False),
    ("what is the capital of peru", False),
    ("is it going to be a long winter", False),
])
def test_a_question_after_things_to_find_is_told_apart(said: str, asks: bool) -> None:
    assert asks_for_things(said) is asks


@pytest.mark.parametrize("said", [
    "i have a cold",
    "we went to the beach yesterday",
    "what's the tallest mountain in the world",
    "check out this view",
    "the film was good and needed no sequel",
    "is it possible that dogs dream",
])
def test_chat_and_questions_of_knowledge_ask_for_nothing(said: str) -> None:
    assert not asks_for_something(said)


def test_a_promise_without_a_question_stands_for_the_action() -> None:
    assert promises_action("Yes, I can call you a cab now.")
    assert promises_action("Sure, I'll book it.")
    assert not promises_action("Sure, I can help. Where would you like to go?")
    assert not promises_action("I can't do that.")
    # Without a "yes" before it, too.
    assert promises_action("I can cast music on the television for you.")
    assert not promises_action("I cannot cast music.")


@pytest.mark.parametrize(("answer", "deed"), [
    ("Yes, I can call a cab for you.", True),
    ("Yes, I can help you find a doctor in Berkeley.", True),
    ("Sure, I'll book it.", True),
    ("Yes, I can hear you.", False),
    ("Sure, I can repeat that.", False),
    ("Yes, I can help you with that.", False),
    ("Sure, I can book it. What time?", False),
    ("I can find a bus journey for a given pair of cities.", False),  # what it can do
])
def test_a_promise_of_an_act_or_a_search_is_a_deed(answer: str, deed: bool) -> None:
    assert promises_a_deed(answer) is deed


def test_a_promise_no_call_keeps_is_refused(make_center: Any) -> None:
    # Scripted LLM (the protocol is under test): no tool books flights, yet it says yes.
    backend = ScriptedBackend([text("Yes, I can find you a one way flight to SFO."),
                               text("Yes, I can hear you.")])
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, [WEATHER_TOOL])
    reply = center.command(cid, "Can you find me a one way flight to SFO?")
    assert (reply["stop_reason"], reply["assistant_message"]) == ("complete", REFUSAL)
    assert center.command(cid, "can you hear me")["assistant_message"] == "Yes, I can hear you."


def test_a_question_back_asks_what_the_user_wants_an_offer_of_help_does_not() -> None:
    assert asks_the_user_back("Selena Gomez is a singer. What song do you like?")
    assert asks_the_user_back("Sure! Which city are you leaving from?")
    assert not asks_the_user_back("Good evening! What can I do for you?")
    assert not asks_the_user_back("How can I help you today?")
    assert not asks_the_user_back("Lima is the capital of Peru.")


def test_an_answer_that_says_it_cannot_declines() -> None:
    assert declines(REFUSAL)
    assert declines("I'm unable to book rides.")
    assert declines("Sorry, I am not able to do that.")
    assert not declines("You can't park there after 6.")
    assert not declines("I can call you a cab now.")


ATTRACTIONS = function_tool("find_attractions", {"location": {"type": "string"}}, ["location"],
                            "Browse attractions in a given city")


def test_words_in_place_of_a_named_tool_become_its_question_small_talk_keeps_them(
    make_center: Any,
) -> None:
    # Scripted: the model answers in words instead of calling the tool the request names.
    backend = ScriptedBackend([text("Historical Landmark: The Golden Gate Bridge"),
                               # Asked again for the call its result stands for: a place
                               # nobody said, which is asked for instead.
                               tool_calls(("find_attractions", {"location": "San Francisco"})),
                               text("Yes, I can show you attractions now."),
                               # Asked again for the call it promised: a place nobody said.
                               tool_calls(("find_attractions", {"location": "Paris"})),
                               text("Lima is the capital of Peru."),
                               text("The longest river in Africa is the Nile."),
                               text("Yes, I can hear you."),
                               text("Oneway flight: 100 miles to Chicago.")])
    center = make_center(backend)

    def ask(request: str) -> dict[str, Any]:
        cid = conversation_id()  # one conversation each: what was said before counts too
        center.start(cid, [ATTRACTIONS])
        return center.command(cid, request)

    for request in ("find me a historical landmark to visit", "show me some attractions"):
        reply = ask(request)
        assert reply["stop_reason"] == "validation_required"
        assert reply["validation_request"]["parameter_name"] == "location"
        assert "San Francisco" not in json.dumps(reply) and "Paris" not in json.dumps(reply)
    assert ask("what's the capital of peru")["assistant_message"] == "Lima is the capital of Peru."
    # A name nobody said, in answer to a question that means no tool: general knowledge.
    assert ask("what's the longest river in africa")["assistant_message"] == (
        "The longest river in Africa is the Nile.")
    assert ask("can you hear me")["assistant_message"] == "Yes, I can hear you."
    # A request for something no tool serves: a result in words is made up all the same.
    assert ask("I need a oneway flight")["assistant_message"] == REFUSAL
    assert [r.must_call for r in backend.requests] == [False, True, False, True, False, False,
                                                       False, False]


SONGS = function_tool("find_songs", {"genre": {"type": "string",
                                              "description": "Genre of the song"}},
                      [], "Search for a song")
GROCERIES: dict[str, Any] = {
    "command_name": "groceries", "description": "Keep the grocery list.",
    "parameters": [{"name": "item", "type": "string", "required": True}],
    "keywords": ["grocery", "groceries", "buy", "list"]}


def test_an_answer_listing_another_tools_keywords_becomes_the_call_meant(
    make_center: Any,
) -> None:
    # Scripted: the model writes out the prompt's words for another tool.
    backend = ScriptedBackend([text("jazz songs: grocery, groceries, buy, list"),
                               tool_calls(("find_songs", {"genre": "jazz"})),
                               text("songs: grocery, groceries, buy, list")])
    center = make_center(backend)

    def ask(request: str) -> dict[str, Any]:
        cid = conversation_id()
        center.start(cid, [SONGS], [GROCERIES])
        return center.command(cid, request)

    listed = ask("find me some jazz songs")
    assert listed["stop_reason"] == "tool_calls"
    assert json.loads(listed["tool_calls"][0]["function"]["arguments"]) == {"genre": "jazz"}
    # Given to a question of knowledge, the list is no answer either.
    assert ask("how long is the longest song ever recorded")["assistant_message"] == REFUSAL
    assert [r.must_call for r in backend.requests] == [False, True, False]


def test_an_answer_listing_a_tools_keywords_writes_them_out() -> None:
    lists = [["grocery", "groceries", "buy", "list"], ["timer", "countdown", "alarm"]]
    assert lists_a_tools_words("attractions to visit: grocery, groceries, buy, list", lists)
    assert lists_a_tools_words("Timer, countdown, alarm.", lists)
    # A few of them in a sentence of its own is an answer.
    assert not lists_a_tools_words(
        "You can buy a kitchen timer at any grocery store, or use the alarm on your "
        "phone as a countdown.", lists)
    assert not lists_a_tools_words("Buy the groceries on your list first.", lists)


@pytest.mark.parametrize(("answer", "said"), [
    ("Yes, my rice is ready.", "is my rice ready yet"),
    ("No, you turned them off.", "did i leave the lights on when i went out"),
    ("Yes, you need an umbrella today.", "do I need an umbrella"),
    # A moment no model knows: settled by a verdict, or by saying what holds at it.
    ("Yes, it is a good day for a picnic tomorrow.", "is it a good day for a picnic tomorrow"),
    ("The pasta timer is not done yet.", "is the pasta timer done yet"),
    ("No, it will be dry tonight.", "do you think it will rain tonight"),
    # Words that lead in leave the question what it is.
    ("Yes, it will be sunny tomorrow.", "hey jarvis, will it be sunny tomorrow"),
    ("Yes, your parcel came.", "ok so did my parcel come"),
])
def test_a_yes_or_no_about_the_users_things_settles_what_only_a_tool_knows(
        answer: str, said: str) -> None:
    assert settles_the_users_question(answer, said)


@pytest.mark.parametrize(("answer", "said"), [
    ("Yes, humans have been to the Moon.", "have humans ever been to mars"),
    ("Yes, it is cheaper on a Tuesday.", "is it really cheaper to fly on a tuesday"),
    ("Your rice needs about 20 minutes.", "how long does my rice need"),
    ("Yes, I can hear you.", "can you hear me okay"),
    # The assistant speaks for itself; no moment, or no yes-no question, is no state.
    ("Yes, I'm still here.", "are you there right now"),
    ("No, Pluto is a dwarf planet.", "is pluto still a planet"),
    ("Tomorrow is Thursday.", "what day is it tomorrow"),
    ("It depends on how you feel.", "should i go for a run today"),
    ("Yes, I'm here.", "jarvis, are you there now"),
])
def test_general_questions_and_other_answers_settle_nothing(answer: str, said: str) -> None:
    assert not settles_the_users_question(answer, said)


def test_a_yes_about_the_users_things_is_refused(make_center: Any) -> None:
    # Scripted LLM (the protocol is under test): it settles the user's question itself.
    tools = [function_tool("check_timers", {}, description="Check the running kitchen timers")]
    backend = ScriptedBackend([text("Yes, my rice is ready."),
                               text("Yes, I think it is ready.")])
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, tools)
    reply = center.command(cid, "is my rice ready yet")
    assert (reply["stop_reason"], reply["assistant_message"]) == ("complete", REFUSAL)


TOOL_TEXTS = [("find_movies", "Find movies by genre and optionally director"),
              ("find_restaurants", "Find restaurants by city and cuisine"),
              ("set_timer", "Set a timer for a number of minutes")]


def test_an_answer_that_writes_out_a_tools_declaration_echoes_it() -> None:
    assert echoes_a_declaration(
        "movies get rated based on their genre and optionally director.", TOOL_TEXTS)
    assert echoes_a_declaration("Find restaurant", TOOL_TEXTS)
    # A few words in common, or one word of a name, are no copy.
    assert not echoes_a_declaration("I can set a timer for you.", TOOL_TEXTS)
    assert not echoes_a_declaration("Restaurants", TOOL_TEXTS)
    assert not echoes_a_declaration("The biggest desert is the Sahara.", TOOL_TEXTS)
    # Half the answer its own: a sentence that only shares a phrase is no copy.
    assert not echoes_a_declaration(
        "Critics rate films by genre and optionally director, plot, acting, music and "
        "how well they are made.", TOOL_TEXTS)
    assert not echoes_a_declaration("I can find movies by genre and optionally director.",
                                    TOOL_TEXTS)
    # The request said back in its own first words, the description after it, is a copy.
    assert echoes_a_declaration("I want to find movies by genre and optionally director.",
                                TOOL_TEXTS, "I want to find a movie tonight")
    assert not echoes_a_declaration("I can find movies by genre and optionally director.",
                                    TOOL_TEXTS, "I want to find a movie tonight")


def test_a_call_written_as_text_is_told_from_an_answer() -> None:
    names = dict.fromkeys(["shopping_list", "playMedia", "music", "Weather"], ())
    assert writes_a_call('shopping_list {"action": "add", "items": ["sunscreen"]}', names)
    assert writes_a_call("tell_joke {}", names)  # arguments alone: no tool named
    assert writes_a_call("Sure, playMedia for you.", names)
    # Names that are words stay words.
    assert not writes_a_call("Weather is hard to predict; music helps.", names)
    assert not writes_a_call("Pack sunscreen, a hat and a towel.", names)


def test_a_tools_name_before_its_parameter_and_a_colon_is_a_call_written_out() -> None:
    keys = {"find_movies": ["location", "genre"], "get_weather": ["city"]}
    assert writes_a_call("Find movies location: Paris", keys)
    assert writes_a_call("find movies, genre : comedy", keys)
    # A parameter's name in a sentence of its own, or another tool's, writes no call.
    assert not writes_a_call("I can find movies. Location: Paris", keys)
    assert not writes_a_call("Find movies city: Paris", keys)
    assert not writes_a_call("The location: Paris, France.", keys)


def test_an_answer_that_restates_an_example_request_is_no_answer() -> None:
    examples = ["what's 12 times 4", "how many miles is 10 kilometers"]
    assert restates_an_example("What is 12 times 4?", examples, "I feel like going out")
    # The user's own request, and an answer to it, are not a copy.
    assert not restates_an_example("What is 12 times 4?", examples, "what is 12 times 4")
    assert not restates_an_example("12 times 4 is 48.", examples, "what's 12 times 4")
    assert not restates_an_example("Paris is the capital of France.", examples,
                                   "what's the capital of france")


def test_an_example_request_said_back_is_refused(make_center: Any) -> None:
    # Scripted LLM (the protocol is under test): it copies the command's example request.
    backend = ScriptedBackend([text("What is 2 plus 2?")])
    center = make_center(backend)
    cid = conversation_id()
    center.start(cid, [], commands=[CALCULATOR_COMMAND])
    reply = center.command(cid, "we're going out to the lake tonight")
    assert (reply["stop_reason"], reply["assistant_message"]) == ("complete", REFUSAL)
