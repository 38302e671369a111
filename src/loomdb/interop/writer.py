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

Nothing is dropped silently: a message is skipped only when the node under its id has
the same role, content and parent. Other content under a stored id lands beside it
(see `_ConversationWriter`); a conversation with no messages, or an exact copy of one
earlier in the file, is skipped with a warning (`ImportReport.warnings`), not an error.

Mapping choices (docs/interop.md explains them):
  * every message that has content or a role is a node (hidden ones too, tagged
    `hidden`, and left in the context: the model saw them); a null root is no node;
  * the first top-level message is the root; further top-level messages (a first
    message edited in the source app) become *versions* of the root, each keeping its
    own replies; `edited_from_source_id` likewise makes a version of that message;
  * the active branch (`current_source_id`) gets the session `import/<format>/<id>`,
    which a later import moves to the source's new current message when it is still
    where an import left it (a session you moved, selected in or continued stays put);
  * attachments with bytes go to the blob store; those the export only names become
    a text block saying what was there (`[image not in the export: name (mime)]`);
  * a conversation whose lines name stored nodes from its root on (a path exported for
    an agent, coming back, or a session its agent forked) continues that tree: those
    messages are the nodes (`roundtrip`);
  * assistant messages are authored by their model (also `provenance.model`), user
    messages by `human` unless the source names the user; `source` is `import`.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from ulid import ULID

from .. import content as C
from .. import refs as R
from ..errors import InvalidInput
from ..model import Node, Tree, iso
from ..storage_ops import storage
from .fingerprint import fingerprint
from .heads import ref_part, write_session
from .model import (
    ATTACHMENT_PREFIX,
    Attachment,
    ImportedConversation,
    ImportedMessage,
    missing_block,
)
from .report import Outcome
from .roundtrip import carried
from .spawns import Written, spawn_record, spawned_lineage, with_session
from .titles import first_sentence

if TYPE_CHECKING:
    from ..loom import Loom

_MAX_MS = 2**48 - 1
_SAFE_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,59}$")
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
    return derive_id(_conversation_time(conv), conv.source_format, conv.source_id)


def _conversation_time(conv: ImportedConversation) -> datetime | None:
    """The time in a tree id: the conversation's creation, else its first message's."""
    return conv.created_at or (conv.messages[0].created_at if conv.messages else None)


def write_conversation(
    loom: Loom, conv: ImportedConversation, seen: dict[str, tuple[str, str]] | None = None,
    written: Written | None = None, sees: Callable[[str], bool] | None = None,
) -> Outcome:
    """Write one conversation (inside the caller's transaction); see the module docstring.

    `seen` maps tree ids written during this import to (source label, fingerprint): a
    conversation id met twice in one file is skipped with a warning when the second
    copy is exact, and refused when it differs (two copies are never merged).
    `written` collects (conversation, message) source ids -> (tree, node) ids, so a
    subagent's run read later (`conv.spawn`) finds the node that spawned it. `sees`:
    the trees whose nodes a line may name (`roundtrip.carried`; None: all)."""
    if not conv.messages:
        return Outcome(tree_id_for(conv), skipped=1,
                       warnings=[*conv.warnings, "the conversation has no messages to import"])
    writer = _ConversationWriter(loom, conv, seen)
    writer.sees = sees
    if conv.spawn is not None:
        writer.spawned = with_session(loom, spawned_lineage(conv, written or {}))
    try:
        writer.run()
    except BaseException:
        writer.forget()  # rolled back: a later copy is no copy of anything stored
        raise
    return finished(loom, writer, conv, written)


def finished(loom: Loom, writer: _ConversationWriter, conv: ImportedConversation,
             written: Written | None) -> Outcome:
    """The Outcome of a conversation written: its nodes noted in `written` (for the
    subagents read later), its warnings, its spawn record."""
    outcome = writer.outcome
    if written is not None:
        for source, node in writer.nodes.items():
            written[(conv.source_id, source)] = (node.tree, node.id)
    outcome.warnings.extend(conv.warnings)
    if conv.spawn is not None:
        outcome.spawned = spawn_record(loom, conv, outcome, writer.spawned)
    return outcome


class _ConversationWriter:
    """One conversation into the store.

    A message is the same as a stored node only when the node under its derived id has
    the same role, the same content and the same parent: then it is skipped. Anything
    else under that id (a hand-made export reusing ids, a message edited in place in
    the source app) lands beside it under an id derived from the new content, so
    nothing is lost and importing the same file again still adds nothing. A different
    first message means a different conversation: it becomes its own tree."""

    def __init__(
        self, loom: Loom, conv: ImportedConversation, seen: dict[str, tuple[str, str]] | None,
    ) -> None:
        self.loom = loom
        self.conv = conv
        self.fmt = conv.source_format
        self.seen = seen if seen is not None else {}
        #: the parts every id of this conversation is derived from (see `_find_tree`)
        self.scope: tuple[str, ...] = (self.fmt, conv.source_id)
        self.tree_id = tree_id_for(conv)
        self.attachments: dict[str, Attachment] = {a.key: a for a in conv.attachments}
        self.stored: dict[str, str | None] = {}
        self.outcome = Outcome(self.tree_id)
        #: every message's (time in its id, created_at) and parent, of all parts so far
        self.times: dict[str, tuple[datetime | None, str]] = {}
        self.parents: dict[str, str | None] = {}
        self._known: dict[str, datetime | None] = {}
        self._note(conv)
        self.by_source = {m.source_id: m for m in conv.messages}
        self.root_source = next(m.source_id for m in conv.messages if m.parent_source_id is None)
        self.prepared: dict[str, tuple[list[dict[str, Any]], str]] = {}
        self.changed: list[str] = []
        self.registered = False
        self.nodes: dict[str, Node] = {}
        self.spawned: dict[str, Any] | None = None
        self.skip: set[str] = set()
        self.tree: Tree | None = None
        self.started = False
        self.gone = False  # the tree was deleted here: every part is skipped
        self.sees: Callable[[str], bool] | None = None

    # -- the whole conversation ------------------------------------------------------
    def run(self) -> Outcome:
        if self._repeated():
            return self.outcome
        self._write_messages(self.conv)
        if not self.gone:
            self._finish()
        return self.outcome

    def _finish(self) -> None:
        self._say_changed()
        write_session(self, self.nodes)
        self._say_count(len(self.nodes))

    def _write_messages(self, conv: ImportedConversation) -> None:
        """The messages of `conv` (the whole conversation, or one part of it)."""
        if not self.started:
            self.started = True
            self.tree = self._find_tree()
        tree = self.tree
        ids = {m.source_id: self._node_id(m.source_id) for m in conv.messages}
        # a fork's own messages may be stored already, in the tree its original grew
        looked = tree is not None or bool(conv.forked_from)
        existing = storage(self.loom).nodes_by_id(list(ids.values())) if looked else {}
        if tree is not None and tree.mode != conv.mode:
            raise InvalidInput(f"tree {self.tree_id}", f"exists as a {tree.mode} tree")
        for node in existing.values():
            if node.tree != self.tree_id:
                raise InvalidInput(f"node {node.id}", "exists in another tree")
        skip = self._forgotten(ids, conv)
        if skip is None:
            self.gone = True
            return
        nodes = self.nodes
        for m in conv.messages:
            if m.source_id in skip or m.source_id in nodes:
                self.outcome.skipped += 1
                continue
            parent, version_of = self._links(m, nodes)
            nid, have = self._landing(m, ids[m.source_id], existing.get(ids[m.source_id]), parent)
            if have is not None:
                nodes[m.source_id] = have
                self.outcome.skipped += 1
                self._bookmark(m, have)  # a mark the source put on it since (a summary)
                continue
            if nid != ids[m.source_id]:
                version_of = version_of or self._edited(m, existing[ids[m.source_id]], parent)
            node = self._write(m, nid, self.times[m.source_id][1], parent, version_of)
            nodes[m.source_id] = node
            self.outcome.nodes += 1
            if tree is None and m.source_id == self.root_source:
                tree = self.tree = self._insert_tree(m, node)
                self.outcome.created = True
            self._overlay(m, node)

    def _say_count(self, landed: int) -> None:
        """A conversation whose messages in the store differ in number from what the
        source holds says so, rather than losing any in silence."""
        held = self.conv.source_count
        if held is not None and held != landed:
            self.outcome.warnings.append(
                f"the file holds {held} message(s) in this conversation; {landed} are in the "
                f"store after this import")

    def _forgotten(self, ids: dict[str, str], conv: ImportedConversation) -> set[str] | None:
        """Source ids of messages deleted here before (`loomdb delete`), with the
        messages below them: skipped, so an import never brings them back (the earlier
        parts' too, for a conversation given in parts). None when the whole tree was
        deleted (then nothing is imported)."""
        gone = storage(self.loom).forgetting().forgotten([*ids.values(), self.tree_id])
        skip = self.skip
        if not gone and not skip:
            return skip
        if self.tree_id in gone:
            self.outcome.skipped += len(conv.messages)
            self.outcome.warnings.append("this conversation was deleted from this store; "
                                         "skipped (see `loomdb forgotten`)")
            return None
        before = len(skip)
        for m in conv.messages:  # parents come first
            if (ids[m.source_id] in gone or m.parent_source_id in skip
                    or m.edited_from_source_id in skip):
                skip.add(m.source_id)
        if len(skip) > before:
            self.outcome.warnings.append(f"{len(skip) - before} message(s) deleted from this "
                                         "store before were skipped (see `loomdb forgotten`)")
        return skip

    def _repeated(self) -> bool:
        """True when this conversation's id was met earlier in the file and this copy is
        exact (skipped, with a warning); a copy that differs is an error."""
        conv, key = self.conv, self.tree_id
        label = f"conversation {conv.source_id!r}"
        mark = fingerprint(conv)
        if key not in self.seen:
            self.seen[key] = (label, mark)
            self.registered = True
            return False
        first, first_mark = self.seen[key]
        if first_mark != mark:
            raise InvalidInput(
                label, f"appears twice in this file with different content (its first copy "
                f"was {first}); import them from separate files to keep both")
        self.outcome.skipped = len(conv.messages)
        self.outcome.warnings.append(
            f"an exact copy of {first} earlier in this file; skipped")
        return True

    def forget(self) -> None:
        """Undo `_repeated`'s note when this conversation's write failed."""
        if self.registered:
            self.seen.pop(tree_id_for(self.conv), None)

    def _find_tree(self) -> Tree | None:
        """The stored tree this conversation belongs to, None when it is new.

        The tree under the derived id is this conversation's when its root is the same
        message (same id, role and content). Otherwise another conversation already
        carries this source id: this one gets ids derived from its first message too,
        and so a tree of its own, found again the same way on the next import."""
        back = carried(self.loom, self.conv, self._earlier_id,
                       self._forked_ids if self.conv.forked_from else None, self.sees)
        if back is not None:  # a path exported from here, continued elsewhere: a branch
            self.tree_id = self.outcome.tree = back[0].id
            self.nodes.update(back[1])
            return back[0]
        tree = storage(self.loom).tree_by_id(self.tree_id)
        if tree is None:
            return None
        root_id = self._node_id(self.root_source)
        root = (storage(self.loom).nodes_by_id([root_id]).get(root_id)
                if tree.root == root_id else None)
        if root is not None and self._same(root, self.by_source[self.root_source], None):
            return tree
        first = self.by_source[self.root_source]
        self.scope = (self.fmt, self.conv.source_id, f"~{first.role}:{self._content(first)[1]}")
        taken, self.tree_id = self.tree_id, derive_id(_conversation_time(self.conv), *self.scope)
        self.outcome.tree = self.tree_id
        tree = storage(self.loom).tree_by_id(self.tree_id)
        if tree is None:
            self.outcome.warnings.append(
                f"its source id is already imported as tree {taken}, which starts with "
                f"another message; imported as a tree of its own")
        return tree

    def _earlier_id(self, m: ImportedMessage) -> str:
        return derive_id(self.times[m.source_id][0], *self.scope, m.earlier_source_id or "")

    def _forked_ids(self, m: ImportedMessage) -> list[str]:
        """The ids the imports of the conversations this one was forked from gave `m`."""
        return [derive_id(self.times[m.source_id][0], self.fmt, origin, m.source_id)
                for origin in self.conv.forked_from]

    def _node_id(self, source_id: str) -> str:
        return derive_id(self.times[source_id][0], *self.scope, source_id)

    def _landing(
        self, m: ImportedMessage, nid: str, have: Node | None, parent: Node | None
    ) -> tuple[str, Node | None]:
        """(id to write the message under, the stored node that already is it or None).

        The derived id when it is free or holds this very message; else an id derived
        from the new content and parent too, so the differing message lands beside the
        stored one (and is found there on the next import)."""
        if have is None:
            return nid, None
        if self._same(have, m, parent):
            return nid, have
        key = f"~{m.role}:{self._content(m)[1]}:{parent.id if parent else ''}"
        other = derive_id(self.times[m.source_id][0], *self.scope, m.source_id, key)
        found = storage(self.loom).nodes_by_id([other]).get(other)
        if found is None:
            self.changed.append(m.source_id)
            return other, None
        if found.tree != self.tree_id or not self._same(found, m, parent):
            raise InvalidInput(f"node {other}", "exists with other content (an id clash)")
        return other, found

    def _same(self, node: Node, m: ImportedMessage, parent: Node | None) -> bool:
        """Is the stored `node` this message: same role, content and parent?"""
        return (node.role == m.role and node.content_id == self._content(m)[1]
                and node.parent == (parent.id if parent else None))

    def _edited(self, m: ImportedMessage, have: Node, parent: Node | None) -> Node | None:
        """The stored node a differing message is a version of: the one under its id,
        when it sits at the same place with the same role (the message was edited in
        place); else None, and the message is a sibling or a new branch."""
        if have.role == m.role and have.parent == (parent.id if parent else None):
            return have
        return None

    def _say_changed(self) -> None:
        if not self.changed:
            return
        shown = ", ".join(repr(s) for s in self.changed[:3])
        more = f" and {len(self.changed) - 3} more" if len(self.changed) > 3 else ""
        self.outcome.warnings.append(
            f"{len(self.changed)} message(s) ({shown}{more}) differ from the stored ones with "
            f"the same ids (in content, or in the messages before them); imported beside them "
            f"(as versions or a new branch)")

    def _note(self, conv: ImportedConversation) -> None:
        """The messages' parents, and their times (into `times`): message -> (source
        time used in its id, created_at to store).

        A message without a time takes its parent's, else the conversation's; when the
        source has no times at all, messages get the import time, a microsecond apart in
        file order (their ids then hold time 0, so they stay stable)."""
        known, out = self._known, self.times
        base = datetime.now(UTC)
        start = len(out)
        for i, m in enumerate(conv.messages, start=start):
            self.parents[m.source_id] = m.parent_source_id
            when = m.created_at
            if when is None and m.parent_source_id is not None:
                when = known.get(m.parent_source_id)
            if when is None:
                when = conv.created_at
            known[m.source_id] = when
            out[m.source_id] = (when, iso(when if when else base + timedelta(microseconds=i)))

    def _links(self, m: ImportedMessage, nodes: dict[str, Node]) -> tuple[Node | None, Node | None]:
        """(parent node, node this one is a version of) for a message."""
        parent = nodes[m.parent_source_id] if m.parent_source_id is not None else None
        if m.parent_source_id is None and m.source_id != self.root_source:
            return None, nodes[self.root_source]
        edited = m.edited_from_source_id
        if (edited and edited in nodes
                and self.parents.get(edited) == m.parent_source_id):
            return parent, nodes[edited]
        return parent, None

    # -- one node --------------------------------------------------------------------
    def _write(
        self, m: ImportedMessage, nid: str, created_at: str, parent: Node | None,
        version_of: Node | None,
    ) -> Node:
        where = f"message {m.source_id!r}"
        blocks = self._content(m)[0]
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
            source="import", options=m.options or None, cache=False, kind=m.kind,
            created_at=created_at, provenance=provenance, sources=self._kept(m),
            origin={"format": self.fmt, "conversation": self.conv.source_id,
                    "message": m.source_id},
            edited_from=version_of, node_id=nid,
        )

    def _kept(self, m: ImportedMessage) -> list[tuple[str, str]]:
        """A compaction's hyperedge sources: the turns it kept (written before it)."""
        if m.kind != "compaction":
            return []
        return [(self.nodes[k].id, "context") for k in m.kept_source_ids if k in self.nodes]

    def _content(self, m: ImportedMessage) -> tuple[list[dict[str, Any]], str]:
        """(checked blocks with blob ids, content id) of a message, computed once."""
        known = self.prepared.get(m.source_id)
        if known is None:
            where = f"message {m.source_id!r}"
            blocks = self.loom.prepare(self._blocks(m.content, where), f"{where}.content")
            # as the store will keep it (its secrets policy applied), so a re-import of
            # a message holding a redacted secret finds it the same
            blocks = storage(self.loom).scanner().value(blocks, "content", [])
            known = blocks, C.encode(blocks, self.loom.max_content_bytes)[0]
            self.prepared[m.source_id] = known
        return known

    def _insert_tree(self, root: ImportedMessage, node: Node) -> Tree:
        conv = self.conv
        title = conv.title.strip() if conv.title and conv.title.strip() else None
        C.check_text(title, "title")
        C.check_text(conv.system, "system")
        tree = Tree(
            id=self.tree_id, mode=conv.mode,
            title=title or first_sentence(conv.messages) or C.title_from(node.content),
            created_at=iso(conv.created_at) if conv.created_at else node.created_at,
            updated_at=node.created_at, system=conv.system or None, options={},
            root=node.id, lineage=self._lineage(),
        )
        storage(self.loom).write_tree(tree)
        return tree

    def _lineage(self) -> dict[str, Any]:
        conv = self.conv
        lineage: dict[str, Any] = {"format": self.fmt, "conversation": conv.source_id}
        if conv.current_source_id:
            lineage["current"] = conv.current_source_id
        if conv.metadata:
            lineage["metadata"] = conv.metadata
        tree_lineage: dict[str, Any] = {"imported": lineage}
        if self.spawned is not None:
            tree_lineage["spawned"] = self.spawned
        return tree_lineage

    def _overlay(self, m: ImportedMessage, node: Node) -> None:
        tags = [_tag(t) for t in m.tags if isinstance(t, str) and t.strip()]
        if m.hidden:
            tags.append("hidden")
        if tags:
            storage(self.loom).write_tags(node.id, self.tree_id, sorted(set(tags)))
        self._bookmark(m, node)

    def _bookmark(self, m: ImportedMessage, node: Node) -> None:
        """The source's bookmark on a node, unless one of its name family is there."""
        if m.bookmark:
            name = self.free_name(f"{self.base_name()}/{ref_part(m.bookmark)}", node.id)
            if name is not None:
                self.loom.bookmark(node.id, name)

    # -- content ---------------------------------------------------------------------
    def _blocks(self, blocks: list[dict[str, Any]], where: str) -> list[dict[str, Any]]:
        """Attachments as blob ids; a blob named by hash is none this import brings."""
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
                    block = missing_block(block, self.attachments.get(ref))
                else:
                    block["ref"] = bid
            elif ref is not None and block.get("type") in C.BLOB_BLOCK_TYPES:
                block = missing_block({k: v for k, v in block.items() if k != "ref"}, None)
            thumb = block.get("thumbnail_ref")
            if thumb is not None:
                ours = isinstance(thumb, str) and thumb.startswith(ATTACHMENT_PREFIX)
                bid = self._blob(thumb) if ours else None
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
            known = storage(self.loom).blob_known(C.digest(att.data))
            bid = self.loom.put_blob(att.data, att.mime_type or "application/octet-stream")
            if known is None:
                self.outcome.blobs += 1
        self.stored[key] = bid
        return bid

    # -- refs ------------------------------------------------------------------------
    def base_name(self) -> str:
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

    def free_name(self, wanted: str, node_id: str) -> str | None:
        """`wanted` or `wanted-2`, `-3`...: the first name that is free; None when a ref
        of that family already points at `node_id` (nothing to add)."""
        wanted = wanted[:96].rstrip("./-") or "import"
        for i in range(1, 1000):
            name = wanted if i == 1 else f"{wanted}-{i}"
            ref = storage(self.loom).find_ref(name)
            if ref is None:
                return name
            if ref.node == node_id and ref.tree == self.tree_id:
                return None
        raise InvalidInput(f"ref {wanted!r}", "no free name left")

# ---------------------------------------------------------------- small helpers


def _tag(value: str) -> str:
    return value.strip()[:100]

