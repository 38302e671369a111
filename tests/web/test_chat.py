"""The thread as a chat, without a model (both backends, at 1280x900 and 390x844):
switching a version or an alternative, editing and the keyboard stay in the session
(the address keeps it; each version shows its own answer), Copy copies a message,
and a refused fork name is said in words beside its form, which keeps it. The
answers streamed by the local model: test_chat_model.py."""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import quote

from loomdb import Loom


def messages(page: Any) -> Any:
    return page.get_by_role("list", name="Messages").get_by_role("article")


def opened(page: Any, headish: str, count: int) -> None:
    from playwright.sync_api import expect

    page.goto(f"/#/thread/{quote(headish, safe='')}")
    expect(page.get_by_role("region", name="Thread")).to_have_attribute("data-ready", str(count))


def versions_with_answers(lm: Loom, name: str) -> dict[str, str]:
    """q1 -> a1 and q1 -> a3 -> more (alternatives), then q1 edited (q2) and q2 answered
    (a2): the session shows q2 -> a2."""
    _, q1 = lm.new_tree("Which fruit is red?", session=name, title=f"Fruit {name}")
    a1 = lm.append(name, "A strawberry.", role="assistant")
    a3 = lm.append(q1.id, "A cherry.", role="assistant")
    more = lm.append(a3.id, "And a sour one?", role="user")
    q2 = lm.edit(q1.id, "Which fruit is yellow?")
    a2 = lm.append(q2.id, "A banana.", role="assistant")
    lm.select(name, q2.id)
    lm.set_ref(name, a2.id)
    return {"q1": q1.id, "a1": a1.id, "q2": q2.id, "a2": a2.id, "a3": a3.id, "more": more.id}


def test_switching_and_editing_stay_in_the_session(sized_page: Any, served: Any, name: str,
                                                   axe: Any, shot: Any) -> None:
    from playwright.sync_api import expect

    page, lm = sized_page, served[0]
    ids = versions_with_answers(lm, name)
    opened(page, name, 2)
    shown = messages(page)
    expect(shown.nth(1)).to_contain_text("A banana.")
    axe(page)
    shot(page, "thread")
    where = page.get_by_role("region", name="Thread")
    # the question's other version shows its own (newest) answer and what follows it;
    # the address keeps the session
    shown.nth(0).get_by_role("button", name="Previous version").click()
    expect(shown).to_have_count(3)
    expect(shown.nth(0)).to_contain_text("Which fruit is red?")
    expect(shown.nth(1)).to_contain_text("A cherry.")
    expect(page).to_have_url(re.compile(f"#/thread/{name}$"))
    expect(where).to_contain_text(f"session {name}")
    assert lm.path(name) == [ids["q1"], ids["a3"], ids["more"]]
    # and back, by the keyboard (] on the focused question)
    shown.nth(0).focus()
    page.keyboard.press("]")
    expect(shown).to_have_count(2)
    expect(shown.nth(1)).to_contain_text("A banana.")
    # the answer's alternatives: each shown with the version of the question it answers
    answers = shown.nth(1).get_by_role("group", name="alternatives")
    expect(answers).to_contain_text("3/3")
    answers.get_by_role("button", name="Previous alternative").click()
    expect(shown.nth(1)).to_contain_text("A cherry.")
    expect(shown.nth(0)).to_contain_text("Which fruit is red?")
    expect(shown).to_have_count(3)
    shown.nth(1).get_by_role("button", name="Previous alternative").click()
    expect(shown.nth(1)).to_contain_text("A strawberry.")
    expect(shown).to_have_count(2)
    expect(page).to_have_url(re.compile(f"#/thread/{name}$"))
    assert lm.path(name) == [ids["q1"], ids["a1"]]
    # Edit, Save: a version, selected in the session, what follows kept
    shown.nth(0).get_by_role("button", name="Edit").click()
    shown.nth(0).get_by_role("textbox", name="New version").fill("Which fruit is green?")
    shown.nth(0).get_by_role("button", name="Save", exact=True).click()
    expect(shown.nth(0)).to_contain_text("Which fruit is green?")
    expect(shown.nth(0).get_by_role("group", name="versions")).to_contain_text("3/3")
    expect(shown.nth(1)).to_contain_text("A strawberry.")
    expect(page).to_have_url(re.compile(f"#/thread/{name}$"))
    assert lm.ref(name).node == ids["a1"]


def test_copy_and_a_taken_fork_name_in_words(sized_page: Any, served: Any, name: str) -> None:
    from playwright.sync_api import expect

    page, lm = sized_page, served[0]
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    lm.new_tree("Copy **this** line.", session=name)
    lm.append(name, "Done.", role="assistant")
    lm.fork(name, f"{name}-taken")
    opened(page, name, 2)
    first = messages(page).nth(0)
    first.get_by_role("button", name="Copy").click()
    expect(first.get_by_role("status")).to_have_text("Copied.")
    assert page.evaluate("() => navigator.clipboard.readText()") == "Copy **this** line."
    first.get_by_role("button", name="More").click()
    first.get_by_role("button", name="Fork…").click()
    form = first.get_by_role("form", name="Fork here")
    form.get_by_role("textbox", name="New session name").fill(f"{name}-taken")
    form.get_by_role("button", name="Create fork").click()
    expect(form.get_by_role("alert")).to_have_text("That name is already in use: choose another.")
    expect(form.get_by_role("textbox", name="New session name")).to_have_value(f"{name}-taken")
    expect(page.locator("body")).not_to_contain_text("InvalidInput")
    form.get_by_role("textbox", name="New session name").fill(f"{name}-free")
    form.get_by_role("button", name="Create fork").click()
    expect(page).to_have_url(re.compile(f"#/thread/{name}-free$"))
