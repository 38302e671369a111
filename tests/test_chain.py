"""The hash chain: golden vectors, and tamper tests that change the stored rows directly."""

from __future__ import annotations

import hashlib

from helpers import thread
from loomdb import Loom
from loomdb.chain import chain_hash
from loomdb.content import canonical

A, B, C1 = "sha256:" + "a" * 64, "sha256:" + "b" * 64, "sha256:" + "1" * 64
T = "2026-01-10T00:00:00.000000Z"


def q(value: str) -> str:
    return "'" + value.replace("'", "''") + "'"


def set_stored_body(loom: Loom, body: str, new: str | None) -> None:
    """Change (None: lose) stored content in place: a `contents` row on PostgreSQL, the
    body held by its first node on SQLite."""
    if loom.backend.url.startswith("sqlite") and new is None:
        # A lost body: the holder keeps its content id but points at a row that is gone
        # (a row with neither a body nor a pointer is a redacted copy, read as the tombstone).
        loom.backend.execute(f"UPDATE nodes SET body = NULL, body_key = -1 WHERE body = {q(body)}")
    elif loom.backend.url.startswith("sqlite"):
        loom.backend.execute(f"UPDATE nodes SET body = {q(new)} WHERE body = {q(body)}")
    elif new is None:
        loom.backend.execute(f"DELETE FROM contents WHERE body = {q(body)}")
    else:
        loom.backend.execute(f"UPDATE contents SET body = {q(new)} WHERE body = {q(body)}")


class TestGoldenVectors:
    def test_a_root(self) -> None:
        assert chain_hash(content_id=C1, parents=[], created_at=T, author="human", role="user",
                          kind="message", edited_from=None, options=None) == (
            "sha256:cd67dc9955350f6dd81abd22b15b2fea8f04e95608236d32ecd87020ce98659e")

    def test_parents_are_sorted_and_options_covered(self) -> None:
        got = chain_hash(content_id=C1, parents=[B, A], created_at=T, author="human",
                         role="user", kind="message", edited_from=None,
                         options={"temperature": 0.5})
        assert got == "sha256:18a34b8be98369c98f550ddf65280736c48488f27afd6774c0f8df4c93f3a72c"
        doc = {"v": 1, "content": C1, "parents": [A, B], "created_at": T, "author": "human",
               "role": "user", "kind": "message", "edited_from": None,
               "options": {"temperature": 0.5}}
        assert got == "sha256:" + hashlib.sha256(canonical(doc)).hexdigest()

    def test_a_raw_response_hash_is_covered_when_present(self) -> None:
        base = dict(content_id=C1, parents=[], created_at=T, author="m", role="assistant",
                    kind="message", edited_from=None, options=None)
        assert chain_hash(**base) != chain_hash(**base, response=A)  # type: ignore[arg-type]


class TestTampering:
    def test_an_intact_store_verifies(self, loom: Loom) -> None:
        thread(loom, ["q", "a", "q2", "a2"])
        report = loom.verify()
        assert report.ok and report.checked == 4

    def test_changed_content_is_named_with_every_node_that_uses_it(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "a", "q2", "a2"])
        cid = loom.node(ids[1]).content_id
        set_stored_body(loom, '[{"text":"a","type":"text"}]', '[{"text":"forged","type":"text"}]')
        assert loom.node(ids[1]).content_id == cid
        broken = {b["node"]: b["reason"] for b in loom.verify().broken}
        assert broken[ids[1]] == "its content does not match its content id"
        assert broken[ids[2]] == broken[ids[3]] == f"inherits the break from {ids[1]}"
        assert ids[0] not in broken

    def test_a_changed_timestamp_breaks_the_node(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "a"])
        loom.backend.execute(
            f"UPDATE nodes SET created_at = '2020-01-01T00:00:00.000000Z' WHERE id = {q(ids[0])}")
        broken = {b["node"]: b["reason"] for b in loom.verify().broken}
        assert "chain hash" in broken[ids[0]]
        assert broken[ids[1]] == f"inherits the break from {ids[0]}"

    def test_a_changed_role_breaks_the_node(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "a"])
        loom.backend.execute(f"UPDATE nodes SET role = 'user' WHERE id = {q(ids[1])}")
        assert [b["node"] for b in loom.verify().broken] == [ids[1]]

    def test_a_re_parented_node_is_named(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "a", "q2"])
        loom.backend.execute(f"UPDATE nodes SET parent_id = {q(ids[0])} WHERE id = {q(ids[2])}")
        assert [b["node"] for b in loom.verify().broken] == [ids[2]]

    def test_a_forged_chain_hash_is_named_and_its_descendants_inherit(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "a", "q2"])
        node = loom.node(ids[1])
        forged = chain_hash(content_id=node.content_id, parents=[], created_at=node.created_at,
                            author=node.author, role=node.role, kind=node.kind,
                            edited_from=None, options=None)
        loom.backend.execute(
            f"UPDATE nodes SET chain_hash = {_hash_literal(loom, forged)} WHERE id = {q(ids[1])}")
        broken = {b["node"]: b["reason"] for b in loom.verify().broken}
        assert set(broken) == {ids[1], ids[2]}
        assert "chain hash" in broken[ids[2]] or "inherits" in broken[ids[2]]

    def test_a_missing_content_row_is_named(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "a"])
        set_stored_body(loom, '[{"text":"a","type":"text"}]', None)
        broken = {b["node"]: b["reason"] for b in loom.verify().broken}
        assert broken[ids[1]] == "its content is missing"

    def test_overlay_changes_never_break_the_chain(self, loom: Loom) -> None:
        ids = thread(loom, ["q", "a"])
        loom.exclude(ids[1])
        loom.tag(ids[0], "x")
        assert loom.verify().ok

    def test_a_tampered_version_selection_is_named(self, loom: Loom) -> None:
        ids = thread(loom, ["1", "2", "3"])
        v = loom.edit("main~1", "2'")
        n = loom.append("main", "4")
        assert loom.node(n.id).selections == {ids[1]: v.id}
        loom.backend.execute(
            f"UPDATE node_selections SET version_id = {q(ids[1])} WHERE version_id = {q(v.id)}")
        broken = {b["node"]: b["reason"] for b in loom.verify().broken}
        assert "chain hash" in broken[n.id]


def _hash_literal(loom: Loom, value: str) -> str:
    hexd = value[7:]
    return f"X'{hexd}'" if loom.backend.url.startswith("sqlite") else f"'\\x{hexd}'::bytea"
