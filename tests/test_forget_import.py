"""Nothing comes back: importing an export again after a delete or a redaction does not
bring forgotten messages back (skipped and reported), on both backends, for a foreign
format and for loomdb's own export; a tree with tombstones exports and imports with
its tombstones."""

from __future__ import annotations

import io
from pathlib import Path

from helpers import texts_of, thread
from loomdb import Loom
from loomdb.forget import service as F

FIXTURES = Path(__file__).parent / "fixtures" / "interop"
CHATGPT = FIXTURES / "chatgpt_fixture_mitkury_example-conversation.json"


def all_ids(loom: Loom) -> set[str]:
    return {n.id for t in loom.trees() for n in loom.tree_nodes(t.id)}


class TestForeignFormat:
    def test_deleted_messages_stay_deleted(self, loom: Loom) -> None:
        first = loom.import_file(CHATGPT)
        assert first.ok
        tree = loom.trees()[0].id
        nodes = loom.tree_nodes(tree)
        leaf = max(nodes, key=lambda n: n.depth)
        victim = leaf.parent
        assert victim is not None
        done = F.delete(loom, victim, force=True)
        before = all_ids(loom)
        again = loom.import_file(CHATGPT)
        assert again.ok
        assert all_ids(loom) == before
        assert not set(done.ids) & all_ids(loom)
        assert again.to_json()["skipped"] >= len(done.ids)
        assert loom.verify().ok

    def test_a_deleted_tree_stays_deleted(self, loom: Loom) -> None:
        loom.import_file(CHATGPT)
        tree = loom.trees()[0].id
        F.delete(loom, f"tree:{tree}", force=True)
        again = loom.import_file(CHATGPT)
        assert again.ok and not loom.trees()
        assert "deleted" in str(again.to_json())


class TestNativeExport:
    def export(self, loom: Loom, tree: str) -> str:
        out = io.StringIO()
        loom.export(out, target=tree, format="json")
        return out.getvalue()

    def test_deleted_nodes_stay_deleted(self, loom: Loom, tmp_path: Path) -> None:
        ids = thread(loom, ["q0", "a1", "q2 deleted", "a3 deleted"])
        tree = loom.resolve(ids[0]).tree
        path = tmp_path / "export.json"
        path.write_text(self.export(loom, tree))
        F.delete(loom, ids[2], force=True)
        report = loom.import_file(path)
        assert report.ok, report.to_json()
        assert all_ids(loom) == set(ids[:2])
        assert loom.verify().ok

    def test_tombstones_travel(self, loom: Loom, tmp_path: Path) -> None:
        ids = thread(loom, ["q0", "tombstone-secret", "q2"])
        tree = loom.resolve(ids[0]).tree
        F.redact(loom, ids[1])
        text = self.export(loom, tree)
        assert "tombstone-secret" not in text
        (tmp_path / "export.json").write_text(text)
        F.delete(loom, f"tree:{tree}", force=True)
        # into another store: the tombstone arrives as a tombstone and verifies
        with Loom.open(tmp_path / "other") as other:
            report = other.import_file(tmp_path / "export.json")
            assert report.ok, report.to_json()
            assert texts_of(other, ids[2]) == ["q0", "[redacted]", "q2"]
            verified = other.verify()
            assert verified.ok and [r["node"] for r in verified.redacted] == [ids[1]]
