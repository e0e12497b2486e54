"""Cold start of `jarvis ask`: process start to answer, before and after the prompt state
is on disk (docs/embedded-llm.md, "Prompt state on disk").

Runs `jarvis ask --json UTTERANCE` as a new process, twice, with the same fresh data
directory (the prepared model is passed in with JARVIS_MODEL_PATH, the prepared sentence
encoder is linked into its `models/`, as a user's data directory holds both): the first
run reads the whole system prompt and encodes the tools' sentences, and saves both in
`<data dir>/prompt-cache/` and `<data dir>/sentence-vectors/`; the second loads them.
The utterance must reach the model: one a command's `pre_route` answers locally (e.g.
"what time is it") would time no model at all, so that is checked.

    python bench/cold_start.py [--utterance TEXT] [--after 2] [--target-s 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

DEFAULT_UTTERANCE = "could you tell me a joke about cats"


def _jarvis() -> str:
    beside = Path(sys.executable).with_name("jarvis")
    found = str(beside) if beside.is_file() else shutil.which("jarvis")
    if found is None:
        sys.exit("no `jarvis` command: install the project (make install)")
    return found


def _model() -> Path:
    from jarvis.center.llm.model_store import ModelStoreError, resolve_model_path

    try:
        return resolve_model_path()
    except ModelStoreError as exc:
        sys.exit(f"the embedded model is needed: {exc}")


def _ask(utterance: str, env: dict[str, str]) -> tuple[float, dict[str, Any]]:
    """Seconds from starting the process to its answer printed (the JSON's last line),
    before the process has shut its node and center down."""
    started = time.perf_counter()
    with subprocess.Popen([_jarvis(), "ask", "--json", utterance], env=env, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as process:
        assert process.stdout is not None
        lines = []
        for line in process.stdout:
            lines.append(line)
            if line.rstrip("\n") == "}":  # the answer is complete
                break
        elapsed = time.perf_counter() - started
        lines.extend(process.stdout)
        stderr = process.stderr.read() if process.stderr is not None else ""
        code = process.wait(timeout=600)
    if code != 0:
        sys.exit(f"jarvis ask failed ({code}): {stderr.strip()[-2000:]}")
    result: dict[str, Any] = json.loads("".join(lines))
    if result.get("pre_routed"):
        sys.exit(f"{utterance!r} is answered without the model; pick another utterance")
    return elapsed, result


def _link_encoder(data_dir: Path) -> None:
    """The prepared sentence encoder, seen from `data_dir` as a user's own would be."""
    from jarvis.center.meaning import SENTENCE_ENCODER, encoder_folder
    from jarvis.model_files import ModelMissingError

    try:
        folder = encoder_folder()
    except ModelMissingError as exc:
        sys.exit(f"the sentence encoder is needed: {exc}")
    (data_dir / "models").mkdir(parents=True)
    (data_dir / "models" / SENTENCE_ENCODER.folder).symlink_to(folder)


def _states(folder: Path) -> str:
    files = list(folder.glob("*.state")) if folder.is_dir() else []
    size = sum(f.stat().st_size for f in files) / 1e6
    return f"{len(files)} file(s), {size:.1f} MB"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--utterance", default=DEFAULT_UTTERANCE)
    parser.add_argument("--after", type=int, default=2,
                        help="runs once the state is on disk (the best is reported)")
    parser.add_argument("--target-s", type=float, default=3.0)
    args = parser.parse_args()

    model = _model()
    with tempfile.TemporaryDirectory(prefix="jarvis-cold-start-") as tmp:
        env = {**os.environ, "JARVIS_DATA_DIR": tmp, "JARVIS_MODEL_PATH": str(model)}
        _link_encoder(Path(tmp))
        cache = Path(tmp) / "prompt-cache"
        first, result = _ask(args.utterance, env)
        print(f"first ever (reads the prompt):   {first:6.2f} s  "
              f"center {result['timings'].get('center_ms', 0) / 1000:.2f} s  "
              f"[prompt-cache: {_states(cache)}]")
        print(f"  answer: {result['message']}")
        after = []
        for _ in range(max(1, args.after)):
            elapsed, result = _ask(args.utterance, env)
            after.append(elapsed)
            print(f"state on disk:                   {elapsed:6.2f} s  "
                  f"center {result['timings'].get('center_ms', 0) / 1000:.2f} s")
        best = min(after)
        verdict = "met" if best <= args.target_s else "missed"
        print(f"cold start: {first:.2f} s first ever, {best:.2f} s with the state on disk "
              f"(best of {len(after)}; target <= {args.target_s:g} s: {verdict})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
