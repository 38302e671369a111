"""Where a draft lives, and the draft: read, replaced, appended to, committed.

A draft belongs to a ref: it is read and written through the exact name of a session
or view (`main`, not `main~2`, not a node id), and only at that ref's head.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import content as C
from ..errors import InvalidInput, NotFound
from ..headish import Position, parse, same_ref
from ..model import Node, Ref
from ..storage_ops import storage
from .values import At

if TYPE_CHECKING:
    from ..loom import Loom


# == where a draft lives ============================================================
def head_of(loom: Loom, ref: Ref) -> str:
    """The node a ref shows at its head (its selection for the head's slot, if any)."""
    if not ref.selections:
        return ref.node
    return ref.selections.get(loom.node(ref.node).slot, ref.node)


def position(loom: Loom, at: At) -> Position:
    """`loom.resolve`, minus a path walk: the exact name of a ref resolves to its head
    (what resolve would give) without resolving the whole path just to find it."""
    if isinstance(at, Position):
        return at
    base, up = parse(at)
    ref = storage(loom).find_ref(base) if up == 0 else None
    if ref is None:
        return loom.resolve(at)
    selections = dict(ref.selections) if ref.kind != "bookmark" else {}
    node = head_of(loom, ref) if selections else ref.node
    return Position(node, ref.tree, ref, ref.name if ref.kind == "session" else None, selections)


def draft_ref(loom: Loom, pos: Position) -> Ref | None:
    """The session or view whose draft the position shows: only its exact head."""
    ref = pos.ref
    if ref is None or ref.kind == "bookmark":
        return None
    if ref.kind == "session":
        return ref if pos.session == ref.name else None
    return ref if pos.node == head_of(loom, ref) else None


def require_ref(loom: Loom, at: At, pos: Position) -> Ref:
    ref = draft_ref(loom, pos)
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


def still_there(loom: Loom, ref: Ref) -> None:
    if not same_ref(loom.ref(ref.name), ref):  # deleted and made again meanwhile
        raise NotFound("ref", ref.name)


def require_buffer(loom: Loom, tree_id: str) -> None:
    tree = storage(loom).tree_settings(tree_id)
    if tree.mode != "buffer":
        raise InvalidInput(
            f"tree {tree.id}",
            "is a dialogue tree; buffer operations need a tree made with mode 'buffer'",
        )


#: how much of a draft's end is looked at again with each appended piece
DRAFT_SCAN_TAIL = 8192


def read_draft(loom: Loom, ref_name: str) -> str:
    return storage(loom).draft(ref_name)


def write_draft(loom: Loom, ref_name: str, text: str) -> None:
    storage(loom).write_draft(ref_name, text)


def check_text(loom: Loom, text: Any, where: str) -> str:
    if not isinstance(text, str):
        raise InvalidInput(where, "must be text")
    C.encode(C.validate_blocks(C.text(text), where), loom.max_content_bytes)
    return text


# == the draft ======================================================================
def get_draft(loom: Loom, at: At, *, strict: bool = True) -> str:
    """The draft of a session or view ("" when empty). Any other point has no draft:
    an error, or "" with `strict=False`."""
    pos = position(loom, at)
    ref = require_ref(loom, at, pos) if strict else draft_ref(loom, pos)
    return read_draft(loom, ref.name) if ref else ""


def set_draft(loom: Loom, at: At, value: str) -> str:
    """Replace the draft of a session or view; returns it."""
    pos = position(loom, at)
    ref = require_ref(loom, at, pos)
    require_buffer(loom, pos.tree)
    check_text(loom, value, "draft")
    value, found = storage(loom).screen(value, "draft")
    with storage(loom).transaction():
        still_there(loom, ref)
        write_draft(loom, ref.name, value)
        storage(loom).note_findings(found, pos.tree, f"draft:{ref.name}")
    return value


def append_draft(loom: Loom, at: At, value: str) -> str:
    """Add text at the end of the draft (atomically); returns the whole draft."""
    pos = position(loom, at)
    ref = require_ref(loom, at, pos)
    require_buffer(loom, pos.tree)
    check_text(loom, value, "draft")
    with storage(loom).transaction():
        still_there(loom, ref)
        before = read_draft(loom, ref.name)
        # a secret may arrive in pieces (a model's tokens): the new text is looked at
        # with the draft's last characters before it, never the whole draft again
        keep = max(0, len(before) - DRAFT_SCAN_TAIL)
        tail, found = storage(loom).screen(before[keep:] + value, "draft")
        draft = before[:keep] + str(tail)
        check_text(loom, draft, "draft")
        write_draft(loom, ref.name, draft)
        storage(loom).note_findings(found, pos.tree, f"draft:{ref.name}")
    return draft


def commit_draft(loom: Loom, at: At, *, author: str | None = None) -> Node | None:
    """Write the draft as a human node after the ref's head and move the ref to it (a
    view too: in buffer mode a view is a document); None when the draft is empty."""
    pos = position(loom, at)
    ref = require_ref(loom, at, pos)
    require_buffer(loom, pos.tree)
    with storage(loom).transaction():
        return commit_inside(loom, ref.name, author)


def commit_inside(loom: Loom, name: str, author: str | None) -> Node | None:
    """Inside a transaction: the draft of `name` as a node, the ref moved, the draft emptied."""
    draft = read_draft(loom, name)
    if not draft:
        return None
    ref = loom.ref(name)
    head = Position(head_of(loom, ref), ref.tree, ref,
                    ref.name if ref.kind == "session" else None, dict(ref.selections))
    node = loom.append(head, draft, role="user", source="human", author=author)
    if ref.kind == "view":
        storage(loom).move_ref(ref, node.id, "commit draft")
    write_draft(loom, name, "")
    return node
