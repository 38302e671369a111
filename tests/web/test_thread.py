"""The conversation view (`#/thread/<headish>`): the path to a message with markdown,
code, images, tool calls and results; the alternatives and versions at each slot with
a switcher; edit, fork and generation; compactions and subagents folded; logprob
colouring; `?at=` scrolling to a message; a read-only share without write controls;
and a long thread read a page at a time (`GET /api/nodes/{h}/thread?before=&limit=`),
older pages loading as one scrolls up. The API on both backends."""

from __future__ import annotations

import base64
import re
import struct
import zlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from helpers import long_session
from loomdb import Loom
from loomdb.storage_ops import storage


def png(width: int, height: int, rgb: tuple[int, int, int]) -> bytes:
    """A small solid PNG (no imaging library needed)."""
    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    row = b"\x00" + bytes(rgb) * width
    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(row * height)) + chunk(b"IEND", b""))


@dataclass
class Talk:
    """A session `s` of six messages: a question; an answer with a second alternative
    beside it; a question edited once (two versions); an answer in markdown with a code
    block; a message with an image; a tool call (with words) and its result."""

    session: str
    ids: list[str]
    other: str  # the second alternative of message 2
    edited: str  # the new version of message 3
    image: str  # the image's blob id


def grow_talk(lm: Loom, name: str) -> Talk:
    _, root = lm.new_tree("Plan a picnic", session=name, title=f"Picnic {name}")
    answer = lm.append(name, "Bring **bread** and cheese.", role="assistant")
    other = lm.append(root.id, "Bring fruit instead.", role="assistant")
    ask = lm.append(name, "Where shall we go?", role="user")
    edited = lm.edit(ask.id, "Where shall we sit?")
    lm.select(name, ask.id)  # the session keeps the first version
    code = lm.append(name, "A park. As code:\n\n```python\nprint('picnic')\n```",
                     role="assistant")
    data = png(48, 32, (200, 40, 40))
    pic = lm.append(name, [{"type": "text", "text": "The map:"},
                           {"type": "image", "data": base64.b64encode(data).decode(),
                            "mime_type": "image/png", "alt_text": "map of the park"}],
                    role="user")
    tool = lm.append(name, [  # (words beside the call: a message of its own, never folded)
        {"type": "text", "text": "Checking the weather."},
        {"type": "tool_use", "id": "call_1", "name": "weather", "input": {"city": "Lyon"}},
    ], role="assistant")
    result = lm.append(name, [
        {"type": "tool_result", "tool_use_id": "call_1", "name": "weather",
         "content": [{"type": "text", "text": "sunny, 24°C"}]},
    ], role="tool")
    image = lm.node(pic.id).content[1]["ref"]
    return Talk(name, [root.id, answer.id, ask.id, code.id, pic.id, tool.id, result.id],
                other.id, edited.id, image)


@pytest.fixture(scope="module")
def long(served: tuple[Loom, str]) -> tuple[str, list[str]]:
    return "long", long_session(served[0], "long", 260)


def thread_of(base: str, headish: str, **params: Any) -> httpx.Response:
    return httpx.get(f"{base}/api/nodes/{quote(headish, safe='')}/thread", params=params,
                     timeout=30)


def messages(page: Any) -> Any:
    return page.get_by_role("list", name="Messages").get_by_role("article")


def opened(page: Any, headish: str, count: int, at: str | None = None) -> None:
    from playwright.sync_api import expect

    page.goto(f"/#/thread/{quote(headish, safe='')}" + (f"?at={at}" if at else ""))
    expect(page.get_by_role("region", name="Thread")).to_have_attribute("data-ready", str(count))


# -- the API ---------------------------------------------------------------------------
def test_a_thread_is_read_a_page_at_a_time_from_its_end(served: Any, long: Any) -> None:
    _, base = served
    name, ids = long
    first = thread_of(base, name).json()
    assert [m["id"] for m in first["messages"]] == ids[-100:]
    assert (first["total"], first["start"], first["has_more"]) == (260, 160, True)
    assert first["messages"][0]["index"] == 160 and first["ref"]["name"] == name
    assert first["messages"][-1]["html"] == "<p>Message 259</p>\n"
    second = thread_of(base, name, before=ids[160], limit=150).json()
    assert [m["id"] for m in second["messages"]] == ids[10:160]
    assert second["has_more"] is True
    last = thread_of(base, name, before=ids[10]).json()
    assert [m["id"] for m in last["messages"]] == ids[:10]
    assert (last["start"], last["has_more"]) == (0, False)
    assert thread_of(base, ids[5]).json()["total"] == 6


def test_a_page_refuses_what_it_cannot_read(served: Any, long: Any) -> None:
    lm, base = served
    name, ids = long
    other, _ = lm.new_tree("elsewhere")
    for params in ({"limit": 0}, {"limit": 501}, {"before": "x" * 1001}):
        assert thread_of(base, name, **params).status_code == 422, params
    off = thread_of(base, name, before=other.root)
    assert off.status_code == 400
    assert "is not a message on this path" in off.json()["error"]["message"]
    assert thread_of(base, "no-such-session").status_code == 404


def test_a_blob_is_read_through_a_message_that_holds_it(served: Any, name: str) -> None:
    lm, base = served
    talk = grow_talk(lm, name)
    got = httpx.get(f"{base}/api/blobs/{talk.image}", params={"node": talk.ids[4]})
    assert got.status_code == 200
    assert got.headers["content-type"] == "image/png"
    assert got.content == png(48, 32, (200, 40, 40))
    elsewhere = httpx.get(f"{base}/api/blobs/{talk.image}", params={"node": talk.ids[0]})
    assert elsewhere.status_code == 404
    bad = httpx.get(f"{base}/api/blobs/sha256:nothex", params={"node": talk.ids[4]})
    assert bad.status_code == 404
    html = lm.put_blob(b"<script>alert(1)</script>", "text/html")
    lm.append(name, [{"type": "document", "ref": html, "mime_type": "text/html"}])
    sent = httpx.get(f"{base}/api/blobs/{html}", params={"node": name})
    assert sent.headers["content-type"] == "application/octet-stream"
    assert sent.headers["content-disposition"] == "attachment"


# -- the page --------------------------------------------------------------------------
def test_a_thread_shows_markdown_code_images_and_tools(page: Any, served: Any, name: str) -> None:
    from playwright.sync_api import expect

    talk = grow_talk(served[0], name)
    opened(page, name, 7)
    shown = messages(page)
    expect(shown.nth(0)).to_contain_text("Plan a picnic")
    expect(shown.nth(1).locator("strong")).to_have_text("bread")
    expect(shown.nth(3).locator("pre code")).to_have_text("print('picnic')")
    image = shown.nth(4).get_by_role("img", name="map of the park", exact=True)
    expect(image).to_have_js_property("naturalWidth", 48)  # the bytes arrived and decoded
    call = shown.nth(5).get_by_role("region", name="Tool call: weather")
    expect(call).to_contain_text('"city": "Lyon"')
    expect(shown.nth(6).get_by_role("region", name="Tool result: weather")).to_contain_text(
        "sunny, 24°C")
    assert talk.ids[6] == shown.nth(6).get_attribute("data-node")
    page.screenshot(path="/tmp/thread-talk.png", full_page=True)


def test_alternatives_and_versions_switch(page: Any, served: Any, name: str) -> None:
    from playwright.sync_api import expect

    talk = grow_talk(served[0], name)
    opened(page, name, 7)
    second = messages(page).nth(1)
    alternatives = second.get_by_role("group", name="alternatives")
    expect(alternatives).to_contain_text("1/2")
    third = messages(page).nth(2)
    versions = third.get_by_role("group", name="versions")
    expect(versions).to_contain_text("1/2")
    # a version of the session's message: what follows stays
    versions.get_by_role("button", name="Next version").click()
    expect(third).to_contain_text("Where shall we sit?")
    expect(versions).to_contain_text("2/2")
    expect(messages(page)).to_have_count(7)
    # the other alternative: the session moves to its branch, the address stays
    alternatives.get_by_role("button", name="Next alternative").click()
    expect(messages(page)).to_have_count(2)
    expect(page).to_have_url(re.compile(f"#/thread/{name}$"))
    expect(page.get_by_role("region", name="Thread")).to_contain_text(f"session {name}")
    expect(messages(page).nth(1)).to_contain_text("Bring fruit instead.")
    expect(messages(page).nth(1).get_by_role("group", name="alternatives")).to_contain_text("2/2")
    assert served[0].ref(name).node == talk.other


def test_edit_makes_a_new_version_and_keeps_what_follows(page: Any, served: Any,
                                                         name: str) -> None:
    from playwright.sync_api import expect

    lm = served[0]
    talk = grow_talk(lm, name)
    opened(page, name, 7)
    second = messages(page).nth(1)
    second.get_by_role("button", name="Edit").click()
    second.get_by_role("textbox", name="New version").fill("Bring *plums*.")
    second.get_by_role("button", name="Save", exact=True).click()
    expect(second.locator("em")).to_have_text("plums")
    expect(second.get_by_role("group", name="versions")).to_contain_text("2/2")
    expect(messages(page)).to_have_count(7)
    expect(messages(page).nth(6)).to_contain_text("sunny")
    assert lm.path(name)[1] != talk.ids[1] and lm.versions(talk.ids[1])[0] == talk.ids[1]


def test_fork_starts_a_session_at_a_message(page: Any, served: Any, name: str) -> None:
    from playwright.sync_api import expect

    lm = served[0]
    talk = grow_talk(lm, name)
    opened(page, name, 7)
    third = messages(page).nth(2)
    third.get_by_role("button", name="More").click()
    third.get_by_role("button", name="Fork…").click()
    third.get_by_role("textbox", name="New session name").fill(f"{name}-b")
    third.get_by_role("button", name="Create fork").click()
    expect(page).to_have_url(re.compile(f"#/thread/{name}-b$"))
    expect(messages(page)).to_have_count(3)
    assert lm.ref(f"{name}-b").node == talk.ids[2]
    page.get_by_role("textbox", name="Message").fill("And a blanket?")
    page.get_by_text("More options").click()
    page.get_by_role("button", name="Add without an answer").click()
    expect(messages(page)).to_have_count(4)
    expect(messages(page).nth(3)).to_contain_text("And a blanket?")


def test_compactions_and_subagents_are_folded(page: Any, served: Any, name: str) -> None:
    from playwright.sync_api import expect

    lm = served[0]
    talk = grow_talk(lm, name)
    summary = lm.append(name, "Summary of the earlier conversation:\nA picnic in a park.",
                        kind="compaction", also=[(talk.ids[6], "context")])
    storage(lm).record_compaction({
        "node_id": summary.id, "tree_id": summary.tree, "model": "local",
        "tokens_before": 400, "tokens_after": 60, "duration_ms": 5, "trigger": "manual",
        "summarized": 5, "created_at": summary.created_at})
    child, _ = lm.new_tree("Find a park", session=f"{name}-kid")
    lm.append(name, "The park by the river is best.", role="user", source="agent",
              origin={"subagent": {"tree": child.id, "session": f"{name}-kid",
                                   "task": "find a park"}})
    opened(page, name, 9)
    folded = messages(page).nth(7)
    expect(folded.get_by_text("Compaction: replaced 5 earlier messages")).to_be_visible()
    expect(folded.get_by_text("A picnic in a park.")).to_be_hidden()
    folded.get_by_text("Compaction:").click()
    expect(folded.get_by_text("A picnic in a park.")).to_be_visible()
    spawned = messages(page).nth(8)
    expect(spawned.get_by_text("Subagent: find a park")).to_be_visible()
    spawned.get_by_text("Subagent: find a park").click()
    page.screenshot(path="/tmp/thread-folded.png", full_page=True)
    spawned.get_by_role("link", name="Open the subagent's thread").click()
    expect(page).to_have_url(re.compile(f"#/thread/{name}-kid$"))
    expect(messages(page)).to_have_count(1)


def test_at_scrolls_to_and_highlights_a_message(page: Any, served: Any, long: Any) -> None:
    from playwright.sync_api import expect

    name, ids = long
    opened(page, name, 260, at=ids[40])  # three pages up: the page reads until it is there
    target = page.locator(f'article[data-node="{ids[40]}"]')
    expect(target).to_be_in_viewport()
    expect(target).to_have_class(re.compile(r"\bhighlighted\b"))
    expect(target).to_contain_text("Message 40")


def test_older_messages_load_as_one_scrolls_up(page: Any, served: Any, long: Any) -> None:
    from playwright.sync_api import expect

    name, ids = long
    opened(page, name, 100)
    shown = messages(page)
    expect(shown.last).to_be_in_viewport()
    expect(shown.last).to_contain_text("Message 259")
    page.evaluate("() => window.scrollTo(0, 0)")
    expect(shown).to_have_count(200)
    page.evaluate("() => window.scrollTo(0, 0)")
    expect(shown).to_have_count(260)
    expect(shown.first).to_contain_text("Message 0")
    expect(page.get_by_role("button", name=re.compile("Load earlier messages"))).to_have_count(0)


def test_a_shared_thread_has_no_write_controls(page: Any, served: Any, name: str) -> None:
    """The view in a share link's page (`/s/<token>`): the same thread read through the
    link's capability, and nothing that writes, nor anything beside the branch."""
    from playwright.sync_api import expect

    talk = grow_talk(served[0], name)
    _, token = served[0].shares.create(name, live=True)
    page.goto(f"/s/{token}")
    expect(page.get_by_role("region", name="Thread")).to_have_attribute("data-ready", "7")
    expect(messages(page).nth(1)).to_contain_text("Bring bread and cheese.")
    for label in ("Edit", "Fork", "Regenerate", "Send", "Generate", "Logprobs"):
        expect(page.get_by_role("button", name=label)).to_have_count(0)
    expect(page.get_by_role("form", name="Compose")).to_have_count(0)
    expect(page.get_by_role("link", name="Share")).to_have_count(0)
    expect(messages(page).nth(1).get_by_role("button", name="Next alternative")).to_have_count(0)
    expect(messages(page).nth(4).get_by_role("img", name="map of the park", exact=True)
           ).to_have_js_property("naturalWidth", 48)
    assert messages(page).nth(0).get_attribute("data-node") == talk.ids[0]

def test_pages_follow_the_versions_a_path_selects(served: Any, name: str) -> None:
    """A version chosen by a session, or stored on a message below it, is the one its
    page shows, however far from the head (pages walk only the end of the path)."""
    lm, base = served
    ids = long_session(lm, name, 230)
    old = lm.edit(ids[30], "Message 30, again")
    near = lm.edit(ids[200], "Message 200, again")
    lm.select(name, old.id)
    lm.select(name, near.id)
    lm.fork(name, f"{name}-b")
    tail = lm.append(f"{name}-b", "After both")  # stores the selections it was made under
    for head in (name, tail.id):
        pages, before = [], None
        while True:
            got = thread_of(base, head, limit=70, **({"before": before} if before else {})).json()
            pages[:0] = got["messages"]
            if not got["has_more"]:
                break
            before = got["messages"][0]["id"]
        assert [m["id"] for m in pages] == lm.path(head)
        assert pages[30]["id"] == old.id and pages[200]["id"] == near.id
        assert pages[200]["versions"] == [ids[200], near.id]


def test_a_subagent_a_model_spawned_folds_into_its_call(page: Any, served: Any,
                                                       name: str) -> None:
    """A model's `spawn_subagent` call: the message lists the child (its thread a link
    away) and the tool result that carried the report back is folded."""
    from playwright.sync_api import expect

    from loomdb.agents.subagents import start_child

    lm, base = served
    lm.new_tree("How many trees are in the park?", session=name)
    call = lm.append(name, [{"type": "tool_use", "id": "call_9", "name": "spawn_subagent",
                             "input": {"task": "count the trees"}}], role="assistant")
    child, session = start_child(lm, call.id, "count the trees", None, None)
    lm.append(name, [{"type": "tool_result", "tool_use_id": "call_9", "name": "spawn_subagent",
                      "content": [{"type": "text", "text": "There are 41 trees."}]}],
              role="tool")
    listed = thread_of(base, name).json()["messages"][1]["subagents"]
    assert [(c["tree"], c["session"], c["task"]) for c in listed] == [
        (child, session, "count the trees")]
    opened(page, name, 3)
    report = messages(page).nth(2)
    expect(report.get_by_text("There are 41 trees.")).to_be_hidden()
    report.get_by_text("Subagent report").click()
    expect(report.get_by_text("There are 41 trees.")).to_be_visible()
    spawned = messages(page).nth(1)
    spawned.get_by_text("Subagent: count the trees").click()
    spawned.get_by_role("link", name="Open the subagent's thread").click()
    expect(page).to_have_url(re.compile(f"#/thread/{session}$"))
    expect(messages(page).first).to_contain_text("count the trees")


def test_a_message_opened_mid_branch_offers_what_follows(page: Any, served: Any,
                                                        name: str) -> None:
    """A search hit opens the path to a message; what follows it is a click away, the
    message still marked."""
    from playwright.sync_api import expect

    talk = grow_talk(served[0], name)
    opened(page, talk.ids[3], 4, at=talk.ids[3])
    page.get_by_role("button", name="Show what follows").click()
    expect(page).to_have_url(re.compile(f"#/thread/{talk.ids[6]}\\?at={talk.ids[3]}$"))
    expect(messages(page)).to_have_count(7)
    expect(page.locator(f'article[data-node="{talk.ids[3]}"]')).to_have_class(
        re.compile(r"\bhighlighted\b"))
    expect(page.get_by_role("button", name="Show what follows")).to_have_count(0)


def test_an_agents_transcript_folds_its_tool_steps_and_shows_its_context(
        sized_page: Any, served: Any, name: str, axe: Any, shot: Any) -> None:
    """Consecutive tool calls are one line that opens; their output is monospace text as
    written, a patch is a diff; "Context" shows what the model receives there (an
    excluded message left out), as stored or as a provider's request."""
    from playwright.sync_api import expect

    lm, base = served
    page = sized_page
    patch = "*** Begin Patch\n*** Update File: parser.py\n@@\n-    return None\n+    return []\n*** End Patch"
    lm.new_tree("Fix the parser.", session=name)
    steps: list[tuple[str, Any]] = [
        ("assistant", [{"type": "tool_use", "id": "b1", "name": "bash", "input": {"command": "ls"}},
                       {"type": "tool_use", "id": "b2", "name": "bash", "input": {"command": "cat x"}}]),
        ("tool", [{"type": "tool_result", "tool_use_id": "b1", "name": "bash",
                   "content": [{"type": "text", "text": "parser.py\ntest_parser.py"}]},
                  {"type": "tool_result", "tool_use_id": "b2", "name": "bash",
                   "content": [{"type": "text", "text": "**not bold**"}]}]),
        ("assistant", [{"type": "tool_use", "id": "r1", "name": "read_file",
                        "input": {"path": "parser.py"}}]),
        ("tool", [{"type": "tool_result", "tool_use_id": "r1", "name": "read_file",
                   "content": [{"type": "text", "text": "def parse(): return None"}]}]),
        ("assistant", [{"type": "tool_use", "id": "p1", "name": "apply_patch",
                        "input": {"input": patch}}]),
        ("tool", [{"type": "tool_result", "tool_use_id": "p1", "name": "apply_patch",
                   "content": [{"type": "text", "text": "Done!"}]}]),
        ("assistant", "Fixed: parse returns an empty list."),
    ]
    nodes = [lm.append(name, content, role=role) for role, content in steps]
    lm.exclude(nodes[3].id)  # the file's text is left out of what the model reads
    opened(page, name, 8)
    run = page.get_by_test_id("tool-run")
    line = run.get_by_role("button")
    expect(line).to_contain_text("Tools: 2 bash, 1 read_file, 1 apply_patch")
    expect(line).to_have_attribute("aria-expanded", "false")
    expect(messages(page)).to_have_count(2)  # the question and the answer; the steps folded
    line.click()
    expect(messages(page)).to_have_count(8)
    out = run.get_by_test_id("tool-output")
    expect(out.first).to_have_text("parser.py\ntest_parser.py")  # lines kept, as written
    assert out.first.evaluate("e => getComputedStyle(e).fontFamily").startswith("ui-monospace")
    expect(out.nth(1)).to_have_text("**not bold**")
    diff = run.get_by_role("figure", name="Patch of apply_patch")
    expect(diff).to_contain_text("+1 −1")
    expect(diff.locator("span.add")).to_have_text("+    return []")
    expect(diff.locator("span.del")).to_have_text("-    return None")
    shot(page, "thread-tool-steps")
    page.get_by_role("button", name="Context").click()
    panel = page.get_by_role("region", name="Context the model receives")
    sent = httpx.get(f"{base}/api/nodes/{name}/context", timeout=30).json()["messages"]
    assert len(sent) == 7  # eight messages, one excluded
    expect(panel).to_contain_text(f"{len(sent)} messages, in order")
    expect(panel).to_contain_text("Fix the parser.")
    expect(panel).not_to_contain_text("def parse(): return None")
    panel.get_by_label("As").select_option("openai")
    expect(panel.locator("pre")).to_contain_text('"model"')
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    axe(page)
    shot(page, "thread-transcript")


def test_the_outline_lists_the_tree_beside_the_thread(sized_page: Any, served: Any, name: str,
                                                     axe: Any, shot: Any) -> None:
    """"Outline": the whole tree, indented at its branch point only, the shown path and
    its last message marked, the session named; a branch point folds; a filter keeps the
    user's messages; a line opens its message. Beside the thread on a desktop, above it
    on a phone, never wider than the screen."""
    from playwright.sync_api import expect

    page = sized_page
    talk = grow_talk(served[0], name)
    opened(page, name, 7)
    page.get_by_role("button", name="Outline").click()
    nav = page.get_by_role("navigation", name="Tree outline")
    lines = nav.get_by_role("listitem")
    expect(lines).to_have_count(8)  # seven on the path and the other alternative
    depths = [lines.nth(i).get_attribute("data-depth") for i in range(8)]
    assert depths == ["0", "1", "1", "1", "1", "1", "1", "1"], depths
    expect(lines.nth(7)).to_contain_text("Bring fruit instead.")
    expect(lines.nth(7).locator("a")).not_to_have_css("font-weight", "700")
    current = nav.locator('a[aria-current="true"]')
    expect(current).to_have_attribute("href", f"#/thread/{talk.ids[6]}?at={talk.ids[6]}")
    expect(lines.nth(6)).to_contain_text(f"@{name}")
    box, thread = nav.bounding_box(), page.get_by_role("region", name="Thread").bounding_box()
    assert box and thread
    if page.viewport_size["width"] > 900:
        assert box["x"] >= thread["x"] + thread["width"]  # beside
    else:
        assert box["y"] + box["height"] <= thread["y"] + 1  # above
    assert page.evaluate("document.documentElement.scrollWidth <= innerWidth")
    axe(page)
    shot(page, "thread-outline")
    nav.get_by_label("User messages only").check()
    expect(lines).to_have_count(3)
    nav.get_by_label("User messages only").uncheck()
    nav.get_by_role("button", name="Fold 2 branches").click()
    expect(lines).to_have_count(1)
    expect(lines.first).to_contain_text("7 hidden")
    nav.get_by_role("button", name="Unfold 2 branches").click()
    lines.nth(7).locator("a").click()
    expect(page).to_have_url(re.compile(f"#/thread/{talk.other}\\?at={talk.other}$"))
    expect(messages(page)).to_have_count(2)
