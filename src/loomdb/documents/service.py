"""Document operations over a Loom: each one is one unit of work (one transaction).

A revision's content is a Content of the shared layer: its id is the same content id a
message with the same blocks has, and its body is read from the core when a node holds
it (`loom.content_body`), else from the area's own `doc_contents`. `from_message` so
makes a revision of a message's content without copying a byte.
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import content as C
from .. import hooks
from ..errors import InvalidInput, MergeConflict, MissingExtra, NotFound
from ..limits import check_reference
from ..model import new_id, now
from ..naming import check_name
from ..storage_ops import storage
from ..store.areas import Unit
from . import DOCUMENTS
from . import storage as S
from .storage import Document, Revision

if TYPE_CHECKING:
    from ..loom import ContentLike, Loom

MAIN = "main"


@dataclass(frozen=True)
class Shown:
    document: str
    revision: str
    blocks: list[dict[str, Any]]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"document": self.document, "revision": self.revision}
        text = text_of(self.blocks)
        if text is None:
            out["content"] = self.blocks
        else:
            out["text"] = text
        return out


def text_of(blocks: list[dict[str, Any]]) -> str | None:
    """The text of a text document (one text block), else None."""
    if len(blocks) == 1 and blocks[0].get("type") == "text" and len(blocks[0]) == 2:
        return str(blocks[0]["text"])
    return None


# == writing ========================================================================
def new(loom: Loom, name: str, content: ContentLike, message: str = "") -> tuple[Document, Revision]:
    """Create a document with its first revision on branch `main`."""
    check_name("document", name)
    blocks, found = storage(loom).screen(loom.prepare(content), "content")
    with loom.unit(DOCUMENTS) as db:
        if S.find_document(db, name) is not None:
            raise InvalidInput(f"document {name!r}", "already exists; commit to it instead")
        doc, rev = _create(loom, db, name, blocks, message or "create")
        storage(loom).note_findings(found, doc.id, rev.id)
        return doc, rev


def _create(loom: Loom, db: Unit, name: str, blocks: list[dict[str, Any]],
            message: str, content_id: str | None = None) -> tuple[Document, Revision]:
    doc = Document(new_id(), name, MAIN, None, now())
    S.insert_document(db, doc)
    rev = _write_revision(loom, db, doc, blocks, message, (), content_id)
    S.create_branch(db, doc.id, MAIN, rev.id)
    return doc, rev


def commit(loom: Loom, name: str, content: ContentLike, message: str = "",
           branch: str | None = None) -> Revision:
    """A new revision whose parent is the branch head (the current branch by default);
    refused when the content did not change."""
    blocks, found = storage(loom).screen(loom.prepare(content), "content")
    with loom.unit(DOCUMENTS) as db:
        doc = S.document(db, name)
        rev = _commit(loom, db, doc, blocks, message, branch)
        storage(loom).note_findings(found, doc.id, rev.id)
        return rev


def _commit(loom: Loom, db: Unit, doc: Document, blocks: list[dict[str, Any]], message: str,
            branch: str | None, content_id: str | None = None) -> Revision:
    branch = branch or _current_branch(doc)
    head = S.branch_head(db, doc.id, branch)
    if head is None:
        raise NotFound(f"branch of doc:{doc.name}", branch, list(S.branches(db, doc.id)))
    parent = S.revision(db, doc.id, head)
    assert parent is not None
    cid = content_id or C.encode(blocks, loom.max_content_bytes)[0]
    if cid == parent.content_id:
        raise InvalidInput(f"doc:{doc.name} commit", f"nothing changed since {head}")
    rev = _write_revision(loom, db, doc, blocks, message or "commit", (head,), content_id)
    S.move_branch(db, doc.id, doc.name, branch, head, rev.id)
    return rev


def _current_branch(doc: Document) -> str:
    if doc.current_branch is None:
        raise InvalidInput(f"doc:{doc.name}",
                           f"is checked out at revision {doc.current_rev}, not a branch; "
                           "give --branch or check out a branch")
    return doc.current_branch


def _write_revision(loom: Loom, db: Unit, doc: Document, blocks: list[dict[str, Any]],
                    message: str, parents: tuple[str, ...],
                    content_id: str | None = None) -> Revision:
    if content_id is None:
        content_id, body = C.encode(blocks, loom.max_content_bytes)
        if loom.content_body(content_id) is None:
            S.put_body(db, content_id, body.decode("utf-8"), now())
    rev = Revision(new_id(), doc.id, content_id, message, now(), parents)
    S.insert_revision(db, rev)
    _index(loom, doc.name, rev.id, blocks)
    return rev


def _index(loom: Loom, name: str, rev_id: str, blocks: list[dict[str, Any]]) -> None:
    """Give the revision's text to the areas that index text (search), in this unit."""
    hooks.entity_written(loom, f"doc:{name}@{rev_id}", "document", C.plain_text(blocks))


def reindex(loom: Loom) -> int:
    """Put every revision of every document in the search index (again); how many. A
    store copy rebuilds the index with it rather than copying the index."""
    done = 0
    with loom.unit(DOCUMENTS) as db:
        for doc_id, name in S.all_documents(db):
            for rev in S.revisions(db, doc_id).values():
                _index(loom, name, rev.id, blocks_of(loom, db, rev.content_id))
                done += 1
    return done


def branch(loom: Loom, name: str, branch_name: str, at: str | None = None) -> dict[str, str]:
    """A new branch at a revision (default: the current one)."""
    check_name("branch", branch_name)
    with loom.unit(DOCUMENTS) as db:
        doc = S.document(db, name)
        rev = resolve_revision(db, doc, at)
        if not S.create_branch(db, doc.id, branch_name, rev.id):
            raise InvalidInput(f"doc:{name} branch {branch_name!r}", "already exists")
        return {"document": name, "branch": branch_name, "revision": rev.id}


def checkout(loom: Loom, name: str, target: str) -> dict[str, str | None]:
    """Move the document's current pointer to a branch (commits follow it) or a revision."""
    with loom.unit(DOCUMENTS) as db:
        doc = S.document(db, name)
        head = S.branch_head(db, doc.id, target)
        if head is not None:
            S.set_current(db, doc.id, target, None)
            return {"document": name, "branch": target, "revision": head}
        rev = resolve_revision(db, doc, target)
        S.set_current(db, doc.id, None, rev.id)
        return {"document": name, "branch": None, "revision": rev.id}


def from_message(loom: Loom, headish: str, name: str, message: str = "") -> tuple[Document, Revision]:
    """A document (or a new revision of one) whose content is a message's content: the
    same content id, nothing copied."""
    node = loom.node(headish)
    msg = message or f"from message {node.id}"
    with loom.unit(DOCUMENTS) as db:
        doc = S.find_document(db, check_name("document", name))
        if doc is None:
            return _create(loom, db, name, node.content, msg, node.content_id)
        return doc, _commit(loom, db, doc, node.content, msg, None, node.content_id)


def delete(loom: Loom, name: str) -> None:
    """Remove a document with its revisions and branches; references to it then read as
    dangling, and contents only it used become garbage for `gc`."""
    with loom.unit(DOCUMENTS) as db:
        doc = S.document(db, name)
        S.delete_document(db, doc.id)
        hooks.entities_removed(loom, f"doc:{name}@")


# == merging ========================================================================
def merge(loom: Loom, name: str, theirs_branch: str, message: str) -> Revision:
    """Merge a branch into the current branch: a revision with both heads as parents.
    Conflicting changes raise MergeConflict and write nothing."""
    with loom.unit(DOCUMENTS) as db:
        doc = S.document(db, name)
        ours_branch = _current_branch(doc)
        revs = S.revisions(db, doc.id)
        ours = S.branch_head(db, doc.id, ours_branch)
        theirs = S.branch_head(db, doc.id, theirs_branch)
        if theirs is None:
            raise NotFound(f"branch of doc:{name}", theirs_branch, list(S.branches(db, doc.id)))
        assert ours is not None
        if theirs in _ancestors(revs, ours):
            raise InvalidInput(f"doc:{name} merge {theirs_branch}",
                               f"already merged into {ours_branch}; nothing to do")
        base = _merge_base(revs, ours, theirs)
        blocks = _merge_content(loom, db, name, [revs[r].content_id for r in (base, ours, theirs)])
        cid, body = C.encode(blocks, loom.max_content_bytes)
        if loom.content_body(cid) is None:
            S.put_body(db, cid, body.decode("utf-8"), now())
        rev = _write_revision(loom, db, doc, blocks, message or f"merge {theirs_branch}",
                              (ours, theirs), cid)
        S.move_branch(db, doc.id, name, ours_branch, ours, rev.id)
        return rev


def _ancestors(revs: dict[str, Revision], start: str) -> set[str]:
    seen: set[str] = set()
    todo = [start]
    while todo:
        rid = todo.pop()
        if rid not in seen:
            seen.add(rid)
            todo.extend(revs[rid].parents)
    return seen


def _merge_base(revs: dict[str, Revision], a: str, b: str) -> str:
    common = _ancestors(revs, a) & _ancestors(revs, b)
    # best common ancestors: those no other common ancestor descends from
    best = [c for c in common
            if not any(c != o and c in _ancestors(revs, o) for o in common)]
    return max(best)  # ULIDs sort by time: the newest when criss-crossed


def _merge_content(loom: Loom, db: Unit, name: str, ids: list[str]) -> list[dict[str, Any]]:
    base, ours, theirs = (blocks_of(loom, db, cid) for cid in ids)
    texts = [text_of(b) for b in (base, ours, theirs)]
    if None in texts:
        if ids[1] == ids[2] or ids[2] == ids[0]:
            return ours
        if ids[1] == ids[0]:
            return theirs
        raise MergeConflict(f"doc:{name} merge", [{"base": "(content)", "ours": "(content)",
                                    "theirs": "(content)"}])
    return C.text(_merge_text(name, *(t or "" for t in texts)))


def _merge_text(name: str, base: str, ours: str, theirs: str) -> str:
    try:
        from merge3 import Merge3
    except ImportError:
        raise MissingExtra("document merge", "documents") from None
    lines = [t.splitlines(keepends=True) for t in (base, ours, theirs)]
    out: list[str] = []
    conflicts: list[dict[str, str]] = []
    for group in Merge3(lines[0], lines[1], lines[2]).merge_groups():
        if group[0] == "conflict":
            conflicts.append({"base": "".join(group[1]), "ours": "".join(group[2]),
                              "theirs": "".join(group[3])})
        else:
            out.extend(group[1])
    if conflicts:
        raise MergeConflict(f"doc:{name} merge", conflicts)
    return "".join(out)


# == reading ========================================================================
def scrub_body(loom: Loom, content_id: str, body: str) -> None:
    """A content's body had spans replaced (a span redaction): the area's copy too, and
    the revisions using it indexed again from it."""
    with loom.unit(DOCUMENTS) as db:
        if S.stored_body(db, content_id) is not None:
            S.set_body(db, content_id, body)
        for name, rev in S.revisions_with_content(db, content_id):
            _index(loom, name, rev, json.loads(body))


def scrub_bodies(loom: Loom, sub: hooks.Scrub) -> list[str]:
    """Spans replaced in every body the area keeps (`sub`); the revisions changed."""
    changed: list[str] = []
    with loom.unit(DOCUMENTS) as db:
        for cid, body in db.execute("SELECT id, body FROM doc_contents"):
            new, n = C.scrub_strings(json.loads(body), sub)
            if n:
                text = C.canonical(new).decode("utf-8")
                S.set_body(db, str(cid), text)
                for name, rev in S.revisions_with_content(db, str(cid)):
                    _index(loom, name, rev, new)
                    changed.append(f"doc:{name}@{rev}")
    return changed


def blocks_of(loom: Loom, db: Unit, content_id: str) -> list[dict[str, Any]]:
    """A revision's content: the area's copy, else the core's (shared with messages)."""
    body = S.stored_body(db, content_id)
    if body is not None:
        return list(json.loads(body))
    blocks = loom.content_body(content_id)
    if blocks is None:
        raise NotFound("content", content_id)
    return blocks


def resolve_revision(db: Unit, doc: Document, spec: str | None) -> Revision:
    """A revision from a branch name, a revision id or unique prefix, or None (current)."""
    if spec is None:
        spec = doc.current_rev or doc.current_branch or MAIN
    check_reference(f"branch or revision of doc:{doc.name}", spec)
    head = S.branch_head(db, doc.id, spec)
    rid = head or spec
    rev = S.revision(db, doc.id, rid)
    if rev is None and len(spec) >= 4:
        found = S.revision_ids_like(db, doc.id, spec)
        if len(found) > 1:
            from ..errors import AmbiguousName

            raise AmbiguousName(f"revision of doc:{doc.name}", spec, found)
        rev = S.revision(db, doc.id, found[0]) if found else None
    if rev is None:
        raise NotFound(f"branch or revision of doc:{doc.name}", spec,
                       list(S.branches(db, doc.id)))
    return rev


def split_spec(spec: str) -> tuple[str, str | None]:
    """`NAME[@REV|@BRANCH]` -> (name, rev or branch or None)."""
    name, _, at = spec.partition("@")
    return name, at or None


def show(loom: Loom, spec: str) -> Shown:
    """A document's content at `NAME`, `NAME@REV` or `NAME@BRANCH`."""
    name, at = split_spec(spec)
    with loom.unit(DOCUMENTS) as db:
        doc = S.document(db, name)
        rev = resolve_revision(db, doc, at)
        return Shown(name, rev.id, blocks_of(loom, db, rev.content_id))


def revision_of(loom: Loom, name: str, at: str | None) -> tuple[Document, Revision] | None:
    """The document and revision an address names, or None when either is gone."""
    with loom.unit(DOCUMENTS) as db:
        doc = S.find_document(db, name)
        if doc is None:
            return None
        try:
            return doc, resolve_revision(db, doc, at)
        except NotFound:
            return None


def log(loom: Loom, name: str, branch_name: str | None = None) -> list[Revision]:
    """The revisions reachable from a branch head (default: current), newest first."""
    with loom.unit(DOCUMENTS) as db:
        doc = S.document(db, name)
        start = resolve_revision(db, doc, branch_name)
        revs = S.revisions(db, doc.id)
    return sorted((revs[r] for r in _ancestors(revs, start.id)),
                  key=lambda r: r.id, reverse=True)


def graph(loom: Loom, name: str) -> dict[str, Any]:
    """The whole revision graph: every revision (oldest first) with its parents, every
    branch's head and where the current pointer is (what a picture of the history
    needs in one read; a document's history is read whole anyway)."""
    with loom.unit(DOCUMENTS) as db:
        doc = S.document(db, name)
        revs = S.revisions(db, doc.id)
        current = resolve_revision(db, doc, None)
        return {"document": name, "branch": doc.current_branch, "revision": current.id,
                "branches": S.branches(db, doc.id),
                "revisions": [r.log_json() for r in sorted(revs.values(), key=lambda r: r.id)]}


def diff(loom: Loom, name: str, rev1: str, rev2: str) -> str:
    """A unified diff between two revisions (or branches) of a text document."""
    with loom.unit(DOCUMENTS) as db:
        doc = S.document(db, name)
        a, b = resolve_revision(db, doc, rev1), resolve_revision(db, doc, rev2)
        texts = [text_of(blocks_of(loom, db, r.content_id)) for r in (a, b)]
    if texts[0] is None or texts[1] is None:
        raise InvalidInput(f"doc:{name} diff", "only text documents have a line diff")
    return "".join(difflib.unified_diff(
        texts[0].splitlines(keepends=True), texts[1].splitlines(keepends=True),
        fromfile=f"doc:{name}@{a.id}", tofile=f"doc:{name}@{b.id}"))


def find(loom: Loom, name: str) -> Document | None:
    """The document of that name, or None."""
    with loom.unit(DOCUMENTS) as db:
        return S.find_document(db, name)


def ids_by_name(loom: Loom) -> dict[str, str]:
    """Every document's id by its name."""
    with loom.unit(DOCUMENTS) as db:
        return {name: doc_id for doc_id, name in S.all_documents(db)}


def held_contents(loom: Loom, names: list[str]) -> set[str]:
    """The content ids of every revision of these documents, and the blobs they point at."""
    held: set[str] = set()
    with loom.unit(DOCUMENTS) as db:
        for name in names:
            doc = S.find_document(db, name)
            for rev in S.revisions(db, doc.id).values() if doc else ():
                if rev.content_id not in held:
                    held.add(rev.content_id)
                    held.update(C.blob_refs(blocks_of(loom, db, rev.content_id)))
    return held


def documents(loom: Loom) -> list[dict[str, Any]]:
    """Every document with its current branch and revision."""
    with loom.unit(DOCUMENTS) as db:
        out = []
        for _, name in S.all_documents(db):
            doc = S.document(db, name)
            out.append({"document": name, "branch": doc.current_branch,
                        "revision": resolve_revision(db, doc, None).id})
        return out


# == what garbage collection and forgetting ask ======================================
def unused_bodies(loom: Loom, cutoff: str) -> list[tuple[str, str]]:
    """(content id, body) of every kept body no revision uses, made before `cutoff`."""
    with loom.unit(DOCUMENTS) as db:
        return S.unused_bodies(db, cutoff)


def drop_unused_body(loom: Loom, content_id: str, cutoff: str) -> bool:
    """Delete a kept body if still unused and older than `cutoff`; whether it went."""
    with loom.unit(DOCUMENTS) as db:
        return S.delete_unused_body(db, content_id, cutoff)


def blob_texts(loom: Loom) -> list[str]:
    """Every kept body that may name a blob (in the caller's transaction)."""
    with loom.unit(DOCUMENTS) as db:
        return S.bodies_naming_blobs(db)


def bodies_kept(loom: Loom, dropped: set[str]) -> list[list[dict[str, Any]]]:
    """The content of every revision: the kept bodies (but `dropped`) and the core's
    contents revisions share."""
    with loom.unit(DOCUMENTS) as db:
        kept = [json.loads(b) for cid, b in S.bodies(db) if cid not in dropped]
        shared = S.contents_without_body(db)
    return kept + [b for cid in shared if (b := loom.content_body(cid)) is not None]


def keep_bodies(loom: Loom, content_ids: Sequence[str]) -> None:
    """Give each revision whose content only a node holds its own copy, so deleting
    the node leaves the revision whole (a forget's first step)."""
    with loom.unit(DOCUMENTS) as db:
        for cid in sorted(set(S.contents_without_body(db, content_ids))):
            blocks = loom.content_body(cid)
            if blocks is not None:
                S.put_body(db, cid, C.canonical(blocks).decode("utf-8"), now())
