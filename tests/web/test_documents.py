"""Documents (`#/documents`, `#/documents/<name>`): the list, a new document and one made
from a message; the revision graph, a diff between any two revisions, branches made and
checked out, a merge (a conflict shows its regions and writes nothing), a new revision,
and the backlinks panel ("Used in"); and the graph's one request on both backends."""

from __future__ import annotations

import re
from typing import Any

import httpx

from loomdb import Loom


def history(lm: Loom, doc: str) -> list[str]:
    """Revisions: main a → b → c, branch `alt` from a → d (four revisions, two lanes)."""
    _, a = lm.documents.new(doc, "one\ntwo\nthree\n", "first")
    b = lm.documents.commit(doc, "one\nTWO\nthree\n", "shout two")
    lm.documents.branch(doc, "alt", a.id)
    c = lm.documents.commit(doc, "one\nTWO\nthree\nfour\n", "add four")
    d = lm.documents.commit(doc, "zero\none\ntwo\nthree\n", "add zero", branch="alt")
    return [a.id, b.id, c.id, d.id]


def test_the_graph_shows_every_revision_and_any_two_are_diffed(
        page: Any, served: tuple[Loom, str], name: str) -> None:
    from playwright.sync_api import expect

    a, b, c, d = history(served[0], name)
    page.goto("/")
    page.get_by_role("navigation", name="Views").get_by_role("link", name="Documents").click()
    page.get_by_role("list", name="Documents").get_by_role("link", name=name).click()
    expect(page).to_have_url(re.compile(rf"#/documents/{name}$"))
    expect(page.get_by_role("img", name="Revision graph: 4 revisions, 2 branches")).to_be_visible()
    rows = page.get_by_role("list", name="Revisions").get_by_role("listitem")
    expect(rows).to_have_count(4)
    expect(rows.first).to_contain_text("add zero")  # newest first
    expect(rows.filter(has_text="add four")).to_contain_text("main")
    expect(page.get_by_role("status", name="Current")).to_have_text(f"On branch main at {c[-7:]}")
    content = page.get_by_role("region", name="Content")
    expect(content).to_contain_text("four")
    # pick two: the diff between them, older to newer
    page.get_by_role("checkbox", name=f"Compare {a[-7:]}").check()
    page.get_by_role("checkbox", name=f"Compare {d[-7:]}").check()
    diff = page.get_by_role("region", name="Diff")
    expect(diff).to_contain_text(f"Diff {a[-7:]} → {d[-7:]}")
    expect(diff.locator(".add")).to_have_text(["+zero"])
    # a third pick replaces the older of the two
    page.get_by_role("checkbox", name=f"Compare {b[-7:]}").check()
    expect(page.get_by_role("checkbox", name=f"Compare {a[-7:]}")).not_to_be_checked()
    expect(diff).to_contain_text(f"Diff {b[-7:]} → {d[-7:]}")
    # open an old revision: its content, in the address
    page.get_by_role("link", name=re.compile("shout two")).click()
    expect(page).to_have_url(re.compile(rf"\?rev={b}$"))
    expect(content).to_contain_text("TWO")
    expect(content).not_to_contain_text("four")
    page.screenshot(path="/tmp/areasweb-documents.png", full_page=True)
    # check out that revision: detached there, no new revision offered
    page.get_by_role("button", name=f"Check out {b[-7:]}").click()
    expect(page.get_by_role("status", name="Current")).to_have_text(f"Detached at {b[-7:]}")
    expect(page).to_have_url(re.compile(rf"#/documents/{name}$"))
    expect(page.get_by_role("form", name="New revision")).to_have_count(0)


def test_branch_checkout_commit_and_merge_with_conflicts_shown(
        page: Any, served: tuple[Loom, str], name: str) -> None:
    from playwright.sync_api import expect

    lm = served[0]
    lm.documents.new(name, "title\none\ntwo\nbody\nend\n", "first")
    page.goto(f"/#/documents/{name}")
    branches = page.get_by_role("region", name="Branches")
    # a branch, checked out, a revision on it
    page.get_by_label(re.compile("New branch at")).fill("edits")
    page.get_by_role("button", name="Create branch").click()
    branches.get_by_role("button", name="Check out edits").click()
    expect(page.get_by_role("status", name="Current")).to_contain_text("On branch edits")
    page.get_by_role("textbox", name="Text").fill("title\none\ntwo\nbody, edited\nend\n")
    page.get_by_role("textbox", name="Message").fill("edit the body")
    page.get_by_role("button", name="Save revision").click()
    expect(page.get_by_role("list", name="Revisions").get_by_role("listitem")).to_have_count(2)
    # back on main, a change elsewhere: the merge is clean
    branches.get_by_role("button", name="Check out main").click()
    expect(page.get_by_role("status", name="Current")).to_contain_text("On branch main")
    page.get_by_role("textbox", name="Text").fill("A title\none\ntwo\nbody\nend\n")
    page.get_by_role("button", name="Save revision").click()
    expect(page.get_by_role("list", name="Revisions").get_by_role("listitem")).to_have_count(3)
    page.get_by_role("button", name="Merge", exact=True).click()
    expect(page.get_by_role("status").filter(has_text="Merged edits into main")).to_be_visible()
    expect(page.get_by_role("region", name="Content")).to_contain_text("A title one two body, edited")
    expect(page.get_by_role("img", name="Revision graph: 4 revisions, 2 branches")).to_be_visible()
    # both change the same line: the conflict is shown, nothing is written
    lm.documents.commit(name, "A title\none\ntwo\nbody, ours\nend\n", "ours")
    lm.documents.commit(name, "A title\none\ntwo\nbody, theirs\nend\n", "theirs", branch="edits")
    page.reload()
    page.get_by_role("button", name="Merge", exact=True).click()
    conflict = page.get_by_role("region", name="Merge conflicts")
    expect(conflict).to_contain_text("1 conflict: nothing was merged")
    one = conflict.get_by_role("group", name="Conflict 1")
    expect(one).to_contain_text("body, ours")
    expect(one).to_contain_text("body, theirs")
    expect(page.get_by_role("alert")).to_contain_text("conflict")
    expect(page.get_by_role("list", name="Revisions").get_by_role("listitem")).to_have_count(6)
    page.screenshot(path="/tmp/areasweb-merge.png", full_page=True)


def test_from_message_and_used_in(page: Any, served: tuple[Loom, str], name: str) -> None:
    from playwright.sync_api import expect

    lm = served[0]
    _, root = lm.new_tree("Draft the release notes", session=f"notes-{name}")
    reply = lm.append(f"notes-{name}", "Release 2.0: faster search.", role="assistant")
    page.goto(f"/#/documents?from={reply.id}")
    form = page.get_by_role("form", name="From message")
    expect(form.get_by_label("Message")).to_have_text("Release 2.0: faster search.")
    form.get_by_label("Document name").fill(name)
    form.get_by_role("button", name="Create from message").click()
    expect(page).to_have_url(re.compile(rf"#/documents/{name}$"))
    expect(page.get_by_role("region", name="Content")).to_contain_text("Release 2.0")
    expect(page.get_by_role("list", name="Revisions")).to_contain_text(f"from message {reply.id}")
    used = page.get_by_role("region", name="Used in")
    expect(used).to_contain_text("Nothing links here.")
    # a collection item and a link from another message point at it too
    lm.collections.new(f"c-{name}", "list")
    lm.collections.add(f"c-{name}", f"doc:{name}")
    lm.references.link(root.id, f"doc:{name}", "cites")
    page.reload()
    expect(used.get_by_role("link", name=f"Collection c-{name}")).to_be_visible()
    expect(used.get_by_role("link", name=f"Message {root.id[-8:]}")).to_have_attribute(
        "href", f"#/thread/{root.id}?at={root.id}")
    expect(used).to_contain_text("cites")
    # the list shows it; a taken name is refused in the page
    page.goto("/#/documents")
    expect(page.get_by_role("list", name="Documents").get_by_role("link", name=name)).to_be_visible()
    page.get_by_role("form", name="New document").get_by_label("Name").fill(name)
    page.get_by_role("button", name="Create document").click()
    expect(page.get_by_role("alert")).to_be_visible()


def test_the_graph_route(served: tuple[Loom, str], name: str) -> None:
    a, b, c, d = history(served[0], name)
    r = httpx.get(f"{served[1]}/api/documents/{name}/graph")
    assert r.status_code == 200
    g = r.json()
    assert g["branch"] == "main" and g["revision"] == c
    assert g["branches"] == {"alt": d, "main": c}
    assert [x["id"] for x in g["revisions"]] == [a, b, c, d]
    assert [x["parents"] for x in g["revisions"]] == [[], [a], [b], [a]]
    assert httpx.get(f"{served[1]}/api/documents/nope-{name}/graph").status_code == 404
