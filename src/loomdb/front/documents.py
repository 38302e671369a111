"""Versioned documents for a caller (`loom.documents`, `loom.as_(caller).documents`):
the documents service with the ownership rules of `loomdb.front.sight`."""

from __future__ import annotations

import builtins
from typing import Any

from ..documents import service as D
from ..documents.service import Shown
from ..documents.storage import Document, Revision
from ..loom import ContentLike
from .base import AreaDoor


class Documents(AreaDoor):
    """Documents with branches, merges and diffs; a user's are theirs alone."""

    def list(self) -> builtins.list[dict[str, Any]]:
        """The caller's documents with their current branch and revision."""
        rows = D.documents(self.loom)
        if not self.sight.shared:
            return rows
        mine = self.sight.my_documents()
        return [r for r in rows if r["document"] in mine]

    def new(self, name: str, content: ContentLike,
            message: str = "") -> tuple[Document, Revision]:
        """A document with its first revision on branch `main`, the caller's (a name
        someone else holds is refused as taken), in one transaction."""
        with self.sight.atomic():
            self.sight.refuse_taken_document(name)
            doc, rev = D.new(self.loom, name, self.sight.content(content), message)
            self.sight.who.claim_document(doc.id)
        return doc, rev

    def from_message(self, headish: str, name: str,
                     message: str = "") -> tuple[Document, Revision]:
        """A document (new, and then the caller's) or a new revision of one of theirs,
        whose content IS a message's they see (the same content id)."""
        node = self.sight.position(headish).node
        with self.sight.atomic():
            existed = self.sight.refuse_taken_document(name)
            doc, rev = D.from_message(self.loom, node, name, message)
            if not existed:
                self.sight.who.claim_document(doc.id)
        return doc, rev

    def commit(self, name: str, content: ContentLike, message: str = "",
               branch: str | None = None) -> Revision:
        """A new revision after the branch head (the current branch by default)."""
        with self.sight.atomic():
            self.sight.document(name)
            return D.commit(self.loom, name, self.sight.content(content), message, branch)

    def log(self, name: str, branch: str | None = None) -> builtins.list[Revision]:
        """Revisions reachable from a branch head (default: the current one), newest first."""
        self.sight.document(name)
        return D.log(self.loom, name, branch)

    def branch(self, name: str, branch: str, at: str | None = None) -> dict[str, Any]:
        """A new branch at a revision or branch (default: the current revision)."""
        with self.sight.atomic():
            self.sight.document(name)
            return D.branch(self.loom, name, branch, at)

    def checkout(self, name: str, target: str) -> dict[str, Any]:
        """Move the current pointer to a branch (commits follow it) or a revision."""
        with self.sight.atomic():
            self.sight.document(name)
            return D.checkout(self.loom, name, target)

    def merge(self, name: str, branch: str, message: str = "") -> Revision:
        """Merge a branch into the current one (MergeConflict writes nothing)."""
        with self.sight.atomic():
            self.sight.document(name)
            return D.merge(self.loom, name, branch, message)

    def graph(self, name: str) -> dict[str, Any]:
        """Every revision with its parents, the branches' heads and the current pointer."""
        self.sight.document(name)
        return D.graph(self.loom, name)

    def diff(self, name: str, rev1: str, rev2: str) -> str:
        """A unified diff between two revisions (or branches) of a text document."""
        self.sight.document(name)
        return D.diff(self.loom, name, rev1, rev2)

    def show(self, spec: str, at: str | None = None) -> Shown:
        """The content of `NAME`, `NAME@REVISION` or `NAME@BRANCH` (or `at` given apart)."""
        self.sight.document(D.split_spec(spec)[0])
        return D.show(self.loom, f"{spec}@{at}" if at else spec)

    def delete(self, name: str) -> None:
        """Delete a document (references to it then read as dangling), and its owner."""
        with self.sight.atomic():
            doc = self.sight.document(name)
            D.delete(self.loom, name)
            if doc is not None:
                self.sight.who.release_document(doc.id)


__all__ = ["Documents"]
