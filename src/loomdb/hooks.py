"""What the areas beside the core offer each other, without importing each other.

The areas (documents, collections, references, search, users, agents, the gateway's
memo) are siblings: none imports another, and each keeps its SQL to its own tables.
Where one needs another (a document's text goes to the search index, a collection
item names a document, a forget reaches every copy of a text, a rebuild asks the
areas that hold text to publish it again), it calls a function here, and each area
answers through its hooks object: a subclass of `AreaHooks` overriding what it
offers, named on its Area (`Area("search", ..., hooks="loomdb.search.hooks:HOOKS")`)
and imported on first use. The core's own write hook (`nodes_written`, which the
search index registers in place of a trigger on `nodes`) is called by the core
through `loomdb.store.areas.nodes_written`.

Only the areas a store records are asked (an area the store never used has no
tables, and nothing here creates them), with two exceptions, as it always was: an
address's scheme is answered by the area that owns it (`loomdb.addresses`), and an
entity's text goes to every index (a derived area: search), made on its first entry.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import NotFound
from .store import areas

if TYPE_CHECKING:
    from .loom import Loom


#: a span redaction's replacement: text -> (new text, spans replaced)
Scrub = Callable[[str], tuple[str, int]]


@dataclass(frozen=True)
class Target:
    """What an address names now (see `loomdb.addresses`): `key` is the identity
    behind it (a document id, an item id...), which references store."""

    address: str
    key: str
    kind: str  # node, tree, document, revision, collection, item, content
    tree: str | None = None


class AreaHooks:
    """An area's hooks: a subclass overrides what its area offers (every method here
    is a no-op, or answers "nothing")."""

    #: the address schemes the area resolves (`doc` for `doc:NAME`...) and the key
    #: schemes it shows (`item` for an item's key)
    schemes: tuple[str, ...] = ()
    #: tables of the area a forget may write, vacuumed after it (PostgreSQL)
    forget_tables: tuple[str, ...] = ()

    # core writes: `nodes_written(db: Unit, nodes)` is defined only by an area that
    # hears of them (see `loomdb.store.areas.WriteHook`), so the others cost nothing

    # -- the search index, fed by the areas that hold text ---------------------------
    def entity_written(self, loom: Loom, entity: str, kind: str, text: str) -> None:
        """An entity's text (a revision, an item) to index, in the writer's transaction."""

    def entities_removed(self, loom: Loom, prefix: str) -> None:
        """Entities whose address starts with `prefix` are gone."""

    def republish(self, loom: Loom) -> int:
        """Announce every entity of this area again (`entity_written`); how many."""
        return 0

    # -- addresses (for `schemes`) ---------------------------------------------------
    def resolve(self, loom: Loom, scheme: str, spec: str) -> Target:
        """The target `scheme:spec` names now; NotFound when it names nothing."""
        raise NotFound(f"{scheme}: address", spec)

    def show(self, loom: Loom, scheme: str, rest: str) -> str:
        """The address a key `scheme:rest` reads as now; NotFound when it is gone."""
        raise NotFound("address", f"{scheme}:{rest}")

    def tags(self, loom: Loom, entity: str) -> list[str]:
        """The tags of an entity of this area (a search hit's `--tag` filter)."""
        return []

    def holds_content(self, loom: Loom, content_id: str) -> bool:
        """Whether the area keeps a body under this content id."""
        return False

    def backlinks(self, loom: Loom, target: Target) -> list[dict[str, Any]]:
        """What this area holds that points at `target` (`{"from", "to", "type"}`)."""
        return []

    def held_keys(self, loom: Loom) -> set[str]:
        """Every key this area points at (garbage collection keeps what they name)."""
        return set()

    # -- forgetting, inside the forget's transaction ----------------------------------
    def forget_nodes(self, loom: Loom, ids: Sequence[str], memo_trees: Sequence[str],
                     redacted: bool) -> dict[str, str] | None:
        """Erase this area's copies of these nodes' text (deleted, or `redacted`); all
        of what it derived from `memo_trees`. None when all is gone; else what it could
        not erase now, and why (the forget's result says so)."""
        return None

    def forget_tree(self, loom: Loom, tree: str) -> None:
        """A tree deleted whole: this area's rows about it go with it."""

    def keep_bodies(self, loom: Loom, content_ids: Sequence[str]) -> None:
        """The nodes holding these contents are about to be deleted: keep a copy of
        any this area still uses."""

    def redact_content(self, loom: Loom, content_id: str) -> None:
        """A content is redacted: so is this area's copy of it."""

    def holds_blob(self, loom: Loom, blob: str) -> bool:
        """Whether the area still names the blob."""
        return False

    # -- span redaction (loomdb.forget.spans), inside its transaction -----------------
    def scrub_content(self, loom: Loom, content_id: str, body: str) -> None:
        """A content's body had spans replaced: so has this area's copy of it."""

    def scrub_texts(self, loom: Loom, sub: Scrub) -> list[str]:
        """Replace the spans in every text this area keeps of its own (`sub(text)`: the
        new text and how many spans, 0 when none); the addresses changed."""
        return []

    def nodes_changed(self, loom: Loom, ids: Sequence[str]) -> None:
        """These nodes' stored text changed in place (their ids stay): derive again."""


def offered(loom: Loom) -> list[AreaHooks]:
    """The hooks of every area this store records, by area name."""
    found = []
    for area in loom.recorded_areas():
        hooks = area.hooks_object()
        if isinstance(hooks, AreaHooks):
            found.append(hooks)
    return found


def of(name: str) -> AreaHooks:
    """The hooks of the area called `name` (its package imported if need be)."""
    hooks = areas.find(name).hooks_object()
    if not isinstance(hooks, AreaHooks):
        raise NotFound("hooks of area", name)
    return hooks


# -- the search index -------------------------------------------------------------------
_indexes: tuple[int, list[AreaHooks]] | None = None


def indexes() -> list[AreaHooks]:
    """The hooks of every known index (a derived area that takes entities), whether
    or not a store has it yet (worked out again when more areas are declared)."""
    global _indexes
    found = areas.known()
    if _indexes is None or _indexes[0] != len(found):
        takes = [h for a in found if a.derived and isinstance(h := a.hooks_object(), AreaHooks)
                 and type(h).entity_written is not AreaHooks.entity_written]
        _indexes = (len(found), takes)
    return _indexes[1]


def entity_written(loom: Loom, entity: str, kind: str, text: str) -> None:
    """Give an entity's text to the indexes (search), in the caller's transaction."""
    for hooks in indexes():
        hooks.entity_written(loom, entity, kind, text)


def entities_removed(loom: Loom, prefix: str) -> None:
    for hooks in indexes():
        hooks.entities_removed(loom, prefix)


def republish(loom: Loom) -> dict[str, int]:
    """Every area's entities announced again, by area name (a rebuild of an index)."""
    out: dict[str, int] = {}
    for area in loom.recorded_areas():
        hooks = area.hooks_object()
        if isinstance(hooks, AreaHooks) and type(hooks).republish is not AreaHooks.republish:
            out[area.name] = hooks.republish(loom)
    return out


# -- what the areas hold ----------------------------------------------------------------
def holds_content(loom: Loom, content_id: str) -> bool:
    return any(h.holds_content(loom, content_id) for h in offered(loom))


def backlinks(loom: Loom, target: Target) -> list[dict[str, Any]]:
    return [row for h in offered(loom) for row in h.backlinks(loom, target)]


def held_keys(loom: Loom) -> set[str]:
    return {key for h in offered(loom) for key in h.held_keys(loom)}


# -- forgetting -------------------------------------------------------------------------
def forget_tables(loom: Loom) -> list[str]:
    return sorted(t for h in offered(loom) for t in h.forget_tables)


def forget_nodes(loom: Loom, ids: Sequence[str], memo_trees: Sequence[str] = (), *,
                 redacted: bool = False) -> dict[str, str]:
    """Every area erases its copies; what some could not erase now, and why."""
    left: dict[str, str] = {}
    for hooks in offered(loom):
        left |= hooks.forget_nodes(loom, ids, memo_trees, redacted) or {}
    return left


def forget_tree(loom: Loom, tree: str) -> None:
    for hooks in offered(loom):
        hooks.forget_tree(loom, tree)


def keep_bodies(loom: Loom, content_ids: Sequence[str]) -> None:
    for hooks in offered(loom):
        hooks.keep_bodies(loom, content_ids)


def redact_content(loom: Loom, content_id: str) -> None:
    for hooks in offered(loom):
        hooks.redact_content(loom, content_id)


def holds_blob(loom: Loom, blob: str) -> bool:
    return any(h.holds_blob(loom, blob) for h in offered(loom))



def scrub_content(loom: Loom, content_id: str, body: str) -> None:
    for hooks in offered(loom):
        hooks.scrub_content(loom, content_id, body)


def scrub_texts(loom: Loom, sub: Scrub) -> list[str]:
    return [a for hooks in offered(loom) for a in hooks.scrub_texts(loom, sub)]


def nodes_changed(loom: Loom, ids: Sequence[str]) -> None:
    for hooks in offered(loom):
        hooks.nodes_changed(loom, ids)
