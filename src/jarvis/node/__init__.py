"""The Jarvis node: runs commands locally and talks to the command center over HTTP."""

from jarvis.node.client import (
    CenterCertificateError,
    CenterError,
    CenterUnreachableError,
    JarvisCommandCenterClient,
)
from jarvis.node.registry import CommandRegistry, RegistryProblem, discover_commands
from jarvis.node.runtime import Node, command_context, open_node
from jarvis.node.scheduler import Scheduler
from jarvis.node.service import (
    CommandExecutionService,
    ToolCallRecord,
    VoiceCommandResult,
    console_validation_handler,
)
from jarvis.node.settings import NodeSettings, node_timezone
from jarvis.node.store import NodeStore, SecretKeyError, SqliteCommandStorage, SqliteSecretStore

__all__ = [
    "CenterCertificateError",
    "CenterError",
    "CenterUnreachableError",
    "CommandExecutionService",
    "CommandRegistry",
    "JarvisCommandCenterClient",
    "Node",
    "NodeSettings",
    "NodeStore",
    "RegistryProblem",
    "Scheduler",
    "SecretKeyError",
    "SqliteCommandStorage",
    "SqliteSecretStore",
    "ToolCallRecord",
    "VoiceCommandResult",
    "command_context",
    "console_validation_handler",
    "discover_commands",
    "node_timezone",
    "open_node",
]
