"""`loomdb serve` itself runs an agent's tools as its user configured them (issue 32,
point 13; issue 35, point 2): approving over HTTP a call of the `tally` tool, defined in
the user's own tools.toml (the configuration-trust rule), runs it once and resumes the
turn. A real `loomdb serve` process on loopback, one backend: what is tested is the
command's configuration, which no backend changes (the inbox over both backends is
tests/server/test_agents_http.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from agent_calls import PERSONA, Tally
from live import free_port

import loomdb
from loomdb.agents.identities import bind_session, set_persona
from loomdb.agents.loop import Plan, hold

pytestmark = pytest.mark.slow  # a `loomdb serve` process

SRC = str(Path(loomdb.__file__).parent.parent)


def waiting_call(lm: loomdb.Loom, tally: Tally, session: str) -> str:
    """A tally call waiting for approval, held as the tool loop holds one (the model's
    part is tests/server/test_agents_http.py's; here it would only cost time)."""
    set_persona(lm, PERSONA, approve=["tally"])
    _, root = lm.new_tree("Count one visit.", session=session, options=tally.options())
    bind_session(lm, session, persona=PERSONA)
    calls = [{"type": "tool_use", "id": "toolu_1", "name": "tally", "input": {"what": "visit"}}]
    node = lm.append(session, calls, role="assistant")
    hold(lm, Plan(root.id, session, PERSONA, max_steps=1, steps=1), node, calls)
    return node.id


def test_serve_approves_a_call_that_runs_a_configured_tool(tmp_path: Path) -> None:
    xdg = tmp_path / "xdg"
    (xdg / "loomdb").mkdir(parents=True)
    tally = Tally(xdg / "loomdb")  # ~/.config/loomdb/tools.toml
    store = str(tmp_path / "store")
    with loomdb.open(store) as lm:
        node = waiting_call(lm, tally, "visits")
    env = {k: v for k, v in os.environ.items()
           if k not in ("LOOMDB_TOOLS", "LOOMDB_PROVIDERS", "LOOMDB_ALLOW_HOSTS")}
    env.update(PYTHONPATH=SRC, XDG_CONFIG_HOME=str(xdg))
    proc = subprocess.Popen(
        [sys.executable, "-m", "loomdb", "--db", store, "serve", "--port", str(free_port()),
         "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        assert proc.stdout is not None
        base = json.loads(proc.stdout.readline())["url"].rstrip("/")
        deadline = time.monotonic() + 60
        with httpx.Client(base_url=base, timeout=300) as http:
            while True:
                try:
                    if http.get("/api/trees").status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert proc.poll() is None and time.monotonic() < deadline, proc.stderr
                time.sleep(0.1)
            assert tally.runs() == 0
            done = http.post(f"/api/agents/pending/{node}/approve")
            assert done.status_code == 200, done.text
            assert tally.runs() == 1 and done.json()["session"] == "visits"
            [result] = done.json()["nodes"]
            step = http.get(f"/api/agents/turns/{result}").json()["steps"][-1]
            assert step["role"] == "tool" and "tally: 1" in json.dumps(step["content"])
    finally:
        proc.terminate()
        proc.wait(15)
