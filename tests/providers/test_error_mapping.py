"""SDK failures become ProviderErrors that say what happened and whether a retry may help;
the Anthropic client is checked the same way against a closed loopback port."""

from __future__ import annotations

from typing import Any

import anthropic
import httpx2
import openai
import pytest

from loomdb.errors import InvalidInput, ProviderError
from loomdb.providers import AnthropicClient, parse_config, resolve_model
from loomdb.providers.clients import sdk_error, sdk_kwargs

URL = "http://127.0.0.1:9/v1"
SPEC = resolve_model(
    "p",
    parse_config(
        {"models": {"p": {"provider": "openai", "model": "m", "base_url": URL, "timeout": 7}}}
    ),
)


def status(sdk: Any, cls: str, code: int) -> Exception:
    response = httpx2.Response(
        code, request=httpx2.Request("POST", URL), json={"error": {"message": "no"}}
    )
    return getattr(sdk, cls)("upstream says no", response=response, body=None)


class TestSDKErrors:
    @pytest.mark.parametrize("sdk", [openai, anthropic])
    def test_rate_limiting_is_retryable_and_says_429(self, sdk):
        err = sdk_error("p", status(sdk, "RateLimitError", 429), sdk, SPEC)
        assert err.retryable and str(err).startswith("p: rate limited (HTTP 429) by " + URL)

    @pytest.mark.parametrize(
        ("sdk", "cls", "code"),
        [(openai, "InternalServerError", 503), (anthropic, "OverloadedError", 529)],
    )
    def test_server_errors_are_retryable(self, sdk, cls, code):
        err = sdk_error("p", status(sdk, cls, code), sdk, SPEC)
        assert err.retryable and f"HTTP {code}" in str(err)

    @pytest.mark.parametrize("sdk", [openai, anthropic])
    def test_bad_requests_and_bad_keys_are_not_retryable(self, sdk):
        for cls, code in (("BadRequestError", 400), ("AuthenticationError", 401)):
            err = sdk_error("p", status(sdk, cls, code), sdk, SPEC)
            assert not err.retryable and f"HTTP {code}" in str(err)

    @pytest.mark.parametrize("sdk", [openai, anthropic])
    def test_timeouts_are_retryable_and_give_the_limit(self, sdk):
        err = sdk_error("p", sdk.APITimeoutError(request=httpx2.Request("POST", URL)), sdk, SPEC)
        assert err.retryable and str(err) == f"p: timed out after 7s waiting for {URL}"

    def test_every_error_carries_an_empty_partial_list(self):
        assert sdk_error("p", status(openai, "RateLimitError", 429), openai, SPEC).partial == []


class TestSDKArguments:
    def test_fields_the_sdk_does_not_declare_travel_in_extra_body(self):
        from openai.types.chat.completion_create_params import CompletionCreateParamsNonStreaming

        body = {"model": "m", "messages": [], "temperature": 0.1, "top_k": 5}
        assert sdk_kwargs(body, CompletionCreateParamsNonStreaming) == {
            "model": "m",
            "messages": [],
            "temperature": 0.1,
            "extra_body": {"top_k": 5},
        }


def anthropic_spec(port: int, **fields: Any) -> Any:
    table = {
        "provider": "anthropic",
        "model": "claude-test",
        "base_url": f"http://127.0.0.1:{port}",
        "max_retries": 0,
        "timeout": 5,
        **fields,
    }
    return resolve_model("claude", parse_config({"models": {"claude": table}}))


def chat(text: str, **options: Any) -> dict[str, Any]:
    return {
        "messages": [{"role": "user", "content": [{"type": "text", "text": text}]}],
        "options": options,
    }


class TestAnthropicClient:
    def test_an_unreachable_api_is_a_retryable_provider_error(self, unused_port):
        client = AnthropicClient(anthropic_spec(unused_port), environ={"ANTHROPIC_API_KEY": "k"})
        with pytest.raises(ProviderError, match="claude: cannot reach http://127.0.0.1:") as caught:
            client.complete(chat("Hi"), max_tokens=5)
        assert caught.value.retryable

    def test_an_unreachable_api_fails_the_same_way_when_streaming(self, unused_port):
        client = AnthropicClient(anthropic_spec(unused_port), environ={"ANTHROPIC_API_KEY": "k"})
        with pytest.raises(ProviderError, match="cannot reach"):
            client.complete(chat("Hi"), max_tokens=5, stream=lambda i, d: None)

    def test_the_request_uses_the_spec_model_and_its_default_params(
        self, unused_port, valid_anthropic
    ):
        client = AnthropicClient(
            anthropic_spec(unused_port, params={"max_tokens": 300}),
            environ={"ANTHROPIC_API_KEY": "k"},
        )
        body = client.request(chat("Hi", model="ignored-alias"))
        valid_anthropic(body)
        assert (body["model"], body["max_tokens"]) == ("claude-test", 300)

    def test_completion_mode_is_refused(self, unused_port):
        client = AnthropicClient(anthropic_spec(unused_port), environ={"ANTHROPIC_API_KEY": "k"})
        with pytest.raises(InvalidInput, match="no completion mode"):
            client.complete(chat("Hi"), mode="completion")
