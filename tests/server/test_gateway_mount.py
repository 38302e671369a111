"""The OpenAI-compatible gateway is part of `loomdb serve`: `/v1` answers beside `/api`
on a store without users, and a store with users refuses it (its path matching would
otherwise cross owners)."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
from live import client, serving

import loomdb
from loomdb.server import create_app
from loomdb.users import add_user


def test_v1_is_served_beside_the_api_and_refused_once_there_are_users(tmp_path: Path) -> None:
    with loomdb.open(str(tmp_path / "store")) as lm, serving(create_app(lm)) as base:
        with client(base) as http:
            models = http.get("/v1/models")
            assert models.status_code == 200
            assert "local" in [m["id"] for m in models.json()["data"]]
            assert http.get("/api/health").json() == {"ok": True}
        add_user(lm, "alice")
        time.sleep(1.1)  # the server trusts "no users" for a second (server/state.py)
        with httpx.Client(base_url=base, timeout=30) as raw:
            refused = raw.get("/v1/models")
        assert refused.status_code == 401
        assert refused.json()["error"]["type"] == "Unauthorized"
