"""The "Changing what a refined call made" section of docs/commands.md runs as written:
a call that refines the one that set an alarm moves that alarm, and no second one is set."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from jarvis.sdk import CommandContext, RequestInformation

DOC = Path(__file__).resolve().parents[2] / "docs" / "commands.md"
SECTION = DOC.read_text(encoding="utf-8").split("### Changing what a refined call made", 1)[
    1].split("\n### ", 1)[0].split("\n## ", 1)[0]


def _alarm() -> Any:
    [block] = re.findall(r"```python\n(.*?)```", SECTION, flags=re.S)
    namespace: dict[str, Any] = {}
    exec(compile(block, str(DOC), "exec"), namespace)
    return namespace["SetAlarm"]().bind(CommandContext())


def _set(alarm: Any, at: str, call: str, refines: str | None = None) -> str:
    info = RequestInformation(tool_call_id=call, refines_tool_call_id=refines)
    response = alarm.execute(info, time=at)
    assert response.success
    return response.message


def test_a_refining_call_moves_the_alarm_its_call_set() -> None:
    alarm = _alarm()
    assert _set(alarm, "07:00", "call_a") == "Alarm set for 07:00."
    assert _set(alarm, "07:30", "call_b", refines="call_a") == "OK, the alarm is now at 07:30."
    assert _set(alarm, "08:00", "call_c", refines="call_b") == "OK, the alarm is now at 08:00."
    [moved] = alarm.context.storage.items("alarms").values()
    assert (moved["at"], moved["call"]) == ("08:00", "call_c")


def test_a_new_call_or_a_refinement_of_nothing_left_sets_another() -> None:
    alarm = _alarm()
    _set(alarm, "07:00", "call_a")
    assert _set(alarm, "09:00", "call_b") == "Alarm set for 09:00."
    assert _set(alarm, "10:00", "call_c", refines="gone") == "Alarm set for 10:00."
    assert len(alarm.context.storage.items("alarms")) == 3
