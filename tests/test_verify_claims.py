"""`verify` covers what the chain claims outside the node rows: a generation's raw
response and the bytes of every blob a node points at. Tests tamper with real rows and
real files, then read the report (library and `verify --json`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers import thread
from loomdb import Loom
from loomdb.generation import store
from loomdb.providers.base import Completion


def generated(loom: Loom) -> tuple[str, str]:
    """A stored answer with its provenance record, written through the real store path
    (the completion is built by hand: no model is needed to test the record)."""
    thread(loom, ["Say hi."])
    pos = loom.resolve("main")
    answer = Completion(
        content=[{"type": "text", "text": "hi"}], stop_reason="end_turn",
        usage={"input_tokens": 3, "output_tokens": 1}, model="m", provider="openai",
        provider_request={"model": "m"}, raw_response={"choices": [{"text": "hi"}]},
        latency_ms=5,
    )
    node = store(loom, pos, loom.context(pos), [answer]).nodes[0]
    prov = loom.node(node.id).provenance
    assert prov is not None
    return node.id, prov["generation"]


def blob_path(loom: Loom, bid: str) -> Path:
    store_ = loom.blobs
    return Path(store_._key(bid) if hasattr(store_, "_key") else store_._path(bid))


class TestGenerations:
    def test_an_intact_generation_verifies(self, loom: Loom) -> None:
        generated(loom)
        assert loom.verify().ok

    def test_a_changed_raw_response_is_named(self, loom: Loom) -> None:
        node, gen = generated(loom)
        forged = json.dumps({"choices": [{"text": "something else"}]})
        loom.backend.execute(
            f"UPDATE generations SET raw_response = '{forged}' WHERE id = '{gen}'")
        broken = loom.verify().broken
        assert [(b["kind"], b["node"], b["generation"]) for b in broken] == [
            ("generation", node, gen)]
        assert "raw response" in broken[0]["reason"]

    def test_a_deleted_generation_record_is_named(self, loom: Loom) -> None:
        node, gen = generated(loom)
        loom.backend.execute(f"DELETE FROM generations WHERE id = '{gen}'")
        broken = loom.verify().broken
        assert [(b["kind"], b["node"]) for b in broken] == [("generation", node)]
        assert "missing" in broken[0]["reason"]


class TestBlobs:
    def _image_thread(self, loom: Loom) -> tuple[str, str]:
        _, root = loom.new_tree("look", session="main")
        bid = loom.put_blob(b"\x89PNG fake image bytes", "image/png")
        node = loom.append("main", [{"type": "text", "text": "see"},
                                    {"type": "image", "ref": bid, "mime_type": "image/png"}])
        return node.id, bid

    def test_intact_blobs_verify(self, loom: Loom) -> None:
        self._image_thread(loom)
        assert loom.verify().ok

    def test_changed_blob_bytes_are_named(self, loom: Loom) -> None:
        node, bid = self._image_thread(loom)
        blob_path(loom, bid).write_bytes(b"other bytes")
        broken = loom.verify().broken
        assert [(b["kind"], b["blob"], b["node"]) for b in broken] == [("blob", bid, node)]
        assert "no longer match" in broken[0]["reason"]

    def test_a_missing_blob_is_named(self, loom: Loom) -> None:
        node, bid = self._image_thread(loom)
        blob_path(loom, bid).unlink()
        broken = loom.verify().broken
        assert [(b["kind"], b["blob"]) for b in broken] == [("blob", bid)]
        assert "missing" in broken[0]["reason"]


class TestKinds:
    def test_verify_json_lists_every_broken_item_with_its_kind(
        self, loom: Loom, store_url: str,
    ) -> None:
        node, gen = generated(loom)
        bid = loom.put_blob(b"a document", "text/plain")
        doc = loom.append("main", [{"type": "document", "ref": bid, "mime_type": "text/plain"}],
                          role="user")
        after = loom.append("main", "and then", role="assistant")
        loom.backend.execute(f"UPDATE generations SET raw_response = '[]' WHERE id = '{gen}'")
        blob_path(loom, bid).write_bytes(b"changed")
        loom.backend.execute(f"UPDATE nodes SET author = 'x' WHERE id = '{after.id}'")
        root = loom.path("main")[0]
        loom.backend.execute(
            f"UPDATE nodes SET created_at = '2020-01-01T00:00:00.000000Z' WHERE id = '{root}'")
        loom.close()
        run = subprocess.run(
            [sys.executable, "-m", "loomdb", "--db", store_url, "verify", "--json"],
            capture_output=True, text=True, env=dict(os.environ), timeout=60, check=False)
        assert run.returncode == 1, run.stderr
        kinds = {(b["kind"], b["node"]) for b in json.loads(run.stdout)["broken"]}
        assert {("chain", root), ("chain", after.id), ("inherited", node), ("inherited", doc.id),
                ("generation", node), ("blob", doc.id)} <= kinds
        assert {k for k, _ in kinds} == {"chain", "inherited", "generation", "blob"}
