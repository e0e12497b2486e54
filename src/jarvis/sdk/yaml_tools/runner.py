"""Running an exec tool's program: no shell, time and output limits, an explicit environment."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import IO

__all__ = [
    "SAFE_PATH",
    "OutputTooLargeError",
    "ProcessResult",
    "ProcessTimeoutError",
    "ProgramNotFoundError",
    "resolve_program",
    "run_process",
]

# What a tool gets as PATH when its `env` does not set one.
SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_CHUNK = 65536
# How long to wait for pipes to close once the program itself has exited.
_DRAIN_GRACE_S = 1.0


class ProgramNotFoundError(RuntimeError):
    """The program is not on the tool's PATH, or is not executable."""


class ProcessTimeoutError(RuntimeError):
    """The program ran past its time limit and was killed, with its whole process group."""


class OutputTooLargeError(RuntimeError):
    """The program wrote more than `max_output` bytes to stdout and was killed."""


@dataclass(frozen=True)
class ProcessResult:
    """A finished program: exit code, stdout and (capped) stderr."""

    exit_code: int
    stdout: bytes
    stderr: bytes


def resolve_program(program: str, env: Mapping[str, str], cwd: Path | None) -> str:
    """The program's path: a bare name is looked up on the tool's own PATH."""
    if os.sep in program:
        path = Path(program)
        if not path.is_absolute() and cwd is not None:
            path = cwd / path
        if path.is_file() and os.access(path, os.X_OK):
            return str(path)
        raise ProgramNotFoundError(f"program '{program}' does not exist or is not executable")
    found = shutil.which(program, path=env.get("PATH", SAFE_PATH))
    if found is None:
        raise ProgramNotFoundError(f"program '{program}' was not found on PATH")
    return found


class _Reader(threading.Thread):
    """Drains one pipe, keeping at most `limit` bytes; calls `on_overflow` once past it."""

    def __init__(
        self, stream: IO[bytes], limit: int, on_overflow: Callable[[], None] | None = None
    ) -> None:
        super().__init__(daemon=True)
        self.stream = stream
        self.limit = limit
        self.on_overflow = on_overflow
        self.data = bytearray()
        self.overflowed = False

    def run(self) -> None:
        try:
            while chunk := self.stream.read1(_CHUNK):  # type: ignore[attr-defined]
                room = self.limit - len(self.data)
                if len(chunk) > room:
                    self.data.extend(chunk[: max(room, 0)])
                    if not self.overflowed:
                        self.overflowed = True
                        if self.on_overflow is not None:
                            self.on_overflow()
                else:
                    self.data.extend(chunk)
        except (OSError, ValueError):
            pass  # the pipe closed under us because the group was killed
        finally:
            self.stream.close()


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)


def run_process(
    argv: list[str],
    *,
    env: Mapping[str, str],
    cwd: Path | None,
    timeout: float,
    max_output: int,
) -> ProcessResult:
    """Run `argv` (never through a shell) and collect its output.

    The program gets its own session, so a timeout or an overflow kills it and everything
    it started. Raises ProgramNotFoundError, ProcessTimeoutError or OutputTooLargeError.
    """
    program = resolve_program(argv[0], env, cwd)
    try:
        process = subprocess.Popen(
            argv,
            executable=program,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd,
            env=dict(env),
            shell=False,
            close_fds=True,
            start_new_session=True,
        )
    except OSError as exc:
        raise ProgramNotFoundError(f"program '{argv[0]}' could not be started: {exc}") from exc
    assert process.stdout is not None and process.stderr is not None
    stdout = _Reader(process.stdout, max_output, on_overflow=lambda: _kill_group(process))
    stderr = _Reader(process.stderr, max_output)
    stdout.start()
    stderr.start()
    timed_out = False
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(process)
        process.wait()
    finally:
        for reader in (stdout, stderr):
            reader.join(_DRAIN_GRACE_S)
        if stdout.is_alive() or stderr.is_alive():
            # Something the program started still holds the pipes open.
            _kill_group(process)
            stdout.join()
            stderr.join()
    if timed_out:
        raise ProcessTimeoutError(f"timed out after {timeout:g} s")
    if stdout.overflowed:
        raise OutputTooLargeError(f"output exceeded {max_output} bytes")
    return ProcessResult(process.returncode, bytes(stdout.data), bytes(stderr.data))
