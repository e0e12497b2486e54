"""A complete example command: greets a household member.

It shows every part of the SDK a command author uses: typed parameters with a default, an
enum, a refinable parameter and an example; examples, rules and antipatterns for the LLM;
`pre_route`, `post_process_tool_call` and a `validate_call` with dynamic valid values and
a suggested value; an optional secret; storage through the context; and responses with a
button. docs/commands.md walks through it; tests/sdk/test_sdk_docs_example.py runs it.
"""

from __future__ import annotations

import datetime as dt
import difflib
from typing import Any

from jarvis.sdk import (
    CommandAntipattern,
    CommandExample,
    CommandResponse,
    IJarvisCommand,
    JarvisButton,
    JarvisParameter,
    JarvisSecret,
    PreRouteResult,
    RequestInformation,
    ValidationResult,
)

GREETINGS = {"english": "Hello", "german": "Hallo", "spanish": "Hola"}
# Words people say for a language, and the enum value they mean.
LANGUAGE_WORDS = {"deutsch": "german", "español": "spanish", "espanol": "spanish"}
DEFAULT_HOUSEHOLD = ["Ada", "Grace", "Linus"]


class SayHelloCommand(IJarvisCommand):
    @property
    def command_name(self) -> str:
        return "say_hello"

    @property
    def description(self) -> str:
        return "Greet a member of the household by name, optionally in another language."

    @property
    def parameters(self) -> list[JarvisParameter]:
        return [
            JarvisParameter("name", "string", required=True,
                            description="Who to greet: a household member's first name",
                            example="Ada"),
            JarvisParameter("language", "string", description="Language of the greeting",
                            default="english", enum_values=list(GREETINGS), refinable=True),
            JarvisParameter("times", "int", description="How many times to say it",
                            default="1"),
            JarvisParameter("next_visit", "date",
                            description="Day of the next visit, if the user mentions one"),
        ]

    @property
    def required_secrets(self) -> list[JarvisSecret]:
        # Optional: the command works without it, and execute() does not demand it.
        return [JarvisSecret("HELLO_SIGN_OFF", "Words added after every greeting",
                             required=False, is_sensitive=False)]

    @property
    def examples(self) -> list[CommandExample]:
        return [
            CommandExample("say hello to Ada", {"name": "Ada"}, is_primary=True),
            CommandExample("greet Grace in German", {"name": "Grace", "language": "german"}),
        ]

    @property
    def rules(self) -> list[str]:
        return ["Use the first name only"]

    @property
    def critical_rules(self) -> list[str]:
        return ["'in Deutsch' means language=german"]

    @property
    def antipatterns(self) -> list[CommandAntipattern]:
        return [CommandAntipattern("send_message", "Messages to someone's phone go there")]

    @property
    def keywords(self) -> list[str]:
        return ["hello", "greet"]

    # --- hooks ------------------------------------------------------------------------
    def pre_route(self, voice_command: str) -> PreRouteResult | None:
        # "hello ada": two words, no LLM needed.
        words = voice_command.lower().strip().split()
        if len(words) == 2 and words[0] in ("hello", "hi"):
            return PreRouteResult(arguments={"name": words[1]})
        return None

    def post_process_tool_call(self, args: dict[str, Any], voice_command: str) -> dict[str, Any]:
        language = args.get("language")
        if isinstance(language, str):
            lowered = language.lower()
            args["language"] = LANGUAGE_WORDS.get(lowered, lowered)
        return args

    def validate_call(self, **kwargs: Any) -> list[ValidationResult]:
        results = super().validate_call(**kwargs)  # types and enums
        name = kwargs.get("name")
        if isinstance(name, str):
            household = self._household()
            if name not in household:
                close = difflib.get_close_matches(name.title(), household, n=1, cutoff=0.6)
                results.append(ValidationResult(
                    success=bool(close),
                    param_name="name",
                    command_name=self.command_name,
                    message=f"'{name}' is not in the household",
                    valid_values=household,  # known only at run time: a dynamic enum
                    suggested_value=close[0] if close else None,
                ))
        return results

    # --- the work -----------------------------------------------------------------------
    def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
        name: str = kwargs["name"]
        language: str = kwargs["language"]  # defaults are filled in: always present
        times: int = kwargs["times"]
        next_visit: dt.date | None = kwargs.get("next_visit")  # optional, no default

        storage = self.context.storage
        count = storage.get("hello", name, 0) + 1
        storage.set("hello", name, count)

        greeting = " ".join([f"{GREETINGS[language]} {name}!"] * max(times, 1))
        if next_visit is not None:
            greeting += f" See you on {next_visit:%A}."
        sign_off = self.get_secret("HELLO_SIGN_OFF")
        if sign_off:
            greeting += f" {sign_off}"
        return CommandResponse.success_response(
            {"name": name, "greeted_times": count},
            message=greeting,
            actions=[JarvisButton(text="Again", action=f"say_hello:{name}", type="secondary")],
        )

    def _household(self) -> list[str]:
        return self.context.storage.get("household", "members", DEFAULT_HOUSEHOLD)
