"""The keyboard in the thread view: up and down to the parent and the child, left and
right to the sibling alternatives, [ and ] through versions, "/" to the search box,
"?" for the list of keys (also shown as a hint under the thread)."""

from __future__ import annotations

import re
from typing import Any

from test_thread import grow_talk, messages, opened


def focused(page: Any, k: int) -> None:
    from playwright.sync_api import expect

    expect(messages(page).nth(k)).to_be_focused()
    expect(messages(page).nth(k)).to_have_attribute("aria-current", "true")


def test_keys_move_between_parent_and_child(page: Any, served: Any, name: str) -> None:
    from playwright.sync_api import expect

    talk = grow_talk(served[0], name)
    opened(page, name, 7)
    page.keyboard.press("k")
    focused(page, 5)
    page.keyboard.press("ArrowUp")
    focused(page, 4)
    page.keyboard.press("j")
    focused(page, 5)
    page.keyboard.press("ArrowDown")
    focused(page, 6)
    # past the head, "down" opens its first continuation
    opened(page, talk.ids[2], 3)
    page.keyboard.press("j")
    expect(page).to_have_url(re.compile(f"#/thread/{talk.ids[3]}$"))
    expect(messages(page)).to_have_count(4)


def test_keys_switch_alternatives_and_versions(page: Any, served: Any, name: str) -> None:
    from playwright.sync_api import expect

    talk = grow_talk(served[0], name)
    opened(page, name, 7)
    for _ in range(4):
        page.keyboard.press("ArrowUp") if _ else page.keyboard.press("k")
    focused(page, 2)
    page.keyboard.press("]")  # the session selects the other version; the rest stays
    expect(messages(page).nth(2)).to_contain_text("Where shall we sit?")
    expect(messages(page)).to_have_count(7)
    page.keyboard.press("[")
    expect(messages(page).nth(2)).to_contain_text("Where shall we go?")
    messages(page).nth(1).focus()
    page.keyboard.press("ArrowRight")
    expect(messages(page).nth(1)).to_contain_text("Bring fruit instead.")
    expect(page).to_have_url(re.compile(f"#/thread/{name}$"))  # in the session
    assert served[0].ref(name).node == talk.other
    messages(page).nth(1).focus()
    page.keyboard.press("h")
    expect(messages(page).nth(1)).to_contain_text("Bring bread and cheese.")
    expect(messages(page)).to_have_count(7)


def test_help_lists_the_keys_and_slash_focuses_search(page: Any, served: Any, name: str) -> None:
    from playwright.sync_api import expect

    grow_talk(served[0], name)
    opened(page, name, 7)
    expect(page.get_by_text(re.compile(r"Keys: .* parent / child"))).to_be_visible()
    page.keyboard.press("?")
    help_ = page.get_by_role("region", name="Keyboard shortcuts")
    expect(help_).to_contain_text("the next alternative (sibling branch)")
    page.screenshot(path="/tmp/thread-keys.png", full_page=False)
    page.keyboard.press("Escape")
    expect(help_).to_have_count(0)
    page.get_by_role("button", name="Keyboard shortcuts").click()
    expect(help_).to_be_visible()
    page.keyboard.press("/")
    expect(page).to_have_url(re.compile(r"#/search$"))
    expect(page.get_by_role("heading", level=1, name="Search")).to_be_visible()
    expect(page.get_by_role("searchbox")).to_be_focused()
