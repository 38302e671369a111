"""A store that cannot be opened is one line that says what to do, exit 2, and nothing
written: a PostgreSQL database that does not exist, a server that does not answer, a
file that is not SQLite, another program's SQLite database."""

from __future__ import annotations

import json
import socket
import sqlite3
from pathlib import Path
from urllib.parse import urlsplit

import pytest

import loomdb
from loomdb import StoreUnavailable
from loomdb.cli import main
from loomdb.edge import failure
from pg import ADMIN_URL


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(argv)
    out, err = capsys.readouterr()
    code = done.value.code
    assert isinstance(code, int)
    return code, out, err


def one_line(err: str) -> str:
    assert "Traceback" not in err
    assert err.startswith("loomdb: error: cannot open ") and err.count("\n") == 1, err
    return err


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def pg_url(dbname: str, port: int | None = None) -> str:
    parts = urlsplit(ADMIN_URL)
    netloc = parts.netloc if port is None else f"{parts.netloc.rsplit(':', 1)[0]}:{port}"
    return parts._replace(netloc=netloc, path=f"/{dbname}").geturl()


def test_a_missing_postgresql_database_names_createdb(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["--db", pg_url("loomdb_no_such_db"), "trees"], capsys)
    assert code == 2 and out == ""
    assert 'database "loomdb_no_such_db" does not exist' in one_line(err)
    assert "createdb" in err and "loomdb_no_such_db" in err


def test_a_server_that_does_not_answer_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    port = free_port()
    code, out, err = run(["--db", pg_url("test", port), "trees", "--json"], capsys)
    assert code == 2
    shown = json.loads(out)["error"]
    assert shown["type"] == "StoreUnavailable"
    assert f"no PostgreSQL server answers on 127.0.0.1:{port}" in shown["message"]
    assert "start the server" in one_line(err)


def test_a_file_that_is_not_sqlite_is_named_and_left_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    file = tmp_path / "notes.db"
    file.write_bytes(b"these are my notes, not a database\n" * 10)
    before = file.read_bytes()
    code, _, err = run(["--db", f"sqlite:///{file}", "add", "s", "--role", "user", "--text", "x"], capsys)
    assert code == 2
    assert f"cannot open {file}: the file is not a SQLite database" in one_line(err)
    assert file.read_bytes() == before


def test_another_programs_sqlite_database_is_refused_untouched(
    tmp_path: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    file = tmp_path / "app.db"
    with sqlite3.connect(file) as db:
        db.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)")
        db.execute("INSERT INTO invoices VALUES (1, 9.5)")
    db.close()
    before = file.read_bytes()
    code, _, err = run(["--db", f"sqlite:///{file}", "new", "--text", "hi"], capsys)
    assert code == 2
    assert "a SQLite database of another program, not a loomdb store (tables invoices)" in one_line(err)
    assert file.read_bytes() == before  # not even its journal mode changed
    assert not Path(f"{file}-wal").exists()
    with pytest.raises(StoreUnavailable):
        loomdb.open(f"sqlite:///{file}")


def test_an_empty_file_and_a_loomdb_store_open(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.touch()
    with loomdb.open(f"sqlite:///{empty}") as loom:
        loom.new_tree("hi", session="s")
    with loomdb.open(f"sqlite:///{empty}") as loom:  # reopened: it is a loomdb store now
        assert [t.nodes for t in loom.trees()] == [1]


def test_a_store_is_known_by_its_header_and_an_older_one_gets_the_mark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    from loomdb.store.sqlite import connections

    file = tmp_path / "loom.db"
    with loomdb.open(f"sqlite:///{file}") as loom:
        loom.new_tree("hi", session="s")
    with sqlite3.connect(file) as db:  # as a store made before the mark was written
        assert db.execute("PRAGMA application_id").fetchone()[0] == connections.APPLICATION_ID
        db.execute("PRAGMA application_id = 0")
    db.close()
    probes: list[str] = []
    real = sqlite3.connect

    def connect(database: str, *args: object, **kwargs: object) -> sqlite3.Connection:
        if kwargs.get("uri"):
            probes.append(database)
        return real(database, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(connections.sqlite3, "connect", connect)
    for _ in range(2):
        with loomdb.open(f"sqlite:///{file}") as loom:
            assert [t.nodes for t in loom.trees()] == [1]
    assert len(probes) == 1  # its tables read once; the mark then says what it is
    foreign = tmp_path / "app.db"
    with real(foreign) as db:  # another program's file: still read, and refused
        db.execute("CREATE TABLE invoices (id INTEGER PRIMARY KEY)")
    db.close()
    with pytest.raises(StoreUnavailable):
        loomdb.open(f"sqlite:///{foreign}")


def test_every_edge_maps_it_the_same_way() -> None:
    shown = failure(StoreUnavailable("x.db", "why", "fix"))
    assert (shown.type, shown.exit_code, shown.status) == ("StoreUnavailable", 2, 503)
    assert shown.message == "cannot open x.db: why; fix"
