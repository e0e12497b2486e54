"""Tool files -> commands. A file loads completely or not at all; other files are unaffected."""

from __future__ import annotations

import importlib
import math
import os
import re
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

from jarvis.sdk.command import CommandExample
from jarvis.sdk.parameter import JarvisParameter
from jarvis.sdk.types import ParamType, parse_type
from jarvis.sdk.yaml_tools.argv import ArgvTemplate
from jarvis.sdk.yaml_tools.errors import ToolDefinitionError, ToolFileError
from jarvis.sdk.yaml_tools.introspect import FunctionSignature, IntrospectedParam, introspect
from jarvis.sdk.yaml_tools.landing import Landing, environment_hazards, land_all
from jarvis.sdk.yaml_tools.template import Placeholder, TemplateError, expand_env, parse_template
from jarvis.sdk.yaml_tools.tool import ExecTool, FunctionTool, YamlTool
from jarvis.sdk.yaml_tools.yaml_source import LineDict, LineList, line_of, load_yaml

__all__ = [
    "DEFAULT_MAX_OUTPUT",
    "DEFAULT_TIMEOUT_S",
    "load_tool_file",
    "load_tool_paths",
    "tool_paths_from_env",
]

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_OUTPUT = 64 * 1024
TOOL_SUFFIXES = (".yaml", ".yml")

_COMMON_FIELDS = {"name", "description", "params", "examples"}
_FN_FIELDS = _COMMON_FIELDS | {"fn"}
_EXEC_FIELDS = _COMMON_FIELDS | {"exec", "timeout", "max_output", "cwd", "env"}
_PARAM_FIELDS = {
    "name", "type", "required", "default", "description", "example", "override", "enum",
    "synonyms", "refinable", "minimum", "maximum",
}
_EXEC_PARAM_FIELDS = _PARAM_FIELDS | {"allow_dash"}
_OVERRIDE_FIELDS = {"name", "type", "description", "override"}
_EXAMPLE_FIELDS = {"voice_command", "parameters", "primary"}
_TOOL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]{0,63}")
_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


# --- public API ---------------------------------------------------------------------------
def load_tool_file(path: Path | str, environ: Mapping[str, str] | None = None) -> list[YamlTool]:
    """The tools of one file; raises ToolFileError (the first problem) when it is broken."""
    tools, errors = _load_file(Path(path), os.environ if environ is None else environ)
    if errors:
        raise errors[0]
    return tools


def load_tool_paths(
    paths: list[Path] | list[str], environ: Mapping[str, str] | None = None
) -> tuple[list[YamlTool], list[ToolFileError]]:
    """Every tool in `paths` (a directory means its *.yaml and *.yml files), and every error.

    A broken file contributes its errors and no tools; the other files still load. A tool
    whose name an earlier file already used is an error of the later file.
    """
    env = os.environ if environ is None else environ
    commands: list[YamlTool] = []
    errors: list[ToolFileError] = []
    seen: dict[str, Path] = {}
    for file in _tool_files([Path(p) for p in paths], errors):
        tools, file_errors = _load_file(file, env)
        for tool in tools:
            if tool.command_name in seen:
                file_errors.append(
                    ToolFileError(
                        file,
                        f"tool '{tool.command_name}' is already defined in "
                        f"{seen[tool.command_name]}",
                        tool.line,
                        tool.command_name,
                    )
                )
        if file_errors:
            errors.extend(file_errors)
            continue
        for tool in tools:
            seen[tool.command_name] = file
        commands.extend(tools)
    return commands, errors


def tool_paths_from_env(data_dir: Path, environ: Mapping[str, str] | None = None) -> list[Path]:
    """`<data_dir>/tools` when it exists, then every path in JARVIS_TOOLS (os.pathsep-separated)."""
    env = os.environ if environ is None else environ
    paths: list[Path] = []
    default = Path(data_dir) / "tools"
    if default.is_dir():
        paths.append(default)
    for entry in env.get("JARVIS_TOOLS", "").split(os.pathsep):
        if entry.strip():
            paths.append(Path(entry.strip()).expanduser())
    return paths


def _tool_files(paths: list[Path], errors: list[ToolFileError]) -> list[Path]:
    files: list[Path] = []
    for path in paths:
        if path.is_dir():
            files.extend(
                sorted(p for p in path.iterdir() if p.suffix in TOOL_SUFFIXES and p.is_file())
            )
        elif path.is_file():
            files.append(path)
        else:
            errors.append(ToolFileError(path, "no such file or directory"))
    return files


# --- one file -----------------------------------------------------------------------------
def _load_file(
    path: Path, environ: Mapping[str, str]
) -> tuple[list[YamlTool], list[ToolFileError]]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return [], [ToolFileError(path, f"cannot read the file: {exc}")]
    try:
        document = load_yaml(text)
        entries = _tool_entries(document)
    except ToolDefinitionError as exc:
        return [], [ToolFileError(path, exc.message, exc.line, exc.tool)]
    tools: list[YamlTool] = []
    errors: list[ToolFileError] = []
    names: set[str] = set()
    for index, entry in enumerate(entries):
        line = line_of(entries, index)
        try:
            tool = _ToolBuilder(entry, path, environ, line).build()
        except ToolDefinitionError as exc:
            errors.append(ToolFileError(path, exc.message, exc.line or line, exc.tool))
            continue
        if tool.command_name in names:
            errors.append(
                ToolFileError(path, "a tool of this name is already in this file", line,
                              tool.command_name)
            )
        names.add(tool.command_name)
        tools.append(tool)
    return ([], errors) if errors else (tools, [])


def _tool_entries(document: Any) -> LineList:
    if not isinstance(document, LineDict):
        raise ToolDefinitionError("a tool file is a mapping with a 'tools' list", 1)
    unknown = set(document) - {"tools"}
    if unknown:
        key = sorted(unknown)[0]
        raise ToolDefinitionError(
            f"unknown top-level field '{key}' (only 'tools' is allowed)", line_of(document, key)
        )
    entries = document.get("tools")
    if not isinstance(entries, LineList):
        raise ToolDefinitionError("'tools' must be a list of tools", line_of(document, "tools"))
    return entries


# --- one tool -----------------------------------------------------------------------------
@dataclass
class _ParamDecl:
    """A declared parameter; `given` holds the fields the file actually wrote."""

    name: str
    line: int | None
    fields: dict[str, Any] = field(default_factory=dict)

    def given(self, key: str) -> bool:
        return key in self.fields

    @property
    def is_override(self) -> bool:
        return "override" in self.fields


class _ToolBuilder:
    """Checks one tool entry and builds its command; raises ToolDefinitionError."""

    def __init__(
        self, raw: Any, path: Path, environ: Mapping[str, str], line: int | None
    ) -> None:
        self.raw = raw
        self.path = path
        self.environ = environ
        self.line = line
        self.name: str | None = None

    def fail(
        self, message: str, container: Any = None, key: str | int | None = None
    ) -> NoReturn:
        if container is not None and key is not None:
            line = line_of(container, key, self.line)
        else:
            line = getattr(container, "line", None) or self.line
        raise ToolDefinitionError(message, line, self.name)

    # --- fields -----------------------------------------------------------------------
    def expand(self, value: Any, container: Any, key: str | int) -> Any:
        """`${VAR}` substituted in every string of `value` (recursively)."""
        if isinstance(value, str):
            try:
                return expand_env(value, self.environ)
            except TemplateError as exc:
                self.fail(str(exc), container, key)
        if isinstance(value, LineDict):
            return {k: self.expand(v, value, k) for k, v in value.items()}
        if isinstance(value, LineList):
            return [self.expand(v, value, i) for i, v in enumerate(value)]
        return value

    def text(self, container: LineDict, key: str, required: bool = False) -> str | None:
        if key not in container:
            if required:
                self.fail(f"'{key}' is required", container)
            return None
        value = container[key]
        if not isinstance(value, str) or not value.strip():
            self.fail(f"'{key}' must be non-empty text", container, key)
        return self.expand(value, container, key)

    def build(self) -> YamlTool:
        raw = self.raw
        if not isinstance(raw, LineDict):
            self.fail("each tool is a mapping with at least 'name' and 'fn' or 'exec'")
        name = raw.get("name")
        if not isinstance(name, str) or not _TOOL_NAME.fullmatch(name):
            self.fail(
                "'name' is required: letters, digits, '_' or '-', at most 64, "
                "starting with a letter or '_'",
                raw,
                "name",
            )
        self.name = name
        kinds = [k for k in ("fn", "exec") if k in raw]
        if len(kinds) != 1:
            self.fail("a tool needs exactly one of 'fn' (Python) or 'exec' (command line)", raw)
        allowed = _FN_FIELDS if kinds[0] == "fn" else _EXEC_FIELDS
        for key in raw:
            if key not in allowed:
                self.fail(
                    f"unknown field '{key}' for a{'n exec' if kinds[0] == 'exec' else ' fn'} "
                    f"tool (allowed: {', '.join(sorted(allowed))})",
                    raw,
                    key,
                )
        # Fields are read in the order they are usually written, so the first error is first.
        description = self.text(raw, "description", required=kinds[0] == "exec")
        declared = self.param_decls(exec_tool=kinds[0] == "exec")
        if kinds[0] == "fn":
            return self.build_function(declared, description)
        return self.build_exec(declared, description or "")

    def param_decls(self, exec_tool: bool) -> list[_ParamDecl]:
        raw_params = self.raw.get("params")
        if raw_params is None:
            return []
        if not isinstance(raw_params, LineList):
            self.fail("'params' must be a list", self.raw, "params")
        allowed = _EXEC_PARAM_FIELDS if exec_tool else _PARAM_FIELDS
        decls: list[_ParamDecl] = []
        seen: set[str] = set()
        for index, entry in enumerate(raw_params):
            if not isinstance(entry, LineDict):
                self.fail("each parameter is a mapping with at least 'name'", raw_params, index)
            name = entry.get("name")
            if not isinstance(name, str) or not name.isidentifier():
                self.fail("a parameter needs a 'name' that is an identifier", entry, "name")
            if name in seen:
                self.fail(f"parameter '{name}' is declared twice", entry, "name")
            seen.add(name)
            for key in entry:
                if key not in allowed:
                    self.fail(
                        f"unknown field '{key}' in parameter '{name}' "
                        f"(allowed: {', '.join(sorted(allowed))})",
                        entry,
                        key,
                    )
            decl = _ParamDecl(name, entry.line)
            for key, value in entry.items():
                if key != "name":
                    decl.fields[key] = self.expand(value, entry, key)
            decl.fields.pop("name", None)
            self.check_decl(decl, entry)
            decls.append(decl)
        return decls

    def check_decl(self, decl: _ParamDecl, entry: LineDict) -> None:
        f = decl.fields
        if "type" in f:
            try:
                parse_type(f["type"])
            except ValueError as exc:
                self.fail(f"parameter '{decl.name}': {exc}", entry, "type")
        for key in ("required", "allow_dash", "refinable"):
            if key in f and not isinstance(f[key], bool):
                self.fail(f"parameter '{decl.name}': '{key}' must be true or false", entry, key)
        if decl.is_override:
            extra = set(f) - _OVERRIDE_FIELDS
            if extra:
                self.fail(
                    f"override parameter '{decl.name}' takes only "
                    f"{', '.join(sorted(_OVERRIDE_FIELDS))} (not {', '.join(sorted(extra))})",
                    entry,
                    sorted(extra)[0],
                )
        if f.get("required") is True and f.get("default") is not None:
            self.fail(
                f"parameter '{decl.name}' is required, so its default would never be used",
                entry,
                "default",
            )
        if "enum" in f and (
            not isinstance(f["enum"], list)
            or not f["enum"]
            or any(isinstance(v, dict | list) or v is None for v in f["enum"])
        ):
            self.fail(f"parameter '{decl.name}': 'enum' is a non-empty list of values",
                      entry, "enum")
        for key in ("description",):
            if key in f and not isinstance(f[key], str):
                self.fail(f"parameter '{decl.name}': '{key}' must be text", entry, key)

    # --- parameters -------------------------------------------------------------------
    def make_param(
        self, decl: _ParamDecl | None, seed: IntrospectedParam | None
    ) -> JarvisParameter:
        f = decl.fields if decl is not None else {}
        name = decl.name if decl is not None else seed.name  # type: ignore[union-attr]
        type_string = f.get("type", seed.type if seed else "str")
        if "required" in f:
            required = f["required"]
        elif f.get("default") is not None:
            required = False
        else:
            required = seed.required if seed else True
        default = f.get("default", seed.default if seed else None)
        description = f.get("description", seed.description if seed else None)
        enum = f.get("enum", seed.enum_values if seed else None)
        try:
            return JarvisParameter(
                name,
                type_string,
                required=required,
                description=description,
                default=default,
                enum_values=[str(v) for v in enum] if enum is not None else None,
                example=f.get("example"),
                enum_synonyms=f.get("synonyms"),
                refinable=f.get("refinable", False),
                minimum=f.get("minimum"),
                maximum=f.get("maximum"),
            )
        except ValueError as exc:
            line = decl.line if decl is not None else None
            raise ToolDefinitionError(f"parameter '{name}': {exc}", line, self.name) from exc

    @staticmethod
    def override_types(declared: list[_ParamDecl]) -> dict[str, ParamType]:
        return {d.name: parse_type(d.fields.get("type", "str")) for d in declared if d.is_override}

    def override_value(self, decl: _ParamDecl) -> Any:
        ptype = parse_type(decl.fields.get("type", "str"))
        raw = decl.fields["override"]
        try:
            return ptype.from_text(raw) if isinstance(raw, str) else ptype.coerce(raw)
        except ValueError:
            # The value itself stays out of the message: it is usually a secret.
            raise ToolDefinitionError(
                f"the override of '{decl.name}' does not fit its type {ptype.name}",
                decl.line,
                self.name,
            ) from None

    def examples(self, visible: set[str]) -> list[CommandExample]:
        raw = self.raw.get("examples")
        if raw is None:
            return []
        if not isinstance(raw, LineList):
            self.fail("'examples' must be a list", self.raw, "examples")
        out: list[CommandExample] = []
        for index, entry in enumerate(raw):
            if not isinstance(entry, LineDict) or not isinstance(entry.get("voice_command"), str):
                self.fail("an example needs 'voice_command' (text)", raw, index)
            unknown = set(entry) - _EXAMPLE_FIELDS
            if unknown:
                self.fail(f"unknown field '{sorted(unknown)[0]}' in an example", entry)
            parameters = self.expand(entry.get("parameters") or {}, entry, "parameters")
            if not isinstance(parameters, dict) or set(parameters) - visible:
                self.fail(
                    "an example's 'parameters' map names of the tool's (non-override) parameters",
                    entry,
                    "parameters",
                )
            out.append(
                CommandExample(
                    self.expand(entry["voice_command"], entry, "voice_command"),
                    parameters,
                    bool(entry.get("primary", False)),
                )
            )
        if sum(1 for e in out if e.is_primary) > 1:
            self.fail("at most one example may be primary", raw)
        return out

    # --- fn tools -----------------------------------------------------------------------
    def import_function(self) -> Callable[..., Any]:
        spec = self.text(self.raw, "fn", required=True)
        assert spec is not None
        module_name, _, attribute = spec.partition(":")
        if not module_name or not attribute:
            self.fail(f"'fn' is 'module:function', got '{spec}'", self.raw, "fn")
        folder = str(self.path.parent.resolve())
        if folder not in sys.path:
            sys.path.append(folder)  # a module may sit next to its tool file
        try:
            target: Any = importlib.import_module(module_name)
        except Exception as exc:  # any import failure is the tool file's problem to report
            self.fail(
                f"cannot import module '{module_name}': {type(exc).__name__}: {exc}",
                self.raw,
                "fn",
            )
        for part in attribute.split("."):
            if not hasattr(target, part):
                self.fail(f"'{spec}': '{part}' not found", self.raw, "fn")
            target = getattr(target, part)
        if not callable(target):
            self.fail(f"'{spec}' is not callable", self.raw, "fn")
        return target  # type: ignore[no-any-return]

    def build_function(self, declared: list[_ParamDecl], description: str | None) -> YamlTool:
        func = self.import_function()
        try:
            signature: FunctionSignature = introspect(func)
        except (TypeError, ValueError) as exc:
            self.fail(f"cannot read the signature of '{self.raw['fn']}': {exc}", self.raw, "fn")
        by_name = {d.name: d for d in declared}
        for decl in declared:
            if decl.name not in signature.params and not signature.accepts_any_keyword:
                raise ToolDefinitionError(
                    f"parameter '{decl.name}' is not a parameter of '{self.raw['fn']}' "
                    f"(it takes: {', '.join(signature.params) or 'nothing'})",
                    decl.line,
                    self.name,
                )
        params: list[JarvisParameter] = []
        overrides: dict[str, Any] = {}
        extra = [d.name for d in declared if d.name not in signature.params]
        names = list(signature.params) + extra
        for name in names:
            decl = by_name.get(name)
            if decl is not None and decl.is_override:
                overrides[name] = self.override_value(decl)
            else:
                params.append(self.make_param(decl, signature.params.get(name)))
        description = description or signature.summary
        if not description:
            self.fail("'description' is required (the function has no docstring)", self.raw)
        return FunctionTool(
            func=func,
            positional_only=[p.name for p in signature.params.values() if p.positional_only],
            pass_none_for=[
                p.name for p in signature.params.values() if not p.required and not p.has_default
            ],
            name=self.name,
            description=description,
            parameters=params,
            overrides=overrides,
            override_types=self.override_types(declared),
            source_path=self.path,
            line=self.line,
            examples=self.examples({p.name for p in params}),
        )

    # --- exec tools -----------------------------------------------------------------------
    def build_exec(self, declared: list[_ParamDecl], description: str) -> YamlTool:
        try:
            template = ArgvTemplate.parse(self.raw["exec"], self.environ)
        except TemplateError as exc:
            self.fail(f"exec: {exc}", self.raw, "exec")
        env = self.exec_env()
        params: list[JarvisParameter] = []
        overrides: dict[str, Any] = {}
        for decl in declared:
            if decl.is_override:
                overrides[decl.name] = self.override_value(decl)
                if "\x00" in str(overrides[decl.name]):
                    raise ToolDefinitionError(
                        f"the override of '{decl.name}' holds a NUL byte", decl.line, self.name
                    )
            else:
                params.append(self.make_param(decl, None))
        names = {d.name for d in declared}
        used = template.referenced_names() | {
            p.name for pieces in env.values() for p in pieces if isinstance(p, Placeholder)
        }
        for missing in sorted(used - names):
            self.fail(f"'{{{missing}}}' is used but no parameter '{missing}' is declared",
                      self.raw, "exec")
        for decl in declared:
            if decl.name not in used:
                raise ToolDefinitionError(
                    f"parameter '{decl.name}' is not used in 'exec' or 'env'", decl.line, self.name
                )
        allow_dash = {d.name for d in declared if d.fields.get("allow_dash") is True}
        landing = self.exec_landing(template, params, overrides, allow_dash)
        for hazard in environment_hazards(template.program, env):
            self.fail(f"env: {hazard.describe()}", self.raw, "env")
        return ExecTool(
            template=template,
            env=env,
            cwd=self.exec_cwd(),
            timeout=self.number("timeout", DEFAULT_TIMEOUT_S),
            max_output=int(self.number("max_output", DEFAULT_MAX_OUTPUT, integer=True)),
            landing=landing,
            allow_dash=allow_dash,
            name=self.name,
            description=description,
            parameters=params,
            overrides=overrides,
            override_types=self.override_types(declared),
            source_path=self.path,
            line=self.line,
            examples=self.examples({p.name for p in params}),
        )

    def exec_landing(
        self,
        template: ArgvTemplate,
        params: list[JarvisParameter],
        overrides: Mapping[str, Any],
        allow_dash: set[str],
    ) -> Landing:
        """Where the values land in every shape of the argv; a value in code is a load error."""
        always = {p.name for p in params if p.required or p.default is not None} | set(overrides)
        arrays = {p.name for p in params if p.type.is_array} | {
            name for name, value in overrides.items() if isinstance(value, list)
        }
        landing = land_all(template.program, template.shapes(always, arrays), allow_dash)
        if landing.hazards:
            self.fail(f"exec: {landing.hazards[0].describe()}", self.raw, "exec")
        return landing

    def number(self, key: str, default: float, integer: bool = False) -> float:
        if key not in self.raw:
            return default
        value = self.raw[key]
        if isinstance(value, str):
            value = self.expand(value, self.raw, key)
            try:
                value = float(value)
            except ValueError:
                self.fail(f"'{key}' must be a positive number", self.raw, key)
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        if not ok or not math.isfinite(value) or value <= 0 or (integer and value != int(value)):
            self.fail(f"'{key}' must be a positive {'whole ' if integer else ''}number",
                      self.raw, key)
        return float(value)

    def exec_cwd(self) -> Path:
        folder = self.path.parent.resolve()
        text = self.text(self.raw, "cwd")
        if text is None:
            return folder
        cwd = Path(text).expanduser()
        cwd = cwd if cwd.is_absolute() else folder / cwd
        if not cwd.is_dir():
            self.fail(f"'cwd' {cwd} is not a directory", self.raw, "cwd")
        return cwd

    def exec_env(self) -> dict[str, list[str | Placeholder]]:
        raw = self.raw.get("env")
        if raw is None:
            return {}
        if not isinstance(raw, LineDict):
            self.fail("'env' must be a mapping of variable names to text", self.raw, "env")
        env: dict[str, list[str | Placeholder]] = {}
        for key, value in raw.items():
            if not _ENV_NAME.fullmatch(key):
                self.fail(f"'{key}' is not a valid environment variable name", raw, key)
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                self.fail(f"env '{key}' must be text", raw, key)
            try:
                env[key] = parse_template(str(value), self.environ)
            except TemplateError as exc:
                self.fail(f"env '{key}': {exc}", raw, key)
        return env
