"""Accuracy and latency of the embedded LLM through the real center, on the real commands.

    .venv/bin/python bench/accuracy.py                 # the whole corpus, 0.5B model
    .venv/bin/python bench/accuracy.py --only timers --limit 5 --json out.json
    .venv/bin/python bench/accuracy.py --model 1.5b
    .venv/bin/python bench/accuracy.py --corpus bench/heldout   # never used for tuning
    .venv/bin/python bench/accuracy.py --corpus bench/blind     # measure only
    .venv/bin/python bench/accuracy.py --corpus bench/sealed     # totals only, always
    .venv/bin/python bench/accuracy.py --corpus bench/fresh      # totals only, always

The center runs in a child process (its own peak RSS is reported) on a loopback port with
the embedded backend and the clock fixed by `JARVIS_FAKE_NOW`, so relative dates mean the
same on every run. This process plays the node: it registers every built-in command's
schemas exactly as a node does (`discover_commands` + `JarvisCommandCenterClient`), then
for each corpus utterance (bench/corpus/*.yaml, format in bench/corpus/README.md) starts a
conversation and sends the utterance to `/voice/command`. The FIRST response is scored: a
validated client tool call (stop_reason `tool_calls`), or a question for one of a tool's
values (`validation_required` with `tool_name`: the tool is right, the arguments are not
scored, and on a no-tool line it is a false fire); commands are never executed and the node's
pre-routing is bypassed, so the LLM is what is measured. Latency is utterance -> validated
tool call (or answer) as the node sees it, with the conversation's prompt prefix warm.
A second argument score, "args pp", scores the call after the command's own
`post_process_tool_call` (what a node runs the command with: "next" -> "skip"); the
"args" column, the one the targets are about, is the LLM's call as it came. Dates are
also scored on their own: the share of right-tool calls with a `dates` matcher whose
dates all match.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import yaml

from jarvis.center.llm.model_store import MODELS, models_dir, spec_for

CORPUS = Path(__file__).parent / "corpus"
# A Wednesday morning: "tonight", "this weekend", "friday" all lie ahead of it.
REFERENCE = "2026-01-14T10:00:00-05:00"
TIMEZONE = "America/New_York"


# --- corpus and matchers --------------------------------------------------------------------
@dataclass
class Entry:
    file: str
    utterance: str
    tool: str | None
    args: dict[str, dict[str, Any]] = field(default_factory=dict)


def load_corpus(only: str | None, corpus: Path = CORPUS) -> list[Entry]:
    entries: list[Entry] = []
    paths = sorted(corpus.glob("*.yaml"))
    if not paths:
        raise SystemExit(f"no *.yaml corpus files in {corpus}")
    for path in paths:
        if only and path.stem != Path(only).stem:
            continue
        for item in yaml.safe_load(path.read_text(encoding="utf-8")) or []:
            entries.append(Entry(path.stem, str(item["utterance"]), item.get("tool"),
                                 dict(item.get("args") or {})))
    return entries


_DURATION = re.compile(
    r"^P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$"
)


def _seconds(text: str) -> float | None:
    match = _DURATION.match(text.strip().upper())
    if not match or not any(match.groups()):
        return None
    days, hours, minutes, seconds = (float(g) if g else 0.0 for g in match.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def _same(actual: Any, expected: Any) -> bool:
    if isinstance(expected, bool) or isinstance(actual, bool):
        return actual == expected
    if isinstance(expected, int | float):
        try:
            return abs(float(actual) - float(expected)) < 1e-6
        except (TypeError, ValueError):
            return False
    if isinstance(expected, str) and isinstance(actual, str):
        a, e = _seconds(actual), _seconds(expected)
        if a is not None and e is not None:  # PT3M == PT180S
            return a == e
        return actual.strip().casefold() == expected.strip().casefold()
    return bool(actual == expected)


def _days(values: Any) -> set[str]:
    zone = ZoneInfo(TIMEZONE)
    out: set[str] = set()
    for value in values if isinstance(values, list) else [values]:
        try:
            moment = datetime.fromisoformat(str(value))
        except ValueError:
            out.add(f"unparsable:{value}")
            continue
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=zone)
        out.add(moment.astimezone(zone).date().isoformat())
    return out


def match(actual: Any, matcher: dict[str, Any]) -> bool:
    """One corpus matcher against the produced value (None: the argument is missing)."""
    if "absent" in matcher:  # the user said nothing of it: a value would be made up
        return (actual is None) == bool(matcher["absent"])
    if actual is None:
        return False
    if "equals" in matcher:
        return _same(actual, matcher["equals"])
    if "one_of" in matcher:
        return any(_same(actual, option) for option in matcher["one_of"])
    if "contains" in matcher:
        needle = str(matcher["contains"]).casefold()
        items = actual if isinstance(actual, list) else [actual]
        return any(needle in str(item).casefold() for item in items)
    if "dates" in matcher:
        from jarvis.center.dates import resolve_relative_date

        reference = datetime.fromisoformat(REFERENCE)
        wanted: set[str] = set()
        for phrase in matcher["dates"]:
            wanted |= _days(resolve_relative_date(phrase, TIMEZONE, reference))
        return _days(actual) == wanted
    raise ValueError(f"unknown matcher {matcher}")


def post_processed(registry: Any, name: str | None, arguments: dict[str, Any],
                   utterance: str) -> dict[str, Any]:
    """The call's arguments after its command's `post_process_tool_call`, as a node runs
    it (unchanged when there is no call, or the hook fails as the node would log)."""
    command = registry.get(name) if name else None
    if command is None:
        return arguments
    try:
        return dict(command.post_process_tool_call(dict(arguments), utterance))
    except Exception:  # the node logs and keeps the arguments as they came
        return arguments


# --- the center in a child process ----------------------------------------------------------
def serve(model_path: str, data_dir: str) -> None:
    """Child mode: run the center, print its URL and a node key, stop when stdin closes."""
    from jarvis.center.llm.embedded import EmbeddedBackend
    from jarvis.center.llm.embedded.options import EmbeddedOptions
    from jarvis.center.server import CenterServer
    from jarvis.center.settings import CenterSettings

    # --backend-arg values (e.g. no_tool_bias=1.5) arrive as JSON in the environment.
    options = json.loads(os.environ.get("JARVIS_BENCH_BACKEND_ARGS") or "{}")
    backend = EmbeddedBackend(model_path, EmbeddedOptions.from_mapping(options))
    backend.load()
    # One node sending a whole corpus: no rate limit.
    settings = CenterSettings(data_dir=Path(data_dir), llm_backend="embedded",
                              rate_limit_per_minute=0)
    with CenterServer(settings=settings, backend=backend) as server:
        print(server.url, flush=True)
        print(server.add_node("bench"), flush=True)
        sys.stdin.read()


def peak_rss_mb(pid: int) -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


# --- the run --------------------------------------------------------------------------------
def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def backend_args(pairs: list[str] | None) -> dict[str, Any]:
    """`key=value` pairs of EmbeddedOptions; values are read as JSON when they parse."""
    from jarvis.center.llm.embedded.options import EmbeddedOptions

    out: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, raw = pair.partition("=")
        if not sep or not key.isidentifier():
            raise SystemExit(f"--backend-arg wants key=value, not {pair!r}")
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    try:
        EmbeddedOptions.from_mapping(out)
    except (TypeError, ValueError) as exc:
        raise SystemExit(f"--backend-arg: {exc}") from exc
    return out


def model_file(model: str, model_path: str | None) -> str:
    """The GGUF file to run: `model_path`, else the prepared `model` in the data directory."""
    path = model_path or str(models_dir() / spec_for(model).filename)
    if not Path(path).is_file():
        raise SystemExit(f"model file {path} is missing: run `jarvis model prepare"
                         f" --model {model}` or pass --model-path")
    return path


def builtin_commands() -> tuple[Any, list[dict[str, Any]], list[dict[str, Any]]]:
    """The built-in commands as a node registers them: registry, tool schemas, commands."""
    from jarvis.node.registry import discover_commands
    from jarvis.sdk.context import CommandContext

    registry = discover_commands(CommandContext(timezone=TIMEZONE), entry_points_enabled=False,
                                 yaml_tools=False, user_dir=None)
    return (registry, [c.to_openai_tool_schema() for c in registry],
            [c.get_command_schema() for c in registry])


def run(args: argparse.Namespace) -> dict[str, Any]:
    from jarvis.center.store import Store
    from jarvis.node.client import JarvisCommandCenterClient
    from jarvis.protocol import NodeContext

    entries = load_corpus(args.only, args.corpus)
    if args.limit:
        entries = entries[: args.limit]
    model_path = model_file(args.model, args.model_path)
    data_dir = tempfile.mkdtemp(prefix="jarvis-accuracy-")
    env = {**os.environ, "JARVIS_FAKE_NOW": REFERENCE, "JARVIS_LOG_LEVEL": "warning",
           "JARVIS_BENCH_BACKEND_ARGS": json.dumps(backend_args(args.backend_arg))}
    child = subprocess.Popen(
        [sys.executable, __file__, "--serve", model_path, data_dir],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env,
    )
    assert child.stdout is not None and child.stdin is not None
    url, key = child.stdout.readline().strip(), child.stdout.readline().strip()
    if not url or not key:
        raise SystemExit("the center did not start")

    registry, client_tools, available = builtin_commands()
    context = NodeContext(timezone=TIMEZONE, node_id="bench")
    results: list[dict[str, Any]] = []
    warm_started = time.perf_counter()
    with JarvisCommandCenterClient(url, timeout=300, key=key) as client:
        # The first conversation pays the cold prefix (reported apart, not in the latencies).
        cold_id = "cold-" + uuid.uuid4().hex
        client.start_conversation(cold_id, context, client_tools, available)
        client.send_command("what time is it", cold_id)
        cold_s = time.perf_counter() - warm_started
        for index, entry in enumerate(entries):
            cid = f"acc-{index}-{uuid.uuid4().hex[:8]}"
            client.start_conversation(cid, context, client_tools, available)
            started = time.perf_counter()
            response = client.send_command(entry.utterance, cid)
            latency = time.perf_counter() - started
            called = response.stop_reason == "tool_calls" and response.tool_calls
            call = response.tool_calls[0] if called and response.tool_calls else None
            # A question about a tool's value chooses that tool (and is a false fire when
            # no tool should be used); its arguments are not scored.
            asked = response.validation_request if (
                response.stop_reason == "validation_required") else None
            name = call.function.name if call else asked.tool_name if asked else None
            try:
                arguments = json.loads(call.function.arguments) if call else {}
            except (TypeError, json.JSONDecodeError):
                arguments = call.function.arguments if call else {}
            if not isinstance(arguments, dict):
                arguments = {}
            arg_ok = {k: match(arguments.get(k), m) for k, m in entry.args.items()}
            processed = post_processed(registry, name, arguments, entry.utterance)
            pp_ok = all(match(processed.get(k), m) for k, m in entry.args.items())
            result = {
                "file": entry.file, "utterance": entry.utterance, "expected": entry.tool,
                "stop_reason": response.stop_reason, "tool": name, "arguments": arguments,
                "answer": response.assistant_message, "tool_ok": name == entry.tool,
                "args_ok": all(arg_ok.values()), "arg_checks": arg_ok,
                "asked": [asked.tool_name, asked.parameter_name] if asked else None,
                # Dates apart: a small model cannot do calendar arithmetic, so they are
                # the arguments most likely to go wrong on their own.
                "date_checks": {k: ok for k, ok in arg_ok.items() if "dates" in entry.args[k]},
                "args_pp_ok": pp_ok, "post_processed": processed,
                "latency_s": round(latency, 3), "conversation_id": cid,
            }
            results.append(result)
            right = result["tool_ok"] and result["args_ok"]
            if not args.totals_only and (args.verbose or not right):
                mark = "ok " if right else "BAD"
                said = "" if name else f" / {response.stop_reason}: {response.assistant_message!r}"
                print(f"{mark} {latency:5.2f}s {entry.utterance!r}: {name} "
                      f"{json.dumps(arguments, ensure_ascii=False)}{said}", flush=True)
    rss = peak_rss_mb(child.pid)
    child.stdin.close()
    child.wait(timeout=60)

    store = Store(f"sqlite:///{Path(data_dir) / 'center.db'}", run_migrations=False)
    for result in results:
        traces = store.turns(result["conversation_id"])
        trace = traces[0]["trace"] if traces else {}
        result["retries"] = len(trace.get("retries", []))
        result["llm_calls"] = len(trace.get("llm_calls", []))
        usage = [c.get("usage", {}) for c in trace.get("llm_calls", [])]
        result["usage"] = usage[0] if usage else {}
    store.close()
    return summarize(results, rss, cold_s, args.model, model_path)


def summarize(results: list[dict[str, Any]], rss: float | None, cold_s: float, model: str,
              model_path: str) -> dict[str, Any]:
    def block(rows: list[dict[str, Any]]) -> dict[str, Any]:
        tool_rows = [r for r in rows if r["expected"]]
        right = [r for r in tool_rows if r["tool_ok"] and not r.get("asked")]
        questions = [r for r in tool_rows if r["tool_ok"] and r.get("asked")]
        none_rows = [r for r in rows if not r["expected"]]
        lat = [r["latency_s"] for r in right if r["stop_reason"] == "tool_calls"]
        dated = [r for r in right if r.get("date_checks")]
        return {
            "entries": len(rows),
            "tool_accuracy": (len(right) + len(questions)) / len(tool_rows) if tool_rows else None,
            "questions": len(questions),
            "args_accuracy": (sum(r["args_ok"] for r in right) / len(right)) if right else None,
            "args_pp_accuracy": (sum(r.get("args_pp_ok", r["args_ok"]) for r in right)
                                 / len(right)) if right else None,
            "no_false_fire": (sum(r["tool"] is None for r in none_rows) / len(none_rows)
                              if none_rows else None),
            "dated": len(dated),
            "date_accuracy": (sum(all(r["date_checks"].values()) for r in dated) / len(dated)
                              if dated else None),
            "retries": sum(r.get("retries", 0) for r in rows),
            "p50_s": pct(lat, 0.5), "p95_s": pct(lat, 0.95),
            "p50_all_s": pct([r["latency_s"] for r in rows], 0.5),
        }

    by_command: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in results:
        by_command[r["expected"] or "(no tool)"].append(r)
    return {
        "model": model, "model_path": model_path, "reference_time": REFERENCE,
        "timezone": TIMEZONE, "center_peak_rss_mb": rss, "cold_start_s": round(cold_s, 2),
        "overall": block(results),
        "per_command": {name: block(rows) for name, rows in sorted(by_command.items())},
        "results": results,
    }


def _fmt(value: float | None, percent: bool = False) -> str:
    if value is None:
        return "-"
    return f"{value * 100:.1f}%" if percent else f"{value:.2f}"


def print_report(summary: dict[str, Any]) -> None:
    print(f"\nmodel {summary['model']} ({Path(summary['model_path']).name}), reference time "
          f"{summary['reference_time']} {summary['timezone']}")
    print(f"{'command':22} {'n':>4} {'tool':>7} {'args':>7} {'no-fire':>8} {'retries':>7} "
          f"{'p50 s':>6} {'p95 s':>6} {'args pp':>8} {'asked':>6}")
    rows = [*summary["per_command"].items(), ("OVERALL", summary["overall"])]
    for name, b in rows:
        print(f"{name:22} {b['entries']:>4} {_fmt(b['tool_accuracy'], True):>7} "
              f"{_fmt(b['args_accuracy'], True):>7} {_fmt(b['no_false_fire'], True):>8} "
              f"{b['retries']:>7} {_fmt(b['p50_s']):>6} {_fmt(b['p95_s']):>6} "
              f"{_fmt(b.get('args_pp_accuracy'), True):>8} {b.get('questions', 0):>6}")
    print(f"center peak RSS: {summary['center_peak_rss_mb']:.0f} MB (its own process); "
          f"start + cold prefix + first utterance: {summary['cold_start_s']:.1f} s")
    overall = summary["overall"]
    print(f"p50 over every entry (answers included): {_fmt(overall['p50_all_s'])} s")
    print(f"dates: {_fmt(overall['date_accuracy'], True)} of the {overall['dated']} calls to "
          "the right tool that should carry a date")


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--serve":
        serve(sys.argv[2], sys.argv[3])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", choices=sorted(MODELS), default="0.5b")
    parser.add_argument("--model-path", help="a GGUF file instead of the prepared --model")
    parser.add_argument("--corpus", type=Path, default=CORPUS,
                        help="folder of corpus files (default bench/corpus; the held-out set: "
                             "bench/heldout, bench/blind)")
    parser.add_argument("--limit", type=int, help="only the first N entries")
    parser.add_argument("--only", help="only this corpus file (e.g. timers or timers.yaml)")
    parser.add_argument("--json", type=Path, help="write every result and the summary here")
    parser.add_argument("-v", "--verbose", action="store_true", help="print every entry")
    parser.add_argument("--totals-only", action="store_true",
                        help="print no failing entry (always so for bench/fresh and "
                             "bench/sealed, which only measure)")
    parser.add_argument("--backend-arg", action="append", metavar="KEY=VALUE",
                        help="an EmbeddedOptions field, e.g. no_tool_bias=1.5 (repeatable)")
    args = parser.parse_args()
    # The measuring sets stay unread: their single results are never printed.
    args.totals_only = args.totals_only or args.corpus.name in ("fresh", "sealed")
    summary = run(args)
    print_report(summary)
    if args.json:
        if args.totals_only:
            summary = {**summary, "results": "not written: this corpus only measures"}
        args.json.write_text(json.dumps(summary, indent=2, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
