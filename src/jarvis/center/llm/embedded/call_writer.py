"""A reply's tool calls: each written under the tools' grammar, its name choice weighed by
what the user said, its values then grounded in the user's words.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from jarvis.center.llm.base import LLMError, LLMToolCall
from jarvis.center.llm.embedded.decoder import Decoder
from jarvis.center.llm.embedded.grammar import tool_name
from jarvis.center.llm.embedded.grammar_sampler import GrammarSampler
from jarvis.center.llm.embedded.grounding import (
    completed_values,
    dates_as_said,
    items_from_the_other_clause,
    respelled_required_text,
    unsaid_optional_arguments,
)
from jarvis.center.llm.embedded.loaded_model import LoadedModel
from jarvis.center.llm.embedded.options import EmbeddedOptions
from jarvis.center.llm.embedded.spoken_answer import NO_TOOL_SCHEMA

__all__ = ["CallWriter", "name_bias"]


def name_bias(
    options: EmbeddedOptions, tools: list[dict[str, Any]], hints: dict[str, float],
    unheard: bool, related: dict[str, float] | None = None,
) -> list[float]:
    """Per tool, what is added to its name's logit: the keyword prior, the relatedness
    prior (0 for the most related tool, less for the others) and `say`'s bias.

    `say` gets `unheard_say_bias` more only when `unheard` (every client tool declares
    keywords and none was heard): a command without keywords must not lose to small talk.
    """
    related = related or {}
    closest = max(related.values(), default=0.0)
    bias = []
    for tool in tools:
        if tool is NO_TOOL_SCHEMA:
            extra = options.unheard_say_bias if unheard else 0.0
            bias.append(options.no_tool_bias + extra)
        else:
            name = tool_name(tool)
            count = min(hints.get(name, 0.0), options.keyword_cap)
            meaning = related.get(name, closest) - closest
            bias.append(options.keyword_bias * count + options.relatedness_bias * meaning)
    return bias


class CallWriter:
    """Writes one request's calls, noting what grounding changed (read into its usage)."""

    def __init__(self, model: LoadedModel, options: EmbeddedOptions) -> None:
        self.model = model
        self.options = options
        self.dropped: list[str] = []  # optional arguments nobody said
        self.respelled: list[str] = []  # values put in the user's words, or completed
        self.stopped_at: list[str] = []  # a required value nobody said ended the call here

    def calls(
        self,
        decoder: Decoder,
        tools: list[dict[str, Any]],
        grammar: GrammarSampler,
        hints: dict[str, float],
        utterance: str | None = None,
        *,
        unheard: bool = False,
        related: dict[str, float] | None = None,
    ) -> list[LLMToolCall]:
        """The reply's tool calls, written under `grammar` (at most `max_tool_calls`)."""
        special = self.model.special
        calls: list[LLMToolCall] = []
        seen: set[tuple[str, str]] = set()
        for index in range(self.options.max_tool_calls):
            if index == 0:
                decoder.commit_raw([special["<tool_call>"], special["\n"]])
            bias = name_bias(self.options, tools, hints if index == 0 else {}, unheard,
                             related if index == 0 else None)
            text = decoder.tool_call(tools, grammar, bias if any(bias) else None)
            if decoder.stopped_at is None:
                decoder.commit_raw([special["</tool_call>"]])
            else:
                self.stopped_at.append(decoder.stopped_at)
            parsed = json.loads(text)
            name = parsed["name"]
            if utterance is not None and self.options.drop_unsaid:
                tool = next(t for t in tools if tool_name(t) == name)
                self._ground(decoder, name, tool, parsed["arguments"], utterance)
            arguments = json.dumps(parsed["arguments"], ensure_ascii=False)
            if (name, arguments) in seen:  # a small model may repeat itself; once is enough
                break
            seen.add((name, arguments))
            calls.append(
                LLMToolCall(id="call_" + secrets.token_hex(8), name=name, arguments=arguments)
            )
            if index + 1 >= self.options.max_tool_calls or decoder.stopped_at is not None:
                break
            if not self._another_call(decoder):
                break
            decoder.commit_raw([special["<tool_call>"], special["\n"]])
        if not all(c.name in {tool_name(t) for t in tools} for c in calls):  # pragma: no cover
            raise LLMError("internal: a call names an unknown tool")
        return calls

    def _ground(
        self, decoder: Decoder, name: str, tool: dict[str, Any], arguments: dict[str, Any],
        utterance: str,
    ) -> None:
        """Ground a call's `arguments` in what was said, in place: drop, respell, complete."""
        days = [value[:10] for values in decoder.date_hints for value in values]
        redated = dates_as_said(arguments, tool, days, decoder.time_hints)
        arguments.update(redated)
        dropped = unsaid_optional_arguments(arguments, tool, utterance,
                                            decoder.choice_hints.get(name), days)
        # Copied from the prompt, then guessed again (see Decoder.sample_text).
        dropped += [k for k in dict.fromkeys(decoder.unsaid_keys)
                    if k in arguments and k not in dropped]
        for key in dropped:
            del arguments[key]
        self.dropped.extend(dropped)
        respelled = respelled_required_text(arguments, tool, utterance)
        arguments.update(respelled)
        completed = completed_values(arguments, tool, utterance)
        arguments.update(completed)
        regrounded = items_from_the_other_clause(arguments, tool, utterance)
        for key, items in regrounded.items():
            if items:
                arguments[key] = items
            else:  # nothing left to name: the command asks for it
                del arguments[key]
        self.respelled.extend([*redated, *respelled, *completed, *regrounded])

    def _another_call(self, decoder: Decoder) -> bool:
        """After a call's `</tool_call>`: whether the model writes another call."""
        # Qwen writes "\n" after </tool_call> whether or not another call follows; the
        # token after it tells: <tool_call> again, or the end of the turn.
        special = self.model.special
        decoder.commit_raw([special["\n"]])
        logits = decoder.logits()
        end = max(logits[special["<|im_end|>"]], logits[int(self.model.llm.token_eos())])
        return not logits[special["<tool_call>"]] <= end
