"""Fixtures for the security tests of the HTTP edge: a real server on loopback over
each backend (`tests/server/live.py`), one store per backend per module; each test
makes its own users and names, so tests do not meet."""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent.parent / "server"))

from live import serving  # noqa: E402

import loomdb  # noqa: E402
from loomdb import Loom  # noqa: E402
from loomdb.server import create_app  # noqa: E402
from pg import store_of  # noqa: E402

BACKENDS = [b for b in os.environ.get("LOOMDB_TEST_BACKENDS", "sqlite,postgres").split(",") if b]


@pytest.fixture(scope="module", params=BACKENDS)
def served(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Loom, str]]:
    """(the Loom, the base URL of a live server over it), one per backend per module."""
    folder = tmp_path_factory.mktemp(f"security-{request.param}")
    with store_of(request.param, str(folder / "store")) as url, loomdb.open(url) as lm, \
            serving(create_app(lm)) as base:
        yield lm, base


@pytest.fixture
def tag() -> str:
    """A name part no other test uses."""
    return secrets.token_hex(4)
