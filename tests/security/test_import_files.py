"""Issue 22 item 1: an import reads no file of the machine it was not given.

A dataset names its images by path. From the command line (and the library) only
regular files inside the dataset's own folder are read: `..`, absolute paths, symlinks
that lead out, `/proc/self/environ`, the store's own `loom.db` and anything that is not
a regular file are warnings in the report, never a read. An HTTP upload reads no file
of the server at all. Inside a zip, files come from the zip only."""

from __future__ import annotations

import io
import json
import os
import secrets
import subprocess
import sys
import tempfile
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from loomdb import Loom

from .import_world import blob_bytes, client, live_store, sharegpt, upload

SECRET = b"TOKEN=" + secrets.token_hex(16).encode()
INSIDE = b"\x89PNG\r\n\x1a\n a picture inside the dataset"
BACKENDS = [b for b in os.environ.get("LOOMDB_TEST_BACKENDS", "sqlite,postgres").split(",") if b]


@pytest.fixture
def dataset(tmp_path: Path) -> Path:
    """tmp/secret.txt (not the dataset's), tmp/ds/ the dataset's folder with a picture,
    symlinks leading out and in, and a FIFO (which would block a naive read)."""
    (tmp_path / "secret.txt").write_bytes(SECRET)
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.txt").write_bytes(SECRET)
    folder = tmp_path / "ds"
    folder.mkdir()
    (folder / "inside.png").write_bytes(INSIDE)
    (folder / "link-out.png").symlink_to(tmp_path / "secret.txt")
    (folder / "link-in.png").symlink_to(folder / "inside.png")
    (folder / "sub").symlink_to(tmp_path / "outside", target_is_directory=True)
    os.mkfifo(folder / "fifo.png")
    return folder


def entries(folder: Path) -> dict[str, str]:
    """Every name that must not be read, by what it tries."""
    tmp = folder.parent
    return {
        "dotdot": "../secret.txt",
        "dotdot-deep": "imgs/../../secret.txt",
        "absolute": str(tmp / "secret.txt"),
        "backslash-absolute": "\\" + str(tmp / "secret.txt").lstrip("/"),
        "symlink-file-out": "link-out.png",
        "symlink-folder-out": "sub/secret.txt",
        "proc-environ": "/proc/self/environ",
        "proc-environ-relative": "../" * 12 + "proc/self/environ",
        "store-loom-db": str(tmp / "store" / "loom.db"),
        "store-loom-db-relative": "../store/loom.db",
        "fifo": "fifo.png",
        "home": "~/.bashrc",
    }


def write_dataset(folder: Path, images: list[str]) -> Path:
    path = folder / "data.json"
    path.write_text(json.dumps(sharegpt(images)))
    return path


def image_texts(loom: Loom, tree: str) -> list[str]:
    return [b["text"] for n in loom.tree_nodes(tree) for b in n.content if b["type"] == "text"]


@pytest.mark.parametrize("case", sorted(entries(Path("/x/ds"))))
def test_a_cli_import_reads_no_file_outside_the_dataset_folder(
    loom: Loom, dataset: Path, case: str
) -> None:
    name = entries(dataset)[case]
    loom.new_tree("the store holds something")  # so that loom.db has rows worth stealing
    report = loom.import_file(write_dataset(dataset, [name]))
    assert report.errors == [] and len(report.trees) == 1
    assert report.blobs == 0 and SECRET not in b"".join(blob_bytes(loom))
    assert blob_bytes(loom) == []
    (warning,) = report.warnings
    assert name in warning["reason"] and "not read" in warning["reason"]
    texts = image_texts(loom, report.trees[0])
    assert any(t.startswith("[image not in the export:") for t in texts)


@pytest.mark.parametrize("name", ["inside.png", "link-in.png", "./inside.png"])
def test_regular_files_inside_the_folder_are_still_read(
    loom: Loom, dataset: Path, name: str
) -> None:
    report = loom.import_file(write_dataset(dataset, [name]))
    assert report.errors == [] and report.warnings == []
    assert report.blobs == 1 and blob_bytes(loom) == [INSIDE]


def test_a_missing_file_is_said_in_the_message_not_warned(loom: Loom, dataset: Path) -> None:
    report = loom.import_file(write_dataset(dataset, ["imgs/missing.png"]))
    assert report.errors == [] and report.warnings == [] and report.blobs == 0


def test_the_cli_import_warns_and_reads_nothing(tmp_path: Path, dataset: Path) -> None:
    names = [entries(dataset)[c] for c in ("dotdot", "absolute", "symlink-file-out")]
    path = write_dataset(dataset, names)
    run = subprocess.run(
        [sys.executable, "-m", "loomdb", "--db", str(tmp_path / "store"), "import", str(path),
         "--json"], capture_output=True, text=True, timeout=120,
    )
    assert run.returncode == 0, run.stderr
    out = json.loads(run.stdout)
    assert out["blobs"] == 0 and len(out["warnings"]) == 3
    assert SECRET.decode() not in run.stdout + run.stderr
    for store_file in (tmp_path / "store").rglob("*"):
        if store_file.is_file() and store_file.suffix not in (".db", ".db-wal", ".db-shm"):
            assert SECRET not in store_file.read_bytes()


@pytest.fixture(scope="module", params=BACKENDS)
def served(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Loom, str, Path]]:
    folder = tmp_path_factory.mktemp(f"import-files-{request.param}")
    with live_store(request.param, folder) as (lm, base):
        lm.new_tree("the store holds something")
        yield lm, base, folder


@pytest.fixture
def beside_upload() -> Iterator[str]:
    """A secret in the folder where the server keeps an upload while importing it (a
    naive upload reads images "beside" that temporary file)."""
    path = Path(tempfile.gettempdir()) / f"loomdb-secret-{secrets.token_hex(4)}.png"
    path.write_bytes(SECRET)
    try:
        yield path.name
    finally:
        path.unlink()


def test_an_upload_reads_no_file_of_the_server(
    served: tuple[Loom, str, Path], beside_upload: str, tmp_path: Path
) -> None:
    lm, base, folder = served
    (tmp_path / "secret.txt").write_bytes(SECRET)
    names = [beside_upload, f"./{beside_upload}", str(tmp_path / "secret.txt"),
             "../" * 12 + str(tmp_path / "secret.txt").lstrip("/"), "/proc/self/environ",
             str(folder / "store" / "loom.db"), "loom.db"]
    before = blob_bytes(lm)
    r = upload(base, "data.json", json.dumps(sharegpt(names)).encode())
    assert r.status_code == 201, r.text
    out = r.json()
    assert out["blobs"] == 0 and out["errors"] == [] and len(out["trees"]) == 1
    assert len(out["warnings"]) == len(names)
    assert all("uploaded" in w["reason"] for w in out["warnings"])
    assert blob_bytes(lm) == before
    with client(base) as c:
        exported = c.get(f"/api/trees/{out['trees'][0]}/export").text
    assert SECRET.decode() not in exported and "environ" not in exported.split("[image")[0]


def test_an_uploaded_zip_reads_its_own_files_and_nothing_outside(
    served: tuple[Loom, str, Path], beside_upload: str
) -> None:
    lm, base, _ = served
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("set/data.json", json.dumps(sharegpt(
            ["imgs/a.png", "../" + beside_upload, "/" + beside_upload,
             "imgs/../../" + beside_upload], text="zip <image>")))
        zf.writestr("set/imgs/a.png", INSIDE)
        zf.writestr(beside_upload, SECRET)  # in the zip, but outside the dataset's folder
    r = upload(base, "set.zip", buf.getvalue())
    assert r.status_code == 201, r.text
    out = r.json()
    assert out["errors"] == [] and len(out["warnings"]) == 3
    tree = out["trees"][0]
    refs = [b["ref"] for n in lm.tree_nodes(tree) for b in n.content if b["type"] == "image"]
    assert [lm.blob(ref) for ref in refs] == [INSIDE]


def other_formats(secret: Path) -> dict[str, Any]:
    """Every other format with an attachment named by the secret's path (each names a
    file the export does not hold; none may read it)."""
    path, url = str(secret), f"file://{secret}"
    when = 1700000000
    return {
        "chatgpt.json": [{"id": "c1", "title": "t", "create_time": when, "current_node": "m", "mapping": {
            "r": {"id": "r", "message": None, "parent": None, "children": ["m"]},
            "m": {"id": "m", "parent": "r", "children": [], "message": {
                "id": "m", "author": {"role": "user"}, "create_time": when,
                "metadata": {"attachments": [{"id": path, "name": path}]},
                "content": {"content_type": "multimodal_text", "parts": [
                    {"content_type": "image_asset_pointer", "asset_pointer": url}, "x"]}}}}}],
        "claude.json": [{"uuid": "c2", "name": "t", "created_at": "2024-01-01T00:00:00Z",
                         "chat_messages": [{"uuid": "m", "sender": "human", "text": "x",
                                            "files": [{"file_name": path, "file_uuid": path}],
                                            "created_at": "2024-01-01T00:00:00Z"}]}],
        "openwebui.json": [{"id": "c3", "title": "t", "chat": {"history": {"currentId": "m",
            "messages": {"m": {"id": "m", "parentId": None, "childrenIds": [], "role": "user",
                               "content": "x", "files": [{"type": "image", "url": url,
                                                          "name": path}]}}}}}],
        "librechat.json": {"conversationId": "c4", "title": "t", "messages": [
            {"messageId": "m", "parentMessageId": None, "sender": "User", "isCreatedByUser": True,
             "text": "x", "files": [{"file_id": path, "filename": path, "filepath": path,
                                    "type": "image/png"}]}]},
    }


@pytest.mark.parametrize("name", sorted(other_formats(Path("/x"))))
def test_no_other_format_reads_a_file_an_export_names(
    loom: Loom, tmp_path: Path, name: str
) -> None:
    """A guard: these formats never read a file by a name the export gives."""
    secret = tmp_path / "secret.png"
    secret.write_bytes(SECRET)
    path = tmp_path / "ds" / name
    path.parent.mkdir()
    path.write_text(json.dumps(other_formats(secret)[name]))
    report = loom.import_file(path)
    assert report.errors == [] and len(report.trees) == 1, report.to_json()
    assert blob_bytes(loom) == []


def test_an_uploaded_claude_code_session_reads_no_subagent_file_beside_it(
    loom: Loom, tmp_path: Path
) -> None:
    """A session file named as Claude Code names it reads its subagents' files beside
    it, from the command line; as an upload (`files=None`) it reads nothing else."""
    sys.path.insert(0, str(Path(__file__).parent.parent / "interop"))
    from claude_code_lines import SessionWriter, call, text

    folder = tmp_path / "-work-project"
    w = SessionWriter(folder / "s1.jsonl", "s1")
    u = w.user(None, "research this")
    a = w.reply(u, "m1", call("t1", "Task", prompt="look it up", description="research"))
    w.result(a, "t1", "found it", toolUseResult={"agentId": "abc123", "content": []})
    sub = SessionWriter(folder / "agent-abc123.jsonl", "s1")
    q = sub.user(None, SECRET.decode(), isSidechain=True, agentId="abc123")
    sub.reply(q, "m5", text("found it"), isSidechain=True)
    report = loom.import_file(folder / "s1.jsonl", "claude-code", files=None)
    assert report.errors == [] and len(report.trees) == 1
    texts = [b.get("text", "") for t in loom.trees() for n in loom.tree_nodes(t.id)
             for b in n.content]
    assert not any(SECRET.decode() in t for t in texts)
