"""`loomdb user add` prints a token once; `loomdb serve` refuses a public address while
the store has no users; the loopback rule of the single-user server."""

from __future__ import annotations

import json
from pathlib import Path

from loomdb.server.state import is_loopback
from test_bad_input import run_cli


def test_user_add_prints_the_token_once_and_list_never_shows_it(tmp_path: Path) -> None:
    db = str(tmp_path / "store")
    code, out, _ = run_cli(db, "user", "add", "alice")
    token = out.strip()
    assert code == 0 and len(token) >= 40
    code, out, _ = run_cli(db, "user", "list", "--json")
    assert code == 0 and token not in out
    assert [u["name"] for u in json.loads(out)["users"]] == ["alice"]
    code, _, err = run_cli(db, "user", "add", "alice")
    assert code == 2 and "already exists" in err
    code, _, err = run_cli(db, "user", "add", "no spaces")
    assert code == 2 and "user name" in err


def test_serve_refuses_a_public_address_without_users(tmp_path: Path) -> None:
    code, _, err = run_cli(str(tmp_path / "store"), "serve", "--host", "0.0.0.0")
    assert code == 2 and "not loopback" in err


def test_loopback_addresses() -> None:
    assert all(map(is_loopback, ["127.0.0.1", "127.5.0.1", "::1", "localhost"]))
    assert not any(map(is_loopback, ["10.0.0.1", "0.0.0.0", "192.168.1.1", None, "host"]))


def test_a_store_without_users_answers_loopback_only(tmp_path: Path) -> None:
    import pytest

    import loomdb
    from loomdb.server.errors import Unauthorized
    from loomdb.server.state import ServerState

    with loomdb.open(str(tmp_path / "store")) as lm:
        state = ServerState(lm, owned=False)
        assert state.access_for(None, "127.0.0.1").user is None
        with pytest.raises(Unauthorized, match="loopback"):
            state.access_for(None, "10.1.2.3")


def test_the_first_user_takes_effect_within_a_second(tmp_path: Path) -> None:
    import time

    import pytest

    import loomdb
    from loomdb.server.errors import Unauthorized
    from loomdb.server.state import ServerState
    from loomdb.users import add_user

    with loomdb.open(str(tmp_path / "store")) as lm:
        state = ServerState(lm, owned=False)
        assert state.access_for(None, "127.0.0.1").user is None
        _, token = add_user(lm, "first")
        time.sleep(1.1)
        with pytest.raises(Unauthorized):
            state.access_for(None, "127.0.0.1")
        assert state.access_for(f"Bearer {token}", "127.0.0.1").user is not None
