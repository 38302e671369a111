"""Issue 32, item 8: a blob is readable by whoever knows its hash.

A user's write could name any stored blob by `ref` and then read its bytes through
their own message (`GET /api/blobs/{ref}?node=...`). Now content a user writes names a
blob by `ref` only when a message or document of theirs already holds it; otherwise
the bytes must come as `data`, and the refusal (400, naming the field) is the same
whether the blob exists or not. An import names only the blobs it carries. The
operator is unaffected. Both backends, a live server; each way content is written:
an append, an edit, a nested tool result, a thumbnail, a document, a native import."""

from __future__ import annotations

import base64
import io
import json
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from live import client, must

import loomdb
from loomdb import Loom
from loomdb.users import Owner, add_user

from .import_world import upload

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")


@dataclass
class World:
    lm: Loom
    base: str
    token: str  # alice's
    session: str  # hers
    blob: str  # bob's secret image
    secret: bytes


@pytest.fixture(scope="module")
def world(served: tuple[Loom, str]) -> World:
    lm, base = served
    alice, token = add_user(lm, "alice")
    bob, _ = add_user(lm, "bob")
    secret = PNG + b"bob's private picture" + secrets.token_bytes(8)  # bytes after IEND
    bob_door = lm.as_(Owner(lm, bob))
    _, root = bob_door.trees.new("my picture", session="bob-pics")
    node = bob_door.nodes.append("bob-pics", [{"type": "image", "mime_type": "image/png",
                                               "data": base64.b64encode(secret).decode()}])
    blob = node.content[0]["ref"]
    lm.as_(Owner(lm, alice)).trees.new("alice's thread", session="alice-main")
    return World(lm, base, token, "alice-main", blob, secret)


def _image(ref: str) -> dict[str, Any]:
    return {"type": "image", "mime_type": "image/png", "ref": ref}


def _shapes(ref: str) -> dict[str, tuple[list[dict[str, Any]], str]]:
    """Each place content may name a blob: (blocks, the field the refusal names)."""
    return {
        "ref": ([_image(ref)], "content[0].ref"),
        "second block": ([{"type": "text", "text": "look"}, _image(ref)], "content[1].ref"),
        "thumbnail": ([{**_image(ref), "ref": ref, "thumbnail_ref": ref}], "content[0]"),
        "tool result": ([{"type": "tool_result", "tool_use_id": "call_1",
                          "content": [_image(ref)]}], "content[0].content[0].ref"),
    }


def test_a_user_names_no_blob_they_do_not_hold(world: World) -> None:
    unknown = "sha256:" + secrets.token_hex(32)
    with client(world.base, world.token) as c:
        before = must(c.get(f"/api/nodes/{world.session}"))["id"]
        for name, (blocks, field) in _shapes(world.blob).items():
            answers = []
            for ref in (world.blob, unknown):  # bob's blob, and one that does not exist
                blocks_now = json.loads(json.dumps(blocks).replace(world.blob, ref))
                for r in (c.post(f"/api/nodes/{world.session}/append",
                                 json={"role": "user", "content": blocks_now}),
                          c.post(f"/api/nodes/{world.session}/edit", json={"content": blocks_now}),
                          c.post("/api/documents", json={"name": f"d-{secrets.token_hex(3)}",
                                                         "content": blocks_now})):
                    assert r.status_code == 400, (name, r.text)
                    assert field in r.json()["error"]["message"], (name, r.text)
                    answers.append(r.json()["error"]["message"].replace(ref, "REF"))
            assert len(set(answers)) == 1, answers  # the same answer, whatever the blob
        assert must(c.get(f"/api/nodes/{world.session}"))["id"] == before
        assert c.get(f"/api/blobs/{world.blob}", params={"node": before}).status_code == 404


def test_bytes_make_a_blob_theirs_and_the_operator_is_unaffected(world: World) -> None:
    data = base64.b64encode(world.secret).decode()
    with client(world.base, world.token) as c:
        # sending the bytes is holding them: the same blob, now hers too
        sent = must(c.post(f"/api/nodes/{world.session}/append",
                           json={"role": "user", "content": [
                               {"type": "image", "mime_type": "image/png", "data": data}]}), 201)
        again = must(c.post(f"/api/nodes/{world.session}/append",
                            json={"role": "user", "content": [_image(world.blob)]}), 201)
        got = c.get(f"/api/blobs/{world.blob}", params={"node": again["node"]})
        assert got.status_code == 200 and got.content == world.secret
        assert sent["node"] != again["node"]
    lm = world.lm
    _, root = lm.new_tree("the operator's", session=f"op-{secrets.token_hex(3)}")
    assert lm.append(root.id, [_image(world.blob)]).content[0]["ref"] == world.blob


def test_an_import_names_only_the_blobs_it_carries(world: World, tmp_path: Path) -> None:
    with loomdb.open(str(tmp_path / "scratch")) as scratch:
        scratch.new_tree("mine", session="mine")
        scratch.append("mine", [{"type": "image", "mime_type": "image/png",
                                 "data": base64.b64encode(PNG).decode()}])
        out = io.StringIO()
        scratch.export(out, format="jsonl")
    doc = json.loads(out.getvalue())
    own = doc["nodes"][-1]["content"][0]["ref"]
    # forged: the node names bob's blob (its ids and hashes made again in a store of
    # the attacker's, where that blob is theirs), and the document carries only theirs
    with loomdb.open(str(tmp_path / "forger")) as forger:
        forger.new_tree("mine", session="mine")
        forger.append("mine", [{"type": "image", "mime_type": "image/png",
                                "data": base64.b64encode(world.secret).decode()}])
        forged = io.StringIO()
        forger.export(forged, format="jsonl")
    bad = json.loads(forged.getvalue())
    bad["blobs"] = [b for b in doc["blobs"] if b["id"] == own]
    r = upload(world.base, "forged.jsonl", (json.dumps(bad) + "\n").encode(), world.token)
    assert r.status_code == 201, r.text
    report = r.json()
    assert report["trees"] == [] and report["errors"], report
    assert "does not carry" in json.dumps(report["errors"])
    assert world.lm.backend.execute("SELECT count(*) FROM trees WHERE id = ?",
                                    (bad["tree"]["id"],))[0][0] == 0
    # the same document carrying its blob imports whole
    r = upload(world.base, "own.jsonl", (json.dumps(doc) + "\n").encode(), world.token)
    assert r.status_code == 201 and r.json()["trees"] == [doc["tree"]["id"]], r.text
