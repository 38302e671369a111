"""Content blocks, the canonical form and the one hash function, pinned by golden vectors."""

from __future__ import annotations

import hashlib

import pytest

from loomdb import InvalidInput, Loom, TooLarge
from loomdb.content import canonical, content_id, validate_blocks

ALL_BLOCKS = [
    {"type": "text", "text": "hello"},
    {"type": "image", "ref": "sha256:" + "a" * 64, "mime_type": "image/png", "width": 2,
     "height": 2, "alt_text": "dot"},
    {"type": "audio", "ref": "sha256:" + "b" * 64, "mime_type": "audio/wav", "duration_ms": 10},
    {"type": "document", "ref": "sha256:" + "c" * 64, "mime_type": "application/pdf",
     "name": "a.pdf"},
    {"type": "tool_use", "id": "t1", "name": "add", "input": {"a": 1, "b": 2}},
    {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "3"}],
     "is_error": False},
    {"type": "thinking", "thinking": "hmm", "signature": "sig"},
]


class TestCanonicalFormAndIds:
    def test_golden_vector_for_a_text_block(self) -> None:
        blocks = [{"type": "text", "text": "hello"}]
        assert canonical(blocks) == b'[{"text":"hello","type":"text"}]'
        assert content_id(blocks) == "sha256:" + hashlib.sha256(
            b'[{"text":"hello","type":"text"}]').hexdigest()

    def test_golden_vector_is_stable(self) -> None:
        assert content_id([{"type": "text", "text": "hello"}]) == (
            "sha256:" + hashlib.sha256(b'[{"text":"hello","type":"text"}]').hexdigest())
        assert content_id([{"type": "text", "text": "é€😀"}]) == (
            "sha256:" + hashlib.sha256('[{"text":"é€😀","type":"text"}]'.encode()).hexdigest())

    def test_key_order_does_not_change_the_id(self) -> None:
        a = [{"type": "tool_use", "id": "1", "name": "f", "input": {"x": 1, "y": [1, 2]}}]
        b = [{"input": {"y": [1, 2], "x": 1}, "name": "f", "id": "1", "type": "tool_use"}]
        assert content_id(a) == content_id(b)

    def test_every_block_type_validates(self) -> None:
        assert validate_blocks(ALL_BLOCKS) == ALL_BLOCKS


class TestValidation:
    @pytest.mark.parametrize(
        "blocks, where",
        [
            ("text", "content"),
            ([], "content"),
            ([{"type": "video", "ref": "x"}], "content[0]"),
            ([{"type": "text"}], "content[0].text.text"),
            ([{"type": "text", "text": 5}], "content[0].text.text"),
            ([{"type": "text", "text": "a", "extra": 1}], "content[0].text.extra"),
            ([{"type": "image", "ref": "../../etc/passwd", "mime_type": "image/png"}],
             "content[0].image.ref"),
        ],
    )
    def test_bad_blocks_name_the_place(self, blocks: object, where: str) -> None:
        with pytest.raises(InvalidInput) as err:
            validate_blocks(blocks)
        assert err.value.where == where

    def test_lone_surrogates_are_refused(self, loom: Loom) -> None:
        with pytest.raises(InvalidInput, match="Unicode"):
            loom.new_tree("bad \ud800 text")

    def test_content_over_the_limit_is_refused(self, loom: Loom) -> None:
        loom.max_content_bytes = 1000
        with pytest.raises(TooLarge, match="blob store"):
            loom.new_tree("x" * 2000)


class TestBlobs:
    def test_inline_base64_moves_to_the_blob_store(self, loom: Loom) -> None:
        import base64

        data = b"\x89PNG\r\n\x1a\n tiny"
        _, node = loom.new_tree([{"type": "image", "mime_type": "image/png",
                                  "data": base64.b64encode(data).decode()}])
        block = node.content[0]
        assert block["ref"] == "sha256:" + hashlib.sha256(data).hexdigest()
        assert "data" not in block
        assert loom.blob(block["ref"]) == data
        assert loom.backend.blob_meta.get_blob_meta(block["ref"]) == (len(data), "image/png")

    def test_a_block_may_not_point_at_a_missing_blob(self, loom: Loom) -> None:
        with pytest.raises(InvalidInput, match="not in the store"):
            loom.new_tree([{"type": "image", "ref": "sha256:" + "0" * 64, "mime_type": "image/png"}])

    def test_a_changed_blob_file_fails_its_hash_on_read(self, loom: Loom) -> None:
        from loomdb import IntegrityError

        ref = loom.put_blob(b"original bytes", "text/plain")
        path = loom.blobs._path(ref)  # type: ignore[attr-defined]
        path.write_bytes(b"tampered bytes")
        with pytest.raises(IntegrityError):
            loom.blob(ref)

    def test_blobs_are_sharded_and_stored_once(self, loom: Loom) -> None:
        a = loom.put_blob(b"same", "text/plain")
        b = loom.put_blob(b"same", "text/plain")
        assert a == b
        path = loom.blobs._path(a)  # type: ignore[attr-defined]
        hexd = a[7:]
        assert path.parts[-3:] == (hexd[:2], hexd[2:4], hexd)

    def test_a_blob_id_can_never_name_a_path(self, loom: Loom) -> None:
        with pytest.raises(InvalidInput):
            loom.blob("sha256:../../../etc/passwd")

    def test_files_become_text_or_blob_blocks(self, loom: Loom, tmp_path) -> None:  # type: ignore[no-untyped-def]
        (tmp_path / "note.md").write_text("# hi", "utf-8")
        (tmp_path / "pic.png").write_bytes(b"\x89PNG")
        (tmp_path / "bad.txt").write_bytes(b"\xff\xfe bad")
        assert loom.file_content(tmp_path / "note.md") == [{"type": "text", "text": "# hi"}]
        assert loom.file_content(tmp_path / "pic.png")[0]["type"] == "image"
        with pytest.raises(InvalidInput, match="UTF-8"):
            loom.file_content(tmp_path / "bad.txt")
