"""The shared pieces: parent-link checks, ordering, times and block validation."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from loomdb.errors import CycleError, InvalidInput
from loomdb.interop import tree
from loomdb.interop.model import AttachmentSet, ImportedMessage, check_blocks, to_datetime


def msg(mid: str, parent: str | None) -> ImportedMessage:
    return ImportedMessage(mid, parent, "user", [{"type": "text", "text": mid}], None)


class TestOrdering:
    def test_parents_come_before_children_and_siblings_keep_their_order(self) -> None:
        ordered = tree.order([msg("c", "b"), msg("b2", "a"), msg("b", "a"), msg("a", None)], "here")
        assert [m.source_id for m in ordered] == ["a", "b2", "b", "c"]

    def test_a_sibling_rank_reorders_siblings(self) -> None:
        ordered = tree.order(
            [msg("a", None), msg("x", "a"), msg("y", "a")], "here", {"y": 0, "x": 1}
        )
        assert [m.source_id for m in ordered] == ["a", "y", "x"]

    def test_several_roots_are_allowed(self) -> None:
        assert len(tree.order([msg("a", None), msg("b", None)], "here")) == 2


class TestLinkChecks:
    def test_a_cycle_raises_cycle_error_naming_its_ids(self) -> None:
        with pytest.raises(CycleError) as info:
            tree.order([msg("r", None), msg("a", "c"), msg("b", "a"), msg("c", "b")], "mapping")
        assert info.value.where == "mapping"
        assert all(i in info.value.why for i in "abc")

    def test_a_self_parent_is_a_cycle(self) -> None:
        with pytest.raises(CycleError, match="a -> a"):
            tree.order([msg("a", "a")], "here")

    def test_a_dangling_parent_is_named(self) -> None:
        with pytest.raises(InvalidInput, match="a -> ghost"):
            tree.order([msg("a", "ghost")], "here")

    def test_duplicate_ids_are_named(self) -> None:
        with pytest.raises(InvalidInput, match="duplicate message ids: a"):
            tree.order([msg("a", None), msg("a", None)], "here")

    def test_a_long_chain_is_checked_without_recursion(self) -> None:
        chain = [msg("0", None)] + [msg(str(i), str(i - 1)) for i in range(1, 20_000)]
        assert len(tree.order(list(reversed(chain)), "here")) == 20_000


class TestTimes:
    @pytest.mark.parametrize(
        "value",
        [
            1_700_000_000,
            1_700_000_000.0,
            1_700_000_000_000,
            1_700_000_000_000_000,
            "2023-11-14T22:13:20Z",
            "2023-11-14T23:13:20+01:00",
            "2023-11-14T22:13:20",
        ],
    )
    def test_epochs_in_any_unit_and_iso_strings_become_utc(self, value: object) -> None:
        assert to_datetime(value, "t") == datetime(2023, 11, 14, 22, 13, 20, tzinfo=UTC)

    def test_null_is_none_and_nonsense_names_its_place(self) -> None:
        assert to_datetime(None, "t") is None
        with pytest.raises(InvalidInput, match="at.time"):
            to_datetime("soon", "at.time")
        with pytest.raises(InvalidInput):
            to_datetime(True, "at.time")


class TestBlocks:
    def test_attachment_keys_are_accepted_as_refs(self) -> None:
        blocks = [{"type": "image", "ref": "attachment:file-1", "mime_type": "image/png"}]
        assert check_blocks(blocks, "here") == blocks

    def test_an_empty_message_becomes_one_empty_text_block(self) -> None:
        assert check_blocks([], "here") == [{"type": "text", "text": ""}]

    def test_an_invalid_block_names_its_place(self) -> None:
        with pytest.raises(InvalidInput, match=r"here\[0\]"):
            check_blocks([{"type": "image", "ref": "attachment:x"}], "here")

    def test_attachments_are_kept_once_per_key(self) -> None:
        found = AttachmentSet()
        assert (
            found.add("a", None, "image/png") == found.add("a", b"x", "image/png") == "attachment:a"
        )
        assert [(a.key, a.data) for a in found.to_list()] == [("attachment:a", b"x")]
