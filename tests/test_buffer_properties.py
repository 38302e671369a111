"""Hypothesis: random sequences of draft edits, generations (the real local model, a
couple of tokens each) and version edits keep every buffer document equal to its
resolved path's text plus its draft, with authorship spans covering it exactly."""

from __future__ import annotations

from itertools import count

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loomdb import Loom
from loomdb import buffer as B
from loomdb.content import plain_text

pytestmark = pytest.mark.xdist_group("local-model")

_trees = count()
words = st.text(alphabet="ab c\néø🙂", max_size=6)
refs = st.sampled_from(["doc", "view"])
op = st.one_of(
    st.tuples(st.just("set"), refs, words),
    st.tuples(st.just("append"), refs, words),
    st.tuples(st.just("edit"), refs, st.integers(0, 500), st.integers(0, 500), words),
    st.tuples(st.just("commit"), refs),
    st.tuples(st.just("switch"), refs, st.integers(0, 500)),
    st.tuples(st.just("model_node"), refs, words),
)
with_generate = st.one_of(op, st.tuples(st.just("generate"), refs, st.integers(1, 2)))


def check(loom: Loom, name: str) -> B.Document:
    """The invariant: the document is the resolved path's text plus the draft, and its
    spans and pieces tile it exactly."""
    doc = B.document(loom, name)
    path = loom.path(name)
    path_text = "".join(plain_text(n.content) for n in loom.nodes(path))
    assert doc.text == path_text + B.get_draft(loom, name) == B.text(loom, name)
    assert doc.draft == B.get_draft(loom, name)
    assert [p.node for p in doc.nodes] == path
    assert [p.start for p in doc.nodes] == [0] + [p.end for p in doc.nodes[:-1]]
    assert doc.nodes[-1].end == len(path_text)
    at = 0
    for span in doc.spans:
        assert span.start == at < span.end and doc.text[span.start:span.end] == span.text
        at = span.end
    assert at == len(doc.text)
    return doc


def run(loom: Loom, ops: list[tuple]) -> None:  # type: ignore[type-arg]
    i = next(_trees)
    names = {"doc": f"doc{i}", "view": f"view{i}"}
    tree, _ = loom.new_tree("Start. ", mode="buffer", session=names["doc"])
    loom.view(names["view"], names["doc"])
    for step in ops:
        kind, name = step[0], names[step[1]]
        before = B.document(loom, name).text
        if kind == "set":
            B.set_draft(loom, name, step[2])
            assert B.text(loom, name) == B.document(loom, name).committed + step[2]
        elif kind == "append":
            B.append_draft(loom, name, step[2])
            assert B.text(loom, name) == before + step[2]
        elif kind == "edit":
            a, b = sorted((step[2] % (len(before) + 1), step[3] % (len(before) + 1)))
            B.edit_span(loom, name, a, b, step[4])
            assert B.text(loom, name) == before[:a] + step[4] + before[b:]
        elif kind == "commit":
            B.commit_draft(loom, name)
            assert B.text(loom, name) == before and B.get_draft(loom, name) == ""
        elif kind == "switch":
            nodes = loom.tree_nodes(tree.id)
            B.switch(loom, name, nodes[step[2] % len(nodes)].id)
        elif kind == "model_node":
            B.commit_draft(loom, name)
            node = loom.append(name, step[2], role="assistant", source="agent", author="m")
            if step[1] == "view":
                loom.set_ref(name, node.id)
            assert B.text(loom, name) == before + step[2]
        elif kind == "generate":
            result = B.generate(loom, name, n=step[2], max_tokens=2)
            answer = plain_text(result.nodes[-step[2]].content)
            assert B.text(loom, name) == before + answer
        for ref in names.values():
            check(loom, ref)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ops=st.lists(op, min_size=1, max_size=20))
def test_draft_and_version_edits_keep_the_document_equal_to_path_plus_draft(
    loom: Loom, ops: list[tuple]  # type: ignore[type-arg]
) -> None:
    run(loom, ops)


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(ops=st.lists(with_generate, min_size=1, max_size=10))
def test_with_real_generations_the_document_stays_path_plus_draft(
    loom: Loom, ops: list[tuple]  # type: ignore[type-arg]
) -> None:
    run(loom, ops)
