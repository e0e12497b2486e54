"""How a request is written for the model: its messages and tools through the chat
template, the tools in full, slimmed, or as signatures where full ones would not fit, and
the stable start every request of a tool set shares (read once and kept).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from jarvis.center.llm.embedded.options import EmbeddedOptions
from jarvis.center.llm.embedded.prompt import ChatPrompt, slim_tools, with_tool_signatures
from jarvis.center.llm.embedded.prompt_tokens import PromptTokenizer

__all__ = ["PromptLayout"]

Tokens = npt.NDArray[np.intc]
Messages = list[dict[str, Any]]
Tools = list[dict[str, Any]] | None

# Context kept free for the reply when choosing how to write the tools: a call with several
# values needs ~100 tokens, and a prompt that fills the context leaves the model mid-call.
_REPLY_ROOM = 256
# Context kept free after the stable system turn for a turn: the day's dates and clock, a
# few earlier turns and the utterance.
_TURN_ROOM = 512


class PromptLayout:
    """A request's prompt as tokens, for one model's template and tokenizer."""

    def __init__(self, prompt: ChatPrompt, tokens: PromptTokenizer,
                 options: EmbeddedOptions) -> None:
        self.prompt = prompt
        self.tokens = tokens
        self.options = options

    def request_tokens(self, messages: Messages, tools: Tools) -> tuple[Tokens, Tokens]:
        """The prompt's tokens and those of its stable prefix (empty when none). Tools whose
        schemas would not fit the context are written as signatures, a third of the tokens."""
        chosen = self.tool_format_for(messages, tools)
        for tool_format in dict.fromkeys((chosen, "signatures")):
            shown, rendered = self.shown(messages, tools, tool_format)
            full_text = self.prompt.render(shown, rendered, add_generation_prompt=True)
            prefix_text = self.prompt.system_prefix(shown, rendered)
            if not full_text.startswith(prefix_text):
                prefix_text = ""
            full = self.tokens.prompt(full_text, prefix_text)
            if len(full) + _REPLY_ROOM <= self.options.n_ctx:
                break  # else a long conversation: the tools as signatures leave it room
        return full, (self.tokens.stable(prefix_text) if prefix_text else full[:0])

    def start_tokens(self, messages_prefix: Messages, tools: Tools) -> Tokens:
        """The tokens of a conversation's fixed start (what `warm` reads ahead of time)."""
        messages, shown = self.shown(messages_prefix, tools,
                                     self.tool_format_for(messages_prefix, tools))
        return self.tokens.stable(self.prompt.render(messages, shown, add_generation_prompt=False))

    def tool_format_for(self, messages: Messages, tools: Tools) -> str:
        """How `tools` are written: the configured format when the stable system turn with
        them leaves room for a turn and the reply, else signatures. Decided on what every
        request of the tool set shares, so a longer utterance never changes the prompt's
        prefix, which would be read again (15-35 s) and kept twice."""
        if self.options.tool_format == "signatures" or not tools:
            return self.options.tool_format
        stable, shown = self.shown(messages[:1], tools, self.options.tool_format)
        text = self.prompt.render(stable, shown, add_generation_prompt=False)
        fits = len(self.tokens.stable(text)) + _TURN_ROOM + _REPLY_ROOM <= self.options.n_ctx
        return self.options.tool_format if fits else "signatures"

    def shown(self, messages: Messages, tools: Tools,
              tool_format: str | None = None) -> tuple[Messages, Tools]:
        """The messages and tool schemas the template renders (the grammar gets the full ones).

        With `tool_format` "signatures" the tools are written into the system message and
        the template gets none.
        """
        if not tools:
            return messages, None
        if self.options.prompt_style == "full":
            return messages, tools
        if (tool_format or self.options.tool_format) == "signatures":
            return with_tool_signatures(messages, tools), None
        return messages, slim_tools(tools)
