"""`loomdb backup DEST`: a consistent online copy of a SQLite store, blobs included,
taken while another process keeps writing (issue 11, item 13)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import loomdb
from loomdb import InvalidInput

WRITER = """
import sys, loomdb
with loomdb.open(sys.argv[1]) as loom:
    print("ready", flush=True)
    i = 0
    while True:
        loom.append("main", f"turn {i}", role="assistant" if i % 2 else "user")
        if i % 10 == 0:
            bid = loom.put_blob(f"blob {i}".encode(), "text/plain")
            loom.append("main", [{"type": "document", "ref": bid, "mime_type": "text/plain"}])
        i += 1
"""


def env() -> dict[str, str]:
    src = str(Path(loomdb.__file__).parent.parent)
    return dict(os.environ, PYTHONPATH=src + os.pathsep + os.environ.get("PYTHONPATH", ""))


def one_chain(loom: loomdb.Loom) -> None:
    """The session's head reaches the root, and the tree has exactly one leaf."""
    tree = loom.trees()[0]
    assert loom.leaves(tree.id) == [loom.ref("main").node]
    assert len(loom.path("main")) == len(loom.tree_nodes(tree.id))


class TestBackup:
    def test_a_copy_taken_while_another_process_writes_opens_and_verifies(
        self, tmp_path: Path,
    ) -> None:
        source = str(tmp_path / "src")
        with loomdb.open(source) as loom:
            loom.new_tree("start", session="main")
        writer = subprocess.Popen([sys.executable, "-c", WRITER, source], env=env(),
                                  stdout=subprocess.PIPE, text=True)
        try:
            assert writer.stdout is not None and writer.stdout.readline() == "ready\n"
            with loomdb.open(source) as loom:
                deadline = time.monotonic() + 60
                while len(loom.path("main")) < 25 and time.monotonic() < deadline:
                    time.sleep(0.05)  # until the writer has written blobs too
                reports = [loom.backup(str(tmp_path / f"copy{i}")) for i in range(3)]
        finally:
            writer.kill()
            writer.wait()
        sizes = []
        for i, report in enumerate(reports):
            with loomdb.open(str(tmp_path / f"copy{i}")) as copy:
                assert copy.verify().ok
                one_chain(copy)
                refs = [b["ref"] for n in copy.tree_nodes(copy.trees()[0].id)
                        for b in n.content if b["type"] == "document"]
                assert refs and all(copy.blob(r) for r in refs)
                sizes.append(len(copy.path("main")))
            assert report.nodes == sizes[-1] and report.blobs >= len(refs)
        assert sizes[0] > 1 and sizes == sorted(sizes)

    def test_the_cli_backs_up_into_sqlite_url_and_the_copy_just_opens(
        self, tmp_path: Path,
    ) -> None:
        source = str(tmp_path / "src")
        with loomdb.open(source) as loom:
            loom.new_tree("hello", session="main")
            bid = loom.put_blob(b"\x00\x01 picture", "image/png")
            loom.append("main", [{"type": "image", "ref": bid, "mime_type": "image/png"}])
        dest = f"sqlite:///{tmp_path / 'b' / 'copy.db'}"
        run = subprocess.run([sys.executable, "-m", "loomdb", "--db", source, "backup", dest,
                              "--json"], capture_output=True, text=True, env=env(), check=False)
        assert run.returncode == 0, run.stderr
        out = json.loads(run.stdout)
        assert out["nodes"] == 2 and out["blobs"] == 1 and out["verified"]
        with loomdb.open(dest) as copy:
            assert copy.blob(bid) == b"\x00\x01 picture"
            assert copy.verify().ok

    def test_an_existing_store_is_never_overwritten(self, tmp_path: Path) -> None:
        with loomdb.open(str(tmp_path / "a")) as loom:
            loom.new_tree("a", session="main")
            loom.backup(str(tmp_path / "b"))
            with pytest.raises(InvalidInput, match="already exists"):
                loom.backup(str(tmp_path / "b"))

    def test_postgres_is_pointed_at_its_own_tools(self, tmp_path: Path) -> None:
        from pg import fresh_postgres_url

        with fresh_postgres_url(migrated=True) as url, loomdb.open(url + "?blobs=file://" + str(
                tmp_path / "blobs")) as loom, pytest.raises(InvalidInput, match="pg_dump"):
            loom.backup(str(tmp_path / "copy"))
        assert not (tmp_path / "copy").exists()
