"""Loading the model where the CPU lists AMX tiles that a virtual machine may not grant."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from jarvis.center.llm.embedded.cpu import cpu_lists_amx, without_weight_repacking


def test_amx_is_read_from_the_cpu_flags(tmp_path: Path) -> None:
    listed = tmp_path / "amx"
    listed.write_text("processor\t: 0\nflags\t\t: fpu sse avx512f amx_bf16 amx_tile amx_int8\n")
    plain = tmp_path / "plain"
    plain.write_text("processor\t: 0\nflags\t\t: fpu sse avx2\n")
    assert cpu_lists_amx(listed)
    assert not cpu_lists_amx(plain)
    assert not cpu_lists_amx(tmp_path / "missing")


def test_models_loaded_in_the_block_get_no_extra_buffer_types() -> None:
    def defaults() -> Any:
        return SimpleNamespace(use_extra_bufts=True, n_gpu_layers=0)

    fake = SimpleNamespace(llama_cpp=SimpleNamespace(llama_model_default_params=defaults))
    with without_weight_repacking(fake):
        assert fake.llama_cpp.llama_model_default_params().use_extra_bufts is False
    # Restored afterwards: other models in the process are not affected.
    assert fake.llama_cpp.llama_model_default_params is defaults
