"""`jsondepth.depth` with a limit (the recursive walk every request body goes through,
with its shortcut for a list of flat records, a chat's messages) says what the plain
walk without a limit says, up to the limit."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from loomdb.errors import InvalidInput
from loomdb.jsondepth import check_depth, depth

scalars = st.none() | st.booleans() | st.integers() | st.text(max_size=3)
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(max_size=2), inner, max_size=4), max_leaves=30)
records = st.lists(st.dictionaries(st.text(max_size=2), values, max_size=3), max_size=4)


@given(st.one_of(values, records, st.dictionaries(st.just("messages"), records)),
       st.integers(min_value=0, max_value=6))
def test_the_limited_walk_agrees_with_the_plain_one(value: Any, limit: int) -> None:
    plain = depth(value)  # no limit: the walk with a stack of its own
    assert depth(value, limit) == (plain if plain <= limit else limit + 1)


def test_a_chats_messages_are_two_levels_and_one_too_many_is_refused() -> None:
    messages = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    assert depth({"messages": messages}, 64) == 3
    assert depth({"messages": [*messages, {"role": "user", "content": ["x"]}]}, 64) == 4
    check_depth({"messages": messages}, 3, "body")
    with pytest.raises(InvalidInput, match="nested deeper than 2"):
        check_depth({"messages": messages}, 2, "body")
