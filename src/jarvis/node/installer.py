"""`jarvis commands install`: migrate the store, declare secrets, install Python packages.

Installing never overwrites a secret's value; it only creates the empty rows that tell
the operator what to set. Packages are installed with the interpreter running Jarvis
(`python -m pip install <requirement>`, one argv item per requirement) and recorded in
`<data_dir>/custom-requirements.txt`, so the node can be rebuilt the same way. A package
counts as installed when this interpreter has a distribution of that name at a version
the requirement accepts; `command_states` says, per command, what is still missing.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import re
import subprocess
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from jarvis.node.registry import CommandRegistry
from jarvis.node.store import NodeStore
from jarvis.sdk import IJarvisCommand, JarvisPackage, JarvisSecret

__all__ = [
    "REQUIREMENTS_FILE",
    "CommandPlan",
    "CommandState",
    "InstallError",
    "InstallReport",
    "PipRunner",
    "command_states",
    "install_commands",
    "install_packages",
    "missing_packages",
    "package_installed",
    "pip_install",
    "record_requirements",
]

REQUIREMENTS_FILE = "custom-requirements.txt"

PipRunner = Callable[[str], subprocess.CompletedProcess[str]]


class InstallError(Exception):
    """The named command does not exist, or a step of the installation failed."""


@dataclass
class CommandPlan:
    """What installing one command does (or, with --dry-run, would do)."""

    name: str
    secrets_created: list[JarvisSecret] = field(default_factory=list)
    secrets_kept: list[JarvisSecret] = field(default_factory=list)
    packages: list[str] = field(default_factory=list)


@dataclass
class InstallReport:
    dry_run: bool
    migrations_applied: bool
    commands: list[CommandPlan] = field(default_factory=list)
    packages_installed: list[str] = field(default_factory=list)
    packages_failed: dict[str, str] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return not self.packages_failed


def pip_install(requirement: str, python: str | None = None) -> subprocess.CompletedProcess[str]:
    """`python -m pip install <requirement>`; the requirement is one argv item, no shell."""
    return subprocess.run(
        [python or sys.executable, "-m", "pip", "install", requirement],
        capture_output=True,
        text=True,
        check=False,
    )


def package_installed(package: JarvisPackage) -> bool:
    """Whether this interpreter has the package at a version its requirement accepts."""
    try:
        requirement = Requirement(package.requirement)
        version = importlib.metadata.version(requirement.name)
    except (InvalidRequirement, importlib.metadata.PackageNotFoundError):
        return False
    return requirement.specifier.contains(version, prereleases=True)


def missing_packages(packages: Iterable[JarvisPackage]) -> list[JarvisPackage]:
    return [package for package in packages if not package_installed(package)]


def _failure(completed: subprocess.CompletedProcess[str]) -> str:
    """pip's last words (its error is at the end), or the exit status."""
    tail = (completed.stderr or completed.stdout or "").strip().splitlines()[-3:]
    return " ".join(line.strip() for line in tail) or f"exit {completed.returncode}"


def install_packages(
    requirements: Sequence[str], data_dir: Path, pip: PipRunner | None = None
) -> tuple[list[str], dict[str, str]]:
    """pip-install each requirement; the installed ones are recorded. -> (installed, failed)."""
    runner = pip or pip_install
    installed: list[str] = []
    failed: dict[str, str] = {}
    for requirement in requirements:
        completed = runner(requirement)
        if completed.returncode == 0:
            installed.append(requirement)
        else:
            failed[requirement] = _failure(completed)
    if installed:
        importlib.invalidate_caches()  # so the new modules import in this process
        record_requirements(data_dir / REQUIREMENTS_FILE, installed)
    return installed, failed


def _distribution(requirement: str) -> str:
    """The normalised project name of a requirement (PEP 503), for de-duplication."""
    name = re.split(r"[\[<>=!~;\s]", requirement, maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", name).lower()


def record_requirements(path: Path, requirements: Sequence[str]) -> None:
    """Add requirements to the file, one per line; a newer line replaces the same project's."""
    lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
    for requirement in requirements:
        project = _distribution(requirement)
        lines = [
            line
            for line in lines
            if line.strip().startswith("#") or not line.strip()
            or _distribution(line.strip()) != project
        ]
        lines.append(requirement)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text("\n".join(lines) + "\n", encoding="utf-8")
    tmp.replace(path)  # atomic: the file is never half written


def _select(registry: CommandRegistry, names: Sequence[str] | None) -> list[IJarvisCommand]:
    if not names:
        return list(registry)
    unknown = [n for n in names if n not in registry]
    if unknown:
        known = ", ".join(sorted(registry.commands)) or "none"
        raise InstallError(f"unknown command(s): {', '.join(unknown)} (known: {known})")
    return [registry.commands[n] for n in names]


def _existing_secret_rows(store: NodeStore) -> set[tuple[str, str]]:
    """Rows already declared, read without creating or migrating anything."""
    if not store.exists() or store.pending_migrations():
        return set()
    return {(r.key, r.scope) for r in store.secrets.list_secrets()}


def install_commands(
    registry: CommandRegistry,
    store: NodeStore,
    names: Sequence[str] | None = None,
    *,
    dry_run: bool = False,
    with_packages: bool = True,
    pip: PipRunner | None = None,
) -> InstallReport:
    """Install the named commands (all when `names` is empty)."""
    commands = _select(registry, names)
    if dry_run:
        migrations = store.pending_migrations()
        existing = _existing_secret_rows(store)
    else:
        migrations = store.migrate()
        existing = set()
    report = InstallReport(dry_run=dry_run, migrations_applied=migrations)
    wanted: list[str] = []
    for command in commands:
        plan = CommandPlan(name=command.command_name)
        for secret in command.all_possible_secrets:
            if dry_run:
                created = (secret.key, secret.scope) not in existing
                existing.add((secret.key, secret.scope))
            else:
                created = store.secrets.seed(secret)
            (plan.secrets_created if created else plan.secrets_kept).append(secret)
        packages: list[JarvisPackage] = list(command.required_packages)
        plan.packages = [p.requirement for p in packages]
        wanted.extend(r for r in plan.packages if r not in wanted)
        report.commands.append(plan)
    if dry_run or not with_packages:
        return report
    report.packages_installed, report.packages_failed = install_packages(
        wanted, store.data_dir, pip
    )
    return report


@dataclass
class CommandState:
    """What one command still lacks: packages not installed, required secrets not set."""

    name: str
    source: str
    packages: dict[str, bool] = field(default_factory=dict)  # requirement -> installed
    secrets: list[tuple[JarvisSecret, bool]] = field(default_factory=list)  # -> has a value

    @property
    def missing_packages(self) -> list[str]:
        return [requirement for requirement, ok in self.packages.items() if not ok]

    @property
    def missing_secrets(self) -> list[str]:
        return [secret.key for secret, is_set in self.secrets if secret.required and not is_set]

    @property
    def state(self) -> str:
        """"ready", or what is missing: "packages missing", "secrets missing" or both."""
        missing = [what for what, lacking in (("packages", self.missing_packages),
                                               ("secrets", self.missing_secrets)) if lacking]
        return " and ".join(missing) + " missing" if missing else "ready"


def command_states(registry: CommandRegistry, store: NodeStore) -> list[CommandState]:
    """Every command's state, by name; reading it creates nothing on disk."""
    known = store.exists() and not store.pending_migrations()
    states = []
    for name in sorted(registry.commands):
        command = registry.commands[name]
        state = CommandState(name=name, source=registry.sources.get(name, ""))
        for package in command.required_packages:
            state.packages[package.requirement] = package_installed(package)
        for secret in command.all_possible_secrets:
            is_set = known and store.secrets.is_set(secret.key, secret.scope)
            state.secrets.append((secret, is_set))
        states.append(state)
    return states
