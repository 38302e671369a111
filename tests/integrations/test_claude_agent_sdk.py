"""The Claude Agent SDK's session store on loomdb: the SDK's own conformance suite with
no optional method skipped, on both backends; a real Claude Code session (with a
subagent) mirrored in batches as the SDK sends them, whose trees are the very trees
`loomdb import` makes of the same files; a fork through the SDK's own
`fork_session_via_store`, which is a ref (no message copied)."""

from __future__ import annotations

import asyncio
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from claude_agent_sdk import fork_session_via_store, project_key_for_directory
from claude_agent_sdk.testing import run_session_store_conformance

import loomdb
from loomdb.errors import InvalidInput
from loomdb.integrations.claude_agent_sdk import LoomSessionStore
from loomdb.integrations.claude_agent_sdk.area import SESSIONS

ROOT = Path(__file__).resolve().parents[1]
PROJECT = ROOT / "fixtures" / "agent-sessions" / "claude-code" / "experiments-worktrees"
SESSION = "ef958aa1-0e93-49f0-bb71-150f63befcd1"
AGENT = "a4ca7529859c158c2"


def _lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]


def test_the_sdks_conformance_suite_with_no_optional_method_skipped(store_url: str) -> None:
    """Each contract gets an empty session store: a store over the same loomdb store,
    after the area's rows are cleared (a new database per contract took a minute)."""
    made: list[LoomSessionStore] = []
    with loomdb.open(store_url) as lm:
        def fresh() -> LoomSessionStore:
            with lm.unit(SESSIONS) as db:
                db.execute("DELETE FROM cc_entries")
                db.execute("DELETE FROM cc_sessions")
            made.append(LoomSessionStore(lm))
            return made[-1]

        asyncio.run(run_session_store_conformance(fresh))  # skip_optional left empty
    assert len(made) == 15  # a probe and one store per contract: none was skipped


def _mirror(store: LoomSessionStore, key: dict[str, Any], lines: list[dict[str, Any]],
            batch: int = 25) -> None:
    """The lines appended as the SDK's mirror sends them: in batches, in order."""
    async def run() -> None:
        for i in range(0, len(lines), batch):
            await store.append(key, lines[i:i + batch])
    asyncio.run(run())


def _tree_nodes(lm: loomdb.Loom, tree: str) -> dict[str, tuple[str, Any]]:
    return {n.id: (n.role, n.content) for n in lm.tree_nodes(tree)}


def test_a_mirrored_session_is_the_tree_a_claude_code_import_makes(
        store_url: str, tmp_path: Path) -> None:
    main, agent = _lines(PROJECT / f"{SESSION}.jsonl"), _lines(
        PROJECT / SESSION / "subagents" / f"agent-{AGENT}.jsonl")
    key = {"project_key": "proj", "session_id": SESSION}
    sub = {**key, "subpath": f"subagents/agent-{AGENT}"}
    with LoomSessionStore(store_url) as store:
        _mirror(store, sub, agent)  # the subagent's lines reach the store first
        _mirror(store, key, main)
        # a batch sent again (a retry): entries with a uuid are stored once (those without
        # one, a title or a mode, are appended again, as the protocol says)
        _mirror(store, key, [line for line in main[:40] if "uuid" in line])
        assert asyncio.run(store.load(key)) == main
        assert asyncio.run(store.load(sub)) == agent
        assert asyncio.run(store.list_subkeys(key)) == [f"subagents/agent-{AGENT}"]
        mirrored = {t.id: t for t in store.loom.trees()}

    # the same files imported by `loomdb import`, in a store of their own
    folder = tmp_path / "project"
    shutil.copytree(PROJECT, folder)
    with loomdb.open(str(tmp_path / "imported")) as lm:
        report = lm.import_file(folder)
        assert not report.errors
        imported = {t.id: t for t in lm.trees()}
        assert set(mirrored) == set(imported) and len(imported) == 2
        with loomdb.open(store_url) as mine:
            for tid in imported:
                assert _tree_nodes(mine, tid) == _tree_nodes(lm, tid)
        child = next(t for t in imported.values() if t.lineage and "spawned" in t.lineage)
    assert mirrored[child.id].lineage["spawned"]["tree"] == child.lineage["spawned"]["tree"]
    assert mirrored[child.id].lineage["spawned"]["node"] == child.lineage["spawned"]["node"]


def test_a_fork_through_the_sdk_is_a_ref_and_continues_as_a_branch(
        store_url: str, tmp_path: Path) -> None:
    main = _lines(PROJECT / f"{SESSION}.jsonl")
    project = project_key_for_directory(str(tmp_path))
    key = {"project_key": project, "session_id": SESSION}
    cut = next(line["uuid"] for line in main[60:] if line.get("type") == "user")
    with LoomSessionStore(store_url) as store:
        _mirror(store, key, main)
        loom = store.loom
        tree = loom.tree(loom.refs("session")[0].tree)
        before = tree.nodes
        fork = asyncio.run(fork_session_via_store(store, SESSION, directory=str(tmp_path),
                                                  up_to_message_id=cut, title="a fork"))
        fork_key = {"project_key": project, "session_id": fork.session_id}
        lines = asyncio.run(store.load(fork_key))
        assert lines is not None and lines[-1]["customTitle"] == "a fork"
        assert loom.tree(tree.id).nodes == before  # a ref: no message copied
        ref = loom.ref(f"import/claude-code/fork-{fork.session_id}")
        assert ref.tree == tree.id
        held = next(n for n in loom.tree_nodes(tree.id)
                    if cut in (n.provenance or {}).get("metadata", {}).get("uuids", []))
        assert ref.node == held.id
        with loom.unit(SESSIONS) as db:  # copied entries keep only what they changed
            (copied,), = db.execute("SELECT COUNT(*) FROM cc_entries WHERE base_session IS NOT NULL")
        assert copied == len([line for line in lines if "forkedFrom" in line])

        # the fork resumed: its next turn hangs from the message it was cut at
        last = next(line for line in reversed(lines) if line.get("type") in ("user", "assistant"))
        turn = [{"type": "user", "uuid": "f0000000-0000-4000-8000-000000000001",
                 "parentUuid": last["uuid"], "sessionId": fork.session_id,
                 "timestamp": "2026-01-01T00:00:00.000Z",
                 "message": {"role": "user", "content": "and on the fork?"}},
                {"type": "assistant", "uuid": "f0000000-0000-4000-8000-000000000002",
                 "parentUuid": "f0000000-0000-4000-8000-000000000001",
                 "sessionId": fork.session_id, "timestamp": "2026-01-01T00:00:01.000Z",
                 "message": {"id": "msg_fork", "role": "assistant", "model": "claude",
                             "stop_reason": "end_turn",
                             "content": [{"type": "text", "text": "A branch of the same tree."}]}}]
        asyncio.run(store.append(fork_key, turn))
        assert loom.tree(tree.id).nodes == before + 2
        moved = loom.ref(f"import/claude-code/fork-{fork.session_id}")
        assert loom.path(moved.node)[:-2] == loom.path(held.id)
        assert asyncio.run(store.load(fork_key)) == lines + turn

        asyncio.run(store.delete(fork_key))  # the fork's ref and its branch go
        assert loom.tree(tree.id).nodes == before
        assert asyncio.run(store.load(key)) == main
        asyncio.run(store.delete(key))
        assert asyncio.run(store.load(key)) is None
        assert tree.id not in [t.id for t in loom.trees()]


def test_what_the_store_refuses(tmp_path: Path) -> None:
    """Keys and entries that are not what the protocol says: refused in one line, nothing
    stored."""
    deep: list[Any] = []
    for _ in range(200):
        deep = [deep]
    with LoomSessionStore(str(tmp_path / "store")) as store:
        for key, entries in (
            ({"project_key": "p"}, [{"type": "x"}]),
            ({"project_key": "p", "session_id": ""}, [{"type": "x"}]),
            ({"project_key": "p", "session_id": "s", "subpath": ""}, [{"type": "x"}]),
            ({"project_key": "p", "session_id": "s"}, [{"no": "type"}]),
            ({"project_key": "p", "session_id": "s"}, [{"type": "x", "v": float("nan")}]),
            ({"project_key": "p", "session_id": "s"}, [{"type": "x", "deep": deep}]),
            ({"project_key": "p", "session_id": "s"}, "not a list"),
        ):
            with pytest.raises(InvalidInput):
                store.append_sync(key, entries)  # type: ignore[arg-type]
        assert asyncio.run(store.list_sessions("p")) == []


def test_a_forgotten_tree_takes_its_transcripts(store_url: str) -> None:
    """`loomdb delete tree:` of a session's tree: the store forgets the session too."""
    main = _lines(PROJECT / f"{SESSION}.jsonl")
    key = {"project_key": "proj", "session_id": SESSION}
    with LoomSessionStore(store_url) as store:
        _mirror(store, key, main, batch=len(main))
        tree = store.loom.refs("session")[0].tree
        store.loom.forget.delete_tree(tree, force=True)
        assert asyncio.run(store.load(key)) is None
        assert asyncio.run(store.list_sessions("proj")) == []
