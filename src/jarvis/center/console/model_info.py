"""What the console says about the LLM: backend, model, prepared or not, and memory."""

from __future__ import annotations

import resource
import sys
from pathlib import Path
from typing import Any

from jarvis.center.llm.base import LLMBackend

__all__ = ["model_info"]


def _resident_mb() -> float:
    """The center process's resident memory now (peak where /proc is missing)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
    except OSError:
        pass
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # ru_maxrss is in bytes on macOS and in KiB elsewhere.
    return round(peak / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)


def _embedded(backend: Any) -> dict[str, Any]:
    try:
        path = Path(backend.model_path)
    except Exception as exc:  # not prepared: the message says how to prepare it
        return {"model": None, "prepared": False, "loaded": False, "detail": str(exc)}
    return {"model": path.name, "prepared": path.is_file(),
            "loaded": getattr(backend, "_llm", None) is not None,
            "model_mb": round(path.stat().st_size / 1e6, 1) if path.is_file() else None}


def _remote(backend: Any) -> dict[str, Any]:
    base = str(getattr(backend, "base_url", "") or "")
    scheme, sep, rest = base.partition("://")
    # Credentials in the URL are not the console's to show.
    host = rest.rpartition("@")[2] if sep else base
    return {"model": getattr(backend, "model", None) or "default",
            "endpoint": f"{scheme}{sep}{host}" if base else None,
            "prepared": None, "loaded": None}


def model_info(backend: LLMBackend) -> dict[str, Any]:
    """A small dict for the console's model page; never a secret."""
    name = str(getattr(backend, "name", type(backend).__name__))
    if name == "embedded":
        details = _embedded(backend)
    elif name == "openai":
        details = _remote(backend)
    else:
        details = {"model": None, "prepared": None, "loaded": None}
    return {"backend": name, **details, "process_memory_mb": _resident_mb()}
