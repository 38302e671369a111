"""The documents area's SQL: every function takes the unit it runs in."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..errors import NotFound, RefConflict
from ..store.areas import Unit

#: characters of an id (a ULID): a longer prefix names nothing
ID_CHARS = 26


@dataclass(frozen=True)
class Document:
    id: str
    name: str
    current_branch: str | None
    current_rev: str | None
    created_at: str


@dataclass(frozen=True)
class Revision:
    id: str
    document_id: str
    content_id: str
    message: str
    created_at: str
    parents: tuple[str, ...]

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "message": self.message, "parents": list(self.parents),
                "created_at": self.created_at, "content_id": self.content_id}

    def log_json(self) -> dict[str, object]:
        """One line of `doc log --json` (and of its HTTP twin)."""
        return {"id": self.id, "message": self.message, "parents": list(self.parents),
                "created_at": self.created_at}


def find_document(db: Unit, name: str) -> Document | None:
    row = db.one("SELECT id, name, current_branch, current_rev, created_at "
                 "FROM doc_documents WHERE name = ?", (name,))
    return Document(*row) if row else None


def document(db: Unit, name: str) -> Document:
    doc = find_document(db, name)
    if doc is None:
        near = [r[0] for r in db.execute(
            "SELECT name FROM doc_documents WHERE name >= ? AND name < ? ORDER BY name LIMIT 10",
            (name[:3], name[:3] + "\uffff"))]
        raise NotFound("document", name, near)
    return doc


def document_by_id(db: Unit, doc_id: str) -> Document | None:
    row = db.one("SELECT id, name, current_branch, current_rev, created_at "
                 "FROM doc_documents WHERE id = ?", (doc_id,))
    return Document(*row) if row else None


def insert_document(db: Unit, doc: Document) -> None:
    db.execute("INSERT INTO doc_documents VALUES (?, ?, ?, ?, ?)",
               (doc.id, doc.name, doc.current_branch, doc.current_rev, doc.created_at))


def set_current(db: Unit, doc_id: str, branch: str | None, rev: str | None) -> None:
    db.execute("UPDATE doc_documents SET current_branch = ?, current_rev = ? WHERE id = ?",
               (branch, rev, doc_id))


def delete_document(db: Unit, doc_id: str) -> None:
    revs = "SELECT id FROM doc_revisions WHERE document_id = ?"
    db.execute(f"DELETE FROM doc_parents WHERE revision_id IN ({revs})", (doc_id,))
    db.execute("DELETE FROM doc_revisions WHERE document_id = ?", (doc_id,))
    db.execute("DELETE FROM doc_branches WHERE document_id = ?", (doc_id,))
    db.execute("DELETE FROM doc_documents WHERE id = ?", (doc_id,))


def insert_revision(db: Unit, rev: Revision) -> None:
    db.execute("INSERT INTO doc_revisions VALUES (?, ?, ?, ?, ?)",
               (rev.id, rev.document_id, rev.content_id, rev.message, rev.created_at))
    for i, parent in enumerate(rev.parents):
        db.execute("INSERT INTO doc_parents VALUES (?, ?, ?)", (rev.id, i, parent))


def revision(db: Unit, doc_id: str, rev_id: str) -> Revision | None:
    row = db.one("SELECT id, document_id, content_id, message, created_at FROM doc_revisions "
                 "WHERE id = ? AND document_id = ?", (rev_id, doc_id))
    if row is None:
        return None
    parents = tuple(r[0] for r in db.execute(
        "SELECT parent_id FROM doc_parents WHERE revision_id = ? ORDER BY position", (rev_id,)))
    return Revision(row[0], row[1], row[2], row[3], row[4], parents)


def revision_ids_like(db: Unit, doc_id: str, prefix: str) -> list[str]:
    """Revision ids starting with `prefix` (a range, never a LIKE pattern: `%` and `_`
    in it are characters, and no length makes SQLite's pattern too complex)."""
    if len(prefix) > ID_CHARS:
        return []
    start = prefix.upper()
    return [r[0] for r in db.execute(
        "SELECT id FROM doc_revisions WHERE document_id = ? AND id >= ? AND id < ?"
        " ORDER BY id LIMIT 1001", (doc_id, start, start + "\uffff"))]


def revisions(db: Unit, doc_id: str) -> dict[str, Revision]:
    """Every revision of a document by id (a document's history is read whole)."""
    parents: dict[str, list[str]] = {}
    for rid, pid in db.execute(
            "SELECT p.revision_id, p.parent_id FROM doc_parents p JOIN doc_revisions r "
            "ON r.id = p.revision_id WHERE r.document_id = ? ORDER BY p.revision_id, p.position",
            (doc_id,)):
        parents.setdefault(rid, []).append(pid)
    return {row[0]: Revision(row[0], row[1], row[2], row[3], row[4],
                             tuple(parents.get(row[0], ())))
            for row in db.execute(
                "SELECT id, document_id, content_id, message, created_at FROM doc_revisions "
                "WHERE document_id = ?", (doc_id,))}


def branches(db: Unit, doc_id: str) -> dict[str, str]:
    return {str(n): str(h) for n, h in db.execute(
        "SELECT name, head FROM doc_branches WHERE document_id = ? ORDER BY name", (doc_id,))}


def branch_head(db: Unit, doc_id: str, name: str) -> str | None:
    row = db.one("SELECT head FROM doc_branches WHERE document_id = ? AND name = ?",
                 (doc_id, name))
    return None if row is None else str(row[0])


def create_branch(db: Unit, doc_id: str, name: str, head: str) -> bool:
    """Create a branch; False when one of that name exists (the insert is the check)."""
    rows = db.execute("INSERT INTO doc_branches VALUES (?, ?, ?) ON CONFLICT DO NOTHING "
                      "RETURNING name", (doc_id, name, head))
    return bool(rows)


def move_branch(db: Unit, doc_id: str, doc_name: str, name: str, expect: str, new: str) -> None:
    """Compare-and-swap a branch head: it moves only if it still points at `expect`."""
    rows = db.execute("UPDATE doc_branches SET head = ? WHERE document_id = ? AND name = ? "
                      "AND head = ? RETURNING name", (new, doc_id, name, expect))
    if not rows:
        raise RefConflict(f"doc:{doc_name} branch {name}", expect,
                          branch_head(db, doc_id, name))


def stored_body(db: Unit, content_id: str) -> str | None:
    row = db.one("SELECT body FROM doc_contents WHERE id = ?", (content_id,))
    return None if row is None else str(row[0])


def put_body(db: Unit, content_id: str, body: str, at: str) -> None:
    """Store a body, or refresh the time of the stored one: a body re-used now is not
    garbage a collection running now may take (see loomdb.gc)."""
    db.execute("INSERT INTO doc_contents VALUES (?, ?, ?) ON CONFLICT (id) DO UPDATE "
               "SET created_at = excluded.created_at", (content_id, body, at))


def all_documents(db: Unit) -> list[tuple[str, str]]:
    """(id, name) of every document, by name."""
    return [(str(i), str(n)) for i, n in db.execute(
        "SELECT id, name FROM doc_documents ORDER BY name")]


def revisions_with_content(db: Unit, content_id: str) -> list[tuple[str, str]]:
    """(document name, revision id) of every revision whose content is this one."""
    return [(str(n), str(r)) for n, r in db.execute(
        "SELECT d.name, r.id FROM doc_revisions r JOIN doc_documents d "
        "ON d.id = r.document_id WHERE r.content_id = ? ORDER BY r.id", (content_id,))]


def contents_without_body(db: Unit, content_ids: Sequence[str] | None = None) -> list[str]:
    """Content ids revisions use that the area keeps no body of (the core holds them),
    among `content_ids` (all of them when None)."""
    sql = ("SELECT DISTINCT r.content_id FROM doc_revisions r WHERE NOT EXISTS "
           "(SELECT 1 FROM doc_contents c WHERE c.id = r.content_id)")
    if content_ids is None:
        return [str(r[0]) for r in db.execute(sql)]
    out: list[str] = []
    for i in range(0, len(content_ids), 500):
        part = list(content_ids[i:i + 500])
        out += [str(r[0]) for r in db.execute(
            sql + f" AND r.content_id IN ({','.join('?' * len(part))})", part)]
    return out


def bodies(db: Unit) -> list[tuple[str, str]]:
    """(content id, body) of every body the area keeps."""
    return [(str(i), str(b)) for i, b in db.execute("SELECT id, body FROM doc_contents")]


def bodies_naming_blobs(db: Unit) -> list[str]:
    """Every kept body that may name a blob (a mention of `sha256:` anywhere)."""
    return [str(r[0]) for r in db.execute("SELECT body FROM doc_contents WHERE body LIKE ?",
                                          ("%sha256:%",))]


def body_names(db: Unit, needle: str) -> bool:
    """Whether any kept body mentions `needle` (a blob id)."""
    return db.one("SELECT 1 FROM doc_contents WHERE body LIKE ? LIMIT 1",
                  (f"%{needle}%",)) is not None


def set_body(db: Unit, content_id: str, body: str) -> None:
    """Overwrite a kept body (a redaction's tombstone)."""
    db.execute("UPDATE doc_contents SET body = ? WHERE id = ?", (body, content_id))


#: a kept body no revision uses, older than a cutoff (garbage; see loomdb.gc)
_UNUSED = ("FROM doc_contents c WHERE c.created_at < ? AND NOT EXISTS "
           "(SELECT 1 FROM doc_revisions r WHERE r.content_id = c.id)")


def unused_bodies(db: Unit, cutoff: str) -> list[tuple[str, str]]:
    """(content id, body) of every kept body no revision uses, made before `cutoff`."""
    return [(str(i), str(b)) for i, b in db.execute(f"SELECT c.id, c.body {_UNUSED}",
                                                    (cutoff,))]


def delete_unused_body(db: Unit, content_id: str, cutoff: str) -> bool:
    """Delete a kept body if it is still unused and older than `cutoff` (the check is in
    the statement, so a concurrent commit re-using it wins); whether it went."""
    return bool(db.execute(
        f"DELETE FROM doc_contents WHERE id IN (SELECT c.id {_UNUSED} AND c.id = ?) "
        "RETURNING id", (cutoff, content_id)))
