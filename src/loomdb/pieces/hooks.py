"""What the pieces area offers the core and the other areas: the piece blocks of
content resolved at write time (the operator's writes: the front door resolves a
user's first, against what they see), expanded at read time, the nodes naming a piece
noted as they are written (`used-by`), and its part of a forget."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..hooks import AreaHooks
from ..store.areas import Unit
from ..store.forget import TOMBSTONE
from ..users import owners
from . import PIECES
from . import service as P
from . import storage as S

if TYPE_CHECKING:
    from ..loom import Loom
    from ..model import Node


class PieceHooks(AreaHooks):
    forget_tables = ("piece_uses", "piece_contents")

    # -- the core's calls (`loomdb.store.areas.block_hooks`) --------------------------
    def written(self, loom: Loom, blocks: list[dict[str, Any]], where: str) -> list[dict[str, Any]]:
        """Content about to be written, its piece blocks resolved (the writer: the
        operator, or a user whose blocks the front door resolved already)."""
        return P.resolve_blocks(loom, P.OPERATOR, blocks, where)

    def written_options(self, loom: Loom, options: dict[str, Any] | None,
                        where: str) -> dict[str, Any] | None:
        return P.piece_options(loom, P.OPERATOR, options, where)

    def expand_context(self, loom: Loom, tree_id: str, ctx: dict[str, Any]) -> dict[str, Any]:
        """The context of a path of `tree_id`, its pieces expanded as its owner sees them."""
        return P.expand(loom, owners(loom, [tree_id]).get(tree_id), ctx)

    def nodes_written(self, db: Unit, nodes: Sequence[Node]) -> None:
        found = P.uses_of(nodes)
        if found:
            S.add_uses(db, found)

    # -- the other areas (`loomdb.hooks`) ------------------------------------------
    def holds_content(self, loom: Loom, content_id: str) -> bool:
        with loom.unit(PIECES) as db:
            return bool(S.bodies(db, [content_id]))

    def forget_nodes(self, loom: Loom, ids: Sequence[str], memo_trees: Sequence[str],
                     redacted: bool) -> None:
        with loom.unit(PIECES) as db:
            S.forget_nodes(db, ids)

    def redact_content(self, loom: Loom, content_id: str) -> None:
        """A redacted content reads as the tombstone in every piece version naming it
        (its id stays: a pinned reference still names the same version)."""
        with loom.unit(PIECES) as db:
            S.set_body(db, content_id, TOMBSTONE)

    def forget_tree(self, loom: Loom, tree: str) -> None:
        with loom.unit(PIECES) as db:
            S.forget_tree(db, tree)


HOOKS = PieceHooks()
