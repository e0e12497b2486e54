"""Train the embedded backend's answer probe (call a command, or answer in words).

    .venv/bin/python bench/train_answer_probe.py --features states.npz   # collect, fit, write
    .venv/bin/python bench/train_answer_probe.py --features states.npz --no-write  # refit

The probe must judge commands nobody on this project wrote, so it learns from two kinds
of node:

- the built-in commands alone: every utterance of the training corpora (default:
  bench/corpus, bench/train, bench/heldout, bench/blind; never bench/fresh or
  bench/sealed, which only measure), as in bench/accuracy.py;
- foreign tool sets, as in bench/sgd.py: "nodes" of 3-5 services of the SGD train split
  (/work/shared/data/sgd/train, or $JARVIS_SGD_DATA; never two of one domain nor two with
  a tool name in common), their tools sent as plain OpenAI tools beside the built-in
  commands (less a built-in whose name a service tool takes). Each node is sent
  --per-service requests of each of its services, dealt over the nodes that hold it (a
  call); its share of --negatives requests of train services of a domain it does not
  have and that no built-in serves (no tool); and its share of the small talk of
  bench/sgd_small_talk/train.yaml (no tool). SGD dev and bench/sgd_small_talk/dev.yaml
  only measure and are never read.

Every utterance goes through the real center (one conversation each, the clock fixed as
in the benchmark it comes from), the backend hands over the hidden states the probe reads
(`state_listener`), and a logistic regression with an L2 penalty is fitted on them
(label: no tool) and written as
`src/jarvis/center/llm/embedded/answer_probes/<model sha256>.json`. `--features FILE`
keeps the states, so a refit costs no model time.

Before writing, at the backend's default thresholds, the backend without a probe, the
--compare probe (default: the shipped file) and the new probe are compared on two
hold-outs:
- SGD services: the train services are split by domain into --folds groups; a group's
  nodes hold only its services and are sent only its requests, so each group is held out
  in turn (the new probe fitted on the built-in rows and the other groups): commands and
  domains the probe never saw;
- built-in corpora: each is held out in turn (fitted on the other corpora and the SGD rows).
"no-fire" is the share of no-tool lines that neither call nor ask for a tool's value,
"called" the share of requests that do (any tool: the right one is bench/accuracy.py's and
bench/sgd.py's to measure).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
import time
import uuid
from collections import Counter, defaultdict
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

sys.path.insert(0, str(Path(__file__).parent))
import sgd
from accuracy import REFERENCE, TIMEZONE, builtin_commands, load_corpus, model_file
from jarvis.center.llm.embedded.answer_probe import (
    FEATURES,
    PROBES_DIR,
    probe_document,
)
from jarvis.center.llm.model_store import MODELS

BENCH = Path(__file__).parent
TRAINING_CORPORA = [BENCH / "corpus", BENCH / "train", BENCH / "heldout", BENCH / "blind"]
MEASURE_ONLY = {"fresh", "sealed"}
SGD_SPLIT = "train"  # dev only measures


@dataclass(frozen=True)
class Ask:
    """One utterance to send: the tool it asks for (None: none) and what its row records."""

    utterance: str
    expected: str | None
    row: dict[str, Any]
    node: sgd.Node | None = None  # None: the built-in commands alone


# --- what is sent -----------------------------------------------------------------------------
def corpus_asks(corpora: list[Path]) -> list[Ask]:
    return [Ask(e.utterance, e.tool, {"corpus": c.name, "kind": "builtin"})
            for c in corpora for e in load_corpus(None, c)]


def group_services(tools: dict[str, list[dict[str, Any]]], folds: int,
                   seed: int) -> list[list[str]]:
    """The services split by domain into `folds` groups of about equal size; two domains
    with a tool name in common go to different groups where they can."""
    by_domain: dict[str, list[str]] = defaultdict(list)
    for service in sorted(tools):
        by_domain[sgd.domain(service)].append(service)
    names = sorted(by_domain)
    random.Random(f"{seed}:groups").shuffle(names)
    names.sort(key=lambda d: -len(by_domain[d]))
    groups: list[list[str]] = [[] for _ in range(folds)]
    for name in names:
        fits = [g for g in groups if not any(
            sgd.conflict(s, m, tools) for s in by_domain[name] for m in g)]
        min(fits or groups, key=len).extend(by_domain[name])
    return [sorted(g) for g in groups]


def draw_nodes(services: list[str], tools: dict[str, list[dict[str, Any]]],
               rng: random.Random, cover: int = 2) -> list[list[str]]:
    """Nodes of 3-5 of these services that do not conflict, until each is on `cover`."""
    count: Counter[str] = Counter()
    nodes: list[list[str]] = []
    while min(count[s] for s in services) < cover:
        size = rng.randint(3, 5)
        node: list[str] = []
        for service in sorted(services, key=lambda s: (count[s], rng.random())):
            if len(node) < size and not any(sgd.conflict(service, m, tools) for m in node):
                node.append(service)
        nodes.append(sorted(node))
        count.update(node)
    return nodes


def sgd_asks(data: Path, per_service: int, negatives: int, folds: int, seed: int
             ) -> list[Ask]:
    """The SGD rows, node after node (each node's prompt prefix is read once)."""
    tools, cases = sgd.load_split(data, SGD_SPLIT)
    _, builtin_tools, builtin_available = builtin_commands()
    rng = random.Random(f"{seed}:nodes")
    nodes: list[tuple[int, sgd.Node]] = []
    groups = group_services(tools, folds, seed)
    for fold, services in enumerate(groups):
        for members in draw_nodes(services, tools, rng):
            nodes.append((fold, sgd.make_node(len(nodes), members, tools, builtin_tools,
                                              builtin_available)))
    asks: dict[int, list[Ask]] = defaultdict(list)
    used: set[str] = set()
    for service in sorted(tools):
        holders = [(f, n) for f, n in nodes if service in n.services]
        picked = sgd.sample(cases.get(service, []), per_service, f"{seed}:cases:{service}")
        for i, case in enumerate(picked):
            fold, node = holders[i % len(holders)]
            used.add(case.id)
            asks[node.index].append(Ask(case.utterance, case.tool, {
                "corpus": "sgd", "kind": "service", "fold": fold, "node": node.index,
                "service": service}, node))
    pools = {node.index: sgd.negative_services(node.services, groups[fold], tools)
             for fold, node in nodes}
    per_node = -(-negatives // max(1, sum(bool(p) for p in pools.values())))
    for fold, node in nodes:
        # As many of each unregistered service as can be (its cases in a shuffled order).
        queues = [sgd.sample([c for c in cases.get(s, []) if c.id not in used],
                             per_node, f"{seed}:negatives:{node.index}:{s}")
                  for s in pools[node.index]]
        dealt = [q[i] for i in range(per_node) for q in queues if i < len(q)][:per_node]
        for case in dealt:
            used.add(case.id)
            asks[node.index].append(Ask(case.utterance, None, {
                "corpus": "sgd", "kind": "unregistered", "fold": fold, "node": node.index,
                "service": case.service}, node))
    talk = sgd.load_small_talk(SGD_SPLIT)
    for i, line in enumerate(sgd.sample(talk, len(talk), f"{seed}:talk")):
        fold, node = nodes[i % len(nodes)]
        asks[node.index].append(Ask(line, None, {
            "corpus": "sgd", "kind": "small_talk", "fold": fold, "node": node.index,
            "service": None}, node))
    ordered: list[Ask] = []
    for _, node in nodes:
        mine = asks[node.index]
        random.Random(f"{seed}:order:{node.index}").shuffle(mine)
        ordered += mine
    return ordered


# --- collecting -------------------------------------------------------------------------------
def collect(asks: list[Ask], model_path: str, threads: int | None = None
            ) -> tuple[list[dict[str, Any]], npt.NDArray]:
    """Send every utterance through the center; each row's states and what it did."""
    from jarvis.center.llm.embedded import EmbeddedBackend
    from jarvis.center.llm.embedded.options import EmbeddedOptions
    from jarvis.center.server import CenterServer
    from jarvis.center.settings import CenterSettings
    from jarvis.node.client import CenterError, JarvisCommandCenterClient
    from jarvis.protocol import NodeContext

    class Listening(EmbeddedBackend):
        """Keeps the request being answered, for `vetoing`."""

        request: Any = None

        def complete(self, request: Any) -> Any:
            self.request = request
            return super().complete(request)

    seen: list[tuple[dict[str, npt.NDArray[np.float32]], list[str]]] = []

    def listen(states: dict[str, npt.NDArray[np.float32]]) -> None:
        request = backend.request
        # Tools whose keyword was heard or that declare none (see `policy`'s `may_answer`).
        vetoing = [t.get("function", t)["name"] for t in request.tools
                   if request.tool_hints.get(t.get("function", t)["name"], 1.0) > 0]
        seen.append((states, vetoing))

    # The prompt as served: a node whose schemas do not fit is shown as signatures.
    backend = Listening(model_path, EmbeddedOptions(answer_probe=None, n_threads=threads),
                        state_listener=listen)
    backend.load()
    # No deadline (a node's first request waits for its tools to be read, on a busy
    # machine) and no rate limit (one process sends whole corpora).
    settings = CenterSettings(data_dir=Path(tempfile.mkdtemp(prefix="jarvis-probe-")),
                              llm_backend="embedded", llm_timeout=3600,
                              rate_limit_per_minute=0)
    _, builtin_tools, builtin_available = builtin_commands()
    rows: list[dict[str, Any]] = []
    features: list[npt.NDArray[np.float32]] = []
    started = time.perf_counter()
    with closing(backend), CenterServer(settings=settings, backend=backend) as server, \
            JarvisCommandCenterClient(server.url, timeout=300,
                                      key=server.add_node("probe")) as client:
        for ask in asks:
            if ask.node is None:
                os.environ["JARVIS_FAKE_NOW"] = REFERENCE  # read by the center's clock
                context = NodeContext(timezone=TIMEZONE, node_id="probe")
                tools, available = builtin_tools, builtin_available
            else:
                os.environ["JARVIS_FAKE_NOW"] = sgd.REFERENCE
                context = NodeContext(timezone=sgd.TIMEZONE, node_id=f"probe-{ask.node.index}")
                tools, available = ask.node.client_tools, ask.node.available
            cid = f"probe-{uuid.uuid4().hex}"
            client.start_conversation(cid, context, tools, available)
            seen.clear()
            try:
                response = client.send_command(ask.utterance, cid)
            except CenterError as exc:
                print(f"{ask.utterance!r}: {exc}", file=sys.stderr)
                continue
            if not seen:  # answered without reading the states
                print(f"no states for {ask.utterance!r}", file=sys.stderr)
                continue
            called = None
            if response.stop_reason == "tool_calls" and response.tool_calls:
                called = response.tool_calls[0].function.name
            elif response.stop_reason == "validation_required" and response.validation_request:
                called = response.validation_request.tool_name
            rows.append({**ask.row, "utterance": ask.utterance, "expected": ask.expected,
                         "called": called, "vetoing": seen[0][1]})
            features.append(np.concatenate([seen[0][0][k] for k in FEATURES]))
            if len(rows) % 50 == 0:
                print(f"{len(rows)}/{len(asks)} utterances, "
                      f"{time.perf_counter() - started:.0f} s", flush=True)
    print(f"{len(rows)} utterances in {time.perf_counter() - started:.0f} s", flush=True)
    return rows, np.stack(features)


# --- fitting and measuring --------------------------------------------------------------------
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
           call_below: float, may_answer: npt.NDArray | None = None) -> npt.NDArray:
    """Whether each utterance ends in a call under the backend's rule (see
    EmbeddedBackend._probe_verdict): the probe where it is sure, the model elsewhere.
    `may_answer`: where the probe's answer counts (all rows when None)."""
    answer = score > answer_above
    if may_answer is not None:
        answer &= may_answer
    return (called & ~answer) | (score < call_below)


@dataclass(frozen=True)
class Compared:
    """The probe to compare with. One that lists the commands it was trained with (the
    former format) only answered when every command that keeps its chance (keyword heard,
    or none declared) is one of them, as the backend then did."""

    weights: npt.NDArray
    bias: float
    tools: frozenset[str] | None

    @classmethod
    def load(cls, path: Path) -> Compared:
        data = json.loads(path.read_text(encoding="utf-8"))
        if tuple(data["features"]) != FEATURES:
            raise SystemExit(f"{path}: features must be {list(FEATURES)}")
        tools = frozenset(data["tools"]) if "tools" in data else None
        return cls(np.asarray(data["weights"], dtype=np.float64), float(data["bias"]), tools)

    def may_answer(self, rows: list[dict[str, Any]]) -> npt.NDArray | None:
        if self.tools is None:
            return None
        return np.array([all(t in self.tools for t in r["vetoing"]) for r in rows])


def labels(rows: list[dict[str, Any]]) -> tuple[npt.NDArray, npt.NDArray]:
    """Whether each row wants no tool, and whether the backend without a probe called."""
    return (np.array([r["expected"] is None for r in rows], dtype=float),
            np.array([r["called"] is not None for r in rows]))


def rates(answer: npt.NDArray, calls: npt.NDArray) -> str:
    """No-fire over the no-tool rows, called over the requests."""
    def share(v: npt.NDArray) -> str:
        return f"{v.mean():>7.1%}" if len(v) else f"{'-':>7}"
    return f"{share(~calls[answer])} {share(calls[~answer])}"


def table(title: str, rows: list[dict[str, Any]], x: npt.NDArray,
          tests: list[tuple[str, npt.NDArray]], lam: float, answer_above: float,
          call_below: float, compare: Compared | None) -> None:
    """For each (name, test rows): the figures without a probe, with `compare`, and with a
    probe fitted on all other rows (the totals pool the held-out rows)."""
    y, called = labels(rows)
    answer = y == 1
    may = compare.may_answer(rows) if compare else None
    before = called
    old = policy(x @ compare.weights + compare.bias, called, answer_above, call_below,
                 may) if compare else None
    new = np.zeros(len(rows), dtype=bool)
    tested = np.zeros(len(rows), dtype=bool)
    head = f"{'no probe':>15} | {'compared':>15} | {'new':>15}"
    print(f"\n{title}\n{'':26} {'n':>5} {'no-tool':>7} | {head}\n"
          f"{'':40} |{' no-fire  called |' * 3}")
    for name, test in [*tests, ("all", None)]:
        if test is None:
            test = tested
        else:
            w, b = fit(x[~test], y[~test], lam)
            new[test] = policy(x[test] @ w + b, called[test], answer_above, call_below)
            tested |= test
        old_rates = rates(answer[test], old[test]) if old is not None else f"{'-':>15}"
        print(f"{name:26} {int(test.sum()):>5} {int(answer[test].sum()):>7} | "
              f"{rates(answer[test], before[test])} | {old_rates} | "
              f"{rates(answer[test], new[test])}")
    kinds = np.array([r.get("kind") for r in rows])
    for kind in ("unregistered", "small_talk"):
        part = tested & (kinds == kind)
        if part.any():
            old_rates = rates(answer[part], old[part]) if old is not None else f"{'-':>15}"
            print(f"{'  ' + kind:26} {int(part.sum()):>5} {int(answer[part].sum()):>7} | "
                  f"{rates(answer[part], before[part])} | {old_rates} | "
                  f"{rates(answer[part], new[part])}")


def report(rows: list[dict[str, Any]], x: npt.NDArray, lam: float, answer_above: float,
           call_below: float, compare: Compared | None) -> None:
    corpus = np.array([r["corpus"] for r in rows])
    fold = np.array([-1 if r.get("fold") is None else r["fold"] for r in rows])
    sgd_rows = corpus == "sgd"
    if sgd_rows.any():
        print("SGD groups (services held out together):")
        tests = []
        for f in sorted(set(fold[sgd_rows].tolist())):
            services = sorted({r["service"] for r in rows
                               if r.get("fold") == f and r["kind"] == "service"})
            print(f"  group {f}: {', '.join(services)}")
            tests.append((f"sgd group {f}", fold == f))
        table("Held-out SGD services (fitted on the built-in rows and the other groups)",
              rows, x, tests, lam, answer_above, call_below, compare)
    tests = [(name, corpus == name) for name in dict.fromkeys(corpus.tolist()) if name != "sgd"]
    if tests:
        table("Held-out built-in corpora (fitted on the other corpora and the SGD rows)",
              rows, x, tests, lam, answer_above, call_below, compare)


def main() -> None:
    from jarvis.center.llm.model_store import file_sha256

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="0.5b")
    parser.add_argument("--model-path", help="a GGUF file instead of the prepared --model")
    parser.add_argument("--corpus", type=Path, action="append",
                        help="a training corpus folder (repeatable; default: "
                             + ", ".join(p.name for p in TRAINING_CORPORA) + ")")
    parser.add_argument("--sgd-data", type=Path, default=sgd.DATA,
                        help=f"the SGD data (default {sgd.DATA}); only its train split is read")
    parser.add_argument("--per-service", type=int, default=12,
                        help="requests of each SGD train service (default 12; 0: no SGD rows)")
    parser.add_argument("--negatives", type=int, default=300,
                        help="requests of unregistered services, over all nodes (default 300)")
    parser.add_argument("--folds", type=int, default=2,
                        help="groups of SGD domains held out in turn (default 2)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threads", type=int,
                        help="the model's CPU threads (default: all cores; 1 where other "
                             "model jobs share the cores)")
    parser.add_argument("--features", type=Path,
                        help="keep the collected states here; reused when it exists")
    parser.add_argument("--lam", type=float, default=100.0, help="L2 penalty (default 100)")
    parser.add_argument("--answer-above", type=float, default=2.0,
                        help="the backend's probe_answer_above (default 2.0)")
    parser.add_argument("--call-below", type=float, default=-2.0)
    parser.add_argument("--compare", type=Path,
                        help="a probe file to compare with (default: the shipped one)")
    parser.add_argument("--out", type=Path, help="probe file (default: the shipped one)")
    parser.add_argument("--no-write", action="store_true", help="only print the figures")
    args = parser.parse_args()
    model_path = model_file(args.model, args.model_path)
    digest = file_sha256(Path(model_path))
    corpora = args.corpus or TRAINING_CORPORA
    if any(c.name in MEASURE_ONLY for c in corpora):
        raise SystemExit("bench/fresh and bench/sealed only measure: train on other corpora")
    if args.features and args.features.is_file():
        saved = np.load(args.features)
        rows, x = json.loads(str(saved["rows"])), saved["x"].astype(np.float64)
        print(f"{len(rows)} utterances from {args.features}")
    else:
        asks = corpus_asks(corpora)
        if args.per_service > 0:
            asks += sgd_asks(args.sgd_data, args.per_service, args.negatives, args.folds,
                             args.seed)
        rows, x32 = collect(asks, model_path, args.threads)
        x = x32.astype(np.float64)
        if args.features:
            np.savez_compressed(args.features, x=x32, rows=json.dumps(rows))
    compare_path = args.compare or PROBES_DIR / f"{digest}.json"
    compare = Compared.load(compare_path) if compare_path.is_file() else None
    print(f"compared with: {compare_path if compare else 'nothing'}")
    report(rows, x, args.lam, args.answer_above, args.call_below, compare)
    if args.no_write:
        return
    y, _ = labels(rows)
    w, b = fit(x, y, args.lam)
    trained_on = {
        "utterances": len(rows), "no_tool": int(y.sum()), "lam": args.lam,
        "corpora": sorted({r["corpus"] for r in rows} - {"sgd"}),
        "sgd_train_services": sorted({r["service"] for r in rows
                                      if r["corpus"] == "sgd" and r["service"]}),
        "sgd_nodes": len({r["node"] for r in rows if r["corpus"] == "sgd"}),
        "small_talk": "bench/sgd_small_talk/train.yaml" if any(
            r.get("kind") == "small_talk" for r in rows) else None,
    }
    document = probe_document(w, b, x.shape[1] // len(FEATURES), digest, trained_on)
    out = args.out or PROBES_DIR / f"{digest}.json"
    out.write_text(json.dumps(document) + "\n", encoding="utf-8")
    print(f"wrote {out} ({len(rows)} utterances, {int(y.sum())} no-tool)")


if __name__ == "__main__":
    main()
