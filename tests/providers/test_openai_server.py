"""The OpenAI-compatible client against a real llama.cpp HTTP server on loopback."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from loomdb.content import validate_blocks
from loomdb.errors import InvalidInput, ProviderError
from loomdb.providers import OpenAIClient, complete_many, load_config, parse_config, resolve_model


def spec_for(base_url: str, **fields: Any) -> Any:
    table = {
        "provider": "openai",
        "model": "smollm2",
        "base_url": base_url,
        "api_key_env": "",
        "timeout": 60,
        "max_retries": 0,
        **fields,
    }
    return resolve_model("srv", parse_config({"models": {"srv": table}}))


def chat(text: str, **options: Any) -> dict[str, Any]:
    return {
        "messages": [
            {"role": "system", "content": [{"type": "text", "text": "Answer briefly."}]},
            {"role": "user", "content": [{"type": "text", "text": text}]},
        ],
        "options": options,
    }


@pytest.fixture(scope="module")
def server(llama_server: str) -> OpenAIClient:
    return OpenAIClient(spec_for(llama_server))


class TestChat:
    def test_a_chat_completion_comes_back_with_the_request_and_raw_json(self, server):
        [done] = server.complete(chat("Name a fruit.", seed=1, temperature=0.5), max_tokens=10)
        assert validate_blocks(done.content) == done.content and done.text
        assert done.provider == "openai" and done.stop_reason in ("end_turn", "max_tokens")
        assert done.provider_request == {
            "model": "smollm2",
            "temperature": 0.5,
            "seed": 1,
            "max_tokens": 10,
            "messages": [
                {"role": "system", "content": "Answer briefly."},
                {"role": "user", "content": "Name a fruit."},
            ],
        }
        assert done.raw_response["choices"][0]["message"]["content"] == done.text
        assert done.usage["output_tokens"] > 0 and done.latency_ms > 0 and not done.incomplete

    def test_the_specs_params_are_defaults_under_the_threads_options(self, llama_server):
        client = OpenAIClient(spec_for(llama_server, params={"temperature": 0.1, "top_p": 0.5}))
        [done] = client.complete(chat("Hi", temperature=0.9, seed=1), max_tokens=2)
        assert (done.provider_request["temperature"], done.provider_request["top_p"]) == (0.9, 0.5)

    def test_n_alternatives_are_separate_requests_with_consecutive_seeds(self, server):
        done = server.complete(chat("Invent a word.", seed=11, temperature=1.0), n=2, max_tokens=6)
        assert [d.provider_request["seed"] for d in done] == [11, 12]

    def test_streaming_sends_each_piece_to_the_callback(self, server):
        got: list[str] = []
        [done] = server.complete(
            chat("Count to five.", seed=2), max_tokens=16, stream=lambda i, d: got.append(d)
        )
        assert len(got) > 1 and "".join(got) == done.text
        assert done.provider_request["stream"] is True
        assert (
            isinstance(done.raw_response, list)
            and done.raw_response[-1]["choices"][0]["finish_reason"]
        )

    def test_completion_mode_sends_the_concatenated_text_as_a_prompt(self, server):
        ctx = {
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "Once upon"}]},
                {"role": "assistant", "content": [{"type": "text", "text": " a time"}]},
            ],
            "options": {"seed": 3},
        }
        [done] = server.complete(ctx, max_tokens=6, mode="completion")
        assert done.provider_request["prompt"] == "Once upon a time" and done.text
        assert done.raw_response["object"] == "text_completion"

    def test_completion_mode_streams_too(self, server):
        got: list[str] = []
        ctx = {
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Roses are"}]}],
            "options": {"seed": 3, "mode": "completion"},
        }
        [done] = server.complete(ctx, max_tokens=6, stream=lambda i, d: got.append(d))
        assert "".join(got) == done.text

    def test_provider_specific_fields_reach_the_server(self, server):
        [done] = server.complete(
            chat("Hi", openai={"top_k": 1, "repeat_penalty": 1.1}, seed=1), max_tokens=2
        )
        assert done.provider_request["top_k"] == 1


class TestErrors:
    def test_a_server_that_is_down_is_a_retryable_provider_error(self, unused_port):
        client = OpenAIClient(spec_for(f"http://127.0.0.1:{unused_port}/v1"))
        with pytest.raises(ProviderError, match="srv: cannot reach http://127.0.0.1:") as caught:
            client.complete(chat("Hi"), max_tokens=2)
        assert caught.value.retryable is True

    def test_a_timeout_is_a_retryable_provider_error(self, llama_server):
        client = OpenAIClient(spec_for(llama_server, timeout=0.001))
        with pytest.raises(ProviderError, match="timed out after 0.001s") as caught:
            client.complete(chat("Write a long poem."), max_tokens=64)
        assert caught.value.retryable is True

    def test_a_server_error_is_a_retryable_provider_error(self, server):
        # llama.cpp's server answers a request it cannot parse with HTTP 500
        with pytest.raises(ProviderError, match="srv: HTTP 500 from") as caught:
            server.complete(chat("Hi", openai={"max_tokens": "lots"}))
        assert caught.value.retryable is True

    def test_a_client_error_is_a_non_retryable_provider_error(self, llama_server):
        client = OpenAIClient(spec_for(llama_server.replace("/v1", "/no-such-api")))
        with pytest.raises(
            ProviderError, match="HTTP 404 .*is the model id 'smollm2' right"
        ) as caught:
            client.complete(chat("Hi"), max_tokens=2)
        assert caught.value.retryable is False

    def test_an_unknown_alias_is_invalid_input(self, tmp_path):
        with pytest.raises(InvalidInput, match="unknown model 'nope'"):
            resolve_model("nope", load_config(tmp_path / "providers.toml"))

    def test_a_missing_api_key_names_the_variable(self, llama_server):
        with pytest.raises(ProviderError, match="LOOMDB_TEST_ABSENT_KEY"):
            OpenAIClient(spec_for(llama_server, api_key_env="LOOMDB_TEST_ABSENT_KEY"), environ={})

    def test_an_interrupted_stream_raises_and_keeps_what_arrived(self, cutting_proxy):
        client = OpenAIClient(spec_for(cutting_proxy))
        got: list[str] = []
        with pytest.raises(ProviderError, match="stream interrupted") as caught:
            client.complete(
                chat("Tell a long story about a dragon.", seed=4),
                max_tokens=200,
                stream=lambda i, d: got.append(d),
            )
        [partial] = caught.value.partial
        assert partial.incomplete is True and caught.value.retryable is True
        assert got and partial.text == "".join(got)
        assert partial.provider_request["stream"] is True and partial.raw_response


class TestSeveralModels:
    def test_different_providers_answer_concurrently_in_the_order_given(
        self, llama_server, local_spec, local_client
    ):
        jobs = [(spec_for(llama_server), chat("Hi", seed=1)), (local_spec, chat("Hello", seed=1))]
        streamed: dict[tuple[int, int], str] = {}

        def collect(job: int, index: int, delta: str) -> None:
            streamed[job, index] = streamed.get((job, index), "") + delta

        results = complete_many(jobs, n=2, max_tokens=2, stream=collect)
        assert [[c.provider for c in r] for r in results] == [
            ["openai", "openai"],
            ["local", "local"],
        ]
        assert [[c.alias for c in r] for r in results] == [["srv", "srv"], ["local", "local"]]
        pairs = [(j, i) for j in (0, 1) for i in (0, 1)]
        assert {k: streamed.get(k, "") for k in pairs} == {
            (j, i): results[j][i].text for j, i in pairs
        }

    def test_a_mode_applies_to_every_job(self, llama_server, local_spec, local_client):
        ctx = {
            "messages": [{"role": "user", "content": [{"type": "text", "text": "Once"}]}],
            "options": {"seed": 1},
        }
        results = complete_many(
            [(spec_for(llama_server), ctx), (local_spec, ctx)], max_tokens=2, mode="completion"
        )
        assert [r[0].provider_request["prompt"] for r in results] == ["Once", "Once"]

    def test_failures_can_be_returned_in_place(self, local_spec, local_client, unused_port):
        down = spec_for(f"http://127.0.0.1:{unused_port}/v1")
        results = complete_many(
            [(down, chat("Hi")), (local_spec, chat("Hi", seed=1))],
            max_tokens=2,
            return_exceptions=True,
        )
        assert isinstance(results[0], ProviderError) and len(results[1]) == 1

    def test_otherwise_the_first_failure_is_raised(self, unused_port):
        down = spec_for(f"http://127.0.0.1:{unused_port}/v1")
        with pytest.raises(ProviderError, match="cannot reach"):
            complete_many([(down, chat("Hi"))], max_tokens=2)


CUT_AFTER = 2500  # response bytes: the headers and a few SSE chunks, far from the end


def _pipe(src: socket.socket, dst: socket.socket, limit: int | None) -> None:
    sent = 0
    try:
        while limit is None or sent < limit:
            data = src.recv(4096 if limit is None else min(4096, limit - sent))
            if not data:
                break
            dst.sendall(data)
            sent += len(data)
    except OSError:
        pass
    finally:
        for sock in (src, dst):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


@pytest.fixture
def cutting_proxy(llama_server: str) -> Iterator[str]:
    """A loopback TCP proxy to the real server that cuts each response after CUT_AFTER bytes."""
    upstream_port = int(llama_server.rsplit(":", 1)[1].split("/")[0])
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                client, _ = listener.accept()
            except OSError:
                continue
            upstream = socket.create_connection(("127.0.0.1", upstream_port))
            threading.Thread(target=_pipe, args=(client, upstream, None), daemon=True).start()
            threading.Thread(target=_pipe, args=(upstream, client, CUT_AFTER), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{listener.getsockname()[1]}/v1"
    stop.set()
    thread.join(timeout=5)
    listener.close()


class TestGenerationThroughAServer:
    """`loomdb.generation` against the real llama.cpp server: what gets stored."""

    @staticmethod
    def config(base_url: str) -> Any:
        from loomdb.providers.config import parse_config

        return parse_config({"models": {"srv": {"provider": "openai", "model": "smollm2",
                                                "base_url": base_url, "api_key_env": "",
                                                "timeout": 60, "max_retries": 0}}})

    def test_answers_from_an_openai_compatible_server_are_stored_with_provenance(
        self, loom, llama_server
    ):
        from loomdb.generation import generate

        loom.new_tree("Say hello.", session="main")
        result = generate(loom, "main", models=["srv"], n=2, max_tokens=8,
                          config=self.config(llama_server))
        assert len(result.nodes) == 2 and loom.ref("main").node == result.nodes[0].id
        prov = loom.node(result.nodes[0].id).provenance
        assert prov["provider"] == "openai" and prov["alias"] == "srv"
        gen = loom.backend.provenance.get_generation(prov["generation"])
        assert json.loads(gen["provider_request"])["model"] == "smollm2"
        assert loom.verify().ok

    def test_an_interrupted_stream_stores_nothing_unless_asked(self, loom, cutting_proxy):
        from loomdb.generation import generate

        _, root = loom.new_tree("Tell a long story about a dragon.", session="main")
        before = loom.backend.execute("SELECT count(*) FROM nodes")[0][0]
        with pytest.raises(ProviderError, match="stream interrupted"):
            generate(loom, "main", models=["srv"], max_tokens=200, stream=lambda *a: None,
                     config=self.config(cutting_proxy))
        assert loom.backend.execute("SELECT count(*) FROM nodes")[0][0] == before
        assert loom.ref("main").node == root.id
        kept = generate(loom, "main", models=["srv"], max_tokens=200, stream=lambda *a: None,
                        config=self.config(cutting_proxy), keep_partial=True)
        node = loom.node(kept.nodes[0].id)
        assert node.provenance["incomplete"] is True and node.content[0]["text"]
        assert loom.backend.provenance.get_generation(node.provenance["generation"])["status"] == "incomplete"
        assert kept.errors and "interrupted" in str(kept.errors[0])
