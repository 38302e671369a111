"""A store whose vectors the torch-era all-MiniLM-L6-v2 made (before vectors carried a
model id) upgrades on both backends: its vectors are marked with that model, the
first semantic query queues every entry again (the old vectors rank meanwhile), the
next catch-up (the embedding worker, or `search --reindex`) re-embeds them with
today's model, and later ones embed nothing.

The fixtures were written by `fixtures/make_store_semantic_v1.py` with that version:
`store-semantic-v1.db.gz` (the SQLite file) and `store-semantic-v1.pg.sql` (pg_dump)."""

from __future__ import annotations

import gzip
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import loomdb
from areas.cli import Cli
from loomdb import Loom
from loomdb.search import service as S
from loomdb.search.semantic import index as V
from loomdb.search.semantic import model as M

pytestmark = pytest.mark.semantic

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
BACKENDS = ["sqlite", "postgres"]
TEXTS = ["The automobile engine would not turn over this morning.",
         "Our kitten sleeps on the windowsill all afternoon.",
         "Quarterly revenue grew by ten percent.",
         "Knead the dough and let the bread rise overnight.",
         "The violinist tuned her instrument before the concert."]


@pytest.fixture(params=BACKENDS)
def old_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """The URL of a copy of the old store on a backend."""
    if request.param == "sqlite":
        folder = tmp_path / "old"
        folder.mkdir()
        (folder / "loom.db").write_bytes(
            gzip.decompress((FIXTURES / "store-semantic-v1.db.gz").read_bytes()))
        yield str(folder)
        return
    import psycopg

    from pg import fresh_postgres_url

    dump = (FIXTURES / "store-semantic-v1.pg.sql").read_text("utf-8")
    script = "\n".join(line for line in dump.splitlines() if not line.startswith("\\"))
    with fresh_postgres_url() as url:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(script.encode())
        yield f"{url}?blobs=file://{tmp_path / 'blobs'}"


def models(loom: Loom) -> dict[str, int]:
    return {str(m): int(n) for m, n in loom.backend.execute(
        "SELECT model, count(*) FROM search_vectors GROUP BY model")}


def stored(loom: Loom) -> dict[str, np.ndarray]:
    """Each message's text -> its stored vector."""
    rows = loom.backend.execute("SELECT e.entity, v.embedding FROM search_vectors v "
                                "JOIN search_entries e ON e.seq = v.seq")
    text = {n.id: n.content[0]["text"] for t in loom.trees() for n in loom.tree_nodes(t.id)}
    return {text[str(e)]: np.frombuffer(bytes(b), dtype=np.float32) for e, b in rows}


def test_the_first_semantic_query_queues_an_old_store_again(old_store: str) -> None:
    with loomdb.open(old_store) as loom:
        with loom.unit(V.SEMANTIC):  # the area's migration runs; nothing is embedded yet
            pass
        assert models(loom) == {M.LEGACY_ID: len(TEXTS)}
        old = stored(loom)
        hits = S.search(loom, S.Query("car won't start", mode="semantic", limit=2))
        assert hits[0]["snippet"] == TEXTS[0]  # the old vectors rank meanwhile
        assert hits.pending == len(TEXTS) and models(loom) == {M.LEGACY_ID: len(TEXTS)}
        assert V.catch_up(loom) == len(TEXTS)
        assert models(loom) == {M.MODEL_ID: len(TEXTS)}
        new = stored(loom)
        assert sorted(new) == sorted(TEXTS)
        fresh = M.embed(TEXTS)
        for text, vector in zip(TEXTS, fresh, strict=True):
            assert np.allclose(new[text], vector, atol=1e-6), text
            assert float(old[text] @ vector) > 0.99  # the same model, run another way
            assert not np.array_equal(old[text], new[text])
        assert V.requeue_other_models(loom) == 0
        assert V.catch_up(loom) == 0  # nothing left
        hits = S.search(loom, S.Query("a sleepy cat", mode="semantic", limit=1))
        assert hits[0]["snippet"] == TEXTS[1] and hits.pending == 0


def test_reindex_re_embeds_an_old_store(old_store: str) -> None:
    assert Cli(old_store)("search", "--reindex") == {"embedded": len(TEXTS)}
    with loomdb.open(old_store) as loom:
        assert models(loom) == {M.MODEL_ID: len(TEXTS)}
        assert V.catch_up(loom) == 0


def test_only_vectors_of_another_model_are_queued_again(loom: Loom) -> None:
    """In a store that has vectors of two models, the entries of the other one are
    queued and re-embedded, and the other vectors are left as they are."""
    loom.new_tree(TEXTS[0], session="s")
    loom.append("s", TEXTS[1], role="user")
    S.search(loom, S.Query("warm up", mode="semantic"))
    V.catch_up(loom)
    loom.append("s", TEXTS[2], role="user")
    V.catch_up(loom)
    backend = loom.backend
    seqs = [int(r[0]) for r in backend.execute("SELECT seq FROM search_vectors ORDER BY seq")]
    kept = dict(backend.execute("SELECT seq, vseq FROM search_vectors"))
    with loom.unit(V.SEMANTIC) as db:
        db.execute("UPDATE search_vectors SET model = ? WHERE seq = ?", ("zz-later", seqs[-1]))
    assert V.requeue_other_models(loom) == 1
    assert V.catch_up(loom) == 1
    after = dict(backend.execute("SELECT seq, vseq FROM search_vectors"))
    assert {s: after[s] for s in seqs[:-1]} == {s: kept[s] for s in seqs[:-1]}
    assert after[seqs[-1]] != kept[seqs[-1]]
    assert models(loom) == {M.MODEL_ID: len(seqs)}
