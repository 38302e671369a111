"""Writing, mixed into `Loom`: content in (validated, blobs stored), nodes out.

Every write is one transaction, or joins the caller's: a new tree with its root, an
append that moves its session by compare-and-swap (retrying after the session's new
head, or failing, as the caller asks), a new version of a node, and the low-level
`write_node` / `build_node` importers use to set ids, times and origins themselves.
The chain hash of each node is computed here, from its parents' hashes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from . import content as C
from . import refs as R
from .blobs import blob_id, check_id
from .chain import chain_hash
from .errors import InvalidInput, NotFound, RefConflict, TooLarge, check_choice
from .graph import selection_delta
from .headish import Position, same_ref
from .jsondepth import check_depth
from .model import (
    KINDS,
    MODES,
    ROLES,
    SOURCE_ROLES,
    SOURCES,
    Anchor,
    Node,
    Ref,
    Tree,
    new_id,
    now,
)
from .ref_ops import LoomParts
from .secrets import Finding, Policy, Scanner
from .store import areas
from .store.base import HAS_SELECTIONS, HAS_SOURCES
from .tool_options import check as check_tool_options

if TYPE_CHECKING:
    from .blobs import BlobStore
    from .limits import Limits

ContentLike = str | list[dict[str, Any]]
POLICIES = ("retry", "fail")
_FULL_ID = re.compile(r"[0-9A-HJKMNP-TV-Z]{26}")
_CAS_RETRIES = 100
#: how long a Loom keeps the store's secrets policy before reading it again (seconds):
#: a policy set by another process is in force within this
POLICY_TTL = 2.0


class WriteOps(LoomParts):
    """New trees, appends, versions, content and blobs: what writes nodes."""

    blobs: BlobStore
    limits: Limits
    max_content_bytes: int
    _recent: dict[str, Node]
    _anchors: dict[str, Anchor]
    _scanner_held: tuple[float, Scanner] | None = None

    if TYPE_CHECKING:
        def _resolve(self, headish: str, names: Any = None) -> tuple[Position, Node]: ...
        def _remember_anchor(self, anchor: Anchor) -> Anchor: ...
        def _remember(self, node: Node) -> Node: ...
        def _head_of(self, ref: Ref) -> str: ...
        def _ref_or_fail(self, name: str) -> Ref: ...
        def _select(self, name: str, node: Node) -> None: ...
        def create_ref(self, name: str, kind: str, tree: str, node: str,
                       selections: dict[str, str], origin: dict[str, Any] | None) -> Ref: ...
        def tree(self, name: str) -> Tree: ...

    # == content ====================================================================
    def prepare(self, value: ContentLike, where: str = "content") -> list[dict[str, Any]]:
        """Validate content; move inline base64 payloads into the blob store."""
        if isinstance(value, str):
            return C.text(value)
        if isinstance(value, list):
            value = [self._inline_blob(b, f"{where}[{i}]") for i, b in enumerate(value)]
        blocks = C.validate_blocks(value, where, self.limits.json_depth)
        if C.piece_blocks(blocks):  # names resolved to exact ids, or refused
            blocks = areas.block_hooks("piece").written(self, blocks, where)
        refs = C.blob_refs(blocks)
        if refs:  # naming a blob is a use: its time moves on, so gc keeps it (gc/service)
            at = now()
            with self.backend.transaction():
                for ref in refs:
                    if not self.backend.blob_meta.touch_blob_meta(ref, at) and not self.blobs.has(ref):
                        raise InvalidInput(where, f"blob {ref} is not in the store; put it first")
        return blocks

    def _piece_options(self, options: dict[str, Any] | None, where: str) -> dict[str, Any] | None:
        """Options whose system piece (`system_piece`) is resolved to its exact id."""
        if not isinstance(options, dict) or areas.PIECE_OPTION not in options:
            return options
        return areas.block_hooks("piece").written_options(self, options, where)

    def _inline_blob(self, block: Any, where: str) -> Any:
        if not isinstance(block, dict) or "data" not in block or "ref" in block:
            return block
        if block.get("type") not in C.BLOB_BLOCK_TYPES:
            return block
        import base64  # (only blocks that carry their bytes inline)
        import binascii

        try:
            data = base64.b64decode(block["data"], validate=True)
        except (binascii.Error, TypeError, ValueError):
            raise InvalidInput(f"{where}.data", "is not valid base64") from None
        mime = block.get("mime_type") or block.get("media_type") or "application/octet-stream"
        rest = {k: v for k, v in block.items() if k not in ("data", "media_type")}
        return {**rest, "ref": self.put_blob(data, mime), "mime_type": mime}

    def put_blob(self, data: bytes, mime_type: str = "application/octet-stream") -> str:
        """Store bytes once; returns `sha256:<hex>` to reference from a block. Bytes
        over `limits.blob` are refused (TooLarge), whoever brings them. Its record first,
        then the bytes, in one transaction: a collection deleting the same blob holds its
        record until its bytes are gone, so the bytes are written after."""
        if len(data) > self.limits.blob:
            raise TooLarge("blob", f"{len(data)} bytes is over the limit of "
                           f"{self.limits.blob} bytes (LOOMDB_LIMIT_BLOB)")
        bid = blob_id(data)
        with self.backend.transaction():
            self.backend.blob_meta.put_blob_meta(bid, len(data), mime_type, now())
            self.blobs.put(data, bid)
        return bid

    def blob_list(self) -> list[tuple[str, int, str]]:
        """(id, size, created_at) of every blob in the store, oldest first."""
        return self.backend.blob_meta.list_blob_meta()

    def delete_blob(self, ref: str, before: str) -> bool:
        """Delete a blob last used before `before` (an ISO time): its record, then its
        bytes, in one transaction (a writer putting or naming it again waits for it, and
        then finds it gone). For garbage collection, which decides that nothing uses
        it; a blob put again later is stored again. False when the blob is newer or
        unknown."""
        with self.backend.transaction():
            gone = self.backend.blob_meta.delete_blob_meta(check_id(ref), before)
            if gone:
                self.blobs.delete(ref)
        return gone

    def blob(self, ref: str) -> bytes:
        """The bytes of a blob, verified against its id."""
        return self.blobs.get(check_id(ref))

    def file_content(self, path: str | Path, mime_type: str | None = None) -> list[dict[str, Any]]:
        """Content from a file: UTF-8 text as a text block, anything else as a blob block."""
        import mimetypes

        p = Path(path)
        try:
            data = p.read_bytes()
        except OSError as exc:
            raise InvalidInput(str(path), f"cannot read: {exc.strerror}") from None
        mime = mime_type or mimetypes.guess_type(p.name)[0] or "application/octet-stream"
        if mime.startswith("text/") or mime in ("application/json", "application/octet-stream"):
            try:
                return C.text(data.decode("utf-8"))
            except UnicodeDecodeError as exc:
                if mime != "application/octet-stream":
                    raise InvalidInput(str(path), f"not valid UTF-8 at byte {exc.start}") from None
        kind = mime.split("/")[0]
        block_type = {"image": "image", "audio": "audio"}.get(kind, "document")
        block: dict[str, Any] = {"type": block_type, "ref": self.put_blob(data, mime),
                                 "mime_type": mime}
        if block_type == "document":
            block["name"] = p.name
        return [block]

    # == writing nodes ==============================================================
    def new_tree(
        self,
        content: ContentLike,
        *,
        mode: str = "dialogue",
        title: str | None = None,
        system: str | None = None,
        options: dict[str, Any] | None = None,
        role: str = "user",
        author: str | None = None,
        source: str = "human",
        session: str | None = None,
        cache: bool = False,
        node_options: dict[str, Any] | None = None,
        created_at: str | None = None,
        origin: dict[str, Any] | None = None,
        tree_id: str | None = None,
        node_id: str | None = None,
        lineage: dict[str, Any] | None = None,
    ) -> tuple[Tree, Node]:
        """Create a tree with its root node (and optionally a session on it)."""
        check_choice("mode", mode, MODES)
        blocks = self.prepare(content)
        if options is not None and not isinstance(options, dict):
            raise InvalidInput("options", "must be a JSON object")
        check_tool_options(options, "options")
        check_tool_options(node_options, "node options")
        options = self._piece_options(options, "options")
        node_options = self._piece_options(node_options, "node options")
        self.check_values(options=options, lineage=lineage)
        if session is not None:
            R.check_name(session)
        for name, value in (("title", title), ("system", system)):
            C.check_text(value, name)
        found: list[Finding] = []
        scan = self._scanner()
        if scan.active:  # the title is made from the content: scanned before it is
            blocks = scan.value(blocks, "content", found, source)
            title = scan.value(title, "title", found, source)
            system = scan.value(system, "system", found, source)
        at = created_at or now()
        tree = Tree(
            id=tree_id or new_id(), title=title or C.title_from(blocks), mode=mode,
            created_at=at, updated_at=at, system=system, options=options or {},
            lineage=lineage,
        )
        with self.backend.transaction():
            root = self.write_node(
                tree=tree.id, parent=None, blocks=blocks, role=role, author=author,
                source=source, options=node_options, cache=cache, kind="message",
                created_at=at, origin=origin, node_id=node_id,
            )
            # (what a warning kept in the content build_node finds and notes again)
            self._note_findings([f for f in found if f.place in ("title", "system")
                                 or f.action != "warn"], tree.id, root.id)
            self.backend.trees.insert_tree(replace(tree, root=root.id))
            if session is not None:
                self.create_ref(session, "session", tree.id, root.id, {}, {"created": "new"})
        return self.tree(tree.id), root

    def append(
        self,
        at: str | Position,
        content: ContentLike,
        *,
        role: str = "user",
        author: str | None = None,
        source: str = "human",
        options: dict[str, Any] | None = None,
        cache: bool = False,
        also: Sequence[str | tuple[str, str]] = (),
        kind: str = "message",
        provenance: dict[str, Any] | None = None,
        origin: dict[str, Any] | None = None,
        expect: str | None = None,
        policy: str = "retry",
        created_at: str | None = None,
        node_id: str | None = None,
        tokens: int | None = None,
    ) -> Node:
        """Add a node after `at`. A session named as `at` moves to it (compare-and-swap).

        `policy="retry"` appends after the session's head as it is at commit time, so
        concurrent writers chain up instead of forking; `policy="fail"` (or an explicit
        `expect`) raises RefConflict when the session moved since it was read."""
        if (type(content) is str and type(at) is str and policy == "retry" and expect is None
                and not also and kind == "message" and options is None and not cache
                and provenance is None and origin is None and created_at is None
                and node_id is None and tokens is None):
            node = self._append_text(at, content, role, author, source)
            if node is not None:
                return node
        check_choice("policy", policy, POLICIES)
        check_tool_options(options)
        options = self._piece_options(options, "options")
        blocks = self.prepare(content)
        fields = dict(role=role, author=author, source=source, options=options, cache=cache,
                      kind=kind, created_at=created_at, provenance=provenance, origin=origin,
                      node_id=node_id, tokens=tokens)
        # `fail` compares against the head as the caller saw it before this call
        # (from the primary: a standby may not have replayed the head yet)
        if isinstance(at, Position) or policy == "retry":
            seen: str | Position = at
        else:
            with self.backend.on_primary():
                seen = self.resolve(at)
        for attempt in range(_CAS_RETRIES):
            try:
                return self._append(seen, also, expect, policy, blocks, fields)
            except RefConflict:
                if attempt == _CAS_RETRIES - 1 or policy == "fail" or expect is not None:
                    raise
        raise AssertionError("unreachable")

    def _append_text(
        self, at: str, text: str, role: str, author: str | None, source: str
    ) -> Node | None:
        """The everyday append, a text message after a session this Loom moved last or
        after a node named by its whole id, written straight through: the same node,
        chain hash and compare-and-swap as the general path, without its generality.
        None when the case is not this one (or the session moved): the caller goes on."""
        known = self._sessions.get(at)
        parent: Node | Anchor | None
        if known is not None:
            parent = None if known.selections else self._recent.get(known.node)
        elif _FULL_ID.fullmatch(at):
            parent = self._anchors.get(at)
            if parent is None and (parent := self.backend.nodes.anchor(at)) is not None:
                self._remember_anchor(parent)
        else:
            return None
        if parent is None or role not in ROLES or source not in SOURCES:
            return None
        if self._scanner().spans(text):
            return None  # the general path applies the store's secrets policy
        body = C.text_body(text)
        if len(body) > self.max_content_bytes:
            return None  # the general path says why
        from .tokens import count_text  # tiktoken loads on the first count

        cid = C.digest(body)
        tokens = count_text(text)
        created, nid = now(), new_id()
        author = author or (self.actor if source == "human" else source)
        node = Node(
            nid, parent.tree, parent.id, nid, parent.depth + 1, role, "message", author, source,
            cid, [{"type": "text", "text": text}], created,
            chain_hash(content_id=cid, parents=[parent.chain_hash], created_at=created,
                       author=author, role=role, kind="message", edited_from=None, options=None),
            None, None, False, tokens, parent.total_tokens + tokens,
        )
        ref = known
        with self.backend.transaction():
            if ref is not None:
                try:
                    ref = R.move(self.backend, ref, nid, actor=self.actor,
                                 reason=f"append {role}", at=created)
                except RefConflict:  # moved by someone else: read it and go the long way
                    self._sessions.pop(ref.name, None)
                    return None
            self.backend.nodes.insert_node(node, body, 0)
            areas.nodes_written(self.backend, (node,))
        return self._appended(node, ref)

    def _append(
        self, at: str | Position, also: Sequence[str | tuple[str, str]], expect: str | None,
        policy: str, blocks: list[dict[str, Any]], fields: dict[str, Any],
    ) -> Node:
        """One attempt, in one transaction: read the session's head, move it, write."""
        with self.backend.transaction():
            known = self._sessions.get(at) if isinstance(at, str) and expect is None else None
            parent: Node | Anchor | None = None
            if known is not None:
                ref: Ref | None = known
                pos = Position(known.node, known.tree, known, known.name, known.selections)
                parent = self._get(self._head_of(known))
            elif isinstance(at, str) and _FULL_ID.fullmatch(at) and (
                parent := self._recent.get(at) or self.backend.nodes.anchor(at)
            ):
                # a whole node id: never a ref name, and its parent fields are enough
                pos, ref = Position(parent.id, parent.tree), None
            elif isinstance(at, str):
                pos, parent = self._resolve(at)
                ref = pos.ref if pos.session is not None else None
            else:
                pos, parent = at, None
                ref = self._ref_or_fail(pos.session) if pos.session is not None else None
                if ref is not None and pos.ref is not None and not same_ref(ref, pos.ref):
                    raise NotFound("ref", ref.name)  # the session resolved is gone
            selections = pos.selections
            if ref is not None:
                head = self._head_of(ref)
                wanted = expect if expect is not None else (pos.node if policy == "fail" else None)
                if wanted is not None and head != wanted and ref.node != wanted:
                    raise RefConflict(ref.name, wanted, ref.node)
                selections = ref.selections
                if parent is None or parent.id != head:
                    parent = self._get(head)
            elif parent is None:
                parent = self._get(pos.node)
            extra = [self._source(pos.tree, s) for s in also]
            shown = {s: v for s, v in selections.items() if s != parent.slot}
            node, body, flags = self.build_node(
                tree=parent.tree, parent=parent, blocks=blocks, sources=extra,
                selections=selection_delta(self.backend, parent.id, shown), **fields,
            )
            if ref is not None:
                # the move first: when it loses the race nothing is written yet
                what = fields["role"] if fields["kind"] == "message" else fields["kind"]
                try:
                    ref = R.move(self.backend, ref, node.id, actor=self.actor,
                                 reason=f"append {what}", at=node.created_at)
                except RefConflict:
                    self._sessions.pop(ref.name, None)
                    raise
            self.backend.nodes.insert_node(node, body, flags)
            areas.nodes_written(self.backend, (node,))
        return self._appended(node, ref)

    def _appended(self, node: Node, ref: Ref | None) -> Node:
        """After an append's transaction: remember the node and the session as moved,
        unless an outer transaction still holds them (it may roll back)."""
        if self.backend.committed():
            self._remember(node)
            if ref is not None and ref.kind == "session":
                self._sessions[ref.name] = ref
        elif ref is not None:
            self._sessions.pop(ref.name, None)
        return node

    def edit(
        self,
        at: str | Position,
        content: ContentLike,
        *,
        author: str | None = None,
        source: str = "human",
        created_at: str | None = None,
        provenance: dict[str, Any] | None = None,
    ) -> Node:
        """Write a new version of a node; its descendants stay attached to the slot.

        When `at` names a session or view, that ref selects the new version at once;
        other refs keep the version they had until they select it."""
        blocks = self.prepare(content)
        pos = at if isinstance(at, Position) else self.resolve(at)
        with self.backend.transaction():
            old = self._get(pos.node)
            parent = self._get(old.parent) if old.parent else None
            wanted = {**old.selections, **pos.selections}
            wanted.pop(old.slot, None)
            selections = selection_delta(self.backend, old.parent, wanted)
            node = self.write_node(
                tree=old.tree, parent=parent, blocks=blocks, role=old.role, author=author,
                source=source, options=old.options, cache=old.cache, kind=old.kind,
                created_at=created_at, provenance=provenance, sources=list(old.sources),
                selections=selections, edited_from=old,
            )
            if pos.ref is not None and pos.ref.kind != "bookmark":
                self._select(pos.ref.name, node)
        return node

    def check_values(self, **values: Any) -> None:
        """Refuse (InvalidInput naming it) a JSON value nested deeper than
        `limits.json_depth`: options, provenance, origins, lineage."""
        for name, value in values.items():
            check_depth(value, self.limits.json_depth, name)

    # == the secrets scanner (loomdb.secrets, docs/security.md) ========================
    def _scanner(self) -> Scanner:
        """The store's secrets policy, compiled (read again after POLICY_TTL seconds)."""
        import time

        held = self._scanner_held
        clock = time.monotonic()
        if held is None or clock - held[0] > POLICY_TTL:
            held = (clock, Scanner(Policy.parse(self.backend.forget.setting("secrets"))))
            self._scanner_held = held
        return held[1]

    def _forget_scanner(self) -> None:
        """Read the policy again on the next write (after this Loom changed it)."""
        self._scanner_held = None

    def _note_findings(self, found: Sequence[Finding], tree: str, item: str) -> None:
        """Record findings about `item` (a node or generation id), inside the caller's
        transaction; nothing for none."""
        if found:
            at = now()
            self.backend.forget.add_findings(
                [(at, tree, item, f.kind, f.place, f.start, f.end, f.action, f.rule)
                 for f in found])

    def write_node(self, **fields: Any) -> Node:
        """Insert one node with its chain hash, inside the caller's transaction.

        The low-level write every operation above uses, public for importers that
        must set ids, times, origins and versions themselves (`new_tree`, `append` and
        `edit` are the everyday calls). Takes the keywords of `build_node`."""
        node, body, flags = self.build_node(**fields)
        self.backend.nodes.insert_node(node, body, flags)
        areas.nodes_written(self.backend, (node,))
        return node

    def build_node(
        self,
        *,
        tree: str,
        parent: Node | Anchor | None,
        blocks: list[dict[str, Any]],
        role: str,
        author: str | None,
        source: str,
        options: dict[str, Any] | None,
        cache: bool,
        kind: str,
        created_at: str | None,
        provenance: dict[str, Any] | None = None,
        origin: dict[str, Any] | None = None,
        sources: Sequence[tuple[str, str]] = (),
        selections: dict[str, str] | None = None,
        edited_from: Node | None = None,
        node_id: str | None = None,
        tokens: int | None = None,
    ) -> tuple[Node, bytes, int]:
        """A node ready to store: (node with its chain hash, canonical content, flags).

        Checks every field; `parent` and `edited_from` are Node values."""
        from .tokens import count_blocks

        check_choice("role", role, ROLES)
        check_choice("source", source, SOURCES)
        check_choice("kind", kind, KINDS)
        if options is not None and not isinstance(options, dict):
            raise InvalidInput("options", "must be a JSON object")
        if options or provenance or origin:
            self.check_values(options=options, provenance=provenance, origin=origin)
        found: list[Finding] = []
        scan = self._scanner()
        if scan.active:  # before anything is hashed or written: content, options, provenance
            blocks = scan.value(blocks, "content", found, source)
            options = scan.value(options, "options", found, source)
            provenance = scan.value(provenance, "provenance", found, source)
        cid, body = C.encode(blocks, self.max_content_bytes)
        selections = selections or {}
        wanted = [s for s, _ in sources] + list(selections.values())
        linked = {w: hit for w in wanted if (hit := self._recent.get(w)) is not None}
        if len(linked) < len(wanted):
            linked |= self.backend.nodes.get_nodes([w for w in wanted if w not in linked])
        for vid in selections.values():
            if vid not in linked:
                raise NotFound("selected version", vid)
        parents = [parent.chain_hash] if parent else []
        parents += [linked[s].chain_hash for s, _ in sources]
        parents += [linked[v].chain_hash for v in selections.values()]
        author = author or (self.actor if source == "human" else source)
        created = created_at or now()
        response = (provenance or {}).get("response_hash")
        edited = edited_from.id if edited_from else None
        if tokens is None:
            tokens = count_blocks(blocks)
        nid = node_id or new_id()
        node = Node(
            id=nid, tree=tree, parent=parent.id if parent else None,
            slot=edited_from.slot if edited_from else nid,
            depth=parent.depth + 1 if parent else 0, role=role, kind=kind, author=author,
            source=source, content_id=cid, content=blocks, created_at=created,
            chain_hash=chain_hash(
                content_id=cid, parents=parents, created_at=created, author=author, role=role,
                kind=kind, edited_from=edited, options=options, response=response,
            ),
            edited_from=edited, options=options, cache=cache, tokens=tokens,
            total_tokens=(parent.total_tokens if parent else 0) + tokens,
            provenance=provenance, origin=origin, sources=tuple(sources), selections=selections,
        )
        flags = (HAS_SELECTIONS if selections else 0) | (HAS_SOURCES if sources else 0)
        if found:
            with self.backend.transaction():
                self._note_findings(found, tree, nid)
        return node, body, flags

    def _source(self, tree: str, spec: str | tuple[str, str]) -> tuple[str, str]:
        headish, role = (spec, "context") if isinstance(spec, str) else spec
        check_choice("source role", role, SOURCE_ROLES[1:])
        # a whole node id is never a ref name: one this Loom remembers is read from memory
        known = self._recent.get(headish) if _FULL_ID.fullmatch(headish) else None
        pos = Position(known.id, known.tree) if known is not None else self.resolve(headish)
        if pos.tree != tree:
            raise InvalidInput(
                f"source {headish!r}",
                "a continuation cannot cross trees (only link edges may); use `link`",
            )
        return pos.node, role
