"""The area seam: an area's migrations apply once, its units are transactions that join
the core's writes, and the same code runs on both dialects."""

from __future__ import annotations

import pytest

import loomdb
from loomdb import Loom
from notes_area import NOTES


def test_migrations_apply_once_and_are_recorded(loom: Loom, store_url: str) -> None:
    with loom.unit(NOTES) as db:
        db.execute("INSERT INTO notes VALUES (?, ?)", ("n1", "hello"))
    with loomdb.open(store_url) as again, again.unit(NOTES) as db:
        assert db.execute("SELECT note FROM notes") == [("hello",)]
    names = [r[0] for r in loom.backend.execute(
        "SELECT name FROM loomdb_migrations WHERE name LIKE 'notes/%'")]
    assert names == ["notes/0001_notes"]


def test_a_unit_is_one_transaction_with_core_writes(loom: Loom) -> None:
    loom.new_tree("root text", session="s")
    before = len(loom.trees())
    with pytest.raises(RuntimeError), loom.unit(NOTES) as db:
        db.execute("INSERT INTO notes VALUES (?, ?)", ("x", "lost"))
        loom.new_tree("also lost", session="t")
        raise RuntimeError("abort")
    with loom.unit(NOTES) as db:
        assert db.execute("SELECT count(*) FROM notes") == [(0,)]
    assert len(loom.trees()) == before


def test_content_body_reads_any_nodes_content(loom: Loom) -> None:
    _, node = loom.new_tree("shared words", session="s")
    assert loom.content_body(node.content_id) == node.content
    assert loom.content_body("sha256:" + "0" * 64) is None
    with pytest.raises(loomdb.InvalidInput):
        loom.content_body("0" * 64)
