"""The property of forgetting, on both backends: random trees (branches, versions,
shared contents), random deletes and redactions; after each one `verify` passes, the
context of every remaining node equals the naive model's path with what was forgotten
taken out (redacted messages as `[redacted]`), and no forgotten text is found in the
store (its SQLite files and blobs, or a pg_dump of its database)."""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import loomdb
from helpers import texts_of
from loomdb import Loom
from loomdb.forget import service as F
from test_forget import dump

#: numbers every example's texts, so examples sharing a store never share a text
EXAMPLE = itertools.count()
#: (op, which node, which text): `add` a child, `same` a child repeating an earlier
#: text (a shared content), `edit` a version, `delete`, `redact`
ops = st.lists(
    st.tuples(st.sampled_from(["add", "add", "add", "same", "edit", "delete", "redact"]),
              st.integers(0, 10_000), st.integers(0, 10_000)),
    min_size=2, max_size=10,
)


class Model:
    """The tree as plain dicts: parent and text per node, what was forgotten."""

    def __init__(self) -> None:
        self.parent: dict[str, str | None] = {}
        self.text: dict[str, str] = {}
        self.slot: dict[str, str] = {}
        self.edited: set[str] = set()
        self.gone_texts: set[str] = set()
        #: the text each node was written with (its content id's identity)
        self.key: dict[str, str] = {}
        self.redacted: set[str] = set()

    def add(self, nid: str, parent: str | None, text: str, slot: str | None = None) -> None:
        self.parent[nid] = parent
        self.text[nid] = text
        self.key[nid] = text
        self.slot[nid] = slot or nid
        if slot is not None:
            self.edited.add(nid)

    def closure(self, nid: str) -> set[str]:
        """What a delete takes: the node, what was made from it, and the versions of a
        deleted original (it names their slot)."""
        gone = {nid}
        grew = True
        while grew:
            more = {n for n in self.parent if n not in gone and (
                self.parent[n] in gone or (n in self.edited and self.slot[n] in gone))}
            gone |= more
            grew = bool(more)
        return gone

    def path(self, nid: str) -> list[str]:
        out = []
        cur: str | None = nid
        while cur is not None:
            out.append(self.text[cur])
            cur = self.parent[cur]
        return out[::-1]


def run(loom: Loom, ops: list[tuple[str, int, int]], salt: str) -> None:
    m = Model()
    _, root = loom.new_tree(f"root {salt}")
    m.add(root.id, None, f"root {salt}")
    for i, (op, a, b) in enumerate(ops):
        alive = sorted(m.parent)
        if not alive:
            return
        target = alive[a % len(alive)]
        if op in ("add", "same"):
            texts = sorted({m.key[n] for n in m.parent} - {m.key[target]} - m.redacted)
            text = texts[b % len(texts)] if op == "same" and texts else f"w{salt}x{i}y"
            node = loom.append(target, text, role="assistant" if i % 2 else "user")
            m.add(node.id, target, text)
        elif op == "edit":
            node = loom.edit(target, f"w{salt}e{i}y")
            m.add(node.id, m.parent[target], f"w{salt}e{i}y", m.slot[target])
        elif op == "delete":
            done = F.delete(loom, target, force=True)
            gone = m.closure(target)
            assert set(done.ids) == gone
            left = {m.key[n] for n in m.parent if n not in gone}
            m.gone_texts |= {m.key[n] for n in gone} - left
            for n in gone:
                del m.parent[n], m.text[n], m.key[n]
        else:
            key = m.key[target]
            done = F.redact(loom, target)
            same = {n for n in m.parent if m.key[n] == key}
            assert set(done.ids) == same
            m.gone_texts.add(key)
            m.redacted.add(key)
            for n in same:
                m.text[n] = "[redacted]"
        if op in ("delete", "redact"):
            check(loom, m)


def check(loom: Loom, m: Model) -> None:
    report = loom.verify()
    assert report.ok, report.broken
    for nid in m.parent:
        assert texts_of(loom, nid) == m.path(nid)
    data = dump(loom)
    for text in m.gone_texts:
        assert text.encode() not in data, text


@settings(max_examples=25, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ops=ops)
def test_forgetting_keeps_what_remains_and_erases_what_goes(
        loom: Loom, ops: list[tuple[str, int, int]]) -> None:
    run(loom, ops, f"{next(EXAMPLE)}q")


@pytest.fixture(scope="module")
def short_segments(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Loom]:
    """A SQLite store whose segments hold 3 nodes, so deletes cut across segment ends
    and hand bodies on between segments."""
    with loomdb.open(str(tmp_path_factory.mktemp("short"))) as loom:
        loom.backend.nodes.segment_length = 3  # type: ignore[attr-defined]
        yield loom


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ops=ops)
def test_across_segment_ends(short_segments: Loom, ops: list[tuple[str, int, int]]) -> None:
    run(short_segments, ops, f"{next(EXAMPLE)}q")
