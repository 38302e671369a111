"""The tail-fork: a new tree from one message onwards, nothing before it.

`fork HEADISH NAME --fresh` makes a tree whose root holds that message's content (or,
with a model, a summary of the path up to it, as a user message), with the source
tree's system context and options, and a session NAME at the root. Its lineage says
where it continues from (`{"continued": {"tree", "node", "ref"}}`): the trees view and
`loomdb tree` name it; the old tree is not touched and nothing is copied but the one
message. The context at the new root is that message alone (and the system context).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..storage_ops import storage

if TYPE_CHECKING:
    from ..headish import Position
    from ..loom import Loom
    from ..model import Node, Tree
    from .summary import Summary


def fresh_fork(lm: Loom, pos: Position, name: str, *,
               summarized: Summary | None = None) -> tuple[Tree, Node]:
    """(the new tree, its root), in one transaction (the caller's, when it holds one);
    `summarized` (see `branching.summary`) is put in the root instead of the message."""
    node, old = lm.node(pos), lm.tree(pos.tree)
    continued = {"tree": old.id, "node": node.id,
                 "ref": pos.ref.name if pos.ref is not None else None}
    content: Any = node.content
    role, origin = node.role, {"continued_from": continued}
    with storage(lm).transaction():
        if summarized is not None:
            content, role = summarized.text or "(empty summary)", "user"
            origin["summary"] = summarized.record()
        tree, root = lm.new_tree(
            content, role=role, system=old.system, options=old.options or None,
            mode=old.mode, title=old.title, session=name,
            lineage={"continued": continued}, origin=origin)
    return tree, root
