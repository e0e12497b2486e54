"""Latency of the node's fast path: utterances a command's `pre_route` handles locally.

Each utterance goes through `CommandExecutionService.process_voice_command` exactly as a
running node does (every command's `pre_route`, then `execute()` with secrets, validation,
coercion and `run`, storage writes in the node's SQLite file). The center URL points at a
closed port, so any utterance that is not pre-routed fails loudly instead of being timed.

    python bench/fast_path.py [--rounds 200] [--target-ms 5]
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import sys
import tempfile
import time
from pathlib import Path

UTTERANCES = [
    "what time is it",
    "what is 12 times 7",
    "roll a d20",
    "pause the music",
    "add milk to the shopping list",
    "set a timer for 10 minutes",
    "tell me a joke",
]


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=200, help="passes over the utterances")
    parser.add_argument("--target-ms", type=float, default=5.0, help="p50 target in ms")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="jarvis-fast-path-") as tmp:
        os.environ["JARVIS_DATA_DIR"] = tmp
        os.environ.setdefault("JARVIS_TIMEZONE", "Europe/Paris")
        from jarvis.node import JarvisCommandCenterClient, NodeSettings, open_node

        settings = NodeSettings(data_dir=Path(tmp), timezone=os.environ["JARVIS_TIMEZONE"])
        client = JarvisCommandCenterClient(f"http://127.0.0.1:{_closed_port()}", retries=0)
        node = open_node(settings, client=client)
        service = node.service

        usable = []
        for text in UTTERANCES:
            try:
                result = service.process_voice_command(text)
            except Exception as exc:  # not pre-routed: it tried the (closed) center
                print(f"skipped (not pre-routed): {text!r}: {exc}", file=sys.stderr)
                continue
            if result.pre_routed:
                usable.append(text)
        if not usable:
            print("no utterance is pre-routed by the installed commands", file=sys.stderr)
            return 1

        per_utterance: dict[str, list[float]] = {text: [] for text in usable}
        for _ in range(args.rounds):
            for text in usable:
                started = time.perf_counter()
                service.process_voice_command(text)
                per_utterance[text].append((time.perf_counter() - started) * 1000)
        node.close()

    every = [ms for samples in per_utterance.values() for ms in samples]
    print(f"fast path: {len(usable)} utterances x {args.rounds} rounds = {len(every)} calls, "
          f"{len(node.registry)} commands registered")
    print(f"{'utterance':<34} {'p50 ms':>8} {'p99 ms':>8}")
    for text, samples in per_utterance.items():
        print(f"{text:<34} {statistics.median(samples):8.3f} {_percentile(samples, 0.99):8.3f}")
    p50, p99 = statistics.median(every), _percentile(every, 0.99)
    print(f"{'all':<34} {p50:8.3f} {p99:8.3f}")
    verdict = "meets" if p50 <= args.target_ms else "MISSES"
    print(f"p50 {p50:.3f} ms {verdict} the {args.target_ms:g} ms target (p99 {p99:.3f} ms)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
