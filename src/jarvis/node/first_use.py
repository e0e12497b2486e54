"""Install a command's missing `required_packages` the first time it runs.

Before a command runs, `PackageGate.ensure(command)` checks its packages against this
interpreter. Missing ones are pip-installed (announced with one progress line) and
recorded in `<data_dir>/custom-requirements.txt`, unless the node's `auto_install` setting
(`JARVIS_AUTO_INSTALL=0`) forbids it. When they cannot be had, `PackagesUnavailableError`
carries the sentence to speak. A command must import such packages inside `run()`, not at
the top of its module, or it cannot even be loaded before they are installed.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from jarvis.node.installer import PipRunner, install_packages, missing_packages
from jarvis.sdk import IJarvisCommand, JarvisPackage

__all__ = ["PackageGate", "PackagesUnavailableError", "Progress", "print_progress"]

log = logging.getLogger(__name__)

Progress = Callable[[str], None]


class PackagesUnavailableError(Exception):
    """A command's packages are missing and could not (or may not) be installed."""

    def __init__(self, message: str, requirements: list[str]) -> None:
        super().__init__(message)
        self.message = message
        self.requirements = requirements


def print_progress(line: str) -> None:
    """The default progress report: one line on stderr, away from the answers on stdout."""
    print(line, file=sys.stderr, flush=True)


def _listed(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + f" and {items[-1]}"


class PackageGate:
    """Lets a command run once its packages are there; remembers the commands that passed."""

    def __init__(
        self,
        data_dir: Path,
        *,
        allowed: bool = True,
        progress: Progress | None = None,
        pip: PipRunner | None = None,
    ) -> None:
        self.data_dir = data_dir
        self.allowed = allowed
        self.progress = progress or print_progress
        self.pip = pip
        self._ready: set[str] = set()
        self._lock = threading.Lock()  # two first uses at once must not run pip twice

    def ensure(self, command: IJarvisCommand) -> None:
        """Return when `command` can run; raise `PackagesUnavailableError` otherwise."""
        name = command.command_name
        if name in self._ready:
            return
        with self._lock:
            missing = missing_packages(command.required_packages)
            if missing:
                self._install(name, missing)
            self._ready.add(name)

    def _install(self, name: str, missing: list[JarvisPackage]) -> None:
        wanted = [package.requirement for package in missing]
        if not self.allowed:
            raise PackagesUnavailableError(
                f"The {name} command needs {_listed(wanted)}, which is not installed, and "
                f"installing on first use is turned off; install it with: "
                f"jarvis commands install {name}",
                wanted,
            )
        self.progress(f"Installing {_listed(wanted)} for {name} (first use)...")
        log.info("%s: installing %s", name, ", ".join(wanted))
        _, failed = install_packages(wanted, self.data_dir, self.pip)
        if failed:
            requirement, why = next(iter(failed.items()))
            raise PackagesUnavailableError(
                f"I couldn't install {requirement}, which the {name} command needs: {why}",
                wanted,
            )
        still = [package.requirement for package in missing_packages(missing)]
        if still:
            raise PackagesUnavailableError(
                f"{_listed(still)} was installed for the {name} command, but this Python "
                f"({sys.executable}) does not see it",
                still,
            )
