import re

from jarvis.center.time_units import SECONDS, spellings, unit_named, unit_pattern


def test_a_unit_is_named_by_its_name_its_plural_or_a_short_form() -> None:
    assert [unit_named(w) for w in ("Hours", "hrs", "min", "fortnights", "ms")] == [
        "hour", "hour", "minute", "fortnight", "millisecond"]
    assert unit_named("house") is None and unit_named("mo") is None
    assert SECONDS["minute"] * 90 == SECONDS["hour"] * 1.5


def test_spellings_leave_short_forms_out_when_asked() -> None:
    assert spellings(["hour"]) == {"hour": "hour", "hours": "hour", "hr": "hour", "hrs": "hour"}
    assert spellings(["hour"], short=False) == {"hour": "hour", "hours": "hour"}


def test_a_unit_pattern_matches_whole_spellings() -> None:
    found = re.findall(rf"\b(?:{unit_pattern(['minute', 'second'])})\b",
                       "5 minutes 30 secs and a min, not minuets")
    assert found == ["minutes", "secs", "min"]
