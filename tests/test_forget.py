"""Forgetting (issue 26) on both backends: delete a node, a version or a tree; redact a
node everywhere its content is stored; the record; verify after each; and the text
gone from the store (the SQLite files, the PostgreSQL database through pg_dump)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import pytest

from helpers import texts_of, thread
from loomdb import Loom
from loomdb.errors import NotFound, RefConflict
from loomdb.forget import service as F
from loomdb.generation import store
from loomdb.providers.base import Completion


def dump(loom: Loom) -> bytes:
    """Every byte of the store: the SQLite files and blobs, or a pg_dump of the
    database (what a backup of it would hold) and the blob folder."""
    if loom.backend.dialect == "sqlite":
        folder = Path(loom.backend.path).parent  # type: ignore[attr-defined]
        return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())
    parts = urlsplit(loom.backend.url)
    url = urlunsplit((parts.scheme, parts.netloc, parts.path, "", ""))
    out = subprocess.run(["pg_dump", "--data-only", url], capture_output=True, check=True)
    blobs = loom.blobs
    root = getattr(blobs, "root", None) or getattr(blobs, "path", None)
    files = b""
    if root is not None and Path(str(root).removeprefix("file://")).is_dir():
        files = b"".join(p.read_bytes() for p in Path(str(root).removeprefix("file://"))
                         .rglob("*") if p.is_file())
    return out.stdout + files


def tree_of(loom: Loom, headish: str) -> str:
    return loom.resolve(headish).tree


class TestDelete:
    def test_a_subtree_goes_and_the_rest_verifies(self, loom: Loom) -> None:
        ids = thread(loom, ["q0 keep", "a1 keep", "q2 gone-alpha", "a3 gone-beta"])
        loom.fork(ids[1], "side")
        loom.append("side", "side branch keep", role="user")
        with pytest.raises(RefConflict):
            F.delete(loom, ids[2])  # main points below: refused, nothing written
        assert loom.node(ids[3]).id == ids[3]
        done = F.delete(loom, ids[2], force=True, reason="asked")
        assert done.ids == sorted(ids[2:]) and done.refs == ["main"]
        assert loom.verify().ok
        assert texts_of(loom, "side") == ["q0 keep", "a1 keep", "side branch keep"]
        for nid in ids[2:]:
            with pytest.raises(NotFound):
                loom.node(nid)
        data = dump(loom)
        assert b"gone-alpha" not in data and b"gone-beta" not in data
        assert b"side branch keep" in data

    def test_appending_after_the_parent_works_again(self, loom: Loom) -> None:
        ids = thread(loom, ["q0", "a1", "q2"])
        F.delete(loom, ids[2], force=True)
        loom.fork(ids[1], "again")
        node = loom.append("again", "new q2", role="user")
        assert loom.node(node.id).parent == ids[1]
        with pytest.raises(NotFound):
            loom.append(ids[2], "after a deleted node", role="assistant")
        assert loom.verify().ok

    def test_an_edited_version_goes_alone_with_what_was_made_from_it(self, loom: Loom) -> None:
        ids = thread(loom, ["q0", "a1 original", "q2"])
        loom.view("v", "main")
        version = loom.edit("v~1", "a1 edited-secret")
        loom.append(version.id, "child of the edit", role="user")
        done = F.delete(loom, version.id, force=True)
        assert version.id in done.ids and ids[1] not in done.ids and ids[2] not in done.ids
        assert loom.verify().ok
        assert texts_of(loom, "main") == ["q0", "a1 original", "q2"]
        assert b"edited-secret" not in dump(loom)

    def test_the_original_version_takes_its_slot(self, loom: Loom) -> None:
        ids = thread(loom, ["q0", "a1", "q2"])
        version = loom.edit(ids[1], "a1 v2")
        done = F.delete(loom, ids[1], force=True)
        assert set(done.ids) == {ids[1], ids[2], version.id}
        assert loom.verify().ok

    def test_a_shared_content_stays_for_the_others(self, loom: Loom) -> None:
        ids = thread(loom, ["q0", "same words"])
        loom.fork(ids[0], "other")
        kept = loom.append("other", "same words", role="assistant")
        F.delete(loom, ids[1], force=True)
        assert texts_of(loom, kept.id) == ["q0", "same words"]
        assert loom.verify().ok

    def test_a_whole_tree(self, loom: Loom) -> None:
        ids = thread(loom, ["tree-secret q", "tree-secret a"])
        other = thread(loom, ["other tree"], session="o")
        tree = tree_of(loom, ids[0])
        done = F.delete(loom, f"tree:{tree}")  # its own sessions go with it
        assert done.trees_deleted == [tree] and done.refs == ["main"]
        assert [t.id for t in loom.trees()] == [tree_of(loom, other[0])]
        assert loom.verify().ok
        assert b"tree-secret" not in dump(loom)
        with pytest.raises(NotFound):
            F.delete(loom, f"tree:{tree}")

    def test_the_record_keeps_ids_not_content(self, loom: Loom) -> None:
        ids = thread(loom, ["q0", "record-secret"])
        F.delete(loom, ids[1], force=True, reason="user asked")
        (line,) = F.log(loom)
        assert line["action"] == "delete" and line["ids"] == [ids[1]]
        assert line["refs"] == ["main"] and line["reason"] == "user asked"
        assert "record-secret" not in json.dumps(line)


def generated(loom: Loom, question: str, answer_text: str) -> tuple[str, str]:
    thread(loom, [question])
    pos = loom.resolve("main")
    answer = Completion(
        content=[{"type": "text", "text": answer_text}], stop_reason="end_turn",
        usage={"input_tokens": 3, "output_tokens": 1}, model="m", provider="openai",
        provider_request={"model": "m", "messages": [{"role": "user", "content": question}]},
        raw_response={"choices": [{"message": {"content": answer_text}, "logprobs": {
            "content": [{"token": answer_text, "logprob": -0.1, "top_logprobs": []}]}}]},
        latency_ms=5)
    node = store(loom, pos, loom.context(pos), [answer]).nodes[0]
    loom.node(node.id)
    return node.id, node.provenance["generation"]  # type: ignore[index]


class TestRedact:
    def test_a_tombstone_that_verifies(self, loom: Loom) -> None:
        ids = thread(loom, ["q0", "redact-me-please", "q2 after"])
        done = F.redact(loom, ids[1], reason="pii")
        assert done.ids == [ids[1]]
        assert texts_of(loom, "main") == ["q0", "[redacted]", "q2 after"]
        node = loom.node(ids[1])
        assert node.content == [{"type": "text", "text": "[redacted]"}]
        report = loom.verify()
        assert report.ok and report.redacted == [
            {"kind": "content", "node": ids[1], "tree": tree_of(loom, ids[0])}]
        assert b"redact-me-please" not in dump(loom)

    def test_shared_content_is_redacted_for_every_node(self, loom: Loom) -> None:
        ids = thread(loom, ["q0", "shared-secret"])
        loom.fork(ids[0], "other")
        twin = loom.append("other", "shared-secret", role="assistant")
        done = F.redact(loom, ids[1])
        assert done.shared == [twin.id]
        assert texts_of(loom, "other") == ["q0", "[redacted]"]
        assert loom.verify().ok

    def test_generation_records_are_erased_and_reported(self, loom: Loom) -> None:
        node, gen = generated(loom, "question-secret", "answer-secret")
        assert loom.node(node).provenance["logprobs"]  # type: ignore[index]
        done = F.redact(loom, node)
        assert "logprobs" not in (loom.node(node).provenance or {})
        assert done.generations == [gen]
        report = loom.verify()
        assert report.ok
        assert {r["kind"] for r in report.redacted} == {"content", "generation"}
        data = dump(loom)
        assert b"answer-secret" not in data
        assert b"question-secret" in data  # the question is not what was redacted

    def test_tampering_is_still_tampering(self, loom: Loom) -> None:
        ids = thread(loom, ["q0", "a1"])
        F.redact(loom, ids[1])
        ok = loom.verify()
        assert ok.ok
        # a tombstone under a content id that was never redacted is tampering
        forged = '[{"text":"[redacted]","type":"text"}]'
        if loom.backend.dialect == "sqlite":
            loom.backend.execute("UPDATE nodes SET body = ? WHERE id = ?", (forged, ids[0]))
        else:
            loom.backend.execute(
                "UPDATE contents SET body = ? WHERE id = (SELECT content_id FROM nodes"
                " WHERE id = ?)", (forged, ids[0]))
        assert [b["node"] for b in loom.verify().broken if b["kind"] == "content"] == [ids[0]]

    def test_search_no_longer_finds_it(self, loom: Loom) -> None:
        ids = thread(loom, ["q0", "findable zebrafish"])
        from loomdb.search.service import Query, search

        assert search(loom, Query("zebrafish"))  # indexed
        F.redact(loom, ids[1])
        assert not search(loom, Query("zebrafish"))
        assert b"zebrafish" not in dump(loom)


def test_a_store_written_without_secure_delete_is_cleaned_too(tmp_path: Path) -> None:
    """Stores written by versions before secure_delete was on may hold stale copies of
    their text in free pages; their first forget finds its text still in the file and
    rewrites it (VACUUM), once."""
    with Loom.open(tmp_path / "old") as loom:
        ids = thread(loom, ["q0", "stale-secret-text " * 20])
        # what an older version leaves: freed pages holding the text, not zeroed
        loom.backend.execute("PRAGMA secure_delete = OFF")
        loom.backend.execute("CREATE TABLE junk (x TEXT)")
        loom.backend.execute("INSERT INTO junk VALUES (?)", ("stale-secret-text " * 400,))
        loom.backend.execute("DROP TABLE junk")
        loom.backend.execute("PRAGMA secure_delete = ON")
        loom.backend.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        # what migration 0006 notes for a store that had nodes before it
        loom.backend.execute("INSERT INTO forget_settings VALUES ('stale_copies', '1')")
        assert b"stale-secret-text" in dump(loom)
        done = F.delete(loom, ids[1], force=True)
        assert loom.verify().ok
        assert b"stale-secret-text" not in dump(loom)
        assert done.files == {"checkpoint": "complete", "vacuumed": True}
        assert loom.backend.execute("SELECT * FROM forget_settings") == []


def test_a_store_copy_carries_the_record(loom: Loom, tmp_path: Path) -> None:
    """`loomdb migrate`: tombstones verify at the target (the redactions travel), deleted
    ids stay forgotten there, and the record is there to read."""
    ids = thread(loom, ["q0", "copy-secret", "q2", "a3"])
    F.redact(loom, ids[1], reason="pii")
    F.delete(loom, ids[3], force=True)
    with Loom.open(tmp_path / "copy") as copy:
        loom.copy_to(copy)
        report = copy.verify()
        assert report.ok and [r["node"] for r in report.redacted] == [ids[1]]
        assert [e["action"] for e in F.log(copy)] == ["delete", "redact"]
        assert F.forgotten(copy, ids) == {ids[3]}
        F.delete(copy, ids[2], force=True)  # the copy's own record goes on after it
        assert [e["seq"] for e in F.log(copy)] == [3, 2, 1]


def test_a_copy_into_postgres_carries_the_record(tmp_path: Path) -> None:
    from pg import fresh_postgres_url

    with Loom.open(tmp_path / "src") as src, fresh_postgres_url(migrated=True) as url, \
            Loom.open(url + ("&" if "?" in url else "?")
                      + f"blobs=file://{tmp_path / 'blobs'}") as dst:
        ids = thread(src, ["q0", "pg-copy-secret", "q2"])
        F.redact(src, ids[1])
        F.delete(src, ids[2], force=True)
        src.copy_to(dst)
        assert dst.verify().ok
        F.delete(dst, ids[1], force=True)
        assert [e["seq"] for e in F.log(dst)] == [3, 2, 1]


def test_the_agents_copies_of_a_text_go_too(loom: Loom) -> None:
    """A supervised message keeps its text in the agents area: a redaction erases it
    there, a delete deletes the row."""
    from loomdb.agents import messages as M

    thread(loom, ["boss q0"], session="boss")
    thread(loom, ["worker q0"], session="worker")
    msg = M.propose(loom, "worker", "boss", "agent-secret-text")
    _, node = M.approve(loom, msg.id)
    F.redact(loom, node.id)
    assert M.message(loom, msg.id).text == "[redacted]"  # type: ignore[union-attr]
    assert b"agent-secret-text" not in dump(loom)
    F.delete(loom, node.id, force=True)
    assert M.message(loom, msg.id) is None
    assert loom.verify().ok
