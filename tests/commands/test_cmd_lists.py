from __future__ import annotations

import pytest
from command_helpers import make_context, request

from jarvis.center.keywords import keyword_hints
from jarvis.commands.lists import ShoppingListCommand, TodoListCommand, split_items
from jarvis.sdk import CommandContext


@pytest.fixture
def ctx() -> CommandContext:
    return make_context()


def test_add_read_complete_remove_clear(ctx: CommandContext) -> None:
    shop = ShoppingListCommand().bind(ctx)
    assert shop.execute(request(), action="read").message == "Your shopping list is empty."
    added = shop.execute(request(), action="add", items=["milk", "eggs"])
    assert added.message == "Added milk and eggs to your shopping list."
    again = shop.execute(request(), action="add", items=["Milk", "bread"])
    assert again.message == "Added bread to your shopping list. Milk is already on it."
    assert shop.execute(request(), action="read").message == (
        "Your shopping list has 3 items: milk, eggs and bread.")
    assert shop.execute(request(), action="complete", items=["egg"]).message == (
        "Checked off eggs on your shopping list.")
    assert shop.execute(request(), action="remove", items=["bread"]).message == (
        "Removed bread from your shopping list.")
    assert shop.execute(request(), action="read").message == (
        "Your shopping list has one item: milk.")
    assert shop.execute(request(), action="clear").message == "Your shopping list is now empty."
    assert ctx.storage.get("lists", "shopping") == {"items": []}


def test_lists_are_separate(ctx: CommandContext) -> None:
    ShoppingListCommand().bind(ctx).execute(request(), action="add", items=["milk"])
    TodoListCommand().bind(ctx).execute(request(), action="add", items=["call the plumber"])
    assert TodoListCommand().bind(ctx).execute(request(), action="read").message == (
        "Your to-do list has one item: call the plumber.")
    assert [i["text"] for i in ctx.storage.get("lists", "shopping")["items"]] == ["milk"]


def test_readding_a_checked_item_reopens_it(ctx: CommandContext) -> None:
    shop = ShoppingListCommand().bind(ctx)
    shop.execute(request(), action="add", items=["milk"])
    shop.execute(request(), action="complete", items=["milk"])
    assert shop.execute(request(), action="add", items=["milk"]).message == (
        "Added milk to your shopping list.")
    assert shop.execute(request(), action="read").context_data["open_items"] == ["milk"]


def test_unknown_item_is_a_validation_error_with_valid_values(ctx: CommandContext) -> None:
    shop = ShoppingListCommand().bind(ctx)
    shop.execute(request(), action="add", items=["milk", "eggs"])
    response = shop.execute(request(), action="remove", items=["caviar"])
    assert response.is_validation_error
    assert response.context_data["valid_values"] == {"items": ["milk", "eggs"]}


def test_add_without_items_is_a_validation_error(ctx: CommandContext) -> None:
    response = ShoppingListCommand().bind(ctx).execute(request(), action="add")
    assert response.is_validation_error
    assert response.context_data["errors"][0]["param_name"] == "items"


def test_post_process_splits_and_maps_actions() -> None:
    shop = ShoppingListCommand()
    assert shop.post_process_tool_call({"action": "add", "items": "milk and eggs"}, "") == {
        "action": "add", "items": ["milk", "eggs"]}
    assert shop.post_process_tool_call({"action": "delete", "items": ["milk, some eggs"]},
                                       "") == {"action": "remove", "items": ["milk", "eggs"]}
    assert shop.post_process_tool_call(
        {"action": "add"}, "add apples and pears to my shopping list") == {
        "action": "add", "items": ["apples", "pears"]}
    assert shop.post_process_tool_call({"action": "show"}, "") == {"action": "read"}
    todo = TodoListCommand()
    assert todo.post_process_tool_call({"action": "add", "items": "call mom and dad"}, "") == {
        "action": "add", "items": ["call mom and dad"]}


def test_split_items() -> None:
    assert split_items("mac and cheese and apples") == ["mac and cheese", "apples"]
    assert split_items(["bread", "milk, eggs, and butter"]) == ["bread", "milk", "eggs",
                                                                "butter"]
    assert split_items("milk to my shopping list") == ["milk"]
    assert split_items(None) == []


@pytest.mark.parametrize(
    ("command", "text", "arguments"),
    [
        (ShoppingListCommand(), "add milk and eggs to my shopping list",
         {"action": "add", "items": ["milk", "eggs"]}),
        (ShoppingListCommand(), "What's on my grocery list?", {"action": "read"}),
        (TodoListCommand(), "add call the plumber to my to-do list",
         {"action": "add", "items": ["call the plumber"]}),
        (TodoListCommand(), "read my todo list", {"action": "read"}),
    ],
)
def test_pre_route_hits(command, text: str, arguments: dict) -> None:
    hit = command.pre_route(text)
    assert hit is not None and hit.arguments == arguments


def test_pre_route_does_not_cross_lists() -> None:
    assert TodoListCommand().pre_route("add milk to my shopping list") is None
    assert ShoppingListCommand().pre_route("add call mom to my to-do list") is None


@pytest.mark.parametrize(("said", "named"), [
    ("add call the plumber to my to-do list", True),
    ("what's left on my to do", True),
    ("add the gutters to my todos", True),
    ("I need to find something to do tonight", False),
    ("help look for things to do", False),
])
def test_the_to_do_list_is_named_by_its_name_not_by_to_do(said: str, named: bool) -> None:
    hints = keyword_hints(said, {"todo_list": TodoListCommand().keywords})
    assert bool(hints) == named
