"""The spoken question for one parameter's value, from its name, kind and options."""

from __future__ import annotations

import pytest

from jarvis.center.questions import parameter_question


@pytest.mark.parametrize(("param", "options", "kind", "question"), [
    ("city", None, "str", "What city should I use?"),
    ("to_unit", None, "str", "To what unit?"),
    ("from_city", None, "str", "From what city?"),
    ("minutes", None, "int", "How many minutes?"),
    ("duration_seconds", None, "int", "How many seconds?"),
    ("number_of_riders", None, "int", "How many riders?"),
    ("level", None, "int", "What level should I use?"),
    ("account_type", ["checking", "savings"], "str", "Which account type: checking or savings?"),
    ("shared_ride", None, "bool", "Shared ride: yes or no?"),
])
def test_a_question_names_the_value_as_people_ask_for_it(
        param: str, options: list[str] | None, kind: str, question: str) -> None:
    assert parameter_question(param, options, kind) == question
