"""Schemathesis against /openapi.json on a live server: whatever it sends, no 5xx, and
every answer matches the schema (status codes, content types, bodies). Generation and
replay are left out: they run the model (tests/server/test_generate_http.py and
tests/server/test_branches_http.py cover them)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from live import serving
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

import loomdb
from loomdb.server import create_app

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def live_schema(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    folder: Path = tmp_path_factory.mktemp("schema")
    with loomdb.open(str(folder / "store")) as lm, serving(create_app(lm)) as base:
        seed(lm)
        # the first semantic search of a process loads the embedding model (many seconds
        # on a busy machine, past a fuzzed request's timeout): load it before fuzzing
        import httpx

        assert httpx.get(f"{base}/api/search", params={"q": "seed", "mode": "hybrid"},
                         timeout=600).status_code == 200
        schema = schemathesis.openapi.from_url(f"{base}/openapi.json")
        yield schema.exclude(path_regex=r"/generate$|/branches/replay$")


def seed(lm: loomdb.Loom) -> None:
    """Something for the fuzzer to find in every area."""
    from loomdb.collections import service as K
    from loomdb.documents import service as D
    from loomdb.references import service as R

    lm.new_tree("seed words", session="main")
    D.new(lm, "main", "seed words\n")
    D.branch(lm, "main", "side")
    K.new(lm, "main", "tree")
    K.add(lm, "main", "doc:main", tags=["seed"], fields={"k": "v"})
    R.link(lm, "doc:main", "main", "cites")


AREAS = {"/api/documents", "/api/documents/{name}", "/api/documents/{name}/revisions",
         "/api/documents/{name}/log", "/api/documents/{name}/branches",
         "/api/documents/{name}/checkout", "/api/documents/{name}/merge",
         "/api/documents/{name}/diff", "/api/documents/from-message", "/api/collections",
         "/api/collections/{name}", "/api/collections/{name}/items",
         "/api/collections/{name}/items/{item}", "/api/collections/{name}/items/{item}/move",
         "/api/collections/{name}/items/{item}/tags",
         "/api/collections/{name}/items/{item}/fields", "/api/links", "/api/backlinks",
         "/api/search", "/api/gc"}

CHECKS = [not_a_server_error, status_code_conformance, content_type_conformance,
          response_schema_conformance]


def test_no_server_errors_and_answers_match_the_schema(live_schema: Any) -> None:
    operations = [result.ok() for result in live_schema.get_all_operations()]
    assert len(operations) > 40
    assert AREAS <= {op.path for op in operations}
    failures = []
    for operation in operations:

        @given(case=operation.as_strategy())
        @settings(max_examples=12, deadline=None, derandomize=True, database=None,
                  suppress_health_check=list(HealthCheck))
        def call(case: Any) -> None:
            case.call_and_validate(checks=CHECKS)

        try:
            call()
        except Exception as exc:  # noqa: BLE001 - gathered, then reported together
            failures.append(f"{operation.label}: {exc}")
    assert not failures, "\n\n".join(failures)
