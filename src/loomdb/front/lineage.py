"""Where each of a caller's trees came from, as the web page's Trees view draws it
(`Door.trees.lineage`): a tree spawned by a subagent names its parent tree and the
message it was spawned at (a tail-fork, `fork --fresh`, the message it continues
from: kind `continued`), an imported tree the tool it came from, and each session
or view the ref and message it was forked from ("forked from main at message 3").

Only what the caller sees is named: a parent tree that is not theirs is left out (the
child then stands alone), as is any ref on another's tree. A lineage and a fork's
origin are data (an import may have written them): the node each names is looked up by
that exact id and counts only when it is in the tree it should be in (the parent tree,
the ref's own), a tree the caller sees; otherwise it is not named. Message numbers
count from 1 at the root (a node's depth + 1), read for every such node at once."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..storage_ops import storage

if TYPE_CHECKING:
    from .sight import Sight


def lineage(sight: Sight, *, archived: bool = False) -> list[dict[str, Any]]:
    """The caller's trees (newest first), each with `parent` (how it was spawned, or
    None), `imported` (the import's record, or None), its `refs` (sessions and views,
    oldest first, each with `forked_from`) and `head` (the newest session's name, or
    the tree's newest leaf: where its thread opens)."""
    lm = sight.loom
    st = storage(lm)
    trees = sight.trees(archived=archived)
    seen = {t.id: t for t in trees}
    refs: dict[str, list[Any]] = {}
    for ref in sight.who.refs(None, None):
        if ref.kind != "bookmark" and ref.tree in seen:
            refs.setdefault(ref.tree, []).append(ref)

    # the tree and depth of every node a fork or a spawn starts from, in one read
    starts = [r.forked_from.get("node") for rs in refs.values() for r in rs if r.forked_from]
    for tree in trees:
        raw = tree.lineage or {}
        for kind in ("spawned", "continued"):
            if isinstance(raw.get(kind), dict):
                starts.append(raw[kind].get("node"))
    found = st.nodes_by_id([n for n in dict.fromkeys(starts) if isinstance(n, str)])

    def message(node: Any, tree: str) -> int | None:
        """The message number of `node` when it is a node of `tree` (a seen tree)."""
        n = found.get(node) if isinstance(node, str) else None
        return None if n is None or n.tree != tree or tree not in seen else n.depth + 1

    out = []
    for tree in trees:
        raw = tree.lineage or {}
        kind = "spawned" if isinstance(raw.get("spawned"), dict) else "continued"
        spawned = raw.get(kind) if isinstance(raw.get(kind), dict) else None
        parent = None
        if spawned and spawned.get("tree") in seen and spawned["tree"] != tree.id:
            at = message(spawned.get("node"), spawned["tree"])
            parent = {"kind": kind, "tree": spawned["tree"],
                      "title": seen[spawned["tree"]].title,
                      "node": spawned["node"] if at is not None else None,
                      "session": spawned.get("session", spawned.get("ref")), "message": at}
        imported = raw.get("imported") if isinstance(raw.get("imported"), dict) else None
        mine = sorted(refs.get(tree.id, []), key=lambda r: (r.created_at, r.name))
        shown = []
        for ref in mine:
            fork = ref.forked_from
            at = message(fork.get("node"), ref.tree) if fork is not None else None
            shown.append({"name": ref.name, "kind": ref.kind, "node": ref.node,
                          "forked_from": None if fork is None else {
                              "ref": fork.get("ref"),
                              "node": fork.get("node") if at is not None else None,
                              "message": at}})
        sessions = [r for r in mine if r.kind == "session"]
        if sessions:
            head = max(sessions, key=lambda r: (r.updated_at, r.name)).name
        else:
            leaves = lm.leaves(tree.id)
            head = leaves[-1] if leaves else tree.root
        out.append({**tree.to_json(), "parent": parent,
                    "imported": None if imported is None else {
                        "format": imported.get("format"),
                        "conversation": imported.get("conversation")},
                    "refs": shown, "head": head})
    return out
