"""`calculate`: the four arithmetic operations and a percentage of two numbers, with a
fast path for "what is 5 plus 3" or "15 percent of 80" that needs no LLM."""

from __future__ import annotations

import re
from typing import Any

from jarvis.commands._numbers import format_number, parse_number
from jarvis.sdk import (
    CommandAntipattern,
    CommandExample,
    CommandResponse,
    IJarvisCommand,
    JarvisParameter,
    PreRouteResult,
    RequestInformation,
)

__all__ = ["OPERATIONS", "CalculateCommand", "compute", "normalize_operation", "parse_expression"]

# "percent" is num1 percent of num2 ("15 percent of 80" is 12).
OPERATIONS = ("add", "subtract", "multiply", "divide", "percent")

# Words and symbols small models (and people) use for each operation.
_OPERATION_ALIASES = {
    "add": ("add", "plus", "+", "sum", "addition", "added", "and", "adding"),
    "subtract": ("subtract", "minus", "-", "less", "difference", "subtraction", "subtracted",
                 "take away", "sub"),
    "multiply": ("multiply", "times", "x", "*", "×", "multiplied", "multiplied by", "product",
                 "multiplication", "mult", "mul"),
    "divide": ("divide", "divided", "divided by", "over", "/", "÷", "quotient", "division",
               "div"),
    "percent": ("percent", "percent of", "per cent", "%", "percentage", "pct"),
}
_ALIAS_TO_OPERATION = {
    alias: op for op, aliases in _OPERATION_ALIASES.items() for alias in aliases
}
# The words above that people say (not symbols); the center favours the operation said.
_SAID_OPERATIONS = {
    "add": ["plus", "add", "sum", "added"],
    "subtract": ["minus", "take away", "subtract", "subtracted"],
    "multiply": ["times", "multiply", "multiplied"],
    "divide": ["divided", "divide", "split"],
    "percent": ["percent", "per cent"],
}
_SPOKEN = {"add": "plus", "subtract": "minus", "multiply": "times", "divide": "divided by",
           "percent": "percent of"}

_PREFIX = re.compile(
    r"^(?:(?:hey |ok )?jarvis,? )?(?:please )?"
    r"(?:what(?:'s| is)|whats|how much is|calculate|compute|work out|tell me)?\s*",
)
_INFIX = re.compile(
    r"\s+(plus|minus|times|multiplied by|divided by|over|x)\s+|\s*([+*/×÷-])\s*"
)
_VERB_FORMS = (
    (re.compile(r"^add (.+?) (?:and|to) (.+)$"), "add", False),
    (re.compile(r"^subtract (.+?) from (.+)$"), "subtract", True),
    (re.compile(r"^multiply (.+?) (?:by|and|with) (.+)$"), "multiply", False),
    (re.compile(r"^divide (.+?) (?:by|into) (.+)$"), "divide", False),
    (re.compile(r"^(.+?) ?(?:%|percent|per cent) of (.+)$"), "percent", False),
)


def normalize_operation(value: object) -> str | None:
    """"plus" -> "add", "times" -> "multiply"; None when it is no known operation."""
    if not isinstance(value, str):
        return None
    text = value.strip().lower().replace("_", " ")
    if text in OPERATIONS:
        return text
    return _ALIAS_TO_OPERATION.get(text)


def compute(num1: float, num2: float, operation: str) -> float:
    """The result; raises ZeroDivisionError for a division by zero."""
    if operation == "add":
        return num1 + num2
    if operation == "subtract":
        return num1 - num2
    if operation == "multiply":
        return num1 * num2
    if operation == "divide":
        return num1 / num2
    if operation == "percent":
        return num1 * num2 / 100
    raise ValueError(f"Unknown operation '{operation}'")


def _clean(text: str) -> str:
    text = text.lower().strip().rstrip("?.!").strip()
    text = _PREFIX.sub("", text, count=1)
    text = re.sub(r"\s*(?:equals?|=)\s*$", "", text)
    return text.strip()


def parse_expression(text: str) -> dict[str, Any] | None:
    """"what is 5 plus 3" -> {"num1": 5.0, "num2": 3.0, "operation": "add"}, else None."""
    cleaned = _clean(text)
    if not cleaned or len(cleaned.split()) > 12:
        return None
    for pattern, operation, swapped in _VERB_FORMS:
        m = pattern.match(cleaned)
        if m:
            a, b = parse_number(m[1]), parse_number(m[2])
            if a is not None and b is not None:
                num1, num2 = (b, a) if swapped else (a, b)
                return {"num1": num1, "num2": num2, "operation": operation}
    chain = _chain(cleaned)
    if chain is not None:
        return chain
    for m in _INFIX.finditer(cleaned):
        left, right = cleaned[: m.start()], cleaned[m.end():]
        a, b = parse_number(left), parse_number(right)
        if a is None or b is None:
            continue  # e.g. the "-" inside "twenty-five"
        operation = normalize_operation(m[1] or m[2])
        if operation:
            return {"num1": a, "num2": b, "operation": operation}
    return None


def _chain(cleaned: str) -> dict[str, Any] | None:
    """"2 plus 2 times 3" -> 2 plus 6: three or more numbers worked out, by the usual
    precedence, down to the last operation; None unless every piece reads as a number."""
    # The hyphen of "twenty-five" is no minus.
    pieces = _INFIX.split(re.sub(r"(?<=[a-z])-(?=[a-z])", " ", cleaned))
    numbers = [parse_number(piece) for piece in pieces[::3]]
    operations = [normalize_operation(word or symbol)
                  for word, symbol in zip(pieces[1::3], pieces[2::3], strict=True)]
    values = [n for n in numbers if n is not None]
    ops = [op for op in operations if op is not None]
    if len(values) < 3 or len(values) < len(numbers) or len(ops) < len(operations):
        return None
    while len(ops) > 1:
        at = next((i for i, op in enumerate(ops) if op in ("multiply", "divide")), 0)
        try:
            values[at:at + 2] = [compute(values[at], values[at + 1], ops[at])]
        except ZeroDivisionError:
            return None  # the LLM's call gets the answer that says so
        del ops[at]
    return {"num1": values[0], "num2": values[1], "operation": ops[0]}


def _percentage_said(text: str) -> float | None:
    """The number said right before "percent" ("fifteen percent of 80" -> 15)."""
    m = re.search(r"([\w.,-]+(?: [\w-]+){0,2}) ?(?:%|(?:percent|per cent)\b)",
                  text.lower())
    if m is None:
        return None
    words = m[1].split()
    # The longest run of words before "percent" that reads as a number.
    return next((n for i in range(len(words))
                 if (n := parse_number(" ".join(words[i:]))) is not None), None)


class CalculateCommand(IJarvisCommand):
    """Adds, subtracts, multiplies or divides two numbers, or takes a percentage."""

    @property
    def command_name(self) -> str:
        return "calculate"

    @property
    def description(self) -> str:
        return (
            "Do arithmetic on two numbers: add, subtract, multiply, divide, or take a "
            "percentage. Use for 'what is 5 plus 3', '12 times 4', '100 divided by 8', "
            "'15 percent of 80', and for "
            "follow-ups on the last result such as 'now multiply that by 2'."
        )

    @property
    def parameters(self) -> list[JarvisParameter]:
        return [
            JarvisParameter("num1", "float", required=True,
                            description="The first number (for follow-ups: the previous result)",
                            example=5),
            JarvisParameter("num2", "float", required=True, description="The second number",
                            example=3),
            JarvisParameter("operation", "string", required=True,
                            description="The arithmetic operation",
                            enum_values=list(OPERATIONS), enum_synonyms=_SAID_OPERATIONS),
        ]

    @property
    def examples(self) -> list[CommandExample]:
        return [
            CommandExample("what is 5 plus 3", {"num1": 5, "num2": 3, "operation": "add"},
                           is_primary=True),
            CommandExample("what's 12 times 4", {"num1": 12, "num2": 4, "operation": "multiply"}),
            CommandExample("100 divided by 8", {"num1": 100, "num2": 8, "operation": "divide"}),
            CommandExample("subtract 7 from 20", {"num1": 20, "num2": 7, "operation": "subtract"}),
            CommandExample("what is 3.5 minus 1.25",
                           {"num1": 3.5, "num2": 1.25, "operation": "subtract"}),
            CommandExample("how much is 15 percent of 80",
                           {"num1": 15, "num2": 80, "operation": "percent"}),
        ]

    @property
    def critical_rules(self) -> list[str]:
        return [
            "operation must be one of add, subtract, multiply, divide, percent: "
            "'plus' -> add, 'minus' -> subtract, 'times' -> multiply, 'divided by' -> divide, "
            "'A percent of B' -> percent with num1=A, num2=B",
            "num1 and num2 are numbers, not words: 'five' -> 5",
            "'subtract A from B' means num1=B, num2=A",
        ]

    @property
    def rules(self) -> list[str]:
        return [
            "For 'now multiply that by 2' after an answer, num1 is the previous result",
        ]

    @property
    def antipatterns(self) -> list[CommandAntipattern]:
        return [
            CommandAntipattern(
                "convert_measurement",
                "Converting units ('5 miles in kilometers') is convert_measurement, not calculate.",
            ),
        ]

    @property
    def keywords(self) -> list[str]:
        return ["plus", "minus", "times", "divided", "multiply", "add", "subtract", "math",
                "calculate", "multiplied", "sum", "total"]

    def pre_route(self, voice_command: str) -> PreRouteResult | None:
        arguments = parse_expression(voice_command)
        return PreRouteResult(arguments=arguments) if arguments else None

    def post_process_tool_call(self, args: dict[str, Any], voice_command: str) -> dict[str, Any]:
        fixed = dict(args)
        operation = normalize_operation(fixed.get("operation"))
        if operation:
            fixed["operation"] = operation
        for name in ("num1", "num2"):
            value = fixed.get(name)
            if isinstance(value, str):
                number = parse_number(value)
                if number is not None:
                    fixed[name] = number
        said = _percentage_said(voice_command)
        if operation == "percent" and said is not None and fixed.get("num2") == said:
            # "fifteen percent of 80" written the other way round: the same number, but
            # the answer would say "80 percent of 15".
            fixed["num1"], fixed["num2"] = fixed["num2"], fixed.get("num1")
        return fixed

    def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
        num1: float = kwargs["num1"]
        num2: float = kwargs["num2"]
        operation: str = kwargs["operation"]
        expression = f"{format_number(num1)} {_SPOKEN[operation]} {format_number(num2)}"
        try:
            result = compute(num1, num2, operation)
        except ZeroDivisionError:
            return CommandResponse.error_response(
                "I can't divide by zero.",
                {"num1": num1, "num2": num2, "operation": operation, "error": "division_by_zero"},
            )
        spoken = format_number(result)
        return CommandResponse.follow_up_response(
            {
                "num1": num1,
                "num2": num2,
                "operation": operation,
                "expression": expression,
                "result": result,
                "result_text": spoken,
            },
            message=f"{expression} is {spoken}.",
        )
