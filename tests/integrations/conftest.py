"""One store per backend for a test module: the integrations' tests keep apart by their
own thread and session ids, and a PostgreSQL database per test cost more than the
tests themselves."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

#: as tests/conftest.py reads them (this file's name hides that module here)
BACKENDS = [b for b in os.environ.get("LOOMDB_TEST_BACKENDS", "sqlite,postgres").split(",") if b]


@pytest.fixture(scope="module", params=BACKENDS)
def shared_store(request: pytest.FixtureRequest,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A store of each backend kind, shared by the tests of a module."""
    folder = tmp_path_factory.mktemp("shared")
    if request.param == "sqlite":
        yield str(folder / "store")
        return
    from pg import fresh_postgres_url

    with fresh_postgres_url(migrated=True) as url:
        yield url + ("&" if "?" in url else "?") + f"blobs=file://{folder / 'blobs'}"
