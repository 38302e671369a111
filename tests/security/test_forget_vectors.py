"""Issue 32, item 9: a forgotten message leaves no embedding behind.

SQLite keeps each vector twice, in `search_vectors` and in sqlite-vec's vec0 table;
only a connection with sqlite-vec loaded may write the vec0 table, so its row of a
forgotten message was dropped at the next semantic query, and a backup taken before
that carried the vector. Now every forget drops them in its own transaction (a
redaction, a user's redaction of their copy, a delete, a whole tree), then
checkpoints: when it returns, no vector row of the forgotten message is left on
either backend, and on SQLite its bytes are in neither the store's file nor a backup
taken right after. The embedding model is loaded once for the process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from loomdb import Loom
from loomdb.users import Owner, add_user

pytestmark = pytest.mark.semantic

TEXTS = ["The glacier carved a deep valley over ten thousand years.",
         "Our kitten sleeps on the windowsill all afternoon.",
         "Quarterly revenue grew by ten percent.",
         "The volcano poured lava into the sea.",
         "A violin sings above the quiet orchestra."]


def _vector(lm: Loom, node: str) -> tuple[int, bytes]:
    seq, = lm.backend.execute("SELECT seq FROM search_entries WHERE entity = ?", (node,))[0]
    emb, = lm.backend.execute("SELECT embedding FROM search_vectors WHERE seq = ?", (seq,))[0]
    return int(seq), bytes(emb)


def _rows(lm: Loom, seq: int, backend: str) -> int:
    found = lm.backend.execute("SELECT count(*) FROM search_vectors WHERE seq = ?", (seq,))[0][0]
    if backend == "sqlite":  # the vec0 table, and what waited for a semantic query
        found += lm.backend.execute(
            "SELECT count(*) FROM search_vec_index WHERE seq = ?", (seq,))[0][0]
        found += lm.backend.execute(
            "SELECT count(*) FROM search_vec_gone WHERE seq = ?", (seq,))[0][0]
    return int(found)


def _files(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in folder.rglob("*") if p.is_file() and
                    p.suffix != ".lock" and "blobs" not in p.parts)


def test_no_vector_of_a_forgotten_message_is_left_when_the_forget_returns(
        loom: Loom, backend_kind: str, tmp_path: Path) -> None:
    user, _ = add_user(loom, "ann")
    mine = loom.as_(Owner(loom, user))
    _, first = mine.trees.new("Notes of the day", session="day")
    nodes = [mine.nodes.append("day", t) for t in TEXTS[:3]]
    other, _ = loom.new_tree(TEXTS[3], session="other")
    loom.append("other", TEXTS[4], role="assistant")
    loom.search("ice shaping land", mode="semantic")  # the area
    loom.search.reindex()  # every entry embedded (what the worker does)
    assert loom.search("ice shaping land", mode="semantic")
    vectors = {n.id: _vector(loom, n.id) for n in nodes}
    whole = [n.id for n in loom.tree_nodes(other.id)]
    vectors |= {n: _vector(loom, n) for n in whole}
    forgets = [
        (lambda: loom.forget.redact(nodes[0].id), [nodes[0].id]),
        (lambda: mine.forget.redact(nodes[1].id), [nodes[1].id]),  # a user's own copy
        (lambda: loom.forget.delete(nodes[2].id, force=True), [nodes[2].id]),
        (lambda: loom.forget.delete(f"tree:{other.id}", force=True), whole),
    ]
    for forget, gone in forgets:
        done = forget().to_json()
        assert "vectors" not in done["files"], done
        for node in gone:
            seq, emb = vectors[node]
            assert _rows(loom, seq, backend_kind) == 0, node
            if backend_kind == "sqlite":
                backup = tmp_path / f"backup-{node}"
                loom.backup(backup)
                assert emb not in _files(backup), node
                assert emb not in _files(Path(loom.backend.url)), node
    # what was not forgotten is still embedded and ranks
    hits = loom.search("the notes of a day", mode="semantic")
    assert [h["entity"] for h in hits] == [first.id]


def test_a_forget_that_cannot_drop_them_says_so(tmp_path: Path) -> None:
    """Where sqlite-vec cannot be loaded (not installed), the vec0 rows wait for the next
    semantic query, and the forget's result says so; that query drops them."""
    import loomdb

    db = str(tmp_path / "store")
    with loomdb.open(db) as lm:
        _, root = lm.new_tree(TEXTS[0], session="s")
        lm.search("ice shaping land", mode="semantic")
        lm.search.reindex()
        assert lm.search("ice shaping land", mode="semantic")
        seq, _ = _vector(lm, root.id)
    code = f"""
import json, sys
sys.modules["sqlite_vec"] = None
import loomdb
with loomdb.open({db!r}) as lm:
    print(json.dumps(lm.forget.redact({root.id!r}).to_json()["files"]))
"""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    files = json.loads(run.stdout)
    assert "next semantic query" in files["vectors"] and "semantic" in files["vectors"]
    with loomdb.open(db) as lm:
        assert lm.backend.execute("SELECT count(*) FROM search_vec_gone")[0][0] == 1
        lm.search("ice", mode="semantic")
        assert _rows(lm, seq, "sqlite") == 0
