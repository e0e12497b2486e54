"""JSON text as the decoder writes it: where a value ends, where a string may close."""

from __future__ import annotations

import re


def json_value_end(buf: bytes) -> int | None:
    """Index just past the first complete JSON value in `buf` (None while incomplete).

    Strings, arrays and objects end at their closing byte; scalars (numbers, true, ...)
    end where a delimiter shows up, which the grammar guarantees will follow.
    """
    if not buf:
        return None
    first = buf[0]
    depth = 0
    in_string = False
    escaped = False
    if first not in b'"[{':
        for i, b in enumerate(buf):
            if b in b",]} \n":
                return i
        return None
    for i, b in enumerate(buf):
        if in_string:
            if escaped:
                escaped = False
            elif b == 0x5C:  # backslash
                escaped = True
            elif b == 0x22:  # closing quote
                in_string = False
                if depth == 0:
                    return i + 1
        elif b == 0x22:
            in_string = True
        elif b in b"[{":
            depth += 1
        elif b in b"]}":
            depth -= 1
            if depth == 0:
                return i + 1
    return None


# Longest free string value in a call (a device name, a reminder text, a search query).
MAX_STRING_BYTES = 300


def completes(value: bytes, more: bytes) -> bool:
    """Whether `more` completes the JSON value `value` starts."""
    return json_value_end(value + more) is not None


def closable(value: bytes) -> bool:
    """Whether a string value may end here: not inside an escape or a UTF-8 character."""
    try:
        value.decode("utf-8")
    except UnicodeDecodeError:
        return False
    backslashes = len(value) - len(value.rstrip(b"\\"))
    return backslashes % 2 == 0 and re.search(rb"\\u[0-9a-fA-F]{0,3}$", value) is None
