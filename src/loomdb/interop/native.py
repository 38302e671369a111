"""loomdb's own lossless export: write trees out, read them back identical.

One *tree document* holds everything a tree is made of:

    {"loomdb_export": 1,
     "tree":   {id, title, mode, system, options, root, created_at, updated_at,
                archived_at, lineage},
     "blobs":  [{id, mime_type, size, data (base64)}],       every blob its nodes use
     "nodes":  [Node.to_json()],                              parents before children
     "refs":   [Ref.to_json() + {"log": [{at, from, to, by, reason}], "draft"?: text}],
     "meta":   [{node, bookmarked, label, pruned, excluded, tags}],
     "edges":  [Edge.to_json()],                              annotation and link edges
     "generations": [...], "compactions": [...]}              provenance records

Format `jsonl` writes one tree document per line; format `json` writes one document
`{"loomdb_export": 1, "exported_at": ..., "trees": [tree documents]}`. Both are written
piece by piece (never one big string) and read back tree by tree with ijson.

Reading recomputes every node through the Loom (same id, same fields) and compares the
result with the exported content id and chain hash: a mismatch is tamper evidence and
fails that tree with an error naming the node (saying "does not match", never the value
computed: a computed chain hash is all a forger needs).

A tree document names only its own nodes: every `parent`, `edited_from`, source,
selection, ref target, overlay entry, edge end and provenance record must be a node of
this tree (in the document, or stored in this very tree), else the tree fails and
nothing of it is written. One exception keeps a whole-store export whole: a `link`
edge may end in another tree that this same import brings (a later tree's links are
written once it landed, see `Run`); a link to any other node is left out, with a warning. Importing what is already there adds
nothing (nodes, refs, edges and records are matched by id/name); a ref name that the
store uses for another tree is an error, never silently renamed.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, TextIO

from .. import content as C
from .. import refs as R
from ..errors import CycleError, InvalidInput, NotFound
from ..model import MODES, REF_KINDS, Node, Ref, RefMove, Tree, now
from ..storage_ops import storage
from ..tool_options import import_warnings
from . import tombstones as T
from .links import Run, check_records, edges, lineage
from .model import expect
from .report import Outcome
from .stream import Input, json_stream

if TYPE_CHECKING:
    from ..loom import Loom

VERSION = 1
MARKER = "loomdb_export"
_HEAD = re.compile(rb'^(?:\xef\xbb\xbf)?\s*\{\s*"loomdb_export"\s*:')


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


# ---------------------------------------------------------------- writing


def write_json(loom: Loom, tree_ids: Iterable[str], out: TextIO) -> None:
    """The `json` format: one document holding every tree, written tree by tree."""
    out.write(f'{{"{MARKER}":{VERSION},"exported_at":{_dumps(now())},"trees":[')
    for i, tid in enumerate(tree_ids):
        out.write(",\n" if i else "\n")
        write_tree(loom, tid, out)
    out.write("\n]}\n")


def write_jsonl(loom: Loom, tree_ids: Iterable[str], out: TextIO) -> None:
    """The `jsonl` format: one tree document per line."""
    for tid in tree_ids:
        write_tree(loom, tid, out)
        out.write("\n")


def write_tree(loom: Loom, tree_id: str, out: TextIO) -> None:
    """One tree document (one line, no newline), streamed field by field."""
    tree = storage(loom).tree_by_id(tree_id, stats=True)
    if tree is None:
        raise NotFound("tree", tree_id)
    nodes = order_nodes(list(storage(loom).all_nodes(tree_id)))
    ids = [n.id for n in nodes]
    record = tree.to_json()
    record.pop("nodes", None)
    out.write(f'{{"{MARKER}":{VERSION},"tree":{_dumps(record)},"blobs":[')
    blob_ids = sorted({ref for n in nodes for ref in C.blob_refs(n.content)})
    for i, bid in enumerate(blob_ids):
        size, mime = storage(loom).blob_known(bid) or (None, "application/octet-stream")
        data = loom.blob(bid)
        out.write("," if i else "")
        out.write(_dumps({"id": bid, "mime_type": mime, "size": len(data) if size is None else size,
                          "data": base64.b64encode(data).decode("ascii")}))
    out.write('],"nodes":[')
    for i, node in enumerate(nodes):
        rec = node.to_json()
        rec.pop("tree", None)
        if rec["content"] == T.BLOCKS:
            T.mark_export(loom, [rec])
        out.write(("," if i else "") + _dumps(rec))
    out.write('],"refs":[')
    for i, ref in enumerate(loom.refs(tree=tree_id)):
        rec = ref.to_json()
        rec["log"] = [{k: v for k, v in m.to_json().items() if k not in ("seq", "ref")}
                      for m in storage(loom).ref_moves(ref.name)]
        draft = storage(loom).draft(ref.name)
        if draft:
            rec["draft"] = draft  # buffer mode's uncommitted text belongs to the ref
        out.write(("," if i else "") + _dumps(rec))
    out.write('],"meta":[')
    first = True
    for chunk in _chunks(ids, 500):
        found = storage(loom).metas(chunk)
        for nid in chunk:
            if nid in found:
                out.write(("" if first else ",") + _dumps({"node": nid, **found[nid].to_json()}))
                first = False
    out.write('],"edges":[')
    seen: set[str] = set()
    for node in nodes:
        for edge in storage(loom).node_edges(node.id):
            if edge.tree == tree_id and edge.id not in seen:
                out.write(("," if seen else "") + _dumps(edge.to_json()))
                seen.add(edge.id)
    out.write('],"generations":[')
    get_gen = storage(loom).generation
    written: set[str] = set()
    for node in nodes:
        gid = (node.provenance or {}).get("generation")
        if get_gen is not None and isinstance(gid, str) and gid not in written:
            gen = get_gen(gid)
            if gen is not None:
                out.write(("," if written else "") + _dumps(T.mark_generation(loom, dict(gen))))
                written.add(gid)
    out.write('],"compactions":[')
    get_comp = storage(loom).compaction
    first = True
    for node in nodes:
        if node.kind == "compaction" and get_comp is not None:
            row = get_comp(node.id)
            if row is not None:
                out.write(("" if first else ",") + _dumps(row))
                first = False
    out.write("]}")


def _chunks(items: list[str], size: int) -> Iterator[list[str]]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _deps(parent: str | None, edited_from: str | None, sources: Iterable[str],
          selections: Iterable[str]) -> list[str]:
    deps = [d for d in (parent, edited_from) if d]
    deps += list(sources)
    deps += list(selections)
    return deps


def order_nodes(nodes: list[Node]) -> list[Node]:
    """Nodes so that each comes after every node it was created from (stable by time)."""
    by_id = {n.id: n for n in nodes}
    deps = {
        n.id: [d for d in _deps(n.parent, n.edited_from, (s for s, _ in n.sources),
                                n.selections.values()) if d in by_id]
        for n in nodes
    }
    return [by_id[i] for i in _topological(deps, [n.id for n in nodes])]


def _topological(deps: dict[str, list[str]], order: list[str]) -> list[str]:
    """Ids with every dependency first; `order` breaks ties. CycleError names a cycle."""
    waiting = {i: len(set(d)) for i, d in deps.items()}
    users: dict[str, list[str]] = {}
    for i, ds in deps.items():
        for d in set(ds):
            users.setdefault(d, []).append(i)
    rank = {i: k for k, i in enumerate(order)}
    import heapq

    ready = [(rank[i], i) for i in order if waiting[i] == 0]
    heapq.heapify(ready)
    out: list[str] = []
    while ready:
        _, cur = heapq.heappop(ready)
        out.append(cur)
        for user in users.get(cur, ()):
            waiting[user] -= 1
            if waiting[user] == 0:
                heapq.heappush(ready, (rank[user], user))
    if len(out) != len(order):
        stuck = sorted(i for i, n in waiting.items() if n > 0)
        raise CycleError("nodes", "the nodes' links form a cycle among " + ", ".join(stuck[:5]))
    return out


# ---------------------------------------------------------------- reading


def is_native(inp: Input) -> bool:
    """True when the document starts as a loomdb export (`{"loomdb_export": ...`)."""
    return bool(_HEAD.match(inp.peek(4096)))


def read_units(inp: Input) -> Iterator[tuple[str, Any]]:
    """(label, tree document) for every tree of a `json` or `jsonl` export, streamed."""
    stream = json_stream()
    prefix = _layout(inp, stream)
    with inp.open() as fh:
        counted = inp.reader(fh)
        index = -1
        try:
            for index, doc in enumerate(stream.items(
                counted, prefix, multiple_values=prefix == "", use_float=True,
            )):
                tree = doc.get("tree") if isinstance(doc, dict) else None
                tid = tree.get("id") if isinstance(tree, dict) else None
                label = f"{inp.name} tree {index}" + (f" (id {tid})" if isinstance(tid, str) else "")
                yield label, doc
        except stream.JSONError as exc:
            reason = str(exc).splitlines()[0]
            what = "truncated" if "premature EOF" in reason else "malformed"
            raise InvalidInput(
                f"{inp.name} at or before byte {counted.offset}",
                f"JSON is {what} in tree {index + 1} ({reason}); {index + 1} tree(s) read before it",
            ) from None


def _layout(inp: Input, stream: Any) -> str:
    """"trees.item" for a `json` export, "" for `jsonl` (one tree document per value)."""
    with inp.open() as fh:
        try:
            for prefix, event, value in stream.parse(inp.reader(fh), multiple_values=True):
                if event == "map_key" and prefix == "":
                    if value == "trees":
                        return "trees.item"
                    if value == "tree":
                        return ""
        except stream.JSONError as exc:
            raise InvalidInput(inp.name, f"JSON is malformed or truncated ({exc})") from None
    raise InvalidInput(inp.name, "a loomdb export without trees")


def import_tree(loom: Loom, doc: Any, run: Run | None = None) -> Outcome:
    """Write one tree document (inside the caller's transaction); see the module docstring."""
    run = run if run is not None else Run()
    doc = expect(doc, dict, "tree document", optional=False)
    if doc.get(MARKER) != VERSION:
        raise InvalidInput(MARKER, f"unsupported export version {doc.get(MARKER)!r} (this is {VERSION})")
    raw_tree = expect(doc.get("tree"), dict, "tree", optional=False)
    tid = _str(raw_tree.get("id"), "tree.id")
    outcome = Outcome(tid)
    if storage(loom).forgetting().forgotten([tid]):
        outcome.skipped = len(_list(doc, "nodes"))
        outcome.warnings.append("this tree was deleted from this store; skipped "
                                "(see `loomdb forgotten`)")
        return outcome
    existing_tree = storage(loom).tree_by_id(tid)
    if existing_tree is not None and raw_tree.get("root") != existing_tree.root:
        # same tree id, another first message: another tree, not more of this one
        raise InvalidInput(
            f"tree {tid}", "exists here with another root: a different tree under the same "
            "id; nothing imported")
    carried = _blobs(loom, _list(doc, "blobs"), outcome)
    nodes, added = _nodes(loom, tid, _list(doc, "nodes"), outcome, carried)
    gone = {n for r in _list(doc, "nodes") if isinstance(r, dict)
            and isinstance(n := r.get("id"), str) and n not in nodes}
    if existing_tree is None:
        if not outcome.nodes:
            raise InvalidInput("tree", "has no nodes")
        storage(loom).write_tree(_tree(raw_tree, nodes, lineage(
            loom, tid, expect(raw_tree.get("lineage"), dict, "tree.lineage"), run,
            outcome.warnings)))
        outcome.created = True
    elif existing_tree.mode != raw_tree.get("mode"):
        raise InvalidInput(f"tree {tid}", f"exists here as a {existing_tree.mode} tree")
    _refs(loom, tid, _kept(_list(doc, "refs"), gone, "node", "selections"), outcome)
    _meta(loom, tid, _kept(_list(doc, "meta"), gone, "node"), nodes, added)
    edges(loom, tid, _kept(_list(doc, "edges"), gone, "target", "sources"), nodes, run)
    used = {g for n in nodes.values() if isinstance(g := (n.provenance or {}).get("generation"), str)}
    check_records(loom, tid, [g for g in _list(doc, "generations") if not gone
                              or (isinstance(g, dict) and g.get("id") in used)],
                  _kept(_list(doc, "compactions"), gone, "node_id"), nodes)
    run.pending_nodes = set(nodes)
    outcome.warnings += import_warnings(  # stored as data; nothing runs them
        raw_tree.get("options") if outcome.created else None,
        ((n, nodes[n].options) for n in sorted(added)))
    return outcome


def _kept(items: list[Any], gone: set[str], *keys: str) -> list[Any]:
    """The records that name none of the nodes left out (deleted here before)."""
    if not gone:
        return items

    def names(value: Any) -> set[str]:
        if isinstance(value, str):
            return {value}
        if isinstance(value, dict):
            return {v for v in value.values() if isinstance(v, str)} | {
                v["node"] for v in value.values() if isinstance(v, dict) and "node" in v}
        if isinstance(value, list):
            return {n for v in value for n in names(v)}
        return set()

    return [r for r in items if not isinstance(r, dict)
            or not any(names(r.get(k)) & gone for k in keys)]


def _list(doc: dict[str, Any], key: str) -> list[Any]:
    return expect(doc.get(key), list, key) or []


def _str(value: Any, where: str) -> str:
    value = expect(value, str, where, optional=False)
    if not value:
        raise InvalidInput(where, "must not be empty")
    return value  # type: ignore[no-any-return]


def _blobs(loom: Loom, blobs: list[Any], outcome: Outcome) -> set[str]:
    """Store the document's blobs; their ids (the only blobs its nodes may name: a
    blob is anyone's who holds it, so naming one by hash alone would read another's)."""
    carried: set[str] = set()
    for i, raw in enumerate(blobs):
        where = f"blobs[{i}]"
        rec = expect(raw, dict, where, optional=False)
        bid = _str(rec.get("id"), f"{where}.id")
        try:
            data = base64.b64decode(_str(rec.get("data"), f"{where}.data"), validate=True)
        except (binascii.Error, ValueError):
            raise InvalidInput(f"{where}.data", "is not valid base64") from None
        if C.digest(data) != bid:
            raise InvalidInput(f"{where}.data", f"does not match its id {bid}")
        known = storage(loom).blob_known(bid)
        loom.put_blob(data, expect(rec.get("mime_type"), str, f"{where}.mime_type")
                      or "application/octet-stream")
        carried.add(bid)
        if known is None:
            outcome.blobs += 1
    return carried


def _nodes(
    loom: Loom, tid: str, raw_nodes: list[Any], outcome: Outcome, carried: set[str]
) -> tuple[dict[str, Node], set[str]]:
    records: dict[str, dict[str, Any]] = {}
    deps: dict[str, list[str]] = {}
    for i, raw in enumerate(raw_nodes):
        where = f"nodes[{i}]"
        rec = expect(raw, dict, where, optional=False)
        nid = _str(rec.get("id"), f"{where}.id")
        if nid in records:
            raise InvalidInput(where, f"duplicate node id {nid}")
        sources = expect(rec.get("sources"), list, f"{where}.sources") or []
        for j, s in enumerate(sources):
            expect(s, dict, f"{where}.sources[{j}]", optional=False)
            _str(s.get("node"), f"{where}.sources[{j}].node")
        selections = expect(rec.get("selections"), dict, f"{where}.selections") or {}
        deps[nid] = _deps(expect(rec.get("parent"), str, f"{where}.parent"),
                          expect(rec.get("edited_from"), str, f"{where}.edited_from"),
                          (s["node"] for s in sources), selections.values())
        records[nid] = rec
    _skip_forgotten(loom, records, deps, outcome)
    wanted = {d for ds in deps.values() for d in ds} | set(records)
    stored = storage(loom).nodes_by_id(sorted(wanted))
    for nid, ds in deps.items():
        for d in ds:
            if d not in records and (d not in stored or stored[d].tree != tid):
                raise InvalidInput(f"node {nid}", f"was created from {d}, which is neither "
                                   "in the export nor a node of this tree here")
    inside = {nid: [d for d in ds if d in records] for nid, ds in deps.items()}
    nodes: dict[str, Node] = {}
    added: set[str] = set()
    for nid in _topological(inside, list(records)):
        rec = records[nid]
        have = stored.get(nid)
        if have is not None:
            if have.tree != tid:
                raise InvalidInput(f"node {nid}", "exists here in another tree")
            if have.chain_hash != rec.get("chain_hash"):
                raise InvalidInput(f"node {nid}", "a different node has this id here (its "
                                   "chain hash does not match)")
            nodes[nid] = have
            outcome.skipped += 1
            continue
        node = _write_node(loom, tid, rec, nodes, stored, carried)
        nodes[nid] = node
        added.add(nid)
        outcome.nodes += 1
    return nodes, added


def _skip_forgotten(loom: Loom, records: dict[str, dict[str, Any]],
                    deps: dict[str, list[str]], outcome: Outcome) -> None:
    """Leave out nodes deleted here before, and the nodes created from them."""
    gone = storage(loom).forgetting().forgotten(sorted(records))
    if not gone:
        return
    for nid in _topological({n: [d for d in ds if d in records] for n, ds in deps.items()},
                            list(records)):
        if nid in gone or any(d in gone for d in deps[nid]):
            gone.add(nid)
            del records[nid]
            del deps[nid]
            outcome.skipped += 1
    outcome.warnings.append("nodes deleted from this store before were skipped "
                            "(see `loomdb forgotten`)")


def _write_node(loom: Loom, tid: str, rec: dict[str, Any], nodes: dict[str, Node],
                stored: dict[str, Node], carried: set[str]) -> Node:
    nid = rec["id"]
    where = f"node {nid}"

    def get(ref: str | None) -> Node | None:
        return None if ref is None else nodes.get(ref) or stored[ref]

    blocks = loom.prepare(expect(rec.get("content"), list, f"{where}.content", optional=False),
                          f"{where}.content")
    if any(ref not in carried for ref in C.blob_refs(blocks)):
        raise InvalidInput(f"{where}.content", "names a blob this document does not carry")
    extra: dict[str, Any] = {}
    if isinstance(rec.get("tokens"), int):
        extra["tokens"] = rec["tokens"]
    for key in ("options", "provenance", "origin"):
        expect(rec.get(key), dict, f"{where}.{key}")
    fields = dict(
        tree=tid, parent=get(rec.get("parent")), blocks=blocks,
        role=_str(rec.get("role"), f"{where}.role"),
        author=_str(rec.get("author"), f"{where}.author"),
        source=_str(rec.get("source"), f"{where}.source"),
        options=rec.get("options"), cache=bool(rec.get("cache")),
        kind=_str(rec.get("kind"), f"{where}.kind"),
        created_at=_str(rec.get("created_at"), f"{where}.created_at"),
        provenance=rec.get("provenance"), origin=rec.get("origin"),
        sources=[(s["node"], _str(s.get("role"), f"{where}.sources.role"))
                 for s in rec.get("sources") or []],
        selections=dict(rec.get("selections") or {}),
        edited_from=get(rec.get("edited_from")), node_id=nid, **extra,
    )
    if rec.get("redacted") is True and blocks == T.BLOCKS:
        node = T.write(loom, rec, fields)
    else:
        node = loom.write_node(**fields)
    if node.content_id != rec.get("content_id"):
        raise InvalidInput(f"node {nid}", "its content does not match its content id "
                           "(the export was altered)")
    if node.chain_hash != rec.get("chain_hash"):
        raise InvalidInput(f"node {nid}", "its chain hash does not match its fields and "
                           "parents (the export was altered)")
    return node


def _tree(raw: dict[str, Any], nodes: dict[str, Node], lineage: dict[str, Any] | None) -> Tree:
    tid = raw["id"]
    mode = raw.get("mode")
    if mode not in MODES:
        raise InvalidInput("tree.mode", f"{mode!r} is not one of {', '.join(MODES)}")
    root = _str(raw.get("root"), "tree.root")
    if root not in nodes or nodes[root].parent is not None:
        raise InvalidInput("tree.root", f"{root} is not a root node of the export")
    title = _str(raw.get("title"), "tree.title")
    system = expect(raw.get("system"), str, "tree.system")
    for value, name in ((title, "tree.title"), (system, "tree.system")):
        C.check_text(value, name)
    created = _str(raw.get("created_at"), "tree.created_at")
    return Tree(
        id=tid, title=title, mode=mode, created_at=created,
        updated_at=expect(raw.get("updated_at"), str, "tree.updated_at") or created,
        system=system, options=expect(raw.get("options"), dict, "tree.options") or {},
        root=root, archived_at=expect(raw.get("archived_at"), str, "tree.archived_at"),
        lineage=lineage,
    )


def _refs(loom: Loom, tid: str, refs: list[Any], outcome: Outcome) -> None:
    for i, raw in enumerate(refs):
        where = f"refs[{i}]"
        rec = expect(raw, dict, where, optional=False)
        name = R.check_name(_str(rec.get("name"), f"{where}.name"))
        kind = rec.get("kind")
        if kind not in REF_KINDS:
            raise InvalidInput(f"{where}.kind", f"{kind!r} is not one of {', '.join(REF_KINDS)}")
        have = storage(loom).find_ref(name)
        if have is not None:
            if have.tree == tid and have.kind == kind:
                continue
            raise InvalidInput(
                f"ref {name!r}",
                f"already names a {have.kind} of another tree in this store; "
                "rename or delete it, then import again",
            )
        node = _str(rec.get("node"), f"{where}.node")
        selections = expect(rec.get("selections"), dict, f"{where}.selections") or {}
        targets = storage(loom).nodes_by_id([node, *selections.values()])
        for target in (node, *selections.values()):
            if target not in targets or targets[target].tree != tid:
                raise InvalidInput(f"ref {name!r}", f"points at {target}, not a node of this tree")
        created = _str(rec.get("created_at"), f"{where}.created_at")
        log = []
        for j, move in enumerate(expect(rec.get("log"), list, f"{where}.log") or []):
            move = expect(move, dict, f"{where}.log[{j}]", optional=False)
            log.append(RefMove(
                0, name, _str(move.get("at"), f"{where}.log[{j}].at"),
                expect(move.get("from"), str, f"{where}.log[{j}].from"),
                expect(move.get("to"), str, f"{where}.log[{j}].to"),
                expect(move.get("by"), str, f"{where}.log[{j}].by") or "import",
                expect(move.get("reason"), str, f"{where}.log[{j}].reason") or "",
            ))
        storage(loom).restore_ref(Ref(
            name, kind, tid, node, created,
            expect(rec.get("updated_at"), str, f"{where}.updated_at") or created,
            dict(selections), _origin(loom, tid, name, expect(rec.get("origin"), dict,
                                                              f"{where}.origin"), outcome),
        ), log, expect(rec.get("draft"), str, f"{where}.draft"))


def _origin(loom: Loom, tid: str, name: str, origin: dict[str, Any] | None,
            outcome: Outcome) -> dict[str, Any] | None:
    """A ref's origin as it may be stored: the node it was `forked_from` (a fork is in
    its own tree) only as the exact id of a node of this tree, else left out, warned."""
    fork = (origin or {}).get("forked_from")
    if origin is None or fork is None:
        return origin
    node = fork.get("node") if isinstance(fork, dict) else None
    at = storage(loom).anchor(node) if isinstance(node, str) else None
    if at is not None and at.tree == tid and isinstance(fork.get("ref"), (str, type(None))):
        return origin
    outcome.warnings.append(f"ref {name!r}: its forked_from names no node of this tree; "
                            "left out")
    return {k: v for k, v in origin.items() if k != "forked_from"}


def _meta(
    loom: Loom, tid: str, metas: list[Any], nodes: dict[str, Node], added: set[str]
) -> None:
    """The overlay of nodes this import added (what is already here keeps its own)."""
    for i, raw in enumerate(metas):
        where = f"meta[{i}]"
        rec = expect(raw, dict, where, optional=False)
        nid = _str(rec.get("node"), f"{where}.node")
        if nid not in nodes:
            raise InvalidInput(where, f"names {nid}, not a node of this tree")
        if nid not in added:
            continue
        tags = [t for t in expect(rec.get("tags"), list, f"{where}.tags") or []]
        for t in tags:
            if not isinstance(t, str) or not t or len(t) > 100:
                raise InvalidInput(f"{where}.tags", f"{t!r}: tags are 1-100 characters")
        storage(loom).restore_meta(nid, tid, {
            "bookmarked": int(bool(rec.get("bookmarked"))),
            "label": expect(rec.get("label"), str, f"{where}.label"),
            "pruned": int(bool(rec.get("pruned"))), "excluded": int(bool(rec.get("excluded"))),
        }, tags)
