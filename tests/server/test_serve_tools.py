"""`loomdb serve` itself runs an agent's tools as its user configured them (issue 32,
point 13; issue 35, point 2): approving over HTTP a call of the `tally` tool, defined in
the user's own tools.toml (the configuration-trust rule), runs it once and resumes the
turn, and denying another runs nothing. A real `loomdb serve` process on loopback, one
backend: what is tested is the command's configuration, which no backend changes (the
inbox over both backends is tests/server/test_agents_http.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from agent_calls import Tally, held
from live import serve_command

import loomdb

pytestmark = pytest.mark.slow  # a `loomdb serve` process

SRC = str(Path(loomdb.__file__).parent.parent)


def test_serve_approves_and_denies_calls_of_a_configured_tool(tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    (xdg / "loomdb").mkdir(parents=True)
    tally = Tally(xdg / "loomdb")  # ~/.config/loomdb/tools.toml
    store = str(tmp_path / "store")
    with loomdb.open(store) as lm:
        node = held(lm, tally, "visits")
        refused = held(lm, tally, "errands")
    env = {k: v for k, v in os.environ.items()
           if k not in ("LOOMDB_TOOLS", "LOOMDB_PROVIDERS", "LOOMDB_ALLOW_HOSTS")}
    env.update(PYTHONPATH=SRC, XDG_CONFIG_HOME=str(xdg))
    with serve_command(store, env) as (_, http):
        assert tally.runs() == 0
        done = http.post(f"/api/agents/pending/{node}/approve")
        assert done.status_code == 200, done.text
        assert tally.runs() == 1 and done.json()["session"] == "visits"
        [result] = done.json()["nodes"]
        step = http.get(f"/api/agents/turns/{result}").json()["steps"][-1]
        assert step["role"] == "tool" and "tally: 1" in json.dumps(step["content"])
        no = http.post(f"/api/agents/pending/{refused}/deny", json={"reason": "not today"})
        assert no.status_code == 200, no.text
        assert tally.runs() == 1 and no.json()["session"] == "errands"
        step = http.get(f"/api/agents/turns/{no.json()['nodes'][0]}").json()["steps"][-1]
        assert "denied: not today" in json.dumps(step["content"])
        assert http.get("/api/agents/pending").json()["pending"] == []
