"""Tools declared in YAML: Python functions (`fn`) and command lines (`exec`) as commands.

    from jarvis.sdk.yaml_tools import load_tool_paths
    commands, errors = load_tool_paths([Path("~/.local/share/jarvis/tools").expanduser()])

Every tool becomes an `IJarvisCommand` that runs through the usual `execute()` pipeline.
The file format, the argv rules and the security model are described in docs/yaml-tools.md.
"""

from jarvis.sdk.yaml_tools.argv import ArgvTemplate
from jarvis.sdk.yaml_tools.coercion import coerce_lossless
from jarvis.sdk.yaml_tools.errors import ToolFileError
from jarvis.sdk.yaml_tools.loader import (
    DEFAULT_MAX_OUTPUT,
    DEFAULT_TIMEOUT_S,
    load_tool_file,
    load_tool_paths,
    tool_paths_from_env,
)
from jarvis.sdk.yaml_tools.runner import SAFE_PATH
from jarvis.sdk.yaml_tools.tool import ExecTool, FunctionTool, YamlTool

__all__ = [
    "DEFAULT_MAX_OUTPUT",
    "DEFAULT_TIMEOUT_S",
    "SAFE_PATH",
    "ArgvTemplate",
    "ExecTool",
    "FunctionTool",
    "ToolFileError",
    "YamlTool",
    "coerce_lossless",
    "load_tool_file",
    "load_tool_paths",
    "tool_paths_from_env",
]
