"""A user's token can be rotated (issue 22, item 12): `loomdb user token NAME` prints a
new one; the old one stops working at once on a live server; everything the user owns
(trees, documents, collections) stays theirs and no one else's. Both backends."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

import loomdb
from loomdb import Loom
from loomdb.server import create_app
from loomdb.users import add_user

sys.path.insert(0, str(Path(__file__).parent.parent / "server"))
from live import serving  # noqa: E402

from test_bad_input import run_cli  # noqa: E402


@pytest.fixture(params=["sqlite", "postgres"])
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Loom, str]]:
    from pg import store_of

    with store_of(request.param, str(tmp_path / "store")) as url, loomdb.open(url) as lm, \
            serving(create_app(lm)) as base:
        yield url, lm, base


def _http(base: str, token: str) -> httpx.Client:
    return httpx.Client(base_url=base, timeout=60, headers={
        "Authorization": f"Bearer {token}", "Host": base.removeprefix("http://"),
        "Content-Type": "application/json"})


def test_a_rotated_token_replaces_the_old_and_keeps_what_is_owned(
        served: tuple[str, Loom, str]) -> None:
    url, lm, base = served
    _, old = add_user(lm, "alice")
    _, other = add_user(lm, "bob")
    with _http(base, old) as alice:
        tree = alice.post("/api/trees", json={"text": "alice's secret", "session": "al"})
        assert tree.status_code in (200, 201), tree.text
        assert alice.post("/api/documents", json={"name": "al-doc", "text": "x"}
                          ).status_code in (200, 201)
        assert alice.post("/api/collections", json={"name": "al-coll"}).status_code in (200, 201)

    code, out, err = run_cli(url, "user", "token", "alice", "--json")
    assert code == 0, err
    shown = json.loads(out)
    new = shown["token"]
    assert shown["name"] == "alice" and new != old and len(new) >= 40

    with _http(base, old) as stale:
        for path in ("/api/trees", "/api/nodes/al", "/api/documents"):
            assert stale.get(path).status_code == 401, path
    with _http(base, new) as alice:
        assert [t["id"] for t in alice.get("/api/trees").json()["trees"]] == [
            tree.json()["tree"]]
        assert alice.get("/api/documents/al-doc").status_code == 200
        assert alice.get("/api/collections/al-coll").status_code == 200
        added = alice.post("/api/nodes/al/append", json={"role": "user", "text": "still mine"})
        assert added.status_code in (200, 201), added.text
    with _http(base, other) as bob:
        assert bob.get("/api/trees").json()["trees"] == []
        assert bob.get("/api/nodes/al").status_code == 404


def test_rotating_an_unknown_user_is_one_line(served: tuple[str, Loom, str]) -> None:
    url, lm, _ = served
    add_user(lm, "alice")
    code, out, err = run_cli(url, "user", "token", "nobody")
    assert code == 2 and err.startswith("loomdb: error: ") and err.count("\n") == 1
    assert "nobody" in err
