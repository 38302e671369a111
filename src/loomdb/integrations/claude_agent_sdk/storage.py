"""The Claude session store area's SQL: every function takes the unit it runs in (`?`
placeholders, the same statements on both dialects but the row lock)."""

from __future__ import annotations

from collections.abc import Sequence

from ...store.areas import Unit

#: (key, mtime, summary, tree id, fork ref, fork nodes) of a transcript
Session = tuple[int, int, str | None, str | None, str | None, str | None]
#: (seq, uuid, base session, base seq, entry) of an entry
Entry = tuple[int, str | None, int | None, int | None, str]

#: holding a transcript's row to the end of the unit (appends of one session one after
#: the other): SQLite's writer holds the whole store already, PostgreSQL locks the row
_LOCK = {"sqlite": "", "postgres": "SELECT 1 FROM cc_sessions WHERE key = ? FOR UPDATE"}


def session(db: Unit, project: str, session_id: str, subpath: str) -> Session | None:
    row = db.one("SELECT key, mtime, summary, tree_id, fork_ref, fork_nodes FROM cc_sessions "
                 "WHERE project_key = ? AND session_id = ? AND subpath = ?",
                 (project, session_id, subpath))
    return (int(row[0]), int(row[1]), row[2], row[3], row[4], row[5]) if row else None


def ensure_session(db: Unit, project: str, session_id: str, subpath: str, mtime: int) -> int:
    """The key of a transcript, its row made when new, held to the end of the unit."""
    db.execute("INSERT INTO cc_sessions (project_key, session_id, subpath, mtime) "
               "VALUES (?, ?, ?, ?) ON CONFLICT (project_key, session_id, subpath) DO NOTHING",
               (project, session_id, subpath, mtime))
    found = session(db, project, session_id, subpath)
    assert found is not None
    if _LOCK[db.dialect]:
        db.execute(_LOCK[db.dialect], (found[0],))
    return found[0]


def touch(db: Unit, key: int, mtime: int, summary: str | None) -> None:
    db.execute("UPDATE cc_sessions SET mtime = ?, summary = COALESCE(?, summary) WHERE key = ?",
               (mtime, summary, key))


def set_tree(db: Unit, key: int, tree_id: str | None, fork_ref: str | None,
             fork_nodes: str | None, problem: str | None) -> None:
    db.execute("UPDATE cc_sessions SET tree_id = ?, fork_ref = ?, fork_nodes = ?, problem = ? "
               "WHERE key = ?", (tree_id, fork_ref, fork_nodes, problem, key))


def sessions(db: Unit, project: str) -> list[tuple[str, int, str | None]]:
    """(session id, mtime, summary) of a project's main transcripts."""
    return [(str(r[0]), int(r[1]), r[2]) for r in db.execute(
        "SELECT session_id, mtime, summary FROM cc_sessions WHERE project_key = ? "
        "AND subpath = '' ORDER BY session_id", (project,))]


def subpaths(db: Unit, project: str, session_id: str) -> list[tuple[int, str]]:
    """(key, subpath) of a session's subagent transcripts."""
    return [(int(r[0]), str(r[1])) for r in db.execute(
        "SELECT key, subpath FROM cc_sessions WHERE project_key = ? AND session_id = ? "
        "AND subpath <> '' ORDER BY subpath", (project, session_id))]


def of_tree(db: Unit, tree_id: str) -> list[int]:
    return [int(r[0]) for r in db.execute(
        "SELECT key FROM cc_sessions WHERE tree_id = ?", (tree_id,))]


def project_session(db: Unit, key: int) -> tuple[str, str, str] | None:
    row = db.one("SELECT project_key, session_id, subpath FROM cc_sessions WHERE key = ?", (key,))
    return (str(row[0]), str(row[1]), str(row[2])) if row else None


def delete_session(db: Unit, key: int) -> None:
    db.execute("DELETE FROM cc_entries WHERE session = ?", (key,))
    db.execute("DELETE FROM cc_sessions WHERE key = ?", (key,))


# ---------------------------------------------------------------- entries


def last_seq(db: Unit, key: int) -> int:
    row = db.one("SELECT MAX(seq) FROM cc_entries WHERE session = ?", (key,))
    return int(row[0]) if row and row[0] is not None else 0


def known_uuids(db: Unit, key: int, uuids: Sequence[str]) -> set[str]:
    out: set[str] = set()
    for cond, args in db.where_in("uuid", list(uuids)):
        out |= {str(r[0]) for r in db.execute(
            f"SELECT uuid FROM cc_entries WHERE session = ? AND {cond}", (key, *args))}
    return out


def by_uuid(db: Unit, key: int, uuid: str) -> tuple[int, int | None, str] | None:
    """(seq, base session, entry) of a transcript's entry with this uuid."""
    row = db.one("SELECT seq, base_session, entry FROM cc_entries WHERE session = ? AND uuid = ?",
                 (key, uuid))
    return (int(row[0]), row[1], str(row[2])) if row else None


def put_entry(db: Unit, key: int, seq: int, uuid: str | None, base: tuple[int, int] | None,
              entry: str) -> None:
    db.execute("INSERT INTO cc_entries (session, seq, uuid, base_session, base_seq, entry) "
               "VALUES (?, ?, ?, ?, ?, ?)",
               (key, seq, uuid, base[0] if base else None, base[1] if base else None, entry))


def entries(db: Unit, key: int) -> list[Entry]:
    return [(int(r[0]), r[1], r[2], r[3], str(r[4])) for r in db.execute(
        "SELECT seq, uuid, base_session, base_seq, entry FROM cc_entries WHERE session = ? "
        "ORDER BY seq", (key,))]


def entries_at(db: Unit, key: int, seqs: Sequence[int]) -> dict[int, str]:
    out: dict[int, str] = {}
    for cond, args in db.where_in("seq", list(seqs)):
        for r in db.execute(f"SELECT seq, entry FROM cc_entries WHERE session = ? AND {cond}",
                            (key, *args)):
            out[int(r[0])] = str(r[1])
    return out


def based_on(db: Unit, key: int) -> list[tuple[int, int, int, str]]:
    """(session, seq, base seq, patch) of other transcripts' entries copied from this one."""
    return [(int(r[0]), int(r[1]), int(r[2]), str(r[3])) for r in db.execute(
        "SELECT session, seq, base_seq, entry FROM cc_entries WHERE base_session = ? "
        "AND session <> ?", (key, key))]


def set_entry(db: Unit, key: int, seq: int, entry: str) -> None:
    """An entry written whole (its base is going away)."""
    db.execute("UPDATE cc_entries SET entry = ?, base_session = NULL, base_seq = NULL "
               "WHERE session = ? AND seq = ?", (entry, key, seq))
