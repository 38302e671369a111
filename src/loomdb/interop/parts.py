"""A conversation too long to hold, written part by part (`ImportedConversation.more`).

    parts = Parts(loom, first, seen, written)   # inside the caller's transaction
    outcome = parts.add(first)                  # None until the last part
    ... outcome = parts.add(next_part) ...

Every part is written as it comes, in the caller's one transaction (so the
conversation is still all or nothing); between parts the writer keeps the stored
nodes' places (not their content) and each message's parent and time. What only the
end tells is written at the end: whether the conversation is a copy of one met earlier
in the file, the tree's lineage (the current message, what was left out), its session.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING

from ..errors import InvalidInput
from ..secrets import Finding
from ..storage_ops import storage
from .fingerprint import Fingerprint
from .model import ImportedConversation
from .report import Outcome
from .spawns import Written, spawned_lineage, with_session
from .writer import _ConversationWriter, finished

if TYPE_CHECKING:
    from ..loom import Loom


class Parts:
    """A conversation given in parts (`ImportedConversation.more`), written part by
    part inside the caller's one transaction: `add(part)` for each, in order; the last
    one's call returns the Outcome. What is held between parts is the stored nodes'
    places (not their content) and each message's parent and time."""

    def __init__(self, loom: Loom, first: ImportedConversation,
                 seen: dict[str, tuple[str, str]] | None = None,
                 written: Written | None = None,
                 sees: Callable[[str], bool] | None = None) -> None:
        self.loom = loom
        self.source_id = first.source_id
        self.writer = _PartsWriter(loom, first, seen)
        self.writer.sees = sees  # the trees a line may name (`roundtrip.carried`)
        self.written = written
        if first.spawn is not None:
            self.writer.spawned = with_session(loom, spawned_lineage(first, written or {}))

    def add(self, part: ImportedConversation) -> Outcome | None:
        """Write one part; the conversation's Outcome after its last part, else None."""
        if part.source_id != self.source_id:
            raise InvalidInput(f"conversation {part.source_id!r}",
                               f"came before the end of {self.source_id!r}")
        writer = self.writer
        try:
            writer.part(part)
            if part.more:
                if self.written is not None:
                    for source, node in writer.nodes.items():
                        self.written[(part.source_id, source)] = (node.tree, node.id)
                writer.hold()
                part.messages, part.attachments = [], []  # written: let them go
                return None
            writer.finish()
        except BaseException:
            writer.forget()
            raise
        return finished(self.loom, writer, part, self.written)


class _PartsWriter(_ConversationWriter):
    """The writer of one conversation given in parts."""

    def __init__(self, loom: Loom, first: ImportedConversation,
                 seen: dict[str, tuple[str, str]] | None) -> None:
        super().__init__(loom, first, seen)
        #: what the parts so far hold, for the copy check at the end
        self.parts = Fingerprint()
        self.count = 0  # messages in the parts so far

    def part(self, part: ImportedConversation) -> None:
        """One part of a conversation given in parts (see `Parts`)."""
        if self.started:
            self.conv = part
            self.attachments = {a.key: a for a in part.attachments}
            self.by_source = {m.source_id: m for m in part.messages}
            self._note(part)
        self.parts.feed(part)
        self.count += len(part.messages)
        if self.gone:
            self.outcome.skipped += len(part.messages)
            return
        self._write_messages(part)

    def hold(self) -> None:
        """Between parts: keep the stored nodes' places, not what they hold."""
        self.prepared.clear()
        self.nodes = {k: replace(n, content=[]) for k, n in self.nodes.items()}
        self.by_source = {}

    def finish(self) -> None:
        """After the last part: the copy check, the tree's lineage as the end tells
        it, the session."""
        conv, key = self.conv, self.tree_id
        mark = self.parts.mark(conv)
        label = f"conversation {conv.source_id!r}"
        if key in self.seen:
            first, first_mark = self.seen[key]
            if first_mark != mark:
                raise InvalidInput(
                    label, f"appears twice in this file with different content (its first "
                    f"copy was {first}); import them from separate files to keep both")
            self.outcome.skipped = self.count
            self.outcome.warnings.append(f"an exact copy of {first} earlier in this file; skipped")
            return
        self.seen[key] = (label, mark)
        self.registered = True
        if self.gone:
            return
        if self.outcome.created:
            self._relineage()
        self._finish()

    def _relineage(self) -> None:
        """A tree made from the first of several parts: its lineage as the last part
        tells it (the current message, what was left out), scanned as a new tree's is."""
        assert self.tree is not None
        lineage = self._lineage()
        if lineage == self.tree.lineage:
            return
        found: list[Finding] = []
        lineage = storage(self.loom).scanner().value(lineage, "lineage", found)
        storage(self.loom).set_lineage(self.tree_id, lineage)
        storage(self.loom).note_findings(found, self.tree_id, self.tree_id)
