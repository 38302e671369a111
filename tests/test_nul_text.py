"""A NUL character in a message is content like any other: stored and read back byte
for byte on both backends (PostgreSQL's text columns refuse NUL, so it never reaches
one: the tree's title drops it, and plain fields refuse it with a clear error)."""

from __future__ import annotations

import pytest

from loomdb import InvalidInput, Loom
from loomdb.search.service import Query, search


def test_a_nul_in_the_first_message_and_after(loom: Loom) -> None:
    tree, root = loom.new_tree("hello\x00world", session="s")
    node = loom.append("s", "nul\x00inside", role="assistant")
    assert loom.node(root.id).content == [{"type": "text", "text": "hello\x00world"}]
    assert loom.node(node.id).content == [{"type": "text", "text": "nul\x00inside"}]
    assert loom.tree(tree.id).title == "hello world"
    assert [m["content"][0]["text"] for m in loom.context("s")["messages"]] == [
        "hello\x00world", "nul\x00inside"]
    assert loom.verify(tree.id).ok
    hits = search(loom, Query("inside"))
    assert [h["entity"] for h in hits] == [node.id]


@pytest.mark.parametrize("field", ["title", "system"])
def test_plain_fields_refuse_a_nul_and_write_nothing(loom: Loom, field: str) -> None:
    with pytest.raises(InvalidInput, match="NUL"):
        loom.new_tree("hi", **{field: "a\x00b"})
    assert loom.trees() == []
    tree, _ = loom.new_tree("hi")
    with pytest.raises(InvalidInput, match="NUL"):
        loom.rename(tree.id, "x\x00y")
    assert loom.tree(tree.id).title == "hi"
