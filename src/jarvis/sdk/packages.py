"""Python packages a command needs, installed by `jarvis commands install`."""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["JarvisPackage"]

# PEP 508 distribution names and a plain version specifier list: nothing pip could read
# as an option or a URL gets through.
_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?(\[[A-Za-z0-9._,-]+\])?")
_SPEC = re.compile(r"(\s*(===|==|!=|~=|>=|<=|>|<)\s*[A-Za-z0-9.*+!_-]+\s*)(,\s*(===|==|!=|~=|>=|<=|>|<)\s*[A-Za-z0-9.*+!_-]+\s*)*")


@dataclass(frozen=True)
class JarvisPackage:
    """`JarvisPackage("music-assistant-client", ">=1.3.0")` -> `music-assistant-client>=1.3.0`."""

    name: str
    version: str | None = None

    def __post_init__(self) -> None:
        if not _NAME.fullmatch(self.name):
            raise ValueError(f"Invalid package name {self.name!r}")
        if self.version is not None and not _SPEC.fullmatch(self.version):
            raise ValueError(f"Invalid version specifier {self.version!r} for {self.name}")

    @property
    def requirement(self) -> str:
        """The requirement string pip and custom-requirements.txt use."""
        return f"{self.name}{(self.version or '').replace(' ', '')}"

    def __str__(self) -> str:
        return self.requirement
