"""The SGD benchmark's scoring of answers in words (bench/sgd_match.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parents[1] / "bench"))
try:
    from sgd_match import states_tool_fact
finally:
    sys.path.pop(0)


@pytest.mark.parametrize(("answer", "flagged"), [
    ("Balance: 0", True),
    ("It opens at 7 am on Friday.", True),
    ("I've booked a table for you.", True),
    ("See you at seven p.m. then.", True),
    # "am" is the verb here, and a refusal may name a time.
    ("Yes, I am down with that.", False),
    ("I can't book anything at 5 pm.", False),
    ("Hello! What can I do for you?", False),
])
def test_an_answer_stating_what_only_a_tool_knows_is_counted(answer: str,
                                                             flagged: bool) -> None:
    assert states_tool_fact(answer) is flagged
