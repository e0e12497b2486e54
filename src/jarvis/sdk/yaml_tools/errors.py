"""The error a broken tool file is reported with."""

from __future__ import annotations

from pathlib import Path

__all__ = ["ToolDefinitionError", "ToolFileError"]


class ToolDefinitionError(ValueError):
    """A problem in one place of a tool file; the loader adds the file name."""

    def __init__(self, message: str, line: int | None = None, tool: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.tool = tool


class ToolFileError(Exception):
    """A tool file that could not be loaded: which file, which line (1-based), what is wrong."""

    def __init__(
        self, file: Path | str, message: str, line: int | None = None, tool: str | None = None
    ) -> None:
        self.file = Path(file)
        self.line = line
        self.tool = tool
        self.message = message
        super().__init__(str(self))

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else str(self.file)
        who = f" (tool '{self.tool}')" if self.tool else ""
        return f"{where}{who}: {self.message}"

    def __repr__(self) -> str:
        return f"ToolFileError({str(self)!r})"
