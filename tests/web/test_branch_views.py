"""The git verbs of conversations in the page (issue 37), both backends: Compare two
branches (from the thread's sessions, from a message's alternatives, from two search
hits) aligned side by side, stacked on a phone; Merge a branch into another session,
the merge message saying "merged from …" with a link; Replay a branch's user turns as
a new session, without answers and with the local model's (greedy), saying why a
replay stopped early.

Every wait is Playwright's `expect` on what the user sees, never a duration."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from loomdb import Loom

SHOTS = Path("/tmp/shots/web-verbs")


@dataclass
class Pair:
    """A tree with the session `main` and a fork `alt` that parts after the first
    answer: `main` goes on about tulips, `alt` about roses with a tool call."""

    main: str
    alt: str
    tree: str
    ask: str  # the question both share
    tulips: str  # main's second question
    roses: str  # alt's second question


def grow_pair(lm: Loom, tag: str, options: dict[str, Any] | None = None) -> Pair:
    main, alt = f"main-{tag}", f"alt-{tag}"
    tree, root = lm.new_tree("You are a gardener.", session=main, role="system",
                             title=f"Garden {tag}", options=options)
    ask = lm.append(main, "Which flowers for a sunny bed?", role="user")
    lm.append(main, "Marigolds and lavender.", role="assistant")
    lm.fork(main, alt)
    tulips = lm.append(main, "When do tulips go in?\nIn autumn?", role="user")
    lm.append(main, "Plant tulip bulbs in October.", role="assistant")
    roses = lm.append(alt, "When do roses go in?\nIn autumn?", role="user")
    lm.append(alt, [{"type": "text", "text": "Let me check the calendar."},
                    {"type": "tool_use", "id": "c1", "name": "calendar",
                     "input": {"plant": "rose"}}], role="assistant")
    return Pair(main, alt, tree.id, ask.id, tulips.id, roses.id)


@pytest.fixture(scope="module")
def pair(served: tuple[Loom, str]) -> Pair:
    return grow_pair(served[0], "m")


def thread_ready(page: Any) -> None:
    from playwright.sync_api import expect

    expect(page.get_by_role("region", name="Thread")).to_have_attribute("data-ready", re.compile(r"^[1-9]"))


def test_two_sessions_compared_side_by_side(sized_page: Any, pair: Pair, axe: Any,
                                            shot: Any) -> None:
    from playwright.sync_api import expect

    page = sized_page
    page.goto(f"/#/thread/{pair.main}")
    thread_ready(page)
    branch = page.get_by_role("group", name="Branch")
    branch.get_by_role("button", name="Compare…").click()
    form = page.get_by_role("form", name="Compare branches")
    expect(form.get_by_label("Compare this branch with")).to_have_value(pair.alt)
    form.get_by_role("button", name="Compare").click()
    expect(page).to_have_url(re.compile(
        rf"#/compare\?left={pair.main}&right={pair.alt}$"))
    expect(page.get_by_test_id("compare-summary")).to_contain_text(
        "3 messages in common, then 2 messages that differ")
    diffs = page.get_by_role("list", name="Differences")
    changed = diffs.get_by_role("listitem", name="Message 4: changed")
    left = changed.get_by_role("region", name="Left: message 4")
    right = changed.get_by_role("region", name="Right: message 4")
    expect(left).to_contain_text("When do tulips go in?")
    expect(right).to_contain_text("When do roses go in?")
    within = changed.get_by_role("figure", name="Text diff of message 4")
    expect(within).to_contain_text("-When do tulips go in?")
    expect(within).to_contain_text("+When do roses go in?")
    expect(within).not_to_contain_text("+In autumn?")  # the same line is not a change
    answer = diffs.get_by_role("listitem", name="Message 5: changed")
    expect(answer).to_contain_text("tool calls differ")
    expect(answer.get_by_role("region", name="Right: message 5")).to_contain_text(
        'calendar({"plant":"rose"})')
    expect(diffs.get_by_role("listitem")).to_have_count(2)  # nothing of what they share
    # side by side on a laptop, one above the other on a phone
    a, b = left.bounding_box(), right.bounding_box()
    if page.viewport_size["width"] >= 1000:
        assert b["x"] > a["x"] + a["width"] - 1 and abs(a["y"] - b["y"]) < 2
    else:
        assert b["y"] >= a["y"] + a["height"] - 1
        assert page.evaluate("document.documentElement.scrollWidth") <= 390
    axe(page)
    shot(page, "compare")
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"compare-{page.viewport_size['width']}.png"), full_page=True)
    # a side's "open" link opens its thread at that message
    right.get_by_role("link", name="open").click()
    expect(page).to_have_url(re.compile(rf"#/thread/{pair.alt}\?at=\w+"))


def test_alternatives_and_search_hits_are_compared(page: Any, served: tuple[Loom, str],
                                                   name: str) -> None:
    from playwright.sync_api import expect

    lm = served[0]
    _, root = lm.new_tree(f"Name a {name} colour", session=name)
    lm.append(name, f"Blue {name}", role="assistant")
    other = lm.append(root.id, f"Green {name}", role="assistant")
    page.goto(f"/#/thread/{name}")
    thread_ready(page)
    answer = page.get_by_role("article", name="assistant message 2")
    answer.get_by_role("button", name="More").click()
    answer.get_by_role("button", name="Compare with the next alternative").click()
    expect(page).to_have_url(re.compile(rf"#/compare\?left={name}&right={other.id}$"))
    changed = page.get_by_role("listitem", name="Message 2: changed")
    expect(changed.get_by_role("figure")).to_contain_text(f"-Blue {name}")
    expect(changed.get_by_role("figure")).to_contain_text(f"+Green {name}")

    # two search hits: the paths to each, compared
    page.goto(f"/#/search?q={quote(name)}&mode=text")
    hits = page.get_by_role("list", name="Results")
    expect(hits.get_by_role("listitem")).to_have_count(3)
    pick = hits.get_by_role("checkbox", name=re.compile("Compare"))
    pick.nth(0).check()
    expect(page.get_by_role("link", name="Compare the two hits")).to_have_count(0)
    pick.nth(1).check()
    page.get_by_role("link", name="Compare the two hits").click()
    expect(page).to_have_url(re.compile(r"#/compare\?left=\w+&right=\w+$"))
    expect(page.get_by_test_id("compare-summary")).to_be_visible()


def test_a_branch_is_merged_into_another_session(page: Any, served: tuple[Loom, str],
                                                 axe: Any, name: str) -> None:
    from playwright.sync_api import expect

    lm = served[0]
    pair = grow_pair(lm, name)
    page.goto(f"/#/thread/{pair.alt}")
    thread_ready(page)
    page.get_by_role("group", name="Branch").get_by_role("button", name="Merge…").click()
    form = page.get_by_role("form", name="Merge branch")
    form.get_by_label("Merge this branch into").select_option(pair.main)
    form.get_by_label("my words").check()
    form.get_by_label("What the merge says").fill("Roses: plant them in November.")
    axe(page)
    form.get_by_role("button", name="Merge").click()
    expect(page).to_have_url(re.compile(rf"#/thread/{pair.main}\?at=\w+$"))
    head = lm.ref(pair.main).node
    assert page.url.endswith(f"?at={head}")
    merged = page.get_by_role("article").filter(has=page.get_by_test_id("merged-from"))
    expect(merged).to_have_attribute("data-node", head)
    expect(merged.get_by_test_id("merged-from")).to_contain_text(
        f"merged from session {pair.alt} (2 messages)")
    expect(merged).to_contain_text("Roses: plant them in November.")
    node = lm.node(head)
    tip = lm.ref(pair.alt).node
    assert node.origin["merged_from"]["node"] == tip
    assert any(tip in str(source) for source in node.sources)
    # merging again is the same merge: nothing new
    page.goto(f"/#/thread/{pair.alt}")
    thread_ready(page)
    page.get_by_role("group", name="Branch").get_by_role("button", name="Merge…").click()
    form = page.get_by_role("form", name="Merge branch")
    form.get_by_label("Merge this branch into").select_option(pair.main)
    form.get_by_role("button", name="Merge").click()
    expect(page).to_have_url(re.compile(rf"#/thread/{pair.main}\?at={head}$"))
    assert lm.ref(pair.main).node == head
    # the link goes to the branch it came from
    link = page.get_by_test_id("merged-from").get_by_role("link")
    link.click()
    expect(page).to_have_url(re.compile(rf"#/thread/{tip}\?at={tip}$"))
    expect(page.get_by_role("article", name="assistant message 5")).to_contain_text(
        "Let me check the calendar.")


def test_a_replay_without_answers_and_one_that_stops(sized_page: Any,
                                                     served: tuple[Loom, str],
                                                     axe: Any, name: str) -> None:
    from playwright.sync_api import expect

    page, lm = sized_page, served[0]
    pair = grow_pair(lm, name)
    page.goto(f"/#/thread/{pair.main}")
    thread_ready(page)
    page.get_by_role("group", name="Branch").get_by_role("button", name="Replay…").click()
    form = page.get_by_role("form", name="Replay turns")
    expect(form.get_by_label("Onto")).to_have_value("start")
    form.get_by_label("The model answers each turn").uncheck()
    form.get_by_label("New session name").fill(f"again-{name}")
    axe(page)
    form.get_by_role("button", name="Replay").click()
    done = form.get_by_test_id("replayed")
    expect(done.get_by_role("status")).to_have_text(f"Replayed 2 turns as session again-{name}.")
    expect(done.get_by_role("alert")).to_have_count(0)
    path = lm.path(f"again-{name}")
    assert [lm.node(n).role for n in path] == ["system", "user", "user"]
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"replay-{page.viewport_size['width']}.png"), full_page=True)

    # a path with a tool result: the replay stops there and says why
    lm.append(pair.alt, [{"type": "tool_result", "tool_use_id": "c1", "name": "calendar",
                          "content": [{"type": "text", "text": "November"}]}], role="tool")
    form.get_by_label("Replay the user turns of").select_option(f"session {pair.alt}")
    form.get_by_label("New session name").fill(f"tools-{name}")
    form.get_by_role("button", name="Replay").click()
    expect(done.get_by_role("status")).to_have_text(f"Replayed 2 turns as session tools-{name}")
    expect(done.get_by_role("alert")).to_contain_text(
        "It stopped early: message")
    expect(done.get_by_role("alert")).to_contain_text("carries tool results")
    # a taken name is said in words, the form kept
    form.get_by_role("button", name="Replay").click()
    expect(form.get_by_role("alert").filter(has_text="already in use")).to_be_visible()
    expect(form.get_by_label("New session name")).to_have_value(f"tools-{name}")
    done_link = page.get_by_role("link", name=f"tools-{name}")
    expect(done_link).to_have_count(0)


@pytest.mark.xdist_group("local-model")
@pytest.mark.usefixtures("model_time")
def test_a_replay_answered_by_the_local_model(page: Any, served: tuple[Loom, str],
                                             name: str) -> None:
    from playwright.sync_api import expect

    lm = served[0]
    lm.new_tree("You answer in one word.", session=name, role="system",
                options={"temperature": 0, "max_tokens": 4})
    lm.append(name, "Say yes.", role="user")
    lm.append(name, "Yes.", role="assistant")
    page.goto(f"/#/thread/{name}")
    thread_ready(page)
    page.get_by_role("group", name="Branch").get_by_role("button", name="Replay…").click()
    form = page.get_by_role("form", name="Replay turns")
    expect(form.get_by_role("combobox", name="Model")).to_have_value("local")
    form.get_by_label("New session name").fill(f"local-{name}")
    form.get_by_role("button", name="Replay").click()
    done = form.get_by_test_id("replayed")
    expect(done.get_by_role("status")).to_have_text(f"Replayed 1 turn as session local-{name}.")
    done.get_by_role("link", name=f"local-{name}").click()
    expect(page).to_have_url(re.compile(rf"#/thread/local-{name}$"))
    thread_ready(page)
    articles = page.get_by_role("list", name="Messages").get_by_role("article")
    expect(articles).to_have_count(3)
    expect(articles.nth(2)).to_have_attribute("aria-label", "assistant message 3")
    answer = lm.node(lm.ref(f"local-{name}").node)
    assert answer.role == "assistant" and answer.provenance is not None
