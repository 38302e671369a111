"""Content-addressed blobs in any filesystem fsspec knows: a shared location for servers.

`ObjectBlobStore("s3://bucket/loomdb")` (or `gs://`, `az://`, `file:///srv/blobs`,
`memory://test`, ...) has the same methods as `blobs.BlobStore`: `put` is idempotent
and returns `sha256:<hex>`, `get` hashes the bytes again and raises IntegrityError
when they no longer match, `has` tells whether the object is there. Keys are sharded
as `<root>/ab/cd/<hex>` and are built from checked ids only, never from user names.

Where the filesystem can rename (local, memory, sftp, ...) an object is written under a
temporary name and renamed into place, so a reader never sees half an object; object
stores (S3, GCS, Azure) publish a PUT atomically and have no cheap rename, so they are
written directly. Credentials and endpoints come from fsspec's usual configuration
(environment, config files) or the `storage_options` given to the constructor.
"""

from __future__ import annotations

import hashlib
import os
import secrets
from pathlib import Path
from typing import Any

from . import private
from .blobs import blob_id, check_id
from .content import HASH_PREFIX
from .errors import IntegrityError, MissingExtra, NotFound

#: protocols whose PUT is atomic and whose "rename" is a copy: written in place
_ATOMIC_PUT = frozenset({"s3", "s3a", "gs", "gcs", "az", "abfs", "abfss", "adl", "oss", "r2",
                         "http", "https"})


class ObjectBlobStore:
    """Blobs under one fsspec URL; `put` is idempotent, `get` verifies."""

    def __init__(self, url: str, **storage_options: Any) -> None:
        try:
            import fsspec
        except ImportError:
            raise MissingExtra(f"blob storage at {url}", "objectstore") from None
        self.url = url
        self.fs, root = fsspec.core.url_to_fs(url, **storage_options)
        self.root = root.rstrip("/")
        protocols = self.fs.protocol if isinstance(self.fs.protocol, tuple) else (self.fs.protocol,)
        self._local = "file" in protocols or "local" in protocols
        self._rename = not _ATOMIC_PUT.intersection(protocols)

    def _key(self, bid: str) -> str:
        hexd = check_id(bid)[len(HASH_PREFIX):]
        return f"{self.root}/{hexd[:2]}/{hexd[2:4]}/{hexd}"

    def put(self, data: bytes, bid: str | None = None) -> str:
        """Store `data` under its id (`bid`, when the caller hashed it already)."""
        bid = bid or blob_id(data)
        key = self._key(bid)
        if self.fs.exists(key):
            return bid
        if self._local:
            self._put_local(key, data)
        elif self._rename:
            parent = key.rsplit("/", 1)[0]
            self.fs.makedirs(parent, exist_ok=True)
            tmp = f"{parent}/.tmp-{secrets.token_hex(8)}"
            self.fs.pipe_file(tmp, data)
            try:
                self.fs.mv(tmp, key)
            except BaseException:
                if self.fs.exists(tmp):
                    self.fs.rm_file(tmp)
                raise
        else:
            self.fs.pipe_file(key, data)
        return bid

    def _put_local(self, key: str, data: bytes) -> None:
        """Local disk: write, fsync, then rename into place (atomic on one filesystem)."""
        parent = os.path.dirname(key)
        hexd = os.path.basename(key)
        private.folders(Path(self.root), hexd[:2], hexd[2:4])  # 0700 each
        tmp = os.path.join(parent, f".tmp-{secrets.token_hex(8)}")
        try:
            with os.fdopen(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, private.FILE),
                           "wb") as fh:
                fh.write(data)
                fh.flush()
                os.fsync(fh.fileno())
            os.replace(tmp, key)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise

    def get(self, bid: str) -> bytes:
        key = self._key(bid)
        try:
            data = self.fs.cat_file(key)
        except FileNotFoundError:
            raise NotFound("blob", bid) from None
        got = HASH_PREFIX + hashlib.sha256(data).hexdigest()
        if got != bid:
            raise IntegrityError(f"blob {bid}", bid, got)
        return bytes(data)

    def has(self, bid: str) -> bool:
        return bool(self.fs.exists(self._key(bid)))

    def delete(self, bid: str) -> None:
        """Remove a blob's bytes (garbage collection only)."""
        key = self._key(bid)
        if self.fs.exists(key):
            self.fs.rm_file(key)
