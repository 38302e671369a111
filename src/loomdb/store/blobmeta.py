"""What the store knows of each blob (size, media type); the bytes live in a BlobStore.
Interface and SQL, written once for both dialects."""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import NamedTuple

from .rows import hex_to_bytes
from .runner import SqlRunner


class BlobMeta(NamedTuple):
    """Size in bytes and media type of a stored blob."""

    size: int
    mime_type: str


class BlobMetaStore(ABC):
    """Blob metadata rows, keyed by the blob's `sha256:` id."""

    @abstractmethod
    def put_blob_meta(self, blob_id: str, size: int, mime_type: str, at: str) -> None:
        """Record a blob (a blob recorded already is left as it is)."""

    @abstractmethod
    def get_blob_meta(self, blob_id: str) -> BlobMeta | None:
        """(size, mime type) of a blob known to the store."""


class BlobMetaSQL(SqlRunner, BlobMetaStore):
    """`BlobMetaStore` over shared SQL."""

    def put_blob_meta(self, blob_id: str, size: int, mime_type: str, at: str) -> None:
        self.q_run(
            "INSERT INTO blobs (id, size, mime_type, created_at) VALUES (?,?,?,?)"
            " ON CONFLICT DO NOTHING",
            (hex_to_bytes(blob_id), size, mime_type, at),
        )

    def get_blob_meta(self, blob_id: str) -> BlobMeta | None:
        row = self.q_one("SELECT size, mime_type FROM blobs WHERE id = ?",
                         (hex_to_bytes(blob_id),))
        return None if row is None else BlobMeta(row[0], row[1])
