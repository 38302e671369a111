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
    #: what the summary should say although nothing failed (a copy skipped, a clash landed)
    warnings: list[str] = field(default_factory=list)
    #: a subagent's tree: {"tree", "parent_tree", "parent_node", "session", "task",
    #: "summary_node"}, recorded by the caller as `loomdb spawn` records its children
    spawned: dict[str, Any] | None = None


@dataclass
class ImportReport:
    """The summary of an import; `to_json()` is the `--json` output."""

    format: str | None = None
    trees: list[str] = field(default_factory=list)
    nodes: int = 0
    blobs: int = 0
    skipped: int = 0
    errors: list[dict[str, str]] = field(default_factory=list)
    warnings: list[dict[str, str]] = field(default_factory=list)
    conversations: int = 0
    grown: int = 0
    empty: int = 0
    #: what was read, and how long the import took so far (wall clock)
    bytes: int = 0
    seconds: float = 0.0

    def add(self, outcome: Outcome, where: str = "") -> None:
        """Count what one conversation added (its warnings named by `where`)."""
        self.conversations += 1
        if outcome.created:
            self.trees.append(outcome.tree)
        elif outcome.nodes:
            self.grown += 1
        self.nodes += outcome.nodes
        self.blobs += outcome.blobs
        self.skipped += outcome.skipped
        for reason in outcome.warnings:
            self.warn(where, reason)

    def error(self, where: str, reason: str) -> None:
        """Record a conversation that could not be imported (its writes rolled back)."""
        self.conversations += 1
        self.errors.append({"where": _shown(where), "reason": _shown(reason)})

    def skip(self, where: str, reason: str) -> None:
        """A conversation with nothing to import: counted in `skipped`, not an error."""
        self.conversations += 1
        self.skipped += 1
        self.empty += 1
        self.warn(where, reason)

    def warn(self, where: str, reason: str) -> None:
        """Something the summary must say although nothing failed."""
        self.warnings.append({"where": _shown(where), "reason": _shown(reason)})

    @property
    def ok(self) -> bool:
        """True when every conversation landed."""
        return not self.errors

    def to_json(self) -> dict[str, Any]:
        """`{"trees", "nodes", "blobs", "skipped", "errors", "warnings"}`."""
        return {
            "trees": list(self.trees), "nodes": self.nodes, "blobs": self.blobs,
            "skipped": self.skipped, "errors": list(self.errors),
            "warnings": list(self.warnings),
        }

    def text(self) -> str:
        """The summary as a person reads it."""
        present = self.skipped - self.empty
        lines = [
            f"imported {len(self.trees)} new tree(s), {self.nodes} node(s), {self.blobs} blob(s)"
            + (f" from {self.format}" if self.format else "")
            + (f"; {self.grown} existing tree(s) grew" if self.grown else "")
            + (f"; skipped {present} message(s) already in the store" if present else "")
            + (f"; skipped {self.empty} conversation(s) with no messages" if self.empty else ""),
        ]
        if self.bytes or self.seconds:
            rate = f", {self.nodes / self.seconds:,.0f} messages/s" if self.seconds > 0 else ""
            lines.append(f"read {_size(self.bytes)} in {self.seconds:.1f} s "
                         f"({self.conversations} conversation(s){rate})")
        if self.warnings:
            lines.append(f"{len(self.warnings)} warning(s):")
            lines += [f"  {w['where']}: {w['reason']}" for w in self.warnings]
        if self.errors:
            lines.append(f"{len(self.errors)} error(s):")
            lines += [f"  {e['where']}: {e['reason']}" for e in self.errors]
        return "\n".join(lines)


def _shown(text: str) -> str:
    """A report line: one line, and text any encoder takes (a label or reason made from
    an export's own ids may hold a lone surrogate, which no UTF-8 answer can carry)."""
    line = " ".join(str(text).split())
    return line.encode("utf-8", "replace").decode("utf-8")


def _size(count: int) -> str:
    """Bytes as a person reads them (1.2 MB)."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} bytes"
