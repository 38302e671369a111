"""The LangGraph area's SQL: every function takes the unit it runs in (`?` placeholders,
the same statements on both dialects)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...store.areas import Unit

#: (checkpoint id, parent id, branch, body) of one checkpoint
Row = tuple[str, str | None, int | None, bytes]
#: (checkpoint id, task id, idx, channel, task path, value) of one pending write
WriteRow = tuple[str, str, int, str, str, bytes]


# ---------------------------------------------------------------- threads

#: holding a thread's row to the end of the unit: SQLite's writer already holds the
#: whole store (BEGIN IMMEDIATE); PostgreSQL locks the row (reading it, not writing a
#: new version of it at every step)
_LOCK = {"sqlite": "", "postgres": "SELECT 1 FROM lg_threads WHERE thread_id = ? FOR UPDATE"}


def thread(db: Unit, thread_id: str) -> tuple[int, str | None] | None:
    """(key, tree id) of a thread, None when it has no row."""
    row = db.one("SELECT key, tree_id FROM lg_threads WHERE thread_id = ?", (thread_id,))
    return (int(row[0]), row[1]) if row else None


def ensure_thread(db: Unit, thread_id: str, at: str, *, lock: bool = False
                  ) -> tuple[int, str | None]:
    """(key, tree id) of a thread, its row made when it has none; with `lock`, the row
    is held until the unit ends (a put: another put of the thread waits for it, so
    two never both make its tree)."""
    found = None if lock else thread(db, thread_id)
    if found is not None:
        return found
    db.execute("INSERT INTO lg_threads (thread_id, created_at) VALUES (?, ?) "
               "ON CONFLICT (thread_id) DO NOTHING", (thread_id, at))
    if lock and _LOCK[db.dialect]:
        db.execute(_LOCK[db.dialect], (thread_id,))
    made = thread(db, thread_id)
    assert made is not None
    return made


def set_tree(db: Unit, key: int, tree_id: str | None) -> None:
    db.execute("UPDATE lg_threads SET tree_id = ? WHERE key = ?", (tree_id, key))


def threads_of_tree(db: Unit, tree_id: str) -> list[tuple[int, str]]:
    """(key, thread id) of the threads whose messages are in a tree."""
    return [(int(r[0]), str(r[1])) for r in db.execute(
        "SELECT key, thread_id FROM lg_threads WHERE tree_id = ? ORDER BY key", (tree_id,))]


def all_threads(db: Unit) -> list[tuple[int, str]]:
    return [(int(r[0]), str(r[1])) for r in db.execute(
        "SELECT key, thread_id FROM lg_threads ORDER BY thread_id")]


def next_fork(db: Unit, key: int) -> int:
    """A new branch number of a thread (1, 2, ...; 0 is its first line)."""
    db.execute("UPDATE lg_threads SET forks = forks + 1 WHERE key = ?", (key,))
    row = db.one("SELECT forks FROM lg_threads WHERE key = ?", (key,))
    assert row is not None
    return int(row[0])


def delete_thread(db: Unit, key: int) -> None:
    for table in ("lg_checkpoints", "lg_writes", "lg_blobs", "lg_branches"):
        db.execute(f"DELETE FROM {table} WHERE thread = ?", (key,))
    db.execute("DELETE FROM lg_threads WHERE key = ?", (key,))


# ---------------------------------------------------------------- checkpoints


def checkpoint(db: Unit, key: int, ns: str, checkpoint_id: str) -> Row | None:
    row = db.one("SELECT checkpoint_id, parent_id, branch, body FROM lg_checkpoints "
                 "WHERE thread = ? AND ns = ? AND checkpoint_id = ?", (key, ns, checkpoint_id))
    return _row(row) if row else None


def latest(db: Unit, key: int, ns: str) -> Row | None:
    row = db.one("SELECT checkpoint_id, parent_id, branch, body FROM lg_checkpoints "
                 "WHERE thread = ? AND ns = ? ORDER BY checkpoint_id DESC LIMIT 1", (key, ns))
    return _row(row) if row else None


def checkpoints(db: Unit, key: int, ns: str | None, before: str | None, after: str | None,
                limit: int) -> list[tuple[str, Row]]:
    """(ns, row) of a thread's checkpoints, newest first: in one namespace or all, older
    than `before`, older than `after` too when paging (the last id of the page before)."""
    where, args = ["thread = ?"], list[Any]([key])
    if ns is not None:
        where.append("ns = ?")
        args.append(ns)
    for bound in (before, after):
        if bound is not None:
            where.append("checkpoint_id < ?")
            args.append(bound)
    rows = db.execute(
        "SELECT ns, checkpoint_id, parent_id, branch, body FROM lg_checkpoints WHERE "
        + " AND ".join(where) + " ORDER BY checkpoint_id DESC, ns LIMIT ?", (*args, limit))
    return [(str(r[0]), _row(r[1:])) for r in rows]


def _row(r: Sequence[Any]) -> Row:
    return (str(r[0]), r[1], None if r[2] is None else int(r[2]), bytes(r[3]))


def put_checkpoint(db: Unit, key: int, ns: str, row: Row, run_id: str | None) -> None:
    cid, parent, branch, body = row
    db.execute(
        "INSERT INTO lg_checkpoints (thread, ns, checkpoint_id, parent_id, run_id, branch, body) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (thread, ns, checkpoint_id) DO UPDATE SET "
        "parent_id = excluded.parent_id, run_id = excluded.run_id, branch = excluded.branch, "
        "body = excluded.body", (key, ns, cid, parent, run_id, branch, body))


def namespaces(db: Unit, key: int) -> list[str]:
    return [str(r[0]) for r in db.execute(
        "SELECT DISTINCT ns FROM lg_checkpoints WHERE thread = ? ORDER BY ns", (key,))]


def bodies(db: Unit, key: int) -> list[bytes]:
    """Every checkpoint body of a thread (what its values refer to)."""
    return [bytes(r[0]) for r in db.execute(
        "SELECT body FROM lg_checkpoints WHERE thread = ?", (key,))]


def delete_checkpoints(db: Unit, key: int, ns: str, ids: Sequence[str]) -> None:
    """Checkpoints and their writes."""
    for table in ("lg_checkpoints", "lg_writes"):
        for cond, args in db.where_in("checkpoint_id", ids):
            db.execute(f"DELETE FROM {table} WHERE thread = ? AND ns = ? AND {cond}",
                       (key, ns, *args))


def older_than_latest(db: Unit, key: int, ns: str) -> list[str]:
    """Ids of a namespace's checkpoints but the newest."""
    return [str(r[0]) for r in db.execute(
        "SELECT checkpoint_id FROM lg_checkpoints WHERE thread = ? AND ns = ? AND checkpoint_id < "
        "(SELECT MAX(checkpoint_id) FROM lg_checkpoints WHERE thread = ? AND ns = ?)",
        (key, ns, key, ns))]


def of_runs(db: Unit, run_ids: Sequence[str]) -> list[tuple[int, str, str]]:
    """(thread, ns, checkpoint id) of the checkpoints the runs made."""
    out: list[tuple[int, str, str]] = []
    for cond, args in db.where_in("run_id", run_ids):
        out += [(int(r[0]), str(r[1]), str(r[2])) for r in db.execute(
            f"SELECT thread, ns, checkpoint_id FROM lg_checkpoints WHERE {cond}", args)]
    return out


# ---------------------------------------------------------------- branches


def branch_with_head(db: Unit, key: int, head: str) -> int | None:
    row = db.one("SELECT branch FROM lg_branches WHERE thread = ? AND head = ? "
                 "ORDER BY branch LIMIT 1", (key, head))
    return int(row[0]) if row else None


def has_branches(db: Unit, key: int) -> bool:
    return db.one("SELECT 1 FROM lg_branches WHERE thread = ? LIMIT 1", (key,)) is not None


def set_head(db: Unit, key: int, branch: int, head: str) -> None:
    db.execute("INSERT INTO lg_branches (thread, branch, head) VALUES (?, ?, ?) "
               "ON CONFLICT (thread, branch) DO UPDATE SET head = excluded.head",
               (key, branch, head))


def branches(db: Unit, key: int) -> list[int]:
    return [int(r[0]) for r in db.execute(
        "SELECT branch FROM lg_branches WHERE thread = ? ORDER BY branch", (key,))]


# ---------------------------------------------------------------- writes and values


def put_write(db: Unit, key: int, ns: str, row: WriteRow, *, replace: bool) -> None:
    """A pending write; one already stored under its (task, idx) stays unless `replace`
    (the special channels: an error, an interrupt, which LangGraph writes again)."""
    cid, task_id, idx, channel, task_path, value = row
    db.execute(
        "INSERT INTO lg_writes (thread, ns, checkpoint_id, task_id, idx, channel, task_path, value) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (thread, ns, checkpoint_id, task_id, idx) "
        + ("DO UPDATE SET channel = excluded.channel, task_path = excluded.task_path, "
           "value = excluded.value" if replace else "DO NOTHING"),
        (key, ns, cid, task_id, idx, channel, task_path, value))


def writes(db: Unit, key: int, ns: str, ids: Sequence[str]) -> list[WriteRow]:
    out: list[WriteRow] = []
    for cond, args in db.where_in("checkpoint_id", ids):
        out += [(str(r[0]), str(r[1]), int(r[2]), str(r[3]), str(r[4]), bytes(r[5]))
                for r in db.execute(
                    "SELECT checkpoint_id, task_id, idx, channel, task_path, value FROM lg_writes "
                    f"WHERE thread = ? AND ns = ? AND {cond}", (key, ns, *args))]
    return out


def write_values(db: Unit, key: int) -> list[bytes]:
    return [bytes(r[0]) for r in db.execute("SELECT value FROM lg_writes WHERE thread = ?", (key,))]


def put_blob(db: Unit, key: int, digest: bytes, type_: str, data: bytes) -> None:
    db.execute("INSERT INTO lg_blobs (thread, hash, type, data) VALUES (?, ?, ?, ?) "
               "ON CONFLICT (thread, hash) DO NOTHING", (key, digest, type_, data))


def blobs(db: Unit, key: int, digests: Sequence[bytes]) -> dict[bytes, tuple[str, bytes]]:
    out: dict[bytes, tuple[str, bytes]] = {}
    for cond, args in db.where_in("hash", list(digests)):
        for r in db.execute(f"SELECT hash, type, data FROM lg_blobs WHERE thread = ? AND {cond}",
                            (key, *args)):
            out[bytes(r[0])] = (str(r[1]), bytes(r[2]))
    return out


def blob_digests(db: Unit, key: int) -> list[bytes]:
    return [bytes(r[0]) for r in db.execute("SELECT hash FROM lg_blobs WHERE thread = ?", (key,))]


def delete_blobs(db: Unit, key: int, digests: Sequence[bytes]) -> None:
    for cond, args in db.where_in("hash", list(digests)):
        db.execute(f"DELETE FROM lg_blobs WHERE thread = ? AND {cond}", (key, *args))


def copy_thread(db: Unit, src: int, dst: int) -> None:
    """Every checkpoint, write and value of one thread under another (rows the target
    already has stay)."""
    db.execute(
        "INSERT INTO lg_checkpoints (thread, ns, checkpoint_id, parent_id, run_id, branch, body) "
        "SELECT ?, ns, checkpoint_id, parent_id, run_id, branch, body FROM lg_checkpoints "
        "WHERE thread = ? ON CONFLICT (thread, ns, checkpoint_id) DO NOTHING", (dst, src))
    db.execute(
        "INSERT INTO lg_writes (thread, ns, checkpoint_id, task_id, idx, channel, task_path, value) "
        "SELECT ?, ns, checkpoint_id, task_id, idx, channel, task_path, value FROM lg_writes "
        "WHERE thread = ? ON CONFLICT (thread, ns, checkpoint_id, task_id, idx) DO NOTHING",
        (dst, src))
    db.execute(
        "INSERT INTO lg_blobs (thread, hash, type, data) SELECT ?, hash, type, data FROM lg_blobs "
        "WHERE thread = ? ON CONFLICT (thread, hash) DO NOTHING", (dst, src))
    db.execute(
        "INSERT INTO lg_branches (thread, branch, head) SELECT ?, branch, head FROM lg_branches "
        "WHERE thread = ? ON CONFLICT (thread, branch) DO NOTHING", (dst, src))
    db.execute("UPDATE lg_threads SET forks = (SELECT forks FROM lg_threads WHERE key = ?) "
               "WHERE key = ? AND forks = 0", (src, dst))


# ---------------------------------------------------------------- messages


def put_message(db: Unit, node_id: str, fields: bytes) -> None:
    db.execute("INSERT INTO lg_messages (node_id, fields) VALUES (?, ?) "
               "ON CONFLICT (node_id) DO NOTHING", (node_id, fields))


def messages(db: Unit, node_ids: Sequence[str]) -> dict[str, bytes]:
    """node id -> what its message keeps beside the node."""
    out: dict[str, bytes] = {}
    for cond, args in db.where_in("node_id", list(node_ids)):
        for r in db.execute(f"SELECT node_id, fields FROM lg_messages WHERE {cond}", args):
            out[str(r[0])] = bytes(r[1])
    return out


def delete_messages(db: Unit, node_ids: Sequence[str]) -> None:
    for cond, args in db.where_in("node_id", list(node_ids)):
        db.execute(f"DELETE FROM lg_messages WHERE {cond}", args)


def compact_blob(db: Unit, key: int, digest: bytes, type_: str, data: bytes) -> None:
    """A stored value rewritten in a shorter form that reads back the same."""
    db.execute("UPDATE lg_blobs SET type = ?, data = ? WHERE thread = ? AND hash = ?",
               (type_, data, key, digest))
