"""What an import did: one `Outcome` per conversation (or native tree), summed up in
an `ImportReport` (`to_json()` is the `--json` output). Shared by the writers and the
import driver, so neither imports the other for them."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Outcome:
    """What one conversation (or one native tree) added."""

    tree: str
    created: bool = False
    nodes: int = 0
    blobs: int = 0
    skipped: int = 0


@dataclass
class ImportReport:
    """The summary of an import; `to_json()` is the `--json` output."""

    format: str | None = None
    trees: list[str] = field(default_factory=list)
    nodes: int = 0
    blobs: int = 0
    skipped: int = 0
    errors: list[dict[str, str]] = field(default_factory=list)
    conversations: int = 0
    grown: int = 0

    def add(self, outcome: Outcome) -> None:
        """Count what one conversation added."""
        self.conversations += 1
        if outcome.created:
            self.trees.append(outcome.tree)
        elif outcome.nodes:
            self.grown += 1
        self.nodes += outcome.nodes
        self.blobs += outcome.blobs
        self.skipped += outcome.skipped

    def error(self, where: str, reason: str) -> None:
        """Record a conversation that could not be imported (its writes rolled back)."""
        self.conversations += 1
        self.errors.append({"where": where, "reason": " ".join(str(reason).split())})

    @property
    def ok(self) -> bool:
        """True when every conversation landed."""
        return not self.errors

    def to_json(self) -> dict[str, Any]:
        """`{"trees", "nodes", "blobs", "skipped", "errors"}`."""
        return {
            "trees": list(self.trees), "nodes": self.nodes, "blobs": self.blobs,
            "skipped": self.skipped, "errors": list(self.errors),
        }

    def text(self) -> str:
        """The summary as a person reads it."""
        lines = [
            f"imported {len(self.trees)} new tree(s), {self.nodes} node(s), {self.blobs} blob(s)"
            + (f" from {self.format}" if self.format else "")
            + (f"; {self.grown} existing tree(s) grew" if self.grown else "")
            + (f"; skipped {self.skipped} node(s) already present" if self.skipped else ""),
        ]
        if self.errors:
            lines.append(f"{len(self.errors)} error(s):")
            lines += [f"  {e['where']}: {e['reason']}" for e in self.errors]
        return "\n".join(lines)
