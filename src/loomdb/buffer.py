"""Buffer mode (seed 003): a tree that reads like one document while keeping every branch.

The document at a point is the text of its path (root to head, one version per slot,
chosen as everywhere else: see graph.py) concatenated with no separators, followed by
the *working buffer*: the uncommitted draft of the session or view it is read
through. The two operations the seed distinguishes:

- **Branching** (`generate`): the draft is committed as a human node, then a model
  writes N continuations of the document, stored as N sibling nodes under it; the ref
  moves to the first. Switching to a sibling (`switch`) switches everything after it.
- **Editing** (`edit_span`): a character range of the document becomes new *versions*
  of exactly the nodes it touches (`edited_from`), selected in the ref it is edited
  through; everything after them stays attached, so nothing is copied.

Every node has one author. `document(...).spans` attributes each character: a node's
text to its author, except in a version, whose text is diffed (diff-match-patch,
character level with semantic cleanup) against the original of its slot: unchanged
characters keep the original's author, inserted ones belong to the version's author.

Drafts belong to refs: a draft is read and written through the exact name of a
session or view (`main`, not `main~2`, not a node id). They are mutable rows beside
the refs (`Backend.get_draft` / `set_draft`), never hashed, and survive restarts.

Offsets are indices into the Python string (Unicode code points).
"""

from __future__ import annotations

import json
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import TYPE_CHECKING, Any

from . import content as C
from . import generation as G
from .errors import InvalidInput, MissingExtra, NotFound
from .headish import Position, parse, same_ref
from .model import Node, Ref
from .store.base import BODY, ID, SLOT

if TYPE_CHECKING:
    from .generation import Generated, Stream
    from .loom import Loom
    from .providers.config import ProvidersConfig

At = str | Position


# == values =========================================================================
@dataclass(frozen=True, slots=True)
class Piece:
    """One node of the path and its share of the document: `text[start:end]`."""

    node: str
    start: int
    end: int
    author: str
    source: str
    role: str
    edited_from: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"node": self.node, "start": self.start, "end": self.end, "author": self.author,
                "source": self.source, "role": self.role, "edited_from": self.edited_from}


@dataclass(frozen=True, slots=True)
class Span:
    """A run of the document written by one author: `(text, author, node)`.

    `node` is the path node holding the characters (None for the draft); `origin` the
    node whose author wrote them (the original, for unchanged text of a version);
    `model` is true when a model wrote them (buffer mode colours that text)."""

    start: int
    end: int
    text: str
    author: str
    node: str | None
    origin: str | None
    model: bool

    def to_json(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "author": self.author, "node": self.node}


@dataclass(frozen=True, slots=True)
class Document:
    """The document at a point: `text` = the path's text + `draft`."""

    text: str
    draft: str
    spans: list[Span]
    nodes: list[Piece]
    ref: str | None = None
    head: str | None = None

    @property
    def committed(self) -> str:
        """The text of the path alone (the document without its draft)."""
        return self.text[: len(self.text) - len(self.draft)]

    def to_json(self) -> dict[str, Any]:
        return {"text": self.text, "draft": self.draft}


@dataclass(frozen=True, slots=True)
class Alternative:
    node: str
    slot: str
    author: str
    source: str
    text: str
    current: bool

    def to_json(self) -> dict[str, Any]:
        return {"node": self.node, "slot": self.slot, "author": self.author,
                "source": self.source, "current": self.current, "text": self.text}


@dataclass(frozen=True, slots=True)
class Alternatives:
    """What could fill position `index` of a path: the sibling branches (one per slot
    under the same parent, each shown in the version the ref would use) and the
    versions of the slot the path uses there."""

    index: int
    node: str
    branches: list[Alternative]
    versions: list[Alternative]

    def to_json(self) -> dict[str, Any]:
        return {"index": self.index, "node": self.node,
                "branches": [a.to_json() for a in self.branches],
                "versions": [a.to_json() for a in self.versions]}


@dataclass(frozen=True, slots=True)
class Switched:
    """Where `switch` left a ref: its head, whether it moved, the versions it selected."""

    ref: str
    head: str
    moved: bool
    selected: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {"ref": self.ref, "head": self.head, "moved": self.moved,
                "selected": self.selected}


@dataclass(frozen=True, slots=True)
class Divergence:
    """Where the paths of `a` and `b` part.

    `kind`: `same` (one path), `prefix` (one continues the other), `version` (the same
    slot filled by different versions) or `branch` (different children of `base`).
    `index` is the first differing position, `base` the last shared node (None when
    even the roots differ), `offset` the length of the shared text. `a` and `b` list
    the nodes each path holds that the other does not (after a version divergence the
    paths usually share what follows, so those lists are short)."""

    kind: str
    index: int
    base: str | None
    offset: int
    a: list[str]
    b: list[str]

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "index": self.index, "base": self.base,
                "offset": self.offset, "a": self.a, "b": self.b}


# == where a draft lives ============================================================
def _head(loom: Loom, ref: Ref) -> str:
    """The node a ref shows at its head (its selection for the head's slot, if any)."""
    if not ref.selections:
        return ref.node
    return ref.selections.get(loom.node(ref.node).slot, ref.node)


def _position(loom: Loom, at: At) -> Position:
    """`loom.resolve`, minus a path walk: the exact name of a ref resolves to its head
    (what resolve would give) without resolving the whole path just to find it."""
    if isinstance(at, Position):
        return at
    base, up = parse(at)
    ref = loom.find_ref(base) if up == 0 else None
    if ref is None:
        return loom.resolve(at)
    selections = dict(ref.selections) if ref.kind != "bookmark" else {}
    node = _head(loom, ref) if selections else ref.node
    return Position(node, ref.tree, ref, ref.name if ref.kind == "session" else None, selections)


def _draft_ref(loom: Loom, pos: Position) -> Ref | None:
    """The session or view whose draft the position shows: only its exact head."""
    ref = pos.ref
    if ref is None or ref.kind == "bookmark":
        return None
    if ref.kind == "session":
        return ref if pos.session == ref.name else None
    return ref if pos.node == _head(loom, ref) else None


def _require_ref(loom: Loom, at: At, pos: Position) -> Ref:
    ref = _draft_ref(loom, pos)
    if ref is not None:
        return ref
    name = at if isinstance(at, str) else pos.node
    if pos.ref is not None and pos.ref.kind == "bookmark":
        why = "is a bookmark (a fixed label)"
    elif pos.ref is not None:
        why = f"names a point inside {pos.ref.name!r}, not its head"
    else:
        why = "names a node"
    raise InvalidInput(
        f"headish {name!r}",
        f"{why}; a draft belongs to a session or view: name one, or make one with "
        f"`loomdb view new NAME {name}` (or `loomdb fork {name} NAME`)",
    )


def _still(loom: Loom, ref: Ref) -> None:
    if not same_ref(loom.ref(ref.name), ref):  # deleted and made again meanwhile
        raise NotFound("ref", ref.name)


def _require_buffer(loom: Loom, tree_id: str) -> None:
    tree = loom.tree_settings(tree_id)
    if tree.mode != "buffer":
        raise InvalidInput(
            f"tree {tree.id}",
            "is a dialogue tree; buffer operations need a tree made with mode 'buffer'",
        )


def _read_draft(loom: Loom, ref_name: str) -> str:
    return loom.draft(ref_name)


def _write_draft(loom: Loom, ref_name: str, text: str) -> None:
    loom.write_draft(ref_name, text)


def _check_text(loom: Loom, text: Any, where: str) -> str:
    if not isinstance(text, str):
        raise InvalidInput(where, "must be text")
    C.encode(C.validate_blocks(C.text(text), where), loom.max_content_bytes)
    return text


# == the document ===================================================================
def _texts(rows: Sequence[tuple[Any, ...]]) -> list[str]:
    """The plain text of each row, parsing every stored body in one go."""
    if not rows:
        return []
    bodies = json.loads("[" + ",".join(r[BODY] for r in rows) + "]")
    return [C.plain_text(b) for b in bodies]


def text(loom: Loom, at: At) -> str:
    """The document at `at` as plain text (the path's text + draft), without authorship."""
    pos = _position(loom, at)
    ref = _draft_ref(loom, pos)
    draft = _read_draft(loom, ref.name) if ref else ""
    return "".join(_texts(loom.path_rows(pos))) + draft


def document(loom: Loom, at: At) -> Document:
    """The document at `at` with its pieces (one per path node) and authorship spans."""
    pos = _position(loom, at)
    ref = _draft_ref(loom, pos)
    draft = _read_draft(loom, ref.name) if ref else ""
    rows = loom.path_rows(pos)
    texts = _texts(rows)
    ids = [r[ID] for r in rows]
    info = _authors(loom, ids)
    info.update(_authors(loom, list({r[SLOT] for r in rows if r[SLOT] != r[ID]} - set(info))))
    pieces: list[Piece] = []
    spans: list[Span] = []
    at_char = 0
    for row, body in zip(rows, texts, strict=True):
        nid, slot = row[ID], row[SLOT]
        who = info[nid]
        end = at_char + len(body)
        pieces.append(Piece(nid, at_char, end, who.author, who.source, who.role, who.edited_from))
        if body:
            if slot == nid:
                _add(spans, Span(at_char, end, body, who.author, nid, nid, who.model))
            else:
                _attribute(spans, at_char, body, nid, who, slot, info[slot])
        at_char = end
    if draft:
        _add(spans, Span(at_char, at_char + len(draft), draft, loom.actor, None, None, False))
    return Document("".join(texts) + draft, draft, spans, pieces,
                    ref.name if ref else None, pos.node)


def authorship(loom: Loom, at: At) -> list[Span]:
    """Who wrote each character of the document at `at` (spans cover it exactly)."""
    return document(loom, at).spans


@dataclass(frozen=True, slots=True)
class _Who:
    """What authorship needs of a node (immutable, so cached per Loom)."""

    author: str
    source: str
    role: str
    edited_from: str | None
    text: str

    @property
    def model(self) -> bool:
        return self.role == "assistant" and self.source != "human"


_WHO: weakref.WeakKeyDictionary[Any, dict[str, _Who]] = weakref.WeakKeyDictionary()
_WHO_MAX = 200_000


def _authors(loom: Loom, ids: Sequence[str]) -> dict[str, _Who]:
    """Author facts of nodes: from the cache, else one `get_nodes` for the rest."""
    cache = _WHO.setdefault(loom, {})
    out = {i: cache[i] for i in ids if i in cache}
    missing = [i for i in ids if i not in out]
    if missing:
        if len(cache) + len(missing) > _WHO_MAX:
            cache.clear()
        keep = loom.committed()  # never remember what a rollback could undo
        for nid, node in loom.nodes_by_id(missing).items():
            out[nid] = _Who(node.author, node.source, node.role, node.edited_from,
                            C.plain_text(node.content))
            if keep:
                cache[nid] = out[nid]
    return out


def _add(spans: list[Span], span: Span) -> None:
    """Append a span, merging it into the previous one when nothing but position differs."""
    if spans:
        last = spans[-1]
        if (last.end == span.start and last.node == span.node and last.origin == span.origin
                and last.author == span.author and last.model == span.model):
            spans[-1] = Span(last.start, span.end, last.text + span.text, last.author,
                             last.node, last.origin, last.model)
            return
    spans.append(span)


def _attribute(
    spans: list[Span], start: int, body: str, nid: str, version: _Who, slot: str, original: _Who
) -> None:
    """Spans of a version's text: diffed against the original of its slot."""
    at_char = start
    for inserted, chunk in diff(original.text, body):
        who, origin = (version, nid) if inserted else (original, slot)
        _add(spans, Span(at_char, at_char + len(chunk), chunk, who.author, nid, origin,
                         who.model))
        at_char += len(chunk)


def diff(original: str, edited: str) -> tuple[tuple[bool, str], ...]:
    """`edited` cut into (inserted?, chunk) runs: a character-level diff against
    `original` (diff-match-patch), semantically cleaned so that a rewritten word is
    one insertion rather than a speckle of coincidental matches. Deletions leave no
    characters, so the chunks concatenate to `edited` exactly."""
    return _diff(original, edited)


@lru_cache(maxsize=4096)
def _diff(original: str, edited: str) -> tuple[tuple[bool, str], ...]:
    try:
        from diff_match_patch import diff_match_patch
    except ImportError:
        raise MissingExtra("buffer authorship", "buffer") from None
    dmp = diff_match_patch()
    dmp.Diff_Timeout = 1.0
    ops = dmp.diff_main(original, edited, False)
    dmp.diff_cleanupSemantic(ops)
    return tuple((op == dmp.DIFF_INSERT, chunk) for op, chunk in ops
                 if op != dmp.DIFF_DELETE and chunk)


# == the draft ======================================================================
def get_draft(loom: Loom, at: At, *, strict: bool = True) -> str:
    """The draft of a session or view ("" when empty). Any other point has no draft:
    an error, or "" with `strict=False`."""
    pos = _position(loom, at)
    ref = _require_ref(loom, at, pos) if strict else _draft_ref(loom, pos)
    return _read_draft(loom, ref.name) if ref else ""


def set_draft(loom: Loom, at: At, value: str) -> str:
    """Replace the draft of a session or view; returns it."""
    pos = _position(loom, at)
    ref = _require_ref(loom, at, pos)
    _require_buffer(loom, pos.tree)
    _check_text(loom, value, "draft")
    with loom.transaction():
        _still(loom, ref)
        _write_draft(loom, ref.name, value)
    return value


def append_draft(loom: Loom, at: At, value: str) -> str:
    """Add text at the end of the draft (atomically); returns the whole draft."""
    pos = _position(loom, at)
    ref = _require_ref(loom, at, pos)
    _require_buffer(loom, pos.tree)
    _check_text(loom, value, "draft")
    with loom.transaction():
        _still(loom, ref)
        draft = _read_draft(loom, ref.name) + value
        _check_text(loom, draft, "draft")
        _write_draft(loom, ref.name, draft)
    return draft


def commit_draft(loom: Loom, at: At, *, author: str | None = None) -> Node | None:
    """Write the draft as a human node after the ref's head and move the ref to it (a
    view too: in buffer mode a view is a document); None when the draft is empty."""
    pos = _position(loom, at)
    ref = _require_ref(loom, at, pos)
    _require_buffer(loom, pos.tree)
    with loom.transaction():
        return _commit(loom, ref.name, author)


def _commit(loom: Loom, name: str, author: str | None) -> Node | None:
    """Inside a transaction: the draft of `name` as a node, the ref moved, the draft emptied."""
    draft = _read_draft(loom, name)
    if not draft:
        return None
    ref = loom.ref(name)
    head = Position(_head(loom, ref), ref.tree, ref,
                    ref.name if ref.kind == "session" else None, dict(ref.selections))
    node = loom.append(head, draft, role="user", source="human", author=author)
    if ref.kind == "view":
        loom.move_ref(ref, node.id, "commit draft")
    _write_draft(loom, name, "")
    return node


# == branching: generate ============================================================
def generate(
    loom: Loom,
    at: At,
    *,
    models: Sequence[str] = (),
    n: int = 1,
    max_tokens: int | None = None,
    stream: Stream | None = None,
    config: ProvidersConfig | None = None,
    environ: Mapping[str, str] | None = None,
    keep_partial: bool = False,
    options: dict[str, Any] | None = None,
    mode: str | None = None,
) -> Generated:
    """Commit the draft (if any) as a human node, then ask for N continuations of the
    document, stored as N sibling nodes under it; the ref moves to the first.

    The prompt is the document itself (path text + draft, no separators, no system
    prompt unless the tree's options set `include_system`). `Generated.nodes` is
    [the committed draft node, if the draft was not empty] + the continuations.
    Model names and `n` are checked before the draft is committed, so a bad call
    writes nothing; a provider failure after it keeps the committed draft."""
    pos = _position(loom, at)
    _require_buffer(loom, pos.tree)
    if n < 1 or n > 64:
        raise InvalidInput("-n", f"must be between 1 and 64, got {n}")
    G.pick_models(loom, models, loom.context(pos, options), config, environ)
    ref = _draft_ref(loom, pos)
    committed: Node | None = None
    if ref is not None:
        with loom.transaction():
            committed = _commit(loom, ref.name, None)
            ref = loom.ref(ref.name)
        pos = Position(_head(loom, ref), ref.tree, ref,
                       ref.name if ref.kind == "session" else None, dict(ref.selections))
    result = G.generate(
        loom, pos, models=models, n=n, max_tokens=max_tokens, stream=stream, config=config,
        environ=environ, keep_partial=keep_partial, options=options,
        mode=mode or "completion",
    )
    moved = result.moved
    if ref is not None and not moved:
        # a view, or a session whose head shows an edited version (store() compares the
        # ref's node with the position): move it here, unless someone else moved it
        with loom.transaction():
            now_ref = loom.ref(ref.name)
            if now_ref.node == ref.node:
                loom.move_ref(now_ref, result.nodes[0].id,
                           f"generate {len(result.nodes)} ({result.nodes[0].author})")
                moved = True
    result.nodes = ([committed] if committed else []) + result.nodes
    result.moved = moved
    result.session = ref.name if ref is not None and ref.kind == "session" else None
    return result


# == editing: versions of the nodes a range touches ================================
def edit_span(
    loom: Loom, at: At, start: int, end: int, new_text: str, *, author: str | None = None
) -> list[Node]:
    """Replace `document.text[start:end]` with `new_text`.

    Committed text changes only through new versions, one per node the range touches
    (a node it covers entirely becomes an empty version; `new_text` goes into the
    first); a node whose text would not change gets none. Through a session or view
    the versions are selected there at once; other refs keep theirs. The part of the
    range inside the draft edits the draft. An empty range inserts: into the node the
    position ends (the start of the document: the first node), or at the end of the
    document into the draft. All in one transaction; returns the versions written."""
    pos = _position(loom, at)
    _require_buffer(loom, pos.tree)
    _check_text(loom, new_text, "text")
    ref = _draft_ref(loom, pos)
    with loom.transaction():
        if ref is not None:
            ref = loom.ref(ref.name)
            pos = Position(_head(loom, ref), ref.tree, ref, pos.session, dict(ref.selections))
        draft = _read_draft(loom, ref.name) if ref else ""
        rows = loom.path_rows(pos)
        texts = _texts(rows)
        committed = sum(map(len, texts))
        total = committed + len(draft)
        if not (isinstance(start, int) and isinstance(end, int) and 0 <= start <= end <= total):
            raise InvalidInput(
                f"range {start}:{end}", f"must satisfy 0 <= start <= end <= {total} (the document length)"
            )
        edits = _split(rows, texts, start, end, new_text) if start < committed else []
        if end > committed or start >= committed:
            if ref is None:
                raise InvalidInput(
                    f"range {start}:{end}",
                    "reaches the draft, and a draft belongs to a session or view; name one",
                )
            lo, hi = max(start - committed, 0), end - committed
            _write_draft(loom, ref.name, draft[:lo] + (new_text if start >= committed else "")
                         + draft[max(hi, 0):])
        nodes = loom.nodes_by_id([nid for nid, _ in edits])
        index = {r[ID]: i for i, r in enumerate(rows)}
        selections = dict(pos.selections)
        versions: list[Node] = []
        for nid, replacement in edits:
            old = nodes[nid]
            if any(b["type"] != "text" for b in old.content):
                raise InvalidInput(
                    f"node {nid}", "holds more than text; edit it with `loomdb edit` instead"
                )
            # a version remembers the versions its ref shows above it (so its id keeps
            # naming this text in this context); selections below it could never apply
            above = {r[SLOT] for r in rows[: index[nid]]}
            where = Position(nid, pos.tree, pos.ref, None,
                             {s: v for s, v in selections.items() if s in above})
            version = loom.edit(where, replacement, author=author)
            selections[version.slot] = version.id
            versions.append(version)
    return versions


def _split(
    rows: Sequence[tuple[Any, ...]], texts: Sequence[str], start: int, end: int, new_text: str
) -> list[tuple[str, str]]:
    """(node, its new text) for every node the committed part of [start, end) touches."""
    bounds: list[tuple[int, int]] = []
    at_char = 0
    for body in texts:
        bounds.append((at_char, at_char + len(body)))
        at_char += len(body)
    if start == end:  # an insertion: into the node ending there, else the one starting there
        hit = next((i for i, (s, e) in enumerate(bounds) if s < start <= e), None)
        if hit is None:
            hit = next(i for i, (s, e) in enumerate(bounds) if s <= start < e)
        touched = [hit]
    else:
        touched = [i for i, (s, e) in enumerate(bounds) if max(s, start) < min(e, end)]
    out: list[tuple[str, str]] = []
    for k, i in enumerate(touched):
        s, _ = bounds[i]
        body = texts[i]
        a, b = max(start, s) - s, min(end, bounds[i][1]) - s
        new = body[:a] + (new_text if k == 0 else "") + body[b:]
        if new != body:
            out.append((rows[i][ID], new))
    return out


# == navigation =====================================================================
def alternatives(loom: Loom, at: At, index: int | str) -> Alternatives:
    """The alternatives at one position of the path at `at`: `index` counts from the
    root (0) or from the head (-1), or names a node of the path."""
    pos = _position(loom, at)
    rows = loom.path_rows(pos)
    ids = [r[ID] for r in rows]
    i = _index(loom, ids, index)
    chosen = ids[i]
    node = loom.node(chosen)
    if i == 0:
        slots = [node.slot]
    else:
        slots = loom.slot_children(rows[i - 1][SLOT])
    picks = {s: pos.selections.get(s, s) for s in slots}
    picks[node.slot] = chosen
    versions = loom.slot_versions(node.slot)
    found = loom.nodes_by_id(list(picks.values()) + versions)

    def alt(nid: str) -> Alternative:
        n = found[nid]
        return Alternative(nid, n.slot, n.author, n.source, C.plain_text(n.content),
                           nid == chosen)

    return Alternatives(i, chosen, [alt(picks[s]) for s in slots], [alt(v) for v in versions])


def _index(loom: Loom, ids: list[str], index: int | str) -> int:
    if isinstance(index, str):
        name = index
        try:
            index = int(name)
        except ValueError:
            node = loom.resolve(name).node
            if node not in ids:
                raise InvalidInput(f"node {name!r}", "is not on this path") from None
            return ids.index(node)
    if not -len(ids) <= index < len(ids):
        raise InvalidInput(f"index {index}", f"the path holds {len(ids)} nodes (0..{len(ids) - 1})")
    return index % len(ids)


def switch(loom: Loom, at: At, node: At) -> Switched:
    """Make the session or view `at` show `node`.

    A version of a slot on its path is selected (the ref stays where it is). Any other
    node of the tree (typically a sibling from `alternatives`) switches the whole
    downstream path: the ref moves to the most recent leaf below that node's slot
    (selecting `node` if it is a version). The move is logged and can be undone."""
    pos = _position(loom, at)
    ref = _require_ref(loom, at, pos)
    target = loom.node(node)
    if target.tree != pos.tree:
        raise InvalidInput(f"node {target.id}", f"is not in the tree of {ref.name!r}")
    slots = {r[SLOT] for r in loom.path_rows(pos)}
    with loom.transaction():
        selected: list[str] = []
        if target.slot in slots:
            loom.select(ref.name, target.id)
            fresh = loom.ref(ref.name)
            return Switched(ref.name, _head(loom, fresh), False, [target.id])
        leaf = _latest_leaf(loom, target)
        current = loom.ref(ref.name)
        moved = current.node != leaf
        if moved:
            loom.set_ref(ref.name, leaf, expect=current.node)
        if target.edited_from is not None:  # its slot is on the path only after the move
            loom.select(ref.name, target.id)
            selected.append(target.id)
        return Switched(ref.name, _head(loom, loom.ref(ref.name)), moved, selected)


def _latest_leaf(loom: Loom, target: Node) -> str:
    """The most recently written leaf at or below `target`'s slot (unpruned if any)."""
    nodes = loom.nodes(loom.subtree(target.slot))
    slot_of = {n.id: n.slot for n in nodes}
    parents = {slot_of[n.parent] for n in nodes if n.parent in slot_of}
    leaves = [n for n in nodes if n.edited_from is None and n.slot not in parents]
    pruned = loom.flagged(target.tree, "pruned")
    leaves = [n for n in leaves if n.id not in pruned] or leaves
    return max(leaves, key=lambda n: (n.created_at, n.id)).id


def diverge(loom: Loom, a: At, b: At) -> Divergence:
    """Where the paths at `a` and `b` part (see `Divergence`)."""
    pa, pb = loom.path_rows(_position(loom, a)), loom.path_rows(_position(loom, b))
    i = 0
    while i < len(pa) and i < len(pb) and pa[i][ID] == pb[i][ID]:
        i += 1
    if i == len(pa) == len(pb):
        kind = "same"
    elif i == len(pa) or i == len(pb):
        kind = "prefix"
    elif pa[i][SLOT] == pb[i][SLOT]:
        kind = "version"
    else:
        kind = "branch"
    in_a, in_b = {r[ID] for r in pa}, {r[ID] for r in pb}
    return Divergence(
        kind, i, pa[i - 1][ID] if i else None, sum(map(len, _texts(pa[:i]))),
        [r[ID] for r in pa if r[ID] not in in_b], [r[ID] for r in pb if r[ID] not in in_a],
    )


G.register_mode("buffer", generate)
