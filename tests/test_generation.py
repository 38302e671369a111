"""Generation with the real local model (SmolLM2-135M in-process): siblings, provenance,
sessions, failures, tool-use spans, compaction."""

from __future__ import annotations

import json

import pytest

from helpers import row_counts, texts_of, thread
from loomdb import InvalidInput, Loom, ProviderError
from loomdb.compaction import compact, maybe_compact
from loomdb.generation import generate
from loomdb.providers.config import parse_config

pytestmark = pytest.mark.xdist_group("local-model")

DOWN = parse_config({"models": {"down": {"provider": "openai", "model": "m",
                                          "base_url": "http://127.0.0.1:9/v1",
                                          "api_key_env": "LOOMDB_TEST_KEY",
                                          "timeout": 2, "max_retries": 0}}})


class TestGenerate:
    def test_n_alternatives_are_siblings_and_the_session_moves_to_the_first(self, loom: Loom) -> None:
        ids = thread(loom, ["Name a color."])
        result = generate(loom, "main", n=2, max_tokens=12)
        assert len(result.nodes) == 2
        assert loom.children(ids[0]) == [n.id for n in result.nodes]
        assert loom.ref("main").node == result.nodes[0].id and result.moved
        assert all(n.role == "assistant" and n.source == "agent" for n in result.nodes)

    def test_each_answer_keeps_its_provenance_and_the_chain_covers_it(self, loom: Loom) -> None:
        thread(loom, ["Say hi."])
        node = generate(loom, "main", max_tokens=8).nodes[0]
        prov = loom.node(node.id).provenance
        assert prov is not None and prov["provider"] == "local"
        gen = loom.backend.provenance.get_generation(prov["generation"])
        assert gen is not None and gen["response_hash"] == prov["response_hash"]
        assert json.loads(gen["request"])["messages"][0]["content"][0]["text"] == "Say hi."
        assert json.loads(gen["provider_request"])["max_tokens"] == 8
        assert gen["latency_ms"] >= 0 and gen["status"] == "complete"
        assert node.tokens == (prov["usage"] or {}).get("output_tokens", node.tokens)
        assert loom.verify().ok
        forged = dict(prov, response_hash="sha256:" + "0" * 64)
        loom.backend.execute("UPDATE nodes SET provenance = '" + json.dumps(forged)
                             + f"' WHERE id = '{node.id}'")
        assert [b["node"] for b in loom.verify().broken] == [node.id]

    def test_generating_at_a_node_id_moves_nothing(self, loom: Loom) -> None:
        ids = thread(loom, ["Hello", "Hi", "How are you?"])
        result = generate(loom, ids[0], max_tokens=8)
        assert loom.ref("main").node == ids[2] and not result.moved
        assert loom.siblings(result.nodes[0].id) == [ids[1]]

    def test_streaming_delivers_the_text_that_is_stored(self, loom: Loom) -> None:
        thread(loom, ["Count to three."])
        seen: list[str] = []
        node = generate(loom, "main", max_tokens=16,
                        stream=lambda job, i, d: seen.append(d)).nodes[0]
        assert "".join(seen) == node.content[0]["text"]


class TestFailures:
    def test_an_unknown_model_writes_nothing(self, loom: Loom) -> None:
        thread(loom, ["q"])
        before = row_counts(loom)
        with pytest.raises(InvalidInput, match="local"):
            generate(loom, "main", models=["no-such-model"])
        assert row_counts(loom) == before

    def test_a_provider_that_is_down_keeps_the_users_turn_and_writes_no_answer(self, loom: Loom) -> None:
        ids = thread(loom, ["q"])
        before = row_counts(loom)
        with pytest.raises(ProviderError):
            generate(loom, "main", models=["down"], config=DOWN, environ={"LOOMDB_TEST_KEY": "k"})
        assert row_counts(loom) == before
        assert loom.path("main") == ids

    def test_a_missing_key_names_the_variable(self, loom: Loom) -> None:
        thread(loom, ["q"])
        with pytest.raises(ProviderError, match="LOOMDB_TEST_KEY"):
            generate(loom, "main", models=["down"], config=DOWN, environ={})


class TestToolUseSpans:
    def test_a_tool_span_is_rebuilt_for_both_providers(self, loom: Loom) -> None:
        from anthropic.types.message_create_params import MessageCreateParamsNonStreaming
        from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

        from loomdb.providers.requests import openai_chat_request
        from loomdb.providers.requests_anthropic import anthropic_request
        from providers.conftest import strict_validator

        valid_openai_chat = strict_validator(CompletionCreateParamsNonStreaming)
        valid_anthropic = strict_validator(MessageCreateParamsNonStreaming)

        thread(loom, ["What is 2+3?"])
        loom.append("main", [{"type": "text", "text": "Let me add."},
                             {"type": "tool_use", "id": "call_1", "name": "add",
                              "input": {"a": 2, "b": 3}}], role="assistant")
        loom.append("main", [{"type": "tool_result", "tool_use_id": "call_1", "name": "add",
                              "content": [{"type": "text", "text": "5"}]}], role="tool")
        loom.append("main", "It is 5.", role="assistant")
        ctx = loom.context("main")
        oa = openai_chat_request(ctx, model="gpt-4o-mini")
        valid_openai_chat(oa)
        assert [m["role"] for m in oa["messages"]] == ["user", "assistant", "tool", "assistant"]
        assert oa["messages"][1]["tool_calls"][0]["function"]["name"] == "add"
        assert oa["messages"][2]["tool_call_id"] == "call_1"
        an = anthropic_request(ctx, model="claude-sonnet-4-5")
        valid_anthropic(an)
        assert [m["role"] for m in an["messages"]] == ["user", "assistant", "user", "assistant"]
        assert an["messages"][2]["content"][0]["type"] == "tool_result"


class TestCompaction:
    def test_context_after_compaction_is_summary_then_kept_then_newer(self, loom: Loom) -> None:
        ids = thread(loom, ["My name is Ada.", "Hello Ada.", "I like tea.", "Tea is nice.",
                            "What do I like?"])
        node = compact(loom, "main", keep=2, max_tokens=40)
        assert node.kind == "compaction" and loom.ref("main").node == node.id
        msgs = texts_of(loom, "main")
        assert msgs[0].startswith("Summary of the earlier conversation:")
        assert msgs[1:] == ["Tea is nice.", "What do I like?"]
        loom.append("main", "newer turn")
        assert texts_of(loom, "main")[-1] == "newer turn"
        assert texts_of(loom, ids[4]) == ["My name is Ada.", "Hello Ada.", "I like tea.",
                                          "Tea is nice.", "What do I like?"]
        row = loom.backend.provenance.get_compaction(node.id)
        assert row is not None and row["summarized"] == 3 and row["trigger"] == "manual"
        assert row["tokens_before"] > 0 and row["tokens_after"] > 0
        assert loom.verify().ok

    def test_compacting_again_summarizes_the_previous_summary(self, loom: Loom) -> None:
        words = " about the weather in Paris and what to wear there tomorrow morning"
        thread(loom, ["a1" + words, "b1" + words, "a2" + words, "b2"])
        first = compact(loom, "main", keep=1, max_tokens=20)
        loom.append("main", "a3" + words)
        loom.append("main", "b3", role="assistant")
        second = compact(loom, "main", keep=1, max_tokens=20)
        gen = loom.backend.provenance.get_generation(loom.node(second.id).provenance["generation"])  # type: ignore[index]
        sent = json.loads(gen["request"])["messages"]  # type: ignore[index]
        assert sent[0]["content"][0]["text"] == loom.node(first.id).content[0]["text"]
        assert texts_of(loom, "main")[1:] == ["b3"]

    def test_automatic_compaction_past_a_threshold(self, loom: Loom) -> None:
        loom.new_tree("start", session="main", options={"compact": {"threshold": 20, "keep": 1}})
        for i in range(6):
            loom.append("main", f"message number {i} with a few words", role="assistant" if i % 2 else "user")
        node = maybe_compact(loom, "main")
        assert node is not None and loom.backend.provenance.get_compaction(node.id)["trigger"] == "auto"  # type: ignore[index]
        assert texts_of(loom, "main")[-1] == "message number 5 with a few words"
