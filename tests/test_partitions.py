"""A PostgreSQL store split by tree (`partitions=N`): the conformance classes give the
same results, every hot read prunes to the tree's one partition (EXPLAIN), and
`loomdb migrate --partitions N` copies a store into a split one."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

import loomdb
from loomdb import InvalidInput, Loom
from pg import fresh_postgres_url
from test_bad_input import run_cli
from test_cli import Cli
from test_context import TestNormalizedShape
from test_graph import TestComputedViews, TestHeadish
from test_refs import TestSessions

pytestmark = pytest.mark.postgres

__all__ = ["TestComputedViews", "TestHeadish", "TestNormalizedShape", "TestSessions"]


@pytest.fixture(params=["postgres-split"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    with fresh_postgres_url() as url:
        yield f"{url}?partitions=4&blobs=file://{tmp_path / 'blobs'}"


@pytest.fixture
def loom(store_url: str) -> Iterator[Loom]:
    with loomdb.open(store_url) as lm:
        assert lm.backend.split == 4  # type: ignore[attr-defined]
        yield lm


@pytest.fixture
def backend_kind() -> str:
    return "postgres"


def _partitions_in(plan: str, table: str = "nodes") -> set[str]:
    return set(re.findall(rf"\b{table}_p\d+\b", plan))


def test_every_hot_read_prunes_to_one_partition(loom: Loom) -> None:
    heads = []
    for t in range(4):  # several trees, so the partitions all hold rows
        tree, _ = loom.new_tree(f"tree {t}", session=f"s{t}")
        for i in range(20):
            loom.append(f"s{t}", f"m{i}")
        heads.append((tree.id, loom.resolve(f"s{t}").node))
    loom.backend.execute("ANALYZE")  # type: ignore[attr-defined]
    tree, head = heads[3]
    root = loom.path(head)[0]
    explain = loom.backend.explain  # type: ignore[attr-defined]
    plans = {
        "walk_pinned": explain("walk_pinned", (head, tree, tree), analyze=True),
        "children_pinned": explain("children_pinned", (root, tree), analyze=True),
        "leaves": explain("leaves", (tree,), analyze=True),
    }
    for name, plan in plans.items():
        assert len(_partitions_in(plan)) == 1, f"{name}:\n{plan}"
    assert len(loom.path(head)) == 21 and loom.children(root) == [loom.path(head)[1]]
    # the ref log: each append's line is in its tree's partition, read from there alone
    plan = explain("ref_log_pinned", (tree, "s3"), analyze=True)
    assert len(_partitions_in(plan, "ref_log")) == 1, plan
    assert "ref_log_name" not in plan  # the tree's key, not the index over every tree
    log = loom.ref_log("s3")
    assert [m.seq for m in log] == list(range(1, 22)) and {m.tree for m in log} == {tree}
    where = loom.backend.execute(  # type: ignore[attr-defined]
        "SELECT DISTINCT tableoid::regclass::text FROM ref_log WHERE ref_name = ?", ("s3",))
    assert len(where) == 1 and where[0][0].startswith("ref_log_p")


def test_a_name_made_again_in_another_tree_shows_only_its_own_log(loom: Loom) -> None:
    """The numbering goes on across the name's lives (its lines sit in two trees'
    partitions), but the log shown is the current ref's own (issue 22, item 7)."""
    first, _ = loom.new_tree("first", session="wanderer")
    loom.append("wanderer", "one")
    loom.delete_ref("wanderer")
    second, _ = loom.new_tree("second", session="wanderer")
    loom.append("wanderer", "two")
    log = loom.ref_log("wanderer")
    assert [m.seq for m in log] == [4, 5]
    assert [m.tree for m in log] == [second.id] * 2
    assert [m.reason for m in log] == ["create session", "append user"]
    assert first.id not in {m.tree for m in log}


def test_a_store_with_nodes_is_not_split_in_place(tmp_path: Path) -> None:
    with fresh_postgres_url() as url:
        with loomdb.open(f"{url}?blobs=file://{tmp_path}") as lm:
            lm.new_tree("hello")
        with pytest.raises(InvalidInput, match="empty store"):
            loomdb.open(f"{url}?partitions=4&blobs=file://{tmp_path}")
        with pytest.raises(InvalidInput, match="partition count"):
            loomdb.open(f"{url}?partitions=1&blobs=file://{tmp_path}")


def test_migrate_copies_into_a_split_store(tmp_path: Path) -> None:
    src = str(tmp_path / "src")
    cli = Cli(src)
    cli("new", "--text", "hello", "--session", "main")
    cli("add", "main", "--role", "assistant", "--text", "hi")
    with fresh_postgres_url() as url:
        dst = url + f"?blobs=file://{tmp_path / 'blobs'}"
        code, out, err = run_cli(src, "migrate", "--from", src, "--to", dst,
                                 "--partitions", "8", "--json")
        assert code == 0, err
        assert json.loads(out)["verified"] == 2
        with loomdb.open(dst) as lm:
            assert lm.backend.split == 8  # type: ignore[attr-defined]
            assert lm.verify().ok
        assert Cli(dst)("path", "main") == Cli(src)("path", "main")
        code, _, err = run_cli(src, "migrate", "--from", src, "--to", src + "2",
                               "--partitions", "4")
        assert code == 2 and "PostgreSQL" in err
