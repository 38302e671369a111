"""Content-addressed blob storage for binary payloads (images, audio, documents).

A blob's id is `sha256:<hex>` of its bytes. Files live in sharded folders
(`ab/cd/<hex>`), are written to a temporary file and renamed into place (so a reader
never sees half a file), and are hashed again on every read: a file that no longer
matches its name raises IntegrityError. Names supplied by users are metadata only;
they never become paths. Size and MIME type are kept by the store's `blobs` table.
"""

from __future__ import annotations

import hashlib
import os
import re
from pathlib import Path

from .content import HASH_PREFIX
from .errors import IntegrityError, InvalidInput, NotFound
from .private import folders, restrict

_ID = re.compile(r"^sha256:[0-9a-f]{64}$")


def blob_id(data: bytes) -> str:
    return HASH_PREFIX + hashlib.sha256(data).hexdigest()


def check_id(value: str) -> str:
    """Refuse anything that is not a well-formed blob id (it could name a path)."""
    if not isinstance(value, str) or not _ID.match(value):
        raise InvalidInput("blob", f"not a blob id: {value!r} (expected sha256:<64 hex>)")
    return value


class BlobStore:
    """Blobs in a local folder; `put` is idempotent, `get` verifies."""

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)
        restrict(self.root)  # a blob folder made looser by hand or by an older version

    def _path(self, bid: str) -> Path:
        hexd = check_id(bid)[len(HASH_PREFIX):]
        return self.root / hexd[:2] / hexd[2:4] / hexd

    def put(self, data: bytes, bid: str | None = None) -> str:
        """Store `data` under its id (`bid`, when the caller hashed it already)."""
        bid = bid or blob_id(data)
        path = self._path(bid)
        if path.exists():
            return bid
        folders(self.root, path.parent.parent.name, path.parent.name)  # 0700 each
        import tempfile  # (writers only; its files are 0600)

        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
        return bid

    def get(self, bid: str) -> bytes:
        path = self._path(bid)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            raise NotFound("blob", bid) from None
        got = blob_id(data)
        if got != bid:
            raise IntegrityError(f"blob {bid}", bid, got)
        return data

    def has(self, bid: str) -> bool:
        return self._path(bid).exists()

    def delete(self, bid: str) -> None:
        """Remove a blob's bytes (garbage collection only: ids are never reused wrongly,
        a later put of the same bytes writes them again)."""
        self._path(bid).unlink(missing_ok=True)
