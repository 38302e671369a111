"""simonw/llm's `logs.db` into the intermediate form: a user's whole `llm` history at once.

Two stores, both read (the database is opened read-only; no file a row names is read):

  * **the message store** (llm 0.32 and later): `messages` are content-addressed and
    name their parent's hash, so they form trees; each root (a system prompt, or the
    first user message) is one loomdb tree holding every message below it, branches
    included. A message's `parts` become blocks: text, reasoning (thinking), tool_call
    (tool_use), tool_result, attachment (the bytes from `attachments`, else a text
    block naming the URL or path). `threads` are the sessions: each becomes a session
    ref at its tip (`forked_from` kept in the ref's origin), so a fork is a second
    session into the same tree, as in llm. `turns` are provenance: the model, resolved
    model, options, token counts and duration of the call that wrote each answer; a
    message's time is that of the first turn that recorded it (messages carry none).
  * **the legacy tables** (`conversations` / `responses`, llm before 0.32): each
    conversation is a linear tree of prompt / response pairs in time order, the first
    system prompt as its system context; a response without a conversation is a tree
    of its own. A conversation whose id is also a thread of the message store was
    written to both by llm during the move and is read once, from the message store.
    Their tool calls, tool results, attachments and fragments come along (see
    `llm_legacy`).

Messages no root reaches (a parent hash that names nothing) cannot be placed in a
tree: they are reported as an error naming how many, never dropped in silence. The
message store is read once into maps (`_Index`), capped by `limits.foreign_messages`
and `limits.foreign_roots`; a hash stored twice refuses it whole.
"""

from __future__ import annotations

import base64
import json
import os
import sqlite3
from collections.abc import Iterator
from contextlib import closing
from functools import partial
from pathlib import Path
from typing import Any

from ..errors import InvalidInput
from ..limits import Limits
from . import budget, tree
from .llm_legacy import legacy
from .model import (
    AttachmentSet,
    Head,
    ImportedConversation,
    ImportedMessage,
    ParseError,
    as_str,
    check_blocks,
    guarded,
    text_block,
    to_datetime,
    tool_result_block,
    tool_use_block,
)
from .stream import Input, as_input
from .values import depth

FORMAT = "llm"
MAGIC = b"SQLite format 3\x00"
_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "tool": "tool"}
_CHUNK = 500

Blocks = list[dict[str, Any]]
Row = tuple[Any, ...]


def parse(source: str | os.PathLike[str] | Input) -> Iterator[ImportedConversation | ParseError]:
    inp = as_input(source)
    try:
        yield from _parse(inp)
    except sqlite3.Error as exc:  # a damaged file: what was read before it stays
        budget.check()  # interrupted for time: said as such
        raise InvalidInput(inp.name, f"cannot read the SQLite database ({exc})") from None


def _parse(inp: Input) -> Iterator[ImportedConversation | ParseError]:
    with closing(_connect(inp.path)) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if not ({"messages", "parts", "threads"} <= tables or "responses" in tables):
            raise InvalidInput(inp.name, "a SQLite database, but not simonw/llm's logs.db")
        threads: set[str] = set()
        if {"messages", "parts", "threads"} <= tables:
            try:
                store = _MessageStore(db, inp.name, tables, inp.limits)
            except InvalidInput as exc:  # past a cap: the message store is refused whole
                yield ParseError(f"{inp.name} {exc.where}", exc.why)
            else:
                yield from store.trees()
                threads = store.thread_ids
        if "responses" in tables:
            yield from legacy(db, inp.name, threads, tables, inp.limits,
                              partial(attachment_block, db, tables, inp.limits), _json)


def _connect(path: Path) -> sqlite3.Connection:
    try:
        db = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)
        db.execute("PRAGMA trusted_schema = OFF")  # a crafted file's views run no functions
        db.set_progress_handler(budget.over, 10_000)  # a query past the budget is interrupted
        db.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except sqlite3.Error as exc:
        raise InvalidInput(path.name, f"cannot read the SQLite database ({exc})") from None
    return db


def _rowids(db: sqlite3.Connection, table: str, limits: Limits,
            column: str = "tip_message_hash") -> dict[Any, list[int]]:
    """`column`'s value -> the row ids of `table` holding it, read in one pass (llm
    indexes neither tips nor a part's message, and a crafted file need not hold even
    llm's keys: a lookup by value would scan the table each time, a lookup by row id
    never does). At most `limits.foreign_messages` rows, else InvalidInput."""
    out: dict[Any, list[int]] = {}
    for count, (rowid, key) in enumerate(db.execute(f"SELECT rowid, {column} FROM {table}")):
        if count >= limits.foreign_messages:
            raise InvalidInput(table, f"more than {limits.foreign_messages} rows "
                               f"(LOOMDB_LIMIT_FOREIGN_MESSAGES); nothing imported")
        if isinstance(key, (str, int)) and not isinstance(key, bool):
            out.setdefault(key, []).append(rowid)
    return out


def _chunks(items: list[Any]) -> Iterator[list[Any]]:
    for i in range(0, len(items), _CHUNK):
        yield items[i:i + _CHUNK]


def _json(raw: Any, where: str, limits: Limits) -> Any:
    """A JSON column, refused when malformed, too long or nested too deep."""
    if raw is None or raw == "":
        return None
    if len(raw) > limits.session_line:
        raise InvalidInput(where, f"longer than {limits.session_line} bytes")
    limit = limits.json_depth
    try:
        value = json.loads(raw)
    except RecursionError:
        raise InvalidInput(where, f"nested deeper than {limit}") from None
    except (ValueError, TypeError):
        raise InvalidInput(where, "not valid JSON") from None
    if depth(value, limit) > limit:
        raise InvalidInput(where, f"nested deeper than {limit}")
    return value


# ---------------------------------------------------------------- the message store


class _Index:
    """The message store's tree, read once in row order into maps (llm indexes no
    `parent_hash`, and a crafted file need not hold llm's keys: one query per tree
    would scan the table per root). More than `limits.foreign_messages` messages or
    `limits.foreign_roots` roots, a hash stored twice or one that is not text refuse
    the message store whole (InvalidInput naming why)."""

    def __init__(self, db: sqlite3.Connection, name: str, limits: Limits) -> None:
        where = f"{name} messages"
        self.parent: dict[str, str | None] = {}
        self.rowid: dict[str, int] = {}
        self.role: dict[str, Any] = {}
        self.children: dict[str, list[str]] = {}
        self.roots: list[str] = []
        for rowid, hash_, parent, role in db.execute(
                "SELECT rowid, hash, parent_hash, role FROM messages ORDER BY rowid"):
            if not isinstance(hash_, str) or not (parent is None or isinstance(parent, str)):
                raise InvalidInput(f"{where} row {rowid}", "hashes must be text; the message "
                                   "store is refused, nothing of it imported")
            if hash_ in self.parent:
                raise InvalidInput(where, f"duplicate message ids: {hash_[:80]} (a hash stored "
                                   f"twice); the message store is refused, nothing of it imported")
            if len(self.parent) >= limits.foreign_messages:
                raise InvalidInput(where, f"more than {limits.foreign_messages} messages "
                                   f"(LOOMDB_LIMIT_FOREIGN_MESSAGES); nothing of it imported")
            self.parent[hash_], self.rowid[hash_], self.role[hash_] = parent, rowid, role
            if parent is None:
                self.roots.append(hash_)
                if len(self.roots) > limits.foreign_roots:
                    raise InvalidInput(where, f"more than {limits.foreign_roots} trees "
                                       f"(LOOMDB_LIMIT_FOREIGN_ROOTS); nothing of it imported")
            else:
                self.children.setdefault(parent, []).append(hash_)

    def below(self, root: str) -> list[str]:
        """`root` and every message below it (each hash once: no hash is stored twice)."""
        out, stack = [], [root]
        while stack:
            hash_ = stack.pop()
            out.append(hash_)
            stack.extend(self.children.get(hash_, ()))
        return out



class _MessageStore:
    def __init__(self, db: sqlite3.Connection, name: str, tables: set[str],
                 limits: Limits) -> None:
        self.db = db
        self.limits = limits
        self.name = name
        self.tables = tables
        self.thread_ids = {r[0] for r in db.execute("SELECT id FROM threads")}
        # llm indexes neither table by tip, and the file is opened read-only: one pass
        # notes which rows point at which message (row ids only), instead of a scan per tree
        self.turns_at = _rowids(db, "turns", limits)
        self.threads_at = _rowids(db, "threads", limits)
        self.parts_at = _rowids(db, "parts", limits, "message_hash")
        self.fragments_at = (_rowids(db, "fragments", limits, "id") if "fragments" in tables
                             else {})

    def trees(self) -> Iterator[ImportedConversation | ParseError]:
        try:
            index = _Index(self.db, self.name, self.limits)
        except InvalidInput as exc:
            yield ParseError(exc.where, exc.why)
            return
        reached = 0
        for number, root in enumerate(index.roots):
            hashes = index.below(root)
            reached += len(hashes)
            rows = self._rows(index, hashes)
            where = f"{self.name} messages[{number}] (root {root})"
            yield guarded(where, self._tree, root, rows, where)
        if len(index.parent) > reached:
            yield ParseError(f"{self.name} messages", f"{len(index.parent) - reached} message(s) "
                             f"hang from a parent hash that is not in the store; not imported")

    def _rows(self, index: _Index, hashes: list[str]) -> list[Row]:
        """(hash, parent, role, provider_metadata) of `hashes` (in row order), the
        metadata fetched by row id for this tree only."""
        by_rowid = {index.rowid[h]: h for h in hashes}
        meta: dict[int, Any] = {}
        for chunk in _chunks(sorted(by_rowid)):
            marks = ",".join("?" * len(chunk))
            meta.update(self.db.execute(
                f"SELECT rowid, provider_metadata FROM messages WHERE rowid IN ({marks})", chunk))
        return [(h, index.parent[h], index.role[h], meta.get(rowid))
                for rowid, h in sorted(by_rowid.items())]

    def _tree(self, root: str, rows: list[Row], where: str) -> ImportedConversation:
        hashes = [r[0] for r in rows]
        parts = self._parts(hashes)
        attachments = AttachmentSet()
        times, models = self._turns(hashes, {r[0]: r[1] for r in rows})
        messages: list[ImportedMessage] = []
        for hash_, parent, role, provider_meta in rows:
            if not isinstance(hash_, str) or not (parent is None or isinstance(parent, str)):
                raise InvalidInput(f"{where} message {hash_!r}", "hashes must be text")
            here = f"{where} message {hash_}"
            blocks = [b for p in parts.get(hash_, []) for b in self._block(p, here, attachments)]
            meta: dict[str, Any] = {}
            if role not in _ROLES:
                meta["source_role"] = str(role)[:40]
            pm = _json(provider_meta, f"{here}.provider_metadata", self.limits)
            if pm:
                meta["provider_metadata"] = pm
            turn = models.get(hash_)
            if turn:
                meta["turn"] = turn
            messages.append(ImportedMessage(
                source_id=hash_, parent_source_id=parent, role=_ROLES.get(role, "user"),
                content=check_blocks(blocks, here), created_at=times.get(hash_),
                model=as_str((turn or {}).get("model")), metadata=meta,
            ))
        messages = tree.order(messages, where)  # one row per hash, parents first, no cycle
        heads = self._threads(hashes)
        first_time = min((t for t in times.values() if t is not None), default=None)
        return ImportedConversation(
            source_format=FORMAT, source_id=root, title=heads[0].title if heads else None,
            created_at=first_time, mode="dialogue", messages=messages,
            current_source_id=heads[0].message if heads else None,
            attachments=attachments.to_list(), heads=heads,
        )

    def _parts(self, hashes: list[str]) -> dict[str, list[Row]]:
        out: dict[str, list[Row]] = {}
        rows: list[Row] = []
        for chunk in _chunks([r for h in hashes for r in self.parts_at.get(h, ())]):
            marks = ",".join("?" * len(chunk))
            rows += self.db.execute(
                f"SELECT message_hash, position, type, tool_name, text, payload FROM parts "
                f"WHERE rowid IN ({marks})", chunk).fetchall()
        rows.sort(key=lambda r: (str(r[0]), r[1] if isinstance(r[1], (int, float)) else 0))
        for row in rows:
            out.setdefault(row[0], []).append(row)
        return out

    def _block(self, part: Row, where: str, attachments: AttachmentSet) -> Blocks:
        _hash, position, kind, tool_name, text, raw = part
        where = f"{where} part {position}"
        payload = _json(raw, where, self.limits) or {}
        if not isinstance(payload, dict):
            raise InvalidInput(where, "payload is not an object")
        if text is None:
            text = self._text(payload, where)
        elif not isinstance(text, str):
            raise InvalidInput(where, f"its text is a {type(text).__name__}, not text")
        if kind == "text":
            return [text_block(text or "")]
        if kind == "reasoning":
            if payload.get("redacted") or not text:
                return []
            return [{"type": "thinking", "thinking": text}]
        call_id = as_str(payload.get("tool_call_id")) or f"{_hash}:{position}"
        if kind == "tool_call":
            return [tool_use_block(call_id, as_str(tool_name) or as_str(payload.get("name"))
                                   or "tool", payload.get("arguments"))]
        if kind == "tool_result":
            output = payload.get("output")
            block = tool_result_block(call_id, output if isinstance(output, str) else "",
                                      as_str(tool_name) or as_str(payload.get("name")))
            if as_str(payload.get("exception")):
                block["is_error"] = True
                block["content"].append(text_block(payload["exception"]))
            refs = payload.get("attachments")
            for ref in refs if isinstance(refs, list) else []:
                block["content"].append(self._attachment(ref, where, attachments))
            return [block]
        if kind == "attachment":
            return [self._attachment(payload.get("attachment"), where, attachments)]
        return [text_block(json.dumps({"type": kind, **payload})[:100_000])]

    def _text(self, payload: dict[str, Any], where: str) -> str | None:
        """A part's text rebuilt from its fragment references (`text_ref`)."""
        pieces = payload.get("text_ref")
        if not isinstance(pieces, list):
            return as_str(payload.get("text"))
        ids = [p["fragment"] for p in pieces if isinstance(p, dict)
               and isinstance(p.get("fragment"), int)]
        found: dict[int, str] = {}
        for chunk in _chunks([r for i in ids for r in self.fragments_at.get(i, ())[:1]]):
            marks = ",".join("?" * len(chunk))
            found.update(self.db.execute(
                f"SELECT id, content FROM fragments WHERE rowid IN ({marks})", chunk).fetchall())
        out: list[str] = []
        for p in pieces:
            if isinstance(p, dict) and isinstance(p.get("literal"), str):
                out.append(p["literal"])
            elif isinstance(p, dict) and p.get("fragment") in found:
                out.append(str(found[p["fragment"]]))
            else:
                raise InvalidInput(where, "a fragment reference that is not in the store")
        return "".join(out)

    def _attachment(self, ref: Any, where: str, attachments: AttachmentSet) -> dict[str, Any]:
        att_id = ref.get("id") if isinstance(ref, dict) else None
        return attachment_block(self.db, self.tables, self.limits, att_id, where, attachments)

    def _turns(self, hashes: list[str], parents: dict[str, str | None]
               ) -> tuple[dict[str, Any], dict[str, dict[str, Any]]]:
        """(message -> time of the first turn that recorded it, answer -> its turn)."""
        turns: list[Row] = []
        for chunk in _chunks([r for h in hashes for r in self.turns_at.get(h, ())]):
            marks = ",".join("?" * len(chunk))
            turns += self.db.execute(
                f"SELECT id, parent_message_hash, tip_message_hash, model, resolved_model, "
                f"options_json, input_tokens, output_tokens, duration_ms, datetime_utc, thread_id "
                f"FROM turns WHERE rowid IN ({marks})", chunk).fetchall()
        turns.sort(key=lambda t: str(t[9] or ""))
        times: dict[str, Any] = {}
        answers: dict[str, dict[str, Any]] = {}
        #: steps up the tree all turns may take together: a turn walks from its tip to
        #: the first message an earlier turn dated, a few steps for what llm writes
        steps = 4 * (len(hashes) + len(turns)) + 1000
        for tid, parent, tip, model, resolved, options, tin, tout, ms, when, thread in turns:
            moment = to_datetime(when, f"turn {tid}.datetime_utc")
            info = {k: v for k, v in (("id", tid), ("model", model), ("resolved_model", resolved),
                    ("options", _json(options, f"turn {tid}.options_json", self.limits)),
                    ("input_tokens", tin), ("output_tokens", tout), ("duration_ms", ms),
                    ("thread", thread)) if v is not None}
            cursor: str | None = tip
            inside = True
            for _ in range(len(hashes) + 1):  # bounded: a chain is no longer than its tree
                if cursor is None or cursor not in parents:
                    break
                steps -= 1
                if steps < 0:
                    raise InvalidInput(f"turn {tid}", "the turns of this tree walk its messages "
                                       "far more often than llm writes them; refused")
                if cursor == parent:
                    inside = False
                if inside:
                    answers.setdefault(cursor, info)
                elif cursor in times:
                    break
                times.setdefault(cursor, moment)
                cursor = parents[cursor]
        return times, answers

    def _threads(self, hashes: list[str]) -> list[Head]:
        """(thread id, tip message, name, origin extras) of every thread into this tree,
        the most recent first (its tip is the tree's active branch)."""
        found: list[Row] = []
        for chunk in _chunks([r for h in hashes for r in self.threads_at.get(h, ())]):
            marks = ",".join("?" * len(chunk))
            found += self.db.execute(
                f"SELECT id, tip_message_hash, name, forked_from, datetime_utc FROM threads "
                f"WHERE rowid IN ({marks})", chunk).fetchall()
        found.sort(key=lambda t: (str(t[4] or ""), str(t[0])), reverse=True)
        return [Head(str(tid), tip, str(tid)[-10:], as_str(name),
                     {k: v for k, v in (("forked_from", fork), ("created", when)) if v is not None})
                for tid, tip, name, fork, when in found]


def attachment_block(db: sqlite3.Connection, tables: set[str], limits: Limits, att_id: Any,
                     where: str, attachments: AttachmentSet) -> dict[str, Any]:
    """An `attachments` row as a block: its bytes, else a text block naming the URL or
    path it was made from (never fetched, never read), or saying the row is gone."""
    row = None
    if isinstance(att_id, str) and "attachments" in tables:
        row = db.execute("SELECT type, path, url, length(content) FROM attachments WHERE id = ?",
                         (att_id,)).fetchone()
    if row is None:
        return text_block(f"[attachment not in the store: {str(att_id)[:80]}]")
    mime, path, url, size = row
    mime = as_str(mime) or "application/octet-stream"
    if not size or size > limits.blob:
        named = as_str(url) or as_str(path) or str(att_id)
        return text_block(f"[attachment not in the store: {named[:200]} ({mime})]")
    data = db.execute("SELECT content FROM attachments WHERE id = ?", (att_id,)).fetchone()[0]
    key = attachments.add(f"llm-attachment:{att_id}", _as_bytes(data), mime)
    kind = "image" if mime.startswith("image/") else "document"
    return {"type": kind, "ref": key, "mime_type": mime}


def _as_bytes(data: Any) -> bytes:
    """Attachment content as bytes (SQLite may hand back text for a BLOB column)."""
    if isinstance(data, (bytes, bytearray, memoryview)):
        return bytes(data)
    return base64.b64decode(str(data))
