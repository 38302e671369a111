"""The trash and the holds: retention that never loses silently (docs/forget.md).

A tree retention takes, or a user deletes whole, is first set aside in the trash (a
row of this area's `trash` table: when, until when, by which rule, by whom). The tree
itself is untouched: its nodes, sessions and views stay as they were, and restoring it
is deleting that row. What the trash holds is hidden from listings and search
(`loomdb.front.sight`), and purged for good once its grace period has passed (on the
next `gc`), through `service.delete`, which writes the record of forgetting and whose
transaction also deletes the trash row (`hooks.RetentionHooks.forget_tree`): a purge
cut short at any point leaves the tree whole in the trash.

A hold names a tree (its id) or a session (its ref name, whose tree it holds wherever
the session is then). Retention never sets a held tree aside, and no purge takes one:
a held tree in the trash stays there until the hold is removed, or it is restored.
Holds belong to the operator, or to the user whose tree it is (`within`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput, NotFound
from ..model import iso, now
from ..storage_ops import storage
from . import RETENTION
from . import service as F
from .durations import parse

if TYPE_CHECKING:
    from ..loom import Loom

#: how long the trash keeps a tree by default
DEFAULT_KEEP = "30d"


def keep_for(loom: Loom) -> str:
    """How long the trash keeps a tree (a duration; the store's setting or 30d)."""
    return storage(loom).forgetting().setting("trash") or DEFAULT_KEEP


def set_keep_for(loom: Loom, value: str) -> str:
    """Keep `value` (a duration such as 30d; 0s purges on the next gc) as the store's
    grace; the trees in the trash have it too, counted from when each went there."""
    span = _span(value)
    with storage(loom).transaction():
        storage(loom).forgetting().set_setting("trash", value)
        if loom.has_area(RETENTION):  # what the trash holds keeps the new grace too
            with loom.unit(RETENTION) as db:
                for tid, at in db.execute("SELECT tree_id, trashed_at FROM trash"):
                    db.execute("UPDATE trash SET purge_after = ? WHERE tree_id = ?",
                               (_after(at, span), tid))
    return value


def _after(at: str, span: float) -> str:
    """The time `span` seconds after the ISO time `at`."""
    start = datetime.fromisoformat(at.replace("Z", "+00:00"))
    return iso(datetime.fromtimestamp(start.timestamp() + span, UTC))


def _span(value: str) -> float:
    return 0.0 if value == "0s" else parse(value, "--trash-for").total_seconds()


# == the trash ========================================================================
def trashed(loom: Loom) -> set[str]:
    """Ids of the trees in the trash (none where the area was never used)."""
    if not loom.has_area(RETENTION):
        return set()
    with loom.unit(RETENTION) as db:
        return {r[0] for r in db.execute("SELECT tree_id FROM trash")}


def put(loom: Loom, tree_id: str, *, rule: str, actor: str | None = None,
        reason: str | None = None) -> dict[str, Any]:
    """Set a tree aside (its row in the trash; nothing of the tree changes). A tree
    already there keeps its first row."""
    F.check_reason(reason)
    tree = storage(loom).tree_by_id(tree_id)
    if tree is None:
        raise NotFound("tree", tree_id)
    at = iso(datetime.now(UTC))
    until = _after(at, _span(keep_for(loom)))
    with loom.unit(RETENTION) as db:
        db.execute("INSERT INTO trash (tree_id, trashed_at, purge_after, rule, actor, reason)"
                   " VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (tree_id) DO NOTHING",
                   (tree_id, at, until, rule, actor or loom.actor, reason))
    return entry(loom, tree_id)


def entry(loom: Loom, tree_id: str) -> dict[str, Any]:
    """One tree's line of the trash (NotFound when it is not there)."""
    found = [e for e in listing(loom) if e["id"] == tree_id]
    if not found:
        raise NotFound("tree in the trash", tree_id)
    return found[0]


def listing(loom: Loom, within: F.Within | None = None) -> list[dict[str, Any]]:
    """What the trash holds, first purged first: id, title, nodes, updated_at,
    trashed_at, purge_after, rule, actor, reason, held (`within`: the caller's only)."""
    if not loom.has_area(RETENTION):
        return []
    with loom.unit(RETENTION) as db:
        rows = db.execute("SELECT tree_id, trashed_at, purge_after, rule, actor, reason"
                          " FROM trash ORDER BY purge_after, tree_id")
    mine = within({r[0] for r in rows}) if within is not None else {r[0] for r in rows}
    held = held_trees(loom)
    out = []
    for tid, at, until, rule, actor, reason in rows:
        tree = storage(loom).tree_by_id(tid, stats=True) if tid in mine else None
        if tree is None:
            continue
        out.append({"id": tid, "title": tree.title, "nodes": tree.nodes,
                    "updated_at": tree.updated_at, "trashed_at": at, "purge_after": until,
                    "rule": rule, "actor": actor, "reason": reason, "held": tid in held})
    return out


def restore(loom: Loom, tree_id: str, within: F.Within | None = None) -> dict[str, Any]:
    """Take a tree out of the trash: it lists and searches again, as it was."""
    found = entry(loom, tree_id)
    if within is not None and not within([tree_id]):
        raise NotFound("tree in the trash", tree_id)
    with loom.unit(RETENTION) as db:
        db.execute("DELETE FROM trash WHERE tree_id = ?", (tree_id,))
    return found


def purge(loom: Loom, tree_id: str, *, actor: str | None = None, rule: str = "delete",
          reason: str | None = None, export_to: str | None = None,
          within: F.Within | None = None, force: bool = True) -> F.Forgotten:
    """Delete a tree for good, with its sessions and views, through `service.delete`
    (its record says `rule` and `reason`); `export_to`: first write it there (native
    export, `<DIR>/<tree>.json`). A held tree is refused, nothing written. `force`:
    also the refs of other trees it takes (nodes made from its nodes there)."""
    if tree_id in held_trees(loom):
        raise InvalidInput(f"tree {tree_id}", "is held (`loomdb hold --remove` first)")
    if export_to is not None:
        export(loom, tree_id, export_to)
    return F.delete(loom, f"tree:{tree_id}", force=force, actor=actor, action=rule,
                    reason=reason, within=within)


def export(loom: Loom, tree_id: str, folder: str) -> str:
    """Write one tree as a native export into `folder` (made if need be); its path."""
    from ..interop.export import export_file

    where = Path(folder)
    try:
        where.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise InvalidInput("--export-to", f"cannot make {folder}: {e.strerror}") from None
    if not where.is_dir():
        raise InvalidInput("--export-to", f"{folder} is not a folder")
    path = where / f"{tree_id}.json"
    export_file(loom, path, target=tree_id, format="json")
    return str(path)


def purge_due(loom: Loom, *, actor: str | None = None, export_to: str | None = None,
              dry_run: bool = False) -> list[dict[str, Any]]:
    """Purge every tree whose grace period has passed and that no hold keeps (with
    `dry_run`, list them); each in its own transaction, its record naming its rule. A
    tree written to since it went to the trash is taken out of it instead."""
    at = now()
    held = held_trees(loom)
    due = [e for e in listing(loom) if e["purge_after"] <= at and e["id"] not in held]
    written = [e for e in due if e["updated_at"] > e["trashed_at"]]
    due = [e for e in due if e not in written]
    if dry_run:
        return due
    for e in written:  # written to while in the trash: someone still uses it
        restore(loom, e["id"])
    for e in due:
        by = e["actor"] or "the operator"
        why = (f"{e['rule']}: in the trash since {e['trashed_at']} (by {by}), grace ended "
               f"{e['purge_after']}")
        if e["reason"]:
            why += f"; {e['reason']}"
        done = purge(loom, e["id"], actor=actor, rule=_action(e["rule"]), reason=why[:1000],
                     export_to=export_to)
        e["log"] = done.seq
    return due


def _action(rule: str) -> str:
    """The record's action for a purge: `retention` for what retention set aside."""
    return "retention" if rule.startswith("retention") else "purge"


# == holds ============================================================================
def _target(loom: Loom, target: str) -> tuple[str, str, str]:
    """(kind, name, tree id) of what a hold names: `tree:ID`, a tree id, or a session."""
    name = target[len("tree:"):] if target.startswith("tree:") else target
    tree = storage(loom).tree_by_id(name)
    if tree is not None:
        return "tree", tree.id, tree.id
    if target.startswith("tree:"):
        raise NotFound("tree", name)
    try:
        ref = loom.ref(target)
    except NotFound:
        raise NotFound("tree or session", target) from None
    return "session", ref.name, ref.tree


def hold(loom: Loom, target: str, *, actor: str | None = None, reason: str | None = None,
         within: F.Within | None = None) -> dict[str, Any]:
    """Hold a tree or a session: retention never takes it (holding again keeps the first)."""
    kind, name, tree = _target(loom, target)
    if within is not None and not within([tree]):
        raise NotFound("tree or session", target)
    F.check_reason(reason)
    with loom.unit(RETENTION) as db:
        db.execute("INSERT INTO retention_holds (kind, name, at, actor, reason) VALUES"
                   " (?, ?, ?, ?, ?) ON CONFLICT (kind, name) DO NOTHING",
                   (kind, name, now(), actor or loom.actor, reason))
    return next(h for h in holds(loom) if (h["kind"], h["name"]) == (kind, name))


def unhold(loom: Loom, target: str, *, within: F.Within | None = None) -> dict[str, Any]:
    """Remove the hold on a tree or session (NotFound when there is none)."""
    name = target[len("tree:"):] if target.startswith("tree:") else target
    found = [h for h in holds(loom, within) if h["name"] == name
             and (h["kind"] == "tree" or not target.startswith("tree:"))]
    if not found:
        raise NotFound("hold", target)
    with loom.unit(RETENTION) as db:
        db.execute("DELETE FROM retention_holds WHERE kind = ? AND name = ?",
                   (found[0]["kind"], found[0]["name"]))
    return found[0]


def holds(loom: Loom, within: F.Within | None = None) -> list[dict[str, Any]]:
    """Every hold: kind, name, tree (None for a session gone since), at, actor, reason."""
    if not loom.has_area(RETENTION):
        return []
    with loom.unit(RETENTION) as db:
        rows = db.execute("SELECT kind, name, at, actor, reason FROM retention_holds"
                          " ORDER BY at, kind, name")
    sessions = {r.name: r.tree for r in loom.refs()}
    out = [{"kind": k, "name": n, "tree": n if k == "tree" else sessions.get(n), "at": at,
            "actor": actor, "reason": reason} for k, n, at, actor, reason in rows]
    if within is not None:
        mine = within({h["tree"] for h in out if h["tree"]})
        out = [h for h in out if h["tree"] in mine]
    return out


def held_trees(loom: Loom) -> set[str]:
    """Ids of the trees a hold keeps (held themselves, or holding a held session)."""
    return {h["tree"] for h in holds(loom) if h["tree"]}
