"""Imported conversations into a store: one tree per conversation, all-or-nothing each.

    write_conversation(loom, conversation) -> Outcome   (inside the caller's transaction)

The import driver (`loomdb.interop.importer.import_file`) reads a file; the parsers (`loomdb.interop.parse_file`) turn an export into `ImportedConversation`s;
this module writes each one inside one transaction, so a conversation that fails
half-way leaves nothing, and reports it (`{"where", "reason"}`) while the others land.
loomdb's own lossless `json`/`jsonl` export is recognised too and read by `native`.

Idempotency needs no bookkeeping table: ids are derived from the source. A tree id is
a ULID whose 48-bit time is the conversation's creation time (0 when unknown) and
whose 80 random bits are the start of sha256(["format", conversation id]); a node id
likewise from the message's time and sha256(["format", conversation id, message id]).
Importing the same file again finds every id present and adds nothing; a conversation
that grew since adds only its new messages. Each node keeps
`origin = {"format", "conversation", "message"}` and each tree
`lineage = {"imported": {"format", "conversation", ...}}`.

Mapping choices (docs/interop.md explains them):
  * every message that has content or a role is a node (hidden ones too, tagged
    `hidden`, and left in the context: the model saw them); a null root is no node;
  * the first top-level message is the root; further top-level messages (a first
    message edited in the source app) become *versions* of the root, each keeping its
    own replies; `edited_from_source_id` likewise makes a version of that message;
  * the active branch (`current_source_id`) gets the session `import/<format>/<id>`,
    which a later import of the grown conversation fast-forwards (only when it still
    sits on the new active branch: a session you moved or continued stays put);
  * attachments with bytes go to the blob store; those the export only names become
    a text block saying what was there (`[image not in the export: name (mime)]`);
  * assistant messages are authored by their model (also `provenance.model`), user
    messages by `human` unless the source names the user; `source` is `import`.
"""

from __future__ import annotations

import hashlib
import json
import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from ulid import ULID

from .. import content as C
from .. import refs as R
from ..errors import InvalidInput
from ..model import Node, Tree, iso
from .model import ATTACHMENT_PREFIX, Attachment, ImportedConversation, ImportedMessage
from .report import Outcome

if TYPE_CHECKING:
    from ..loom import Loom

_MAX_MS = 2**48 - 1
_SAFE_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,59}$")
_REF_CHAR = re.compile(r"[^A-Za-z0-9_./-]+")
_DEFAULT_AUTHOR = {"user": "human", "assistant": "assistant", "system": "system", "tool": "tool"}

# ---------------------------------------------------------------- ids


def derive_id(moment: datetime | None, *parts: str) -> str:
    """A ULID: `moment` (ms since the epoch, 0 when None) + 80 bits of sha256(parts)."""
    ms = 0
    if moment is not None:
        ms = min(max(int(moment.timestamp() * 1000), 0), _MAX_MS)
    body = json.dumps(list(parts), ensure_ascii=False, separators=(",", ":"))
    digest = hashlib.sha256(body.encode("utf-8", "surrogatepass")).digest()
    return str(ULID.from_bytes(ms.to_bytes(6, "big") + digest[:10]))


def tree_id_for(conv: ImportedConversation) -> str:
    first = conv.messages[0].created_at if conv.messages else None
    return derive_id(conv.created_at or first, conv.source_format, conv.source_id)


def write_conversation(
    loom: Loom, conv: ImportedConversation, seen: dict[str, str] | None = None
) -> Outcome:
    """Write one conversation (inside the caller's transaction); see the module docstring.

    `seen` maps tree ids written during this import to their source label, so two
    conversations with the same id in one file are refused instead of merged."""
    return _ConversationWriter(loom, conv, seen).run()


class _ConversationWriter:
    def __init__(self, loom: Loom, conv: ImportedConversation, seen: dict[str, str] | None) -> None:
        if not conv.messages:
            raise InvalidInput("conversation", "has no messages to import")
        self.loom = loom
        self.conv = conv
        self.fmt = conv.source_format
        self.seen = seen if seen is not None else {}
        self.tree_id = tree_id_for(conv)
        self.attachments: dict[str, Attachment] = {a.key: a for a in conv.attachments}
        self.stored: dict[str, str | None] = {}
        self.outcome = Outcome(self.tree_id)

    # -- the whole conversation ------------------------------------------------------
    def run(self) -> Outcome:
        conv = self.conv
        if self.tree_id in self.seen:
            raise InvalidInput(
                f"conversation {conv.source_id!r}",
                f"appears twice in this file (its first copy was {self.seen[self.tree_id]})",
            )
        self.seen[self.tree_id] = f"conversation {conv.source_id!r}"
        times = self._times()
        ids = {
            m.source_id: derive_id(times[m.source_id][0], self.fmt, conv.source_id, m.source_id)
            for m in conv.messages
        }
        tree = self.loom.tree_by_id(self.tree_id)
        existing = self.loom.nodes_by_id(list(ids.values())) if tree is not None else {}
        if tree is not None and tree.mode != conv.mode:
            raise InvalidInput(f"tree {self.tree_id}", f"exists as a {tree.mode} tree")
        for node in existing.values():
            if node.tree != self.tree_id:
                raise InvalidInput(f"node {node.id}", f"exists in another tree ({node.tree})")
        nodes: dict[str, Node] = {}
        by_source = {m.source_id: m for m in conv.messages}
        root_source = next(m.source_id for m in conv.messages if m.parent_source_id is None)
        for m in conv.messages:
            nid = ids[m.source_id]
            if nid in existing:
                nodes[m.source_id] = existing[nid]
                self.outcome.skipped += 1
                continue
            parent, version_of = self._links(m, nodes, by_source, root_source)
            node = self._write(m, nid, times[m.source_id][1], parent, version_of)
            nodes[m.source_id] = node
            self.outcome.nodes += 1
            if tree is None and m.source_id == root_source:
                tree = self._insert_tree(m, node)
                self.outcome.created = True
            self._overlay(m, node)
        self._session(ids, nodes)
        return self.outcome

    def _times(self) -> dict[str, tuple[datetime | None, str]]:
        """message -> (source time used in its id, created_at to store).

        A message without a time takes its parent's, else the conversation's; when the
        source has no times at all, messages get the import time, a microsecond apart in
        file order (their ids then hold time 0, so they stay stable)."""
        conv = self.conv
        known: dict[str, datetime | None] = {}
        out: dict[str, tuple[datetime | None, str]] = {}
        base = datetime.now(UTC)
        for i, m in enumerate(conv.messages):
            when = m.created_at
            if when is None and m.parent_source_id is not None:
                when = known.get(m.parent_source_id)
            if when is None:
                when = conv.created_at
            known[m.source_id] = when
            out[m.source_id] = (when, iso(when if when else base + timedelta(microseconds=i)))
        return out

    def _links(
        self,
        m: ImportedMessage,
        nodes: dict[str, Node],
        by_source: dict[str, ImportedMessage],
        root_source: str,
    ) -> tuple[Node | None, Node | None]:
        """(parent node, node this one is a version of) for a message."""
        parent = nodes[m.parent_source_id] if m.parent_source_id is not None else None
        if m.parent_source_id is None and m.source_id != root_source:
            return None, nodes[root_source]
        edited = m.edited_from_source_id
        if edited and edited in nodes and by_source[edited].parent_source_id == m.parent_source_id:
            target = nodes[edited]
            return parent, target
        return parent, None

    # -- one node --------------------------------------------------------------------
    def _write(
        self, m: ImportedMessage, nid: str, created_at: str, parent: Node | None,
        version_of: Node | None,
    ) -> Node:
        where = f"message {m.source_id!r}"
        blocks = self.loom.prepare(self._blocks(m.content, where), f"{where}.content")
        provenance: dict[str, Any] = {"imported": True, "format": self.fmt}
        if m.model:
            provenance["model"] = m.model
        if m.metadata:
            provenance["metadata"] = m.metadata
        author = m.author or (m.model if m.role == "assistant" else None)
        author = author or _DEFAULT_AUTHOR.get(m.role, m.role)
        C.check_text(author, f"{where}.author")
        return self.loom.write_node(
            tree=self.tree_id, parent=parent, blocks=blocks, role=m.role, author=author,
            source="import", options=None, cache=False, kind="message", created_at=created_at,
            provenance=provenance,
            origin={"format": self.fmt, "conversation": self.conv.source_id,
                    "message": m.source_id},
            edited_from=version_of, node_id=nid,
        )

    def _insert_tree(self, root: ImportedMessage, node: Node) -> Tree:
        conv = self.conv
        title = conv.title.strip() if conv.title and conv.title.strip() else None
        C.check_text(title, "title")
        C.check_text(conv.system, "system")
        lineage: dict[str, Any] = {"format": self.fmt, "conversation": conv.source_id}
        if conv.current_source_id:
            lineage["current"] = conv.current_source_id
        if conv.metadata:
            lineage["metadata"] = conv.metadata
        tree = Tree(
            id=self.tree_id, title=title or C.title_from(node.content), mode=conv.mode,
            created_at=iso(conv.created_at) if conv.created_at else node.created_at,
            updated_at=node.created_at, system=conv.system or None, options={},
            root=node.id, lineage={"imported": lineage},
        )
        self.loom.write_tree(tree)
        return tree

    def _overlay(self, m: ImportedMessage, node: Node) -> None:
        tags = [_tag(t) for t in m.tags if isinstance(t, str) and t.strip()]
        if m.hidden:
            tags.append("hidden")
        if tags:
            self.loom.write_tags(node.id, self.tree_id, sorted(set(tags)))
        if m.bookmark:
            name = self._free_name(f"{self._base_name()}/{_ref_part(m.bookmark)}", node.id)
            if name is not None:
                self.loom.bookmark(node.id, name)

    # -- content ---------------------------------------------------------------------
    def _blocks(self, blocks: list[dict[str, Any]], where: str) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for block in blocks:
            if not isinstance(block, dict):
                out.append(block)
                continue
            block = dict(block)
            if block.get("type") == "tool_result" and isinstance(block.get("content"), list):
                block["content"] = self._blocks(block["content"], where)
            ref = block.get("ref")
            if isinstance(ref, str) and ref.startswith(ATTACHMENT_PREFIX):
                bid = self._blob(ref)
                if bid is None:
                    block = _missing(block, self.attachments.get(ref))
                else:
                    block["ref"] = bid
            thumb = block.get("thumbnail_ref")
            if isinstance(thumb, str) and thumb.startswith(ATTACHMENT_PREFIX):
                bid = self._blob(thumb)
                if bid is None:
                    del block["thumbnail_ref"]
                else:
                    block["thumbnail_ref"] = bid
            out.append(block)
        return out

    def _blob(self, key: str) -> str | None:
        """The blob id for an attachment key (stored on first use), None if absent."""
        if key in self.stored:
            return self.stored[key]
        att = self.attachments.get(key)
        bid = None
        if att is not None and att.data is not None:
            known = self.loom.blob_known(C.digest(att.data))
            bid = self.loom.put_blob(att.data, att.mime_type or "application/octet-stream")
            if known is None:
                self.outcome.blobs += 1
        self.stored[key] = bid
        return bid

    # -- refs ------------------------------------------------------------------------
    def _base_name(self) -> str:
        """`import/<format>/<id>`: the source id when it is short and safe, its first 8
        characters when long (like a short git hash), else 8 characters of the tree id."""
        name = f"import/{self.fmt.replace('_', '-')}/"
        sid = self.conv.source_id
        if _SAFE_ID.match(sid) and ".." not in sid:
            short = (sid if len(sid) <= 16 else sid[:8]).rstrip(".-")
            try:
                return R.check_name(name + short)
            except InvalidInput:
                pass
        return name + self.tree_id[-8:].lower()

    def _free_name(self, wanted: str, node_id: str) -> str | None:
        """`wanted` or `wanted-2`, `-3`...: the first name that is free; None when a ref
        of that family already points at `node_id` (nothing to add)."""
        wanted = wanted[:96].rstrip("./-") or "import"
        for i in range(1, 1000):
            name = wanted if i == 1 else f"{wanted}-{i}"
            ref = self.loom.find_ref(name)
            if ref is None:
                return name
            if ref.node == node_id and ref.tree == self.tree_id:
                return None
        raise InvalidInput(f"ref {wanted!r}", "no free name left")

    def _session(self, ids: dict[str, str], nodes: dict[str, Node]) -> None:
        """The active branch as a session: created with the tree, moved when it grew."""
        from .tree import newest_leaf

        current = self.conv.current_source_id
        if current is None or current not in nodes:
            current = newest_leaf(self.conv.messages)
        if current is None or current not in nodes or not self.outcome.nodes:
            return
        head = nodes[current].id
        mine = [r for r in self.loom.refs("session", self.tree_id)
                if isinstance(r.origin, dict) and "imported" in r.origin]
        origin = {"imported": {"format": self.fmt, "conversation": self.conv.source_id,
                               "current": current}}
        if not mine:
            name = self._free_name(self._base_name(), head)
            if name is not None:
                self.loom.create_ref(name, "session", self.tree_id, head, {}, origin)
            return
        ref = mine[0]
        if ref.node != head and ref.node in self._active_path(ids, current):
            self.loom.move_ref(ref, head, "import: the source's active branch grew")

    def _active_path(self, ids: dict[str, str], current: str) -> set[str]:
        """Node ids from the root to the active leaf (a session there may fast-forward)."""
        parents = {m.source_id: m.parent_source_id for m in self.conv.messages}
        path: set[str] = set()
        node: str | None = current
        while node is not None and ids[node] not in path:
            path.add(ids[node])
            node = parents.get(node)
        return path


# ---------------------------------------------------------------- small helpers


def _missing(block: dict[str, Any], att: Attachment | None) -> dict[str, Any]:
    """The honest stand-in for a file the export names but does not hold."""
    kind = block.get("type", "file")
    label = (att.name if att and att.name else None) or block.get("name")
    if not label:
        label = str(block.get("ref", ""))[len(ATTACHMENT_PREFIX):]
    mime = (att.mime_type if att else None) or block.get("mime_type")
    text = f"[{kind} not in the export: {label}" + (f" ({mime})" if mime else "") + "]"
    if isinstance(block.get("alt_text"), str) and block["alt_text"]:
        text += f"\n{block['alt_text']}"
    if isinstance(block.get("transcript"), str) and block["transcript"]:
        text += f"\n{block['transcript']}"
    if isinstance(block.get("text"), str) and block["text"]:
        text += f"\n{block['text']}"
    return {"type": "text", "text": text}


def _tag(value: str) -> str:
    return value.strip()[:100]


def _ref_part(value: str) -> str:
    part = _REF_CHAR.sub("-", value.strip()).strip("-./")
    while ".." in part:
        part = part.replace("..", ".")
    return part or "bookmark"
