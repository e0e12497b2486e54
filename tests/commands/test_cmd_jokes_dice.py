from __future__ import annotations

import pytest
from command_helpers import make_context, request

from jarvis.commands.dice import RollDiceCommand
from jarvis.commands.jokes import JOKES, TellJokeCommand, jokes_about


def test_joke_collection() -> None:
    assert len(JOKES) >= 40
    assert len({j.setup for j in JOKES}) == len(JOKES)


def test_tell_joke_avoids_repeats_and_is_spoken() -> None:
    cmd = TellJokeCommand().bind(make_context())
    told = set()
    for _ in range(10):
        response = cmd.execute(request())
        assert response.success and response.message
        assert response.message == (f"{response.context_data['setup']} "
                                    f"{response.context_data['punchline']}")
        told.add(response.context_data["setup"])
    assert len(told) == 10


def test_topic_filter() -> None:
    cmd = TellJokeCommand().bind(make_context())
    response = cmd.execute(request(), topic="dogs")
    assert response.context_data["topic_found"] is True
    assert response.context_data["setup"] in {j.setup for j in jokes_about("dog")}
    assert all("space" in j.topics for j in jokes_about("space jokes"))
    missing = cmd.execute(request(), topic="accountants")
    assert missing.success and missing.context_data["topic_found"] is False
    assert missing.message.startswith("I don't know a joke about accountants, but here's one.")


def test_joke_is_not_direct_answer_and_pre_routes() -> None:
    cmd = TellJokeCommand()
    assert cmd.allow_direct_answer is False
    assert cmd.pre_route("Tell me a joke!") is not None
    assert cmd.pre_route("tell me a joke about cats") is None  # the LLM fills the topic


def test_roll_dice_defaults_and_bounds() -> None:
    cmd = RollDiceCommand().bind(make_context())
    one = cmd.execute(request())
    assert one.context_data["count"] == 1 and one.context_data["sides"] == 6
    assert 1 <= one.context_data["rolls"][0] <= 6
    many = cmd.execute(request(), count=100, sides=1000)
    rolls = many.context_data["rolls"]
    assert len(rolls) == 100 and all(1 <= r <= 1000 for r in rolls)
    assert many.context_data["total"] == sum(rolls)
    three = cmd.execute(request(), count=3, sides=20)
    assert three.message.endswith(f"for a total of {three.context_data['total']}.")


@pytest.mark.parametrize(("args", "param"), [({"count": 0}, "count"), ({"count": 101}, "count"),
                                             ({"sides": 1}, "sides"), ({"sides": 1001}, "sides")])
def test_roll_dice_out_of_bounds(args: dict, param: str) -> None:
    response = RollDiceCommand().bind(make_context()).execute(request(), **args)
    assert response.is_validation_error
    assert response.context_data["errors"][0]["param_name"] == param


@pytest.mark.parametrize(
    ("text", "arguments"),
    [("roll a die", {}), ("roll two dice", {"count": 2}), ("roll a d20", {"sides": 20}),
     ("roll 3d6", {"count": 3, "sides": 6}),
     ("roll three twelve-sided dice", {"count": 3, "sides": 12})],
)
def test_dice_pre_route(text: str, arguments: dict) -> None:
    hit = RollDiceCommand().pre_route(text)
    assert hit is not None and hit.arguments == arguments


def test_dice_post_process() -> None:
    cmd = RollDiceCommand()
    assert cmd.post_process_tool_call({"count": "two", "sides": "d8"}, "") == {
        "count": 2, "sides": 8}
    assert cmd.post_process_tool_call({}, "roll 2d10 please") == {"sides": 10}
    assert cmd.pre_route("roll over") is None
