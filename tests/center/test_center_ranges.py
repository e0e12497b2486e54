"""A Python command's `minimum` / `maximum` over real HTTP with the scripted LLM backend
(protocol tests): the center refuses a value outside them with the usual retry message,
and a refinement's step without an amount is a tenth of the range."""

from __future__ import annotations

import json
from typing import Any, ClassVar

import pytest
from center_helpers import conversation_id

from jarvis.center.llm.scripted import ScriptedBackend, tool_call
from jarvis.sdk import CommandResponse, IJarvisCommand, JarvisParameter, RequestInformation


class Speaker(IJarvisCommand):
    command_name = "set_volume"
    description = "Set the speaker volume."
    parameters: ClassVar[list[JarvisParameter]] = [
        JarvisParameter("level", "int", required=True, refinable=True, minimum=0, maximum=100,
                        description="Volume in percent")]

    def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
        return CommandResponse.success_response(message=f"Volume {kwargs['level']}.")


def _start(center: Any, with_schema: bool) -> str:
    cid, speaker = conversation_id(), Speaker()
    tools = [speaker.to_openai_tool_schema()] if with_schema else []
    center.start(cid, tools, [speaker.get_command_schema()])
    return cid


@pytest.mark.parametrize("with_schema", [True, False])
def test_a_value_out_of_range_is_retried_with_the_reason(make_center: Any,
                                                         with_schema: bool) -> None:
    backend = ScriptedBackend([tool_call("set_volume", level=150),
                               tool_call("set_volume", level=100)])
    center = make_center(backend)
    cid = _start(center, with_schema)
    reply = center.command(cid, "set the volume to 150 percent, or else 100")
    [call] = reply["tool_calls"]
    assert json.loads(call["function"]["arguments"]) == {"level": 100}
    [retry] = center.store.turns(cid)[-1]["trace"]["retries"]
    [problem] = retry["problems"]
    assert (problem["parameter"], problem["problem"], problem["expected"]) == (
        "level", "150 is above the maximum of 100", "a number from 0 to 100")
    shown = "\n".join(str(m.get("content")) for m in backend.requests[-1].messages)
    assert "Your tool call was invalid and was NOT run" in shown


def test_a_step_of_a_python_command_is_a_tenth_of_its_range(make_center: Any) -> None:
    backend = ScriptedBackend([tool_call("set_volume", level=50)])
    center = make_center(backend)
    cid = _start(center, with_schema=True)
    [call] = center.command(cid, "set the volume to 50")["tool_calls"]
    center.results(cid, (call["id"], {"success": True, "message": "Volume 50."}))
    [louder] = center.command(cid, "louder")["tool_calls"]
    assert json.loads(louder["function"]["arguments"]) == {"level": 60}
    center.results(cid, (louder["id"], {"success": True, "message": "Volume 60."}))
    [top] = center.command(cid, "much louder, 100 percent louder")["tool_calls"]
    assert json.loads(top["function"]["arguments"]) == {"level": 100}  # kept within
    assert len(backend.requests) == 1
