"""A spawn lineage that loops (issue 22, item 10): a native import may carry any
`lineage`, so a tree can name itself, or two trees each other, as the thread they
were spawned from. An import now leaves such a lineage out, with a warning (issue 32:
a lineage names only a node it may, and never one that leads back). A store may still
hold one written before: reading such a thread's context (an agent's turn,
`generate`) and spawning from it must refuse with one line and exit 2, writing
nothing: not recurse until RecursionError, not loop forever. Both backends, through
the real command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import loomdb
from helpers import row_counts
from loomdb import InvalidInput, Loom
from loomdb.agents.threads import spawn_depth, thread_context
from loomdb.storage_ops import storage

#: a run that has not answered by then is looping (the refusal takes well under a second)
HANG = 120


def _cli(db: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.run([sys.executable, "-m", "loomdb", "--db", db, *args], env=env,
                          capture_output=True, text=True, timeout=HANG, check=False)


def _export(tmp: Path, names: list[str]) -> list[dict[str, Any]]:
    """One exported tree per name, from a scratch store."""
    out = []
    with loomdb.open(str(tmp / "scratch")) as src:
        for name in names:
            src.new_tree(f"thread {name}", session=name)
            path = tmp / f"{name}.json"
            src.export_file(path, target=name, format="json")
            out.append(json.loads(path.read_text())["trees"][0])
    return out


def _spawned_from(tree: dict[str, Any], parent: dict[str, Any]) -> None:
    tree["tree"]["lineage"] = {"spawned": {"tree": parent["tree"]["id"],
                                           "node": parent["tree"]["root"], "session": "x"}}


@pytest.mark.parametrize("shape", ["self", "pair"])
def test_an_imported_lineage_loop_is_left_out(store_url: str, tmp_path: Path,
                                              shape: str) -> None:
    trees = _export(tmp_path, ["a"] if shape == "self" else ["a", "b"])
    for i, tree in enumerate(trees):
        _spawned_from(tree, trees[(i + 1) % len(trees)])
    dump = tmp_path / "cycle.json"
    dump.write_text(json.dumps({"loomdb_export": 1, "trees": trees}))
    with loomdb.open(store_url) as lm:  # the lineage that would close the loop is left out
        report = lm.import_file(dump, format="loomdb").to_json()
        assert not report["errors"] and "spawned is left out" in json.dumps(report), report
        assert len(thread_context(lm, "a")["messages"]) == 1
        assert spawn_depth(lm, lm.resolve("a").tree) == 0
        if shape == "pair":  # b came second, a was stored: b's lineage to a is kept
            assert len(thread_context(lm, "b")["messages"]) == 2


@pytest.mark.parametrize("shape", ["self", "pair"])
def test_a_stored_lineage_loop_is_refused(store_url: str, tmp_path: Path, shape: str) -> None:
    """A loop a store already holds (written before imports checked lineages)."""
    with loomdb.open(store_url) as lm:
        names = ["a"] if shape == "self" else ["a", "b"]
        made = [lm.new_tree(f"thread {n}", session=n) for n in names]
        with storage(lm).transaction():
            for i, (tree, _root) in enumerate(made):
                parent, root = made[(i + 1) % len(made)]
                storage(lm).set_lineage(tree.id, {"spawned": {
                    "tree": parent.id, "node": root.id, "session": "x"}})

    with loomdb.open(store_url) as lm:
        before = row_counts(lm)
        with pytest.raises(InvalidInput, match="lineage"):
            thread_context(lm, "a")
        with pytest.raises(InvalidInput, match="lineage"):
            spawn_depth(lm, lm.resolve("a").tree)

    for args in (["generate", "a", "--max-steps", "1", "--max-tokens", "4"],
                 ["spawn", "a", "--task", "a task", "--max-steps", "1"]):
        run = _cli(store_url, *args, "--json")
        assert run.returncode == 2, (args, run.stderr[-2000:])
        assert "Traceback" not in run.stderr and "RecursionError" not in run.stdout
        assert run.stderr.startswith("loomdb: error: ") and run.stderr.count("\n") == 1
        assert "lineage" in json.loads(run.stdout)["error"]["message"]
    with loomdb.open(store_url) as lm:
        assert row_counts(lm) == before


def test_a_long_lineage_is_followed(loom: Loom) -> None:
    """Legitimate nesting still reads through every parent, nearest last."""
    from loomdb.agents.subagents import start_child

    loom.new_tree("root task", session="s")
    tree, session = start_child(loom, "s", "child task", None)
    _, grandchild = start_child(loom, session, "grandchild task", None)
    texts = [m["content"][0]["text"] for m in thread_context(loom, grandchild)["messages"]]
    assert texts == ["root task", "child task", "grandchild task"]
    assert spawn_depth(loom, loom.resolve(grandchild).tree) == 2
    assert spawn_depth(loom, tree) == 1
