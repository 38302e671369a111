"""A store written by loomdb at schema 0003 opens, upgrades and reads exactly as before.

`fixtures/store-0003.sql` is the SQL dump of such a store (two trees: branches, a
fork, an edited version selected in a view, a multi-source node, a bookmark, tags, an
excluded node, an annotation, undone and deleted refs); `store-0003.json` is what that
loomdb answered about it. Migration 0004 rewrites the SQLite layout (nodes keyed by
segment and position, content inline, ref heads read from their logs), so everything
is compared after the upgrade, then written to.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import loomdb
from loomdb import Loom

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def upgraded(tmp_path: Path) -> tuple[Loom, dict[str, Any]]:
    folder = tmp_path / "old"
    folder.mkdir()
    db = sqlite3.connect(folder / "loom.db")
    db.executescript((FIXTURES / "store-0003.sql").read_text("utf-8"))
    db.close()
    loom = loomdb.open(str(folder))
    return loom, json.loads((FIXTURES / "store-0003.json").read_text("utf-8"))


class TestUpgradeFrom0003:
    def test_the_migration_runs_once(self, upgraded: tuple[Loom, dict[str, Any]]) -> None:
        loom, _ = upgraded
        assert "0004_lean_append" in loom.backend.applied_migrations()
        assert loom.backend.migrate() == []

    def test_every_read_answers_as_before(self, upgraded: tuple[Loom, dict[str, Any]]) -> None:
        loom, old = upgraded
        assert sorted(t.id for t in loom.trees()) == old["trees"]
        for head, path in old["paths"].items():
            assert loom.path(head) == path, head
        for head, ctx in old["contexts"].items():
            assert loom.context(head) == ctx, head
        for node, kids in old["children"].items():
            assert loom.children(node) == kids
        for tree, leaves in old["leaves"].items():
            assert loom.leaves(tree) == leaves
            assert loom.branch_points(tree) == old["branch_points"][tree]
        first = next(iter(old["paths"]["main"][2:3]))
        assert loom.versions(first) == old["versions"]
        nodes = {n.id: n.to_json() for t in old["trees"] for n in loom.tree_nodes(t)}
        assert nodes == old["nodes"]

    def test_refs_and_their_logs_are_kept(self, upgraded: tuple[Loom, dict[str, Any]]) -> None:
        loom, old = upgraded
        refs = {r.name: r.to_json() for r in loom.refs()}
        assert set(refs) == set(old["refs"])
        for name, ref in refs.items():
            # a ref's head (and when it last changed) now comes from its log's last line
            assert {**ref, "updated_at": None} == {**old["refs"][name], "updated_at": None}
            assert [m.to_json() for m in loom.ref_log(name)] == old["logs"][name]
        assert [m.reason for m in loom.ref_log("gone")][-1] == "delete"

    def test_the_chain_verifies_and_content_is_still_stored_once(
        self, upgraded: tuple[Loom, dict[str, Any]]
    ) -> None:
        loom, old = upgraded
        assert loom.verify().ok
        distinct = {n["content_id"] for n in old["nodes"].values()}
        assert loom.backend.execute("SELECT count(*) FROM contents") == [(len(distinct),)]

    def test_the_upgraded_store_takes_new_writes(
        self, upgraded: tuple[Loom, dict[str, Any]]
    ) -> None:
        loom, old = upgraded
        before = old["paths"]["main"]
        node = loom.append("main", "after the upgrade")
        again = loom.append("alt", "first question")  # content stored before the upgrade
        assert loom.path("main") == [*before, node.id]
        assert again.content_id == loom.node(before[1]).content_id
        loom.fork(before[1], "late-branch")
        loom.append("late-branch", "a branch from an old node")
        assert loom.children(before[1])[-1] == loom.path("late-branch")[-1]
        assert loom.verify().ok
