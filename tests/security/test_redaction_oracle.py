"""Issue 32, item 7: redacting must not answer whether another user holds the same text.

A user's redaction was refused when another user's node held the same content (the
same words: the same content id), and done otherwise: one unlimited yes/no per guess.
Now a user's redaction acts on their own copies only: the nodes of their trees read as
the tombstone, and anyone else's node, document or image with the same content keeps
it. What it does and answers is the same whoever else holds the text. An imported
tombstone erases nothing of anyone else's either (it redacted every copy of its
content id). Both backends, a live server; text, a repeated copy, an image, the
operator's tree, a document, verify and a copy of the store."""

from __future__ import annotations

import base64
import io
import json
from pathlib import Path
from typing import Any

from live import client, must

import loomdb
from loomdb import Loom
from loomdb.model import Node
from loomdb.users import Owner, User, add_user

from .import_world import upload

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")


def _text(c: Any, node: str) -> Any:
    return must(c.get(f"/api/nodes/{node}"))["content"][0].get("text")


def _shape(answer: dict[str, Any]) -> dict[str, Any]:
    """What an answer says beyond the ids of what it named."""
    return {k: (len(v) if isinstance(v, list) else v) for k, v in answer.items()
            if k not in ("target", "log", "trees", "ids", "shared")} | {
        "ids": len(answer["ids"]), "shared": len(answer["shared"])}


def test_a_users_redaction_is_the_same_whoever_else_holds_the_text(
        served: tuple[Loom, str], tag: str) -> None:
    lm, base = served
    alice, token = add_user(lm, f"alice-{tag}")
    bob, _ = add_user(lm, f"bob-{tag}")
    held, alone = f"bob's words {tag}", f"nobody's words {tag}"
    image = PNG + tag.encode()
    bob_door = lm.as_(Owner(lm, bob))
    _, bob_text = bob_door.trees.new(held, session=f"bob-{tag}")
    bob_image = bob_door.nodes.append(f"bob-{tag}", [{"type": "image", "mime_type": "image/png",
                                                      "data": base64.b64encode(image).decode()}])
    bob_door.documents.new(f"notes-{tag}", held)
    _, operators = lm.new_tree(held, session=f"op-{tag}")
    with client(base, token) as c:
        tree = must(c.post("/api/trees", json={"text": "mine", "session": f"a-{tag}"}), 201)["tree"]
        made: dict[str, list[str]] = {}
        for name, content in (("held", held), ("alone", alone),
                              ("image", [{"type": "image", "mime_type": "image/png",
                                          "data": base64.b64encode(image).decode()}]),
                              ("image alone", [{"type": "image", "mime_type": "image/png",
                                                "data": base64.b64encode(PNG + b"x" + tag.encode()).decode()}])):
            body = {"text": content} if isinstance(content, str) else {"content": content}
            made[name] = [must(c.post(f"/api/nodes/a-{tag}/append",
                                      json={"role": "user", **body}), 201)["node"] for _ in (1, 2)]
        answers = {}
        for name, (first, second) in made.items():
            r = c.post(f"/api/nodes/{first}/redact", json={})
            assert r.status_code == 200, (name, r.text)
            answers[name] = r.json()
            assert answers[name]["trees"] == [tree] and sorted(answers[name]["ids"]) == sorted(
                [first, second]), answers[name]
            for node in (first, second):
                assert _text(c, node) == "[redacted]", name
        assert _shape(answers["held"]) == _shape(answers["alone"])
        assert _shape(answers["image"]) == _shape(answers["image alone"])
        assert answers["image"]["blobs"] == [] and answers["image alone"]["blobs"] == []
        assert must(c.post("/api/verify"))["ok"]
    mine = lm.verify(tree).to_json()
    assert mine["ok"] and len(mine["redacted"]) == 8, mine
    # everyone else keeps theirs: bob's message, image and document, the operator's tree
    bob_sees = lm.as_(Owner(lm, bob))
    assert bob_sees.nodes.get(bob_text.id).content[0]["text"] == held
    assert bob_sees.nodes.blob(bob_image.id, bob_image.content[0]["ref"])[0] == image
    assert bob_sees.documents.show(f"notes-{tag}").to_json()["text"] == held
    assert lm.node(operators.id).content[0]["text"] == held
    assert lm.verify().ok


def _two(lm: Loom, tag: str, words: str) -> tuple[User, str, Node]:
    """A user (and their token), and another user's message holding `words`."""
    one, token = add_user(lm, f"one-{tag}")
    other, _ = add_user(lm, f"other-{tag}")
    _, theirs = lm.as_(Owner(lm, other)).trees.new(words, session=f"other-{tag}")
    return one, token, theirs


def test_an_imported_tombstone_erases_no_one_elses_copy(
        served: tuple[Loom, str], tag: str, tmp_path: Path) -> None:
    lm, base = served
    words = f"dan's diary {tag}"
    _, token, dans = _two(lm, tag, words)
    with loomdb.open(str(tmp_path / "scratch")) as scratch:  # the same words, redacted there
        scratch.new_tree("hello", session="s")
        node = scratch.append("s", words, role="assistant")
        scratch.forget.redact(node.id)
        out = io.StringIO()
        scratch.export(out, format="jsonl")
    r = upload(base, "tombstone.jsonl", out.getvalue().encode(), token)
    assert r.status_code == 201 and not r.json()["errors"], r.text
    assert lm.node(dans.id).content[0]["text"] == words
    assert lm.node(node.id).content[0]["text"] == "[redacted]"
    assert lm.verify().ok


def test_a_copy_of_the_store_keeps_each_users_redaction_their_own(
        served: tuple[Loom, str], tag: str, tmp_path: Path) -> None:
    lm, base = served
    words = f"shared words {tag}"
    erin, token, fays = _two(lm, tag, words)
    _, erins = lm.as_(Owner(lm, erin)).trees.new(words, session=f"erin-{tag}")
    with client(base, token) as c:
        must(c.post(f"/api/nodes/{erins.id}/redact", json={}))
    with loomdb.open(str(tmp_path / "copy")) as copy:
        lm.copy_to(copy)  # verified there before it commits
        assert copy.node(fays.id).content[0]["text"] == words
        assert copy.node(erins.id).content[0]["text"] == "[redacted]"
        report = copy.verify()
        assert report.ok and erins.id in json.dumps(report.to_json()["redacted"])
