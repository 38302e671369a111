"""Documents: a revision DAG over the shared content layer, on both backends."""

from __future__ import annotations

import pytest

from areas.cli import Cli
from loomdb import Loom
from loomdb.documents import service as D
from loomdb.errors import InvalidInput, NotFound, RefConflict


@pytest.fixture
def cli(store_url: str) -> Cli:
    return Cli(store_url)


def test_new_commit_log_show(cli: Cli) -> None:
    first = cli("doc", "new", "plan", "--text", "one\ntwo\n")
    assert set(first) == {"document", "revision"}
    second = cli("doc", "commit", "plan", "--text", "one\n2\n", "-m", "fix two")["revision"]
    log = cli("doc", "log", "plan")["revisions"]
    assert [r["id"] for r in log] == [second, first["revision"]]
    assert log[0]["message"] == "fix two" and log[0]["parents"] == [first["revision"]]
    assert set(log[0]) == {"id", "message", "parents", "created_at"}
    assert cli("doc", "show", "plan")["text"] == "one\n2\n"
    assert cli("doc", "show", f"plan@{first['revision']}")["text"] == "one\ntwo\n"
    assert cli("doc", "show", "plan@main")["text"] == "one\n2\n"


def test_commit_without_change_is_refused(cli: Cli) -> None:
    cli("doc", "new", "plan", "--text", "same")
    assert "nothing changed" in cli.fails("doc", "commit", "plan", "--text", "same")
    assert len(cli("doc", "log", "plan")["revisions"]) == 1


def test_branch_checkout_merge_and_diff(cli: Cli) -> None:
    base = cli("doc", "new", "plan", "--text", "a\nb\nc\nd\n")["revision"]
    cli("doc", "branch", "plan", "feature", "--at", base)
    ours = cli("doc", "commit", "plan", "--text", "A\nb\nc\nd\n")["revision"]
    theirs = cli("doc", "commit", "plan", "--text", "a\nb\nc\nD\n", "--branch", "feature")["revision"]
    diff = cli("doc", "diff", "plan", base, theirs)["diff"]
    assert "-d\n" in diff and "+D\n" in diff and diff.startswith("---")
    merged = cli("doc", "merge", "plan", "feature", "-m", "merge feature")
    assert merged["parents"] == [ours, theirs]
    assert cli("doc", "show", "plan")["text"] == "A\nb\nc\nD\n"
    assert "already merged" in cli.fails("doc", "merge", "plan", "feature", "-m", "again")
    # checkout a revision: show follows it, commits need a branch
    assert cli("doc", "checkout", "plan", base)["branch"] is None
    assert cli("doc", "show", "plan")["text"] == "a\nb\nc\nd\n"
    assert "not a branch" in cli.fails("doc", "commit", "plan", "--text", "x")
    cli("doc", "checkout", "plan", "feature")
    assert cli("doc", "show", "plan")["text"] == "a\nb\nc\nD\n"


def test_conflicts_are_reported_and_nothing_is_written(cli: Cli) -> None:
    base = cli("doc", "new", "plan", "--text", "a\nb\nc\n")["revision"]
    cli("doc", "branch", "plan", "other", "--at", base)
    cli("doc", "commit", "plan", "--text", "a\nours\nc\n")
    cli("doc", "commit", "plan", "--text", "a\ntheirs\nc\n", "--branch", "other")
    before = cli("doc", "log", "plan")
    error = cli.fails("doc", "merge", "plan", "other", "-m", "m")
    assert "conflict" in error and "ours" in error and "theirs" in error
    assert cli("doc", "log", "plan") == before


def test_from_message_shares_the_content_id(loom: Loom, cli: Cli) -> None:
    _, node = loom.new_tree("words worth keeping", session="s")
    out = cli("doc", "from-message", node.id, "kept")
    assert out["content_id"] == node.content_id
    assert cli("doc", "show", "kept")["text"] == "words worth keeping"
    second = loom.append("s", "better words", role="assistant")
    again = cli("doc", "from-message", second.id, "kept")
    assert again["content_id"] == second.content_id
    assert [r["id"] for r in cli("doc", "log", "kept")["revisions"]][0] == again["revision"]


def test_binary_documents_show_content(loom: Loom, tmp_path) -> None:  # type: ignore[no-untyped-def]
    png = tmp_path / "pic.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(40)))
    D.new(loom, "pic", loom.file_content(png))
    shown = D.show(loom, "pic").to_json()
    assert "text" not in shown and shown["content"][0]["type"] == "image"
    with pytest.raises(InvalidInput):
        D.diff(loom, "pic", "main", "main")


def test_branch_heads_move_by_compare_and_swap(loom: Loom, store_url: str) -> None:
    import loomdb
    from loomdb.documents import DOCUMENTS
    from loomdb.documents import storage as S

    D.new(loom, "plan", "v1")
    with loomdb.open(store_url) as other:
        D.commit(other, "plan", "v2 elsewhere")
    with loom.unit(DOCUMENTS) as db:
        doc = S.document(db, "plan")
        stale = S.revisions(db, doc.id)
        oldest = min(stale)
        with pytest.raises(RefConflict):
            S.move_branch(db, doc.id, "plan", "main", oldest, oldest)
    assert D.show(loom, "plan").to_json()["text"] == "v2 elsewhere"


def test_unknown_names_are_typed_errors(loom: Loom, cli: Cli) -> None:
    assert "unknown document" in cli.fails("doc", "show", "nope")
    D.new(loom, "plan", "x")
    with pytest.raises(NotFound):
        D.show(loom, "plan@nobranch")
    assert "name" in cli.fails("doc", "new", "bad name", "--text", "x")
    assert "exactly one" in cli.fails("doc", "new", "ok", "--text", "x", "--file", "y")
    assert "already exists" in cli.fails("doc", "new", "plan", "--text", "y")
