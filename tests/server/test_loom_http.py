"""Loom mode's routes over HTTP, both backends, a live server: authorship spans say
who wrote them (user, model, edit, draft); a span edited through a session; a switch
to another branch; single-token looming with the local model (the likeliest next
tokens, best first, nothing written); each bad input refused in one line."""

from __future__ import annotations

import math

import httpx
import pytest
from live import must

from loomdb import Loom

pytestmark = [pytest.mark.xdist_group("local-model"), pytest.mark.slow]


def story(lm: Loom, session: str) -> tuple[str, str, str]:
    """A buffer document: a person's opening, two model continuations under it (the
    session on the first); answers (root, first, second)."""
    _, root = lm.new_tree("Once upon a time", mode="buffer", session=session)
    first = lm.append(session, " there was a king.", role="assistant", author="m",
                      source="agent")
    second = lm.append(root.id, " a dragon slept.", role="assistant", author="m",
                       source="agent")
    return root.id, first.id, second.id


def test_spans_say_who_wrote_them_and_a_span_is_edited(
        served: tuple[Loom, str], http: httpx.Client, name: str) -> None:
    lm = served[0]
    story(lm, name)
    must(http.post(f"/api/buffer/{name}", json={"set": " The end."}))
    doc = must(http.get(f"/api/buffer/{name}", params={"authorship": "true"}))
    assert [(doc["text"][s["start"]:s["end"]], s["kind"]) for s in doc["spans"]] == [
        ("Once upon a time", "user"), (" there was a king.", "model"), (" The end.", "draft")]
    edited = must(http.post(f"/api/buffer/{name}/span", params={"authorship": "true"},
                            json={"start": 5, "end": 9, "text": "in"}))
    assert edited["text"] == "Once in a time there was a king. The end."
    assert "edit" in [s["kind"] for s in edited["spans"]]
    assert lm.buffer.text(name) == "Once in a time there was a king. The end."
    for body, status in (({"start": 5, "end": 999, "text": "x"}, 400),
                         ({"start": -1, "end": 2, "text": "x"}, 422),
                         ({"start": 0, "end": 1}, 422)):
        r = http.post(f"/api/buffer/{name}/span", json=body)
        assert r.status_code == status, r.text
    assert lm.buffer.text(name) == "Once in a time there was a king. The end."


def test_a_switch_shows_another_branch(
        served: tuple[Loom, str], http: httpx.Client, name: str) -> None:
    lm = served[0]
    _, first, second = story(lm, name)
    alts = must(http.get(f"/api/buffer/{name}/alternatives", params={"index": "-1"}))
    assert [b["node"] for b in alts["branches"]] == [first, second]
    moved = must(http.post(f"/api/buffer/{name}/switch", json={"node": second}))
    assert moved["head"] == second and moved["moved"] is True
    assert lm.buffer.text(name) == "Once upon a time a dragon slept."
    assert http.post(f"/api/buffer/{name}/switch", json={"node": "nowhere"}).status_code == 404
    assert http.post(f"/api/buffer/{name}/switch", json={}).status_code == 422


def test_next_tokens_are_the_likeliest_and_nothing_is_written(
        served: tuple[Loom, str], http: httpx.Client, name: str) -> None:
    lm = served[0]
    root, _, _ = story(lm, name)
    must(http.post(f"/api/buffer/{name}", json={"set": " He"}))
    tree = lm.node(root).tree
    count = len(lm.tree_nodes(tree))
    tokens = must(http.post(f"/api/buffer/{name}/next", json={"top": 5}))["tokens"]
    assert len(tokens) == 5
    probabilities = [t["probability"] for t in tokens]
    assert probabilities == sorted(probabilities, reverse=True) and sum(probabilities) <= 1.0001
    for t in tokens:
        assert isinstance(t["token"], str) and t["token"]
        assert t["probability"] == pytest.approx(math.exp(t["logprob"]))
    assert len(lm.tree_nodes(tree)) == count and lm.buffer.draft(name) == " He"
    for body, status in (({"top": 0}, 422), ({"top": 21}, 422), ({"models": ["a", "b"]}, 422),
                         ({"models": ["openai:gpt-4o"]}, 400)):
        r = http.post(f"/api/buffer/{name}/next", json=body)
        assert r.status_code == status, r.text
    lm.new_tree("a chat, not a document", session=f"{name}-chat")
    refused = http.post(f"/api/buffer/{name}-chat/next", json={})
    assert refused.status_code == 400 and "buffer" in refused.json()["error"]["message"]
    assert http.post("/api/buffer/nowhere/next", json={}).status_code == 404
