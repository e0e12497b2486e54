"""Python packages a command needs, installed by `jarvis commands install`."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["JarvisPackage"]

# PEP 508 distribution names and a plain version specifier list: nothing pip could read
# as an option or a URL gets through.
_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?(\[[A-Za-z0-9._,-]+\])?")
_CLAUSE = r"(===|==|!=|~=|>=|<=|>|<)[A-Za-z0-9.*+!_-]+"
_SPEC = re.compile(rf"{_CLAUSE}(,{_CLAUSE})*")


def _compact(spec: str) -> str:
    # Spaces and tabs are allowed around clauses; a newline would split a requirements file.
    return re.sub(r"[ \t]+", "", spec)


@dataclass(frozen=True)
class JarvisPackage:
    """`JarvisPackage("music-assistant-client", ">=1.3.0")` -> `music-assistant-client>=1.3.0`."""

    name: str
    version: str | None = None

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise ValueError(f"Invalid package name {self.name!r}")
        if self.version is not None and not _SPEC.fullmatch(_compact(self.version)):
            raise ValueError(f"Invalid version specifier {self.version!r} for {self.name}")

    @property
    def requirement(self) -> str:
        """The requirement string pip and custom-requirements.txt use (one line, no spaces)."""
        return f"{self.name}{_compact(self.version or '')}"

    def __str__(self) -> str:
        return self.requirement
