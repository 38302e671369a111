"""The OpenAI-compatible gateway takes no token, so it serves stores without users only
(issue 32, item 5). On a store with users the standalone app answered every local
process with every user's threads: a `previous_response_id` of another user's node sent
their path to the model and wrote the answer into their tree. The rule lives in the
front door's gateway, so every edge refuses alike: `create_gateway_app`, `loomdb
gateway`, and the `/v1` that `loomdb serve` mounts, also when the first user is added
while it serves; nothing is written.

A `previous_response_id` is one exact node id: a ref name, `~N` or an id prefix is no
response (it was resolved with the whole headish grammar)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from live import client, serving

import loomdb
from helpers import row_counts
from loomdb import Loom
from loomdb.gateway import create_gateway_app
from loomdb.server import create_app
from loomdb.users import Owner, add_user
from pg import store_of

BACKENDS = [b for b in os.environ.get("LOOMDB_TEST_BACKENDS", "sqlite,postgres").split(",") if b]
CHAT = {"model": "local", "messages": [{"role": "user", "content": "hello"}], "max_tokens": 4}


def _calls(previous: str) -> list[tuple[str, str, dict[str, Any] | None]]:
    """Every gateway route, the responses one continuing `previous`."""
    return [("GET", "/v1/models", None),
            ("POST", "/v1/chat/completions", CHAT),
            ("POST", "/v1/chat/completions", {**CHAT, "stream": True}),
            ("POST", "/v1/responses", {"model": "local", "input": "go on",
                                       "previous_response_id": previous}),
            ("POST", "/v1/responses", {"model": "local", "input": "hello"}),
            ("POST", "/v1/completions", {"model": "local", "prompt": "Once"})]


@pytest.fixture(scope="module", params=BACKENDS)
def store(request: pytest.FixtureRequest,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Loom, str, str]]:
    """(a Loom with users, its URL, alice's thread's head node), one per backend."""
    folder = tmp_path_factory.mktemp(f"gateway-users-{request.param}")
    with store_of(request.param, str(folder / "store")) as url, loomdb.open(url) as lm:
        alice, _token = add_user(lm, "alice")
        _tree, node = lm.as_(Owner(lm, alice)).trees.new("alice's secret plan", session="plan")
        yield lm, url, node.id


def _refused(r: httpx.Response) -> None:
    assert r.status_code == 401, r.text
    error = r.json()["error"]
    assert "without users" in error["message"], error
    assert "alice" not in r.text and "secret" not in r.text


def test_create_gateway_app_refuses_every_route_on_a_store_with_users(
        store: tuple[Loom, str, str]) -> None:
    lm, _url, alices = store
    before = row_counts(lm)
    with serving(create_gateway_app(lm)) as base, client(base) as http:
        for method, path, body in _calls(alices):
            _refused(http.request(method, path, json=body))
    assert row_counts(lm) == before


def test_the_mounted_v1_refuses_a_user_and_a_caller_without_token(
        store: tuple[Loom, str, str]) -> None:
    lm, _url, alices = store
    _user, token = add_user(lm, f"bob-{os.getpid()}-{id(lm)}")
    before = row_counts(lm)
    with serving(create_app(lm)) as base:
        with client(base, token) as http:  # a user's own token: still no gateway
            for method, path, body in _calls(alices):
                _refused(http.request(method, path, json=body))
        with client(base) as http:  # no token: the API's own refusal
            for method, path, body in _calls(alices):
                r = http.request(method, path, json=body)
                assert r.status_code == 401 and "secret" not in r.text, r.text
    assert row_counts(lm) == before


def test_loomdb_gateway_refuses_a_store_with_users_before_serving(
        store: tuple[Loom, str, str]) -> None:
    _lm, url, _alices = store
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    run = subprocess.run([sys.executable, "-m", "loomdb", "--db", url, "gateway", "--port",
                          "1"], env=env, capture_output=True, timeout=120, check=False)
    err = run.stderr.decode()
    assert run.returncode == 2, err
    assert err.count("\n") == 1 and "without users" in err and "Traceback" not in err


@pytest.mark.parametrize("kind", BACKENDS)
def test_a_user_added_while_it_serves_closes_the_gateway_at_once(
        kind: str, tmp_path: Path) -> None:
    with store_of(kind, str(tmp_path / "store")) as url, loomdb.open(url) as lm, \
            serving(create_gateway_app(lm)) as base, client(base) as http:
        assert http.get("/v1/models").status_code == 200
        add_user(lm, "carol")
        _refused(http.get("/v1/models"))  # no grace period: the next request
        _refused(http.post("/v1/chat/completions", json=CHAT))


@pytest.mark.parametrize("kind", BACKENDS)
def test_previous_response_id_is_one_exact_node_id(kind: str, tmp_path: Path) -> None:
    """A ref name, `~N`, `^` or a prefix is no response: nothing is asked or written."""
    with store_of(kind, str(tmp_path / "store")) as url, loomdb.open(url) as lm:
        tree, root = lm.new_tree("first", session="main")
        second = lm.append("main", "second", role="assistant")
        before = row_counts(lm)
        with serving(create_gateway_app(lm)) as base, client(base) as http:
            for name in ("main", "main~1", "main^", second.id[:8], second.id[:-1],
                         second.id.lower(), f"{second.id}~1", tree.id, "x" * 5000):
                r = http.post("/v1/responses", json={"model": "local", "input": "next",
                                                     "previous_response_id": name})
                assert r.status_code == 404, (name, r.text)
                assert root.id not in json.dumps(r.json())
        assert row_counts(lm) == before
