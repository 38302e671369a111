"""A store without users is open to loopback clients with no token, so nothing may put
it behind a name a reverse proxy answers to (issue 32, point 11): `serve --allow-host`
and `$LOOMDB_ALLOW_HOSTS` are refused on such a store, as a non-loopback `--host` is,
on `serve` and `gateway` alike; with a user they are taken. And the documented proxy
block passes the client's address on (X-Forwarded-For), which the server (uvicorn's
proxy headers, trusted from loopback) reads as the caller: through it, a store without
users refuses every remote client, on a live server of each backend."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import httpx
import pytest

import loomdb
from helpers import run_main as cli
from loomdb import Loom

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def started(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """What `uvicorn.run` was called with (it returns at once: the command's own checks
    are what is tested; live servers are below)."""
    import uvicorn
    from starlette.testclient import TestClient

    calls: list[dict[str, Any]] = []

    def run(app: Any, **kw: Any) -> None:
        # the Host names the app answers (while the command's store is open)
        http = TestClient(app)
        kw["answers"] = {host: http.get("/api/trees", headers={"host": host}).status_code
                         for host in ("loom.example", "other.example", "evil.example")}
        calls.append(kw)

    monkeypatch.setattr(uvicorn, "run", run)
    monkeypatch.delenv("LOOMDB_ALLOW_HOSTS", raising=False)
    return calls


def test_allowed_names_are_refused_on_a_store_without_users(
        tmp_path: Path, started: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    db = str(tmp_path / "store")
    for args, named in ((["serve", "--allow-host", "loom.example"], "--allow-host"),
                        (["serve", "--allow-host", "*"], "--allow-host")):
        code, _, err = cli("--db", db, *args)
        assert code == 2 and err.count("\n") == 1 and named in err and "no users" in err, err
    monkeypatch.setenv("LOOMDB_ALLOW_HOSTS", "loom.example")
    for args in (["serve"], ["gateway"]):
        code, _, err = cli("--db", db, *args)
        assert code == 2 and err.count("\n") == 1 and "$LOOMDB_ALLOW_HOSTS" in err, err
    assert started == []


def test_allowed_names_are_taken_once_the_store_has_users(
        tmp_path: Path, started: list[dict[str, Any]], monkeypatch: pytest.MonkeyPatch) -> None:
    db = str(tmp_path / "store")
    assert cli("--db", db, "user", "add", "alice")[0] == 0
    monkeypatch.setenv("LOOMDB_ALLOW_HOSTS", "other.example")
    code, _, err = cli("--db", db, "serve", "--allow-host", "loom.example")
    assert code == 0, err
    [call] = started
    # the server reads X-Forwarded-For from a proxy on loopback (uvicorn's default)
    assert call.get("proxy_headers", True) and "forwarded_allow_ips" not in call
    # allowed names reach the API (which wants a token), any other is refused
    assert call["answers"] == {"loom.example": 401, "other.example": 401, "evil.example": 400}


def test_the_documented_proxy_block_passes_the_client_address_on() -> None:
    text = (ROOT / "docs" / "security.md").read_text("utf-8")
    block = text.split("```nginx", 1)[1].split("```", 1)[0]
    assert re.search(r"proxy_set_header\s+X-Forwarded-For\s+\$proxy_add_x_forwarded_for;",
                     block), block


def test_through_a_proxy_a_store_without_users_refuses_remote_clients(
        served: tuple[Loom, str]) -> None:
    _, base = served
    with httpx.Client(base_url=base, timeout=30) as http:
        assert http.get("/api/trees").status_code == 200  # a loopback client, no proxy
        remote = http.get("/api/trees", headers={"X-Forwarded-For": "203.0.113.9"})
        assert remote.status_code == 401 and "loopback" in remote.text, remote.text
        local = http.get("/api/trees", headers={"X-Forwarded-For": "127.0.0.1"})
        assert local.status_code == 200


def test_a_library_server_keeps_its_own_choice(tmp_path: Path) -> None:
    # Trust.configured is the CLI's; an app a program builds takes the Trust it is given
    from loomdb.guard import Trust
    from loomdb.settings import Settings

    with loomdb.open(str(tmp_path / "store")) as lm:
        with pytest.raises(loomdb.InvalidInput, match="--allow-host"):
            Trust.configured("127.0.0.1", ["x.example"], Settings(), lm.limits, users=False)
        assert "x.example" in Trust.configured("127.0.0.1", ["x.example"], Settings(),
                                               lm.limits, users=True).hosts
