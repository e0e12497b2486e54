"""Keeps the measuring sets free of lines that repeat training, tuning or prompt examples.

    .venv/bin/python bench/dedupe.py            # report only
    .venv/bin/python bench/dedupe.py --show     # also print each repeat beside its source
    .venv/bin/python bench/dedupe.py --write    # remove the repeats from the measuring files

The measuring sets (bench/sealed, bench/fresh) must not say what the system was trained or
tuned on or what the model is shown. Each of their utterances is compared with:

- the training and tuning corpora: bench/corpus, bench/heldout, bench/blind, bench/train;
- the built-in commands' prompt examples: the `examples` of each command's schema
  (`get_command_schema()`, commands loaded the way bench/accuracy.py does) and the quoted
  phrases of its description, rules, critical rules, antipatterns and parameter
  descriptions;
- the quoted phrases in the center prompt modules (src/jarvis/center/prompt.py,
  src/jarvis/center/llm/embedded/prompt.py).

Text is normalised first: lower case, numbers as digits (text_to_num's `alpha2digit`) and
then as `#` (`#.#` for decimals), a few contractions spelled out, punctuation and filler
words ("please", "hey jarvis", "can you", ...) removed. A line repeats another when:

- the normalised texts are equal: the same sentence, whatever its numbers and fillers;
- `fuzz.ratio` >= 90: the same sentence with a word, a slip or a short phrase changed
  ("delete the reminder about the vet" / "... the rent");
- `fuzz.token_sort_ratio` >= 95: the same words in another order ("remind me tomorrow to
  call the dentist" / "remind me to call the dentist tomorrow").

Requests that only share a command's words ("set a timer for 5 minutes" / "set a 20 minute
pizza timer", "make the bedroom light 50 percent" / "dim the bedroom light to 30 percent")
stay apart. The sets are also checked against each other: a line of bench/fresh that
repeats a kept line of bench/sealed is removed from bench/fresh.

`--write` deletes the repeating entries from the YAML files line by line (each entry starts
with a `- utterance: "..."` line and runs to the next unindented line), so comments and the
formatting of the kept entries stay as they are. Lines of bench/train and bench/corpus that
repeat a measuring line are printed, never removed.
"""

from __future__ import annotations

import argparse
import ast
import inspect
import re
import sys
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from rapidfuzz import fuzz
from text_to_num import alpha2digit

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
MEASURING = ("sealed", "fresh")  # in order of priority: a line in both stays in the first
TRAINING = ("corpus", "heldout", "blind", "train")
REVERSE_CHECK = ("train", "corpus")
PROMPT_MODULES = ("src/jarvis/center/prompt.py", "src/jarvis/center/llm/embedded/prompt.py")
TIMEZONE = "America/New_York"

RATIO_MIN = 90.0  # the same sentence with a word, a slip or a filler changed
TOKEN_SORT_MIN = 95.0  # the same words in another order

CONTRACTIONS = {
    "what's": "what is", "whats": "what is", "it's": "it is", "i'm": "i am",
    "let's": "let us", "don't": "do not", "can't": "cannot", "won't": "will not",
    "i'd": "i would", "i'll": "i will", "that's": "that is", "there's": "there is",
    "how's": "how is", "who's": "who is", "where's": "where is", "gonna": "going to",
    "wanna": "want to", "gimme": "give me",
}
FILLERS = (
    "hey jarvis", "ok jarvis", "okay jarvis", "hi jarvis", "jarvis", "please", "can you",
    "could you", "would you", "will you", "would you mind", "for me", "hey", "um", "uh",
    "umm", "erm", "er", "hmm", "oh", "ok", "okay", "so", "just", "quickly",
)
_FILLER_RE = re.compile(r"\b(?:" + "|".join(
    re.escape(f) for f in sorted(FILLERS, key=len, reverse=True)) + r")\b")
_CONTRACTION_RE = re.compile(r"\b(?:" + "|".join(
    re.escape(c) for c in sorted(CONTRACTIONS, key=len, reverse=True)) + r")(?![\w'])")
_QUOTED = (re.compile(r'"([^"]+)"'), re.compile(r"(?<![\w'])'(.+?)'(?!\w)"))
_NUMBER = re.compile(r"\b\d+(?:\.\d+)?\b")
_ENTRY = re.compile(r'^- utterance: (".*")\s*$')


@dataclass(frozen=True)
class Line:
    """One utterance, where it comes from and its normalised text (see `normalise`)."""

    text: str
    source: str  # a path relative to the repository root
    norm: str
    index: int = -1  # the entry's position in its YAML file (measuring sets only)


@dataclass(frozen=True)
class Repeat:
    """A line that repeats `of`, found by `how` ("equal", "ratio" or "token_sort")."""

    line: Line
    of: Line
    how: str
    score: float


# --- normalisation -------------------------------------------------------------------------

def normalise(text: str) -> str:
    """Lower case, digits for numbers, contractions spelled out, no punctuation or fillers."""
    text = text.lower().replace("’", "'").replace("‘", "'")
    text = _CONTRACTION_RE.sub(lambda m: CONTRACTIONS[m.group(0)], text)
    text = re.sub(r"(?<=\d)\.(?=\d)", "DOT", text)
    text = re.sub(r"[^\w\s']", " ", text).replace("'", "").replace("DOT", ".")
    text = " ".join(text.split())
    text = digits(text)
    text = _FILLER_RE.sub(" ", text).strip() or text  # "hey jarvis" alone stays itself
    text = re.sub(r"\b2nd\b", "second", text)  # "45 second timer" is not an ordinal
    text = _NUMBER.sub(lambda m: "#.#" if "." in m.group(0) else "#", text)
    return " ".join(text.split())


def digits(text: str) -> str:
    """Numbers as digits ("twenty five" -> "25"); the words as they are if that fails."""
    try:
        return str(alpha2digit(text, "en", threshold=0))
    except Exception:  # text_to_num gives up on odd input
        return text


def make_line(text: str, source: str, index: int = -1) -> Line:
    return Line(text, source, normalise(text), index)


# --- loading -------------------------------------------------------------------------------

def relative(path: Path) -> str:
    try:
        return str(path.resolve().relative_to(ROOT))
    except ValueError:
        return str(path)


def load_corpus_lines(folder: Path) -> list[Line]:
    """Every utterance of the YAML files in `folder`, whatever their layout."""
    lines: list[Line] = []
    for path in sorted(folder.glob("*.yaml")):
        for index, item in enumerate(yaml.safe_load(path.read_text(encoding="utf-8")) or []):
            lines.append(make_line(str(item["utterance"]), relative(path), index))
    return lines


def quoted_phrases(text: str) -> list[str]:
    """Phrases of two words or more in double or single quotes."""
    found = [m.group(1).strip() for rx in _QUOTED for m in rx.finditer(text)]
    return [phrase for phrase in found if len(phrase.split()) >= 2 and "{" not in phrase]


def builtin_commands() -> list[Any]:
    """The built-in commands as bench/accuracy.py's `builtin_commands()` loads them."""
    sys.path.insert(0, str(ROOT / "src"))
    from jarvis.node.registry import discover_commands
    from jarvis.sdk.context import CommandContext

    registry = discover_commands(CommandContext(timezone=TIMEZONE), entry_points_enabled=False,
                                 yaml_tools=False, user_dir=None)
    return list(registry)


def schema_texts(schema: dict[str, Any]) -> list[str]:
    """The utterances a command schema shows the model: examples and quoted phrases."""
    texts = [str(e.get("voice_command", "")) for e in schema.get("examples") or []]
    prose = [str(schema.get("description") or ""), *map(str, schema.get("rules") or []),
             *map(str, schema.get("critical_rules") or [])]
    prose += [str(a.get("description", "")) for a in schema.get("antipatterns") or []]
    prose += [str(p.get("description") or "") for p in schema.get("parameters") or []]
    texts += [phrase for text in prose for phrase in quoted_phrases(text)]
    return [t for t in texts if t.strip()]


def command_example_lines() -> list[Line]:
    lines: list[Line] = []
    for command in builtin_commands():
        source = relative(Path(inspect.getsourcefile(type(command)) or "src/jarvis/commands"))
        lines += [make_line(t, source) for t in schema_texts(command.get_command_schema())]
    return lines


def string_constants(path: Path) -> Iterable[str]:
    """The module's string literals, docstrings left out (the model never reads those)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value) for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    for node in ast.walk(tree):
        if (isinstance(node, ast.Constant) and isinstance(node.value, str)
                and id(node) not in docstrings):
            yield node.value


def prompt_module_lines() -> list[Line]:
    """The quoted phrases of the center prompt modules' string literals."""
    return [make_line(phrase, module)
            for module in PROMPT_MODULES
            for text in string_constants(ROOT / module)
            for phrase in quoted_phrases(text)]


def reference_lines() -> list[Line]:
    """Every training, tuning and prompt-example line, exact text duplicates dropped."""
    lines = [line for name in TRAINING for line in load_corpus_lines(BENCH / name)]
    lines += command_example_lines() + prompt_module_lines()
    seen: set[tuple[str, str]] = set()
    unique: list[Line] = []
    for line in lines:
        if (line.norm, line.source) not in seen and line.norm:
            seen.add((line.norm, line.source))
            unique.append(line)
    return unique


# --- matching ------------------------------------------------------------------------------

def compare(a: str, b: str) -> tuple[str, float] | None:
    """How the normalised line `a` repeats `b`, with the score, or None when it does not."""
    if a == b:
        return "equal", 100.0
    ratio = fuzz.ratio(a, b)
    if ratio >= RATIO_MIN:
        return "ratio", ratio
    token_sort = fuzz.token_sort_ratio(a, b)
    return ("token_sort", token_sort) if token_sort >= TOKEN_SORT_MIN else None


def find_repeat(line: Line, others: list[Line]) -> Repeat | None:
    """The best line of `others` that `line` repeats (equal beats near), if any."""
    best: Repeat | None = None
    for other in others:
        found = compare(line.norm, other.norm)
        if found is None:
            continue
        how, score = found
        if how == "equal":
            return Repeat(line, other, how, score)
        if best is None or score > best.score:
            best = Repeat(line, other, how, score)
    return best


def find_repeats(lines: list[Line], others: list[Line]) -> list[Repeat]:
    return [r for line in lines if (r := find_repeat(line, others)) is not None]


# --- writing -------------------------------------------------------------------------------

def entry_blocks(text_lines: list[str]) -> list[tuple[int, int]]:
    """(first, end) line numbers of each entry: a `- utterance:` line and its indented lines."""
    starts = [i for i, line in enumerate(text_lines) if _ENTRY.match(line.rstrip("\n"))]
    blocks: list[tuple[int, int]] = []
    for start in starts:
        end = start + 1
        while end < len(text_lines) and text_lines[end].startswith((" ", "\t")):
            end += 1
        blocks.append((start, end))
    return blocks


def orphan_headings(text_lines: list[str], blocks: list[tuple[int, int]],
                    drop: set[int]) -> set[int]:
    """Section comments (a `#` line right above an entry) left with no entry under them."""
    found: set[int] = set()
    for start, _ in blocks:
        heading = start - 1
        if heading < 1 or not text_lines[heading].startswith("#"):
            continue  # line 0 is the file's own header
        after = (j for j in range(heading + 1, len(text_lines))
                 if j not in drop and text_lines[j].strip())
        following = next(after, None)
        if following is None or text_lines[following].startswith("#"):
            found.add(heading)
    return found


def join_kept(text_lines: list[str], drop: set[int]) -> str:
    """The lines not in `drop`, without the doubled or trailing blank lines that leaves."""
    kept: list[str] = []
    for i, line in enumerate(text_lines):
        if i in drop:
            continue
        doubled = bool(kept) and not kept[-1].strip()
        was_doubled = i > 0 and i - 1 not in drop and not text_lines[i - 1].strip()
        if not line.strip() and doubled and not was_doubled:
            continue
        kept.append(line)
    while kept and not kept[-1].strip() and text_lines[-1].strip():
        kept.pop()
    return "".join(kept)


def drop_entries(text: str, indices: set[int]) -> str:
    """`text` without the entries at `indices` and the section comments they leave empty."""
    text_lines = text.splitlines(keepends=True)
    blocks = entry_blocks(text_lines)
    drop = {i for index, (start, end) in enumerate(blocks) if index in indices
            for i in range(start, end)}
    drop |= orphan_headings(text_lines, blocks, drop)
    return join_kept(text_lines, drop)


def check_layout(path: Path) -> None:
    """Refuses a file whose entries are not one `- utterance: "..."` line each."""
    text = path.read_text(encoding="utf-8")
    items = yaml.safe_load(text) or []
    blocks = entry_blocks(text.splitlines(keepends=True))
    said = [yaml.safe_load(text.splitlines()[start][len("- utterance: "):])
            for start, _ in blocks]
    if said != [str(item["utterance"]) for item in items]:
        raise SystemExit(f"{relative(path)}: entries are not one `- utterance:` line each")


def write_removals(repeats: list[Repeat]) -> None:
    """Removes the repeating entries from their files and checks what is left parses."""
    by_file: dict[str, set[int]] = {}
    for repeat in repeats:
        by_file.setdefault(repeat.line.source, set()).add(repeat.line.index)
    for source, indices in sorted(by_file.items()):
        path = ROOT / source
        check_layout(path)
        old = path.read_text(encoding="utf-8")
        new = drop_entries(old, indices)
        kept = [item for i, item in enumerate(yaml.safe_load(old)) if i not in indices]
        if (yaml.safe_load(new) or []) != kept:
            raise SystemExit(f"{source}: the edited file does not parse to the kept entries")
        path.write_text(new, encoding="utf-8")


# --- report --------------------------------------------------------------------------------

def print_repeats(title: str, total: int, repeats: list[Repeat], show: bool) -> None:
    print(f"{title}: {len(repeats)} of {total} lines repeat")
    for source, count in sorted(Counter(r.of.source for r in repeats).items()):
        print(f"    {count:4d}  {source}")
    if show:
        for r in repeats:
            print(f"      [{r.how} {r.score:.0f}] {r.line.source}: {r.line.text!r}"
                  f"  <-  {r.of.source}: {r.of.text!r}")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true",
                        help="remove the repeating lines from the measuring YAML files")
    parser.add_argument("--show", action="store_true", help="print every repeat and its source")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    for name in MEASURING:
        for path in sorted((BENCH / name).glob("*.yaml")):
            check_layout(path)
    reference = reference_lines()
    removed: list[Repeat] = []
    kept: list[Line] = []  # measuring lines kept so far, higher-priority sets first
    for name in MEASURING:
        lines = load_corpus_lines(BENCH / name)
        of_training = find_repeats(lines, reference)
        flagged = {id(r.line) for r in of_training}
        rest = [line for line in lines if id(line) not in flagged]
        of_measuring = find_repeats(rest, kept)
        flagged |= {id(r.line) for r in of_measuring}
        print_repeats(f"bench/{name} vs training, tuning and prompt examples", len(lines),
                      of_training, args.show)
        print_repeats(f"bench/{name} vs the measuring sets before it", len(rest),
                      of_measuring, args.show)
        print(f"bench/{name}: {len(lines)} -> {len(lines) - len(flagged)} lines\n")
        removed += of_training + of_measuring
        kept += [line for line in lines if id(line) not in flagged]
    if args.write:
        write_removals(removed)
        print(f"removed {len(removed)} lines from the measuring files\n")
    measuring = kept if args.write else [
        line for name in MEASURING for line in load_corpus_lines(BENCH / name)]
    for name in REVERSE_CHECK:
        lines = load_corpus_lines(BENCH / name)
        print_repeats(f"bench/{name} lines repeating a measuring line (not removed)",
                      len(lines), find_repeats(lines, measuring), args.show)


if __name__ == "__main__":
    main()
