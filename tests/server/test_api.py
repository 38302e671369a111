"""The HTTP API over a real uvicorn server, on both backends: the CLI's shapes, the
status codes, one error shape, every write one transaction."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

import httpx

from loomdb import Loom

#: an import is the raw file (a form cannot send this type)
RAW = {"content-type": "application/octet-stream"}
FIXTURES = Path(__file__).parent.parent / "fixtures" / "interop"


def q(headish: str) -> str:
    return quote(headish, safe="")


def start(http: httpx.Client, session: str, text: str = "hello") -> dict[str, str]:
    r = http.post("/api/trees", json={"text": text, "session": session, "system": "be brief"})
    assert r.status_code == 201, r.text
    return dict(r.json())


def add(http: httpx.Client, at: str, text: str, role: str = "assistant") -> str:
    r = http.post(f"/api/nodes/{q(at)}/append", json={"role": role, "text": text})
    assert r.status_code == 201, r.text
    return str(r.json()["node"])


def test_health_openapi_and_docs(http: httpx.Client, name: str) -> None:
    assert http.get("/api/health").json() == {"ok": True}
    spec = http.get("/openapi.json").json()
    assert "/api/nodes/{headish}/append" in spec["paths"]
    assert http.get("/docs").status_code == 200


def test_a_conversation_through_a_session(http: httpx.Client, name: str, shared_loom: Loom) -> None:
    made = start(http, name)
    a1 = add(http, name, "Hi!")
    u2 = add(http, name, "Tell me more", role="user")
    assert http.get(f"/api/nodes/{name}/path").json() == {"nodes": [made["node"], a1, u2]}
    node = http.get(f"/api/nodes/{name}").json()
    assert node["id"] == u2 and node["role"] == "user" and node["meta"]["tags"] == []
    assert node["content"] == [{"type": "text", "text": "Tell me more"}]
    assert http.get(f"/api/nodes/{q(f'{name}~1')}").json()["id"] == a1
    assert http.get(f"/api/nodes/{q(f'{name}^')}").json()["id"] == a1
    assert http.get(f"/api/nodes/{a1}/children").json() == {"nodes": [u2]}
    assert http.get(f"/api/nodes/{made['node']}/leaves").json() == {"nodes": [u2]}
    trees = http.get("/api/trees").json()["trees"]
    assert (made["tree"], 3) in [(t["id"], t["nodes"]) for t in trees]
    assert shared_loom.path(name) == [made["node"], a1, u2]  # the library sees the same store


def test_a_stale_expect_is_a_409_and_writes_nothing(http: httpx.Client, name: str, shared_loom: Loom) -> None:
    made = start(http, name)
    add(http, name, "first")
    r = http.post(f"/api/nodes/{name}/append",
                  json={"role": "user", "text": "late", "expect": made["node"]})
    assert r.status_code == 409 and r.json()["error"]["type"] == "RefConflict"
    assert len(shared_loom.path(name)) == 2


def test_appending_at_a_node_id_branches_and_moves_nothing(http: httpx.Client, name: str) -> None:
    made = start(http, name)
    a1 = add(http, name, "one")
    a2 = add(http, made["node"], "two")
    assert http.get(f"/api/nodes/{a1}/siblings").json() == {"nodes": [a2]}
    assert http.get(f"/api/nodes/{name}").json()["id"] == a1


def test_edit_keeps_what_follows_and_selects_in_the_session(http: httpx.Client, name: str) -> None:
    start(http, name, "What is 2+2?")
    add(http, name, "5")
    last = add(http, name, "Are you sure?", role="user")
    r = http.post(f"/api/nodes/{q(f'{name}~1')}/edit", json={"text": "4"})
    assert r.status_code == 201
    new = r.json()["node"]
    assert http.get(f"/api/nodes/{name}").json()["id"] == last
    assert http.get(f"/api/nodes/{new}/versions").json()["nodes"][1] == new
    ctx = http.get(f"/api/nodes/{name}/context").json()
    assert [m["content"][0]["text"] for m in ctx["messages"][1:]] == ["What is 2+2?", "4",
                                                                       "Are you sure?"]


def test_context_in_every_format_and_with_a_budget(http: httpx.Client, name: str) -> None:
    start(http, name, "one two three")
    add(http, name, "four five")
    normalized = http.get(f"/api/nodes/{name}/context").json()
    assert normalized["messages"][0]["role"] == "system"
    openai = http.get(f"/api/nodes/{name}/context", params={"format": "openai"}).json()
    assert openai["messages"][0] == {"role": "system", "content": "be brief"}
    anthropic = http.get(f"/api/nodes/{name}/context", params={"format": "anthropic"}).json()
    assert anthropic["system"] and anthropic["messages"][0]["role"] == "user"
    completion = http.get(f"/api/nodes/{name}/context", params={"format": "completion"}).json()
    assert "four five" in completion["prompt"]
    fitted = http.get(f"/api/nodes/{name}/context", params={"budget": 1000}).json()
    assert fitted["tokens"] > 0
    bad = http.get(f"/api/nodes/{name}/context", params={"format": "yaml"})
    assert bad.status_code == 422 and bad.json()["error"]["type"] == "ValidationError"


def test_refs_fork_view_bookmark_log_and_delete(http: httpx.Client, name: str) -> None:
    made = start(http, name)
    add(http, name, "answer")
    r = http.post("/api/refs", json={"name": f"{name}/alt", "kind": "session", "at": made["node"]})
    assert r.status_code == 201
    assert r.json()["origin"] == {"forked_from": {"ref": None, "node": made["node"]}}
    add(http, f"{name}/alt", "other answer")
    assert http.post("/api/refs", json={"name": f"{name}-v", "kind": "view", "at": name}).status_code == 201
    assert http.post("/api/refs", json={"name": f"{name}-m", "kind": "bookmark", "at": name}).status_code == 201
    names = {(x["name"], x["kind"]) for x in http.get("/api/refs", params={"tree": made["tree"]}).json()["refs"]}
    assert names == {(name, "session"), (f"{name}/alt", "session"), (f"{name}-v", "view"),
                     (f"{name}-m", "bookmark")}
    log = http.get(f"/api/refs/{q(f'{name}/alt')}/log").json()
    assert [m["reason"] for m in log["moves"]] == ["create session", "append assistant"]
    assert http.delete(f"/api/refs/{q(f'{name}/alt')}").json() == {"deleted": f"{name}/alt"}
    assert http.get(f"/api/refs/{q(f'{name}/alt')}").status_code == 404
    dup = http.post("/api/refs", json={"name": name, "kind": "session", "at": name})
    assert dup.status_code == 400 and "already exists" in dup.json()["error"]["message"]


def test_overlay_in_one_call(http: httpx.Client, name: str) -> None:
    start(http, name)
    r = http.post(f"/api/nodes/{name}/overlay",
                  json={"bookmark": f"{name}-start", "tags": ["x", "y"], "excluded": True})
    assert r.json() == {"bookmarked": True, "label": f"{name}-start", "pruned": False,
                        "excluded": True, "tags": ["x", "y"]}
    assert http.post(f"/api/nodes/{name}/overlay", json={"tags": ["y"]}).json()["tags"] == ["y"]


def test_a_failed_overlay_changes_nothing(http: httpx.Client, name: str) -> None:
    start(http, name)
    r = http.post(f"/api/nodes/{name}/overlay", json={"tags": ["kept"], "bookmark": "bad name!"})
    assert r.status_code == 400
    assert http.get(f"/api/nodes/{name}").json()["meta"]["tags"] == []


def test_export_in_every_format_and_import_it_back(http: httpx.Client, name: str) -> None:
    made = start(http, name, "export me")
    add(http, name, "# Title\n\nbody")
    native = http.get(f"/api/trees/{made['tree']}/export")
    assert native.status_code == 200 and native.headers["content-type"].startswith("application/json")
    md = http.get(f"/api/trees/{made['tree']}/export", params={"format": "markdown"})
    assert "export me" in md.text
    lines = http.get(f"/api/trees/{made['tree']}/export", params={"format": "openai-jsonl"})
    assert json.loads(lines.text.splitlines()[0])["messages"][-1]["content"] == "# Title\n\nbody"
    chatgpt = http.get(f"/api/trees/{made['tree']}/export", params={"format": "chatgpt"}).json()
    assert chatgpt[0]["title"] == "export me"
    again = http.post("/api/import", content=json.dumps(chatgpt).encode(),
                      params={"filename": "back.json"}, headers=RAW)
    assert again.status_code == 201 and again.json()["trees"]
    assert http.get(f"/api/trees/{made['tree']}/export", params={"format": "pdf"}).status_code == 400


def test_import_a_real_sample(http: httpx.Client, name: str) -> None:
    sample = FIXTURES / "claude_export_first10.json"
    r = http.post("/api/import", content=sample.read_bytes(), params={"filename": sample.name}, headers=RAW)
    assert r.status_code == 201, r.text
    report = r.json()
    assert len(report["trees"]) == 10 and report["errors"] == []
    listed = {t["id"] for t in http.get("/api/trees").json()["trees"]}
    assert set(report["trees"]) <= listed
    bad = http.post("/api/import", content=b"not json at all", params={"filename": "x.json"}, headers=RAW)
    assert bad.status_code == 400 and bad.json()["error"]["type"] == "InvalidInput"


def test_buffer_document_and_draft(http: httpx.Client, name: str) -> None:
    r = http.post("/api/trees", json={"text": "Once upon a time", "session": name,
                                      "mode": "buffer"})
    assert r.status_code == 201
    doc = http.post(f"/api/buffer/{name}", json={"append": ", there was"}).json()
    assert doc == {"text": "Once upon a time, there was", "draft": ", there was"}
    shown = http.get(f"/api/buffer/{name}", params={"authorship": "true"}).json()
    assert shown["text"] == "Once upon a time, there was"
    assert [s["node"] is None for s in shown["spans"]] == [False, True]
    assert http.post(f"/api/buffer/{name}", json={"set": "!"}).json()["draft"] == "!"
    alts = http.get(f"/api/buffer/{name}/alternatives", params={"index": "0"}).json()
    assert alts["index"] == 0 and alts["branches"][0]["current"] is True
    both = http.post(f"/api/buffer/{name}", json={"set": "a", "append": "b"})
    assert both.status_code == 400


def test_verify(http: httpx.Client, name: str) -> None:
    start(http, name)
    report = http.post("/api/verify").json()
    assert report["ok"] is True and report["checked"] >= 1 and report["broken"] == []


def test_user_mistakes_are_never_500(http: httpx.Client, name: str) -> None:
    start(http, name)
    cases = [
        ("GET", "/api/nodes/nothing-here", None, 404),
        ("GET", f"/api/nodes/{q(f'{name}~9')}", None, 400),
        ("POST", f"/api/nodes/{name}/append", {"role": "robot", "text": "x"}, 400),
        ("POST", f"/api/nodes/{name}/append", {"role": "user"}, 400),
        ("POST", f"/api/nodes/{name}/append", {"role": "user", "text": "x", "extra": 1}, 422),
        ("POST", f"/api/nodes/{name}/append", {"role": "user", "content": [{"type": "nope"}]}, 400),
        ("POST", "/api/trees", {"text": "x", "mode": "poem"}, 422),
        ("POST", "/api/trees", {"text": "x", "session": "bad name"}, 400),
        ("POST", "/api/refs", {"name": "n", "kind": "session", "at": "nowhere"}, 404),
        ("DELETE", "/api/refs/nowhere", None, 404),
        ("GET", "/api/refs/nowhere/log", None, 404),
        ("POST", f"/api/nodes/{name}/generate", {"n": 0}, 422),
        ("POST", f"/api/nodes/{name}/generate", {"models": ["no-such-model"]}, 400),
        ("GET", "/api/trees/ZZZZZZZZ/export", None, 404),
    ]
    for method, path, body, status in cases:
        r = http.request(method, path, json=body)
        assert r.status_code == status, (method, path, body, r.status_code, r.text)
        error = r.json()["error"]
        assert set(error) == {"type", "message"} and error["message"], (path, error)
    raw = http.post("/api/trees", content=b"{not json", headers={"content-type": "application/json"})
    assert raw.status_code == 422
