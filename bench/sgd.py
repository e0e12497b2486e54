"""Foreign-command benchmark: the center on commands nobody on this project wrote.

    .venv/bin/python bench/sgd.py --split dev                  # measure: totals only
    .venv/bin/python bench/sgd.py --split train --per-service 5 --show-failures
    .venv/bin/python bench/sgd.py --split dev --model 1.5b --json out.json

The commands are the services of the Schema-Guided Dialogue dataset (/work/shared/data/sgd,
or $JARVIS_SGD_DATA; see its README.md): banks, buses, flights, hotels, restaurants...
Their tools are sent as plain OpenAI tool definitions, with no Jarvis metadata, the way a
user who brings their own tools sends them. The split's services are grouped into nodes
of --services-per-node services (never two of one domain, never two with a tool name in
common); each node also registers the built-in commands as bench/accuracy.py does, less
any whose name a service tool of that node takes (a user's own `get_weather`).

Each node is sent: --per-service sampled requests of each of its services; --negatives
requests of services from domains it does not have (and no built-in serves); and its
share of the small talk in bench/sgd_small_talk/<split>.yaml. One conversation per
request; the FIRST response is scored (nothing is executed). The center runs in a child
process (bench/accuracy.py --serve) with the embedded backend and the clock fixed at
2019-03-01 10:00 in Los Angeles, when the dataset's dialogues are set.

Scores, per service and overall (docs/understanding.md says more):
- tool right: a call whose first tool is the expected one, or a question
  (validation_required) about a parameter of the expected tool;
- asked right: of the requests that leave a required value of the tool unsaid, the share
  where the center asked for one of those values of the right tool;
- args right: of the calls to the right tool, the share whose every said slot holds a
  value meaning the words said (bench/sgd_match.py);
- invented: of the calls to the right tool, the share holding a value for a parameter
  the user did not say;
- no false fire: of the negatives, the share answered in words (complete or error);
- answers stating tool facts: answers in words to a dataset request that claim a result
  (a price, a time, "booked"...) which only a tool could have given.

On --split dev only totals and per-service figures are printed or written, never a
single request: dev measures and must stay unseen.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import subprocess
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).parent))  # bench/ is not a package
import accuracy
from accuracy import backend_args, builtin_commands, model_file, pct, peak_rss_mb
from jarvis.center.llm.model_store import MODELS
from sgd_match import filled, matches, states_tool_fact

DATA = Path(os.environ.get("JARVIS_SGD_DATA", "/work/shared/data/sgd"))
SMALL_TALK = Path(__file__).parent / "sgd_small_talk"
# The dialogues are set in March 2019 in California: their relative dates resolve so.
REFERENCE = "2019-03-01T10:00:00-08:00"
TIMEZONE = "America/Los_Angeles"
# Splits that only measure: no single request is ever printed or written.
MEASURE_ONLY = {"dev"}
# Domains whose requests a built-in command rightly serves; never used as negatives.
BUILTIN_DOMAINS = {
    "Weather": "get_weather",
    "Music": "music",
    "Alarm": "set_timer / reminder",
    "Calendar": "reminder",
}
ANSWERED = ("complete", "error")  # a negative answered in words: no false fire
PROGRESS_EVERY = 50


# --- the data ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Case:
    id: str
    utterance: str
    service: str
    tool: str
    args: dict[str, str]
    dates: dict[str, str]


@dataclass
class Node:
    index: int
    services: list[str]
    client_tools: list[dict[str, Any]]
    available: list[dict[str, Any]]
    left_out: list[str] = field(default_factory=list)  # built-ins a service tool replaces


@dataclass(frozen=True)
class Request:
    node: int
    kind: str  # "service" (registered), "unregistered" or "small_talk"
    utterance: str
    case: Case | None = None


def load_split(data: Path, split: str) -> tuple[dict[str, list[dict[str, Any]]],
                                                 dict[str, list[Case]]]:
    """The split's tools by service and its cases by service."""
    folder = data / split
    if not (folder / "tools.json").is_file():
        raise SystemExit(f"no SGD split at {folder}")
    tools = json.loads((folder / "tools.json").read_text(encoding="utf-8"))
    cases: dict[str, list[Case]] = defaultdict(list)
    with (folder / "cases.jsonl").open(encoding="utf-8") as lines:
        for line in lines:
            item = json.loads(line)
            cases[item["service"]].append(Case(item["id"], item["utterance"], item["service"],
                                               item["tool"], dict(item.get("args") or {}),
                                               dict(item.get("dates") or {})))
    return tools, dict(cases)


def load_small_talk(split: str) -> list[str]:
    path = SMALL_TALK / f"{split}.yaml"
    if not path.is_file():
        raise SystemExit(f"no small talk for split {split!r}: {path}")
    return [str(line) for line in yaml.safe_load(path.read_text(encoding="utf-8")) or []]


def domain(service: str) -> str:
    return service.split("_", 1)[0]


def tool_name(tool: dict[str, Any]) -> str:
    return str(tool.get("function", tool)["name"])


def tool_names(tools: list[dict[str, Any]]) -> set[str]:
    return {tool_name(t) for t in tools}


def schemas(tools: dict[str, list[dict[str, Any]]]) -> dict[tuple[str, str], dict[str, Any]]:
    """(service, tool) -> the tool's `parameters` JSON schema."""
    return {(service, tool_name(t)): t.get("function", t).get("parameters") or {}
            for service, defs in tools.items() for t in defs}


# --- nodes ------------------------------------------------------------------------------------
def conflict(a: str, b: str, tools: dict[str, list[dict[str, Any]]]) -> bool:
    """Two services that may not share a node: one domain, or a tool name in common."""
    return domain(a) == domain(b) or bool(tool_names(tools[a]) & tool_names(tools[b]))


def _place(order: list[str], count: int, size: int,
           tools: dict[str, list[dict[str, Any]]]) -> list[list[str]] | None:
    """Each service on the emptiest node with room and no conflict; None if one finds none."""
    nodes: list[list[str]] = [[] for _ in range(count)]
    for service in order:
        fits = [n for n in nodes
                if len(n) < size and not any(conflict(service, s, tools) for s in n)]
        if not fits:
            return None
        min(fits, key=len).append(service)
    return nodes


def group_services(services: list[str], tools: dict[str, list[dict[str, Any]]], size: int,
                   seed: int) -> list[list[str]]:
    """Deterministic nodes of at most `size` services, as few as the conflicts allow."""
    rng = random.Random(f"{seed}:nodes")
    count = -(-len(services) // size)
    while True:
        for _ in range(200):
            order = sorted(services)
            rng.shuffle(order)
            nodes = _place(order, count, size, tools)
            if nodes is not None:
                return [sorted(n) for n in nodes if n]
        count += 1


def make_node(index: int, services: list[str], tools: dict[str, list[dict[str, Any]]],
              builtin_tools: list[dict[str, Any]], builtin_available: list[dict[str, Any]]
              ) -> Node:
    """The node's client tools: its services' tools as they are, then the built-ins
    (less those whose name a service tool takes)."""
    mine = [t for s in services for t in tools[s]]
    taken = tool_names(mine)
    kept = [t for t in builtin_tools if tool_name(t) not in taken]
    available = [c for c in builtin_available if c["command_name"] not in taken]
    left_out = sorted(tool_names(builtin_tools) & taken)
    return Node(index, services, [*mine, *kept], available, left_out)


# --- requests ---------------------------------------------------------------------------------
def negative_services(node: list[str], all_services: list[str],
                      tools: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Services whose requests this node has no tool for: not on it, of a domain not on it
    and no built-in serves, and with no tool name that one of its services has."""
    return [s for s in sorted(all_services)
            if s not in node and domain(s) not in BUILTIN_DOMAINS
            and not any(conflict(s, mine, tools) for mine in node)]


def sample(items: list[Any], count: int, key: str) -> list[Any]:
    """A deterministic sample of `count` items (all of them when there are fewer)."""
    rng = random.Random(key)
    return rng.sample(items, min(count, len(items)))


def plan_requests(nodes: list[Node], cases: dict[str, list[Case]],
                  tools: dict[str, list[dict[str, Any]]], small_talk: list[str],
                  args: argparse.Namespace) -> list[Request]:
    """Every request, node after node, shuffled within a node."""
    talk = sample(small_talk, len(small_talk), f"{args.seed}:talk")
    requests: list[Request] = []
    for node in nodes:
        mine: list[Request] = []
        for service in node.services:
            picked = sample(cases.get(service, []), args.per_service,
                            f"{args.seed}:cases:{service}")
            mine += [Request(node.index, "service", c.utterance, c) for c in picked]
        pool = [c for s in negative_services(node.services, list(tools), tools)
                for c in cases.get(s, [])]
        picked = sample(pool, args.negatives, f"{args.seed}:negatives:{node.index}")
        mine += [Request(node.index, "unregistered", c.utterance, c) for c in picked]
        share = talk[node.index * args.small_talk:(node.index + 1) * args.small_talk]
        mine += [Request(node.index, "small_talk", line) for line in share]
        random.Random(f"{args.seed}:order:{node.index}").shuffle(mine)
        requests += mine
    return requests


# --- the center -------------------------------------------------------------------------------
@contextmanager
def center(model_path: str, options: dict[str, Any]
           ) -> Iterator[tuple[str, str, Callable[[], float | None], Path]]:
    """The center in a child process (bench/accuracy.py --serve): its URL, a node key, a
    function that reads its peak RSS in MB and the folder of its database."""
    data_dir = tempfile.mkdtemp(prefix="jarvis-sgd-")
    env = {**os.environ, "JARVIS_FAKE_NOW": REFERENCE, "JARVIS_LOG_LEVEL": "warning",
           "JARVIS_BENCH_BACKEND_ARGS": json.dumps(options)}
    child = subprocess.Popen([sys.executable, accuracy.__file__, "--serve", model_path, data_dir],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    assert child.stdout is not None and child.stdin is not None
    try:
        url, key = child.stdout.readline().strip(), child.stdout.readline().strip()
        if not url or not key:
            raise SystemExit("the center did not start")
        yield url, key, lambda: peak_rss_mb(child.pid), Path(data_dir)
    finally:
        child.stdin.close()
        try:
            child.wait(timeout=60)
        except subprocess.TimeoutExpired:
            child.kill()


def outcome(response: Any) -> dict[str, Any]:
    """What the first response did: its stop reason, the tool called or asked about, the
    call's arguments, the parameter asked for, the words said."""
    call = (response.tool_calls or [None])[0] if response.stop_reason == "tool_calls" else None
    validation = response.validation_request
    arguments: Any = {}
    if call is not None:
        try:
            arguments = json.loads(call.function.arguments or "{}")
        except json.JSONDecodeError:
            arguments = {}
    tool = call.function.name if call else (validation.tool_name if validation else None)
    return {
        "stop_reason": response.stop_reason, "tool": tool,
        "arguments": arguments if isinstance(arguments, dict) else {},
        "parameter": validation.parameter_name if validation else None,
        "answer": response.assistant_message,
    }


def ask(client: Any, node: Node, utterance: str, context: Any) -> tuple[dict[str, Any], float]:
    """One conversation, one utterance: the first response's outcome and its latency."""
    from jarvis.node.client import CenterError, CenterUnreachableError

    cid = f"sgd-{node.index}-{uuid.uuid4().hex[:12]}"
    started = time.perf_counter()
    try:
        client.start_conversation(cid, context, node.client_tools, node.available)
        started = time.perf_counter()
        response = client.send_command(utterance, cid)
    except CenterUnreachableError as exc:  # the center is gone: no later request would run
        raise SystemExit(f"the center stopped answering: {exc}") from exc
    except CenterError as exc:  # not a decision of the center: scored as wrong everywhere
        return {"stop_reason": "transport_error", "tool": None, "arguments": {},
                "parameter": None, "answer": str(exc)}, time.perf_counter() - started
    return outcome(response), time.perf_counter() - started


def own_work_ms(data_dir: Path) -> list[float]:
    """Per request, the center's own milliseconds: the request's time less its LLM
    requests' (relatedness, hints, prompt, checks and storage), from its turn traces."""
    with closing(sqlite3.connect(data_dir / "center.db")) as db:
        found = db.execute("SELECT duration_ms, trace FROM center_turns").fetchall()
    return [duration - json.loads(trace).get("stages_ms", {}).get("llm", 0.0)
            for duration, trace in found]


# --- scoring ----------------------------------------------------------------------------------
def missing_required(case: Case, schema: dict[str, Any]) -> list[str]:
    """Required parameters of the expected tool that the user did not say."""
    return [p for p in schema.get("required") or [] if p not in case.args]


def score_args(case: Case, schema: dict[str, Any], arguments: dict[str, Any]
               ) -> tuple[dict[str, bool], list[str]]:
    """Each said slot: matched or not; and the parameters holding a value nobody said."""
    props = schema.get("properties") or {}
    reference = datetime.fromisoformat(REFERENCE)
    checks = {name: matches(name, said, arguments.get(name), props.get(name) or {},
                            case.dates.get(name), TIMEZONE, reference)
              for name, said in case.args.items()}
    unsaid = [k for k, v in arguments.items()
              if k not in case.args and filled(v) and v != (props.get(k) or {}).get("default")]
    return checks, unsaid


def score_service(case: Case, schema: dict[str, Any], got: dict[str, Any]) -> dict[str, Any]:
    stop = got["stop_reason"]
    tool_ok = got["tool"] == case.tool and stop in ("tool_calls", "validation_required")
    called = tool_ok and stop == "tool_calls"
    missing = missing_required(case, schema)
    row: dict[str, Any] = {"tool_ok": tool_ok, "called": called, "missing": missing}
    if missing:
        row["asked_ok"] = (tool_ok and stop == "validation_required"
                           and got["parameter"] in missing)
    if called:
        checks, unsaid = score_args(case, schema, got["arguments"])
        row.update(arg_checks=checks, args_ok=all(checks.values()), unsaid=unsaid,
                   invented=bool(unsaid),
                   invented_required=[p for p in missing if filled(got["arguments"].get(p))])
    return row


def score(request: Request, got: dict[str, Any], latency: float,
          tool_schemas: dict[tuple[str, str], dict[str, Any]]) -> dict[str, Any]:
    """One request's row: what came back and how it scores."""
    case = request.case
    row: dict[str, Any] = {
        "node": request.node, "kind": request.kind, "utterance": request.utterance,
        "service": case.service if case else None, "expected": case.tool if case else None,
        "said": case.args if case else {}, **got, "latency_s": round(latency, 3),
    }
    if request.kind == "service" and case is not None:
        row.update(score_service(case, tool_schemas[(case.service, case.tool)], got))
    else:
        row["no_false_fire"] = got["stop_reason"] in ANSWERED
    row["states_tool_fact"] = (request.kind != "small_talk" and got["stop_reason"] == "complete"
                               and states_tool_fact(got["answer"]))
    return row


# --- the run ----------------------------------------------------------------------------------
def run_requests(url: str, key: str, nodes: list[Node], requests: list[Request],
                 tool_schemas: dict[tuple[str, str], dict[str, Any]]) -> tuple[list[dict[str, Any]],
                                                                                float]:
    """Every request through the center, node after node; the rows and the cold seconds
    (each node's first conversation, which builds its prompt prefix, is not scored)."""
    from jarvis.node.client import JarvisCommandCenterClient
    from jarvis.protocol import NodeContext

    rows: list[dict[str, Any]] = []
    cold = 0.0
    started = time.perf_counter()
    with JarvisCommandCenterClient(url, timeout=300, key=key) as client:
        for node in nodes:
            mine = [r for r in requests if r.node == node.index]
            if not mine:
                continue
            context = NodeContext(timezone=TIMEZONE, node_id=f"sgd-node-{node.index}")
            cold += ask(client, node, "hello", context)[1]
            for request in mine:
                got, latency = ask(client, node, request.utterance, context)
                rows.append(score(request, got, latency, tool_schemas))
                if len(rows) % PROGRESS_EVERY == 0:
                    progress(f"{len(rows)}/{len(requests)} requests", started)
            progress(f"node {node.index} done, {len(rows)}/{len(requests)} requests", started)
    return rows, cold


def progress(what: str, started: float) -> None:
    print(f"{what}, {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)


def share(rows: list[dict[str, Any]], key: str) -> float | None:
    return sum(bool(r.get(key)) for r in rows) / len(rows) if rows else None


def block(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The figures of a set of rows."""
    service = [r for r in rows if r["kind"] == "service"]
    right = [r for r in service if r["tool_ok"]]
    calls = [r for r in right if r["called"]]
    unsaid = [r for r in service if r["missing"]]
    negatives = [r for r in rows if r["kind"] != "service"]
    latencies = [r["latency_s"] for r in right]
    return {
        "requests": len(service), "tool_right": share(service, "tool_ok"),
        "unsaid_required": len(unsaid), "asked_right": share(unsaid, "asked_ok"),
        "calls": len(calls), "args_right": share(calls, "args_ok"),
        "invented": share(calls, "invented"),
        "invented_required": sum(bool(r["invented_required"]) for r in calls),
        "negatives": len(negatives), "no_false_fire": share(negatives, "no_false_fire"),
        "p50_s": pct(latencies, 0.5), "p95_s": pct(latencies, 0.95),
    }


def summarize(rows: list[dict[str, Any]], nodes: list[Node], config: dict[str, Any],
              rss: float | None, cold: float) -> dict[str, Any]:
    by_service: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for r in rows:
        if r["service"]:
            by_service[r["service"]].append(r)
    talk = [r for r in rows if r["kind"] == "small_talk"]
    foreign = [r for r in rows if r["kind"] == "unregistered"]
    facts = [r for r in rows if r["states_tool_fact"]]
    return {
        **config, "reference_time": REFERENCE, "timezone": TIMEZONE,
        "center_peak_rss_mb": rss, "cold_s": round(cold, 2),
        "nodes": [{"services": n.services, "builtins_left_out": n.left_out} for n in nodes],
        "overall": block(rows),
        "no_false_fire_small_talk": share(talk, "no_false_fire"), "small_talk": len(talk),
        "no_false_fire_unregistered": share(foreign, "no_false_fire"),
        "unregistered": len(foreign),
        "answers_stating_tool_facts": len(facts),
        "answers_in_words_to_requests": sum(r["kind"] != "small_talk"
                                            and r["stop_reason"] == "complete" for r in rows),
        "errors": sum(r["stop_reason"] == "error" for r in rows),
        "transport_errors": sum(r["stop_reason"] == "transport_error" for r in rows),
        "per_service": {s: block(rs) for s, rs in sorted(by_service.items())},
    }


# --- the report -------------------------------------------------------------------------------
def _pc(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def _s(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def print_table(summary: dict[str, Any]) -> None:
    print(f"\n{'service':16} {'n':>4} {'tool':>7} {'asked':>7} {'(n)':>4} {'args':>7} "
          f"{'invent':>7} {'neg':>4} {'no-fire':>8} {'p50 s':>6} {'p95 s':>6}")
    rows = [*summary["per_service"].items(), ("OVERALL", summary["overall"])]
    for name, b in rows:
        print(f"{name:16} {b['requests']:>4} {_pc(b['tool_right']):>7} "
              f"{_pc(b['asked_right']):>7} {b['unsaid_required']:>4} {_pc(b['args_right']):>7} "
              f"{_pc(b['invented']):>7} {b['negatives']:>4} {_pc(b['no_false_fire']):>8} "
              f"{_s(b['p50_s']):>6} {_s(b['p95_s']):>6}")


def print_report(summary: dict[str, Any]) -> None:
    print(f"\nsplit {summary['split']}, model {summary['model']} "
          f"({Path(summary['model_path']).name}), reference time {summary['reference_time']} "
          f"{summary['timezone']}, seed {summary['seed']}")
    for i, node in enumerate(summary["nodes"]):
        left = f" (built-ins left out: {', '.join(node['builtins_left_out'])})" \
            if node["builtins_left_out"] else ""
        print(f"node {i}: {', '.join(node['services'])}{left}")
    print_table(summary)
    o = summary["overall"]
    print(f"asked when a required value was missing: {_pc(o['asked_right'])} of "
          f"{o['unsaid_required']}; right calls with an unsaid value: {_pc(o['invented'])} "
          f"(a value for an unsaid REQUIRED parameter: {o['invented_required']})")
    print(f"no false fire: small talk {_pc(summary['no_false_fire_small_talk'])} of "
          f"{summary['small_talk']}, unregistered services "
          f"{_pc(summary['no_false_fire_unregistered'])} of {summary['unregistered']}")
    print(f"answers stating tool facts: {summary['answers_stating_tool_facts']} of "
          f"{summary['answers_in_words_to_requests']} answers in words to dataset requests")
    print(f"latency (right tool: calls and questions): p50 {_s(o['p50_s'])} s, "
          f"p95 {_s(o['p95_s'])} s; center peak RSS {summary['center_peak_rss_mb'] or 0:.0f} MB;"
          f" cold prefixes {summary['cold_s']:.1f} s")
    own = summary.get("center_own_ms") or {}
    if own.get("p50") is not None:
        print(f"the center's own work per request (all but the LLM): p50 {own['p50']:.0f} ms, "
              f"p95 {own['p95']:.0f} ms")
    if summary["errors"]:
        print(f"answered with an error (e.g. the model timed out): {summary['errors']} "
              "(wrong for a request, no false fire for a negative)")
    if summary["transport_errors"]:
        print(f"transport errors: {summary['transport_errors']} (scored as wrong)")


def _failed(row: dict[str, Any]) -> bool:
    if row["kind"] != "service":
        return not row["no_false_fire"]
    return (not row["tool_ok"] or not row.get("args_ok", True) or row.get("invented", False)
            or not row.get("asked_ok", True))


def print_rows(rows: list[dict[str, Any]], failures: bool) -> None:
    """Single requests, for splits that may be read: the flagged answers, and the
    failures when asked for."""
    flagged = [r for r in rows if r["states_tool_fact"]]
    if flagged:
        print("\nanswers stating tool facts:")
        for r in flagged:
            print(f"  [{r['service']}] {r['utterance']!r} -> {r['answer']!r}")
    if not failures:
        return
    print("\nfailures:")
    for r in (r for r in rows if _failed(r)):
        got = r["tool"] or "-"
        detail = (f"asked {r['parameter']}" if r["stop_reason"] == "validation_required"
                  else json.dumps(r["arguments"], ensure_ascii=False)
                  if r["stop_reason"] == "tool_calls" else repr(r["answer"]))
        bad = [k for k, ok in (r.get("arg_checks") or {}).items() if not ok]
        expected = (f"{r['expected']} said {json.dumps(r['said'], ensure_ascii=False)}"
                    if r["kind"] == "service" else "no tool")
        print(f"  [{r['kind']} {r['service'] or ''}] {r['utterance']!r}: expected {expected}; "
              f"got {r['stop_reason']} {got} {detail}"
              + (f"; wrong {bad}" if bad else "")
              + (f"; unsaid {r['unsaid']}" if r.get("unsaid") else ""))


def print_plan(nodes: list[Node], requests: list[Request]) -> None:
    for node in nodes:
        mine = [r for r in requests if r.node == node.index]
        kinds = {k: sum(r.kind == k for r in mine) for k in ("service", "unregistered",
                                                             "small_talk")}
        left = f"; built-ins left out: {', '.join(node.left_out)}" if node.left_out else ""
        print(f"node {node.index}: {', '.join(node.services)}: {kinds}, "
              f"{len(node.client_tools)} tools{left}")
    print(f"{len(requests)} requests")


# --- main -------------------------------------------------------------------------------------
def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--split", default="dev", help="train or dev (default dev)")
    parser.add_argument("--data", type=Path, default=DATA, help="the SGD folder")
    parser.add_argument("--per-service", type=int, default=25,
                        help="requests sampled from each service (default 25)")
    parser.add_argument("--negatives", type=int, default=10,
                        help="requests per node from services it does not have (default 10)")
    parser.add_argument("--small-talk", type=int, default=12,
                        help="small-talk lines per node, each line used once (default 12)")
    parser.add_argument("--services-per-node", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", choices=sorted(MODELS), default="0.5b")
    parser.add_argument("--model-path", help="a GGUF file instead of the prepared --model")
    parser.add_argument("--json", type=Path, help="write the summary (and, except on dev, "
                                                  "every request) here")
    parser.add_argument("--show-failures", action="store_true",
                        help="print every failing request (never on dev)")
    parser.add_argument("--backend-arg", action="append", metavar="KEY=VALUE",
                        help="an EmbeddedOptions field, e.g. no_tool_bias=1.5 (repeatable)")
    parser.add_argument("--limit", type=int,
                        help="only the first N planned requests (a quick check; node order)")
    parser.add_argument("--services", type=lambda text: set(text.split(",")),
                        help="only the requests to these registered services, comma-separated "
                             "(e.g. Weather_1,Events_1: a closer look at a few)")
    parser.add_argument("--plan", action="store_true",
                        help="print the nodes and request counts, run nothing")
    args = parser.parse_args()
    if args.show_failures and args.split in MEASURE_ONLY:
        parser.error(f"--split {args.split} only measures: its single requests are not shown")
    if args.services_per_node < 1:
        parser.error("--services-per-node must be at least 1")
    return args


def build_nodes(tools: dict[str, list[dict[str, Any]]], args: argparse.Namespace) -> list[Node]:
    _, builtin_tools, builtin_available = builtin_commands()
    groups = group_services(sorted(tools), tools, args.services_per_node, args.seed)
    return [make_node(i, g, tools, builtin_tools, builtin_available)
            for i, g in enumerate(groups)]


def main() -> None:
    args = parse_args()
    tools, cases = load_split(args.data, args.split)
    nodes = build_nodes(tools, args)
    requests = plan_requests(nodes, cases, tools, load_small_talk(args.split), args)
    if args.services:
        unknown = args.services - set(tools)
        if unknown:
            raise SystemExit(f"no such service in {args.split}: {', '.join(sorted(unknown))}")
        requests = [r for r in requests if r.kind == "service" and r.case is not None
                    and r.case.service in args.services]
    if args.limit:
        requests = requests[: args.limit]
    if args.plan:
        print_plan(nodes, requests)
        return
    model_path = model_file(args.model, args.model_path)
    print(f"{len(requests)} requests on {len(nodes)} nodes", file=sys.stderr, flush=True)
    with center(model_path, backend_args(args.backend_arg)) as (url, key, rss, data_dir):
        rows, cold = run_requests(url, key, nodes, requests, schemas(tools))
        peak = rss()
    own = own_work_ms(data_dir)
    config = {"split": args.split, "model": args.model, "model_path": model_path,
              "seed": args.seed, "per_service": args.per_service, "negatives": args.negatives,
              "small_talk_per_node": args.small_talk,
              "services_per_node": args.services_per_node, "limit": args.limit,
              "backend_args": backend_args(args.backend_arg)}
    summary = summarize(rows, nodes, config, peak, cold)
    summary["center_own_ms"] = {"p50": pct(own, 0.5), "p95": pct(own, 0.95)}
    print_report(summary)
    readable = args.split not in MEASURE_ONLY
    if readable:
        print_rows(rows, args.show_failures)
    if args.json:
        out = {**summary, "results": rows if readable else "not written: this split measures"}
        args.json.write_text(json.dumps(out, indent=2, ensure_ascii=False), encoding="utf-8")


if __name__ == "__main__":
    main()
