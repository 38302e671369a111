"""Prompt pieces for a caller (`loom.as_(caller).pieces`): the pieces service with the
caller's scope (a user's pieces are theirs alone; names are unique in the store, and
another user's reads exactly as an unknown name). Every edge makes one call here."""

from __future__ import annotations

import builtins
from pathlib import Path
from typing import Any

from ..pieces import service as P
from .base import AreaDoor


class Pieces(AreaDoor):
    """Named, versioned prompt texts and templates that threads name instead of copying."""

    def add(self, name: str, text: str, *, kind: str = "piece") -> dict[str, Any]:
        """A new version of piece `name` (made when new; the same text again adds nothing)."""
        with self.sight.atomic():
            piece, version, added = P.add(self.loom, self.sight.pieces, name, text, kind=kind)
        return {"name": piece.name, "kind": piece.kind, **version.to_json(), "added": added}

    def list(self) -> builtins.list[dict[str, Any]]:
        """The caller's pieces and templates, by name, with their newest version."""
        return P.listed(self.loom, self.sight.pieces)

    def log(self, name: str) -> builtins.list[dict[str, Any]]:
        """A piece's versions, oldest first."""
        return [v.to_json() for v in P.log(self.loom, self.sight.pieces, name)]

    def show(self, spec: str) -> dict[str, Any]:
        """A version of a piece (`NAME`, the newest; `NAME@N` or `NAME@HASH-PREFIX`)."""
        return P.show(self.loom, self.sight.pieces, spec)

    def used_by(self, name: str) -> builtins.list[dict[str, str]]:
        """The messages of the caller's threads naming a piece (a block or a system piece)."""
        visible = self.sight.who.visible if self.sight.shared else None
        return P.used_by(self.loom, self.sight.pieces, name, visible)

    def import_llm(self, logs: Path | None = None,
                   templates: Path | None = None) -> dict[str, Any]:
        """simonw/llm's fragments (from its logs.db) and templates (a folder of its YAML
        files) as pieces and templates: the operator's, from the paths they name."""
        from ..pieces import llm

        self.sight.operator_only("only the operator imports files of this machine")
        out: dict[str, Any] = {}
        if logs is not None:
            out["fragments"] = llm.import_fragments(self.loom, P.OPERATOR, logs)
        if templates is not None:
            out["templates"] = llm.import_templates(self.loom, P.OPERATOR, templates)
        return out


__all__ = ["Pieces"]
