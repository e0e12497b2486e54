"""The text path as the voice loop sees it: the node's `CommandExecutionService`.

A request heard is handled exactly like a typed one (`jarvis ask`, `jarvis chat`): the
commands' `pre_route` first, else the command center. The answer is spoken as it arrives,
sentence by sentence when the center streams the turn. Validation questions are spoken
and answered by voice; an answer offering choices is followed up without the wake word,
and a choice said aloud picks the button it names.
"""

from __future__ import annotations

from jarvis.node.actions import pick_action
from jarvis.node.client import CenterError, CenterUnreachableError
from jarvis.node.service import CommandExecutionService
from jarvis.node.voice.loop import Ask, Reply, Responder, Say
from jarvis.protocol import ValidationRequest
from jarvis.sdk import JarvisButton

__all__ = ["service_responder"]


def service_responder(service: CommandExecutionService) -> Responder:
    """A `Responder` running each request through `service.process_voice_command`."""
    choices: list[JarvisButton] = []

    def respond(text: str, ask: Ask, say: Say) -> Reply:
        nonlocal choices

        def on_question(request: ValidationRequest) -> str | None:
            options = f" You can say: {', '.join(request.options)}." if request.options else ""
            return ask(request.question + options)

        picked = pick_action(text, choices)
        try:
            result = service.process_voice_command(
                picked.action if picked else text, validation_handler=on_question, on_sentence=say
            )
        except CenterUnreachableError:
            choices = []
            return Reply("I cannot reach the command center right now.")
        except CenterError as exc:
            choices = []
            return Reply(f"The command center could not answer: {exc.message}")
        except ValueError as exc:
            choices = []
            return Reply(f"Sorry, {exc}.")
        choices = result.actions
        return Reply(
            result.message,
            follow_up=result.wait_for_input or bool(result.actions),
            commands=tuple(call.name for call in result.tool_calls),
        )

    return respond
