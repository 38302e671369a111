"""Verification of the hash chain (MODEL.md invariant 5).

Each node is checked on its own against what is stored: its content must hash to its
content id, and its chain hash must equal the hash recomputed from its fields and the
stored chain hashes of the nodes it was created from. A node that fails is
*tampered*; every node created from it (directly or through its descendants, its
hyperedge sources or its version selections) *inherits the break*, because its
recorded ancestry no longer matches what is there. The report names them all.
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from .chain import chain_hash
from .content import digest

ChainRows = Callable[[str], Iterable[dict[str, Any]]]


@dataclass
class Report:
    """What `verify` found: how many nodes it checked and every broken one, with why."""

    checked: int = 0
    broken: list[dict[str, str]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.broken

    def to_json(self) -> dict[str, Any]:
        return {"ok": self.ok, "checked": self.checked, "broken": self.broken}


def verify(chain_rows: ChainRows, tree_ids: Iterable[str]) -> Report:
    """Check every node of the trees `tree_ids`, reading each tree's stored rows with
    `chain_rows` (the storage call: this module needs nothing else)."""
    report = Report()
    for tid in tree_ids:
        _verify_tree(chain_rows, tid, report)
    return report


def _verify_tree(chain_rows: ChainRows, tree_id: str, report: Report) -> None:
    rows = {r["id"]: r for r in chain_rows(tree_id)}
    stored = {nid: r["chain_hash"] for nid, r in rows.items()}
    dependents: dict[str, list[str]] = {}
    tampered: dict[str, str] = {}
    for nid, row in rows.items():
        deps = _deps(row)
        for dep in deps:
            dependents.setdefault(dep, []).append(nid)
        reason = _check(row, deps, stored)
        if reason:
            tampered[nid] = reason
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
        report.broken.append({"node": nid, "tree": tree_id, "reason": tampered[nid]})
    for nid in sorted(inherited):
        report.broken.append({
            "node": nid, "tree": tree_id, "reason": f"inherits the break from {inherited[nid]}",
        })


def _deps(row: dict[str, Any]) -> list[str]:
    deps = [row["parent"]] if row["parent"] else []
    deps += [s for s, _ in row["sources"]]
    deps += list(row["selections"].values())
    return deps


def _check(row: dict[str, Any], deps: list[str], stored: dict[str, str]) -> str | None:
    body = row["body"]
    if body is None:
        return "its content is missing"
    if digest(body) != row["content_id"]:
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
