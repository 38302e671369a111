"""What the import security tests share: a store of each backend served live on
loopback (with the limits a test gives it), and what a store holds afterwards."""

from __future__ import annotations

import json
import secrets
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent.parent / "server"))

from live import client, serving  # noqa: E402

import loomdb  # noqa: E402
from loomdb import Loom  # noqa: E402
from loomdb.limits import DEFAULT, Limits  # noqa: E402
from loomdb.server import create_app  # noqa: E402
from pg import store_of  # noqa: E402

__all__ = ["blob_bytes", "client", "live_store", "node_rows", "sharegpt", "upload"]


@contextmanager
def live_store(kind: str, folder: Path, limits: Limits = DEFAULT) -> Iterator[tuple[Loom, str]]:
    """(the Loom, the base URL of a live server over it) for a fresh store of `kind`."""
    with store_of(kind, str(folder / "store")) as url, loomdb.open(url, limits=limits) as lm, \
            serving(create_app(lm)) as base:
        yield lm, base


def blob_bytes(loom: Loom) -> list[bytes]:
    """The bytes of every blob in the store."""
    return [loom.blob(bid) for bid, _, _ in loom.blob_list()]


def node_rows(loom: Loom) -> int:
    return sum(t.nodes for t in loom.trees(archived=False)) + sum(
        t.nodes for t in loom.trees(archived=True))


def sharegpt(images: list[str], text: str = "What is in <image>?") -> list[dict[str, Any]]:
    """A ShareGPT (LLaMA-Factory) dataset of one record, one placeholder per image."""
    return [{"id": f"rec-{secrets.token_hex(4)}", "images": images, "messages": [
        {"role": "user", "content": " ".join([text] * len(images)) if images else text},
        {"role": "assistant", "content": "A picture."}]}]


def upload(base: str, name: str, data: bytes, token: str | None = None,
           format: str = "auto") -> Any:
    """POST /api/import of one file; the response."""
    with client(base, token) as c:
        return c.post("/api/import", content=data, params={"format": format, "filename": name},
                      headers={"content-type": "application/octet-stream"})


def dumps(value: Any) -> bytes:
    return json.dumps(value).encode()
