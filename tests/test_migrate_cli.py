"""`loomdb migrate`: a whole store copied from SQLite into PostgreSQL, chain verified."""

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
        target = Cli(dst)
        assert target("path", "v") == Cli(src)("path", "v")
        assert target("session", "log", "main") == Cli(src)("session", "log", "main")
        assert target("verify")["ok"] is True
        code, _, err = run_cli(src, "migrate", "--from", src, "--to", dst)
        assert code == 2 and "not empty" in err
