"""Prompt pieces over HTTP with users, on a live server over each backend: a user adds,
lists, shows and logs their pieces, starts a thread from their template and names
their pieces in content; another user's piece is the same 404 as an unknown one, and
naming it in content is refused in one line with nothing written."""

from __future__ import annotations

import json
import secrets

from live import client

from loomdb import Loom
from loomdb.users import add_user


def test_pieces_over_http(served: tuple[Loom, str]) -> None:
    loom, base = served
    tag = secrets.token_hex(3)
    _, ann = add_user(loom, f"ann-{tag}")
    _, bob = add_user(loom, f"bob-{tag}")
    name, tpl = f"rubric-{tag}", f"tpl-{tag}"
    with client(base, ann) as c:
        r = c.post("/api/pieces", json={"name": name, "text": "Be exact."})
        assert r.status_code == 201 and r.json()["version"] == 1, r.text
        assert c.post("/api/pieces", json={"name": name, "text": "Be exact."}).json()["added"] is False
        c.post("/api/pieces", json={"name": name, "text": "Be exacting."})
        assert [v["version"] for v in c.get(f"/api/pieces/{name}/log").json()["versions"]] == [1, 2]
        assert c.get(f"/api/pieces/{name}@1").json()["text"] == "Be exact."
        assert [p["name"] for p in c.get("/api/pieces").json()["pieces"]] == [name]
        r = c.post("/api/pieces", json={"name": tpl, "kind": "template",
                                        "text": json.dumps({"system_piece": f"{name}@1"})})
        assert r.status_code == 201, r.text
        made = c.post("/api/trees", json={"text": "hi", "template": tpl, "session": f"s-{tag}"})
        assert made.status_code == 201, made.text
        r = c.post(f"/api/nodes/s-{tag}/append", json={"role": "user",
                                                       "content": [{"piece": name}]})
        assert r.status_code == 201, r.text
        ctx = c.get(f"/api/nodes/s-{tag}/context").json()
        assert [m["content"][0]["text"] for m in ctx["messages"]] == ["Be exact.", "hi",
                                                                      "Be exacting."]
        assert len(c.get(f"/api/pieces/{name}/used-by").json()["used_by"]) == 2
        bad = c.post("/api/pieces", json={"name": "x" * 101, "text": "t"})
        assert bad.status_code == 400 and "1-100" in bad.text
    with client(base, bob) as c:
        assert c.get(f"/api/pieces/{name}").status_code == 404
        assert c.get(f"/api/pieces/{name}/log").status_code == 404
        assert c.get("/api/pieces").json()["pieces"] == []
        taken = c.post("/api/pieces", json={"name": name, "text": "mine"})
        assert taken.status_code == 400 and "taken" in taken.text
        made = c.post("/api/trees", json={"text": "hello", "session": f"b-{tag}"}).json()
        before = len(loom.tree_nodes(made["tree"]))
        r = c.post(f"/api/nodes/b-{tag}/append", json={"role": "user",
                                                       "content": [{"piece": name}]})
        assert r.status_code == 400 and "names no piece" in r.json()["error"]["message"]
        assert c.post("/api/trees", json={"text": "x", "template": tpl}).status_code == 404
        assert len(loom.tree_nodes(made["tree"])) == before
