"""Models cost money (issue 22, item 9), over a live server on both backends.

Over HTTP (the API's generate route and `/v1`) a caller names only the aliases the
operator serves (`[server] models` in providers.toml); `openai:<id>`, an alias left
out, or a thread's options pointing elsewhere are refused (400, one line) before any
model is asked, and nothing is written; so are more than `limits.models` models or
more than `limits.alternatives` answers in one request. The served alias here points
at a closed port, so being let through shows as the provider's 502. On the main this
was written against, each refused request went on to the provider.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from live import client, free_port, serving

from loomdb import Loom
from loomdb.providers.config import parse_config
from loomdb.server import create_app


def alias() -> dict[str, Any]:
    return {"provider": "openai", "model": "cheap-model", "api_key_env": "",
            "base_url": f"http://127.0.0.1:{free_port()}/v1", "max_retries": 0, "timeout": 5}


CONFIG = parse_config({"models": {"nano": alias(), "pricey": alias()},
                       "server": {"models": ["nano", "local"]}})


@pytest.fixture(scope="module")
def base(served: tuple[Loom, str]) -> Iterator[str]:
    with serving(create_app(served[0], config=CONFIG)) as url:
        yield url


def refused(r: httpx.Response) -> str:
    assert r.status_code == 400, (r.status_code, r.text)
    message = str(r.json()["error"]["message"])
    assert "\n" not in message
    return message


def session(c: httpx.Client, name: str, options: dict[str, Any] | None = None) -> None:
    assert c.post("/api/trees", json={"text": "question", "session": name}).status_code == 201
    if options is not None:
        r = c.post(f"/api/nodes/{name}/append",
                   json={"role": "user", "text": "again", "options": options})
        assert r.status_code == 201, r.text


def generate(c: httpx.Client, name: str, **body: Any) -> httpx.Response:
    return c.post(f"/api/nodes/{name}/generate", json=body)


def test_only_served_aliases_are_generated_with(served: tuple[Loom, str], base: str,
                                               tag: str) -> None:
    lm = served[0]
    with client(base) as c:
        session(c, f"m-{tag}")
        before = len(lm.leaves(lm.resolve(f"m-{tag}").tree))
        for name in ("openai:gpt-4o", "anthropic:claude-opus-4", "pricey", "cheap-model"):
            assert "not served" in refused(generate(c, f"m-{tag}", models=[name]))
        # a served alias goes on to its provider (a closed port here)
        assert generate(c, f"m-{tag}", models=["nano"]).status_code == 502
        assert len(lm.leaves(lm.resolve(f"m-{tag}").tree)) == before


@pytest.mark.parametrize("options", [
    {"openai": {"model": "gpt-4-32k"}},
    {"anthropic": {"model": "claude-opus-4"}},
    {"provider_ptr": "openai:o1"},
    {"model": "anthropic:claude-opus-4"},
    {"provider_ptr": "pricey"},
], ids=["openai-table", "anthropic-table", "pointer", "model", "unserved-alias"])
def test_options_cannot_redirect_a_model(base: str, tag: str,
                                         options: dict[str, Any]) -> None:
    with client(base) as c:
        session(c, f"o-{tag}", options)
        refused(generate(c, f"o-{tag}", models=["nano"] if "provider_ptr" not in options
                         and "model" not in options else []))


def test_models_and_answers_per_request_are_capped(base: str, tag: str) -> None:
    with client(base) as c:
        session(c, f"c-{tag}")
        assert "LOOMDB_LIMIT_MODELS" in refused(generate(c, f"c-{tag}", models=["nano"] * 9))
        assert "LOOMDB_LIMIT_ALTERNATIVES" in refused(
            generate(c, f"c-{tag}", models=["nano", "nano"], n=9))
        assert "LOOMDB_LIMIT_ALTERNATIVES" in refused(generate(c, f"c-{tag}", n=17))


def test_the_v1_gateway_serves_the_same_aliases(base: str) -> None:
    with client(base) as c:
        listed = sorted(m["id"] for m in c.get("/v1/models").json()["data"])
        assert listed == ["local", "nano"]
        for model in ("openai:gpt-4o", "pricey"):
            r = c.post("/v1/chat/completions",
                       json={"model": model, "messages": [{"role": "user", "content": "hi"}]})
            assert r.status_code == 400, r.text
        r = c.post("/v1/chat/completions", json={
            "model": "nano", "n": 17, "messages": [{"role": "user", "content": "hi"}]})
        assert r.status_code == 400, r.text


def test_the_served_list_must_name_configured_aliases() -> None:
    from loomdb.errors import InvalidInput

    with pytest.raises(InvalidInput, match="not configured"):
        parse_config({"models": {"nano": alias()}, "server": {"models": ["gpt-5"]}})
    everything = parse_config({"models": {"nano": alias()}})
    from loomdb.providers.served import served

    assert served(everything) == ("local", "nano")
