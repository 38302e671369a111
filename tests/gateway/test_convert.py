"""Wire shapes: what a message keys as, however a client spells it, and answers out."""

from __future__ import annotations

import base64
import json

import pytest

from loomdb import InvalidInput
from loomdb.exchanges import messages as neutral
from loomdb.exchanges import openai_chat as convert
from loomdb.exchanges.paths import Digests


def one(msg: dict[str, object]) -> neutral.Message:
    return convert.messages([msg])[0]


def test_a_message_keys_the_same_however_it_is_spelt() -> None:
    plain = one({"role": "assistant", "content": "Hello"})
    sdk = one({"role": "assistant", "content": "Hello", "tool_calls": None, "refusal": None,
               "function_call": None, "audio": None})
    parts = one({"role": "assistant", "content": [{"type": "text", "text": "Hel"},
                                                   {"type": "text", "text": "lo"}]})
    assert plain.key == sdk.key == parts.key
    assert plain.blocks == sdk.blocks == parts.blocks == [{"type": "text", "text": "Hello"}]
    assert one({"role": "developer", "content": "x"}).role == "system"


def test_keys_are_self_delimiting() -> None:
    a = convert.messages([{"role": "user", "content": "ab"}, {"role": "user", "content": "c"}])
    b = convert.messages([{"role": "user", "content": "a"}, {"role": "user", "content": "bc"}])
    assert Digests(a.keys).at([1]) != Digests(b.keys).at([1])


def test_tool_calls_round_trip_through_the_wire() -> None:
    blocks = [{"type": "text", "text": "Let me look."},
              {"type": "tool_use", "id": "call_9", "name": "lookup", "input": {"q": "x", "n": 2}}]
    out = convert.assistant_message(blocks)
    assert out["tool_calls"][0]["function"] == {"name": "lookup",
                                                "arguments": json.dumps({"q": "x", "n": 2})}
    back = one(out)
    assert back.blocks == blocks
    assert back.key == neutral.key_of("assistant", neutral.resent(blocks))
    result = one({"role": "tool", "tool_call_id": "call_9", "content": "found"})
    assert result.blocks == [{"type": "tool_result", "tool_use_id": "call_9",
                              "content": [{"type": "text", "text": "found"}]}]


def test_images_become_blob_blocks() -> None:
    data = b"\x89PNG tiny"
    url = "data:image/png;base64," + base64.b64encode(data).decode()
    msg = one({"role": "user", "content": [{"type": "text", "text": "see"},
                                           {"type": "image_url", "image_url": {"url": url}}]})
    ref = msg.blocks[1]["ref"]
    assert msg.blocks[1]["type"] == "image" and convert.messages(
        [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": url}}]}]
    ).blobs[ref] == (data, "image/png")
    with pytest.raises(InvalidInput, match="data: URLs"):
        one({"role": "user", "content": [{"type": "image_url",
                                          "image_url": {"url": "https://x/y.png"}}]})


@pytest.mark.parametrize("bad, where", [
    ([], "messages"),
    ([{"role": "wizard", "content": "x"}], "messages[0].role"),
    ([{"role": "user", "content": 5}], "messages[0].content"),
    ([{"role": "tool", "content": "x"}], "messages[0].tool_call_id"),
    ([{"role": "assistant", "tool_calls": [{"function": {"name": "f", "arguments": "{"}}]}],
     "messages[0].tool_calls[0].function.arguments"),
])
def test_bad_messages_name_the_field(bad: object, where: str) -> None:
    with pytest.raises(InvalidInput) as caught:
        convert.messages(bad)
    assert caught.value.where == where
