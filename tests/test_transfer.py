"""Copying a whole store between backends (`transfer.copy_store`, `loomdb migrate`).

A copy keeps every id, chain hash, ref (with selections and log), overlay, tag, edge,
generation, compaction record and blob; the target verifies before it commits; a
non-empty target is refused unless forced; a broken source leaves the target empty.
"""

from __future__ import annotations

import base64
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import loomdb
from helpers import row_counts
from loomdb import Loom
from loomdb.errors import IntegrityError, InvalidInput
from loomdb.model import new_id, now
from loomdb.transfer import copy_store
from pg import store_of

BACKENDS = [b for b in os.environ.get("LOOMDB_TEST_BACKENDS", "sqlite,postgres").split(",") if b]
PAIRS = [(a, b) for a in ("sqlite", "postgres") for b in ("sqlite", "postgres")
         if a in BACKENDS and b in BACKENDS]
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\n" + bytes(range(64))).decode()


@pytest.fixture(params=PAIRS, ids=lambda p: f"{p[0]}-to-{p[1]}")
def pair(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Loom, Loom]]:
    src_kind, dst_kind = request.param
    with store_of(src_kind, str(tmp_path / "src")) as a, store_of(dst_kind, str(tmp_path / "dst")) as b:
        with loomdb.open(a) as src, loomdb.open(b) as dst:
            yield src, dst


def drafts(*looms: Loom) -> bool:
    """Whether every backend involved stores buffer-mode drafts."""
    return all(hasattr(lm.backend, "set_draft") for lm in looms)


def build(loom: Loom, with_draft: bool = False) -> dict[str, Any]:
    """A store using every kind of row there is."""
    tree, root = loom.new_tree("the question", session="main", system="be brief",
                               options={"model": "m", "temperature": 0.5})
    a1 = loom.append("main", "answer one", role="assistant", options={"temperature": 0.1})
    q2 = loom.append("main", [{"type": "text", "text": "look at this"},
                              {"type": "image", "data": PNG, "mime_type": "image/png"}])
    a2 = loom.append("main", "answer two", role="assistant", also=[root.id])
    loom.edit(a1.id, "answer one, edited")  # a version of a1's slot, selected nowhere
    loom.view("splice", "main")
    v = loom.edit("splice~2", "answer one, spliced")
    tail = loom.append("splice", "through the splice")  # stores the view's selection
    loom.fork(q2.id, "side")
    loom.append("side", "a sibling answer", role="assistant")
    loom.append("side", "taken back")
    loom.undo("side")
    loom.bookmark(a2.id, "good-answer")
    loom.tag(a2.id, "keep", "reviewed")
    loom.exclude(q2.id)
    loom.fork(root.id, "scratch")
    pruned = loom.append("scratch", "dead end", role="assistant")
    loom.prune(pruned.id)
    loom.delete_ref("scratch")  # its log stays
    other, oroot = loom.new_tree("another", mode="buffer", session="other")
    loom.link(a2.id, oroot.id)  # cross-tree link
    loom.link(root.id, tail.id, type="annotation")
    if with_draft:  # buffer mode's working text
        from loomdb import buffer

        buffer.set_draft(loom, "other", "an unfinished sentence")
    loom.archive(other.id)
    compaction = loom.append("main", "summary of the above", kind="compaction",
                             source="agent", author="summarizer")
    gen = {"id": new_id(), "tree_id": tree.id, "created_at": now(), "provider": "fake",
           "model": "m", "request": "{}", "provider_request": "{}", "raw_response": "{}",
           "response_hash": "sha256:" + "ab" * 32, "usage": None, "latency_ms": 7,
           "status": "complete"}
    with loom.backend.transaction():
        loom.backend.provenance.insert_generation(gen)
        loom.backend.provenance.insert_compaction({
            "node_id": compaction.id, "tree_id": tree.id, "model": "m", "tokens_before": 100,
            "tokens_after": 10, "duration_ms": 5, "trigger": "manual", "summarized": 3,
            "created_at": now()})
    loom.put_blob(b"an orphan blob, referenced by no node", "text/plain")
    return {"tree": tree.id, "other": other.id, "gen": gen["id"], "compaction": compaction.id,
            "version": v.id}


def snapshot(loom: Loom, built: dict[str, Any]) -> dict[str, Any]:
    """Everything observable through the library, in a comparable form."""
    b = loom.backend
    trees = [t.to_json() for t in loom.trees()] + [t.to_json() for t in loom.trees(archived=True)]
    nodes, metas, edges, paths = {}, {}, {}, {}
    for t in trees:
        for n in loom.tree_nodes(t["id"]):
            nodes[n.id] = n.to_json()
            edges[n.id] = [e.to_json() for e in loom.edges(n.id)]
            paths[n.id] = loom.path(n.id)
        metas.update({k: v.to_json() for k, v in b.meta.get_meta(list(nodes)).items()})
    refs = [r.to_json() for r in loom.refs()]
    logs = {name: [(m.ref, m.at, m.old, m.new, m.actor, m.reason) for m in b.refs.ref_log(name)]
            for name in [r["name"] for r in refs] + ["scratch"]}
    blobs = sorted((bytes(r[0]).hex(), r[1], r[2], r[3]) for r in b.execute(
        "SELECT id, size, mime_type, created_at FROM blobs"))
    return {
        "trees": trees, "nodes": nodes, "metas": metas, "edges": edges, "paths": paths,
        "refs": refs, "logs": logs, "blobs": blobs,
        "blob_bytes": [loom.blob("sha256:" + h) for h, *_ in blobs],
        "leaves": {t["id"]: loom.leaves(t["id"], include_pruned=True) for t in trees},
        "visible_leaves": {t["id"]: loom.leaves(t["id"]) for t in trees},
        "contexts": {r["name"]: loom.context(r["name"]) for r in refs},
        "generation": b.provenance.get_generation(built["gen"]),
        "compaction": b.provenance.get_compaction(built["compaction"]),
        "drafts": sorted(b.execute("SELECT ref_name, text, updated_at FROM drafts"))
        if hasattr(b, "get_draft") else [],
    }


class TestCopy:
    def test_a_copy_is_the_same_store_and_verifies(self, pair: tuple[Loom, Loom]) -> None:
        src, dst = pair
        built = build(src, drafts(src, dst))
        report = copy_store(src, dst)
        assert report.trees == 2 and report.blobs == 2 and report.refs == len(src.refs())
        assert report.verified == report.nodes == sum(t.nodes for t in src.trees()) + sum(
            t.nodes for t in src.trees(archived=True))
        assert report.generations == 1 and report.compactions == 1
        assert report.drafts == (1 if drafts(src, dst) else 0)
        assert dst.verify().ok
        assert snapshot(dst, built) == snapshot(src, built)

    def test_the_copy_keeps_working_like_the_original(self, pair: tuple[Loom, Loom]) -> None:
        src, dst = pair
        build(src)
        copy_store(src, dst)
        for loom in (src, dst):
            loom.append("main", "after the move", node_id="01JAAAAAAAAAAAAAAAAAAAAAAA",
                        created_at="2030-01-01T00:00:00.000000Z")
            loom.append("splice", "and the splice", node_id="01JBBBBBBBBBBBBBBBBBBBBBBB",
                        created_at="2030-01-01T00:00:00.000000Z")
        assert dst.path("main") == src.path("main")
        assert dst.node("main").chain_hash == src.node("main").chain_hash
        assert dst.path("splice") == src.path("splice")
        assert dst.verify().ok


class TestRefusals:
    def test_a_non_empty_target_is_refused_and_left_alone(self, pair: tuple[Loom, Loom]) -> None:
        src, dst = pair
        build(src)
        dst.new_tree("already here", session="mine")
        before = row_counts(dst)
        with pytest.raises(InvalidInput, match="not empty"):
            copy_store(src, dst)
        assert row_counts(dst) == before

    def test_force_adds_to_a_target_and_keeps_what_is_already_the_same(
        self, pair: tuple[Loom, Loom]
    ) -> None:
        src, dst = pair
        built = build(src)
        dst.new_tree("already here", session="mine")
        first = copy_store(src, dst, force=True)
        again = copy_store(src, dst, force=True)
        assert first.nodes > 0 and again.nodes == 0 and again.refs == 0 and again.moves == 0
        assert again.kept["nodes"] == first.nodes
        assert {"mine", "main", "splice"} <= {r.name for r in dst.refs()}
        mine = snapshot(dst, built)
        assert mine["nodes"].keys() >= snapshot(src, built)["nodes"].keys()
        assert dst.verify().ok

    def test_a_ref_that_disagrees_under_force_is_an_error(self, pair: tuple[Loom, Loom]) -> None:
        src, dst = pair
        build(src)
        dst.new_tree("elsewhere", session="main")
        before = row_counts(dst)
        with pytest.raises(InvalidInput, match="ref 'main'"):
            copy_store(src, dst, force=True)
        counts = row_counts(dst)
        assert counts == {**before, "blobs": counts["blobs"]}  # only blobs may stay

    def test_a_broken_source_leaves_the_target_empty(self, pair: tuple[Loom, Loom]) -> None:
        src, dst = pair
        build(src)
        src.backend.execute(
            f"UPDATE nodes SET author = 'mallory' WHERE id = '{src.path('main')[1]}'")
        with pytest.raises(IntegrityError, match="broken"):
            copy_store(src, dst)
        counts = row_counts(dst)
        assert counts == {t: 0 for t in counts} | {"blobs": counts["blobs"]}

    def test_a_store_cannot_be_copied_onto_itself(self, tmp_path: Path) -> None:
        with loomdb.open(str(tmp_path / "s")) as a, loomdb.open(str(tmp_path / "s")) as b:
            with pytest.raises(InvalidInput, match="same store"):
                copy_store(a, b)
