"""Delete and redact for real (issue 26), with a chain that still verifies.

* `delete(loom, address)`: a node and everything created from it (its continuations,
  and any node that named it as an extra source or a selected version), or a whole
  tree (`tree:ID`). The original version of a slot names the slot: deleting it deletes
  every version. Deleting an edited version deletes it and what was created from it.
  Every remaining node still has every node it was created from, so its chain hash
  still verifies: nothing above or beside a deleted node hashes it.
* `redact(loom, headish)`: the node stays with its ids, fields and chain hash; its
  content's body is replaced by a tombstone wherever it is stored (every node and
  document revision sharing the content id), and so are the generation records that
  carry its text. The chain hashes the content id, not the body, so every chain hash
  still verifies; the verifier reports the redaction apart from tampering.

Both run as one transaction with what they erase from the areas (search index,
gateway memo, document bodies, the agents' copies of a text), each through its hooks
(`loomdb.hooks`: forget writes no table of theirs); blobs only the forgotten content used go after the
commit, and then `scrub` makes the freed bytes leave the files (docs/forget.md).
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import content as C
from .. import hooks
from ..errors import InvalidInput, NotFound, RefsInTheWay
from ..model import now
from ..storage_ops import storage

if TYPE_CHECKING:
    from ..loom import Loom
    from ..model import Ref
    from ..store.forget import ForgetStore, TreeRow

#: which of the given trees a caller may change (`users.Access.visible`)
Within = Callable[[Iterable[str]], set[str]]
#: a delete of at most this many nodes looks for their text in the files afterwards
MAX_CHECKED = 256
#: lines of the record a read returns at most
MAX_LOG = 1000


@dataclass
class Forgotten:
    """What one delete or redaction did (never the content)."""

    action: str
    target: str
    trees: list[str]
    ids: list[str]
    refs: list[str] = field(default_factory=list)
    shared: list[str] = field(default_factory=list)
    generations: list[str] = field(default_factory=list)
    blobs: list[str] = field(default_factory=list)
    trees_deleted: list[str] = field(default_factory=list)
    seq: int = 0
    files: dict[str, Any] = field(default_factory=dict)
    #: bytes of the erased text, looked for in the files afterwards (not reported)
    needles: list[bytes] = field(default_factory=list, repr=False)
    #: what an area could not erase in the forget's transaction, and why (in `files`)
    left: dict[str, str] = field(default_factory=dict, repr=False)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"action": self.action, "target": self.target,
                               "trees": self.trees, "ids": self.ids, "refs": self.refs,
                               "generations": self.generations, "blobs": self.blobs,
                               "log": self.seq, "files": self.files}
        if self.action == "redact":  # (a delete is `delete` or `retention`)
            out["shared"] = self.shared
        else:
            out["trees_deleted"] = self.trees_deleted
        return out


# == delete ==========================================================================
def delete(loom: Loom, address: str, *, force: bool = False, actor: str | None = None,
           reason: str | None = None, node: str | None = None,
           within: Within | None = None, action: str = "delete",
           dry_run: bool = False) -> Forgotten:
    """Delete a node and everything created from it, or `tree:ID` whole; see the module
    docstring. Refs at or below what goes make it refuse (RefConflict, nothing
    written) unless `force`, which deletes them too; a tree deleted whole takes its
    own refs (its sessions and views) without it. `node`: the node id the caller
    already resolved (an edge that resolved `address` against its user); `within`:
    which of some trees the caller may change (a delete reaching others is refused).
    `dry_run`: what would go (its ids, the refs it would take), nothing written, so a
    page can say how many messages before it asks."""
    check_reason(reason)
    fs = storage(loom).forgetting()
    with storage(loom).transaction():
        fs.begin()
        if address.startswith("tree:"):
            tree = storage(loom).tree_by_id(address[5:])
            if tree is None:
                raise NotFound("tree", address[5:])
            rows = fs.tree_rows(tree.id)
            gone = {r.id for r in rows}
            trees = {tree.id: rows}
            target = address
            own = tree.id
        else:
            start = node or loom.resolve(address).node
            found = storage(loom).anchor(start)
            if found is None:
                raise NotFound("node", start)
            rows = fs.tree_rows(found.tree)
            trees = {found.tree: rows}
            gone = _closure(fs, found.tree, rows, {start})
            target = start
            own = None
        _outside(fs, trees, gone)
        _allowed(within, trees)
        if dry_run:
            return Forgotten(action, target, sorted(trees), sorted(gone),
                             refs=sorted(r.name for r in _refs_hit(loom, trees, gone)))
        done = _delete(loom, fs, trees, gone, target=target, force=force, own=own)
        done.action = action
        done.seq = fs.log({"at": now(), "actor": actor or loom.actor, "action": action,
                           "target": target, "trees": done.trees, "ids": done.ids,
                           "refs": done.refs, "reason": reason})
    return _after(loom, fs, done)


def _closure(fs: ForgetStore, tree: str, rows: Sequence[TreeRow], start: set[str]) -> set[str]:
    """`start` and every node of the tree created from them, transitively: children,
    the versions of a deleted original (it names their slot), and nodes naming a
    deleted node as an extra source or a selected version."""
    made_from: dict[str, list[str]] = {}
    for r in rows:
        if r.parent is not None:
            made_from.setdefault(r.parent, []).append(r.id)
        if r.edited_from is not None:
            made_from.setdefault(r.slot, []).append(r.id)
    for node, dep in fs.created_from(tree):
        made_from.setdefault(dep, []).append(node)
    gone = set(start)
    queue = deque(start)
    while queue:
        for child in made_from.get(queue.popleft(), ()):
            if child not in gone:
                gone.add(child)
                queue.append(child)
    return gone


def _outside(fs: ForgetStore, trees: dict[str, list[TreeRow]], gone: set[str]) -> None:
    """Nodes created from a deleted node in another tree (a cross-tree extra source)
    go too, with what was created from them: their chain names a node no longer there."""
    while True:
        for other in sorted(fs.created_from_elsewhere(sorted(gone), "") - set(trees)):
            trees[other] = fs.tree_rows(other)
        grew = False
        for tree, rows in trees.items():
            new = _named(fs, tree, gone) - gone
            if new:
                gone |= _closure(fs, tree, rows, new)
                grew = True
        if not grew:
            return


def _named(fs: ForgetStore, tree: str, gone: set[str]) -> set[str]:
    """Nodes of `tree` naming a node of `gone` as an extra source or selected version."""
    return {node for node, dep in fs.created_from(tree) if dep in gone}


def _delete(loom: Loom, fs: ForgetStore, trees: dict[str, list[TreeRow]], gone: set[str],
            *, target: str, force: bool, own: str | None) -> Forgotten:
    """`own`: the tree deleted whole, whose own sessions and views go with it."""
    refs = _refs_hit(loom, trees, gone)
    if not force and any(r.tree != own for r in refs):
        raise RefsInTheWay(target, [r.name for r in refs if r.tree != own])
    for ref in refs:
        loom.delete_ref(ref.name)
    ids = sorted(gone)
    rows = [r for rs in trees.values() for r in rs]
    kept_gens = {g for r in rows if r.id not in gone and (g := _generation(r))}
    gens = sorted({g for r in rows if r.id in gone and (g := _generation(r))} - kept_gens)
    cids = sorted({r.content_id for r in rows if r.id in gone})
    hooks.keep_bodies(loom, cids)
    with_blobs = fs.bodies_with_blobs(ids)
    small = ([(n.content_id, n.content) for n in storage(loom).nodes_by_id(ids).values()]
             if len(ids) <= MAX_CHECKED else [])
    fs.delete_node_rows(ids)
    fs.delete_nodes(ids)
    fs.delete_generations(gens)
    whole = [t for t, rs in trees.items() if all(r.id in gone for r in rs)]
    for tree in whole:
        fs.delete_tree(tree)
        hooks.forget_tree(loom, tree)
    left = fs.stored_contents(cids)
    blobs = {b for cid, body in with_blobs.items() if cid not in left
             for b in C.blob_refs(json.loads(body))}
    undone = hooks.forget_nodes(loom, ids)
    at = now()
    for tree, rs in trees.items():
        fs.remember([r.id for r in rs if r.id in gone], "node", tree, at)
    for tree in whole:
        fs.remember([tree], "tree", tree, at)
    needles = _needles([blocks for cid, blocks in small if cid not in left])
    return Forgotten("delete", target, sorted(trees), ids, refs=sorted(r.name for r in refs),
                     generations=gens, blobs=sorted(blobs), trees_deleted=sorted(whole),
                     needles=needles, left=undone)


def _refs_hit(loom: Loom, trees: dict[str, list[TreeRow]], gone: set[str]) -> list[Ref]:
    """Refs whose head, or a version they select, is deleted (every ref of a tree that
    goes whole)."""
    hit = []
    for tree in trees:
        for ref in loom.refs(tree=tree):
            if ref.node in gone or any(v in gone for v in ref.selections.values()):
                hit.append(ref)
    return hit


def _generation(row: TreeRow) -> str | None:
    if row.provenance is None or '"generation"' not in row.provenance:
        return None
    gen = json.loads(row.provenance).get("generation")
    return gen if isinstance(gen, str) else None


# == redact ==========================================================================
def redact(loom: Loom, headish: str, *, reason: str | None = None, actor: str | None = None,
           node: str | None = None, within: Within | None = None) -> Forgotten:
    """Erase a node's content wherever it is stored; the node stays as a tombstone (see
    the module docstring). Every node sharing the content id is redacted with it
    (`shared`). Redacting a redacted node again changes nothing but the record.

    With `within` (a user's trees), only the caller's own copies are redacted: the
    nodes of their trees holding the content; anyone else's node, and any document,
    keeps it. What it does and answers is then the same whoever else holds the text,
    so a redaction never tells a user whether another holds the same words."""
    check_reason(reason)
    fs = storage(loom).forgetting()
    start = node or loom.resolve(headish).node
    with storage(loom).transaction():
        fs.begin()
        found = storage(loom).nodes_by_id([start]).get(start)
        if found is None:
            raise NotFound("node", start)
        cid = found.content_id
        users = fs.content_users(cid)
        if within is not None:
            mine = within({t for _, t in users} | {found.tree})
            users = [(n, t) for n, t in users if t in mine] or [(start, found.tree)]
        trees = sorted({t for _, t in users})
        ids = sorted(n for n, _ in users)
        texts = _texts(found.content)
        own = {g for n in storage(loom).nodes_by_id(ids).values()
               if isinstance(g := (n.provenance or {}).get("generation"), str)}
        gens = sorted(gid for gid, *parts in fs.generations_of(trees)
                      if gid in own or _carries(parts, texts))
        with_blobs = fs.bodies_with_blobs([start])
        already = bool(fs.redacted("content", [cid]))
        at = now()
        if within is None:
            fs.redact_content(cid)
            hooks.redact_content(loom, cid)
            fs.mark_redacted([cid], "content", at)
            fs.drop_copies_of(cid)  # users' own scrubbed copies of it too
        else:
            hooks.keep_bodies(loom, [cid])  # a document naming it keeps its own copy
            fs.redact_copies(ids)
            fs.mark_redacted(ids, "node", at)
        fs.drop_node_copies(ids)
        for gid in gens:
            fs.redact_generation(gid)
        _scrub_origins(fs, ids, texts)
        _retitle(loom, fs, trees, set(ids), C.title_from(found.content))
        fs.mark_stale([(s["tree"], s["item"], s["kind"], s["source"])
                       for s in stale_compactions(fs, trees, set(ids))], at)
        left = hooks.forget_nodes(loom, ids, memo_trees=trees, redacted=True)
        fs.mark_redacted(gens, "generation", at)
        blobs = sorted({b for body in with_blobs.values() for b in C.blob_refs(json.loads(body))})
        kept = within is not None and bool(fs.content_users(cid))
        done = Forgotten("redact", start, trees, ids, shared=[i for i in ids if i != start],
                         generations=gens, blobs=[] if already else blobs,
                         needles=[] if kept else _needles([found.content]), left=left)
        done.seq = fs.log({"at": at, "actor": actor or loom.actor, "action": "redact",
                           "target": start, "trees": trees, "ids": ids, "refs": [],
                           "reason": reason})
    done = _after(loom, fs, done)
    if within is not None:  # nothing of what others hold is told: blobs, a rewrite
        done.blobs = []
        done.files = {k: v for k, v in done.files.items() if k != "vacuumed"}
    return done


def _scrub_origins(fs: ForgetStore, ids: Sequence[str], texts: Sequence[str]) -> None:
    """An origin may repeat the text (a supervised message's original wording), and a
    generated node's provenance keeps its tokens (`logprobs`): the origin's strings
    holding the text become `[redacted]`, the tokens go. The chain covers neither (only
    the response hash inside the provenance, which stays)."""
    for nid, (origin, provenance) in fs.origins(ids).items():
        new_origin, new_prov = origin, provenance
        if origin is not None and _holds(doc := json.loads(origin), texts):
            new_origin = _compact(_blank(doc, texts))
        if provenance is not None and '"logprobs"' in provenance:
            prov = json.loads(provenance)
            if isinstance(prov, dict) and prov.pop("logprobs", None) is not None:
                new_prov = _compact(prov)
        if (new_origin, new_prov) != (origin, provenance):
            fs.set_origin(nid, new_origin, new_prov)


def _compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _blank(value: Any, texts: Sequence[str]) -> Any:
    if isinstance(value, str):
        return "[redacted]" if _holds(value, texts) else value
    if isinstance(value, dict):
        return {k: _blank(v, texts) for k, v in value.items()}
    if isinstance(value, list):
        return [_blank(v, texts) for v in value]
    return value


def _retitle(loom: Loom, fs: ForgetStore, trees: Sequence[str], ids: set[str],
             derived: str) -> None:
    """A tree whose title is the default one made from a redacted root's words is
    retitled `[redacted]` (a title someone chose stays)."""
    for tid in trees:
        tree = storage(loom).tree_by_id(tid)
        if tree is not None and tree.root in ids and tree.title == derived:
            fs.retitle(tid, "[redacted]")


def stale_compactions(fs: ForgetStore, trees: Sequence[str], changed: set[str]
                      ) -> list[dict[str, str]]:
    """The compaction summaries of `trees` made from a node of `changed` (one of the
    messages it summarized: an ancestor that is not one of the turns it kept)."""
    if not changed or not trees:
        return []
    found: list[dict[str, str]] = []
    by_tree: dict[str, list[str]] = {}
    for node, tid in fs.compactions_in(list(trees)):
        by_tree.setdefault(tid, []).append(node)
    for tid, nodes in sorted(by_tree.items()):
        parent = {r.id: r.parent for r in fs.tree_rows(tid)}
        kept: dict[str, set[str]] = {}
        for node, dep in fs.created_from(tid):
            kept.setdefault(node, set()).add(dep)
        for node in sorted(nodes):
            cur = parent.get(node)
            while cur is not None:
                if cur in changed and cur not in kept.get(node, set()):
                    found.append({"tree": tid, "item": node, "kind": "compaction",
                                  "source": cur})
                    break
                cur = parent.get(cur)
    return found



def _needles(contents: Sequence[list[dict[str, Any]]]) -> list[bytes]:
    """Distinctive bytes of erased contents (strings of 12 bytes or more, as stored in
    JSON and as plain text), to look for in the files afterwards."""
    out: set[bytes] = set()
    for blocks in contents:
        for text in _texts(blocks):
            for form in (text, json.dumps(text, ensure_ascii=False)[1:-1]):
                raw = form.encode("utf-8", "surrogatepass")
                if len(raw) >= 12:
                    out.add(raw[:256])
    return sorted(out)


def _texts(blocks: list[dict[str, Any]]) -> list[str]:
    """The strings a content carries (what a generation record may repeat)."""
    out: list[str] = []

    def walk(value: Any, key: str = "") -> None:
        if isinstance(value, str):
            if key not in ("type", "ref", "mime_type", "media_type", "id", "tool_use_id"):
                out.append(value)
        elif isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)

    walk(blocks)
    return [t for t in out if t.strip()]


def _carries(parts: Sequence[str], texts: Sequence[str]) -> bool:
    """Whether a generation record's JSON holds one of `texts` in a string (a long one
    anywhere inside a string, a short one as a whole string)."""
    wanted = [t for t in texts if t]
    if not wanted:
        return False
    for raw in parts:
        if not any(t[:64] in raw or json.dumps(t)[1:65] in raw for t in wanted):
            continue
        try:
            doc = json.loads(raw)
        except ValueError:
            return True  # unreadable: it may hold the text, erase it
        if _holds(doc, wanted):
            return True
    return False


def _holds(doc: Any, texts: Sequence[str]) -> bool:
    stack = [doc]
    while stack:
        value = stack.pop()
        if isinstance(value, str):
            if any(t == value or (len(t) >= 8 and t in value) for t in texts):
                return True
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return False


# == after the commit, and the record ================================================
def _after(loom: Loom, fs: ForgetStore, done: Forgotten) -> Forgotten:
    """Drop memories of what went, delete the blobs nothing uses any more, and make
    the freed bytes leave the files."""
    storage(loom).drop_memory(done.ids, done.refs)
    gone = []
    for blob in done.blobs:
        if not fs.blob_used(blob) and not hooks.holds_blob(loom, blob):
            if loom.delete_blob(blob, "9999-12-31T23:59:59.999999Z"):
                gone.append(blob)
    done.blobs = gone
    done.files = {**fs.scrub(sorted(fs.existing(hooks.forget_tables(loom))), done.needles),
                  **done.left}
    return done


def log(loom: Loom, *, limit: int = 100, tree: str | None = None,
        within: Within | None = None) -> list[dict[str, Any]]:
    """The record of forgetting, newest first: who, when, what, which ids, why
    (`within`: only the lines about trees the caller sees)."""
    if not isinstance(limit, int) or not 1 <= limit <= MAX_LOG:
        raise InvalidInput("limit", f"must be from 1 to {MAX_LOG}")
    lines = storage(loom).forgetting().entries(limit=MAX_LOG if within else limit, tree=tree)
    if within is not None:
        lines = [e for e in lines if within(e["trees"]) == set(e["trees"])]
    return lines[:limit]


def forgotten(loom: Loom, ids: Iterable[str]) -> set[str]:
    """Which of these node or tree ids were deleted (imports skip them)."""
    return storage(loom).forgetting().forgotten(sorted(set(ids)))


def _allowed(within: Within | None, trees: Iterable[str]) -> None:
    """Refuse a forget that reaches trees the caller may not change: content shared
    with another user's node (the same content id), or a node of theirs created from
    one of the caller's. Nothing is written; the store's operator can do it."""
    wanted = set(trees)
    if within is not None and within(wanted) != wanted:
        raise InvalidInput("forget", "it would reach nodes of trees you cannot change (the "
                           "same content, or nodes made from it, elsewhere); the store's "
                           "operator can do it with `loomdb delete` / `loomdb redact`")


def check_reason(reason: str | None) -> None:
    if reason is not None and (not isinstance(reason, str) or len(reason) > 1000):
        raise InvalidInput("reason", "must be text of at most 1000 characters")
