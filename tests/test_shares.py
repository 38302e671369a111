"""Share links in the library and the CLI: a snapshot stays on its node, a live link
follows its session, a link reads its path and nothing beside it, revoking stops it,
and only the token's hash is stored (`loomdb.front.shares`)."""

from __future__ import annotations

import hashlib
import json

import pytest

from loomdb import Loom
from loomdb.errors import InvalidInput, NotFound
from loomdb.shares import SHARES
from loomdb.users import Owner, add_user, remove_user, user_by_id
from test_bad_input import run_cli


@pytest.fixture
def talk(loom: Loom) -> dict[str, str]:
    """main: hi -> hello -> more; a branch beside `hello` holding a secret."""
    _, root = loom.new_tree("hi", session="main")
    hello = loom.append("main", "hello", role="assistant")
    aside = loom.append(root.id, "the secret beside the path", role="assistant")
    more = loom.append("main", "more")
    return {"root": root.id, "hello": hello.id, "aside": aside.id, "more": more.id}


def texts(out: dict) -> list[str]:  # type: ignore[type-arg]
    return ["".join(b.get("text", "") for b in m["content"]) for m in out["messages"]]


def test_a_snapshot_stays_and_a_live_link_follows(loom: Loom, talk: dict[str, str]) -> None:
    snap, snap_token = loom.shares.create(talk["hello"])
    live, live_token = loom.shares.create("main", live=True)
    assert (snap.kind, snap.node, snap.session) == ("snapshot", talk["hello"], None)
    assert (live.kind, live.node, live.session) == ("live", None, "main")
    later = loom.append("main", "later")
    assert loom.shares.open(snap_token).head().node == talk["hello"]
    assert loom.shares.open(live_token).head().node == later.id
    assert texts(loom.shares.open(snap_token).thread()) == ["hi", "hello"]
    assert texts(loom.shares.open(live_token).thread()) == ["hi", "hello", "more", "later"]
    assert loom.shares.open(live_token).stamp() == {"head": later.id}


def test_a_link_shows_nothing_beside_its_path(loom: Loom, talk: dict[str, str]) -> None:
    _, token = loom.shares.create("main", live=True)
    out = loom.shares.open(token).thread()
    shown = json.dumps(out)
    assert talk["aside"] not in shown and "secret" not in shown
    assert all(m["branches"] == [m["slot"]] and m["versions"] == [m["id"]]
               for m in out["messages"])
    assert out["tree"]["lineage"] is None and out["ref"]["selections"] == {}
    info = loom.shares.open(token).info()
    assert info["head"] == talk["more"] and info["kind"] == "live"


def test_live_needs_a_session_named_exactly(loom: Loom, talk: dict[str, str]) -> None:
    for name in ("main~1", talk["more"]):
        with pytest.raises(InvalidInput, match="live link follows a session"):
            loom.shares.create(name, live=True)


def test_revoked_guessed_and_dead_links_are_unknown(loom: Loom, talk: dict[str, str]) -> None:
    share, token = loom.shares.create("main", live=True)
    assert [s.id for s in loom.shares.list()] == [share.id]
    with pytest.raises(NotFound):
        loom.shares.open(token[:-1] + ("A" if token[-1] != "A" else "B"))
    loom.delete_ref("main")  # the session is gone: the live link with it
    with pytest.raises(NotFound, match="share"):
        loom.shares.open(token).thread()
    assert loom.shares.revoke(token).id == share.id
    with pytest.raises(NotFound):
        loom.shares.open(token)
    with pytest.raises(NotFound):
        loom.shares.revoke(token)


def test_only_the_hash_is_stored(loom: Loom, talk: dict[str, str]) -> None:
    share, token = loom.shares.create(talk["more"])
    assert len(token) >= 43 and share.prefix == token[:6]
    with loom.unit(SHARES) as db:
        rows = db.execute("SELECT * FROM shares")
    assert token not in json.dumps(rows)
    assert hashlib.sha256(token.encode()).hexdigest() in json.dumps(rows)
    assert loom.shares.revoke(share.id).id == share.id  # the id revokes too


def test_a_users_links_are_theirs(loom: Loom) -> None:
    alice, _ = add_user(loom, "alice")
    bob, _ = add_user(loom, "bob")
    as_alice = loom.as_(Owner(loom, alice)).shares
    as_bob = loom.as_(Owner(loom, bob))
    tree, node = loom.as_(Owner(loom, alice)).trees.new("alice's", session="a")
    with pytest.raises(NotFound):  # bob cannot share what he does not see
        as_bob.shares.create(node.id)
    share, token = as_alice.create("a", live=True)
    assert as_bob.shares.list() == [] and [s.id for s in as_alice.list()] == [share.id]
    with pytest.raises(NotFound):
        as_bob.shares.revoke(token)
    assert as_bob.shares.open(token).head().node == node.id  # the token is the capability
    assert user_by_id(loom, alice.id) == alice
    remove_user(loom, "alice")  # its maker no longer sees the tree: the link is dead
    with pytest.raises(NotFound):
        loom.shares.open(token).thread()


def test_the_cli_shares_lists_and_revokes(store_url: str) -> None:
    code, _, err = run_cli(store_url, "new", "--text", "hello", "--session", "s", "--json")
    assert code == 0, err
    code, out, err = run_cli(store_url, "share", "s", "--live", "--json")
    assert code == 0, err
    made = json.loads(out)
    assert made["path"] == f"/s/{made['token']}" and made["kind"] == "live"
    code, out, _ = run_cli(store_url, "share", "list", "--json")
    assert [s["id"] for s in json.loads(out)["shares"]] == [made["id"]]
    assert made["token"] not in out
    code, out, _ = run_cli(store_url, "share", "list")
    assert made["token"][:6] in out and "live" in out
    code, out, _ = run_cli(store_url, "share", "revoke", made["token"], "--json")
    assert code == 0 and json.loads(out)["revoked"]["id"] == made["id"]
    code, out, err = run_cli(store_url, "share", "revoke", made["token"])
    assert code == 2 and "unknown share" in err and made["token"] not in err
    code, _, err = run_cli(store_url, "share", "revoke")
    assert code == 2 and "usage" in err


def test_a_link_names_no_subagents_tree(loom: Loom) -> None:
    """A message a subagent was spawned from lists the child tree in its owner's thread;
    through a link it lists none (the child is another tree, not shared)."""
    from loomdb.agents.subagents import start_child

    loom.new_tree("How many trees are in the park?", session="park")
    call = loom.append("park", [{"type": "tool_use", "id": "call_9", "name": "spawn_subagent",
                                 "input": {"task": "count the trees"}}], role="assistant")
    child, _ = start_child(loom, call.id, "count the trees", None, None)
    assert [c["tree"] for c in loom.as_(loom.operator).nodes.thread("park")["messages"][1]
            ["subagents"]] == [child]
    _, token = loom.shares.create("park", live=True)
    shown = loom.shares.open(token).thread()
    assert shown["messages"][1]["subagents"] == [] and child not in json.dumps(shown)
