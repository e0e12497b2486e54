"""llama.cpp's grammar sampler, used as a filter of the tokens that may come next."""

from __future__ import annotations

import ctypes
from typing import Any

import llama_cpp
import numpy as np
import numpy.typing as npt

_TOKEN_DATA = np.dtype([("id", np.int32), ("logit", np.float32), ("p", np.float32)])


class GrammarSampler:
    """A llama.cpp grammar sampler used as a filter: which tokens may come next."""

    def __init__(self, vocab: Any, gbnf: str) -> None:
        self._ptr = llama_cpp.llama_sampler_init_grammar(vocab, gbnf.encode("utf-8"), b"root")
        if not self._ptr:
            raise ValueError("llama.cpp rejected the generated grammar")

    def allowed(self, ids: npt.NDArray[np.int32]) -> npt.NDArray[np.bool_]:
        """Mask of the tokens in `ids` the grammar accepts now."""
        data = np.zeros(len(ids), dtype=_TOKEN_DATA)
        data["id"] = ids
        array = llama_cpp.llama_token_data_array(
            data=data.ctypes.data_as(llama_cpp.llama_token_data_p),
            size=len(ids),
            selected=-1,
            sorted=False,
        )
        llama_cpp.llama_sampler_apply(self._ptr, ctypes.byref(array))
        return np.isfinite(data["logit"])

    def accept(self, token: int) -> None:
        llama_cpp.llama_sampler_accept(self._ptr, token)

    def reset(self) -> None:
        llama_cpp.llama_sampler_reset(self._ptr)

    def close(self) -> None:
        if self._ptr:
            llama_cpp.llama_sampler_free(self._ptr)
            self._ptr = None

    def __del__(self) -> None:
        self.close()
