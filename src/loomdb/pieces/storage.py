"""The pieces area's SQL: every function takes the unit it runs in."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..store.areas import Unit


@dataclass(frozen=True)
class Piece:
    id: str
    name: str
    kind: str
    #: the user whose piece it is (None: the operator's)
    owner: str | None
    created_at: str


@dataclass(frozen=True)
class Version:
    piece_id: str
    number: int
    content_id: str
    created_at: str

    def to_json(self) -> dict[str, object]:
        return {"version": self.number, "hash": self.content_id, "created_at": self.created_at}


_PIECE = "SELECT id, name, kind, owner, created_at FROM piece_pieces"
_VERSION = "SELECT piece_id, number, content_id, created_at FROM piece_versions"


def by_name(db: Unit, name: str) -> Piece | None:
    row = db.one(f"{_PIECE} WHERE name = ?", (name,))
    return Piece(*row) if row else None


def by_ids(db: Unit, ids: Sequence[str]) -> dict[str, Piece]:
    out: dict[str, Piece] = {}
    for cond, args in db.where_in("id", sorted(set(ids))):
        out.update((r[0], Piece(*r)) for r in db.execute(f"{_PIECE} WHERE {cond}", args))
    return out


def listed(db: Unit, owner: str | None, everyone: bool) -> list[Piece]:
    if everyone:
        return [Piece(*r) for r in db.execute(f"{_PIECE} ORDER BY name")]
    return [Piece(*r) for r in db.execute(f"{_PIECE} WHERE owner = ? ORDER BY name", (owner,))]


def count_owned(db: Unit, owner: str | None) -> int:
    if owner is None:
        row = db.one("SELECT count(*) FROM piece_pieces WHERE owner IS NULL")
    else:
        row = db.one("SELECT count(*) FROM piece_pieces WHERE owner = ?", (owner,))
    return int(row[0]) if row else 0


def insert(db: Unit, piece: Piece) -> None:
    db.execute("INSERT INTO piece_pieces VALUES (?, ?, ?, ?, ?)",
               (piece.id, piece.name, piece.kind, piece.owner, piece.created_at))


def versions(db: Unit, piece_id: str) -> list[Version]:
    return [Version(*r) for r in db.execute(f"{_VERSION} WHERE piece_id = ? ORDER BY number",
                                            (piece_id,))]


def latest(db: Unit, piece_ids: Sequence[str]) -> dict[str, Version]:
    """The newest version of each piece, in one read per 500 pieces."""
    out: dict[str, Version] = {}
    for cond, args in db.where_in("v.piece_id", sorted(set(piece_ids))):
        out.update((r[0], Version(*r)) for r in db.execute(
            "SELECT v.piece_id, v.number, v.content_id, v.created_at FROM piece_versions v "
            "JOIN (SELECT piece_id, max(number) AS n FROM piece_versions v "
            f"WHERE {cond} GROUP BY piece_id) m ON m.piece_id = v.piece_id AND m.n = v.number",
            args))
    return out


def has_version(db: Unit, piece_id: str, content_id: str) -> bool:
    return db.one("SELECT 1 FROM piece_versions WHERE piece_id = ? AND content_id = ?",
                  (piece_id, content_id)) is not None


def held_versions(db: Unit, piece_ids: Sequence[str]) -> set[tuple[str, str]]:
    """(piece id, content id) of every version of these pieces, in one read per 500."""
    out: set[tuple[str, str]] = set()
    for cond, args in db.where_in("piece_id", sorted(set(piece_ids))):
        out.update((str(p), str(c)) for p, c in db.execute(
            f"SELECT piece_id, content_id FROM piece_versions WHERE {cond}", args))
    return out


def insert_version(db: Unit, version: Version) -> None:
    db.execute("INSERT INTO piece_versions VALUES (?, ?, ?, ?)",
               (version.piece_id, version.number, version.content_id, version.created_at))


def bodies(db: Unit, content_ids: Sequence[str]) -> dict[str, str]:
    out: dict[str, str] = {}
    for cond, args in db.where_in("id", sorted(set(content_ids))):
        out.update((str(i), str(b)) for i, b in
                   db.execute(f"SELECT id, body FROM piece_contents WHERE {cond}", args))
    return out


def put_body(db: Unit, content_id: str, body: str, at: str) -> None:
    db.execute("INSERT INTO piece_contents VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
               (content_id, body, at))


def set_body(db: Unit, content_id: str, body: str) -> None:
    db.execute("UPDATE piece_contents SET body = ? WHERE id = ?", (body, content_id))


def count_bodies(db: Unit) -> int:
    row = db.one("SELECT count(*) FROM piece_contents")
    return int(row[0]) if row else 0


def add_uses(db: Unit, rows: Sequence[tuple[str, str, str]]) -> None:
    for row in rows:
        db.execute("INSERT INTO piece_uses VALUES (?, ?, ?) ON CONFLICT DO NOTHING", row)


def uses(db: Unit, piece_id: str) -> list[tuple[str, str]]:
    """(tree id, node id) of the nodes naming a piece, by tree then node."""
    return [(str(t), str(n)) for t, n in db.execute(
        "SELECT tree_id, node_id FROM piece_uses WHERE piece_id = ? ORDER BY tree_id, node_id",
        (piece_id,))]


def forget_nodes(db: Unit, ids: Sequence[str]) -> None:
    for cond, args in db.where_in("node_id", ids):
        db.execute(f"DELETE FROM piece_uses WHERE {cond}", args)


def forget_tree(db: Unit, tree: str) -> None:
    db.execute("DELETE FROM piece_uses WHERE tree_id = ?", (tree,))
