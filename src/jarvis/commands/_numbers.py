"""Spoken numbers: "twenty five" -> 25, and results formatted for speech (8, not 8.0)."""

from __future__ import annotations

import math
import re

__all__ = ["format_number", "parse_number"]

_SMALL = {
    "zero": 0, "oh": 0, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6,
    "seven": 7, "eight": 8, "nine": 9, "ten": 10, "eleven": 11, "twelve": 12,
    "thirteen": 13, "fourteen": 14, "fifteen": 15, "sixteen": 16, "seventeen": 17,
    "eighteen": 18, "nineteen": 19,
}
_TENS = {
    "twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
    "eighty": 80, "ninety": 90,
}
_SCALES = {"hundred": 100, "thousand": 1_000, "million": 1_000_000}
_ARTICLES = {"a": 1, "an": 1}
_NUMERIC = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)")
_THOUSANDS = re.compile(r"[+-]?[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]+)?")


def _article_counts(words: list[str], allow_article: bool) -> bool:
    if len(words) == 1:
        return allow_article
    return words[1] in _SCALES


def _words_to_int(words: list[str], allow_article: bool) -> int | None:
    if not words:
        return None
    total = current = 0
    seen = False
    for index, word in enumerate(words):
        if word in _SMALL:
            current += _SMALL[word]
        elif word in _TENS:
            current += _TENS[word]
        elif word in _ARTICLES and index == 0 and _article_counts(words, allow_article):
            current += 1  # "a hundred"; alone ("an hour") only where the caller allows it
        elif word in _SCALES:
            scale = _SCALES[word]
            current = max(current, 1) * scale
            if scale >= 1_000:
                total += current
                current = 0
        elif word == "and" and seen:
            continue
        else:
            return None
        seen = True
    return total + current


def parse_number(text: object, allow_article: bool = False) -> float | None:
    """A number from digits or English words; None when `text` is not one.

    Accepts "5", "-2.5", "1,000", "five", "twenty-five", "one hundred and two",
    "negative three", "two point five"; with `allow_article`, "a"/"an" mean 1.
    """
    if isinstance(text, bool):
        return None
    if isinstance(text, int | float):
        return float(text) if math.isfinite(text) else None
    if not isinstance(text, str):
        return None
    cleaned = text.strip().lower()
    if _THOUSANDS.fullmatch(cleaned):
        cleaned = cleaned.replace(",", "")
    if _NUMERIC.fullmatch(cleaned):
        return float(cleaned)
    words = cleaned.replace("-", " ").split()
    sign = 1.0
    if words and words[0] in ("negative", "minus"):
        sign, words = -1.0, words[1:]
    fraction = 0.0
    if "point" in words:
        at = words.index("point")
        digits = [_SMALL.get(w) for w in words[at + 1 :]]
        if not digits or any(d is None or d > 9 for d in digits):
            return None
        fraction = float("0." + "".join(str(d) for d in digits))
        words = words[:at]
    whole = _words_to_int(words, allow_article)
    if whole is None:
        return None
    return sign * (whole + fraction)


def format_number(value: float, places: int = 4) -> str:
    """A number as a person would say it: 8 not 8.0, 0.3333 not 0.333333333."""
    if not math.isfinite(value):
        return "infinity" if value > 0 else "negative infinity" if value < 0 else "undefined"
    rounded = round(value, places)
    if rounded == int(rounded):
        whole = int(rounded)
        return "0" if whole == 0 else str(whole)
    text = f"{rounded:.{places}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text
