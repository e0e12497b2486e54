"""What the node sends back: the shape of a continue request, the results of the calls
it was given, and the validation errors it reports for them."""

from __future__ import annotations

from typing import Any

from jarvis.center.chat_messages import tool_message
from jarvis.center.conversation_errors import BadRequestError, MalformedRequestError
from jarvis.center.llm.base import LLMToolCall
from jarvis.center.turn import Turn, arguments_of
from jarvis.protocol import ContinueRequest, ToolResult

__all__ = ["accept_results", "call_arguments", "call_name", "calls_in", "check_continue_shape",
           "is_validation_error", "lacks_what_the_node_needs", "validation_errors"]


def check_continue_shape(request: ContinueRequest) -> None:
    """A continue carries exactly one of a non-empty `tool_results` or an answer."""
    results, answer = request.tool_results, request.validation_response
    if results is not None and answer is not None:
        raise MalformedRequestError(
            "tool_results", "send either tool_results or validation_response, not both"
        )
    if results is None and answer is None:
        raise MalformedRequestError(
            "tool_results", "send tool_results or validation_response (neither was given)"
        )
    if results is not None and not results:
        raise MalformedRequestError("tool_results", "must hold at least one result")
    if answer is not None and not answer.strip():
        raise MalformedRequestError("validation_response", "must not be empty")


def accept_results(turn: Turn, pending: dict[str, Any], results: list[ToolResult]) -> None:
    """Add the results of the calls `pending` waits for to the turn's messages (a
    BadRequestError when they are not exactly those calls')."""
    expected = {c["id"]: c["name"] for c in pending.get("calls", [])} if (
        pending.get("kind") == "tool_calls") else {}
    ids = [r.tool_call_id for r in results]
    unknown = [i for i in ids if i not in expected]
    if unknown:
        waiting = ", ".join(expected) or "none"
        raise BadRequestError(
            f"unknown tool_call_id(s): {', '.join(unknown)}; awaiting results for: {waiting}"
        )
    if len(set(ids)) != len(ids):
        raise BadRequestError("a tool_call_id appears more than once in tool_results")
    missing = [i for i in expected if i not in ids]
    if missing:
        raise BadRequestError(f"tool results missing for tool_call_id(s): {', '.join(missing)}")
    turn.node_failures = int(pending.get("node_failures", 0))
    by_id = {r.tool_call_id: r for r in results}
    for call_id, name in expected.items():
        output = by_id[call_id].output
        payload: dict[str, Any] = {"success": output.success}
        if output.message:
            payload["message"] = output.message
        if output.context:
            payload["context"] = output.context
        turn.new_messages.append(tool_message(call_id, name, payload))
        turn.trace["tool_results"].append(
            {"id": call_id, "name": name, "success": output.success,
             "validation_error": is_validation_error(output.context)}
        )


def is_validation_error(context: dict[str, Any] | None) -> bool:
    return bool(context) and bool(context.get("_validation_error"))  # type: ignore[union-attr]


def validation_errors(results: list[ToolResult]) -> list[dict[str, Any]]:
    """The `errors` of validation-error results, with `valid_values` filled per parameter."""
    out: list[dict[str, Any]] = []
    for result in results:
        context = result.output.context or {}
        by_param = context.get("valid_values")
        by_param = by_param if isinstance(by_param, dict) else {}
        errors = context.get("errors") if isinstance(context.get("errors"), list) else []
        for error in errors:
            if isinstance(error, dict):
                entry = dict(error)
                if not entry.get("valid_values") and entry.get("param_name") in by_param:
                    entry["valid_values"] = by_param[entry["param_name"]]
                out.append(entry)
        if not errors:
            for param, values in by_param.items():
                out.append({"param_name": param, "valid_values": values})
    return out


def call_name(turn: Turn, call_id: str) -> str | None:
    """The tool of the call `call_id` the conversation waits for."""
    for call in (turn.record.pending or {}).get("calls", []):
        if call.get("id") == call_id:
            return str(call.get("name"))
    return None


def lacks_what_the_node_needs(failed: list[ToolResult],
                              messages: list[dict[str, Any]]) -> bool:
    """Whether every validation error of `failed` names a parameter its call (found in
    `messages`) did not hold at all: the node needs a value nobody gave, which a retry
    would have the model leave out again or make up, so the user is asked at once."""
    for result in failed:
        params = {e.get("param_name") for e in validation_errors([result])}
        arguments = call_arguments(messages, result.tool_call_id)
        if not params or None in params or arguments is None or params & set(arguments):
            return False
    return bool(failed)


def calls_in(messages: list[dict[str, Any]]) -> list[LLMToolCall]:
    """The assistant's calls in `messages`, in order."""
    return [LLMToolCall(str(c.get("id")), str((c.get("function") or {}).get("name")),
                        (c.get("function") or {}).get("arguments") or "{}")
            for m in messages for c in m.get("tool_calls") or [] if isinstance(c, dict)]


def call_arguments(messages: list[dict[str, Any]], call_id: str) -> dict[str, Any] | None:
    """The arguments of the assistant's call `call_id` in `messages` (None: not found)."""
    return arguments_of(calls_in(messages), call_id)
