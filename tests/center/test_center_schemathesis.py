"""Property-based tests of the live center's HTTP API from its own OpenAPI description.

schemathesis generates requests for every operation (valid ones and broken ones) and
sends them to a real center on a loopback port, once on SQLite and once on PostgreSQL.
Every answer must be documented: no server error, and a body that matches the schema
of its status code (errors too follow the documented error model). Half of the generated
bodies are aimed at conversations that exist, so the engine is reached, not only the 404.
The LLM is a scripted one (calls a tool, answers, asks the user, in turn): these tests
check the protocol, not understanding.
"""

from __future__ import annotations

import itertools
import json
import threading
import zlib
from typing import Any

import pytest
import schemathesis
from center_helpers import WEATHER_TOOL, Center
from hypothesis import HealthCheck, given, settings
from schemathesis import checks
from schemathesis.generation import GenerationMode

from jarvis.center.llm.base import LLMReply, LLMRequest
from jarvis.center.llm.scripted import ScriptedBackend, text, tool_call

# The started conversations' ids, new for each center: each belongs to that center's node.
STARTED: list[str] = []
EXAMPLES_PER_OPERATION = 30


class ScriptedProtocolLLM:
    """A scripted LLM that calls the first client tool, answers, or asks the user, in turn."""

    def __init__(self) -> None:
        self._turn = itertools.count()
        self._lock = threading.Lock()

    def reply(self, request: LLMRequest) -> LLMReply:
        with self._lock:
            turn = next(self._turn)
        if request.tools_disabled:
            return text("Scripted answer.")
        names = [t["function"]["name"] for t in request.tools if "function" in t]
        client = [n for n in names if n not in ("resolve_relative_date", "get_current_datetime",
                                                "ask_user")]
        if turn % 3 == 0 and client:
            return tool_call(client[0], city="Oslo")
        if turn % 3 == 1:
            return tool_call("ask_user", question="Which city?", parameter_name="city")
        return text("Scripted answer.")


@pytest.fixture
def live_center(make_center: Any) -> Center:
    # No rate limit: thousands of generated requests would otherwise mostly meet a 429.
    center = make_center(ScriptedBackend([ScriptedProtocolLLM().reply], loop=True),
                         rate_limit_per_minute=0)
    STARTED[:] = [f"protocol-{center.node}-{n}" for n in range(4)]
    for cid in STARTED:
        center.start(cid, [WEATHER_TOOL])
    return center


@pytest.fixture
def center_api(live_center: Center) -> tuple[Any, dict[str, str]]:
    """The live center's API and the headers of its node (every request carries its key)."""
    schema = schemathesis.openapi.from_url(f"{live_center.url}/openapi.json")
    schema.config.update(base_url=live_center.url)
    return schema, {"Authorization": f"Bearer {live_center.key}"}


def _aim_at_started(body: Any) -> None:
    """Give every other generated body (chosen by its content) a started conversation's id."""
    if not isinstance(body, dict) or not isinstance(body.get("conversation_id"), str):
        return
    digest = zlib.crc32(json.dumps(body, sort_keys=True, default=str).encode())
    if digest % 2:
        body["conversation_id"] = STARTED[digest % len(STARTED)]


_CHECKS = [
    checks.not_a_server_error,
    checks.status_code_conformance,
    checks.content_type_conformance,
    checks.response_schema_conformance,
]


@pytest.mark.parametrize("mode", [GenerationMode.POSITIVE, GenerationMode.NEGATIVE])
def test_every_answer_is_documented(
    center_api: tuple[Any, dict[str, str]], mode: GenerationMode,
) -> None:
    api, node_key = center_api
    operations = len(list(api.get_all_operations()))

    @given(case=api.as_strategy(generation_mode=mode))
    @settings(max_examples=EXAMPLES_PER_OPERATION * operations, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    def send(case: Any) -> None:
        _aim_at_started(case.body)
        response = case.call_and_validate(headers=node_key, checks=_CHECKS, timeout=30)
        # The node key opens every node route; the admin side alone refuses it.
        assert response.status_code != 401 or "/api/v0/conversations" in case.path \
            or case.path == "/api/v0/nodes", (case.path, response.text)

    send()
