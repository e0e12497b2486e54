"""The type-string grammar: every accepted spelling, and a clear ValueError for the rest."""

from __future__ import annotations

import pytest

from jarvis.sdk import JarvisParameter, ParamType, parse_type

SCALARS = {
    "string": "string",
    "str": "string",
    "integer": "int",
    "int": "int",
    "float": "float",
    "boolean": "bool",
    "bool": "bool",
    "dict": "dict",
    "datetime": "datetime",
    "date": "date",
    "time": "time",
    "timedelta": "timedelta",
}
ITEM_TYPES = ["datetime", "date", "time", "timedelta", "string", "int", "float", "bool"]
SCHEMAS = {
    "string": {"type": "string"},
    "int": {"type": "integer"},
    "float": {"type": "number"},
    "bool": {"type": "boolean"},
    "dict": {"type": "object"},
    "datetime": {"type": "string", "format": "date-time"},
    "date": {"type": "string", "format": "date"},
    "time": {"type": "string", "format": "time"},
    "timedelta": {"type": "string", "format": "duration"},
}


@pytest.mark.parametrize(("spelling", "kind"), SCALARS.items())
def test_every_scalar_spelling_parses_to_its_kind(spelling: str, kind: str) -> None:
    parsed = parse_type(spelling)
    assert parsed.kind == kind
    assert not parsed.is_array
    assert parsed.json_schema() == SCHEMAS[kind]


@pytest.mark.parametrize("spelling", ["array", "list"])
def test_untyped_arrays(spelling: str) -> None:
    parsed = parse_type(spelling)
    assert parsed.is_array and parsed.item is None
    assert parsed.json_schema() == {"type": "array"}
    assert parsed.name == "array"


@pytest.mark.parametrize("item", ITEM_TYPES)
@pytest.mark.parametrize("template", ["array<{}>", "array[{}]", "{}[]"])
def test_three_array_spellings_for_every_item_type(template: str, item: str) -> None:
    parsed = parse_type(template.format(item))
    assert parsed.is_array
    assert parsed.item is not None and parsed.item.kind == item
    assert parsed.json_schema() == {"type": "array", "items": SCHEMAS[item]}
    assert parsed.name == f"array<{item}>"
    # The three spellings are one type.
    assert parsed == parse_type(f"array<{item}>")


@pytest.mark.parametrize("alias", ["str", "integer", "boolean"])
def test_item_aliases_are_accepted_too(alias: str) -> None:
    assert parse_type(f"array<{alias}>") == parse_type(f"array<{SCALARS[alias]}>")


@pytest.mark.parametrize(
    "spelling",
    ["array< int >", " int ", "array [ date ]", "datetime []", "\tarray<float>\n", "array <bool>"],
)
def test_whitespace_around_tokens_is_tolerated(spelling: str) -> None:
    parse_type(spelling)
    JarvisParameter("p", spelling)


@pytest.mark.parametrize(
    "spelling",
    [
        "Int",
        "STRING",
        "Array<int>",
        "array<>",
        "array[]",
        "[]",
        "array<array<int>>",
        "array<array>",
        "array<list>",
        "int[][]",
        "array<dict>",
        "array[dict]",
        "dict[]",
        "list<int>",
        "list[int]",
        "array<int",
        "arrayint>",
        "number",
        "object",
        "any",
        "",
        "   ",
        "int float",
        "array<int,str>",
        "tuple",
        "datetime.datetime",
    ],
)
def test_anything_else_is_a_value_error_listing_the_valid_types(spelling: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_type(spelling)
    message = str(caught.value)
    assert repr(spelling) in message or spelling in message
    for valid in ("string|str", "integer|int", "timedelta", "array<T>", "array[T]", "T[]"):
        assert valid in message
    # The same error at parameter construction, not later.
    with pytest.raises(ValueError, match="Valid types"):
        JarvisParameter("p", spelling)


@pytest.mark.parametrize("not_text", [None, 3, ["int"], str])
def test_a_type_that_is_not_a_string_is_a_value_error(not_text: object) -> None:
    with pytest.raises(ValueError, match="must be a string"):
        parse_type(not_text)  # type: ignore[arg-type]


def test_aliases_are_equal_types_whatever_the_spelling() -> None:
    assert parse_type("int") == parse_type("integer")
    assert hash(parse_type("str")) == hash(parse_type("string"))
    assert parse_type("int[]") != parse_type("float[]")
    assert isinstance(parse_type("bool"), ParamType)


@pytest.mark.parametrize(
    ("spelling", "words"),
    [
        ("int", "an integer"),
        ("date", "YYYY-MM-DD"),
        ("datetime", "with timezone"),
        ("timedelta", "duration"),
        ("array<time>", "a list of a time"),
        ("list", "a list"),
    ],
)
def test_describe_gives_plain_words_for_retry_messages(spelling: str, words: str) -> None:
    assert words in parse_type(spelling).describe()
