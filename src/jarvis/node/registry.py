"""Which commands this node offers: built-ins, installed plugins, local files and YAML tools.

Every source is tried; a module that fails to import or a class that cannot be built is
reported in `CommandRegistry.problems` and the others still load. When two sources give
the same command name the first one wins (built-ins, then entry points, then
`<data_dir>/commands/*.py`, then YAML tools) and the clash is reported. Built-ins named in
`builtins_off` (the node's `JARVIS_BUILTINS_OFF`) are left out, so a command of the user's
own can take a built-in's name, or do its work under another name without the built-in
competing for the same requests.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import logging
import os
import pkgutil
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType
from typing import Any

from jarvis.sdk import CommandContext, IJarvisCommand

__all__ = [
    "BUILTIN_PACKAGE",
    "ENTRY_POINT_GROUP",
    "CommandRegistry",
    "RegistryProblem",
    "discover_commands",
]

log = logging.getLogger(__name__)

BUILTIN_PACKAGE = "jarvis.commands"
ENTRY_POINT_GROUP = "jarvis.commands"
_USER_MODULE_PREFIX = "jarvis_user_commands"


@dataclass(frozen=True)
class RegistryProblem:
    """Something that could not be loaded, or a name given twice."""

    source: str
    message: str

    def __str__(self) -> str:
        return f"{self.source}: {self.message}"


@dataclass
class CommandRegistry:
    """Commands by name, with where each came from and what went wrong while loading."""

    commands: dict[str, IJarvisCommand] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    problems: list[RegistryProblem] = field(default_factory=list)
    # What the commands hold open (MCP server processes), released by `close`.
    _closers: list[Callable[[], None]] = field(default_factory=list, repr=False)

    @classmethod
    def from_commands(
        cls, commands: Iterable[IJarvisCommand], context: CommandContext | None = None
    ) -> CommandRegistry:
        """A registry of the given commands (scripts and tests), bound to `context`."""
        registry = cls()
        for command in commands:
            registry.add(command, "given")
        if context is not None:
            registry.bind(context)
        return registry

    def add(self, command: IJarvisCommand, source: str) -> bool:
        try:
            name = command.command_name
        except Exception as exc:  # a broken property must not stop the other commands
            self.problems.append(RegistryProblem(source, f"command_name failed: {exc}"))
            return False
        if name in self.commands:
            first = self.sources[name]
            hint = (f"; JARVIS_BUILTINS_OFF={name} leaves the built-in out"
                    if first.startswith(BUILTIN_PACKAGE) else "")
            self.problems.append(RegistryProblem(
                source, f"duplicate command name '{name}' (already provided by {first}); "
                        f"this one is ignored{hint}"))
            return False
        self.commands[name] = command
        self.sources[name] = source
        return True

    def on_close(self, closer: Callable[[], None]) -> None:
        self._closers.append(closer)

    def close(self) -> None:
        """Release what the commands hold open; safe to call twice."""
        while self._closers:
            self._closers.pop()()

    def bind(self, context: CommandContext) -> None:
        for command in self.commands.values():
            command.bind(context)

    def get(self, name: str) -> IJarvisCommand | None:
        return self.commands.get(name)

    def __iter__(self) -> Iterator[IJarvisCommand]:
        return iter(self.commands.values())

    def __len__(self) -> int:
        return len(self.commands)

    def __contains__(self, name: object) -> bool:
        return name in self.commands


# --- scanning modules -------------------------------------------------------------------
def _command_classes(module: ModuleType) -> list[type[IJarvisCommand]]:
    """Concrete command classes defined in `module` itself (not imported into it)."""
    found = []
    for _, obj in inspect.getmembers(module, inspect.isclass):
        if (
            issubclass(obj, IJarvisCommand)
            and obj.__module__ == module.__name__
            and not inspect.isabstract(obj)
        ):
            found.append(obj)
    return found


def _instantiate(cls: type[IJarvisCommand], source: str, registry: CommandRegistry) -> None:
    try:
        command = cls()
    except Exception as exc:
        registry.problems.append(
            RegistryProblem(source, f"cannot create {cls.__name__}: {type(exc).__name__}: {exc}")
        )
        return
    registry.add(command, source)


def _load_builtins(registry: CommandRegistry, package_name: str) -> None:
    try:
        package = importlib.import_module(package_name)
    except Exception as exc:
        registry.problems.append(RegistryProblem(package_name, f"import failed: {exc}"))
        return
    modules = [package]
    for info in pkgutil.walk_packages(package.__path__, prefix=package.__name__ + "."):
        if info.name.rsplit(".", 1)[-1].startswith("_"):
            continue
        try:
            modules.append(importlib.import_module(info.name))
        except Exception as exc:
            registry.problems.append(
                RegistryProblem(info.name, f"import failed: {type(exc).__name__}: {exc}")
            )
    for module in modules:
        for cls in _command_classes(module):
            _instantiate(cls, module.__name__, registry)


def _leave_out(registry: CommandRegistry, names: set[str]) -> None:
    """Drop the built-ins named in `names`; a name no built-in has is reported."""
    for name in sorted(names):
        if name in registry.commands:
            del registry.commands[name]
            del registry.sources[name]
        else:
            known = ", ".join(sorted(registry.commands))
            registry.problems.append(RegistryProblem(
                "JARVIS_BUILTINS_OFF", f"no built-in command is named '{name}' (built-ins: "
                                       f"{known})"))


def _load_entry_points(registry: CommandRegistry) -> None:
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        source = f"entry point {ep.name} ({ep.value})"
        try:
            loaded: Any = ep.load()
        except Exception as exc:
            registry.problems.append(
                RegistryProblem(source, f"import failed: {type(exc).__name__}: {exc}")
            )
            continue
        if isinstance(loaded, ModuleType):
            for cls in _command_classes(loaded):
                _instantiate(cls, source, registry)
        elif inspect.isclass(loaded) and issubclass(loaded, IJarvisCommand):
            _instantiate(loaded, source, registry)
        elif isinstance(loaded, IJarvisCommand):
            registry.add(loaded, source)
        elif callable(loaded):
            try:
                produced = list(loaded())
            except Exception as exc:
                registry.problems.append(
                    RegistryProblem(source, f"factory failed: {type(exc).__name__}: {exc}")
                )
                continue
            for item in produced:
                if isinstance(item, IJarvisCommand):
                    registry.add(item, source)
                else:
                    registry.problems.append(
                        RegistryProblem(source, f"factory returned a non-command: {item!r}")
                    )
        else:
            registry.problems.append(
                RegistryProblem(source, "is not a command class, instance, module or factory")
            )


def _load_file(path: Path) -> ModuleType:
    name = f"{_USER_MODULE_PREFIX}.{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look the module up by name
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _load_directory(registry: CommandRegistry, directory: Path) -> None:
    if not directory.is_dir():
        return
    for path in sorted(directory.glob("*.py")):
        if path.name.startswith("_"):
            continue
        try:
            module = _load_file(path)
        except Exception as exc:
            registry.problems.append(
                RegistryProblem(str(path), f"import failed: {type(exc).__name__}: {exc}")
            )
            continue
        for cls in _command_classes(module):
            _instantiate(cls, str(path), registry)


def yaml_tool_paths(data_dir: Path, environ: dict[str, str] | None = None) -> list[Path]:
    """`<data_dir>/tools` plus every entry of `JARVIS_TOOLS` (os.pathsep-separated)."""
    env = os.environ if environ is None else environ
    paths = [data_dir / "tools"]
    for entry in env.get("JARVIS_TOOLS", "").split(os.pathsep):
        if entry.strip():
            paths.append(Path(entry.strip()).expanduser())
    return paths


def _load_yaml_tools(registry: CommandRegistry, data_dir: Path) -> None:
    paths = yaml_tool_paths(data_dir)
    existing = [p for p in paths if p.exists()]
    for path in paths[1:]:
        if not path.exists():
            registry.problems.append(RegistryProblem(str(path), "JARVIS_TOOLS path does not exist"))
    if not existing:
        return
    try:
        from jarvis.sdk.yaml_tools import load_tool_paths
    except ImportError as exc:
        registry.problems.append(RegistryProblem("YAML tools", f"loader unavailable: {exc}"))
        return
    try:
        tools, errors = load_tool_paths(existing)
    except Exception as exc:
        registry.problems.append(
            RegistryProblem("YAML tools", f"loading failed: {type(exc).__name__}: {exc}")
        )
        return
    for error in errors:
        registry.problems.append(RegistryProblem("YAML tools", str(error)))
    for tool in tools:
        source = str(getattr(tool, "source_path", None) or "YAML tool")
        registry.add(tool, source)


def discover_commands(
    context: CommandContext,
    *,
    builtins: bool = True,
    entry_points_enabled: bool = True,
    user_dir: Path | None = None,
    yaml_tools: bool = True,
    builtin_package: str = BUILTIN_PACKAGE,
    builtins_off: Iterable[str] = (),
) -> CommandRegistry:
    """Load every source, bind each command to `context` and return the registry; the
    built-ins named in `builtins_off` are left out."""
    registry = CommandRegistry()
    data_dir = context.data_dir
    if builtins:
        _load_builtins(registry, builtin_package)
        _leave_out(registry, set(builtins_off))
    if entry_points_enabled:
        _load_entry_points(registry)
    directory = user_dir if user_dir is not None else (data_dir / "commands" if data_dir else None)
    if directory is not None:
        _load_directory(registry, directory)
    if yaml_tools and data_dir is not None:
        _load_yaml_tools(registry, data_dir)
    registry.bind(context)
    for problem in registry.problems:
        log.warning("command registry: %s", problem)
    return registry
