"""The Python examples in docs/builtin-commands.md run as written."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "builtin-commands.md"
BLOCKS = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)


def test_doc_has_examples() -> None:
    assert len(BLOCKS) >= 2


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_doc_example_runs(index: int) -> None:
    exec(compile(BLOCKS[index], f"{DOC.name}[{index}]", "exec"), {})
