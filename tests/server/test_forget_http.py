"""Forgetting over HTTP on a live server, both backends: DELETE a node (409 without
force when refs are in the way), DELETE a tree, POST redact, GET the record (the
users' side is in test_forget_users.py: a store with users needs its own server)."""

from __future__ import annotations

import httpx

from loomdb import Loom


def test_delete_redact_and_the_record(http: httpx.Client, shared_loom: Loom, name: str) -> None:
    made = http.post("/api/trees", json={"text": "http q0", "session": name}).json()
    a1 = http.post(f"/api/nodes/{name}/append", json={"role": "assistant",
                                                      "text": "http-secret-a1"}).json()["node"]
    q2 = http.post(f"/api/nodes/{name}/append", json={"role": "user",
                                                      "text": "http q2"}).json()["node"]
    r = http.delete(f"/api/nodes/{q2}")
    assert r.status_code == 409 and r.json()["error"]["type"] == "RefsInTheWay"
    assert http.get(f"/api/nodes/{q2}").status_code == 200  # nothing written
    r = http.post(f"/api/nodes/{a1}/redact", json={"reason": "pii"})
    assert r.status_code == 200, r.text
    assert r.json()["ids"] == [a1]
    ctx = http.get(f"/api/nodes/{name}/context").json()
    assert [m["content"][0]["text"] for m in ctx["messages"]] == ["http q0", "[redacted]",
                                                                   "http q2"]
    r = http.delete(f"/api/nodes/{q2}", params={"force": "true", "reason": "gone"})
    assert r.status_code == 200 and r.json()["refs"] == [name]
    assert http.get(f"/api/nodes/{q2}").status_code == 404
    lines = http.get("/api/forgotten", params={"tree": made["tree"]}).json()
    assert [(e["action"], e["reason"]) for e in lines] == [("delete", "gone"), ("redact", "pii")]
    assert shared_loom.verify(made["tree"]).ok
    r = http.delete(f"/api/trees/{made['tree']}")
    assert r.status_code == 200 and r.json()["rule"] == "delete"
    assert made["tree"] not in {t["id"] for t in http.get("/api/trees").json()["trees"]}
    assert made["tree"] in {e["id"] for e in http.get("/api/trash").json()}
    assert http.post(f"/api/trash/{made['tree']}/restore").status_code == 200
    assert made["tree"] in {t["id"] for t in http.get("/api/trees").json()["trees"]}
    r = http.post("/api/holds", json={"target": f"tree:{made['tree']}"})
    assert r.status_code == 200 and r.json()["tree"] == made["tree"]
    assert http.delete(f"/api/trees/{made['tree']}", params={"now": "true"}).status_code == 400
    assert http.delete(f"/api/holds/tree:{made['tree']}").status_code == 200
    r = http.delete(f"/api/trees/{made['tree']}", params={"now": "true"})
    assert r.status_code == 200 and r.json()["trees_deleted"] == [made["tree"]]


def test_bad_input_is_one_line_never_a_500(http: httpx.Client, name: str) -> None:
    http.post("/api/trees", json={"text": "x", "session": name})
    assert http.delete("/api/nodes/no-such-node").status_code == 404
    assert http.delete("/api/trees/NOSUCHTREE").status_code == 404
    r = http.post(f"/api/nodes/{name}/redact", json={"reason": "x" * 1001})
    assert r.status_code == 422
    r = http.post(f"/api/nodes/{name}/redact", json={"other": 1})
    assert r.status_code == 422
    assert http.get("/api/forgotten", params={"limit": 0}).status_code == 422


