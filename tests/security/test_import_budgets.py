"""Issue 32 item 3: work budgets for imports, not only byte limits. Each class in a few
shapes, on small generated hostile files (sizes small, assertions on counts of reads
and decodes or on memory that does not grow with the file, never on timing):

* every import folds as it reads: a Codex rollout, a Claude Code or a pi session full of
  values that are small as JSON and large as Python objects is parsed in memory that
  does not follow the file;
* a zip member is decompressed once however many image pointers name it;
* a foreign database (simonw/llm's logs.db) is read once into maps: a hash stored twice
  refuses it, its roots and messages are capped, and its work grows with its rows, not
  with rows times trees, when it has no index;
* an upload's import has a wall-clock budget: refused in one line, nothing stays.
"""

from __future__ import annotations

import sqlite3
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import loomdb
from loomdb import Loom
from loomdb.interop import budget, llm_logs, parse_file
from loomdb.interop.stream import Input
from loomdb.limits import MB, Limits

from .conftest import BACKENDS
from .hostile_files import chatgpt_zip, claude_code_session, codex_rollout, pi_session
from .hostile_files import llm_logs as llm_db
from .import_world import live_store, node_rows, upload

SIZE = 1 * MB


def traced_peak(path: Path, warm: Path) -> int:
    """The Python heap's high-water mark while every conversation of `path` is parsed
    (`warm` parsed first: imports and first allocations are not counted)."""
    list(parse_file(warm))
    tracemalloc.start()
    try:
        for _item in parse_file(path):
            pass
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("make", [codex_rollout, claude_code_session, pi_session],
                         ids=["codex", "claude-code", "pi"])
def test_an_agent_session_is_folded_as_it_is_read(make: Any, tmp_path: Path) -> None:
    hostile = make(tmp_path / "hostile.jsonl", SIZE, hostile=True)
    size = hostile.stat().st_size
    warm = make(tmp_path / "warm.jsonl", 1024, hostile=False)
    # held whole as Python objects, this file takes over 20 times its size; folded as
    # it is read, the reader's buffers (a chunk of 1 MB) and one value at a time
    assert traced_peak(hostile, warm) < 3 * size
    assert any(getattr(item, "messages", None) for item in parse_file(warm))


@pytest.fixture
def decodes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The zip members read, in order (the real read, counted)."""
    seen: list[str] = []
    real = Input.read_zip_member

    def counted(self: Input, name: str) -> bytes:
        seen.append(name)
        return real(self, name)

    monkeypatch.setattr(Input, "read_zip_member", counted)
    return seen


def test_a_zip_member_is_decompressed_once_however_often_it_is_named(
    loom: Loom, tmp_path: Path, decodes: list[str]
) -> None:
    path = chatgpt_zip(tmp_path / "export.zip", 1 * MB, 60, hostile=True)
    assert path.stat().st_size < 16 * 1024
    report = loom.import_file(path)
    assert not report.errors and report.blobs == 1
    assert decodes == ["file-0-picture.png"]
    images = [b for t in loom.trees() for n in loom.tree_nodes(t.id)
              for b in n.content if b["type"] == "image"]
    assert len(images) == 60 and len({b["ref"] for b in images}) == 1


def test_members_past_the_cache_count_against_zip_total(tmp_path: Path,
                                                        decodes: list[str]) -> None:
    path = chatgpt_zip(tmp_path / "export.zip", 400 * 1024, 8, hostile=False)
    inp = Input(path, "conversations.json", limits=Limits(blob=64 * 1024, zip_total=200 * 1024))
    from loomdb.interop.chatgpt import parse

    items = list(parse(inp))
    assert len(decodes) < 8  # refused once the decoded total passed zip_total
    assert any("zip_total" in getattr(item, "reason", "") for item in items)


class Statements:
    """The SQLite virtual machine steps the llm reader runs (its own connection)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.steps = 0
        real = llm_logs._connect

        def connect(path: Path) -> sqlite3.Connection:
            db = real(path)
            db.set_progress_handler(self._step, 100)
            return db

        monkeypatch.setattr(llm_logs, "_connect", connect)

    def _step(self) -> int:
        self.steps += 1
        return 0


def test_a_logs_db_without_indexes_is_read_in_work_linear_in_its_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counted = Statements(monkeypatch)
    work = []
    for roots in (100, 400):
        counted.steps = 0
        items = list(parse_file(llm_db(tmp_path / f"{roots}.db", roots)))
        assert len(items) == roots and all(len(i.messages) == 2 for i in items)
        work.append(counted.steps)
    assert work[1] < 6 * work[0]  # four times the rows; a scan per tree would be 16 times


def test_a_logs_db_with_a_hash_twice_is_refused_whole(loom: Loom, tmp_path: Path) -> None:
    report = loom.import_file(llm_db(tmp_path / "dup.db", 20, duplicates=True))
    assert report.trees == [] and len(report.errors) == 1
    assert "duplicate message ids: q0" in report.errors[0]["reason"]
    assert loom.trees() == []


@pytest.mark.parametrize(("limits", "said"), [
    (Limits(foreign_roots=10), "more than 10 trees (LOOMDB_LIMIT_FOREIGN_ROOTS)"),
    (Limits(foreign_messages=30), "more than 30 rows (LOOMDB_LIMIT_FOREIGN_MESSAGES)"),
])
def test_a_logs_db_past_its_caps_is_refused_whole(tmp_path: Path, limits: Limits,
                                                  said: str) -> None:
    with loomdb.open(str(tmp_path / "store"), limits=limits) as lm:
        report = lm.import_file(llm_db(tmp_path / "many.db", 20))
        assert report.trees == [] and lm.trees() == []
        assert said in " ".join(e["reason"] for e in report.errors)


def test_an_import_past_its_budget_is_refused_before_writing(tmp_path: Path) -> None:
    path = codex_rollout(tmp_path / "r.jsonl", 64 * 1024, hostile=False)
    with loomdb.open(str(tmp_path / "store")) as lm:
        from loomdb.interop.importer import import_file

        with pytest.raises(budget.OverBudget, match="budget of 0 s"):
            import_file(lm, path, seconds=0)
        assert lm.trees() == []
        assert import_file(lm, path).trees  # no budget: the command line's import


class Clock:
    """The budget's clock, moved by the test: each reading is one second later."""

    def __init__(self) -> None:
        self.now = 0.0
        self.readings = 0

    def monotonic(self) -> float:
        self.readings += 1
        self.now += 1.0
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[Clock]:
    fake = Clock()
    monkeypatch.setattr(budget, "time", fake)
    yield fake


def sharegpt_file(count: int) -> bytes:
    import json

    return json.dumps([{"conversations": [{"from": "human", "value": f"Question {i}?"},
                                          {"from": "gpt", "value": "An answer."}]}
                       for i in range(count)]).encode()


@pytest.mark.parametrize("kind", BACKENDS)
def test_an_upload_past_its_budget_is_one_line_and_leaves_nothing(
    kind: str, tmp_path: Path, clock: Clock
) -> None:
    data = sharegpt_file(40)
    (tmp_path / "d.json").write_bytes(data)
    with loomdb.open(str(tmp_path / "whole")) as lm:
        from loomdb.interop.importer import import_file

        import_file(lm, tmp_path / "d.json", files=None, seconds=10**9)
        checks = clock.readings  # the budget's checks of a whole import
        assert node_rows(lm) == 80
    with live_store(kind, tmp_path / "half", Limits(import_seconds=checks / 2)) as (lm, base):
        answer = upload(base, "d.json", data)
        assert answer.status_code == 413, answer.text
        detail = answer.json()
        text = str(detail)
        assert "LOOMDB_LIMIT_IMPORT_SECONDS" in text and "\n" not in text
        assert lm.trees() == [] and node_rows(lm) == 0  # what had landed was deleted again
        assert any("time budget" in (line.get("reason") or "") for line in lm.forget.log())
