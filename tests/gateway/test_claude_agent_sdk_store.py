"""The Claude Agent SDK's `query()` with `session_store=LoomSessionStore(...)`: the
Claude Code binary the SDK bundles runs offline against `loomdb gateway` (the
Anthropic wire, the local model answering), and the SDK mirrors the session's
transcript into the store, where it lands as one tree (the tree `loomdb import` makes
of the session file Claude Code wrote)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents_live import Gateway, claude_binary, start
from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, project_key_for_directory, query

import loomdb
from loomdb.integrations.claude_agent_sdk import LoomSessionStore
from loomdb.settings import Settings

#: one module, one worker: its live gateway is started once
pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("claude-code")]


@pytest.fixture(scope="module")
def gw(tmp_path_factory: pytest.TempPathFactory, local_model: None) -> Iterator[Gateway]:
    yield from start(tmp_path_factory.mktemp("sdk-store"))


def test_a_query_with_the_session_store_lands_as_one_tree(gw: Gateway, tmp_path: Path) -> None:
    sessions = str(tmp_path / "sessions")

    async def run() -> list[Any]:
        with LoomSessionStore(sessions) as store:
            options = ClaudeAgentOptions(
                cli_path=str(claude_binary()), cwd=str(gw.work), model="small", max_turns=1,
                session_store=store,
                env=gw.env(ANTHROPIC_BASE_URL=gw.base, ANTHROPIC_API_KEY="unused",
                           ANTHROPIC_MODEL="small", ANTHROPIC_SMALL_FAST_MODEL="small",
                           CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1", DISABLE_AUTOUPDATER="1",
                           DISABLE_TELEMETRY="1",
                           # where the SDK looks for the files it mirrors, and Claude Code
                           # writes them: the test's folder
                           CLAUDE_CONFIG_DIR=str(gw.home / ".claude")))
            return [m async for m in query(prompt="Say hello", options=options)]

    out = asyncio.run(run())
    done = [m for m in out if isinstance(m, ResultMessage)]
    assert done and not done[-1].is_error, out
    sid = done[-1].session_id
    written = list((gw.home / ".claude" / "projects").rglob(f"{sid}.jsonl"))
    assert len(written) == 1
    lines = [json.loads(x) for x in written[0].read_text("utf-8").splitlines() if x.strip()]
    key = {"project_key": project_key_for_directory(str(gw.work)), "session_id": sid}
    with LoomSessionStore(sessions) as store:
        loaded = asyncio.run(store.load(key))
        assert loaded is not None
        # the transcript, line for line: what the SDK mirrored is what Claude Code wrote
        # (the file holds a few lines the mirror leaves out, none with a uuid)
        assert [x for x in loaded if "uuid" in x] == [x for x in lines if "uuid" in x]
        assert all(x in lines for x in loaded)
        tree = store.loom.trees()
        assert len(tree) == 1  # the session, one tree
        nodes = {n.id: (n.role, n.content) for n in store.loom.tree_nodes(tree[0].id)}
        assert sorted(role for role, _ in nodes.values()) == ["assistant", "user"]
    # the tree `loomdb import` makes of the file Claude Code wrote
    with loomdb.open(str(tmp_path / "imported"), settings=Settings()) as lm:
        # (named: detection reads the first line, here a `queue-operation` it does not know)
        assert not lm.import_file(written[0], format="claude_code").errors
        assert [t.id for t in lm.trees()] == [tree[0].id]
        assert {n.id: (n.role, n.content) for n in lm.tree_nodes(tree[0].id)} == nodes
