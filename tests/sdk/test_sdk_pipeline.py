"""The execute() pipeline: secrets -> required params -> validate_call (+ suggested values)
-> defaults -> coercion -> run, with the call order recorded."""

from __future__ import annotations

import datetime as dt
from typing import Any, ClassVar
from zoneinfo import ZoneInfo

import pytest

from jarvis.sdk import (
    CommandContext,
    CommandResponse,
    IJarvisCommand,
    JarvisCommandBase,
    JarvisParameter,
    JarvisSecret,
    MemoryStorage,
    MissingSecretsError,
    RequestInformation,
    ValidationResult,
    is_llm_artifact,
)


class DictSecrets:
    """A secret store that records which keys were read."""

    def __init__(self, values: dict[str, str]) -> None:
        self.values = values
        self.reads: list[str] = []

    def get_secret(self, key: str, scope: str = "integration") -> str | None:
        self.reads.append(key)
        return self.values.get(key)


class Recorder(IJarvisCommand):
    """Records every pipeline step it takes part in."""

    def __init__(self, suggestions: list[ValidationResult] | None = None) -> None:
        self.calls: list[str] = []
        self.received: dict[str, Any] = {}
        self.suggestions = suggestions or []

    @property
    def command_name(self) -> str:
        return "recorder"

    @property
    def description(self) -> str:
        return "Records calls"

    @property
    def required_secrets(self) -> list[JarvisSecret]:
        self.calls.append("secrets")
        return [JarvisSecret("API_KEY"), JarvisSecret("API_URL"),
                JarvisSecret("OPTIONAL_TOKEN", required=False)]

    @property
    def parameters(self) -> list[JarvisParameter]:
        return [
            JarvisParameter("a", "string", required=True),
            JarvisParameter("b", "int", required=True),
            JarvisParameter("op", "string", enum_values=["add", "subtract", "none"]),
            JarvisParameter("count", "int", default="3"),
            JarvisParameter("city", "string"),
            JarvisParameter("when", "datetime"),
            JarvisParameter("days", "array<date>"),
            JarvisParameter("wait", "timedelta", default="PT5M"),
        ]

    def validate_call(self, **kwargs: Any) -> list[ValidationResult]:
        self.calls.append("validate_call")
        return super().validate_call(**kwargs) + self.suggestions

    def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
        self.calls.append("run")
        self.received = kwargs
        return CommandResponse.success_response({"message": "done"})


SECRETS = {"API_KEY": "k", "API_URL": "http://127.0.0.1:1"}


def make(suggestions: list[ValidationResult] | None = None,
         secrets: dict[str, str] | None = None, timezone: str | None = None) -> Recorder:
    cmd = Recorder(suggestions)
    cmd.bind(CommandContext(secrets=DictSecrets(SECRETS if secrets is None else secrets),
                            storage=MemoryStorage(), timezone=timezone))
    return cmd


REQ = RequestInformation(voice_command="test")


def test_happy_path_order_defaults_and_coercion() -> None:
    cmd = make()
    response = cmd.execute(REQ, a="x", b=2, when="2026-01-18T05:00:00Z",
                           days=["2026-01-18", "2026-01-19"])
    assert response.success and response.message == "done"
    assert cmd.calls == ["secrets", "validate_call", "run"]
    assert cmd.received == {
        "a": "x",
        "b": 2,
        "count": 3,  # the text default "3" as an int
        "wait": dt.timedelta(minutes=5),
        "when": dt.datetime(2026, 1, 18, 5, tzinfo=dt.UTC),
        "days": [dt.date(2026, 1, 18), dt.date(2026, 1, 19)],
    }
    # Optional params without a default stay out of kwargs.
    assert "city" not in cmd.received and "op" not in cmd.received


def test_missing_secrets_stop_everything_and_list_the_keys() -> None:
    cmd = make(secrets={"API_URL": ""})  # an empty value counts as missing
    with pytest.raises(MissingSecretsError) as caught:
        cmd.execute(REQ, a="x", b=2)
    assert caught.value.missing == ["API_KEY", "API_URL"]
    assert "API_KEY, API_URL" in str(caught.value)
    assert caught.value.command_name == "recorder"
    # Never reached validate_call or run; the optional secret was not demanded.
    assert cmd.calls == ["secrets"]


def test_secrets_are_checked_before_required_params() -> None:
    cmd = make(secrets={})
    with pytest.raises(MissingSecretsError):
        cmd.execute(REQ)  # both required params missing too


def test_missing_required_params_raise_value_error_before_validate_call() -> None:
    cmd = make()
    with pytest.raises(ValueError) as caught:
        cmd.execute(REQ)
    assert str(caught.value) == "Missing required params: a, b"
    with pytest.raises(ValueError, match=r"^Missing required params: b$"):
        cmd.execute(REQ, a="x", b=None)
    assert "validate_call" not in cmd.calls


def test_validation_errors_return_a_validation_error_response_and_skip_run() -> None:
    cmd = make()
    response = cmd.execute(REQ, a="x", b="two", op="multiply")
    assert cmd.calls == ["secrets", "validate_call"]
    assert response.success is False and response.is_validation_error
    ctx = response.context_data
    assert ctx["_validation_error"] is True
    assert ctx["errors"] == [
        {"param_name": "b", "message": "Invalid type for 'b': expected an integer, got 'two'",
         "valid_values": None},
        {"param_name": "op",
         "message": "Invalid value 'multiply' for 'op'. Must be one of: add, subtract, none",
         "valid_values": ["add", "subtract", "none"]},
    ]
    assert ctx["valid_values"] == {"op": ["add", "subtract", "none"]}
    assert "Invalid value 'multiply'" in (response.message or "")


def test_a_suggested_value_overwrites_kwargs_and_reaches_run() -> None:
    fix = ValidationResult(success=True, param_name="city", command_name="recorder",
                           suggested_value="Berlin")
    cmd = make([fix])
    response = cmd.execute(REQ, a="x", b=2, city="berln")
    assert response.success
    assert cmd.received["city"] == "Berlin"


def test_an_error_carrying_a_suggestion_is_auto_corrected() -> None:
    fix = ValidationResult(success=False, param_name="city", message="no such city",
                           suggested_value="Paris")
    cmd = make([fix])
    assert cmd.execute(REQ, a="x", b=2, city="Pariss").success
    assert cmd.received["city"] == "Paris"


def test_other_errors_stand_even_beside_a_suggestion_for_the_same_parameter() -> None:
    # e.g. "kitchen light" matched to an entity, and a separate error "it is not a lock".
    cmd = make([
        ValidationResult(success=True, param_name="city", suggested_value="Paris"),
        ValidationResult(success=False, param_name="city", message="Paris is closed today"),
    ])
    response = cmd.execute(REQ, a="x", b=2, city="Pariss")
    assert response.is_validation_error
    assert [e["message"] for e in response.context_data["errors"]] == ["Paris is closed today"]
    assert "run" not in cmd.calls


def test_a_built_in_enum_error_is_not_settled_by_a_separate_suggestion() -> None:
    # To correct an enum miss, attach the suggestion to a failing result of your own and
    # drop the built-in one (see docs/commands.md).
    cmd = make([ValidationResult(success=True, param_name="op", suggested_value="add")])
    response = cmd.execute(REQ, a="x", b=2, op="ad")
    assert response.is_validation_error
    assert response.context_data["errors"][0]["param_name"] == "op"


def test_errors_about_other_parameters_still_stop_the_call() -> None:
    fix = ValidationResult(success=True, param_name="city", suggested_value="Paris")
    cmd = make([fix])
    response = cmd.execute(REQ, a="x", b="two", city="Pariss")
    assert response.is_validation_error
    assert [e["param_name"] for e in response.context_data["errors"]] == ["b"]
    assert "run" not in cmd.calls


def test_a_suggested_value_must_pass_its_own_checks() -> None:
    cmd = make([ValidationResult(success=True, param_name="op", suggested_value="multiply")])
    response = cmd.execute(REQ, a="x", b=2, op="add")
    assert response.is_validation_error
    error = response.context_data["errors"][0]
    assert error["param_name"] == "op"
    assert error["message"].startswith("Suggested value rejected: Invalid value 'multiply'")
    assert error["valid_values"] == ["add", "subtract", "none"]


def test_a_suggested_value_is_coerced_like_any_other() -> None:
    cmd = make([ValidationResult(success=True, param_name="when",
                                 suggested_value="2026-02-01T08:00:00+01:00")])
    cmd.execute(REQ, a="x", b=2)
    assert cmd.received["when"] == dt.datetime(2026, 2, 1, 7, tzinfo=dt.UTC)


def test_a_value_that_passes_validate_but_not_coercion_is_a_validation_error() -> None:
    # validate() only checks that a date param got a string; the format is checked here.
    cmd = make()
    response = cmd.execute(REQ, a="x", b=2, days=["next tuesday"])
    assert response.is_validation_error
    error = response.context_data["errors"][0]
    assert error["param_name"] == "days" and "next tuesday" in error["message"]
    assert "run" not in cmd.calls


def test_datetimes_are_given_in_the_request_timezone_else_the_context_timezone() -> None:
    cmd = make(timezone="Asia/Kolkata")
    cmd.execute(RequestInformation(timezone="Europe/Berlin"), a="x", b=2,
                when="2026-01-18T05:00:00Z")
    assert cmd.received["when"].tzinfo == ZoneInfo("Europe/Berlin")
    cmd.execute(REQ, a="x", b=2, when="2026-01-18T05:00:00Z")
    assert cmd.received["when"].tzinfo == ZoneInfo("Asia/Kolkata")
    # A naive value (as a pre_route may give) is local to that zone.
    cmd.execute(REQ, a="x", b=2, when="2026-01-18T10:00")
    assert cmd.received["when"] == dt.datetime(2026, 1, 18, 10, tzinfo=ZoneInfo("Asia/Kolkata"))


@pytest.mark.parametrize("artifact", ["default", "none", "null", "", "None", " NULL "])
def test_llm_artifacts_for_optional_params_count_as_omitted(artifact: str) -> None:
    assert is_llm_artifact(artifact)
    cmd = make()
    response = cmd.execute(REQ, a="x", b=2, count=artifact, city=artifact, when=artifact)
    assert response.success
    assert cmd.received["count"] == 3  # the default, not a type error
    assert "city" not in cmd.received and "when" not in cmd.received


def test_artifact_guard_spares_required_params_and_declared_enum_values() -> None:
    cmd = make()
    cmd.execute(REQ, a="none", b=2, op="none")
    assert cmd.received["a"] == "none"  # required: the author decides
    assert cmd.received["op"] == "none"  # a real choice in this parameter's enum


def test_non_string_values_are_never_artifacts() -> None:
    assert not is_llm_artifact(None)
    assert not is_llm_artifact(0)
    assert not is_llm_artifact([])
    assert not is_llm_artifact("nothing")


def test_undeclared_arguments_are_dropped() -> None:
    cmd = make()
    cmd.execute(REQ, a="x", b=2, hallucinated="yes")
    assert "hallucinated" not in cmd.received


def test_overriding_execute_is_refused() -> None:
    with pytest.raises(TypeError, match="overrides execute"):

        class Sneaky(Recorder):
            def execute(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
                return self.run(request_info, **kwargs)


def test_overriding_execute_through_a_mixin_is_refused_too() -> None:
    class ExecuteMixin:
        def execute(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
            return CommandResponse.success_response()

    with pytest.raises(TypeError, match="overrides execute"):

        class Sneaky(ExecuteMixin, Recorder):
            pass


def test_run_must_return_a_command_response() -> None:
    class Careless(Recorder):
        def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
            return "done"  # type: ignore[return-value]

    cmd = Careless()
    cmd.bind(CommandContext(secrets=DictSecrets(SECRETS)))
    with pytest.raises(TypeError, match="not a CommandResponse"):
        cmd.execute(REQ, a="x", b=2)


def test_hooks_default_to_doing_nothing() -> None:
    cmd = make()
    assert cmd.pre_route("pause") is None
    args = {"a": "x"}
    assert cmd.post_process_tool_call(args, "say x") == {"a": "x"}
    assert cmd.init_data() == {}
    assert JarvisCommandBase is IJarvisCommand


def test_get_secret_and_storage_come_from_the_bound_context() -> None:
    storage = MemoryStorage()
    cmd = Recorder().bind(CommandContext(secrets=DictSecrets({"API_KEY": "s3cret"}),
                                         storage=storage))
    assert cmd.get_secret("API_KEY") == "s3cret"
    assert cmd.get_secret("OTHER") is None
    cmd.context.storage.set("notes", "1", {"text": "hi"})
    assert storage.items("notes") == {"1": {"text": "hi"}}


def test_an_unbound_command_reads_secrets_from_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("API_KEY", "from-env")
    monkeypatch.setenv("API_URL", "http://127.0.0.1:2")
    cmd = Recorder()
    assert cmd.get_secret("API_KEY") == "from-env"
    assert cmd.execute(REQ, a="x", b=2).success


class SmartHome(IJarvisCommand):
    """The spec's dynamic-enum example: a static action enum, entities known at run time."""

    known: ClassVar[list[str]] = ["light.kitchen", "lock.front_door"]

    @property
    def command_name(self) -> str:
        return "control_device"

    @property
    def description(self) -> str:
        return "Control a smart-home device"

    @property
    def parameters(self) -> list[JarvisParameter]:
        return [
            JarvisParameter("action", "string", required=True,
                            enum_values=["turn_on", "turn_off", "lock", "unlock"]),
            JarvisParameter("entity_id", "string", required=False),
        ]

    def validate_call(self, **kwargs: Any) -> list[ValidationResult]:
        results = super().validate_call(**kwargs)
        entity_id = kwargs.get("entity_id")
        if entity_id and entity_id not in self.known:
            results.append(ValidationResult(
                success=False, param_name="entity_id", command_name=self.command_name,
                message=f"Device '{entity_id}' not found", valid_values=self.known,
            ))
        return results

    def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
        return CommandResponse.success_response({"message": f"{kwargs['action']} done"})


def test_dynamic_enum_example_from_the_spec() -> None:
    cmd = SmartHome()
    assert "enum" not in cmd.to_openai_tool_schema()["function"]["parameters"]["properties"][
        "entity_id"]
    assert cmd.execute(REQ, action="turn_on", entity_id="light.kitchen").success
    response = cmd.execute(REQ, action="turn_on", entity_id="light.garage")
    assert response.context_data["errors"] == [
        {"param_name": "entity_id", "message": "Device 'light.garage' not found",
         "valid_values": ["light.kitchen", "lock.front_door"]},
    ]
    assert response.context_data["valid_values"] == {
        "entity_id": ["light.kitchen", "lock.front_door"]
    }
    response = cmd.execute(REQ, action="explode", entity_id="light.kitchen")
    assert response.context_data["valid_values"] == {
        "action": ["turn_on", "turn_off", "lock", "unlock"]
    }


class CalendarEvents(IJarvisCommand):
    """The type PRD's `get_calendar_events` with `resolved_datetimes: array<datetime>`."""

    @property
    def command_name(self) -> str:
        return "get_calendar_events"

    @property
    def description(self) -> str:
        return "Read calendar events."

    @property
    def parameters(self) -> list[JarvisParameter]:
        return [JarvisParameter("resolved_datetimes", "array<datetime>", required=False)]

    def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
        days = kwargs.get("resolved_datetimes", [])
        return CommandResponse.success_response({"days": [d.date().isoformat() for d in days]})


def test_the_type_prd_calendar_example() -> None:
    cmd = CalendarEvents()
    schema = cmd.to_openai_tool_schema()["function"]["parameters"]["properties"]
    assert schema == {"resolved_datetimes": {
        "type": "array", "items": {"type": "string", "format": "date-time"}}}
    spec = cmd.get_command_schema()
    assert spec["command_name"] == "get_calendar_events"
    assert spec["parameters"][0]["name"] == "resolved_datetimes"
    assert spec["parameters"][0]["type"] == "array<datetime>"
    assert spec["parameters"][0]["required"] is False
    # The PRD's correct tool call passes the wire check and reaches run() as datetimes.
    arguments = {"resolved_datetimes": ["2026-01-18T05:00:00Z", "2026-01-19T05:00:00Z"]}
    ptype = cmd.parameters[0].type
    assert ptype.check(arguments["resolved_datetimes"]) is None
    response = cmd.execute(RequestInformation(timezone="America/New_York"), **arguments)
    # 05:00 UTC is midnight in New York in January.
    assert response.context_data["days"] == ["2026-01-18", "2026-01-19"]


def test_strict_arguments_leave_unknown_and_missing_names_to_validate_call() -> None:

    from jarvis.sdk import (
        CommandResponse,
        IJarvisCommand,
        JarvisParameter,
        RequestInformation,
        ValidationResult,
    )

    class Strict(IJarvisCommand):
        strict_arguments = True
        command_name = "strict"
        description = "refuses names it does not declare"
        seen: ClassVar[dict] = {}

        @property
        def parameters(self) -> list:
            return [JarvisParameter("city", "string", required=True)]

        def validate_call(self, **kwargs: object) -> list[ValidationResult]:
            Strict.seen = dict(kwargs)
            unknown = [k for k in kwargs if k != "city"]
            return [
                ValidationResult(success=False, param_name=k, message=f"Unknown parameter '{k}'")
                for k in unknown
            ]

        def run(self, request_info: RequestInformation, **kwargs: object) -> CommandResponse:
            return CommandResponse.success_response(message="ran")

    # A missing required parameter no longer raises: validate_call sees the call as it is.
    response = Strict().execute(RequestInformation(), api_key="sneaky")
    assert Strict.seen == {"api_key": "sneaky"}
    assert not response.success
    assert response.context_data["errors"][0]["param_name"] == "api_key"
