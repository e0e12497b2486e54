"""Walking the structure of a tool call, so the model is only asked where the output is
really open.

The walker follows the tool's JSON schema (the same structure `grammar.py` turns into
GBNF):

- text the structure forces (`{"name": "`, keys, separators) is queued and never sampled;
- a choice between known strings (tool names, enum values, booleans, a date the user
  named, "another key or close the object") is one decision among its options, with
  priors for what the user said and against what nobody said;
- free values (strings, numbers, arrays of them) are sampled.

How each step reaches the model (tokens, batches, the grammar sampler) is the decoder's
(`decoder.Decoder`, a `CallWalker`).
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from jarvis.center.grounding import in_unit, unit_of_time
from jarvis.center.llm.base import LLMBadResponseError
from jarvis.center.llm.embedded.decode_inputs import Heard, KeyBiases
from jarvis.center.llm.embedded.grammar import (
    arguments_schema,
    array_bounds,
    is_structured_object,
    json_literal,
    name_option,
    name_prefix,
    ordered_properties,
    tool_name,
)
from jarvis.center.llm.embedded.grammar_sampler import GrammarSampler
from jarvis.center.llm.embedded.json_text import MAX_STRING_BYTES
from jarvis.center.llm.embedded.schema_kinds import (
    as_kind,
    date_kind,
    is_date_schema,
    is_duration,
    is_time,
    known_literals,
    plain_text,
    walkable_array,
)

__all__ = ["CallWalker", "DecodeError"]


class DecodeError(LLMBadResponseError):
    """The output could not be completed (token budget, or an internal inconsistency)."""


class _Unsaid(Exception):
    """A required value nobody said was written: the call ends before its key."""

    def __init__(self, key: str, before: bytes) -> None:
        super().__init__(key)
        self.key, self.before = key, before


def _prefix_free(options: Sequence[bytes]) -> bool:
    return not any(
        i != j and b.startswith(a) for i, a in enumerate(options) for j, b in enumerate(options)
    )


class CallWalker(ABC):
    """A tool call's structure, walked step by step; the steps' tokens are a subclass's."""

    # The decoder's state the walk reads and sets (see decoder.Decoder).
    piece: Callable[[int], bytes]
    generated: list[int]
    overflow: bytes
    buffer: bytes
    grammar: GrammarSampler | None
    first_scores: dict[int, float]
    copied: Callable[[str], bool] | None
    never_said: Callable[[dict[str, Any], Sequence[str]], bool] | None
    unsaid_required: Callable[[str, str, Any], bool] | None
    unsaid_keys: list[str]
    _call_start: int

    @abstractmethod
    def literal(self, text: bytes) -> None:
        """Queue text the structure forces."""

    @abstractmethod
    def flush(self) -> None:
        """Tokenize and commit the queued forced text."""

    @abstractmethod
    def choose(self, options: Sequence[bytes], bias: Sequence[float] | None = None) -> int:
        """The index of the option the model prefers; its text is committed."""

    @abstractmethod
    def sample_value(self, opening: bytes = b"", cap: int | None = None,
                     banned: Sequence[int] = (), closers: frozenset[int] = frozenset()
                     ) -> bytes:
        """A free JSON value, sampled under the grammar."""

    @abstractmethod
    def sample_text(self, banned: Sequence[int], closers: frozenset[int],
                    optional: str | None = None) -> None:
        """A free string, checked against what the user said."""

    def _set_hints(self, heard: Heard, quote_tails: tuple[frozenset[int], Sequence[int]]
                   ) -> None:
        """What the request heard (dates, times, durations, choices) and the quote tokens."""
        self.date_hints = [list(vs) for vs in heard.dates if vs]
        self.choice_hints = heard.choices or {}  # tool -> parameter -> enum values said
        self.quote_tails = quote_tails  # tokens with text after a quote (see walk_value)
        # None: not known (no hints given at all), so a time argument is left to the model.
        self.time_hints = None if heard.times is None else list(heard.times)
        self.duration_hints = list(heard.durations)  # ISO-8601, the lengths of time said
        self.answered = heard.answered

    def _set_key_biases(self, biases: KeyBiases) -> None:
        """The priors added to the logits of optional keys (`_key_bias`) and heard choices."""
        self.optional_key_bias = biases.optional
        self.undated_key_bias = biases.undated
        self.dated_key_bias = biases.dated
        self.choice_bias = biases.choice
        self.unsaid_key_bias = biases.unsaid

    def heard_literals(self, schema: dict[str, Any]) -> list[bytes] | None:
        """The values a date, time or duration argument may take: those the user named.

        For a date or date-time, each value heard; for an array of them, each phrase's
        list ("this weekend": both days) and, when several phrases were said, all of
        them together (single days only when no list fits `maxItems`); for a time of
        day, the clock time said; for a duration, each length of time said. None when
        nothing was heard or the schema is none of those.
        """
        if self.time_hints and is_time(schema):
            return [json_literal(v).encode() for v in self.time_hints]
        if self.duration_hints and is_duration(schema):
            return [json_literal(v).encode() for v in self.duration_hints]
        if not self.date_hints:
            return None
        kind = date_kind(schema)
        if kind is not None:
            values = dict.fromkeys(as_kind(v, kind) for vs in self.date_hints for v in vs)
            return [json_literal(v).encode() for v in values]
        kind = date_kind(schema.get("items") or {}) if schema.get("type") == "array" else None
        if kind is None:
            return None
        phrases = [[as_kind(v, kind) for v in vs] for vs in self.date_hints]
        lists = [*phrases, [v for vs in phrases for v in vs]] if len(phrases) > 1 else phrases
        limit = schema.get("maxItems") if isinstance(schema.get("maxItems"), int) else None
        fits = [vs for vs in lists if limit is None or len(set(vs)) <= limit]
        # A whole phrase's days, not one of them: "this weekend" is both days (measured:
        # offered single days too, the model closed the list after Saturday).
        fits = fits or [[v] for vs in phrases for v in vs]
        options = dict.fromkeys(json.dumps(list(dict.fromkeys(vs))) for vs in fits)
        return [o.encode() for o in options] or None

    def walk_value(
        self, schema: dict[str, Any], heard: Sequence[str] = (), *, optional: str | None = None
    ) -> None:
        """One value: a choice when its literals are known, else sampled under the grammar.

        `heard`: enum values whose synonyms the user said; `choice_bias` favours them.
        `optional`: the key, when the value is an optional key's (see `sample_text`).
        """
        literals = self.heard_literals(schema)
        if literals is None:
            literals = known_literals(schema)
        if literals is not None and _prefix_free(literals):
            bias = None
            if heard and self.choice_bias:
                # An int or bool enum is heard as its text ("2"), chosen as its literal (2).
                wanted = {json_literal(v).encode() for v in heard} | {
                    str(v).encode() for v in heard}
                bias = [self.choice_bias if lit in wanted else 0.0 for lit in literals]
            self.choose(literals, bias if bias and any(bias) else None)
        elif is_structured_object(schema):
            self.walk_object(schema)
        elif walkable_array(schema):
            self.walk_array(schema, heard, optional)
        elif schema.get("type") == "string" and not schema.get("anyOf") and not schema.get("oneOf"):
            plain = not schema.get("format") and not schema.get("pattern")
            # A token such as `", "` would decide the next key inside the sampled value, past
            # `choose` and its biases: when the model starts one, the string ends there and
            # its closing quote joins the next choice's options (`", "label"` vs `"}`), so
            # they tokenize as the model would write them. A token with text before its
            # quote and more after it (`trash",`) is never taken.
            closers, inner = self.quote_tails
            if plain and self.copied is not None:
                self.sample_text(inner, closers, optional)
            else:
                self.sample_value(b'"', cap=MAX_STRING_BYTES if plain else None, banned=inner,
                                  closers=closers)
        else:
            self.sample_value()

    def walk_array(
        self, schema: dict[str, Any], heard: Sequence[str] = (), optional: str | None = None
    ) -> None:
        """Item by item: "another item or the end" is a choice, so its text (`", "`) is
        read with the next item's first token instead of being sampled a token a pass."""
        _, max_items = array_bounds(schema)
        self.literal(b"[")
        self.walk_value(schema["items"], heard, optional=optional)
        for _ in range(max_items - 1):
            if self.choose([b", ", b"]"]) == 1:
                return
            self.walk_value(schema["items"], heard, optional=optional)
        self.literal(b"]")

    def walk_object(
        self, schema: dict[str, Any], heard: Mapping[str, Sequence[str]] | None = None,
        top: bool = False,
    ) -> None:
        """Keys in schema order (as the grammar has them): required forced, optional chosen.

        `heard`: per key, the enum values whose synonyms the user said (see `walk_value`).
        `top`: the call's arguments, where an unsaid required value ends the call.
        """
        props = ordered_properties(schema)
        self.literal(b"{")
        i, first = 0, True
        while True:
            options: list[bytes] = []
            targets: list[int | None] = []
            for j in range(i, len(props)):
                key = json.dumps(props[j][0], ensure_ascii=False) + ": "
                options.append(((", " if not first else "") + key).encode())
                targets.append(j)
                if props[j][2]:
                    break
            else:
                options.append(b"}")
                targets.append(None)
            bias = None
            if len(options) > 1 and (
                    self.optional_key_bias or self.undated_key_bias or self.dated_key_bias
                    or (self.never_said and self.unsaid_key_bias)):
                # Every option but a required key or the close opens an optional key. A
                # date the user said pulls towards its key and the keys before it: closing
                # or jumping past it would lose the date, the keys before it would not.
                pull = self._heard_key(props, i)
                bias = [(0.0 if t is None or props[t][2] else self._key_bias(
                            props[t][1], (heard or {}).get(props[t][0], ())))
                        + (self.dated_key_bias if pull is not None and t is not None
                           and t <= pull else 0.0)
                        for t in targets]
            before = self._call_text() if top and self.unsaid_required else b""
            target = targets[self.choose(options, bias)]
            if target is None:
                return
            key, sub = props[target][0], props[target][1]
            counted = self._counted_in_time(key, sub)
            if counted is not None:  # "10 minutes" said for a number of seconds: 600
                self.choose(counted)
            else:
                self.walk_value(sub, (heard or {}).get(key, ()),
                                optional=None if props[target][2] else key)
                if top and props[target][2] and self._unsaid_text(key, sub, before):
                    raise _Unsaid(key, before)
            i, first = target + 1, False

    def _answered_required(self, schema: dict[str, Any]) -> dict[str, Any]:
        """`schema` with the key the user's last message answers made required, when the
        call is of its tool: an optional key the node asked for is written, not left out."""
        tool, key = self.answered or ("", "")
        if tool != self._tool or key not in (schema.get("properties") or {}):
            return schema
        return {**schema, "required": [*(schema.get("required") or []), key]}

    def _call_text(self) -> bytes:
        """The current call's decided text: committed tokens less what was sampled past the
        last value, plus the forced text still queued."""
        text = b"".join(self.piece(t) for t in self.generated[self._call_start:])
        return text[: len(text) - len(self.overflow)] + self.buffer

    def _unsaid_text(self, key: str, schema: dict[str, Any], before: bytes) -> bool:
        """Whether the free-text value just written for required `key` was never said;
        `before` is the call's text before the key (see `_call_text`)."""
        if self.unsaid_required is None or not plain_text(schema):
            return False
        written = self._call_text()[len(before):]  # `, "key": value`
        try:
            value = json.loads(written.split(b": ", 1)[1] or b"null")
        except (ValueError, IndexError):  # the closing quote not yet decided: judged as said
            return False
        return isinstance(value, str) and self.unsaid_required(self._tool, key, value)

    def _counted_in_time(self, key: str, schema: dict[str, Any]) -> list[bytes] | None:
        """For a number counted in a unit of time, the lengths of time said in that unit
        (a small model writes 10000 for "10 minutes" in seconds); None otherwise."""
        if not self.duration_hints or schema.get("type") not in ("integer", "number") or (
                schema.get("enum")):
            return None
        unit = unit_of_time(key, schema)
        if unit is None:
            return None
        values = in_unit(self.duration_hints, unit, whole=schema.get("type") == "integer")
        options = [v.encode() for v in values]
        return options if options and _prefix_free(options) else None

    def _key_bias(self, schema: dict[str, Any], heard: Sequence[str] = ()) -> float:
        """The prior for opening an optional key: more against a date or time not said,
        and against a value that could not be one the user said."""
        bias = self.optional_key_bias
        unsaid_date = is_date_schema(schema) and not self.date_hints
        unsaid_time = is_time(schema) and self.time_hints is not None and not self.time_hints
        if unsaid_date or unsaid_time:
            bias += self.undated_key_bias
        if self.never_said is not None and self.never_said(schema, heard):
            bias += self.unsaid_key_bias
        return bias

    def _heard_key(self, props: list[tuple[str, dict[str, Any], bool]], start: int) -> int | None:
        """Index of the first optional key from `start` whose value the user said.

        A date, or a time of day when no day was said (a day said carries its time).
        """
        for j in range(start, len(props)):
            _, schema, required = props[j]
            if required:
                continue
            if (is_date_schema(schema) and self.date_hints) or (
                    is_time(schema) and self.time_hints and not self.date_hints):
                return j
        return None

    def tool_call(
        self,
        tools: list[dict[str, Any]],
        grammar: GrammarSampler,
        name_bias: Sequence[float] | None = None,
    ) -> str:
        """One call inside the grammar: returns its JSON text (`{"name": .., "arguments": ..}`).

        `name_bias`: per tool, added to the logit of its name (see `choose`).
        """
        self.flush()
        self.grammar = grammar
        grammar.reset()
        mark = self._call_start = len(self.generated)
        self.unsaid_keys = []
        self.literal(name_prefix().encode())
        options = [name_option(tool_name(t)).encode() for t in tools]
        chosen = self.choose(options, name_bias)
        self.name_scores = {tool_name(tools[i]): round(v, 3)
                            for i, v in self.first_scores.items()}
        self._tool, self.stopped_at = tool_name(tools[chosen]), None
        try:
            self.walk_object(self._answered_required(arguments_schema(tools[chosen])),
                             self.choice_hints.get(self._tool), top=True)
        except _Unsaid as stop:
            self.grammar, self.overflow, self.buffer = None, b"", b""
            self.stopped_at = stop.key
            return (stop.before + b"}}").decode("utf-8")
        self.literal(b"}\n")
        self.flush()
        self.grammar = None
        if self.overflow:
            raise DecodeError(f"internal: text after the call: {self.overflow!r}")
        return b"".join(self.piece(t) for t in self.generated[mark:]).decode("utf-8")
