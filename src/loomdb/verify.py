"""Verification of the hash chain (MODEL.md invariant 5).

Each node is checked on its own against what is stored: its content must hash to its
content id, and its chain hash must equal the hash recomputed from its fields and the
stored chain hashes of the nodes it was created from. A node that fails is
*tampered*; every node created from it (directly or through its descendants, its
hyperedge sources or its version selections) *inherits the break*, because its
recorded ancestry no longer matches what is there. The report names them all.

The chain also makes claims outside the node rows, and those are checked too: a
generated node's provenance names a generation record whose raw response must still
hash to the response hash the chain covers, and every blob a node's content points at
must still be there with bytes that hash to its id. Each broken item carries its
`kind`: `content`, `chain` (tampered nodes), `inherited`, `generation` or `blob`.

A redacted node (loomdb.forget) is not broken: its body is the tombstone and its
content id is recorded as redacted, and its chain hash still checks against its
content id and parents. It is listed under `redacted`, as is a redacted generation
record, and the store verifies when nothing else is wrong. A value whose spans were
redacted (`loomdb redact --text`) is listed under `scrubbed`: its body (or a generation
record's raw response) must be exactly what the scrub left (`scrubs` keeps its digest).
Derived values made from what was forgotten since are listed under `stale`.
"""

from __future__ import annotations

import json
from collections import deque
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .chain import chain_hash
from .content import blob_refs, canonical, digest
from .errors import IntegrityError, LoomError, NotFound
from .storage_ops import storage
from .store.forget import TOMBSTONE

_TOMBSTONE = TOMBSTONE.encode("utf-8")

if TYPE_CHECKING:
    from .loom import Loom
    from .store.nodes import ChainRow


@dataclass
class Report:
    checked: int = 0
    broken: list[dict[str, str]] = field(default_factory=list)
    blobs: set[str] = field(default_factory=set, repr=False)  # blob ids already checked
    redacted: list[dict[str, str]] = field(default_factory=list)
    #: content and generation ids recorded as redacted (read once per verification)
    erased: dict[str, set[str]] = field(default_factory=dict, repr=False)
    #: what span redactions left: kind -> {content or generation id: digest}
    scrubs: dict[str, dict[str, str]] = field(default_factory=dict, repr=False)
    #: values whose spans were redacted, each checked against what the scrub left
    scrubbed: list[dict[str, str]] = field(default_factory=list)
    #: derived values made from what was forgotten since (`loomdb compact --redo`)
    stale: list[dict[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.broken

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"ok": self.ok, "checked": self.checked, "broken": self.broken}
        if self.redacted:
            out["redacted"] = self.redacted
        if self.scrubbed:
            out["scrubbed"] = self.scrubbed
        if self.stale:
            out["stale"] = self.stale
        return out


def verify(loom: Loom, tree_id: str | None = None) -> Report:
    forget = storage(loom).forgetting()
    report = Report(erased=forget.all_redacted(), scrubs=forget.all_scrubbed(),
                    stale=forget.stale(tree_id))
    trees = [tree_id] if tree_id else [t.id for t in loom.trees()] + [
        t.id for t in loom.trees(archived=True)
    ]
    for tid in trees:
        _verify_tree(loom, tid, report)
    return report


def _verify_tree(loom: Loom, tree_id: str, report: Report) -> None:
    rows = {r["id"]: r for r in storage(loom).chain_rows(tree_id)}
    stored = {nid: r["chain_hash"] for nid, r in rows.items()}
    dependents: dict[str, list[str]] = {}
    tampered: dict[str, str] = {}
    for nid, row in rows.items():
        deps = _deps(row)
        for dep in deps:
            dependents.setdefault(dep, []).append(nid)
        erased = _erased(row, report)
        if erased:
            report.redacted.append({"kind": "content", "node": nid, "tree": tree_id})
        elif _scrubbed(row, report):
            erased = True
            report.scrubbed.append({"kind": "content", "node": nid, "tree": tree_id,
                                    "content": str(row["content_id"])})
        reason = _check(row, deps, stored, erased=erased)
        if reason:
            tampered[nid] = reason
        else:
            _check_claims(loom, tree_id, row, report)
    report.checked += len(rows)
    inherited: dict[str, str] = {}
    queue = deque(tampered)
    while queue:
        cur = queue.popleft()
        origin = inherited.get(cur, cur)
        for child in dependents.get(cur, ()):
            if child not in tampered and child not in inherited:
                inherited[child] = origin
                queue.append(child)
    for nid in sorted(tampered):
        kind = "content" if "content" in tampered[nid] else "chain"
        report.broken.append({"kind": kind, "node": nid, "tree": tree_id, "reason": tampered[nid]})
    for nid in sorted(inherited):
        report.broken.append({
            "kind": "inherited", "node": nid, "tree": tree_id,
            "reason": f"inherits the break from {inherited[nid]}",
        })


def _deps(row: ChainRow) -> list[str]:
    deps = [row["parent"]] if row["parent"] else []
    deps += [s for s, _ in row["sources"]]
    deps += list(row["selections"].values())
    return deps


def _erased(row: ChainRow, report: Report) -> bool:
    """A redaction, not tampering: the tombstone under a content id recorded redacted,
    or in a node whose own copy was (a user's redaction of their copies)."""
    marked = (row["content_id"] in report.erased.get("content", ())
              or row["id"] in report.erased.get("node", ()))
    return (row["body"] == _TOMBSTONE and marked
            and digest(row["body"]) != row["content_id"])


def _scrubbed(row: ChainRow, report: Report) -> bool:
    """Spans redacted, not tampering: the body is exactly what the scrub left."""
    left = (report.scrubs.get("node", {}).get(row["id"])
            or report.scrubs.get("content", {}).get(str(row["content_id"])))
    body = row["body"]
    return (left is not None and body is not None and digest(body) == left
            and left != row["content_id"])


def _check(row: ChainRow, deps: list[str], stored: dict[str, str], *,
           erased: bool = False) -> str | None:
    body = row["body"]
    if body is None or row["content_id"] is None:
        return "its content is missing"
    if not erased and digest(body) != row["content_id"]:
        return "its content does not match its content id"
    missing = [d for d in deps if d not in stored]
    if missing:
        return f"it was created from {missing[0]}, which is missing"
    try:
        options = None if row["options"] is None else json.loads(row["options"])
        provenance = None if row["provenance"] is None else json.loads(row["provenance"])
    except ValueError:
        return "its stored options or provenance are not valid JSON"
    expected = chain_hash(
        content_id=row["content_id"], parents=[stored[d] for d in deps],
        created_at=row["created_at"], author=row["author"], role=row["role"],
        kind=row["kind"], edited_from=row["edited_from"], options=options,
        response=(provenance or {}).get("response_hash"),
    )
    if expected != row["chain_hash"]:
        return "its chain hash does not match its fields and parents"
    return None


def _check_claims(loom: Loom, tree_id: str, row: ChainRow, report: Report) -> None:
    """What an intact node points at outside its row: its generation record, its blobs."""
    loaded = None if row["provenance"] is None else json.loads(row["provenance"])
    provenance: dict[str, Any] = loaded if isinstance(loaded, dict) else {}
    gen_id = provenance.get("generation")
    if isinstance(gen_id, str) and gen_id in report.erased.get("generation", ()):
        report.redacted.append({"kind": "generation", "node": row["id"], "tree": tree_id,
                                "generation": gen_id})
    elif isinstance(gen_id, str) and gen_id in report.scrubs.get("generation", {}):
        reason = _check_scrubbed_generation(loom, tree_id, gen_id,
                                            report.scrubs["generation"][gen_id])
        if reason:
            report.broken.append({"kind": "generation", "node": row["id"], "tree": tree_id,
                                  "generation": gen_id, "reason": reason})
        else:
            report.scrubbed.append({"kind": "generation", "node": row["id"], "tree": tree_id,
                                    "generation": gen_id})
    elif isinstance(gen_id, str):
        reason = _check_generation(loom, tree_id, gen_id, provenance.get("response_hash"))
        if reason:
            report.broken.append({"kind": "generation", "node": row["id"], "tree": tree_id,
                                  "generation": gen_id, "reason": reason})
    body = row["body"]
    if body is None or (b'"ref"' not in body and b"_ref" not in body):
        return  # no blob block can be in this content: skip the parse
    for bid in blob_refs(json.loads(body)):
        if bid in report.blobs:
            continue
        report.blobs.add(bid)
        reason = _check_blob(loom, bid)
        if reason:
            report.broken.append({"kind": "blob", "node": row["id"], "tree": tree_id,
                                  "blob": bid, "reason": reason})


def _check_generation(loom: Loom, tree_id: str, gen_id: str,
                      response_hash: Any) -> str | None:
    gen = storage(loom).generation(gen_id)
    if gen is None or gen["tree_id"] != tree_id:  # another tree's record is none of this one's
        return f"its generation record {gen_id} is missing"
    try:
        raw = digest(canonical(json.loads(gen["raw_response"])))
    except (TypeError, ValueError, LoomError):
        return f"generation {gen_id}: its raw response is not valid JSON"
    if raw != response_hash:
        return f"generation {gen_id}: its raw response does not match the hash the chain covers"
    if gen["response_hash"] != response_hash:
        return f"generation {gen_id}: its recorded response hash differs from the node's"
    return None


def _check_scrubbed_generation(loom: Loom, tree_id: str, gen_id: str, left: str) -> str | None:
    """A generation record whose spans were redacted holds exactly what the scrub left."""
    gen = storage(loom).generation(gen_id)
    if gen is None or gen["tree_id"] != tree_id:
        return f"its generation record {gen_id} is missing"
    try:
        raw = digest(canonical(json.loads(gen["raw_response"])))
    except (TypeError, ValueError, LoomError):
        raw = digest(str(gen["raw_response"]).encode("utf-8"))
    if raw != left:
        return f"generation {gen_id}: its raw response changed after its spans were redacted"
    return None


def _check_blob(loom: Loom, bid: str) -> str | None:
    try:
        loom.blob(bid)
    except NotFound:
        return f"blob {bid} is missing"
    except IntegrityError as exc:
        return f"blob {bid}: its bytes no longer match its id (they hash to {exc.got})"
    return None
