"""`loomdb migrate`: a whole store copied from SQLite into PostgreSQL, chain verified,
the areas' rows with it and the search index rebuilt."""

from __future__ import annotations

import json
from pathlib import Path

from pg import fresh_postgres_url
from test_bad_input import run_cli
from test_cli import Cli


def test_migrate_copies_a_sqlite_store_into_postgres_and_refuses_to_do_it_twice(tmp_path: Path) -> None:
    src = str(tmp_path / "src")
    cli = Cli(src)
    root = cli("new", "--text", "hello", "--session", "main")["node"]
    cli("add", "main", "--role", "assistant", "--text", "hi")
    v = cli("edit", root, "--text", "hello there")["node"]
    cli("view", "new", "v", "main")
    cli("select", "v", v)
    cli("bookmark", root, "start")
    with fresh_postgres_url() as url:
        dst = url + f"?blobs=file://{tmp_path / 'blobs'}"
        code, out, err = run_cli(src, "migrate", "--from", src, "--to", dst, "--json")
        assert code == 0, err
        report = json.loads(out)
        assert report["trees"] == 1 and report["nodes"] == 3 and report["verified"] == 3
        assert report["areas"] == {} and report["rebuilt"] == {}
        target = Cli(dst)
        assert target("path", "v") == Cli(src)("path", "v")
        assert target("session", "log", "main") == Cli(src)("session", "log", "main")
        assert target("verify")["ok"] is True
        code, _, err = run_cli(src, "migrate", "--from", src, "--to", dst)
        assert code == 2 and "not empty" in err


def test_migrate_carries_documents_and_collections_and_rebuilds_search(tmp_path: Path) -> None:
    src = str(tmp_path / "src")
    cli = Cli(src)
    cli("new", "--text", "a question about glaciers", "--session", "main")
    cli("doc", "new", "notes", "--text", "Field notes on moraines")
    cli("doc", "commit", "notes", "--text", "Field notes on moraines and eskers")
    cli("coll", "new", "reading", "--kind", "table")
    item = cli("coll", "add", "reading", "doc:notes", "--tag", "geology",
               "--field", "topic=ice")["item"]
    with fresh_postgres_url() as url:
        dst = url + f"?blobs=file://{tmp_path / 'blobs'}"
        code, out, err = run_cli(src, "migrate", "--from", src, "--to", dst)
        assert code == 0, err
        assert "collections 4 rows, documents 7 rows" in out
        assert "search rebuilt (messages 1, documents 2, items 1)" in out
        target = Cli(dst)
        assert target("doc", "log", "notes") == cli("doc", "log", "notes")
        assert target("coll", "show", "reading") == cli("coll", "show", "reading")
        hits = {h["entity"] for h in target("search", "eskers")["hits"]}
        assert hits == {h["entity"] for h in cli("search", "eskers")["hits"]} != set()
        assert {h["entity"] for h in target("search", "geology")["hits"]} == {
            f"coll:reading/{item}"}
        assert len(target("search", "glaciers")["hits"]) == 1
