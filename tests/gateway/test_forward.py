"""The recording proxy's upstream: the client's own bytes, only `model` replaced (no
re-encoding of a 2,000-message history) unless the model's defaults add a field, with
the model's key and the client's beta header; an upstream's refusal keeps its status."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from anthropic_stub import running

import loomdb
from loomdb import Loom
from loomdb.errors import ProviderError
from loomdb.exchanges import anthropic_messages
from loomdb.exchanges.exchange import Gateway
from loomdb.gateway.body import ANTHROPIC, read
from loomdb.providers.config import parse_config
from loomdb.providers.forward import as_sent
from loomdb.providers.requests_anthropic import anthropic_request

#: the client's model last, a "model" inside its metadata and inside a text
SENT = ('{"max_tokens": 9, "messages": [{"role": "user", "content": "TEXT \\"model\\": '
        '\\"x\\""}], "metadata": {"model": "inner"},\n "model" : "up"}')


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Loom]:
    """One store (nothing is written: the body only is looked at)."""
    with loomdb.open(str(tmp_path_factory.mktemp("forward") / "store")) as lm:
        yield lm


def proxy(loom: Loom, url: str = "http://127.0.0.1:9", **params: Any) -> Gateway:
    config = parse_config({"models": {"up": {
        "provider": "anthropic", "model": "claude-real-1", "base_url": url,
        "api_key_env": "K", "max_retries": 0, "params": params}}})
    return Gateway(loom, config=config, environ={"K": "k"})


def upstream(gw: Gateway, raw: bytes) -> tuple[bytes | None, dict[str, Any]]:
    body, source = read(raw, ANTHROPIC, 64)
    ex = anthropic_messages.parse(gw, body, source=source)
    options = {**ex.spec.params, **ex.ctx["options"]}
    built = anthropic_request({**ex.ctx, "options": options}, model=ex.spec.model)
    return as_sent(built, options["anthropic"], ex.ctx.get("forward")), built


def test_the_clients_bytes_go_upstream_with_only_the_model_replaced(store: Loom) -> None:
    gw = proxy(store)
    for text in ("plain ascii", "Grüße, ünïcode \U0001f600"):  # bytes, then characters
        raw = SENT.replace("TEXT", text).encode()
        sent, built = upstream(gw, raw)
        assert sent == raw.replace(b'"model" : "up"', b'"model" : "claude-real-1"')
        assert built["model"] == "claude-real-1" and built["metadata"] == {"model": "inner"}


def test_a_field_the_models_defaults_add_makes_the_body_encoded(store: Loom) -> None:
    sent, built = upstream(proxy(store, service_tier="auto"), SENT.replace("TEXT", "x").encode())
    assert sent is None and built["service_tier"] == "auto"  # json.dumps(built) is sent


def test_a_model_given_twice_has_no_span_to_replace(store: Loom) -> None:
    raw = SENT.replace("TEXT", "x").replace('"max_tokens"', '"model": "up", "max_tokens"')
    sent, built = upstream(proxy(store), raw.encode())
    assert sent is None and built["model"] == "claude-real-1"


def test_an_upstream_refusal_keeps_its_status_and_an_unreachable_one_is_retryable(
        store: Loom) -> None:
    raw = SENT.replace("TEXT", "OVERLOADED").encode()
    body, source = read(raw, ANTHROPIC, 64)
    for stub in running():
        gw = proxy(store, url=stub.url)
        ex = anthropic_messages.parse(gw, body, source=source, beta="b-1")
        with pytest.raises(ProviderError) as caught:
            gw.complete(ex)
        assert getattr(caught.value, "status", None) == 529 and caught.value.retryable
        assert "Overloaded" in str(caught.value)
        sent = stub.headers[-1]
        # the key as the anthropic SDK itself sends it (its version: a header or a bearer)
        assert "k" in (sent.get("x-api-key"), sent.get("authorization", "")[7:])
        assert sent["anthropic-version"] and sent["anthropic-beta"] == "b-1"
        url = stub.url
    gone = proxy(store, url=url)  # the stand-in has stopped
    ex = anthropic_messages.parse(gone, body, source=source)
    with pytest.raises(ProviderError) as caught:
        gone.complete(ex)
    assert caught.value.retryable and "cannot reach" in str(caught.value)


def test_over_http_a_threads_beta_header_is_not_sent_the_operators_is() -> None:
    """A beta can switch on what costs more (a longer context): over HTTP (`served`)
    only the operator's `params.anthropic_beta` is sent, never a thread's option; a
    trusted caller's option is sent as given."""
    from loomdb.providers.clients import client_for

    ctx = {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
           "options": {"anthropic_beta": ["context-1m-2025-08-07"]}}
    def sent(stub: Any, served: int | None, **params: Any) -> str | None:
        config = parse_config({"models": {"up": {
            "provider": "anthropic", "model": "claude-real-1", "base_url": stub.url,
            "api_key_env": "K", "max_retries": 0, "params": params}}})
        client_for(config.models["up"], environ={"K": "k"}).complete(
            ctx, max_tokens=8, served=served)
        return stub.headers[-1].get("anthropic-beta")

    for stub in running():
        assert sent(stub, 8192) is None
        assert sent(stub, 8192, anthropic_beta=["b-operator"]) == "b-operator"
        assert sent(stub, None) == "context-1m-2025-08-07"
