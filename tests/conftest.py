"""Shared fixtures. `loom` runs every core test against every backend in BACKENDS:
the conformance suite is the core suite, parametrized."""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import settings

sys.path.insert(0, str(Path(__file__).parent))

# A property test is judged by what it finds, not by how fast one example runs: on two
# cores shared with the rest of the suite, hypothesis's 200 ms deadline per example
# failed a timestamp property at random (an example took 329 ms, then 0.45 ms).
settings.register_profile("loomdb", deadline=None)
settings.load_profile("loomdb")

import loomdb  # noqa: E402
from loomdb import Loom  # noqa: E402

# the tests run two workers on two cores, plus servers they start: a model (llama.cpp,
# or ONNX Runtime for embeddings) on one thread each does not spin against the other
# worker (set before any model loads; subprocesses inherit it)
os.environ.setdefault("LOOMDB_MODEL_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
# the user's own configuration (loomdb.userconfig) is an empty folder of the tests' own,
# never the machine's ~/.config/loomdb (subprocesses inherit it); a test that configures
# something points XDG_CONFIG_HOME elsewhere
import tempfile  # noqa: E402

os.environ["XDG_CONFIG_HOME"] = tempfile.mkdtemp(prefix="loomdb-config-")

BACKENDS = [b for b in os.environ.get("LOOMDB_TEST_BACKENDS", "sqlite,postgres").split(",") if b]


_sqlite_template: Path | None = None


def _empty_sqlite_store(folder: Path) -> str:
    """An empty SQLite store at `folder`: a copy of this process's migrated template
    (made once; a fresh store runs every migration, 30 ms a test on a loaded machine,
    a copy 4 ms), as the PostgreSQL stores are copies of a template database."""
    global _sqlite_template
    if _sqlite_template is None:
        made = Path(tempfile.mkdtemp(prefix="loomdb-template-")) / "store"
        with loomdb.open(str(made)):
            pass
        _sqlite_template = made
    shutil.copytree(_sqlite_template, folder)
    return str(folder)


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A fresh, empty store of each backend kind."""
    if request.param == "sqlite":
        yield _empty_sqlite_store(tmp_path / "store")
    else:
        from pg import fresh_postgres_url

        with fresh_postgres_url(migrated=True) as url:
            yield url + ("&" if "?" in url else "?") + f"blobs=file://{tmp_path / 'blobs'}"


#: folders whose modules share a served store, a browser or a gateway per module: each
#: module runs on one worker, so a module fixture is built once and not once per worker
_WHOLE_MODULES = ("web", "server", "security", "integrations", "gateway", "providers")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    root = Path(__file__).parent
    for item in items:
        folder = item.path.relative_to(root).parts[0]
        if folder in _WHOLE_MODULES and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.path.stem))


def pytest_sessionfinish(session: pytest.Session) -> None:
    if "pg" in sys.modules:
        sys.modules["pg"].drop_template()
    if _sqlite_template is not None:
        shutil.rmtree(_sqlite_template.parent, ignore_errors=True)


@pytest.fixture
def loom(store_url: str) -> Iterator[Loom]:
    with loomdb.open(store_url) as lm:
        yield lm


@pytest.fixture
def backend_kind(store_url: str) -> str:
    return "postgres" if store_url.startswith("postgres") else "sqlite"


@pytest.fixture(scope="session")
def cluster() -> Iterator[object]:
    """A PostgreSQL primary with two hot standbys of the tests' own (see cluster.py),
    started once per test process and stopped at its end."""
    from cluster import Cluster

    running = Cluster.start(2)
    try:
        yield running
    finally:
        running.stop()
