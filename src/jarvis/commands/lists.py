"""`todo_list` and `shopping_list`: add, read, complete, remove and clear list items.

Each list is one entry of the storage namespace `lists` (key `todo` or `shopping`):
`{"items": [{"text", "done", "added_at"}]}`.
"""

from __future__ import annotations

import datetime as dt
import re
from abc import abstractmethod
from typing import Any

from rapidfuzz import fuzz, process

from jarvis.sdk import (
    CommandAntipattern,
    CommandExample,
    CommandResponse,
    IJarvisCommand,
    JarvisParameter,
    PreRouteResult,
    RequestInformation,
    ValidationResult,
)

__all__ = ["ACTIONS", "NAMESPACE", "ShoppingListCommand", "TodoListCommand", "split_items"]

NAMESPACE = "lists"
ACTIONS = ("add", "read", "complete", "remove", "clear")
# What people say for each action; the center favours the action whose words were said.
_SAID_ACTIONS = {
    "add": ["add", "put", "append", "we need", "we're out of", "we are out of"],
    "read": ["read", "what's on", "what is on", "what do i have", "show", "list out"],
    "complete": ["done", "finished", "check off", "check it off", "cross off", "tick off",
                 "bought", "picked up", "mark"],
    "remove": ["remove", "delete", "take off", "get rid of", "drop", "don't need"],
    "clear": ["clear", "empty", "wipe", "start over", "everything off"],
}
_ACTION_ALIASES = {
    "put": "add", "append": "add", "insert": "add", "create": "add", "new": "add",
    "list": "read", "show": "read", "get": "read", "view": "read", "check": "read",
    "tell": "read", "what": "read",
    "done": "complete", "finish": "complete", "finished": "complete", "mark": "complete",
    "mark_done": "complete", "check_off": "complete", "tick": "complete", "completed": "complete",
    "bought": "complete", "got": "complete",
    "delete": "remove", "erase": "remove", "drop": "remove", "take_off": "remove",
    "empty": "clear", "reset": "clear", "delete_all": "clear", "remove_all": "clear",
    "wipe": "clear",
}
# Names where "and" belongs to one item.
_COMPOUNDS = (
    "mac and cheese", "macaroni and cheese", "salt and pepper", "peanut butter and jelly",
    "fish and chips", "bread and butter", "half and half", "chips and salsa",
    "rock and roll", "pb and j", "oil and vinegar", "sweet and sour sauce",
)
_LEADING = re.compile(r"^(?:some|a few|a couple of|a|an|the|more|also)\s+")
_TRAILING = re.compile(
    r"\s+(?:to|on|from|off|onto)\s+(?:my|the|our)\s+(?:shopping|grocery|to ?do|todo|to-do)?"
    r"\s*list$"
)


def _split_one(text: str, split_and: bool) -> list[str]:
    lowered = text.lower()
    placeholders: dict[str, str] = {}
    for index, compound in enumerate(_COMPOUNDS):
        if compound in lowered:
            token = f"\x00{index}\x00"
            placeholders[token] = compound
            lowered = lowered.replace(compound, token)
    separators = r"\s*,\s*(?:and\s+)?|\s*;\s*"
    if split_and:
        separators += r"|\s+and\s+|\s*&\s*"
    parts = re.split(separators, lowered)
    out = []
    for part in parts:
        for token, compound in placeholders.items():
            part = part.replace(token, compound)
        part = _TRAILING.sub("", part.strip())
        part = _LEADING.sub("", part).strip(" .!?")
        if part:
            out.append(part)
    return out


def split_items(value: object, split_and: bool = True) -> list[str]:
    """"milk and eggs" or ["milk, eggs", "bread"] -> ["milk", "eggs", "bread"].

    With `split_and=False` only commas and semicolons separate ("call mom and dad" is one task).
    """
    raw = [value] if isinstance(value, str) else value if isinstance(value, list | tuple) else []
    items: list[str] = []
    for entry in raw:
        if isinstance(entry, str):
            for item in _split_one(entry, split_and):
                if item not in items:
                    items.append(item)
    return items


def _join(words: list[str]) -> str:
    if len(words) <= 1:
        return "".join(words)
    return ", ".join(words[:-1]) + " and " + words[-1]


def _now_iso() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds").replace("+00:00", "Z")


class _ListCommand(IJarvisCommand):
    """The shared behaviour; subclasses name the list."""

    @property
    @abstractmethod
    def list_key(self) -> str: ...

    @property
    @abstractmethod
    def list_title(self) -> str:
        """How the list is spoken: 'shopping list'."""

    @property
    @abstractmethod
    def _phrases(self) -> tuple[str, ...]:
        """Regex alternatives that name this list in speech."""

    @property
    def parameters(self) -> list[JarvisParameter]:
        return [
            JarvisParameter("action", "string", required=True, enum_values=list(ACTIONS),
                            # The prompt shows a description up to its first ";" or "(".
                            description="add, read, complete to check or tick off, remove, or "
                                        "clear the list",
                            enum_synonyms=_SAID_ACTIONS),
            JarvisParameter("items", "array<string>",
                            description="The items, one per entry: 'milk and eggs' -> "
                                        "[\"milk\", \"eggs\"]; omit for read and clear",
                            example=["milk", "eggs"]),
        ]

    @property
    def critical_rules(self) -> list[str]:
        return [
            "items is a list with one entry per item: 'milk and eggs' -> [\"milk\", \"eggs\"]",
            "action is one of add, read, complete, remove, clear: 'delete' -> remove, "
            "'check off' or 'done' -> complete, 'what's on' -> read",
        ]

    split_on_and = True

    def _split(self, value: object) -> list[str]:
        return split_items(value, self.split_on_and)

    # --- small-model fixes and fast paths ----------------------------------------------
    def _list_pattern(self) -> str:
        return r"(?:my |the |our )?(?:" + "|".join(self._phrases) + r")"

    def pre_route(self, voice_command: str) -> PreRouteResult | None:
        text = voice_command.lower().strip().rstrip("?.!").strip()
        name = self._list_pattern()
        if re.fullmatch(rf"(?:what(?:'s| is) on|read(?: me)?|show(?: me)?) {name}", text):
            return PreRouteResult(arguments={"action": "read"})
        m = re.fullmatch(rf"(?:please )?(?:add|put) (?P<items>.+?) (?:to|on|onto) {name}", text)
        if m:
            items = self._split(m["items"])
            if items:
                return PreRouteResult(arguments={"action": "add", "items": items})
        return None

    def post_process_tool_call(self, args: dict[str, Any], voice_command: str) -> dict[str, Any]:
        fixed = dict(args)
        action = fixed.get("action")
        if isinstance(action, str):
            key = action.strip().lower().replace(" ", "_")
            fixed["action"] = key if key in ACTIONS else _ACTION_ALIASES.get(key, action)
        if "items" in fixed and fixed["items"] is not None:
            fixed["items"] = self._split(fixed["items"])
        if fixed.get("action") == "add" and not fixed.get("items"):
            m = re.search(rf"\b(?:add|put) (?P<items>.+?) (?:to|on|onto) {self._list_pattern()}",
                          voice_command.lower())
            if m:
                fixed["items"] = self._split(m["items"])
        return fixed

    def validate_call(self, **kwargs: Any) -> list[ValidationResult]:
        results = super().validate_call(**kwargs)
        action = kwargs.get("action")
        if action in ("add", "complete", "remove") and not self._split(kwargs.get("items")):
            results.append(ValidationResult(
                success=False, param_name="items", command_name=self.command_name,
                message=f"Which items should I {action}? Give them in 'items'",
            ))
        return results

    # --- storage ----------------------------------------------------------------------------
    def _load(self) -> list[dict[str, Any]]:
        stored = self.context.storage.get(NAMESPACE, self.list_key) or {}
        return [dict(i) for i in stored.get("items", []) if isinstance(i, dict)]

    def _save(self, items: list[dict[str, Any]]) -> None:
        self.context.storage.set(NAMESPACE, self.list_key, {"items": items})

    @staticmethod
    def _find(items: list[dict[str, Any]], wanted: str) -> dict[str, Any] | None:
        for item in items:
            if item["text"].lower() == wanted.lower():
                return item
        choices = {index: item["text"] for index, item in enumerate(items)}
        best = process.extractOne(wanted, choices, scorer=fuzz.WRatio, score_cutoff=85)
        return items[best[2]] if best else None

    # --- actions -------------------------------------------------------------------------------
    def run(self, request_info: RequestInformation, **kwargs: Any) -> CommandResponse:
        action: str = kwargs["action"]
        wanted = self._split(kwargs.get("items"))
        items = self._load()
        if action == "add":
            return self._add(items, wanted)
        if action == "read":
            return self._read(items)
        if action == "clear":
            self._save([])
            return self._answer(f"Your {self.list_title} is now empty.", [], cleared=len(items))
        return self._change(items, wanted, action)

    def _answer(self, message: str, items: list[dict[str, Any]], **extra: Any) -> CommandResponse:
        data = {"list": self.list_key, "items": items, **extra}
        return CommandResponse.success_response(data, message=message)

    def _add(self, items: list[dict[str, Any]], wanted: list[str]) -> CommandResponse:
        added, already = [], []
        for text in wanted:
            existing = next((i for i in items if i["text"].lower() == text.lower()), None)
            if existing is not None and not existing["done"]:
                already.append(text)
                continue
            if existing is not None:
                existing["done"] = False  # bought last week, needed again
            else:
                items.append({"text": text, "done": False, "added_at": _now_iso()})
            added.append(text)
        self._save(items)
        parts = []
        if added:
            parts.append(f"Added {_join(added)} to your {self.list_title}.")
        if already:
            verb = "is" if len(already) == 1 else "are"
            parts.append(f"{_join(already).capitalize()} {verb} already on it.")
        return self._answer(" ".join(parts), items, added=added, already_there=already)

    def _read(self, items: list[dict[str, Any]]) -> CommandResponse:
        open_items = [i["text"] for i in items if not i["done"]]
        if not open_items:
            message = f"Your {self.list_title} is empty."
        elif len(open_items) == 1:
            message = f"Your {self.list_title} has one item: {open_items[0]}."
        else:
            message = (f"Your {self.list_title} has {len(open_items)} items: "
                       f"{_join(open_items)}.")
        return self._answer(message, items, open_items=open_items)

    def _change(
        self, items: list[dict[str, Any]], wanted: list[str], action: str
    ) -> CommandResponse:
        changed, missing = [], []
        for text in wanted:
            item = self._find(items, text)
            if item is None:
                missing.append(text)
                continue
            if action == "remove":
                items.remove(item)
            else:
                item["done"] = True
            changed.append(item["text"])
        self._save(items)
        parts = []
        if changed:
            done = "Removed" if action == "remove" else "Checked off"
            where = "from" if action == "remove" else "on"
            parts.append(f"{done} {_join(changed)} {where} your {self.list_title}.")
        if missing:
            verb = "isn't" if len(missing) == 1 else "aren't"
            parts.append(f"{_join(missing).capitalize()} {verb} on your {self.list_title}.")
        response = self._answer(" ".join(parts), items, changed=changed, not_found=missing)
        if not changed:
            open_items = [i["text"] for i in items if not i["done"]]
            return CommandResponse.validation_error([ValidationResult(
                success=False, param_name="items", command_name=self.command_name,
                message=" ".join(parts), valid_values=open_items or None,
            )])
        return response


class ShoppingListCommand(_ListCommand):
    """The shopping (grocery) list."""

    list_key = "shopping"
    list_title = "shopping list"
    _phrases = ("shopping list", "grocery list", "groceries", "shopping")

    @property
    def command_name(self) -> str:
        return "shopping_list"

    @property
    def description(self) -> str:
        return ("Manage the shopping (grocery) list: things to buy. Add, read, check off, "
                "remove items or clear it.")

    @property
    def examples(self) -> list[CommandExample]:
        return [
            CommandExample("add milk and eggs to my shopping list",
                           {"action": "add", "items": ["milk", "eggs"]}, is_primary=True),
            CommandExample("what's on my shopping list", {"action": "read"}),
            CommandExample("remove bread from the grocery list",
                           {"action": "remove", "items": ["bread"]}),
            CommandExample("I bought the bananas", {"action": "complete", "items": ["bananas"]}),
            CommandExample("clear my shopping list", {"action": "clear"}),
            CommandExample("we're out of milk", {"action": "add", "items": ["milk"]}),
        ]

    @property
    def antipatterns(self) -> list[CommandAntipattern]:
        return [CommandAntipattern(
            "todo_list", "Tasks to do ('add call the plumber to my to-do list') go on todo_list; "
            "shopping_list is only for things to buy.")]

    @property
    def keywords(self) -> list[str]:
        return ["shopping", "grocery", "groceries", "buy", "list"]


class TodoListCommand(_ListCommand):
    """The to-do (task) list."""

    list_key = "todo"
    list_title = "to-do list"
    split_on_and = False  # "call mom and dad" is one task
    _phrases = ("to ?do list", "to-do list", "todo list", "task list", "tasks", "to-dos",
                "to dos", "todos")

    @property
    def command_name(self) -> str:
        return "todo_list"

    @property
    def description(self) -> str:
        return ("Manage the to-do list: tasks and chores. Add, read, complete, remove tasks "
                "or clear it.")

    @property
    def examples(self) -> list[CommandExample]:
        return [
            CommandExample("add call the plumber to my to-do list",
                           {"action": "add", "items": ["call the plumber"]}, is_primary=True),
            CommandExample("what's on my to-do list", {"action": "read"}),
            CommandExample("mark pay the rent as done",
                           {"action": "complete", "items": ["pay the rent"]}),
            CommandExample("remove wash the car from my tasks",
                           {"action": "remove", "items": ["wash the car"]}),
        ]

    @property
    def antipatterns(self) -> list[CommandAntipattern]:
        return [
            CommandAntipattern("shopping_list", "Things to buy (milk, eggs) go on shopping_list."),
            CommandAntipattern("reminder", "'Remind me at 5 to call mom' needs a time: reminder."),
        ]

    @property
    def keywords(self) -> list[str]:
        # "to do" only as the list's name: "something to do tonight" asks for no task.
        return ["todo", "to-do list", "my to-do", "to-dos", "task", "tasks", "chore", "chores",
                "errand", "list"]
