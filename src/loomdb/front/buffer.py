"""Buffer trees as one document for a caller (`loom.as_(caller).buffer`): its text
with authorship, its draft, the continuations beside any position, switching to one,
editing a span, and the likeliest next tokens (single-token looming)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .. import buffer as B
from ..errors import InvalidInput
from ..headish import Position
from .base import AreaDoor


class BufferDoor(AreaDoor):
    """The document at a session or node of a buffer tree."""

    def show(self, headish: str, *, authorship: bool = False) -> dict[str, Any]:
        """`{"text", "draft"}`, with `spans` when `authorship` (each says whether a
        model wrote it), as `loomdb buffer --json` shows it."""
        return self._document(self.sight.position(headish), authorship)

    def alternatives(self, headish: str, index: str | int = -1) -> B.Alternatives:
        """The branches and versions that could fill path position `index` (0 = root;
        or a node's name)."""
        at: int | str = index if isinstance(index, int) or _is_int(index) else \
            self.sight.position(index).node
        return B.alternatives(self.loom, self.sight.position(headish), at)

    def edit_draft(self, headish: str, *, append: str | None = None, set: str | None = None,
                   authorship: bool = False) -> dict[str, Any]:
        """Append to the draft, or replace it (exactly one); answers the document."""
        if (append is None) == (set is None):
            raise InvalidInput("body", "give exactly one of append, set")
        pos = self.sight.position(headish)
        if append is not None:
            B.append_draft(self.loom, pos, append)
        else:
            B.set_draft(self.loom, pos, set or "")
        return self._document(pos, authorship)

    def edit_span(self, headish: str, start: int, end: int, text: str, *,
                  authorship: bool = False) -> dict[str, Any]:
        """Replace the document's characters `start:end` with `text`: new versions of
        the nodes the range touches (the draft for its part of it), selected in the
        session or view named; answers the document."""
        pos = self.sight.position(headish)
        B.edit_span(self.loom, pos, start, end, text, author=self.sight.actor)
        return self._document(self.sight.position(headish), authorship)

    def switch(self, headish: str, node: str) -> dict[str, Any]:
        """Make the session or view `headish` show `node` (another branch or version
        of its tree): what `loomdb buffer switch` does."""
        pos = self.sight.position(headish)
        return B.switch(self.loom, pos, self.sight.position(node).node).to_json()

    def next_tokens(self, headish: str, *, top: int = 8,
                    models: Sequence[str] = ()) -> list[dict[str, Any]]:
        """The `top` likeliest next tokens of the document with their probabilities
        (one token asked of the model, nothing written). Over HTTP only a served model."""
        pos, rt = self.sight.position(headish), self.runtime
        if rt.served_only:
            from ..providers.served import check_request

            check_request(models, 1, self.loom.context(pos)["options"], rt.config,
                          rt.limits or self.loom.limits)
        return B.next_tokens(self.loom, pos, top=top, models=models, config=rt.config,
                             environ=rt.environ, lock=rt.model_lock)

    def _document(self, pos: Position, authorship: bool) -> dict[str, Any]:
        if authorship:
            doc = B.document(self.loom, pos)
            edits = {p.node for p in doc.nodes if p.edited_from is not None}
            return {"text": doc.text, "draft": doc.draft,
                    "spans": [{**s.to_json(), "model": s.model, "kind": _kind(s, edits)}
                              for s in doc.spans]}
        return {"text": B.text(self.loom, pos),
                "draft": B.get_draft(self.loom, pos, strict=False)}


def _kind(span: B.Span, edits: set[str]) -> str:
    """Who wrote a span, as the page colours it: `draft` (not committed yet), `edit`
    (text a version put in), `model`, or `user`."""
    if span.node is None:
        return "draft"
    if span.node in edits and span.origin == span.node:
        return "edit"
    return "model" if span.model else "user"


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


__all__ = ["BufferDoor"]
