"""simonw/llm's legacy tables (llm before 0.32): `conversations` / `responses` and what hangs off them.

Each conversation is a linear tree of its responses in time order (a response without a
conversation is a tree of its own). One response row is up to three nodes, as llm sent
them to the model:

  * the tool results its prompt carried (`tool_results.response_id` is the response
    that received them), one tool node of `tool_result` blocks, each with its
    `exception` as an error and its `tool_results_attachments` as content;
  * the prompt, a user node: the prompt's fragments (`prompt_fragments`, in order) and
    its text joined as llm joins them, then its `prompt_attachments` (left out when
    the prompt is empty and the row carried tool results: a follow-up of a chain);
  * the response, an assistant node: its `reasoning` as thinking, its text, then the
    tool calls it made (`tool_calls.response_id`) as `tool_use` blocks.

The system prompt is its `system_fragments` and text; the first one is the tree's
system context, a later different one is kept on its prompt's metadata. Attachments
bring their bytes from `attachments`, else a text block naming the URL or path (see
`llm_logs.attachment_block`). Every row of these tables that belongs to a response is
carried; what the tables name but do not hold (an attachment or fragment row that is
gone) becomes a text block saying so and a warning on the conversation.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from typing import Any

from ..limits import Limits
from .model import (
    AttachmentSet,
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

Row = tuple[Any, ...]
#: (db, attachment id, where, attachments) -> a block (see llm_logs.attachment_block)
AttachmentReader = Callable[[Any, str, AttachmentSet], dict[str, Any]]
JsonReader = Callable[[Any, str, Limits], Any]
_WANTED = ["id", "conversation_id", "model", "prompt", "system", "response", "options_json",
           "datetime_utc", "input_tokens", "output_tokens", "duration_ms", "reasoning"]


def legacy(db: sqlite3.Connection, name: str, threads: set[str], tables: set[str],
           limits: Limits, attachment: AttachmentReader, read_json: JsonReader,
           ) -> Iterator[ImportedConversation | ParseError]:
    cols = {r[1] for r in db.execute("PRAGMA table_info(responses)")}
    select = ", ".join(c if c in cols else "NULL" for c in _WANTED)
    names: dict[str, Any] = {}
    if "conversations" in tables:
        names = {str(r[0]): r for r in db.execute("SELECT id, name, model FROM conversations")}
    extras = _Extras(db, tables, attachment)
    current: str | None = None
    batch: list[Row] = []
    index = 0
    query = (f"SELECT {select} FROM responses ORDER BY "
             f"coalesce(conversation_id, 'response:' || id), datetime_utc, rowid")
    for row in db.execute(query).fetchall():
        key = str(row[1]) if row[1] is not None else f"response:{row[0]}"
        if key != current and batch:
            if current not in threads:
                yield _one(name, index, current or "", batch, names, limits, extras, read_json)
                index += 1
            batch = []
        current = key
        batch.append(row)
    if batch and current not in threads:
        yield _one(name, index, current or "", batch, names, limits, extras, read_json)
    for table in ("tool_calls", "tool_results", "prompt_attachments"):
        if table in tables:
            lost = db.execute(f"SELECT count(*) FROM {table} WHERE response_id IS NULL OR "
                              f"response_id NOT IN (SELECT id FROM responses)").fetchone()[0]
            if lost:
                yield ParseError(f"{name} {table}", f"{lost} row(s) name a response that is "
                                 f"not in the database; not imported")


def _one(name: str, index: int, key: str, rows: list[Row], names: dict[str, Any],
         limits: Limits, extras: _Extras, read_json: JsonReader
         ) -> ImportedConversation | ParseError:
    where = f"{name} conversations[{index}] (id {key})"
    return guarded(where, _Tree(key, where, limits, extras, read_json).run, rows,
                   names.get(key))


class _Extras:
    """The rows that hang off responses, read per conversation (the ids of its rows)."""

    def __init__(self, db: sqlite3.Connection, tables: set[str],
                 attachment: AttachmentReader) -> None:
        self.db = db
        self.tables = tables
        self.attachment = attachment

    def by_response(self, table: str, columns: str, ids: list[str], order: str
                    ) -> dict[str, list[Row]]:
        """response id -> its rows of `table` (none when llm had no such table yet)."""
        out: dict[str, list[Row]] = {}
        if table not in self.tables:
            return out
        have = {r[1] for r in self.db.execute(f"PRAGMA table_info({table})")}
        select = ", ".join(c if c in have else "NULL" for c in columns.split(", "))
        for i in range(0, len(ids), 500):
            chunk = ids[i:i + 500]
            marks = ",".join("?" * len(chunk))
            for row in self.db.execute(f"SELECT response_id, {select} FROM {table} WHERE "
                                       f"response_id IN ({marks}) ORDER BY {order}", chunk):
                out.setdefault(str(row[0]), []).append(row[1:])
        return out

    def result_attachments(self, result_ids: list[Any]) -> dict[Any, list[str]]:
        out: dict[Any, list[str]] = {}
        if "tool_results_attachments" not in self.tables or not result_ids:
            return out
        marks = ",".join("?" * len(result_ids))
        for rid, att in self.db.execute(
                f'SELECT tool_result_id, attachment_id FROM tool_results_attachments WHERE '
                f'tool_result_id IN ({marks}) ORDER BY "order", rowid', result_ids):
            out.setdefault(rid, []).append(str(att))
        return out

    def fragments(self, table: str, ids: list[str]) -> dict[str, list[str | None]]:
        """response id -> its fragments' text in order (None: a fragment row that is gone)."""
        if table not in self.tables or "fragments" not in self.tables:
            return {}
        rows = self.by_response(table, "fragment_id", ids, '"order", rowid')
        wanted = sorted({r[0] for rs in rows.values() for r in rs})
        found: dict[Any, str] = {}
        for i in range(0, len(wanted), 500):
            chunk = wanted[i:i + 500]
            marks = ",".join("?" * len(chunk))
            found.update(self.db.execute(
                f"SELECT id, content FROM fragments WHERE id IN ({marks})", chunk).fetchall())
        return {rid: [found.get(r[0]) for r in rs] for rid, rs in rows.items()}


class _Tree:
    def __init__(self, key: str, where: str, limits: Limits, extras: _Extras,
                 read_json: JsonReader) -> None:
        self.key = key
        self.where = where
        self.limits = limits
        self.extras = extras
        self.read_json = read_json
        self.attachments = AttachmentSet()
        self.messages: list[ImportedMessage] = []
        self.warnings: list[str] = []

    def run(self, rows: list[Row], conv: Row | None) -> ImportedConversation:
        ids = [str(r[0]) for r in rows]
        ex = self.extras
        calls = ex.by_response("tool_calls", "name, arguments, tool_call_id", ids, "id")
        results = ex.by_response("tool_results", "id, name, output, tool_call_id, exception",
                                 ids, "id")
        shown = ex.result_attachments([r[0] for rs in results.values() for r in rs])
        attached = ex.by_response("prompt_attachments", "attachment_id", ids, '"order", rowid')
        prompt_parts = ex.fragments("prompt_fragments", ids)
        system_parts = ex.fragments("system_fragments", ids)
        system: str | None = None
        for row in rows:
            rid, _cid, model, prompt, sys_prompt, response, options, when, tin, tout, ms, \
                reasoning = row
            rid = str(rid)
            here = f"{self.where} response {rid}"
            moment = to_datetime(when, f"{here}.datetime_utc")
            said = self._joined(system_parts.get(rid, []), sys_prompt, f"{here} system")
            meta: dict[str, Any] = {}
            if said and system is None:
                system = said
            elif said and said != system:
                meta["system"] = said
            tools = [self._result(r, shown, here) for r in results.get(rid, [])]
            if tools:
                self._add(f"{rid}/tools", "tool", tools, moment, here)
            blocks = [text_block(t) for t in [self._joined(prompt_parts.get(rid, []), prompt,
                                                           f"{here} prompt")] if t]
            blocks += [self.extras.attachment(a[0], f"{here} attachment", self.attachments)
                       for a in attached.get(rid, [])]
            if blocks or not tools:
                self._add(f"{rid}/prompt", "user", blocks, moment, here, meta=meta)
            turn = {k: v for k, v in (
                ("id", rid), ("options", self.read_json(options, f"{here}.options_json",
                                                        self.limits)),
                ("input_tokens", tin), ("output_tokens", tout), ("duration_ms", ms))
                if v is not None}
            answer: list[dict[str, Any]] = []
            if as_str(reasoning):
                answer.append({"type": "thinking", "thinking": reasoning})
            if as_str(response):
                answer.append(text_block(response))
            answer += [tool_use_block(as_str(cid) or f"{rid}:call{i}", as_str(tname) or "tool",
                                      args)
                       for i, (tname, args, cid) in enumerate(calls.get(rid, []))]
            self._add(f"{rid}/response", "assistant", answer, moment, here,
                      model=as_str(model), meta={"turn": turn})
        title = as_str(conv[1]) if conv else None
        return ImportedConversation(
            source_format="llm", source_id=f"conversation:{self.key}", title=title,
            created_at=self.messages[0].created_at, mode="dialogue", messages=self.messages,
            current_source_id=self.messages[-1].source_id, system=system,
            attachments=self.attachments.to_list(), warnings=self.warnings,
            metadata={"legacy": True, **({"model": conv[2]} if conv and conv[2] else {})},
        )

    def _add(self, sid: str, role: str, blocks: list[dict[str, Any]], moment: Any, here: str,
             *, model: str | None = None, meta: dict[str, Any] | None = None) -> None:
        parent = self.messages[-1].source_id if self.messages else None
        self.messages.append(ImportedMessage(
            source_id=sid, parent_source_id=parent, role=role,
            content=check_blocks(blocks, here), created_at=moment, model=model,
            metadata=meta or {}))

    def _result(self, row: Row, shown: dict[Any, list[str]], here: str) -> dict[str, Any]:
        result_id, tname, output, call_id, exception = row
        block = tool_result_block(as_str(call_id) or f"result-{result_id}",
                                  output if isinstance(output, str) else "", as_str(tname))
        if as_str(exception):
            block["is_error"] = True
            block["content"].append(text_block(exception))
        for att in shown.get(result_id, []):
            block["content"].append(self.extras.attachment(att, f"{here} tool result "
                                                           f"{result_id}", self.attachments))
        return block

    def _joined(self, fragments: list[str | None], text: Any, where: str) -> str | None:
        """Fragments then the text, joined with newlines as llm builds a prompt."""
        if None in fragments:
            self.warnings.append(f"{where}: {fragments.count(None)} fragment(s) it names are "
                                 f"not in the database; left out")
        pieces = [f for f in fragments if f is not None]
        if as_str(text):
            pieces.append(text)
        return "\n".join(pieces) or None

