"""Tool blocks as seed 002 has them (issue 11, item 8): a tool_use without an id gets a
stable generated one, a tool_result carries its tool's name and may leave out the
tool_use_id; and a store written before the change still verifies and reads the same."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import loomdb
from helpers import thread
from loomdb import InvalidInput, Loom
from loomdb.content import content_id, validate_blocks
from loomdb.providers.requests import openai_chat_request
from loomdb.providers.requests_anthropic import anthropic_request
from loomdb.tool_ids import PREFIX

FIXTURES = Path(__file__).parent / "fixtures"
CALL = {"type": "tool_use", "name": "weather", "input": {"city": "Paris"}}
RESULT = {"type": "tool_result", "name": "weather",
          "content": [{"type": "text", "text": "18 C"}]}


class TestValidation:
    def test_a_tool_use_without_id_gets_a_stable_one(self) -> None:
        one = validate_blocks([CALL])
        two = validate_blocks([dict(CALL)])
        assert one[0]["id"].startswith(PREFIX) and one == two
        assert content_id(one) == content_id(two)

    def test_generated_ids_differ_by_input_and_place(self) -> None:
        other = {**CALL, "input": {"city": "Rome"}}
        ids = [b["id"] for b in validate_blocks([CALL, other, dict(CALL)])]
        assert len(set(ids)) == 3

    def test_a_given_id_is_kept(self) -> None:
        assert validate_blocks([{**CALL, "id": "call_9"}])[0]["id"] == "call_9"

    def test_a_tool_result_may_name_its_tool_without_a_tool_use_id(self) -> None:
        assert validate_blocks([RESULT]) == [RESULT]

    def test_a_tool_result_naming_nothing_is_refused(self) -> None:
        bare = {"type": "tool_result", "content": []}
        with pytest.raises(InvalidInput, match=r"content\[0\].*name"):
            validate_blocks([bare])


class TestInAStore:
    def test_a_thread_with_seed_002_tool_blocks(self, loom: Loom) -> None:
        thread(loom, ["Weather in Paris?"])
        call = loom.append("main", [CALL], role="assistant")
        stored = loom.node(call.id).content[0]
        assert stored["id"].startswith(PREFIX)
        loom.append("main", [RESULT], role="tool")
        assert loom.verify().ok
        ctx = loom.context("main")
        oa = openai_chat_request(ctx, model="gpt-4o")
        assert oa["messages"][1]["tool_calls"][0]["id"] == stored["id"]
        assert oa["messages"][2] == {"role": "tool", "tool_call_id": stored["id"],
                                     "content": "18 C"}
        an = anthropic_request(ctx, model="claude-sonnet-4-5")
        assert an["messages"][2]["content"][0]["tool_use_id"] == stored["id"]

    def test_results_link_to_the_latest_open_call_of_their_tool(self, loom: Loom) -> None:
        thread(loom, ["Two cities?"])
        loom.append("main", [{**CALL, "id": "a"}, {**CALL, "id": "b",
                             "input": {"city": "Rome"}}], role="assistant")
        loom.append("main", [RESULT, RESULT], role="tool")
        sent = openai_chat_request(loom.context("main"), model="gpt-4o")["messages"]
        assert [m.get("tool_call_id") for m in sent[2:]] == ["b", "a"]


@pytest.fixture
def old_store(tmp_path: Path) -> Loom:
    """The store `fixtures/make_store_blocks_v1.py` wrote with the version before seed
    002's tool blocks (its SQL dump and its one blob file)."""
    folder = tmp_path / "old"
    folder.mkdir()
    db = sqlite3.connect(folder / "loom.db")
    db.executescript((FIXTURES / "store-blocks-v1.sql").read_text("utf-8"))
    db.close()
    shutil.copytree(FIXTURES / "store-blocks-v1.blobs", folder / "blobs")
    return loomdb.open(str(folder))


class TestAStoreWrittenBefore:
    def test_it_verifies_generation_and_blob_included(self, old_store: Loom) -> None:
        report = old_store.verify()
        assert report.ok and report.checked == 5, report.broken

    def test_its_tool_blocks_read_and_go_to_providers_as_before(self, old_store: Loom) -> None:
        msgs: list[dict[str, Any]] = old_store.context("main")["messages"]
        assert msgs[1]["content"][1] == {"type": "tool_use", "id": "call_1", "name": "weather",
                                         "input": {"city": "Paris"}}
        assert "name" not in msgs[2]["content"][0]
        oa = openai_chat_request(old_store.context("main"), model="gpt-4o",
                                 blob_reader=old_store.blob)
        assert oa["messages"][2]["tool_call_id"] == "call_1"

    def test_it_takes_new_turns_in_the_new_shapes(self, old_store: Loom) -> None:
        old_store.append("main", [CALL], role="assistant")
        old_store.append("main", [RESULT], role="tool")
        assert old_store.verify().ok
