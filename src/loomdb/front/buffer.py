"""Buffer trees as one document for a caller (`loom.as_(caller).buffer`): its text
with authorship, its draft, and the continuations beside any position."""

from __future__ import annotations

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

    def _document(self, pos: Position, authorship: bool) -> dict[str, Any]:
        if authorship:
            doc = B.document(self.loom, pos)
            return {"text": doc.text, "draft": doc.draft,
                    "spans": [{**s.to_json(), "model": s.model} for s in doc.spans]}
        return {"text": B.text(self.loom, pos),
                "draft": B.get_draft(self.loom, pos, strict=False)}


def _is_int(text: str) -> bool:
    try:
        int(text)
    except ValueError:
        return False
    return True


__all__ = ["BufferDoor"]
