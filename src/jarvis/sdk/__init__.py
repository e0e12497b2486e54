"""The command SDK: everything a command author imports, and nothing of the server."""

from jarvis.sdk.command import (
    CommandAntipattern,
    CommandExample,
    IJarvisCommand,
    JarvisCommandBase,
)
from jarvis.sdk.context import CommandContext, CommandStorage, MemoryStorage
from jarvis.sdk.packages import JarvisPackage
from jarvis.sdk.parameter import IJarvisParameter, JarvisParameter, is_llm_artifact
from jarvis.sdk.response import (
    CommandResponse,
    JarvisButton,
    PreRouteResult,
    RequestInformation,
    ValidationResult,
)
from jarvis.sdk.secrets import (
    EnvironmentSecretStore,
    JarvisSecret,
    MissingSecretsError,
    SecretStore,
)
from jarvis.sdk.types import ParamType, ParamTypeError, parse_type

__all__ = [
    "CommandAntipattern",
    "CommandContext",
    "CommandExample",
    "CommandResponse",
    "CommandStorage",
    "EnvironmentSecretStore",
    "IJarvisCommand",
    "IJarvisParameter",
    "JarvisButton",
    "JarvisCommandBase",
    "JarvisPackage",
    "JarvisParameter",
    "JarvisSecret",
    "MemoryStorage",
    "MissingSecretsError",
    "ParamType",
    "ParamTypeError",
    "PreRouteResult",
    "RequestInformation",
    "SecretStore",
    "ValidationResult",
    "is_llm_artifact",
    "parse_type",
]
