"""Train the embedded backend's answer probe (call a command, or answer in words).

    .venv/bin/python bench/train_answer_probe.py                  # collect, fit, write
    .venv/bin/python bench/train_answer_probe.py --features states.npz   # keep the states
    .venv/bin/python bench/train_answer_probe.py --features states.npz --no-write  # refit

Every utterance of the training corpora (default: bench/corpus, bench/train,
bench/heldout, bench/blind; never bench/fresh or bench/sealed, which only measure) goes
through the real center with the built-in commands, as in bench/accuracy.py, and the
backend hands over the hidden states the probe reads (`state_listener`). A logistic
regression with an L2 penalty is fitted on them (label: the corpus says no tool), and
written as `src/jarvis/center/llm/embedded/answer_probes/<model sha256>.json`.

Before writing, each corpus is held out in turn and the probe fitted on the others is
compared with the backend without a probe, at the backend's default thresholds:
"no-fire" is the share of no-tool lines that call nothing, "called" the share of requests
that end in a call (of any tool; the right tool is bench/accuracy.py's to measure).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).parent))
from accuracy import (
    REFERENCE,
    TIMEZONE,
    builtin_commands,
    load_corpus,
    model_file,
)
from jarvis.center.llm.embedded.answer_probe import FEATURES, PROBES_DIR, probe_document
from jarvis.center.llm.model_store import MODELS

BENCH = Path(__file__).parent
TRAINING_CORPORA = [BENCH / "corpus", BENCH / "train", BENCH / "heldout", BENCH / "blind"]


def collect(corpora: list[Path], model_path: str) -> tuple[list[dict[str, Any]], npt.NDArray]:
    """Run every utterance through the center; each row's states and the call made."""
    os.environ["JARVIS_FAKE_NOW"] = REFERENCE  # read by the center's clock
    from jarvis.center.llm.embedded import EmbeddedBackend
    from jarvis.center.server import CenterServer
    from jarvis.center.settings import CenterSettings
    from jarvis.node.client import JarvisCommandCenterClient
    from jarvis.protocol import NodeContext

    seen: list[dict[str, npt.NDArray[np.float32]]] = []
    backend = EmbeddedBackend(model_path, answer_probe=None, state_listener=seen.append)
    backend.load()
    # One node sending whole corpora: no rate limit.
    settings = CenterSettings(data_dir=Path(tempfile.mkdtemp(prefix="jarvis-probe-")),
                              llm_backend="embedded", rate_limit_per_minute=0)
    _, tools, available = builtin_commands()
    context = NodeContext(timezone=TIMEZONE, node_id="probe")
    rows: list[dict[str, Any]] = []
    features: list[npt.NDArray[np.float32]] = []
    started = time.perf_counter()
    with CenterServer(settings=settings, backend=backend) as server, \
            JarvisCommandCenterClient(server.url, timeout=300) as client:
        for corpus in corpora:
            for entry in load_corpus(None, corpus):
                cid = f"probe-{uuid.uuid4().hex}"
                client.start_conversation(cid, context, tools, available)
                seen.clear()
                response = client.send_command(entry.utterance, cid)
                if not seen:  # answered without the model (cannot happen with built-ins)
                    print(f"no states for {entry.utterance!r}", file=sys.stderr)
                    continue
                called = response.stop_reason == "tool_calls" and response.tool_calls
                rows.append({"corpus": corpus.name, "utterance": entry.utterance,
                             "expected": entry.tool,
                             "called": response.tool_calls[0].function.name if called else None})
                features.append(np.concatenate([seen[0][k] for k in FEATURES]))
                if len(rows) % 100 == 0:
                    print(f"{len(rows)} utterances, {time.perf_counter() - started:.0f} s",
                          flush=True)
    return rows, np.stack(features)


def fit(x: npt.NDArray, y: npt.NDArray, lam: float) -> tuple[npt.NDArray, float]:
    """L2-penalised logistic regression (Newton steps) on standardised features; returns
    weights and bias for the raw features."""
    mean, scale = x.mean(0), x.std(0) + 1e-6
    z = (x - mean) / scale
    w = np.zeros(z.shape[1])
    b = float(np.log(y.mean() / (1 - y.mean())))
    for _ in range(25):
        p = 1 / (1 + np.exp(-(z @ w + b)))
        weight = p * (1 - p)
        grad_w, grad_b = z.T @ (p - y) + lam * w, float((p - y).sum())
        hessian = (z.T * weight) @ z + lam * np.eye(z.shape[1])
        step = np.linalg.solve(hessian, grad_w)
        w -= step
        b -= grad_b / max(float(weight.sum()), 1e-6)
        if np.abs(step).max() < 1e-6:
            break
    return w / scale, b - float((w * mean / scale).sum())


def policy(score: npt.NDArray, called: npt.NDArray, answer_above: float,
           call_below: float) -> npt.NDArray:
    """Whether each utterance ends in a call under the backend's rule (see
    EmbeddedBackend._probe_verdict): the probe where it is sure, the model elsewhere."""
    return (called & ~(score > answer_above)) | (score < call_below)


def report(rows: list[dict[str, Any]], x: npt.NDArray, lam: float, answer_above: float,
           call_below: float) -> None:
    y = np.array([r["expected"] is None for r in rows], dtype=float)
    called = np.array([r["called"] is not None for r in rows])
    corpus = np.array([r["corpus"] for r in rows])
    print(f"{'held out':10} {'n':>5} {'no-tool':>7} | {'no-fire':>8} {'called':>7} | "
          f"{'with probe: no-fire':>20} {'called':>7}")
    for name in dict.fromkeys(corpus):
        test = corpus == name
        w, b = fit(x[~test], y[~test], lam)
        score = x[test] @ w + b
        none, req = y[test] == 1, y[test] == 0
        after = policy(score, called[test], answer_above, call_below)
        print(f"{name:10} {int(test.sum()):>5} {int(none.sum()):>7} | "
              f"{(~called[test][none]).mean():>8.1%} {called[test][req].mean():>7.1%} | "
              f"{(~after[none]).mean():>20.1%} {after[req].mean():>7.1%}")


def main() -> None:
    from jarvis.center.llm.model_store import file_sha256

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="0.5b")
    parser.add_argument("--model-path", help="a GGUF file instead of the prepared --model")
    parser.add_argument("--corpus", type=Path, action="append",
                        help="a training corpus folder (repeatable; default: "
                             + ", ".join(p.name for p in TRAINING_CORPORA) + ")")
    parser.add_argument("--features", type=Path,
                        help="keep the collected states here; reused when it exists")
    parser.add_argument("--lam", type=float, default=10.0, help="L2 penalty (default 10)")
    parser.add_argument("--answer-above", type=float, default=1.0)
    parser.add_argument("--call-below", type=float, default=-2.0)
    parser.add_argument("--out", type=Path, help="probe file (default: the shipped one)")
    parser.add_argument("--no-write", action="store_true", help="only print the figures")
    args = parser.parse_args()
    model_path = model_file(args.model, args.model_path)
    corpora = args.corpus or TRAINING_CORPORA
    if any(c.name in ("fresh", "sealed") for c in corpora):
        raise SystemExit("bench/fresh and bench/sealed only measure: train on other corpora")
    if args.features and args.features.is_file():
        saved = np.load(args.features)
        rows, x = json.loads(str(saved["rows"])), saved["x"].astype(np.float64)
        print(f"{len(rows)} utterances from {args.features}")
    else:
        rows, x32 = collect(corpora, model_path)
        x = x32.astype(np.float64)
        if args.features:
            np.savez_compressed(args.features, x=x32, rows=json.dumps(rows))
    report(rows, x, args.lam, args.answer_above, args.call_below)
    if args.no_write:
        return
    y = np.array([r["expected"] is None for r in rows], dtype=float)
    w, b = fit(x, y, args.lam)
    registry, _, _ = builtin_commands()
    digest = file_sha256(Path(model_path))
    trained_on = {"utterances": len(rows), "no_tool": int(y.sum()), "lam": args.lam,
                  "corpora": sorted({r["corpus"] for r in rows})}
    document = probe_document(w, b, x.shape[1] // len(FEATURES),
                              [c.command_name for c in registry], digest, trained_on)
    out = args.out or PROBES_DIR / f"{digest}.json"
    out.write_text(json.dumps(document) + "\n", encoding="utf-8")
    print(f"wrote {out} ({len(rows)} utterances, {int(y.sum())} no-tool)")


if __name__ == "__main__":
    main()
