"""`jarvis commands install`: migrate the store, declare secrets, install Python packages.

Installing never overwrites a secret's value; it only creates the empty rows that tell
the operator what to set. Packages are installed with the interpreter running Jarvis
(`python -m pip install <requirement>`, one argv item per requirement) and recorded in
`<data_dir>/custom-requirements.txt`, so the node can be rebuilt the same way.
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from jarvis.node.registry import CommandRegistry
from jarvis.node.store import NodeStore
from jarvis.sdk import IJarvisCommand, JarvisPackage, JarvisSecret

__all__ = [
    "REQUIREMENTS_FILE",
    "CommandPlan",
    "InstallError",
    "InstallReport",
    "PipRunner",
    "install_commands",
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
    install_packages: bool = True,
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
    if dry_run or not install_packages:
        return report
    runner = pip or pip_install
    for requirement in wanted:
        completed = runner(requirement)
        if completed.returncode == 0:
            report.packages_installed.append(requirement)
        else:
            tail = (completed.stderr or completed.stdout or "").strip().splitlines()[-3:]
            report.packages_failed[requirement] = " ".join(tail) or f"exit {completed.returncode}"
    if report.packages_installed:
        record_requirements(store.data_dir / REQUIREMENTS_FILE, report.packages_installed)
    return report
