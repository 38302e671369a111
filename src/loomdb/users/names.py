"""Names resolved once, against what one user may see.

A headish is read in the library as: a ref name, else a unique id prefix. Checking
that a user may use a name and then handing the name on to be resolved again is a
race: between the two, a ref can be deleted (or made), and the same text then names
something else (a ref name wins over an id prefix, and ULID prefixes are creation
times, so another user's node is easy to aim at). So a user's names are resolved
here, once, with what is not theirs left out of the lookup itself: another user's ref
is no ref, and an id prefix matches only nodes of the user's own trees (filtered in
the query). Whatever the name resolved to, the operation then uses the resolved ids.
"""

from __future__ import annotations

from ..errors import AmbiguousName, NotFound
from ..headish import looks_like_prefix
from ..loom import Loom
from ..model import Ref
from ..storage_ops import storage
from .accounts import USERS


class UserNames:
    """The base-name resolver (`loomdb.headish.BaseResolver`) of one user."""

    def __init__(self, loom: Loom, user_id: str) -> None:
        self.loom = loom
        self.user_id = user_id

    def owns(self, tree_id: str) -> bool:
        with self.loom.unit(USERS) as db:
            row = db.one("SELECT 1 FROM user_trees WHERE tree_id = ? AND user_id = ?",
                         (tree_id, self.user_id))
        return row is not None

    def __call__(self, base: str) -> tuple[str, Ref | None]:
        ref = storage(self.loom).find_ref(base)
        if ref is not None and self.owns(ref.tree):
            return ref.node, ref
        if looks_like_prefix(base):
            found = self.node_ids(base.upper(), AmbiguousName.LOOKUP)
            if len(found) == 1:
                return found[0], None
            if found:
                raise AmbiguousName("headish", base, found)
        raise NotFound("headish", base)

    def node_ids(self, prefix: str, limit: int) -> list[str]:
        """Ids of the user's own nodes that start with `prefix`, in order."""
        with self.loom.unit(USERS) as db:
            trees = [r[0] for r in db.execute(
                "SELECT tree_id FROM user_trees WHERE user_id = ?", (self.user_id,))]
            return storage(self.loom).node_ids_in_trees(prefix, trees, limit)

    def tree_ids(self, prefix: str, limit: int) -> list[str]:
        """Ids of the user's own trees that start with `prefix`, in order."""
        with self.loom.unit(USERS) as db:
            rows = db.execute(  # a range, never a LIKE pattern (`%`, `_`, any length)
                "SELECT tree_id FROM user_trees WHERE user_id = ? AND tree_id >= ?"
                " AND tree_id < ? ORDER BY tree_id LIMIT ?",
                (self.user_id, prefix, prefix + "\uffff", limit))
        return sorted(r[0] for r in rows)
