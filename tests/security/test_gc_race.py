"""gc against a writer that starts using an old blob again (issue 22, item 8).

The writer's step runs at the exact point between gc's scan (which found the blob
unused and old) and its delete, on both backends: the blob must survive, readable,
and the store must verify."""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta

import pytest

from loomdb import Loom
from loomdb.errors import NotFound
from loomdb.gc import service as G

NOW = timedelta(0)
OLD = b"old bytes, put long ago and never attached"


def _image(ref: str) -> list[dict[str, str]]:
    return [{"type": "image", "ref": ref, "mime_type": "image/png"}]


def _between_scan_and_delete(monkeypatch: pytest.MonkeyPatch, step: Callable[[], None]) -> None:
    """Run `step` right after gc's scan of what is used, before it deletes anything."""
    scan = G._used_blobs

    def scanned(loom: Loom, dropped: set[str]) -> set[str]:
        used = scan(loom, dropped)
        step()
        return used

    monkeypatch.setattr(G, "_used_blobs", scanned)


def test_a_blob_put_again_during_gc_is_kept(loom: Loom, monkeypatch: pytest.MonkeyPatch) -> None:
    bid = loom.put_blob(OLD, "image/png")
    loom.new_tree("start", session="s")
    written: list[str] = []

    def writer() -> None:  # puts the same bytes again, then attaches them
        assert loom.put_blob(OLD, "image/png") == bid
        written.append(loom.append("s", _image(bid)).id)

    _between_scan_and_delete(monkeypatch, writer)
    out = G.collect(loom, grace=NOW)
    assert out["blobs"] == 0
    assert loom.blob(bid) == OLD
    assert loom.node(written[0]).content[0]["ref"] == bid
    assert loom.verify().ok


def test_a_blob_named_by_new_content_during_gc_is_kept(
        loom: Loom, monkeypatch: pytest.MonkeyPatch) -> None:
    bid = loom.put_blob(OLD, "image/png")
    loom.new_tree("start", session="s")
    written: list[str] = []

    def writer() -> None:  # names the old blob by its id, without putting it again
        written.append(loom.append("s", _image(bid)).id)

    _between_scan_and_delete(monkeypatch, writer)
    assert G.collect(loom, grace=NOW)["blobs"] == 0
    assert loom.blob(bid) == OLD
    assert loom.node(written[0]).content == _image(bid)
    assert loom.verify().ok


def test_a_blob_named_by_a_new_tree_during_gc_is_kept(
        loom: Loom, monkeypatch: pytest.MonkeyPatch) -> None:
    """A variant: the writer starts a new tree whose first message is the old blob."""
    bid = loom.put_blob(OLD, "image/png")
    made: list[str] = []
    _between_scan_and_delete(
        monkeypatch, lambda: made.append(loom.new_tree(_image(bid), session="pic")[1].id))
    assert G.collect(loom, grace=NOW) == {"contents": 0, "blobs": 0, "bytes": 0}
    assert loom.blob(loom.node(made[0]).content[0]["ref"]) == OLD


def test_a_blob_nothing_uses_is_still_collected(loom: Loom) -> None:
    """The refresh does not keep garbage: an old blob nobody touches goes, with its bytes,
    and putting it again afterwards stores it again."""
    bid = loom.put_blob(OLD, "image/png")
    out = G.collect(loom, grace=NOW)
    assert (out["blobs"], out["bytes"]) == (1, len(OLD))
    with pytest.raises(NotFound):
        loom.blob(bid)
    assert loom.put_blob(OLD, "image/png") == bid
    assert loom.blob(bid) == OLD
