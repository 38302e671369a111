"""Issue 22 item 12 (its last point): an import records whose trees it wrote in the same
transaction as each conversation it writes.

The HTTP import used to record the trees as the caller's after the whole import had
committed: a failure between the two (a crash, a lost connection to the database) left
trees nobody owns, and a conversation another user imported meanwhile (after the
upload was checked, before it was written) was grown in the other user's tree. The
failure is made to happen at that exact point: recording the import fails, and
another user's upload runs right after the check."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loomdb import Loom
from loomdb.front.trees import Trees
from loomdb.users import USERS, add_user
from loomdb.users.access import Owner

from .import_world import client, live_store, upload

BACKENDS = [b for b in os.environ.get("LOOMDB_TEST_BACKENDS", "sqlite,postgres").split(",") if b]


@pytest.fixture(scope="module", params=BACKENDS)
def served(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Loom, str]]:
    with live_store(request.param, tmp_path_factory.mktemp(f"owners-{request.param}")) as s:
        yield s


def owners(lm: Loom) -> dict[str, str]:
    with lm.unit(USERS) as db:
        return {r[0]: r[1] for r in db.execute("SELECT tree_id, user_id FROM user_trees", ())}


def chats(n: int, turns: int = 2, tag: str = "") -> bytes:
    tag = tag or secrets.token_hex(4)
    lines = [{"id": f"{tag}-{i}", "messages": [
        {"role": "user" if t % 2 == 0 else "assistant", "content": f"{tag} {i} turn {t}"}
        for t in range(turns)]} for i in range(n)]
    return "\n".join(json.dumps(line) for line in lines).encode() + b"\n"


def test_trees_are_owned_even_when_the_import_fails_after_writing(
    served: tuple[Loom, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lm, base = served
    _, token = add_user(lm, f"u-{secrets.token_hex(4)}")

    def crash(self: Owner, filename: str, summary: dict[str, Any]) -> None:
        raise RuntimeError("the process died after the import committed")

    monkeypatch.setattr(Owner, "record_import", crash)
    before = {t.id for t in lm.trees()}
    r = upload(base, "chats.jsonl", chats(3), token)
    assert r.status_code == 500
    new = {t.id for t in lm.trees()} - before
    assert len(new) == 3
    unowned = new - set(owners(lm))
    assert unowned == set(), "trees written without an owner"
    monkeypatch.undo()
    with client(base, token) as c:
        assert {t["id"] for t in c.get("/api/trees").json()["trees"]} == new


def test_a_conversation_another_user_imported_meanwhile_is_not_grown(
    served: tuple[Loom, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    lm, base = served
    _, alice = add_user(lm, f"alice-{secrets.token_hex(4)}")
    _, bob = add_user(lm, f"bob-{secrets.token_hex(4)}")
    tag = secrets.token_hex(4)
    check = Trees._refuse_foreign
    raced: list[int] = []

    def check_then_alice_imports(self: Trees, tree_ids: set[str]) -> None:
        check(self, tree_ids)
        if self.sight.actor.startswith("bob") and not raced:
            # right after bob's upload was checked, alice imports the same chat
            raced.append(0)
            raced[0] = upload(base, "alice.jsonl", chats(1, 2, tag), alice,
                               "sharegpt").status_code

    monkeypatch.setattr(Trees, "_refuse_foreign", check_then_alice_imports)
    r = upload(base, "bob.jsonl", chats(1, 3, tag), bob, "sharegpt")
    assert raced == [201]
    assert r.status_code == 201, r.text
    out = r.json()
    assert out["trees"] == [] and out["nodes"] == 0 and len(out["errors"]) == 1
    assert "another user" in out["errors"][0]["reason"]
    with client(base, alice) as c:
        (tree,) = c.get("/api/trees").json()["trees"]
    assert lm.tree(tree["id"]).nodes == 2  # alice's two turns, none of bob's
    with client(base, bob) as c:
        assert c.get("/api/trees").json()["trees"] == []


def test_an_import_claims_each_new_tree_inside_its_own_transaction(
    served: tuple[Loom, str], tmp_path: Path
) -> None:
    """One conversation failing leaves neither its tree nor an ownership row behind."""
    lm, base = served
    _, token = add_user(lm, f"u-{secrets.token_hex(4)}")
    good = chats(2)
    bad = json.dumps({"id": "x", "messages": [{"role": "narrator", "content": "?"}]}).encode()
    r = upload(base, "mixed.jsonl", good + bad + b"\n", token)
    assert r.status_code == 201, r.text
    out = r.json()
    assert len(out["trees"]) == 2 and len(out["errors"]) == 1
    mine = {t for t, _ in owners(lm).items()}
    assert set(out["trees"]) <= mine
    assert set(owners(lm)) <= {t.id for t in lm.trees()}


FORK_FILES = Path(__file__).parents[1] / "fixtures" / "agent-sessions" / "written"


def _fork_files() -> tuple[bytes, bytes]:
    """The original session and its fork, as Claude Code wrote them, under session ids
    of their own (the tests share one store: each imports conversations new to it)."""
    import uuid

    original = (FORK_FILES / "claude-code-2.1.332-small.jsonl").read_bytes()
    forked = (FORK_FILES / "claude-code-2.1.332-small-forked.jsonl").read_bytes()
    ids = {json.loads(f.splitlines()[0])["sessionId"].encode(): str(uuid.uuid4()).encode()
           for f in (original, forked)}
    for old, new in ids.items():
        original, forked = original.replace(old, new), forked.replace(old, new)
    return original, forked


def _original_uploaded(lm: Loom, base: str) -> tuple[str, bytes, str, int]:
    """A new user who uploaded the original session: (their token, the fork's bytes,
    the original's tree, its size)."""
    _, alice = add_user(lm, f"alice-{secrets.token_hex(4)}")
    original, forked = _fork_files()
    first = upload(base, "original.jsonl", original, alice)
    assert first.status_code == 201, first.text
    (tree,) = first.json()["trees"]
    return alice, forked, tree, lm.tree(tree).nodes


def test_a_forked_session_grows_the_tree_of_the_user_who_uploaded_the_original(
        served: tuple[Loom, str]) -> None:
    lm, base = served
    alice, forked, tree, size = _original_uploaded(lm, base)
    mine = upload(base, "fork.jsonl", forked, alice)
    assert mine.status_code == 201, mine.text
    assert mine.json()["trees"] == [] and mine.json()["nodes"] == 2
    assert lm.tree(tree).nodes == size + 2  # the fork's question and answer, a branch


def test_a_forked_session_never_grows_another_users_tree(served: tuple[Loom, str]) -> None:
    """The fork file names the original's lines; uploaded by another user than the
    original's, it matches nothing of theirs and is a tree of its own."""
    lm, base = served
    _, forked, tree, size = _original_uploaded(lm, base)
    _, bob = add_user(lm, f"bob-{secrets.token_hex(4)}")
    theirs = upload(base, "fork.jsonl", forked, bob)
    assert theirs.status_code == 201, theirs.text
    assert not theirs.json()["errors"] and len(theirs.json()["trees"]) == 1
    assert theirs.json()["trees"] != [tree] and lm.tree(tree).nodes == size  # not grown
    assert owners(lm)[theirs.json()["trees"][0]] != owners(lm)[tree]
    with client(base, bob) as c:
        (bobs,) = c.get("/api/trees").json()["trees"]
    assert bobs["id"] == theirs.json()["trees"][0]
