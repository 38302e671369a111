"""Hypothesis: random trees, edits, views and selections, checked against a naive model."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import loomdb
from loomdb import InvalidInput, Loom
from loomdb.content import content_id, encode, text
from loomdb.model import new_id, ulid_text


@dataclass
class Naive:
    """The loom as plain dicts and loops: the specification the store must match."""

    parent: dict[str, str | None] = field(default_factory=dict)
    slot: dict[str, str] = field(default_factory=dict)
    edited: dict[str, bool] = field(default_factory=dict)
    stored: dict[str, dict[str, str]] = field(default_factory=dict)
    order: list[str] = field(default_factory=list)

    def add(self, nid: str, parent: str | None, slot: str | None, stored: dict[str, str]) -> None:
        self.parent[nid] = parent
        self.slot[nid] = slot or nid
        self.edited[nid] = slot is not None
        self.stored[nid] = stored
        self.order.append(nid)

    def children(self, slot: str) -> list[str]:
        return [n for n in self.order if not self.edited[n] and self.parent[n] is not None
                and self.slot[self.parent[n]] == slot]

    def leaves(self) -> list[str]:
        return [n for n in self.order if not self.children(self.slot[n])]

    def branch_points(self) -> list[str]:
        return [n for n in self.order if not self.edited[n] and len(self.children(n)) >= 2]

    def subtree(self, slot: str) -> set[str]:
        return {n for n in self.order if any(self.slot[m] == slot for m in self.chain(n))}

    def chain(self, head: str) -> list[str]:
        out: list[str] = []
        node: str | None = head
        while node is not None:
            out.append(node)
            node = self.parent[node]
        return out

    def effective(self, head: str) -> dict[str, str]:
        chosen: dict[str, str] = {}
        for n in self.chain(head):
            for s, v in self.stored[n].items():
                chosen.setdefault(s, v)
        return chosen

    def path(self, head: str, selections: dict[str, str]) -> list[str]:
        chosen = {**self.effective(head), **selections}
        return [chosen.get(self.slot[n], n) for n in self.chain(head)][::-1]

    def delta(self, parent: str | None, wanted: dict[str, str]) -> dict[str, str]:
        if parent is None:
            return {}
        current = {self.slot[n]: n for n in self.chain(parent)}
        current.update({s: v for s, v in self.effective(parent).items() if s in current})
        return {s: v for s, v in wanted.items() if s in current and current[s] != v}


ops = st.lists(
    st.tuples(st.sampled_from(["append", "append_view", "edit", "edit_view", "select", "move"]),
              st.integers(0, 10_000), st.integers(0, 10_000)),
    min_size=1, max_size=25,
)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=ops)
def test_random_histories_match_the_naive_model(loom: Loom, ops: list[tuple[str, int, int]]) -> None:
    _check_history(loom, ops)


@pytest.fixture(scope="module")
def short_segments(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Loom]:
    """A SQLite store whose segments hold 3 nodes, so histories cross segment ends."""
    with loomdb.open(str(tmp_path_factory.mktemp("short"))) as loom:
        loom.backend.nodes.segment_length = 3  # type: ignore[attr-defined]
        yield loom


@settings(max_examples=30, deadline=None)
@given(ops=ops)
def test_histories_across_segment_ends_match_the_naive_model(
    short_segments: Loom, ops: list[tuple[str, int, int]]
) -> None:
    _check_history(short_segments, ops)


def _check_history(loom: Loom, ops: list[tuple[str, int, int]]) -> None:
    tree, root = loom.new_tree("root")
    naive = Naive()
    naive.add(root.id, None, None, {})
    view = f"v{tree.id.lower()}"
    loom.view(view, root.id)
    for i, (op, a, b) in enumerate(ops):
        target = naive.order[a % len(naive.order)]
        ref = loom.ref(view)
        if op == "append":
            n = loom.append(target, f"n{i}", role="assistant" if i % 2 else "user")
            naive.add(n.id, target, None, {})
        elif op == "append_view":
            n = loom.append(view, f"n{i}")
            head = ref.selections.get(naive.slot[ref.node], ref.node)
            naive.add(n.id, head, None, naive.delta(
                head, {s: v for s, v in ref.selections.items() if s != naive.slot[head]}))
            loom.set_ref(view, n.id)
        elif op in ("edit", "edit_view"):
            at = target if op == "edit" else view
            old = loom.resolve(at).node
            n = loom.edit(at, f"e{i}")
            sel = {**naive.stored[old], **(ref.selections if op == "edit_view" else {})}
            sel.pop(naive.slot[old], None)
            naive.add(n.id, naive.parent[old], naive.slot[old], naive.delta(naive.parent[old], sel))
        elif op == "select":
            versions = [v for v in naive.order if naive.slot[v] == naive.slot[target]]
            on_path = {naive.slot[n] for n in naive.path(ref.node, ref.selections)}
            if naive.slot[target] in on_path:
                loom.select(view, versions[b % len(versions)])
            else:  # a version of a message off the view's path: refused, nothing moves
                with pytest.raises(InvalidInput, match="is not a version of a message on"):
                    loom.select(view, versions[b % len(versions)])
                assert loom.ref(view) == ref
        else:
            loom.set_ref(view, target)
    ref = loom.ref(view)
    for node in naive.order:
        assert loom.path(node) == naive.path(node, {})
        assert loom.children(node) == naive.children(naive.slot[node])
        assert set(loom.backend.nodes.subtree(naive.slot[node])) == naive.subtree(naive.slot[node])
    assert loom.path(view) == naive.path(ref.node, ref.selections)
    assert loom.leaves(tree.id) == naive.leaves()
    assert loom.branch_points(tree.id) == naive.branch_points()
    assert loom.verify(tree.id).ok


@given(st.text(max_size=200))
def test_text_content_ids_are_stable_and_round_trip(value: str) -> None:
    blocks = text(value)
    assert content_id(blocks) == content_id([dict(blocks[0])])


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**60), 2**60) | st.text()
    | st.floats(allow_nan=False, allow_infinity=False),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20,
)


@given(json_values)
def test_the_fast_canonical_encoder_writes_exactly_rfc8785(value: object) -> None:
    import rfc8785

    from loomdb.content import canonical

    try:
        expected = rfc8785.dumps(value)
    except Exception:  # values RFC 8785 refuses (big integers): we refuse them too
        with pytest.raises(InvalidInput):
            canonical(value)
        return
    assert canonical(value) == expected


@given(st.text(max_size=300))
def test_a_text_message_is_encoded_exactly_as_rfc8785(value: str) -> None:
    import rfc8785

    try:
        expected = rfc8785.dumps(text(value))
    except Exception:  # lone surrogates: refused on both paths
        with pytest.raises(InvalidInput):
            encode(text(value))
        return
    assert encode(text(value))[1] == expected


@given(st.binary(min_size=16, max_size=16))
def test_ids_are_written_exactly_as_python_ulid_writes_them(raw: bytes) -> None:
    from ulid import ULID

    assert ulid_text(int.from_bytes(raw)) == str(ULID.from_bytes(raw))


def test_ids_made_in_one_process_sort_in_the_order_they_were_made() -> None:
    from ulid import ULID

    ids = [new_id() for _ in range(20_000)]
    assert ids == sorted(ids) and len(set(ids)) == len(ids)
    assert all(str(ULID.from_str(i)) == i for i in ids[:100])


@given(author=st.text(max_size=20), role=st.text(max_size=10), kind=st.text(max_size=10),
       created=st.text(max_size=30), edited=st.none() | st.text(max_size=26),
       parents=st.lists(st.text(max_size=70), max_size=3))
def test_a_message_chain_document_is_written_exactly_as_rfc8785(
    author: str, role: str, kind: str, created: str, edited: str | None, parents: list[str]
) -> None:
    import rfc8785

    from loomdb.chain import _message_doc

    doc = {"v": 1, "content": "sha256:" + "ab" * 32, "parents": sorted(parents),
           "created_at": created, "author": author, "role": role, "kind": kind,
           "edited_from": edited, "options": None}
    try:
        expected = rfc8785.dumps(doc)
    except Exception:  # lone surrogates: refused on both paths
        with pytest.raises(InvalidInput):
            _message_doc(doc["content"], parents, created, author, role, kind, edited)
        return
    assert _message_doc(doc["content"], parents, created, author, role, kind, edited) == expected


@given(st.integers(min_value=0, max_value=4_102_444_800_000_000_000))
def test_timestamps_are_written_as_datetime_isoformat_writes_them(ns: int) -> None:
    from datetime import UTC, datetime
    from unittest import mock

    from loomdb import model

    with mock.patch.object(model.time, "time_ns", return_value=ns):
        stamp = model.now()
    moment = datetime.fromtimestamp(ns // 1000 // 1_000_000, UTC).replace(
        microsecond=ns // 1000 % 1_000_000)
    assert stamp == moment.isoformat(timespec="microseconds")[:-6] + "Z"
    assert stamp == model.iso(moment)
