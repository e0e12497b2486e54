from __future__ import annotations

import pytest
from command_helpers import make_context, request

from jarvis.commands.calculate import CalculateCommand, normalize_operation, parse_expression


@pytest.fixture
def calc() -> CalculateCommand:
    cmd = CalculateCommand()
    cmd.bind(make_context())
    return cmd


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("what is 5 plus 3", (5, 3, "add")),
        ("5 times 7", (5, 7, "multiply")),
        ("10 divided by 2", (10, 2, "divide")),
        ("What's twelve minus four?", (12, 4, "subtract")),
        ("how much is 2.5 times 4", (2.5, 4, "multiply")),
        ("what is twenty-five plus one", (25, 1, "add")),
        ("subtract 3 from 10", (10, 3, "subtract")),
        ("multiply 6 by 7", (6, 7, "multiply")),
        ("8 / 4", (8, 4, "divide")),
        ("calculate 100 over 8", (100, 8, "divide")),
        ("what is 15 percent of 80", (15, 80, "percent")),
        ("what's twenty per cent of sixty?", (20, 60, "percent")),
        ("12.5% of 40", (12.5, 40, "percent")),
    ],
)
def test_pre_route_hits(calc: CalculateCommand, text: str, expected: tuple) -> None:
    hit = calc.pre_route(text)
    assert hit is not None
    assert (hit.arguments["num1"], hit.arguments["num2"], hit.arguments["operation"]) == expected


@pytest.mark.parametrize(
    "text",
    ["what time is it", "play five songs", "what is the square root of 9",
     "set a timer for 5 minutes", "what is 5", "plus", "add milk and eggs to my shopping list",
     "what percent of the earth is covered by water", "set the volume to 20 percent"],
)
def test_pre_route_misses(calc: CalculateCommand, text: str) -> None:
    assert calc.pre_route(text) is None


def test_pre_route_result_runs_through_execute(calc: CalculateCommand) -> None:
    hit = calc.pre_route("what is 5 plus 3")
    assert hit is not None
    response = calc.execute(request("what is 5 plus 3"), **hit.arguments)
    assert response.success
    assert response.message == "5 plus 3 is 8."
    assert response.context_data["result"] == 8
    assert response.wait_for_input  # "now multiply that by 2" may follow


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("what is 2 plus 2 times 3", "2 plus 6 is 8."),
        ("2 times 3 plus 4 times 5", "6 plus 20 is 26."),
        ("what's 10 minus 2 minus 3", "8 minus 3 is 5."),
        ("100 divided by 4 times 2", "25 times 2 is 50."),
        ("what is 1 + 2 * 3", "1 plus 6 is 7."),
    ],
)
def test_three_numbers_are_worked_out_by_precedence(calc: CalculateCommand, text: str,
                                                    said: str) -> None:
    hit = calc.pre_route(text)
    assert hit is not None
    assert calc.execute(request(text), **hit.arguments).message == said


def test_a_chain_dividing_by_zero_is_left_to_the_call(calc: CalculateCommand) -> None:
    assert calc.pre_route("2 plus 3 divided by 0") is None


def test_follow_up_uses_previous_result(calc: CalculateCommand) -> None:
    first = calc.execute(request(), num1=5, num2=3, operation="add")
    second = calc.execute(request("now multiply that by 2"),
                          num1=first.context_data["result"], num2=2, operation="multiply")
    assert second.message == "8 times 2 is 16."


def test_formats_results_for_speech(calc: CalculateCommand) -> None:
    assert calc.execute(request(), num1=10, num2=4, operation="divide").message == (
        "10 divided by 4 is 2.5.")
    assert calc.execute(request(), num1=1, num2=3, operation="divide").message == (
        "1 divided by 3 is 0.3333.")
    assert calc.execute(request(), num1=3, num2=5, operation="subtract").message == (
        "3 minus 5 is -2.")


def test_percent_of_a_number(calc: CalculateCommand) -> None:
    hit = calc.pre_route("what is 15 percent of 80")
    assert hit is not None
    response = calc.execute(request("what is 15 percent of 80"), **hit.arguments)
    assert response.message == "15 percent of 80 is 12."
    assert response.context_data["result"] == 12
    assert calc.post_process_tool_call({"num1": 15, "num2": 80, "operation": "%"}, "")[
        "operation"] == "percent"
    # The same number either way round, but said as the user put it.
    swapped = calc.post_process_tool_call({"num1": 80, "num2": 15, "operation": "percent"},
                                          "I need fifteen percent of 80 for the tip")
    assert calc.execute(request(), **swapped).message == "15 percent of 80 is 12."
    kept = calc.post_process_tool_call({"num1": 12.5, "num2": 40, "operation": "percent"},
                                       "what is 12.5% of 40")
    assert (kept["num1"], kept["num2"]) == (12.5, 40)


def test_division_by_zero_is_a_spoken_error(calc: CalculateCommand) -> None:
    response = calc.execute(request(), num1=5, num2=0, operation="divide")
    assert not response.success
    assert response.message == "I can't divide by zero."
    assert not response.is_validation_error


def test_post_process_fixes_small_model_mistakes(calc: CalculateCommand) -> None:
    fixed = calc.post_process_tool_call({"num1": "5", "num2": "three", "operation": "plus"},
                                        "5 plus 3")
    assert fixed == {"num1": 5.0, "num2": 3.0, "operation": "add"}
    assert calc.execute(request(), **fixed).message == "5 plus 3 is 8."
    for word, op in [("times", "multiply"), ("x", "multiply"), ("Minus", "subtract"),
                     ("divided by", "divide"), ("ADD", "add")]:
        assert normalize_operation(word) == op


def test_unknown_operation_is_a_validation_error_with_valid_values(calc: CalculateCommand) -> None:
    response = calc.execute(request(), num1=2, num2=3, operation="power")
    assert response.is_validation_error
    assert response.context_data["valid_values"]["operation"] == [
        "add", "subtract", "multiply", "divide", "percent"]


def test_string_number_not_fixed_is_refused(calc: CalculateCommand) -> None:
    response = calc.execute(request(), num1="lots", num2=3, operation="add")
    assert response.is_validation_error
    assert response.context_data["errors"][0]["param_name"] == "num1"


def test_missing_required_parameter_raises(calc: CalculateCommand) -> None:
    with pytest.raises(ValueError, match="num2"):
        calc.execute(request(), num1=2, operation="add")


def test_parse_expression_none_for_empty() -> None:
    assert parse_expression("") is None
