"""Issue 22 item 4: a native import names only nodes of the tree it imports.

A loomdb export may name any node as `parent`, `edited_from`, a source or a selection,
and its edges and provenance records name nodes too. Naming a node of another tree
would join that tree to the importer's: the victim's messages read into the importer's
context, the importer's nodes shown in the victim's tree. The import error used to echo
the chain hash it computed, which is all a forger needs to make the link valid. Now a
tree document naming any node outside its tree fails (nothing of it written) and no
error says a computed chain hash; the forger's second try has nothing to go on."""

from __future__ import annotations

import copy
import io
import json
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from ulid import ULID

import loomdb
from loomdb import Loom
from loomdb.storage_ops import storage
from loomdb.users import add_user

from .import_world import client, live_store, upload

HASH = re.compile(r"sha256:[0-9a-f]{64}")
BOGUS = "sha256:" + "0" * 64
GENERATION = str(ULID())  # the id of the forged generation record
BACKENDS = [b for b in os.environ.get("LOOMDB_TEST_BACKENDS", "sqlite,postgres").split(",") if b]

Doc = dict[str, Any]


def attacker_doc(folder: Path) -> Doc:
    """The attacker's own tree (made in a store of their own), as one export document."""
    with loomdb.open(str(folder / "attacker")) as lm:
        session = f"mine-{ULID().hex[-8:].lower()}"
        lm.new_tree("my question", session=session)
        lm.append(session, "my answer", role="assistant")
        out = io.StringIO()
        lm.export(out, format="jsonl")
    doc: Doc = json.loads(out.getvalue())
    return doc


def forged_node(doc: Doc, **fields: Any) -> Doc:
    """A copy of the document's last node under a new id, with `fields` changed."""
    node = copy.deepcopy(doc["nodes"][-1])
    node.update(id=str(ULID()), chain_hash=BOGUS, **fields)
    doc["nodes"].append(node)
    return node


# each way a tree document can name a node: (what, how to forge it)
def by_parent(doc: Doc, victim: dict[str, str]) -> None:
    forged_node(doc, parent=victim["reply"])


def by_edited_from(doc: Doc, victim: dict[str, str]) -> None:
    forged_node(doc, edited_from=victim["reply"])


def by_source(doc: Doc, victim: dict[str, str]) -> None:
    forged_node(doc, sources=[{"node": victim["reply"], "role": "context"}])


def by_selection(doc: Doc, victim: dict[str, str]) -> None:
    forged_node(doc, selections={victim["root"]: victim["version"]})


def by_link_edge(doc: Doc, victim: dict[str, str]) -> None:
    doc["edges"].append({"id": str(ULID()), "tree": doc["tree"]["id"], "type": "link",
                         "sources": [{"node": doc["nodes"][-1]["id"], "role": "primary"}],
                         "target": victim["reply"], "created_at": doc["tree"]["created_at"]})


def by_edge_source(doc: Doc, victim: dict[str, str]) -> None:
    doc["edges"].append({"id": str(ULID()), "tree": doc["tree"]["id"], "type": "annotation",
                         "sources": [{"node": victim["reply"], "role": "primary"}],
                         "target": doc["nodes"][-1]["id"], "created_at": doc["tree"]["created_at"]})


def by_generation(doc: Doc, victim: dict[str, str]) -> None:
    doc["generations"].append({
        "id": GENERATION, "tree_id": victim["tree"], "created_at": doc["tree"]["created_at"],
        "provider": "x", "model": "x", "request": "{}", "provider_request": "{}",
        "raw_response": "{}", "response_hash": BOGUS, "usage": None, "latency_ms": 1,
        "status": "ok"})


def by_compaction(doc: Doc, victim: dict[str, str]) -> None:
    doc["compactions"].append({
        "node_id": victim["reply"], "tree_id": victim["tree"], "model": "x",
        "tokens_before": 9, "tokens_after": 1, "duration_ms": 1, "trigger": "manual",
        "summarized": 2, "created_at": doc["tree"]["created_at"]})


FORGERIES: dict[str, Callable[[Doc, dict[str, str]], None]] = {
    f.__name__[3:]: f for f in (by_parent, by_edited_from, by_source, by_selection,
                                 by_link_edge, by_edge_source, by_generation, by_compaction)
}


def victim_tree(lm: Loom, session: str) -> dict[str, str]:
    tree, root = lm.new_tree("victim's secret question", session=session)
    reply = lm.append(session, "victim's secret answer", role="assistant")
    version = lm.edit(root.id, "victim's secret question, edited")
    return {"tree": tree.id, "root": root.id, "reply": reply.id, "version": version.id}


def joined(lm: Loom, victim: dict[str, str]) -> list[str]:
    """What of the victim's tree anything outside it now names: links, versions,
    sources and selections pointing in, edges touching it from outside, records."""
    found = []
    mine = {n.id for n in lm.tree_nodes(victim["tree"])}
    for tree in lm.trees():
        if tree.id == victim["tree"]:
            continue
        for node in lm.tree_nodes(tree.id):
            named = {node.parent, node.edited_from, *(s for s, _ in node.sources),
                     *node.selections.values()}
            found += [f"{node.id} names {n}" for n in named & mine]
    for nid in mine:
        found += [f"edge {e.id}" for e in lm.edges(nid) if e.tree != victim["tree"]]
    if storage(lm).generation(GENERATION) is not None:
        found.append(f"generation {GENERATION}")
    comp = storage(lm).compaction(victim["reply"])
    if comp is not None:
        found.append(f"compaction {comp}")
    return found


def echoed(reason: str, sent: str) -> list[str]:
    """Hashes an error says that the file did not hold (computed ones)."""
    return [h for h in HASH.findall(reason) if h not in sent]


def attempt(importing: Callable[[str], dict[str, Any]], doc: Doc) -> tuple[dict[str, Any], list[str]]:
    """Import `doc`; when the error echoes a computed hash, do as a forger would: put it
    in the file and import again. (the last report, every hash echoed)"""
    text = json.dumps(doc) + "\n"
    report = importing(text)
    leaked = [h for e in report["errors"] for h in echoed(e["reason"], text)]
    if leaked:
        for node in doc["nodes"]:
            if node["chain_hash"] == BOGUS:
                node["chain_hash"] = leaked[0]
        report = importing(json.dumps(doc) + "\n")
    return report, leaked


@pytest.mark.parametrize("how", sorted(FORGERIES))
def test_a_native_import_cannot_name_another_trees_node(
    loom: Loom, tmp_path: Path, how: str
) -> None:
    victim = victim_tree(loom, "victim")
    doc = attacker_doc(tmp_path)
    FORGERIES[how](doc, victim)
    path = tmp_path / "forged.jsonl"

    def importing(text: str) -> dict[str, Any]:
        path.write_text(text)
        return loom.import_file(path).to_json()

    before = loom.tree(victim["tree"]).nodes
    report, leaked = attempt(importing, doc)
    assert leaked == [], "an error echoed a computed chain hash"
    (error,) = report["errors"]
    assert report["trees"] == [] and report["nodes"] == 0
    assert "this tree" in error["reason"]
    assert joined(loom, victim) == []
    assert loom.tree(victim["tree"]).nodes == before
    assert [t.id for t in loom.trees()] == [victim["tree"]]  # nothing of the forged tree


def test_an_altered_export_says_does_not_match_without_the_hash(
    loom: Loom, tmp_path: Path
) -> None:
    doc = attacker_doc(tmp_path)
    doc["nodes"][-1]["chain_hash"] = BOGUS
    text = json.dumps(doc) + "\n"
    (tmp_path / "x.jsonl").write_text(text)
    (error,) = loom.import_file(tmp_path / "x.jsonl").errors
    assert "does not match" in error["reason"] and echoed(error["reason"], text) == []


def test_a_whole_store_export_keeps_its_cross_tree_links(loom: Loom, tmp_path: Path) -> None:
    """The one exception: a link to a tree the same import brings (even a later one)."""
    with loomdb.open(str(tmp_path / "source")) as src:
        _, first = src.new_tree("first tree")
        _, second = src.new_tree("second tree")
        edge = src.link(second.id, first.id, type="link")
        out = io.StringIO()
        src.export(out, format="json")
    (tmp_path / "all.json").write_text(out.getvalue())
    report = loom.import_file(tmp_path / "all.json")
    assert report.errors == [] and report.warnings == [] and len(report.trees) == 2
    assert [e.id for e in loom.edges(first.id)] == [edge.id]


@pytest.fixture(scope="module", params=BACKENDS)
def served(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Loom, str]]:
    with live_store(request.param, tmp_path_factory.mktemp(f"links-{request.param}")) as s:
        yield s


@pytest.mark.parametrize("how", ["parent", "source", "link_edge"])
def test_over_http_one_user_cannot_link_into_anothers_tree(
    served: tuple[Loom, str], tmp_path: Path, how: str
) -> None:
    lm, base = served
    tag = ULID().hex[-8:].lower()
    _, alice = add_user(lm, f"alice-{tag}")
    _, mallory = add_user(lm, f"mallory-{tag}")
    with client(base, alice) as c:
        made = c.post("/api/trees", json={"text": "alice's secret", "session": f"a-{tag}"}).json()
        reply = c.post(f"/api/nodes/a-{tag}/append",
                       json={"role": "assistant", "text": "alice's answer"}).json()["node"]
    victim = {"tree": made["tree"], "root": made["node"], "reply": reply, "version": reply}
    doc = attacker_doc(tmp_path)
    FORGERIES[how](doc, victim)

    def importing(text: str) -> dict[str, Any]:
        r = upload(base, "forged.jsonl", text.encode(), mallory)
        assert r.status_code in (201, 400), r.text
        body: dict[str, Any] = r.json()
        return body if r.status_code == 201 else {"errors": [body["error"]], "trees": []}

    report, leaked = attempt(importing, doc)
    assert leaked == [] and report["trees"] == [] and report["errors"]
    assert joined(lm, victim) == []
    with client(base, mallory) as c:
        assert c.get("/api/trees").json()["trees"] == []
