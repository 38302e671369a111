"""The gateway after forgetting, on both backends: its memo of paths (digests of the
messages, a document's first characters) loses what names a deleted node and the whole
tree of a redacted one, so a re-sent history never matches a forgotten node. The
answer is a hand-made completion: no model is needed to test the memo."""

from __future__ import annotations

from typing import Any

from loomdb import Loom
from loomdb.exchanges import openai_chat, paths
from loomdb.exchanges.exchange import Gateway
from loomdb.forget import service as F
from loomdb.providers.base import Completion

ANSWER = Completion(content=[{"type": "text", "text": "fine"}], stop_reason="end_turn",
                    usage={"input_tokens": 1, "output_tokens": 1}, model="m",
                    provider="openai", provider_request={"model": "m"},
                    raw_response={"choices": [{"message": {"content": "fine"}}]}, latency_ms=1)


def exchange(loom: Loom, messages: list[dict[str, Any]]) -> Any:
    gw = Gateway(loom)
    ex = openai_chat.parse(gw, {"model": "local", "messages": messages})
    return ex, gw.record(ex, [ANSWER], None)


def memo(loom: Loom) -> set[str]:
    with loom.unit(paths.GATEWAY) as db:
        return {r[0] for r in db.execute("SELECT node_id FROM gateway_paths")}


HISTORY = [{"role": "user", "content": "gw q0"}, {"role": "assistant", "content": "fine"},
           {"role": "user", "content": "gw secret q1"}]


def test_a_deleted_node_is_never_matched_again(loom: Loom) -> None:
    ex, _ = exchange(loom, HISTORY)
    path = loom.path(ex.ids[0])
    q1 = path[2]
    assert q1 in memo(loom)
    done = F.delete(loom, q1, force=True)
    assert not set(done.ids) & memo(loom)
    ex2, _ = exchange(loom, HISTORY)
    again = loom.path(ex2.ids[0])
    assert again[:2] == path[:2] and again[2] != q1  # the kept prefix still matches
    assert loom.verify().ok


def test_a_redacted_node_is_never_matched_again(loom: Loom) -> None:
    ex, _ = exchange(loom, HISTORY)
    q1 = loom.path(ex.ids[0])[2]
    F.redact(loom, q1)
    assert not memo(loom) & set(loom.path(ex.ids[0]))
    ex2, _ = exchange(loom, HISTORY)
    assert q1 not in loom.path(ex2.ids[0])
    assert loom.verify().ok
