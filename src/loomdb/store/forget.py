"""Forgetting rows for real: deleting nodes and trees, erasing a content's body, and
the record of both (tables of migration 0006). The interface, and the SQL both
dialects share; where contents live differs (SQLite stores a body inline in the first
node that used it, PostgreSQL in `contents`), so each dialect gives the few statements
that touch bodies (`sqlite/forget.py`, `postgres/forget.py`) and its own way to scrub
freed bytes from its files once a forget has committed.

Every method but `scrub` runs inside the caller's transaction: a delete or redaction
commits whole or not at all. What a row keeps and why is in docs/forget.md.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from .nodes import REDACTED_COPY
from .nodes import TOMBSTONE as TOMBSTONE
from .rows import bytes_to_hex, hex_to_bytes

if TYPE_CHECKING:
    from ..model import Node
    from .nodes import NodeStore
    from .runner import SqlRunner

_CHUNK = 500


class TreeRow(NamedTuple):
    """What deciding a delete needs of one node (no content)."""

    id: str
    parent: str | None
    slot: str
    edited_from: str | None
    content_id: str
    provenance: str | None


class ForgetStore(ABC):
    """Deletes, redactions and their record on one backend (see the module docstring)."""

    #: `sqlite` or `postgres`
    dialect: str

    def __init__(self, runner: SqlRunner, nodes: NodeStore) -> None:
        self.runner = runner
        self.nodes = nodes

    # -- helpers ---------------------------------------------------------------------
    def _in(self, column: str, values: Sequence[Any], cast: str = "text") -> Iterator[
            tuple[str, list[Any]]]:
        """(condition, args) pairs selecting `column` in `values`: chunks of
        parameters on SQLite, one array per statement on PostgreSQL."""
        if not values:
            return
        if self.dialect == "postgres":
            yield f"{column} = ANY(?::{cast}[])", [list(values)]
            return
        for i in range(0, len(values), _CHUNK):
            part = list(values[i:i + _CHUNK])
            yield f"{column} IN ({','.join('?' * len(part))})", part

    def _run(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return self.runner.execute(sql, args)

    def run(self, sql: str, args: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        """One statement on an area's tables (`?` placeholders), in the transaction."""
        return self._run(sql, args)

    def in_(self, column: str, values: Sequence[Any]) -> Iterator[tuple[str, list[Any]]]:
        """(condition, args) pairs selecting text `column` in `values`."""
        return self._in(column, values)

    def existing(self, tables: Sequence[str]) -> set[str]:
        """Which of these tables the store has (an area's tables exist once it is used)."""
        if self.dialect == "postgres":
            return {t for t in tables if self._run("SELECT to_regclass(?)", (t,))[0][0]}
        marks = ",".join("?" * len(tables))
        return {r[0] for r in self._run(
            f"SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ({marks})",
            list(tables))}

    # -- reading what a forget decides on ------------------------------------------------
    def tree_rows(self, tree_id: str) -> list[TreeRow]:
        """Every node of a tree, without content, in no order."""
        return [TreeRow(r[0], r[1], r[2], r[3], bytes_to_hex(r[4]), r[5]) for r in self._run(
            "SELECT id, parent_id, slot_id, edited_from, content_id, provenance FROM nodes"
            " WHERE tree_id = ?", (tree_id,))]

    def created_from(self, tree_id: str) -> list[tuple[str, str]]:
        """(node, what it was also created from) for the extra sources and stored
        version selections of a tree's nodes."""
        return [(r[0], r[1]) for r in self._run(
            "SELECT node_id, source_id FROM node_sources WHERE tree_id = ? UNION ALL"
            " SELECT node_id, version_id FROM node_selections WHERE tree_id = ?",
            (tree_id, tree_id))]

    def created_from_elsewhere(self, ids: Sequence[str], tree_id: str) -> set[str]:
        """Trees other than `tree_id` with a node created from one of `ids`."""
        out: set[str] = set()
        for cond, args in self._in("source_id", ids):
            out |= {r[0] for r in self._run(
                f"SELECT tree_id FROM node_sources WHERE {cond} AND tree_id <> ?",
                [*args, tree_id])}
        for cond, args in self._in("version_id", ids):
            out |= {r[0] for r in self._run(
                f"SELECT tree_id FROM node_selections WHERE {cond} AND tree_id <> ?",
                [*args, tree_id])}
        return out

    def content_users(self, content_id: str) -> list[tuple[str, str]]:
        """(node, tree) of every node holding a content (one pass over the nodes), but
        for the copies their owners redacted (`redact_copies`)."""
        return [(r[0], r[1]) for r in self._run(
            f"SELECT id, tree_id FROM nodes WHERE content_id = ? AND flags & {REDACTED_COPY} = 0",
            (hex_to_bytes(content_id),))]

    @abstractmethod
    def stored_contents(self, content_ids: Sequence[str]) -> set[str]:
        """The content ids among these that some node still holds."""

    @abstractmethod
    def bodies_with_blobs(self, ids: Sequence[str]) -> dict[str, str]:
        """content id -> body, for the contents of these nodes that may point at a blob."""

    @abstractmethod
    def blob_used(self, blob_id: str) -> bool:
        """Whether any stored node content still names this blob."""

    # -- deleting ------------------------------------------------------------------------
    @abstractmethod
    def delete_nodes(self, ids: Sequence[str]) -> None:
        """Delete these node rows; a content they held that other nodes still use stays
        stored for them, one no node uses any more is gone with its last node."""

    def delete_node_rows(self, ids: Sequence[str]) -> None:
        """Everything that hangs on these nodes: sources, selections, overlay, tags,
        compaction records, and the annotation and link edges touching them."""
        for cond, args in self._in("node_id", ids):
            for table in ("node_sources", "node_selections", "node_meta", "node_tags",
                          "compactions", "node_scrubs"):
                self._run(f"DELETE FROM {table} WHERE {cond}", args)
        for cond, args in self._in("item", ids):
            self._run(f"DELETE FROM stale WHERE {cond}", args)
        edges: set[str] = set()
        for cond, args in self._in("target_id", ids):
            edges |= {r[0] for r in self._run(f"SELECT id FROM edges WHERE {cond}", args)}
        for cond, args in self._in("source_id", ids):
            edges |= {r[0] for r in self._run(
                f"SELECT edge_id FROM edge_sources WHERE {cond}", args)}
        for cond, args in self._in("edge_id", sorted(edges)):
            self._run(f"DELETE FROM edge_sources WHERE {cond}", args)
        for cond, args in self._in("id", sorted(edges)):
            self._run(f"DELETE FROM edges WHERE {cond}", args)

    def delete_generations(self, ids: Sequence[str]) -> None:
        for cond, args in self._in("id", ids):
            self._run(f"DELETE FROM generations WHERE {cond}", args)

    def delete_tree(self, tree_id: str) -> None:
        """The tree's own row and its per-tree records (its nodes are deleted first)."""
        for table in ("generations", "compactions", "node_meta", "node_tags", "stale"):
            self._run(f"DELETE FROM {table} WHERE tree_id = ?", (tree_id,))
        self._run("DELETE FROM trees WHERE id = ?", (tree_id,))

    # -- redacting -----------------------------------------------------------------------
    @abstractmethod
    def redact_content(self, content_id: str) -> None:
        """Replace the stored body of a content by the tombstone (its id stays)."""

    @abstractmethod
    def redact_copies(self, ids: Sequence[str]) -> None:
        """These nodes read as the tombstone from now on, whatever content they hold;
        every other node holding the same content keeps it, and a content no other
        node holds is gone (a user's redaction of their own copies)."""

    @abstractmethod
    def set_body(self, content_id: str, body: str) -> None:
        """Replace the stored body of a content (a span redaction's scrubbed body)."""

    @abstractmethod
    def span_contents(self, trees: Sequence[str] | None, needles: Sequence[str] | None
                      ) -> dict[str, tuple[str, list[tuple[str, str]]]]:
        """content id -> (stored body, [(node, tree) of every node reading it]), for the
        contents some node of `trees` (None: any) reads whose body holds one of
        `needles` (None: every body: the caller looks itself)."""

    # -- span redaction: the rows that may hold a span -----------------------------------
    #: the SQL function finding a substring: (haystack, needle) -> position, 0 if none
    find = "instr"

    def _holding(self, columns: Sequence[str], needles: Sequence[str] | None
                 ) -> tuple[str, list[Any]]:
        """` AND` one of `columns` holds one of `needles` (nothing: no condition)."""
        if not needles:
            return "", []
        conds = [f"{self.find}({c}, ?) > 0" for c in columns for _ in needles]
        return " AND (" + " OR ".join(conds) + ")", [n for _ in columns for n in needles]

    def _scoped(self, sql: str, trees: Sequence[str] | None, holding: tuple[str, list[Any]],
                column: str = "tree_id") -> list[tuple[Any, ...]]:
        """`sql` (ending in a WHERE clause's first condition) for `trees` (None: all)."""
        cond, args = holding
        if trees is None:
            return self._run(sql + " 1 = 1" + cond, args)
        out: list[tuple[Any, ...]] = []
        for tcond, targs in self._in(column, trees):
            out += self._run(f"{sql} {tcond}{cond}", [*targs, *args])
        return out

    def span_generations(self, trees: Sequence[str] | None, needles: Sequence[str] | None
                         ) -> list[tuple[str, str, str, str, str]]:
        """(id, tree, request, provider request, raw response) of the generation records
        of `trees` holding one of `needles`."""
        cols = ("request", "provider_request", "raw_response")
        return [(r[0], r[1], r[2], r[3], r[4]) for r in self._scoped(
            "SELECT id, tree_id, request, provider_request, raw_response FROM generations WHERE",
            trees, self._holding(cols, needles))]

    def span_origins(self, trees: Sequence[str] | None, needles: Sequence[str] | None
                     ) -> list[str]:
        """Nodes of `trees` whose origin or provenance JSON holds one of `needles`."""
        return [r[0] for r in self._scoped(
            "SELECT id FROM nodes WHERE (origin IS NOT NULL OR provenance IS NOT NULL) AND",
            trees, self._holding(("origin", "provenance"), needles))]

    def tree_texts(self, trees: Sequence[str] | None) -> list[tuple[str, str, str | None,
                                                                    str | None]]:
        """(id, title, system prompt, root node) of `trees` (None: every tree)."""
        rows = self._scoped("SELECT id, title, system, root_id FROM trees WHERE", trees,
                            ("", []), column="id")
        return [(r[0], r[1], r[2], r[3]) for r in rows]

    def node_copies(self, trees: Sequence[str] | None, needles: Sequence[str] | None
                    ) -> list[tuple[str, str, str]]:
        """(node, tree, body) of the nodes of `trees` reading their own scrubbed copy
        (`node_scrubs`) whose body holds one of `needles`."""
        if self.dialect == "postgres":
            sql, column = "SELECT s.node_id, s.tree_id, s.body FROM node_scrubs s WHERE", "tree_id"
        else:
            sql, column = ("SELECT s.node_id, n.tree_id, s.body FROM node_scrubs s JOIN nodes n"
                           " ON n.id = s.node_id WHERE", "n.tree_id")
        return [(r[0], r[1], r[2]) for r in self._scoped(
            sql, trees, self._holding(("s.body",), needles), column=column)]

    def put_copies(self, rows: Sequence[tuple[str, str, str]]) -> None:
        """(node, tree, body): these nodes read this body of their own from now on
        (they are redacted copies: `redact_copies` first)."""
        for node, tree, body in rows:
            if self.dialect == "postgres":
                self._run("INSERT INTO node_scrubs (tree_id, node_id, body) VALUES (?, ?, ?)"
                          " ON CONFLICT (tree_id, node_id) DO UPDATE SET body = excluded.body",
                          (tree, node, body))
            else:
                self._run("INSERT INTO node_scrubs (node_id, body) VALUES (?, ?) ON CONFLICT"
                          " (node_id) DO UPDATE SET body = excluded.body", (node, body))

    def drop_node_copies(self, ids: Sequence[str]) -> None:
        """These nodes' own scrubbed copies go (they read as the tombstone)."""
        for cond, args in self._in("node_id", ids):
            self._run(f"DELETE FROM node_scrubs WHERE {cond}", args)

    def drop_copies_of(self, content_id: str) -> None:
        """The nodes' own scrubbed copies of a content go (it is redacted whole: they
        read as the tombstone)."""
        cid = hex_to_bytes(content_id)
        if self.dialect == "postgres":
            self._run("DELETE FROM node_scrubs s USING nodes n WHERE n.id = s.node_id"
                      " AND n.tree_id = s.tree_id AND n.content_id = ?", (cid,))
        else:
            self._run("DELETE FROM node_scrubs WHERE node_id IN (SELECT s.node_id FROM"
                      " node_scrubs s JOIN nodes n ON n.id = s.node_id WHERE n.content_id = ?)",
                      (cid,))

    def set_tree_texts(self, tree_id: str, title: str, system: str | None) -> None:
        """A tree's title and system prompt, its time of change left as it was."""
        self._run("UPDATE trees SET title = ?, system = ? WHERE id = ?", (title, system, tree_id))

    def set_generation(self, gen_id: str, request: str, provider_request: str,
                       raw_response: str) -> None:
        self._run("UPDATE generations SET request = ?, provider_request = ?, raw_response = ?"
                  " WHERE id = ?", (request, provider_request, raw_response, gen_id))

    def mark_scrubbed(self, items: Sequence[tuple[str, str, str]], seq: int, at: str) -> None:
        """Note (item, kind, digest of what is stored now) as scrubbed by line `seq`."""
        for item, kind, dig in items:
            self._run("INSERT INTO scrubs (item, kind, digest, seq, at) VALUES (?, ?, ?, ?, ?)"
                      " ON CONFLICT (item) DO UPDATE SET digest = excluded.digest,"
                      " seq = excluded.seq, at = excluded.at", (item, kind, dig, seq, at))

    def all_scrubbed(self) -> dict[str, dict[str, str]]:
        """kind -> {item: digest} of every scrubbed content, generation record and
        node's own copy."""
        out: dict[str, dict[str, str]] = {"content": {}, "generation": {}, "node": {}}
        for item, kind, dig in self._run("SELECT item, kind, digest FROM scrubs"):
            out.setdefault(kind, {})[item] = dig
        return out

    def compactions_in(self, trees: Sequence[str]) -> list[tuple[str, str]]:
        """(compaction node, tree) of these trees."""
        out: list[tuple[str, str]] = []
        for cond, args in self._in("tree_id", trees):
            out += [(r[0], r[1]) for r in self._run(
                f"SELECT node_id, tree_id FROM compactions WHERE {cond}", args)]
        return out

    def mark_stale(self, rows: Sequence[tuple[str, str, str, str]], at: str) -> None:
        """Note (tree, item, kind, source) as stale: a derived value made from a node
        forgotten since."""
        for tree, item, kind, source in rows:
            self._run("INSERT INTO stale (tree_id, item, kind, source, at) VALUES"
                      " (?, ?, ?, ?, ?) ON CONFLICT (tree_id, item) DO UPDATE SET"
                      " source = excluded.source, at = excluded.at",
                      (tree, item, kind, source, at))

    def stale(self, tree: str | None = None) -> list[dict[str, str]]:
        """What is stale (`tree`: that tree's), oldest first."""
        where, args = ("WHERE tree_id = ? ", [tree]) if tree else ("", [])
        rows = self._run("SELECT tree_id, item, kind, source, at FROM stale "
                         f"{where}ORDER BY at, item", args)
        return [{"tree": r[0], "item": r[1], "kind": r[2], "source": r[3], "at": r[4]}
                for r in rows]

    def clear_stale(self, tree: str, item: str) -> None:
        self._run("DELETE FROM stale WHERE tree_id = ? AND item = ?", (tree, item))

    def retitle(self, tree_id: str, title: str) -> None:
        """Replace a tree's title (one made from a redacted root's words), leaving its
        time of change as it was."""
        self._run("UPDATE trees SET title = ? WHERE id = ?", (title, tree_id))

    def insert_tombstone(self, node: Node, flags: int) -> None:
        """Store a redacted node as an export carried it: a redacted copy under its own
        content id (the export's own; any other node holding that content here keeps
        it, so an import never erases what is not its own), noted as redacted."""
        self.nodes.insert_node(node, TOMBSTONE.encode("utf-8"), flags)
        self.redact_copies([node.id])
        self.mark_redacted([node.id], "node", node.created_at)

    def origins(self, ids: Sequence[str]) -> dict[str, tuple[str | None, str | None]]:
        """node -> its stored (origin, provenance) JSON, for the nodes having either."""
        out: dict[str, tuple[str | None, str | None]] = {}
        for cond, args in self._in("id", ids):
            out |= {r[0]: (r[1], r[2]) for r in self._run(
                f"SELECT id, origin, provenance FROM nodes WHERE {cond}"
                " AND (origin IS NOT NULL OR provenance IS NOT NULL)", args)}
        return out

    def set_origin(self, node_id: str, origin: str | None, provenance: str | None) -> None:
        """Rewrite a node's origin and provenance JSON (the chain covers neither, only
        the response hash inside the provenance, which stays)."""
        self._run("UPDATE nodes SET origin = ?, provenance = ? WHERE id = ?",
                  (origin, provenance, node_id))

    def generations_of(self, trees: Sequence[str]) -> list[tuple[str, str, str, str]]:
        """(id, request, provider request, raw response) of the trees' generations."""
        out: list[tuple[str, str, str, str]] = []
        for cond, args in self._in("tree_id", trees):
            out += [(r[0], r[1], r[2], r[3]) for r in self._run(
                "SELECT id, request, provider_request, raw_response FROM generations"
                f" WHERE {cond}", args)]
        return out

    def redact_generation(self, gen_id: str) -> None:
        """Erase what a generation record carries (requests and raw response); its
        response hash, model, usage and timing stay."""
        marker = json.dumps({"redacted": True})
        self._run("UPDATE generations SET request = ?, provider_request = ?,"
                  " raw_response = ? WHERE id = ?", (marker, marker, marker, gen_id))

    # -- the record ----------------------------------------------------------------------
    def remember(self, ids: Iterable[str], kind: str, tree_id: str, at: str) -> None:
        """Note ids as forgotten (an import skips them from then on)."""
        rows = [(i, kind, tree_id, at) for i in ids]
        if rows:
            for i in range(0, len(rows), _CHUNK):
                part = rows[i:i + _CHUNK]
                self._run("INSERT INTO forgotten (id, kind, tree_id, at) VALUES "
                          + ",".join(["(?, ?, ?, ?)"] * len(part))
                          + " ON CONFLICT (id) DO NOTHING", [v for r in part for v in r])

    def forgotten(self, ids: Sequence[str]) -> set[str]:
        """Which of these node or tree ids were deleted."""
        out: set[str] = set()
        for cond, args in self._in("id", ids):
            out |= {r[0] for r in self._run(f"SELECT id FROM forgotten WHERE {cond}", args)}
        return out

    def mark_redacted(self, items: Iterable[str], kind: str, at: str) -> None:
        for item in items:
            self._run("INSERT INTO redactions (item, kind, at) VALUES (?, ?, ?)"
                      " ON CONFLICT (item) DO NOTHING", (item, kind, at))

    def redacted(self, kind: str, items: Sequence[str]) -> set[str]:
        """Which of these content or generation ids were redacted."""
        out: set[str] = set()
        for cond, args in self._in("item", items):
            out |= {r[0] for r in self._run(
                f"SELECT item FROM redactions WHERE kind = ? AND {cond}", [kind, *args])}
        return out

    def all_redacted(self) -> dict[str, set[str]]:
        """Every redacted item by kind (`content`, `generation`)."""
        out: dict[str, set[str]] = {"content": set(), "generation": set()}
        for item, kind in self._run("SELECT item, kind FROM redactions"):
            out.setdefault(kind, set()).add(item)
        return out

    def log(self, entry: dict[str, Any]) -> int:
        """Append one line to the record of forgetting; its number."""
        row = self._run(
            "INSERT INTO forget_log (at, actor, action, target, trees, ids, refs, reason)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING seq",
            (entry["at"], entry["actor"], entry["action"], entry["target"],
             json.dumps(entry["trees"]), json.dumps(entry["ids"]), json.dumps(entry["refs"]),
             entry.get("reason")))
        return int(row[0][0])

    def entries(self, *, limit: int, tree: str | None = None) -> list[dict[str, Any]]:
        """The newest lines of the record, newest first (`tree`: those naming it)."""
        rows = self._run(
            "SELECT seq, at, actor, action, target, trees, ids, refs, reason FROM forget_log"
            " ORDER BY seq DESC" + ("" if tree else " LIMIT ?"), () if tree else (limit,))
        out = []
        for r in rows:
            trees = json.loads(r[5])
            if tree and tree not in trees:
                continue
            out.append({"seq": r[0], "at": r[1], "actor": r[2], "action": r[3],
                        "target": r[4], "trees": trees, "ids": json.loads(r[6]),
                        "refs": json.loads(r[7]), "reason": r[8]})
            if len(out) >= limit:
                break
        return out

    def setting(self, name: str) -> str | None:
        row = self._run("SELECT value FROM forget_settings WHERE name = ?", (name,))
        return str(row[0][0]) if row else None

    def set_setting(self, name: str, value: str | None) -> None:
        if value is None:
            self._run("DELETE FROM forget_settings WHERE name = ?", (name,))
        else:
            self._run("INSERT INTO forget_settings (name, value) VALUES (?, ?) ON CONFLICT"
                      " (name) DO UPDATE SET value = excluded.value", (name, value))

    # -- the secrets scanner's findings (docs/security.md) -----------------------------
    def add_findings(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """Note findings: (at, tree, item, kind, place, start, end, action, rule) each."""
        for row in rows:
            self._run("INSERT INTO secret_findings (at, tree_id, item, kind, place, span_start,"
                      " span_end, action, rule) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", row)

    def findings(self, *, limit: int, tree: str | None = None) -> list[dict[str, Any]]:
        """The newest findings, newest first (`tree`: that tree's)."""
        where, args = ("WHERE tree_id = ? ", [tree]) if tree else ("", [])
        rows = self._run("SELECT seq, at, tree_id, item, kind, place, span_start, span_end,"
                         f" action, rule FROM secret_findings {where}ORDER BY seq DESC LIMIT ?",
                         [*args, limit])
        keys = ("seq", "at", "tree", "item", "kind", "place", "start", "end", "action", "rule")
        return [dict(zip(keys, r, strict=True)) for r in rows]

    # -- copying a store (`loomdb migrate`) ----------------------------------------------
    #: the record's tables and their columns, as a copy carries them
    RECORD = {
        "forget_log": ("seq", "at", "actor", "action", "target", "trees", "ids", "refs",
                       "reason"),
        "forgotten": ("id", "kind", "tree_id", "at"),
        "redactions": ("item", "kind", "at"),
        "forget_settings": ("name", "value"),
        "scrubs": ("item", "kind", "digest", "seq", "at"),
        "stale": ("tree_id", "item", "kind", "source", "at"),
        "secret_findings": ("seq", "at", "tree_id", "item", "kind", "place", "span_start",
                            "span_end", "action", "rule"),
    }

    def record_rows(self) -> dict[str, list[tuple[Any, ...]]]:
        """Every row of the record (to copy it into another store)."""
        return {t: self._run(f"SELECT {', '.join(c)} FROM {t}") for t, c in self.RECORD.items()}

    def restore_record(self, rows: dict[str, list[tuple[Any, ...]]]) -> int:
        """Write a copied record (rows already there are kept); how many rows."""
        count = 0
        for table, cols in self.RECORD.items():
            for row in rows.get(table, []):
                self._run(f"INSERT INTO {table} ({', '.join(cols)}) VALUES"
                          f" ({', '.join('?' * len(cols))}) ON CONFLICT DO NOTHING", row)
                count += 1
        for table in ("forget_log", "secret_findings"):
            if self.dialect == "postgres" and rows.get(table):
                self._run(f"SELECT setval(pg_get_serial_sequence('{table}', 'seq'),"
                          f" (SELECT max(seq) FROM {table}))")
        return count

    # -- around the work ----------------------------------------------------------------
    @abstractmethod
    def begin(self) -> None:
        """Set up the connection for forgetting (inside the transaction, first)."""

    @abstractmethod
    def scrub(self, tables: Sequence[str] = (),
              needles: Sequence[bytes] = ()) -> dict[str, Any]:
        """Make freed bytes leave the store's files, after the forget committed
        (`tables`: area tables it touched too; `needles`: bytes of the erased text,
        looked for where a file may hold stale copies)."""

    def forget_memory(self, ids: Iterable[str]) -> None:
        """Drop what the store remembers of deleted nodes (their places)."""
        self.nodes.forget_places(ids)
