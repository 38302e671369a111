"""The one check of a gateway request body, before any endpoint reads a field of it.

A body is parsed once (stdlib `json`, no request model: see app.py) and then held to
the shape its endpoint documents (OpenAI's or Anthropic's): a JSON object, nested no deeper than
`limits.json_depth`, with no `NaN` or `Infinity` (which no JSON encoder downstream
accepts) and no lone surrogate escape (which no UTF-8 text can hold), and every field the gateway reads of the type OpenAI gives it (`n` a whole
number, `logprobs` a boolean on chat and a number on completions, `messages` a
list...). A field of the wrong type is an InvalidInput naming it (a 400 in OpenAI's
error shape), so no endpoint ever works on a value it did not expect, and nothing is
written. Fields the gateway does not read are left alone (SDKs send extras); `null`
stands for "not given", as OpenAI's own API takes it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidInput
from ..jsondepth import check_depth

#: a field's check: (what the message says it must be, the test)
Kind = tuple[str, Callable[[Any], bool]]


def _int(lo: int, hi: int) -> Kind:
    return (f"a whole number from {lo} to {hi}",
            lambda v: type(v) is int and lo <= v <= hi)


def _is_number(v: Any) -> bool:
    return type(v) in (int, float) and math.isfinite(v)


def _strings(v: Any) -> bool:
    return isinstance(v, str) or (isinstance(v, list) and all(isinstance(s, str) for s in v))


STR: Kind = ("a string", lambda v: isinstance(v, str))
BOOL: Kind = ("true or false", lambda v: type(v) is bool)
NUMBER: Kind = ("a number", _is_number)
LIST: Kind = ("a list", lambda v: isinstance(v, list))
OBJECT: Kind = ("a JSON object", lambda v: isinstance(v, dict))
STR_OR_LIST: Kind = ("a string or a list", lambda v: isinstance(v, (str, list)))
STR_OR_OBJECT: Kind = ("a string or a JSON object", lambda v: isinstance(v, (str, dict)))
STOP: Kind = ("a string or a list of strings", _strings)
TOKENS = _int(1, 2**31 - 1)
SEED = _int(-(2**63), 2**63 - 1)

#: what every endpoint passes to the model as sampling options
SAMPLING: dict[str, Kind] = {
    "model": STR, "stream": BOOL, "temperature": NUMBER, "top_p": NUMBER,
    "max_tokens": TOKENS, "stop": STOP, "seed": SEED, "frequency_penalty": NUMBER,
    "presence_penalty": NUMBER, "logit_bias": OBJECT, "user": STR, "top_k": _int(0, 2**31 - 1),
    "min_p": NUMBER, "repeat_penalty": NUMBER,
}
CHAT: dict[str, Kind] = {
    **SAMPLING, "messages": LIST, "n": _int(1, 16), "stream_options": OBJECT,
    "logprobs": BOOL, "top_logprobs": _int(0, 20), "max_completion_tokens": TOKENS,
    "response_format": OBJECT, "parallel_tool_calls": BOOL, "tools": LIST,
    "tool_choice": STR_OR_OBJECT, "reasoning_effort": STR,
}
RESPONSES: dict[str, Kind] = {
    **SAMPLING, "input": STR_OR_LIST, "instructions": STR, "previous_response_id": STR,
    "max_output_tokens": TOKENS, "tools": LIST, "tool_choice": STR_OR_OBJECT,
    "parallel_tool_calls": BOOL, "top_logprobs": _int(0, 20),
}
ANTHROPIC: dict[str, Kind] = {
    "model": STR, "messages": LIST, "system": STR_OR_LIST, "max_tokens": TOKENS,
    "stream": BOOL, "temperature": NUMBER, "top_p": NUMBER, "top_k": _int(0, 2**31 - 1),
    "stop_sequences": ("a list of strings", lambda v: isinstance(v, list) and _strings(v)),
    "metadata": OBJECT, "tools": LIST, "tool_choice": OBJECT, "thinking": OBJECT,
    "service_tier": STR,
}
COUNT_TOKENS: dict[str, Kind] = {
    k: ANTHROPIC[k] for k in ("model", "messages", "system", "tools", "tool_choice", "thinking")}
COMPLETIONS: dict[str, Kind] = {
    **SAMPLING, "prompt": STR_OR_LIST, "n": _int(1, 16), "echo": BOOL,
    "logprobs": _int(0, 20), "suffix": STR,
}


#: a `\\uD800`-`\\uDFFF` escape in the bytes: half of a pair, or a lone one
_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
_SPACE = re.compile(r"[ \t\n\r]*")


def _constant(name: str) -> Any:
    raise InvalidInput("body", f"{name} is not a JSON number")


_DECODER = json.JSONDecoder(parse_constant=_constant)
_SCANSTRING: Callable[[str, int], tuple[str, int]] = json.decoder.scanstring  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Source:
    """The body's text and where each top-level field's value stands in it (a proxy
    sends the client's own text on, one field's value replaced: `replaced`)."""

    raw: bytes
    text: str
    spans: dict[str, tuple[int, int]]

    def replaced(self, name: str, value: Any) -> bytes | None:
        """The body's bytes with field `name`'s value replaced by `value` (None when the
        field is not there, or given twice)."""
        span = self.spans.get(name)
        if span is None:
            return None
        start, end = span
        new = json.dumps(value)
        if self.text.isascii():  # character offsets are byte offsets: one copy of the
            # bytes (a slice, then a `+`, would copy a large body twice: far slower)
            return b"".join((memoryview(self.raw)[:start], new.encode(),
                             memoryview(self.raw)[end:]))
        return "".join((self.text[:start], new, self.text[end:])).encode()


def parse(raw: bytes, fields: Mapping[str, Kind], max_depth: int) -> dict[str, Any]:
    """The body as a checked JSON object (see the module docstring)."""
    return read(raw, fields, max_depth)[0]


def read(raw: bytes, fields: Mapping[str, Kind], max_depth: int
         ) -> tuple[dict[str, Any], Source]:
    """`parse`, and the body's `Source`. The top-level object is walked here (each value
    parsed by the stdlib's C scanner, which stops at its recursion limit), and the depth
    measured on the values built: cheaper than a scan of the bytes first."""
    if raw.startswith(b"\xef\xbb\xbf"):  # a byte order mark, which `json.loads` skips
        raw = raw[3:]
    try:
        text = raw.decode("utf-8")
        body, spans = _object(text)
    except InvalidInput:
        raise
    except RecursionError:
        raise InvalidInput("body", f"nested deeper than {max_depth} levels (JSON objects "
                           "and arrays)") from None
    except ValueError as exc:  # (UnicodeDecodeError is one)
        raise InvalidInput("body", f"is not valid JSON ({exc})") from None
    check_depth(body, max_depth, "body")
    if b"\\" in raw and _SURROGATE.search(raw):  # escaped pairs (emoji) are fine; a
        # lone half is not (a body with no backslash at all is told by one memchr)
        try:
            json.dumps(body, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInput("body", "holds a lone surrogate (a \\udXXX escape without "
                               "its pair): text must be valid Unicode") from None
    for name, (must, ok) in fields.items():
        value = body.get(name)
        if value is not None and not ok(value):
            raise InvalidInput(name, f"must be {must}, got {_shown(value)}")
    return body, Source(raw, text, spans)


def _object(text: str) -> tuple[dict[str, Any], dict[str, tuple[int, int]]]:
    """A JSON text that must be an object: its fields, and each value's span (a field
    given twice has no span: which one a reader takes is its own choice)."""
    at = _SPACE.match(text, 0).end()  # type: ignore[union-attr]
    if not text.startswith("{", at):
        value, end = _DECODER.raw_decode(text, at)  # not an object: valid JSON at all?
        if _SPACE.match(text, end).end() != len(text):  # type: ignore[union-attr]
            raise json.JSONDecodeError("Extra data", text, end)
        raise InvalidInput("body", "must be a JSON object")
    body: dict[str, Any] = {}
    spans: dict[str, tuple[int, int]] = {}
    twice: set[str] = set()
    at = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
    if text.startswith("}", at):
        at += 1
    else:
        while True:
            if not text.startswith('"', at):
                raise json.JSONDecodeError("Expecting property name enclosed in double quotes",
                                           text, at)
            key, at = _SCANSTRING(text, at + 1)
            at = _SPACE.match(text, at).end()  # type: ignore[union-attr]
            if not text.startswith(":", at):
                raise json.JSONDecodeError("Expecting ':' delimiter", text, at)
            start = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
            body[key], end = _DECODER.raw_decode(text, start)
            if key in spans:
                twice.add(key)
            spans[key] = (start, end)
            at = _SPACE.match(text, end).end()  # type: ignore[union-attr]
            if text.startswith("}", at):
                at += 1
                break
            if not text.startswith(",", at):
                raise json.JSONDecodeError("Expecting ',' delimiter", text, at)
            at = _SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
    if _SPACE.match(text, at).end() != len(text):  # type: ignore[union-attr]
        raise json.JSONDecodeError("Extra data", text, at)
    for key in twice:
        del spans[key]
    return body, spans


def _shown(value: Any) -> str:
    text = json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


__all__ = ["ANTHROPIC", "CHAT", "COMPLETIONS", "COUNT_TOKENS", "RESPONSES", "Source", "parse",
           "read"]
