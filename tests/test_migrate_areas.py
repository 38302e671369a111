"""A store copy carries the areas beside the core (`transfer.copy_store`, `loomdb migrate`).

Built with the areas' own services (documents with a branch and a merge, a nested
collection with tags and fields, references, a user owning a tree, an agent, the
gateway's memo), copied in every direction between SQLite and PostgreSQL: at the
target every area reads the same, the user's token still works, full-text search finds
messages, document revisions and collection items, and the chain verifies. A forced
copy keeps equal rows and refuses disagreeing ones, and a refused copy leaves the
target as it was, the areas' tables included.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import pytest

import loomdb
from helpers import row_counts
from kinds_area import KINDS
from loomdb import Loom
from loomdb.agents import identities as agents
from loomdb.collections import service as collections
from loomdb.documents import DOCUMENTS
from loomdb.documents import service as documents
from loomdb.errors import InvalidInput
from loomdb.exchanges import paths as gateway
from loomdb.references import service as references
from loomdb.search.service import Query, reindex, search
from loomdb.store import areas
from loomdb.transfer import copy_store
from loomdb.users import Owner, add_user, authenticate, list_users
from pg import store_of

BACKENDS = [b for b in os.environ.get("LOOMDB_TEST_BACKENDS", "sqlite,postgres").split(",") if b]
PAIRS = [(a, b) for a in ("sqlite", "postgres") for b in ("sqlite", "postgres")
         if a in BACKENDS and b in BACKENDS]
SRC = Path(__file__).resolve().parents[1] / "src"


@pytest.fixture(params=PAIRS, ids=lambda p: f"{p[0]}-to-{p[1]}")
def pair(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Loom, Loom]]:
    src_kind, dst_kind = request.param
    with store_of(src_kind, str(tmp_path / "src")) as a, store_of(dst_kind, str(tmp_path / "dst")) as b:
        with loomdb.open(a) as src, loomdb.open(b) as dst:
            yield src, dst


def build(loom: Loom) -> dict[str, Any]:
    """A store using every area, through the areas' own services."""
    tree, root = loom.new_tree("Why do zebras have stripes?", session="main")
    answer = loom.append("main", "Stripes may deter biting flies.", role="assistant")
    _, first = documents.new(loom, "spec", "title\n\nfirst part\n\nsecond part\n", "create")
    body = documents.commit(loom, "spec", "title\n\nfirst part\n\nsecond part, on okapis\n", "body")
    documents.branch(loom, "spec", "alt", at=first.id)
    documents.commit(loom, "spec", "title, revised\n\nfirst part\n\nsecond part\n", "title", branch="alt")
    merged = documents.merge(loom, "spec", "alt", "merge alt")
    documents.from_message(loom, answer.id, "answer")  # shares the node's content
    collections.new(loom, "reading", kind="tree")
    folder = collections.add(loom, "reading", f"tree:{tree.id}", tags=["topic"],
                             fields={"status": "open"})
    item = collections.add(loom, "reading", "doc:spec", parent=folder.id,
                           tags=["urgent", "spec"], fields={"owner": "ann", "status": "open"})
    collections.add(loom, "reading", root.id, fields={"status": "done"})
    references.link(loom, root.id, "doc:spec", type="cites")
    references.link(loom, f"coll:reading/{item.id}", "doc:spec@main", type="see-also")
    user, token = add_user(loom, "ann")
    owner = Owner(loom, user)
    with owner.atomic():
        owner.claim([tree.id])
        owner.claim_document(documents.ids_by_name(loom)["spec"])
        owner.claim_collection(collections.collection(loom, "reading").id)
    owner.record_import("chat.json", {"trees": 1})
    loom.new_tree("someone else's", session="other")
    agents.set_persona(loom, "helper", system="be kind", allow=["search"])
    agents.add_agent(loom, "bot", "model", persona="helper")
    agents.bind_session(loom, "main", persona="helper", agent="bot")
    with loom.unit(gateway.GATEWAY) as db:
        gateway.remember(db, "ab" * 32, tree.id, answer.id, 1, None)
    return {"tree": tree.id, "root": root.id, "answer": answer.id, "first": first.id,
            "body": body.id, "merged": merged.id, "item": item.id, "token": token}


def view(loom: Loom, built: dict[str, Any]) -> dict[str, Any]:
    """Every area as its services show it."""
    user = authenticate(loom, built["token"])
    assert user is not None
    with loom.unit(gateway.GATEWAY) as db:
        memo = db.execute("SELECT digest, tree_id, node_id, depth, selections FROM gateway_paths")
    return {
        "log": [r.to_json() for r in documents.log(loom, "spec")],
        "show": documents.show(loom, "spec").to_json(),
        "answer": documents.show(loom, "answer").to_json(),
        "diff": documents.diff(loom, "spec", built["first"], "main"),
        "documents": documents.documents(loom),
        "collection": collections.show(loom, "reading"),
        "groups": collections.show(loom, "reading", group_by="status"),
        "urgent": collections.show(loom, "reading", tag="urgent"),
        "backlinks": {e: references.backlinks(loom, e)
                      for e in ("doc:spec", built["root"], f"tree:{built['tree']}")},
        "users": [u.to_json() for u in list_users(loom)],
        "owned": sorted(t.id for t in Owner(loom, user).trees()),
        "owned_documents": sorted(Owner(loom, user).visible_documents(
            documents.ids_by_name(loom).values())),
        "owned_collections": sorted(Owner(loom, user).visible_collections(
            [collections.collection(loom, "reading").id])),
        "agents": [a.to_json() for a in agents.agents(loom)],
        "personas": [p.to_json() for p in agents.personas(loom)],
        "binding": asdict(agents.binding(loom, "main")),
        "memo": memo,
    }


def found(loom: Loom, words: str) -> set[str]:
    return {h["entity"] for h in search(loom, Query(words))}


def area_rows(loom: Loom) -> dict[str, int]:
    """Rows per table of every area the store records (derived ones included), as a
    failed copy must leave them."""
    counts = {}
    for area in areas.recorded(loom.backend):
        if area.name == "semantic":
            continue  # its vec0 table needs sqlite-vec loaded to be read
        with loom.unit(area) as db:
            for table in area.tables(db.dialect):
                if db.dialect == "postgres" and db.one("SELECT to_regclass(?)", (table,)) == (None,):
                    continue  # made only where an extension is there (search's rum chunks)
                counts[f"{area.name}.{table}"] = db.one(f"SELECT count(*) FROM {table}")[0]
    return counts


class TestCopy:
    def test_every_area_reads_the_same_at_the_target(self, pair: tuple[Loom, Loom]) -> None:
        src, dst = pair
        built = build(src)
        report = copy_store(src, dst)
        assert view(dst, built) == view(src, built)
        assert dst.verify().ok
        assert report.areas["documents"] == {"doc_documents": 2, "doc_revisions": 5,
                                             "doc_parents": 4, "doc_branches": 3,
                                             "doc_contents": 4}
        assert report.areas["users"] == {"users": 1, "user_trees": 1, "user_imports": 1,
                                         "user_documents": 1, "user_collections": 1}
        assert report.areas["references"] == {"ref_links": 2}
        assert report.areas["gateway"] == {"gateway_paths": 1, "gateway_buffers": 0,
                                           "gateway_recent": 0}
        assert sum(report.areas["agents"].values()) == 3
        assert "search" not in report.areas  # an index is rebuilt, never copied
        assert report.rebuilt == {"search": {"messages": 3, "documents": 5, "items": 3}}

    def test_the_target_finds_messages_revisions_and_items(self, pair: tuple[Loom, Loom]) -> None:
        src, dst = pair
        built = build(src)
        copy_store(src, dst)
        assert found(dst, "okapis") == {f"doc:spec@{built['body']}", f"doc:spec@{built['merged']}"}
        assert f"coll:reading/{built['item']}" in found(dst, "urgent")
        assert built["root"] in found(dst, "zebras")
        assert {built["answer"], "doc:answer@" + documents.log(dst, "answer")[0].id} <= found(
            dst, "biting flies")

    def test_the_token_works_and_owns_the_same_trees(self, pair: tuple[Loom, Loom]) -> None:
        src, dst = pair
        built = build(src)
        copy_store(src, dst)
        user = authenticate(dst, built["token"])
        assert user is not None and user.name == "ann"
        assert [t.id for t in Owner(dst, user).trees()] == [built["tree"]]
        assert authenticate(dst, "not-the-token") is None

    def test_the_copy_keeps_working_like_the_original(self, pair: tuple[Loom, Loom]) -> None:
        src, dst = pair
        build(src)
        copy_store(src, dst)
        for loom in (src, dst):
            documents.checkout(loom, "spec", "alt")
            documents.commit(loom, "spec", "title, revised\n\nfirst part\n\nsecond part\nmore\n", "more")
            collections.move(loom, "reading", collections.show(loom, "reading")["items"][-1]["id"],
                             first=True)
        assert [r.message for r in documents.log(dst, "spec")] == [
            r.message for r in documents.log(src, "spec")]
        assert [i["entity"] for i in collections.show(dst, "reading")["items"]] == [
            i["entity"] for i in collections.show(src, "reading")["items"]]


class TestForce:
    def test_a_second_forced_copy_keeps_every_row(self, pair: tuple[Loom, Loom]) -> None:
        src, dst = pair
        built = build(src)
        first = copy_store(src, dst)
        again = copy_store(src, dst, force=True)
        for area, tables in first.areas.items():
            assert again.areas[area] == {t: 0 for t in tables}
            for table, n in tables.items():
                assert again.kept.get(f"{area}.{table}", 0) == n
        assert view(dst, built) == view(src, built)
        assert found(dst, "okapis") == found(src, "okapis")

    def test_a_disagreeing_row_is_refused_and_rolls_back_every_area(
        self, pair: tuple[Loom, Loom]
    ) -> None:
        src, dst = pair
        built = build(src)
        copy_store(src, dst)
        collections.set_fields(dst, "reading", built["item"], {"owner": "bob"})
        documents.new(src, "later", "written after the first copy")
        before = row_counts(dst), area_rows(dst)
        with pytest.raises(InvalidInput, match=r"table coll_fields, row item_id='\w+', "
                                               r"key='owner': exists in the target with other"):
            copy_store(src, dst, force=True)
        assert (row_counts(dst), area_rows(dst)) == before
        with pytest.raises(loomdb.NotFound):
            documents.show(dst, "later")

    def test_a_unique_name_taken_in_the_target_is_refused_and_leaves_it_as_it_was(
        self, pair: tuple[Loom, Loom]
    ) -> None:
        src, dst = pair
        build(src)
        add_user(dst, "ann")  # the same name, another id
        before = row_counts(dst), area_rows(dst)
        with pytest.raises(InvalidInput, match="table users: a source row conflicts"):
            copy_store(src, dst, force=True)
        assert (row_counts(dst), area_rows(dst)) == before
        assert not dst.has_area(DOCUMENTS)  # its tables went with the rollback
        documents.new(dst, "fresh", "the area is created again on its next use")
        assert documents.show(dst, "fresh").to_json()["text"].startswith("the area")


class TestRefusals:
    def test_an_area_not_known_here_is_refused_before_the_target_changes(
        self, pair: tuple[Loom, Loom]
    ) -> None:
        src, dst = pair
        build(src)
        src.backend.execute("INSERT INTO loomdb_migrations VALUES ('mystery/0001_x', '2030')")
        before = row_counts(dst), area_rows(dst)
        with pytest.raises(InvalidInput, match="area 'mystery': is recorded in the store"):
            copy_store(src, dst)
        assert (row_counts(dst), area_rows(dst)) == before


    def test_an_area_whose_package_cannot_be_imported_is_refused(
        self, pair: tuple[Loom, Loom], monkeypatch: pytest.MonkeyPatch
    ) -> None:
        src, dst = pair
        monkeypatch.setitem(areas.BUILTIN, "ghost", "no_such_package.area:GHOST")
        src.backend.execute("INSERT INTO loomdb_migrations VALUES ('ghost/0001_x', '2030')")
        with pytest.raises(InvalidInput, match="area 'ghost': is declared in "
                                               "no_such_package.area, which cannot be imported"):
            copy_store(src, dst)


class TestDialects:
    """The generic copy over the column kinds the dialects store differently."""

    @staticmethod
    def fill(loom: Loom) -> None:
        with loom.unit(KINDS) as db:
            rows = [(True, b"\x00\xffbytes", "one", 1.5), (False, None, None, None),
                    (True, bytes(range(256)), "three", -2.25)]
            db.executemany("INSERT INTO kinds_rows (flag, data, label, score) VALUES (?, ?, ?, ?)",
                           rows)
            db.execute("DELETE FROM kinds_rows WHERE id = 2")  # a gap the ids keep
            db.executemany("INSERT INTO kinds_marks (row_id, note) VALUES (?, ?)",
                           [(1, "first"), (3, "third")])
            db.executemany("INSERT INTO kinds_pairs VALUES (?, ?, ?)",
                           [("a", 2, "x"), ("a", 1, None), ("B", 1, "y")])
            db.executemany("INSERT INTO kinds_loose VALUES (?, ?)",
                           [("same", 1), ("same", 1), (None, None)])

    @staticmethod
    def rows(loom: Loom) -> dict[str, list[tuple[Any, ...]]]:
        def plain(row: tuple[Any, ...]) -> tuple[Any, ...]:
            return tuple(int(v) if isinstance(v, bool) else v for v in row)

        with loom.unit(KINDS) as db:
            return {t: sorted((plain(r) for r in db.execute(f"SELECT {cols} FROM {t}")),
                              key=repr)
                    for t, cols in (("kinds_rows", "id, flag, data, label, score"),
                                    ("kinds_marks", "id, row_id, note"),
                                    ("kinds_pairs", "a, b, v"), ("kinds_loose", "note, n"))}

    def test_ids_bytes_booleans_and_keyless_rows_survive(self, pair: tuple[Loom, Loom]) -> None:
        src, dst = pair
        self.fill(src)
        report = copy_store(src, dst)
        assert report.areas["kinds"] == {"kinds_rows": 2, "kinds_marks": 2, "kinds_pairs": 3,
                                         "kinds_loose": 3}
        assert self.rows(dst) == self.rows(src)
        if dst.backend.dialect == "postgres":  # a generated column is the target's own
            with dst.unit(KINDS) as db:
                assert sorted(db.execute("SELECT shout FROM kinds_marks")) == [("FIRST",), ("THIRD",)]

    def test_new_rows_after_a_copy_get_fresh_ids(self, pair: tuple[Loom, Loom]) -> None:
        src, dst = pair
        self.fill(src)
        copy_store(src, dst)
        for loom in (src, dst):
            with loom.unit(KINDS) as db:
                db.execute("INSERT INTO kinds_rows (flag) VALUES (?)", (False,))
                db.execute("INSERT INTO kinds_marks (row_id, note) VALUES (?, ?)", (4, "fourth"))
        assert self.rows(dst) == self.rows(src)
        assert [r[0] for r in self.rows(dst)["kinds_rows"]] == [1, 3, 4]

    def test_a_forced_copy_again_keeps_them_all(self, pair: tuple[Loom, Loom]) -> None:
        src, dst = pair
        self.fill(src)
        copy_store(src, dst)
        again = copy_store(src, dst, force=True)
        assert again.areas["kinds"] == dict.fromkeys(again.areas["kinds"], 0)
        assert {k: v for k, v in again.kept.items() if k.startswith("kinds.")} == {
            "kinds.kinds_rows": 2, "kinds.kinds_marks": 2, "kinds.kinds_pairs": 3,
            "kinds.kinds_loose": 3}
        assert self.rows(dst) == self.rows(src)


@pytest.mark.semantic
def test_semantic_search_at_the_target_embeds_what_was_copied(pair: tuple[Loom, Loom]) -> None:
    src, dst = pair
    built = build(src)
    search(src, Query("why zebras are striped", mode="semantic"))  # the area at the source
    reindex(src)
    assert search(src, Query("why zebras are striped", mode="semantic"))  # its vectors
    report = copy_store(src, dst)
    assert "semantic" not in report.areas and "semantic" not in report.rebuilt
    search(dst, Query("insects that bite", mode="semantic", limit=3))  # the area: all queued
    reindex(dst)  # (what the embedding worker does behind the writes)
    hits = search(dst, Query("insects that bite", mode="semantic", limit=3))
    answer_doc = "doc:answer@" + documents.log(dst, "answer")[0].id
    assert {built["answer"], answer_doc} <= {h["entity"] for h in hits}


def test_every_area_loomdb_ships_is_in_the_catalogue_and_copyable() -> None:
    """BUILTIN is how a copy finds an area it has not imported: every Area declared in
    the package must be there, and its tables must agree between the dialects."""
    declared = set()
    for path in (SRC / "loomdb").rglob("*.py"):
        declared |= set(re.findall(r'^\w+ = Area\("(\w+)"', path.read_text("utf-8"), re.M))
    assert declared == set(areas.BUILTIN)
    for name in areas.BUILTIN:
        area = areas.find(name)
        assert area.name == name
        if not area.derived:
            assert area.tables("sqlite") == area.tables("postgres") != []
    assert areas.find("documents").tables("sqlite") == [
        "doc_documents", "doc_revisions", "doc_parents", "doc_branches", "doc_contents"]
    assert KINDS.tables("sqlite") == ["kinds_rows", "kinds_marks", "kinds_pairs", "kinds_loose"]
