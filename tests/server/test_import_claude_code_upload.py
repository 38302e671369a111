"""A Claude Code session file uploaded to a live server (`POST /api/import`): imported
under the session its lines name, reading nothing beside the upload's temporary file."""

from __future__ import annotations

from pathlib import Path

import httpx

from loomdb import Loom

SESSIONS = Path(__file__).parent.parent / "fixtures" / "agent-sessions" / "claude-code"
WORKTREES = "ef958aa1-0e93-49f0-bb71-150f63befcd1"
#: an import is the raw file (a form cannot send this type)
RAW = {"content-type": "application/octet-stream"}


def test_an_uploaded_session_imports_once_under_its_own_id(
    http: httpx.Client, shared_loom: Loom
) -> None:
    sample = SESSIONS / "experiments-worktrees" / f"{WORKTREES}.jsonl"
    first = http.post("/api/import", content=sample.read_bytes(),
                      params={"filename": sample.name}, headers=RAW)
    assert first.status_code == 201, first.text
    report = first.json()
    assert report["errors"] == [] and len(report["trees"]) == 1 and report["nodes"] == 37
    tree = shared_loom.tree(report["trees"][0])
    assert tree.lineage["imported"]["conversation"] == WORKTREES
    again = http.post("/api/import", content=sample.read_bytes(),
                      params={"filename": "renamed.jsonl"}, headers=RAW)
    assert again.status_code == 201 and again.json()["nodes"] == 0


def test_a_hostile_session_upload_is_one_error_line(http: httpx.Client) -> None:
    deep = "[" * 200 + "]" * 200
    body = ('{"type": "user", "uuid": "u1", "parentUuid": null, "sessionId": "x", '
            f'"message": {{"role": "user", "content": "hi"}}, "extra": {deep}}}\n').encode()
    r = http.post("/api/import", content=body, params={"filename": "s.jsonl"}, headers=RAW)
    assert r.status_code in (201, 400), r.text
    errors = r.json()["errors"] if r.status_code == 201 else [r.json()["error"]]
    assert errors and "nested deeper" in str(errors[0])
