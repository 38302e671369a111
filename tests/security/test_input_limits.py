"""Issue 22 item 5 (the imports' part): no input takes the server down.

A file of nested `[` made format detection use about 24 GB; a small zip expanded to a
big blob; content nested hundreds of levels deep was stored, after which every read of
the thread failed. Now, with the limits of `loomdb.limits` (`json_depth`, `blob`,
`zip_member`, `zip_total`, `upload`): the depth of what an import reads is measured on
the bytes before a parser builds anything; content and options nested deeper than
`json_depth` are refused on every write; zip members are checked by their declared and
their actual size within a budget per archive; a blob over `blob` is refused from every
path. Each refusal is a 413 / 400 over HTTP or exit 2 with one line, nothing written,
the server alive.

The tests that would exhaust memory on a build without the checks run the command or
the server in a child process with its address space capped (`RLIMIT_AS`), so such a
build fails the test instead of the machine."""

from __future__ import annotations

import base64
import io
import json
import os
import resource
import secrets
import subprocess
import sys
import time
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

import loomdb
from loomdb import Loom
from loomdb.errors import InvalidInput, TooLarge
from loomdb.limits import MB, Limits

from .import_world import blob_bytes, client, live_store, node_rows, sharegpt, upload

BACKENDS = [b for b in os.environ.get("LOOMDB_TEST_BACKENDS", "sqlite,postgres").split(",") if b]
#: the address space of a child process: far more than loomdb needs, far less than 24 GB
MEMORY = 4 << 30
DEEP = 100  # levels: more than json_depth (64)


def capped() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY, MEMORY))


def child_env(**extra: str) -> dict[str, str]:
    return {**os.environ, "MALLOC_ARENA_MAX": "2", **extra}


def nested(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for _ in range(depth):
        value = {"k": [value]} if _ % 2 else [value]
    return value


# ---------------------------------------------------------------- hostile files


def hostile_files() -> dict[str, bytes]:
    """Files whose nesting alone would exhaust memory or time (each ~200 KB)."""
    loom_save = b'{"root": {"text": "x", "children": [' + \
        b'{"text": "x", "children": [' * 20000 + b"]}" * 20000 + b"]}}"
    return {
        "brackets.json": b"[" * 200_000,
        "objects.json": b'{"a":' * 40_000,
        "array-of-deep.json": b'[{"conversations": ' + b"[" * 200_000,
        "native.json": b'{"loomdb_export": 1, "trees": [' + b"[" * 200_000,
        "loom-save.json": loom_save,
    }


@pytest.mark.parametrize("name", sorted(hostile_files()))
def test_a_deeply_nested_file_is_refused_by_the_cli_in_bounded_memory(
    tmp_path: Path, name: str
) -> None:
    path = tmp_path / name
    path.write_bytes(hostile_files()[name])
    started = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "loomdb", "--db", str(tmp_path / "store"), "import", str(path)],
        capture_output=True, text=True, timeout=300, preexec_fn=capped, env=child_env(),
    )
    assert run.returncode == 2, run.stderr[-2000:]
    assert len(run.stderr.strip().splitlines()) == 1 and "nested deeper" in run.stderr
    assert time.monotonic() - started < 60
    with loomdb.open(str(tmp_path / "store")) as lm:
        assert lm.trees() == []


def test_a_deeply_nested_line_fails_that_line_only(tmp_path: Path) -> None:
    path = tmp_path / "lines.jsonl"
    good = json.dumps({"messages": [{"role": "user", "content": "fine"}]}).encode()
    path.write_bytes(good + b"\n" + b'{"a":' * 40_000 + b"\n" + b"[" * 200_000 + b"\n")
    run = subprocess.run(
        [sys.executable, "-m", "loomdb", "--db", str(tmp_path / "store"), "import", str(path),
         "--json"], capture_output=True, text=True, timeout=300, preexec_fn=capped,
        env=child_env(),
    )
    assert run.returncode == 1, run.stderr[-2000:]
    out = json.loads(run.stdout)
    assert len(out["trees"]) == 1 and len(out["errors"]) == 2
    assert all("nested deeper" in e["reason"] for e in out["errors"])


@contextmanager
def server_process(store: Path, **env: str) -> Iterator[str]:
    """`loomdb serve` in a child process with its address space capped."""
    from live import free_port

    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "loomdb", "--db", str(store), "serve", "--port", str(port)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, preexec_fn=capped,
        env=child_env(**env),
    )
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/api/health", timeout=5).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.05)
        yield base
    finally:
        proc.terminate()
        proc.wait(20)
        if proc.stderr is not None:
            proc.stderr.close()


def test_deeply_nested_uploads_are_400_and_the_server_lives(tmp_path: Path) -> None:
    with server_process(tmp_path / "store") as base:
        for name, data in sorted(hostile_files().items()):
            try:
                r = upload(base, name, data)
            except httpx.TransportError as exc:  # the server died
                pytest.fail(f"{name}: the server went down ({exc})")
            assert r.status_code == 400, (name, r.status_code, r.text[:300])
            assert "nested deeper" in r.json()["error"]["message"]
            assert httpx.get(f"{base}/api/health", timeout=30).status_code == 200
        with client(base) as c:
            assert c.get("/api/trees").json()["trees"] == []


# ---------------------------------------------------------------- depth on every write


def deep_tool_call() -> list[dict[str, Any]]:
    return [{"type": "tool_use", "id": "call_1", "name": "f", "input": {"x": nested(DEEP)}}]


def test_deep_content_and_options_are_refused_on_every_write(loom: Loom) -> None:
    tree, root = loom.new_tree("hello", session="main")
    before = node_rows(loom)
    attempts = {
        "append content": lambda: loom.append("main", deep_tool_call(), role="assistant"),
        "append options": lambda: loom.append("main", "hi", options={"x": nested(DEEP)}),
        "new tree content": lambda: loom.new_tree(deep_tool_call()),
        "new tree options": lambda: loom.new_tree("x", options={"x": nested(DEEP)}),
        "new tree node options": lambda: loom.new_tree("x", node_options={"x": nested(DEEP)}),
        "edit": lambda: loom.edit(root.id, deep_tool_call()),
        "provenance": lambda: loom.append("main", "x", provenance={"x": nested(DEEP)}),
        "prepare": lambda: loom.prepare(deep_tool_call()),
    }
    for what, attempt in attempts.items():
        with pytest.raises(InvalidInput, match="nested deeper") as caught:
            attempt()
        assert "\n" not in str(caught.value), what
    assert node_rows(loom) == before and len(loom.trees()) == 1
    # 64 levels (content list, block, input, 61 lists) pass; one more does not
    def at_depth(levels: int) -> list[dict[str, Any]]:
        value: Any = 1
        for _ in range(levels - 3):
            value = [value]
        return [{"type": "tool_use", "id": "c", "name": "f", "input": {"x": value}}]

    with pytest.raises(InvalidInput, match="nested deeper than 64"):
        loom.append("main", at_depth(65), role="assistant")
    loom.append("main", at_depth(64), role="assistant")
    assert loom.context("main")["messages"][-1]["content"] == at_depth(64)


def test_an_import_with_deep_content_fails_that_conversation_only(
    loom: Loom, tmp_path: Path
) -> None:
    def record(arguments: Any) -> dict[str, Any]:
        return {"messages": [{"role": "user", "content": f"call {secrets.token_hex(4)}"}, {
            "role": "assistant", "tool_calls": [{"id": "c1", "type": "function", "function": {
                "name": "f", "arguments": arguments}}]}]}

    deep_string = json.dumps({"x": nested(DEEP)})
    lines = [record({"x": 1}), record({"x": nested(DEEP)}), record(deep_string)]
    path = tmp_path / "chat.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    report = loom.import_file(path)
    (error,) = report.errors
    assert "line 2" in error["where"] and "nested deeper" in error["reason"]
    assert len(report.trees) == 2
    # JSON arguments in a string too deep to decode stay the string they were
    inputs = [b["input"] for t in report.trees for n in loom.tree_nodes(t) for b in n.content
              if b["type"] == "tool_use"]
    assert {"arguments": deep_string} in inputs and {"x": 1} in inputs


@pytest.fixture(scope="module", params=BACKENDS)
def served(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Loom, str]]:
    limits = Limits(blob=1 * MB, zip_member=2 * MB, zip_total=3 * MB, upload=4 * MB)
    with live_store(request.param, tmp_path_factory.mktemp(f"limits-{request.param}"),
                    limits) as s:
        yield s


def test_deep_content_over_http_is_400_and_the_thread_still_reads(
    served: tuple[Loom, str]
) -> None:
    _, base = served
    session = f"s{secrets.token_hex(4)}"
    with client(base) as c:
        assert c.post("/api/trees", json={"text": "hi", "session": session}).status_code == 201
        r = c.post(f"/api/nodes/{session}/append",
                   json={"role": "assistant", "content": deep_tool_call()})
        assert r.status_code == 400, r.text
        assert "nested deeper" in r.json()["error"]["message"]
        r = c.post(f"/api/nodes/{session}/append",
                   json={"role": "user", "text": "x", "options": {"x": nested(DEEP)}})
        assert r.status_code == 400, r.text
        assert c.get(f"/api/nodes/{session}/context").status_code == 200
        assert len(c.get(f"/api/nodes/{session}/context").json()["messages"]) == 1


# ---------------------------------------------------------------- sizes


def chatgpt_zip(files: dict[str, bytes], conversations: Any = None) -> bytes:
    """A ChatGPT export zip: conversations.json pointing at each file by its id."""
    if conversations is None:
        conversations = [chatgpt_conversation(name.split(".")[0]) for name in files]
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("conversations.json", json.dumps(conversations))
        for name, data in files.items():
            zf.writestr(name, data)
    return buf.getvalue()


def chatgpt_conversation(file_id: str) -> dict[str, Any]:
    tag = secrets.token_hex(4)
    return {"id": f"conv-{tag}", "title": "t", "create_time": 1700000000, "mapping": {
        "root": {"id": "root", "message": None, "parent": None, "children": ["m1"]},
        "m1": {"id": "m1", "parent": "root", "children": [], "message": {
            "id": "m1", "author": {"role": "user"}, "create_time": 1700000001,
            "content": {"content_type": "multimodal_text", "parts": [
                {"content_type": "image_asset_pointer",
                 "asset_pointer": f"file-service://{file_id}"}, f"look {tag}"]}}}},
        "current_node": "m1"}


def test_a_zip_bomb_attachment_fails_its_conversation_and_writes_no_blob(
    served: tuple[Loom, str]
) -> None:
    lm, base = served
    bomb = b"\0" * (3 * MB)  # ~3 KB compressed; over zip_member (2 MB) and blob (1 MB)
    r = upload(base, "export.zip", chatgpt_zip({"file-Bomb1.png": bomb,
                                                "file-Fine1.png": b"\x89PNG fine"}))
    assert r.status_code == 201, r.text
    out = r.json()
    assert len(out["errors"]) == 1 and "zip" in out["errors"][0]["reason"]
    assert len(out["trees"]) == 1 and out["blobs"] == 1
    assert bomb not in blob_bytes(lm)


def test_a_member_under_the_zip_limits_but_over_the_blob_limit_is_refused(
    served: tuple[Loom, str]
) -> None:
    lm, base = served
    big = b"\1" * (MB + 10)
    r = upload(base, "export.zip", chatgpt_zip({"file-Big1.png": big}))
    assert r.status_code == 201, r.text
    (error,) = r.json()["errors"]
    assert "blob limit" in error["reason"] and big not in blob_bytes(lm)


def test_the_members_of_one_zip_share_one_budget(served: tuple[Loom, str]) -> None:
    lm, base = served
    parts = {f"file-Part{i}.png": bytes([i]) * (MB - 100) for i in range(1, 5)}
    r = upload(base, "export.zip", chatgpt_zip(parts))
    out = r.json()
    assert r.status_code == 201, r.text
    assert len(out["trees"]) == 2 and len(out["errors"]) == 2  # 3 MB of 4 fit
    assert all("zip_total" in e["reason"] for e in out["errors"])


def test_a_document_member_over_the_zip_limit_is_413_with_nothing_written(
    served: tuple[Loom, str]
) -> None:
    lm, base = served
    before = len(lm.trees())
    padding = [chatgpt_conversation("none")] + [" " * 1000] * 3000  # ~3 MB of JSON
    r = upload(base, "export.zip", chatgpt_zip({}, padding))
    assert r.status_code == 413, r.text
    assert "zip_member" in r.json()["error"]["message"]
    assert len(lm.trees()) == before
    with client(base) as c:
        assert c.get("/api/health").status_code == 200


def test_an_upload_over_the_upload_limit_is_413(served: tuple[Loom, str]) -> None:
    lm, base = served
    before = len(lm.trees())
    data = json.dumps(sharegpt([]) + [{"pad": "x" * (5 * MB)}]).encode()
    r = upload(base, "big.json", data)
    assert r.status_code == 413, r.text
    assert len(lm.trees()) == before


def test_a_blob_over_the_limit_is_refused_from_every_path(served: tuple[Loom, str]) -> None:
    lm, base = served
    big = os.urandom(MB + 1)
    with pytest.raises(TooLarge):
        lm.put_blob(big)
    block = {"type": "image", "data": base64.b64encode(big).decode(), "mime_type": "image/png"}
    with pytest.raises(TooLarge):
        lm.prepare([block])
    data_url = "data:image/png;base64," + base64.b64encode(big).decode()
    r = upload(base, "data.json", json.dumps(sharegpt([data_url])).encode())
    assert r.status_code == 201 and len(r.json()["errors"]) == 1, r.text
    assert "over the limit" in r.json()["errors"][0]["reason"]
    assert big not in blob_bytes(lm)


def test_the_cli_reads_its_limits_from_the_environment(tmp_path: Path) -> None:
    path = tmp_path / "export.zip"
    path.write_bytes(chatgpt_zip({}, [chatgpt_conversation("x")] + [" " * 1000] * 3000))
    run = subprocess.run(
        [sys.executable, "-m", "loomdb", "--db", str(tmp_path / "store"), "import", str(path)],
        capture_output=True, text=True, timeout=120,
        env=child_env(LOOMDB_LIMIT_ZIP_MEMBER="1MB"),
    )
    assert run.returncode == 2 and "zip_member" in run.stderr, run.stderr
    assert len(run.stderr.strip().splitlines()) == 1


def test_the_content_default_depth_is_the_limits_default() -> None:
    from loomdb.content import DEFAULT_JSON_DEPTH
    from loomdb.limits import DEFAULT

    assert DEFAULT_JSON_DEPTH == DEFAULT.json_depth
