"""What the documents area offers the other areas (`loomdb.hooks`): `doc:` addresses,
the bodies it keeps, revisions sharing a message's content, and its part of a forget."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import NotFound
from ..hooks import AreaHooks, Scrub, Target
from ..store.forget import TOMBSTONE
from . import DOCUMENTS
from . import service as D
from . import storage as S

if TYPE_CHECKING:
    from ..loom import Loom


class DocumentHooks(AreaHooks):
    schemes = ("doc",)
    forget_tables = ("doc_contents",)

    def republish(self, loom: Loom) -> int:
        return D.reindex(loom)

    def resolve(self, loom: Loom, scheme: str, spec: str) -> Target:
        name, at = D.split_spec(spec)
        with loom.unit(DOCUMENTS) as db:
            doc = S.document(db, name)
            if at is None:
                return Target(f"doc:{name}", f"doc:{doc.id}", "document")
            if S.branch_head(db, doc.id, at) is not None:
                return Target(f"doc:{name}@{at}", f"doc:{doc.id}@{at}", "revision")
            rev = D.resolve_revision(db, doc, at)
        return Target(f"doc:{name}@{rev.id}", f"doc:{doc.id}@{rev.id}", "revision")

    def show(self, loom: Loom, scheme: str, rest: str) -> str:
        doc_id, _, at = rest.partition("@")
        with loom.unit(DOCUMENTS) as db:
            doc = S.document_by_id(db, doc_id)
            if doc is None:
                raise NotFound("document", doc_id)
            if at and S.branch_head(db, doc_id, at) is None and S.revision(db, doc_id, at) is None:
                raise NotFound(f"revision of doc:{doc.name}", at)
        return f"doc:{doc.name}" + (f"@{at}" if at else "")

    def holds_content(self, loom: Loom, content_id: str) -> bool:
        with loom.unit(DOCUMENTS) as db:
            return S.stored_body(db, content_id) is not None

    def backlinks(self, loom: Loom, target: Target) -> list[dict[str, Any]]:
        """Revisions sharing a message's content, or naming a content (use case 7)."""
        if target.kind == "node":
            cid = loom.node(target.address).content_id
        elif target.kind == "content":
            cid = target.address
        else:
            return []
        with loom.unit(DOCUMENTS) as db:
            rows = S.revisions_with_content(db, cid)
        return [{"from": f"doc:{name}@{rev}", "to": target.address, "type": "content"}
                for name, rev in rows]

    def keep_bodies(self, loom: Loom, content_ids: Sequence[str]) -> None:
        D.keep_bodies(loom, content_ids)

    def redact_content(self, loom: Loom, content_id: str) -> None:
        with loom.unit(DOCUMENTS) as db:
            S.set_body(db, content_id, TOMBSTONE)

    def scrub_content(self, loom: Loom, content_id: str, body: str) -> None:
        D.scrub_body(loom, content_id, body)

    def scrub_texts(self, loom: Loom, sub: Scrub) -> list[str]:
        return D.scrub_bodies(loom, sub)

    def holds_blob(self, loom: Loom, blob: str) -> bool:
        with loom.unit(DOCUMENTS) as db:
            return S.body_names(db, blob)


HOOKS = DocumentHooks()
