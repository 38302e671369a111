"""A ref's log is only its own lines (issue 22, item 7), on both backends.

A name deleted and made again keeps one numbering of log lines, but the earlier ref's
lines (another user's node ids, times and reasons) are not the new ref's history:
neither the library nor `GET /api/refs/{name}/log` shows them, whether the name comes
back in the same tree or in another user's. On the main this was written against, the
new ref's log began with the earlier ref's lines.
"""

from __future__ import annotations

import httpx
from live import client

from loomdb import Loom
from loomdb.users import add_user


def test_a_name_made_again_in_another_tree_has_only_its_own_log(loom: Loom) -> None:
    _, first = loom.new_tree("first owner", session="shared-name")
    second_node = loom.append("shared-name", "moved once").id
    loom.delete_ref("shared-name")
    tree, root = loom.new_tree("second owner")
    loom.fork(root.id, "shared-name")
    log = loom.ref_log("shared-name")
    assert [m.new for m in log] == [root.id]
    assert {first.id, second_node}.isdisjoint({m.old for m in log} | {m.new for m in log})
    assert all(m.tree == tree.id for m in log)


def test_a_name_made_again_in_the_same_tree_starts_again(loom: Loom) -> None:
    _, root = loom.new_tree("one tree", session="again")
    loom.append("again", "a")
    loom.delete_ref("again")
    loom.fork(root.id, "again")
    later = loom.append("again", "b").id
    log = loom.ref_log("again")
    assert [(m.old, m.new) for m in log] == [(None, root.id), (root.id, later)]
    loom.undo("again")  # the undo reads the same, current, log
    assert loom.ref("again").node == root.id


def test_a_deleted_ref_shows_its_last_life(loom: Loom) -> None:
    _, root = loom.new_tree("t", session="gone")
    loom.delete_ref("gone")
    _, other = loom.new_tree("u", session="gone")
    node = loom.append("gone", "x").id
    loom.delete_ref("gone")
    log = loom.ref_log("gone")
    assert [m.new for m in log] == [other.id, node, None]
    assert root.id not in {m.old for m in log} | {m.new for m in log}


def must(r: httpx.Response, status: int = 200) -> dict[str, object]:
    assert r.status_code == status, (r.status_code, r.text)
    out: dict[str, object] = r.json()
    return out


def test_over_http_a_user_never_sees_the_earlier_owners_lines(served: tuple[Loom, str],
                                                              tag: str) -> None:
    lm, base = served
    _, alice = add_user(lm, f"alice-{tag}")
    _, bob = add_user(lm, f"bob-{tag}")
    name = f"plans-{tag}"
    with client(base, alice) as a:
        made = must(a.post("/api/trees", json={"text": "alice's", "session": name}), 201)
        moved = must(a.post(f"/api/nodes/{name}/append",
                            json={"role": "user", "text": "more"}), 201)
        must(a.delete(f"/api/refs/{name}"))
    with client(base, bob) as b:
        mine = must(b.post("/api/trees", json={"text": "bob's", "session": name}), 201)
        log = must(b.get(f"/api/refs/{name}/log"))
    text = str(log)
    assert made["node"] not in text and moved["node"] not in text
    assert made["tree"] not in text
    assert mine["node"] in text
