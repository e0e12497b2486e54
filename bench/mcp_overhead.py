"""What a call through an MCP stdio server adds over calling the command directly.

The same built-in command (`calculate`) runs two ways: `execute()` in this process, and
as the tool of an MCP server the node started over stdio (`jarvis mcp serve`, the node's
own commands offered over MCP), i.e. McpToolCommand.execute -> the node's MCP loop ->
JSON-RPC over the pipe -> the server's execute() -> back. The difference of the medians
is the added latency.

    python bench/mcp_overhead.py [--calls 300] [--target-ms 20]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ARGUMENTS = {"num1": 12, "num2": 7, "operation": "multiply"}


def _timed(call: Callable[[], object], calls: int) -> list[float]:
    samples = []
    for _ in range(calls):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000)
    return samples


def _p95(samples: list[float]) -> float:
    return sorted(samples)[int(0.95 * (len(samples) - 1))]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=300, help="timed calls each way")
    parser.add_argument("--target-ms", type=float, default=20.0, help="added p50 target in ms")
    args = parser.parse_args()

    from jarvis.commands.calculate import CalculateCommand
    from jarvis.node.mcp import McpServerConfig, SecretRef, add_mcp_commands
    from jarvis.node.registry import CommandRegistry
    from jarvis.sdk import EnvironmentSecretStore, RequestInformation

    info = RequestInformation(timezone="Europe/Paris")
    direct = CalculateCommand()
    with tempfile.TemporaryDirectory(prefix="jarvis-mcp-bench-") as tmp:
        # the served node keeps its data and keys in the temporary folder
        env: dict[str, str | SecretRef] = {
            "JARVIS_DATA_DIR": tmp, "JARVIS_TIMEZONE": "Europe/Paris",
            "JARVIS_KEY_DIR": str(Path(tmp) / "keys"), "JARVIS_SECRET_KEY_STORE": "file",
        }
        if os.environ.get("PYTHONPATH"):
            env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        server = McpServerConfig("jarvis", env=env,
                                 command=[sys.executable, "-m", "jarvis.cli.main", "mcp", "serve"])
        registry = CommandRegistry()
        add_mcp_commands(registry, [server], EnvironmentSecretStore())
        try:
            via_mcp = registry.get("calculate")
            if via_mcp is None:
                print(f"the MCP server did not start: {registry.problems}", file=sys.stderr)
                return 1
            expected = direct.execute(info, **ARGUMENTS).message
            answer = via_mcp.execute(info, **ARGUMENTS).message
            if answer != expected:
                print(f"different answers: {answer!r} != {expected!r}", file=sys.stderr)
                return 1
            direct_ms = _timed(lambda: direct.execute(info, **ARGUMENTS), args.calls)
            mcp_ms = _timed(lambda: via_mcp.execute(info, **ARGUMENTS), args.calls)
        finally:
            registry.close()
    _report(direct_ms, mcp_ms, args.target_ms)
    return 0


def _report(direct_ms: list[float], mcp_ms: list[float], target_ms: float) -> None:
    print(f"calculate, {len(direct_ms)} calls each way")
    print(f"{'path':<28} {'p50 ms':>8} {'p95 ms':>8}")
    print(f"{'execute() directly':<28} {statistics.median(direct_ms):8.3f} {_p95(direct_ms):8.3f}")
    print(f"{'through MCP over stdio':<28} {statistics.median(mcp_ms):8.3f} {_p95(mcp_ms):8.3f}")
    added = statistics.median(mcp_ms) - statistics.median(direct_ms)
    verdict = "meets" if added <= target_ms else "MISSES"
    print(f"added p50 {added:.3f} ms {verdict} the {target_ms:g} ms target")


if __name__ == "__main__":
    raise SystemExit(main())
