"""What the CPU lets llama.cpp do: weight repacking into AMX tiles or not.

llama.cpp built for the machine it runs on (`-march=native`) repacks weights into an
"extra" buffer type that uses AMX tile instructions when the CPU lists them. Some virtual
machines list AMX but do not grant the tiles to processes: the first forward pass then
dies with a segmentation fault. Loading without extra buffer types avoids it; the model
runs on the ordinary AVX code paths.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["cpu_lists_amx", "without_weight_repacking"]

_PATCH_LOCK = threading.Lock()


def cpu_lists_amx(cpuinfo: Path = Path("/proc/cpuinfo")) -> bool:
    """Whether the CPU advertises AMX tiles (Linux; False where it cannot be read)."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    return any(line.startswith("flags") and " amx_tile" in line for line in text.splitlines())


@contextlib.contextmanager
def without_weight_repacking(llama_cpp: Any) -> Iterator[None]:
    """Models loaded inside the block use no extra buffer types (no AMX repacking).

    llama-cpp-python's `Llama` takes its model parameters from
    `llama_model_default_params()` and offers no argument for this one, so the default is
    changed for the duration of the load.
    """
    module = llama_cpp.llama_cpp
    with _PATCH_LOCK:
        default = module.llama_model_default_params

        def params() -> Any:
            value = default()
            value.use_extra_bufts = False
            return value

        module.llama_model_default_params = params
        try:
            yield
        finally:
            module.llama_model_default_params = default
