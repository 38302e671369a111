"""A stand-in for Anthropic's Messages API on loopback (the one part of these tests that
cannot run for real: the cloud API), its every answer and stream event built as the
official `anthropic` SDK's own types and serialized from them, and every request it
gets read back through the SDK's request types.

It answers at once, by a small script: a request whose last user text asks for a
subagent (`SUBAGENT:`) gets a call of Claude Code's `Agent` tool; any other gets a
signed thinking block (when the request enables thinking) and a text; a streamed
request saying `BREAK` has its connection dropped in the middle of the answer, and one
saying `OVERLOADED` is refused (529, `overloaded_error`). It keeps what it
was sent (`requests`), with the headers, for the tests to compare with what loomdb
recorded."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from anthropic import types as t

SIGNATURE = "c2lnbmVkIGJ5IHRoZSBzdHVi"  # the stub's signature on its thinking


@dataclass
class Stub:
    """The running stub: its base URL and what it was sent."""

    url: str
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)


def _asked(body: dict[str, Any]) -> str:
    """The text of the last message that is not a system message, when it is a user's
    (a tool's result answers a call: no text)."""
    turns = [m for m in body.get("messages") or [] if m.get("role") != "system"]
    if not turns or turns[-1].get("role") != "user":
        return ""
    content = turns[-1].get("content")
    if isinstance(content, str):
        return content
    if any(b.get("type") == "tool_result" for b in content):
        return ""
    return " ".join(b.get("text", "") for b in content if b.get("type") == "text")


def reply(body: dict[str, Any], n: int) -> t.Message:
    """The scripted answer to request number `n`, as the SDK's Message."""
    blocks: list[Any] = []
    tools = {tool.get("name") for tool in body.get("tools") or []}
    asked = _asked(body)
    if (body.get("thinking") or {}).get("type") in ("enabled", "adaptive"):
        blocks.append(t.ThinkingBlock(type="thinking", thinking=f"Thinking {n}.",
                                      signature=SIGNATURE))
    if "SUBAGENT:" in asked and "Agent" in tools:
        blocks.append(t.ToolUseBlock(type="tool_use", id=f"toolu_stub{n:04d}", name="Agent",
                                     input={"description": "Ask a helper",
                                            "prompt": "Reply with the word done.",
                                            "subagent_type": "general-purpose"}))
        stop = "tool_use"
    else:
        blocks.append(t.TextBlock(type="text", text=f"Stub answer {n}."))
        stop = "end_turn"
    return t.Message(id=f"msg_stub{n:04d}", type="message", role="assistant",
                     model=str(body.get("model")), content=blocks, stop_reason=stop,
                     stop_sequence=None, usage=t.Usage(input_tokens=10 + n, output_tokens=5))


def events(message: t.Message) -> Iterator[Any]:
    """The message as Anthropic streams it, event by event (the SDK's event types)."""
    start = message.model_copy(update={"content": [], "stop_reason": None})
    yield t.RawMessageStartEvent(type="message_start", message=start)
    for i, block in enumerate(message.content):
        if isinstance(block, t.ThinkingBlock):
            yield t.RawContentBlockStartEvent(type="content_block_start", index=i,
                                              content_block=t.ThinkingBlock(
                                                  type="thinking", thinking="", signature=""))
            yield t.RawContentBlockDeltaEvent(type="content_block_delta", index=i, delta=(
                t.ThinkingDelta(type="thinking_delta", thinking=block.thinking)))
            yield t.RawContentBlockDeltaEvent(type="content_block_delta", index=i, delta=(
                t.SignatureDelta(type="signature_delta", signature=block.signature)))
        elif isinstance(block, t.ToolUseBlock):
            yield t.RawContentBlockStartEvent(type="content_block_start", index=i,
                                              content_block=t.ToolUseBlock(
                                                  type="tool_use", id=block.id,
                                                  name=block.name, input={}))
            yield t.RawContentBlockDeltaEvent(type="content_block_delta", index=i, delta=(
                t.InputJSONDelta(type="input_json_delta",
                                 partial_json=json.dumps(block.input))))
        else:
            assert isinstance(block, t.TextBlock)
            yield t.RawContentBlockStartEvent(type="content_block_start", index=i,
                                              content_block=t.TextBlock(type="text", text=""))
            for k in range(0, len(block.text), 4):
                yield t.RawContentBlockDeltaEvent(type="content_block_delta", index=i, delta=(
                    t.TextDelta(type="text_delta", text=block.text[k:k + 4])))
        yield t.RawContentBlockStopEvent(type="content_block_stop", index=i)
    yield t.RawMessageDeltaEvent(
        type="message_delta", delta={"stop_reason": message.stop_reason,
                                     "stop_sequence": None},
        usage=t.MessageDeltaUsage(output_tokens=message.usage.output_tokens))
    yield t.RawMessageStopEvent(type="message_stop")


def running() -> Iterator[Stub]:
    """Serve the stub on a loopback port for the duration."""
    from anthropic.types import message_create_params

    stub = Stub("")
    lock = threading.Lock()
    params = message_create_params.MessageCreateParamsBase

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - the http.server hook
            body = json.loads(self.rfile.read(int(self.headers.get("content-length", 0))))
            # read back through the SDK's own request type: every field it sent is one
            # the Messages API names (`extra` fields would not be declared)
            known = params.__required_keys__ | params.__optional_keys__
            assert set(body) <= known | {"stream", "context_management", "output_config"}, (
                sorted(set(body) - known))
            with lock:
                stub.requests.append(body)
                stub.headers.append({k.lower(): v for k, v in self.headers.items()})
                n = len(stub.requests)
            if "OVERLOADED" in _asked(body):  # refused, in Anthropic's error shape
                self._json(529, {"type": "error", "error": {"type": "overloaded_error",
                                                            "message": "Overloaded"}})
                return
            message = reply(body, n)
            if body.get("stream"):
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.end_headers()
                for k, event in enumerate(events(message)):
                    if k == 3 and "BREAK" in _asked(body):  # the connection drops mid-answer
                        self.wfile.write(b"event: content_block_delta\ndata: {\"type\": \"cont")
                        self.wfile.flush()
                        self.connection.shutdown(2)
                        return
                    data = json.dumps(event.to_dict())
                    self.wfile.write(f"event: {event.type}\ndata: {data}\n\n".encode())
                    self.wfile.flush()
                return
            self._json(200, message.to_dict())

        def _json(self, status: int, value: Any) -> None:
            out = json.dumps(value).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    stub.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield stub
    finally:
        server.shutdown()
        server.server_close()
