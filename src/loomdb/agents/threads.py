"""The context an agent sees at a position: a spawned child's thread starts with its
parent's path up to the spawn node, read through from the parent tree (never copied),
then the child's own messages; a persona adds its identity and parameters.

A lineage is data (an import may carry any), so the parent is followed as a stored
reference (docs/security.md, "Stored references"): the node it names by that exact id
(never a ref name, a prefix or `~N`), only in the tree it names, and only where that
tree is readable by whoever reads the child: a user's tree leads only to that user's
trees (the operator's trees to any). Anything else is where the thread starts; nothing
is listed or said about what it named.

A tree a reader forked from a share link that allows "continue" starts the same way
with the shared path up to the node it continues from, read through the fork's grant
(`shares.service.fork_grant`, written with the fork, not data an import could carry):
the node by its exact id, only in the tree the grant names. Only its messages come
through; the maker's options (tools, model settings) stay the maker's.

A child inherits its parent's options (tools, model settings) except `tool_choice`:
a call the parent forced is the parent's, and a child forced to spawn would spawn
without end."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..context import deep_merge
from ..errors import InvalidInput
from ..headish import Position
from ..storage_ops import storage
from ..users import same_owner
from . import AGENTS
from .identities import binding, get_persona

if TYPE_CHECKING:
    from ..loom import Loom
    from .identities import Persona


def spawned_from(loom: Loom, tree: str) -> dict[str, Any] | None:
    """`{"tree", "node", "session"}` of the thread a child tree was spawned from, as
    stored (data: `spawn_point` is what may be followed)."""
    found = storage(loom).tree_by_id(tree)
    lineage = (found.lineage if found is not None else None) or {}
    spawned = lineage.get("spawned")
    return spawned if isinstance(spawned, dict) else None


def spawn_point(loom: Loom, tree: str) -> Position | None:
    """The node `tree` was spawned from, when its lineage names one that may be
    followed: a node stored under that exact id, in the tree the lineage names, which
    whoever reads `tree` may read too (`users.same_owner`); None otherwise."""
    spawned = spawned_from(loom, tree) or {}
    node = spawned.get("node")
    if not isinstance(node, str):
        return None
    found = storage(loom).anchor(node)
    if found is None or spawned.get("tree", found.tree) != found.tree:
        return None
    if found.tree != tree and not same_owner(loom, tree, found.tree):
        return None
    return Position(node, found.tree)


#: the most spawn links a lineage is followed through (spawning stops far earlier)
MAX_LINEAGE = 64


def ancestry(loom: Loom, pos: Position) -> list[Position]:
    """The spawn points above `pos`, nearest first: the node each tree was spawned from
    (`spawn_point`, so a lineage stops where it may not be followed).

    A lineage is data, so it is followed without recursion, and one that comes back to
    a tree it passed (a cycle), or runs longer than MAX_LINEAGE, is refused with one
    line instead of recursing or looping forever."""
    return _chain(loom, pos.tree)


def _chain(loom: Loom, tree: str) -> list[Position]:
    seen = {tree}
    chain: list[Position] = []
    while (pos := spawn_point(loom, tree)) is not None:
        tree = pos.tree
        if pos.tree in seen or len(chain) >= MAX_LINEAGE:
            raise InvalidInput(
                "lineage", f"tree {pos.tree}'s spawn lineage "
                + ("loops back on itself" if pos.tree in seen else
                   f"is over {MAX_LINEAGE} spawns long") + "; it cannot be followed")
        seen.add(pos.tree)
        chain.append(pos)
    return chain


def thread_context(
    loom: Loom, at: str | Position, options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """`loom.context` with the parent prefix of spawned trees (nested spawns too)."""
    pos = at if isinstance(at, Position) else loom.resolve(at)
    chain = ancestry(loom, pos)
    shared = shared_prefix(loom, chain[-1].tree if chain else pos.tree)
    if not chain:
        own = loom.context(pos, options)
        return {**own, "messages": shared + own["messages"]} if shared else own
    ctx = loom.context(chain[-1])
    ctx = {**ctx, "messages": shared + ctx["messages"]}
    for below in [*chain[-2::-1], pos]:  # from the first spawn point down to `pos`
        own = loom.context(below, options) if below is pos else loom.context(below)
        inherited = {k: v for k, v in ctx["options"].items() if k != "tool_choice"}
        ctx = {"messages": ctx["messages"] + own["messages"],
               "options": deep_merge(inherited, own["options"])}
    return ctx


def shared_path(loom: Loom, tree: str) -> Position | None:
    """The node a fork made through a share link continues from: its grant's exact
    node, in the tree the grant names; None for any other tree, or once that node is
    gone (the shared tree forgotten)."""
    from ..shares.service import fork_grant

    grant = fork_grant(loom, tree)
    if grant is None:
        return None
    source_tree, node = grant
    found = storage(loom).anchor(node)
    if found is None or found.tree != source_tree or source_tree == tree:
        return None
    return Position(node, source_tree)


def shared_prefix(loom: Loom, tree: str) -> list[dict[str, Any]]:
    """The messages of the shared path `tree` continues from (`shared_path`), or []."""
    at = shared_path(loom, tree)
    messages: list[dict[str, Any]] = [] if at is None else loom.context(at)["messages"]
    return messages


def turn_context(
    loom: Loom, at: str | Position, persona: Persona | None,
    options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """The context an agent's turn sends at `at` (before its toolbox is resolved): the
    thread with a spawned tree's parent prefix, the persona's identity leading."""
    return with_persona(thread_context(loom, at, options), persona, options)


def context_at(
    loom: Loom, at: str | Position, options: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """What a model is sent at `at`: `turn_context` with the persona bound to the
    position's session, if any. `context` on every edge (CLI, HTTP, MCP) answers this,
    so it never differs from what a turn there sends."""
    pos = at if isinstance(at, Position) else loom.resolve(at)
    # a store that never used agents has no personas: reading it creates no tables
    name = binding(loom, pos.session).persona if loom.has_area(AGENTS) else None
    return turn_context(loom, pos, get_persona(loom, name) if name else None, options)


def spawn_depth(loom: Loom, tree: str) -> int:
    """How many spawns deep a tree (by id) is (0 for a tree nobody spawned)."""
    return len(_chain(loom, tree))


def with_persona(ctx: dict[str, Any], persona: Persona | None,
                 explicit: dict[str, Any] | None) -> dict[str, Any]:
    """The persona's identity leads as a system message; its params sit under the
    thread's options and the call's own (explicit options still win)."""
    if persona is None:
        return ctx
    options = deep_merge(deep_merge(dict(persona.params), ctx["options"]), explicit)
    messages = list(ctx["messages"])
    if persona.system:
        messages.insert(0, {"role": "system", "content": [{"type": "text", "text": persona.system}]})
    return {"messages": messages, "options": options}
