"""Fixtures for the HTTP tests: the app over each backend, served for real on loopback.

One store and one server per backend per module (creating a PostgreSQL database costs
seconds); each test names its own sessions (`name`) so tests do not meet."""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from live import client, serving  # noqa: E402

import loomdb  # noqa: E402
from loomdb import Loom  # noqa: E402
from loomdb.server import create_app  # noqa: E402
from pg import store_of  # noqa: E402

BACKENDS = [b for b in os.environ.get("LOOMDB_TEST_BACKENDS", "sqlite,postgres").split(",") if b]


@pytest.hookimpl(tryfirst=True, hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Keep each phase's report on the item, so a fixture can tell the test failed
    (the browser tests then save a screenshot)."""
    outcome = yield
    setattr(item, f"rep_{call.when}", outcome.get_result())


@pytest.fixture(scope="module", params=BACKENDS)
def served_store(request: pytest.FixtureRequest,
                 tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Loom, str]]:
    """(the store's URL, its Loom, the base URL of a live server over it), one per
    backend per module; the URL lets a test run the CLI on the same store."""
    folder = tmp_path_factory.mktemp(f"http-{request.param}")
    with store_of(request.param, str(folder / "store")) as url, loomdb.open(url) as lm, \
            serving(create_app(lm)) as base:
        yield url, lm, base


@pytest.fixture(scope="module")
def served(served_store: tuple[str, Loom, str]) -> tuple[Loom, str]:
    """(the Loom, the base URL of a live server over it), one per backend per module."""
    return served_store[1], served_store[2]


@pytest.fixture
def shared_loom(served: tuple[Loom, str]) -> Loom:
    return served[0]


@pytest.fixture
def http(served: tuple[Loom, str]) -> Iterator[httpx.Client]:
    with client(served[1]) as c:
        yield c


@pytest.fixture
def name() -> str:
    """A session name no other test uses."""
    return f"s{secrets.token_hex(4)}"
