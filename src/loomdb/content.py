"""Content: the ordered list of typed blocks a node holds, its canonical form and its id.

Content is a plain value (a list of JSON-able dicts), never a row: ids and storage belong
to the store. One union of block types covers every design document: text, image,
audio, document, tool_use, tool_result and thinking ("mixed" content is simply several
blocks). Binary payloads never sit inside a block; image, audio and document blocks
hold a `ref` to the blob store (`sha256:<hex>`).

Identity is `sha256:` + hex digest of the RFC 8785 (JCS) canonical JSON of the block
list, so the same blocks always have the same id whoever wrote them, and are stored once.
"""

from __future__ import annotations

import functools
import re
from json.encoder import encode_basestring  # a JSON string, escaped as RFC 8785 does
from typing import TYPE_CHECKING, Any

from .canonical import HASH_PREFIX as HASH_PREFIX
from .canonical import canonical as canonical
from .canonical import canonical_plain as canonical_plain
from .canonical import digest as digest
from .canonical import is_plain as is_plain
from .errors import InvalidInput, TooLarge
from .jsondepth import check_depth
from .tool_ids import complete

if TYPE_CHECKING:
    from pydantic import TypeAdapter

#: default upper bound on one node's canonical content, in bytes (configurable per store)
DEFAULT_MAX_CONTENT_BYTES = 4 * 1024 * 1024
#: default nesting depth of content: `loomdb.limits`' default (a test pins the two);
#: a store's own is `loom.limits.json_depth`
DEFAULT_JSON_DEPTH = 64

BLOCK_TYPES = ("text", "image", "audio", "document", "tool_use", "tool_result", "thinking",
               "piece")
#: blocks whose payload lives in the blob store
BLOB_BLOCK_TYPES = ("image", "audio", "document")

@functools.cache
def _adapter() -> TypeAdapter[list[Any]]:
    """Built on first use: the schema (and pydantic) cost more than a CLI call that
    validates nothing (a plain text append, a read) should pay."""
    from .content_schema import adapter

    return adapter()


def validate_blocks(raw: Any, where: str = "content",
                    max_depth: int = DEFAULT_JSON_DEPTH) -> list[dict[str, Any]]:
    """Check `raw` against the block union; return plain dicts or raise InvalidInput.

    Content nested deeper than `max_depth` (a tool call's input is any JSON) is refused
    before the schema walks it: every read of it would have to walk it too."""
    if not isinstance(raw, list):
        raise InvalidInput(where, f"content must be a list of blocks, got {type(raw).__name__}")
    if not raw:
        raise InvalidInput(where, "content must hold at least one block")
    check_depth(raw, max_depth, where)
    raw = [_piece_shorthand(b) for b in raw]
    from pydantic import ValidationError

    try:
        blocks: list[dict[str, Any]] = _adapter().validate_python(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in err["loc"])
        raise InvalidInput(f"{where}{loc}", err["msg"]) from None
    for block in blocks:
        if block["type"] in _TOOL_TYPES:
            return complete(blocks, where)
    return blocks


_TOOL_TYPES = frozenset({"tool_use", "tool_result"})


def _piece_shorthand(block: Any) -> Any:
    """`{"piece": "NAME"}` is a piece block (`{"type": "piece", "piece": "NAME"}`)."""
    if isinstance(block, dict) and "piece" in block and "type" not in block:
        return {"type": "piece", **block}
    return block


def piece_blocks(blocks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The piece blocks of validated content (see `loomdb.pieces`)."""
    return [b for b in blocks if b.get("type") == "piece"]


def text(value: str) -> list[dict[str, Any]]:
    """The content of a plain text message."""
    return [{"type": "text", "text": value}]


def check_text(value: str | None, where: str) -> None:
    """Refuse strings that cannot be stored as UTF-8 (lone surrogates) or as a text
    column on every backend (NUL: PostgreSQL refuses it). Message content is JSON and
    keeps any character; this is for titles, system prompts and other plain fields."""
    if value is None:
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise InvalidInput(where, f"text is not valid Unicode ({exc.reason})") from None
    if "\x00" in value:
        raise InvalidInput(where, "text contains a NUL character (\\x00)")


#: C0 and C1 control characters but tab, newline and carriage return
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def content_id(blocks: list[dict[str, Any]]) -> str:
    """The id of content: sha256 over its canonical JSON."""
    return digest(canonical(blocks))


def encode(blocks: list[dict[str, Any]], max_bytes: int = DEFAULT_MAX_CONTENT_BYTES) -> tuple[str, bytes]:
    """Canonicalize validated blocks: (content id, canonical bytes), enforcing the size limit."""
    body = _one_text(blocks) or canonical(blocks)
    if len(body) > max_bytes:
        raise TooLarge(
            "content",
            f"{len(body)} bytes is over the limit of {max_bytes} bytes; "
            "put large payloads in the blob store and reference them from a block",
        )
    return digest(body), body


def _one_text(blocks: list[dict[str, Any]]) -> bytes | None:
    if len(blocks) != 1:
        return None
    block = blocks[0]
    if len(block) != 2 or block.get("type") != "text" or type(text := block.get("text")) is not str:
        return None
    return text_body(text)


def text_body(text: str) -> bytes:
    """The canonical bytes of `[{"type": "text", "text": text}]` (most messages), written
    directly: the same bytes `canonical` gives, a test pins them together."""
    try:
        return ('[{"text":' + encode_basestring(text) + ',"type":"text"}]').encode()
    except UnicodeEncodeError:
        raise InvalidInput("content", "text is not valid Unicode (lone surrogate)") from None


def plain_text(blocks: list[dict[str, Any]]) -> str:
    """The readable text of content (text and thinking-free), for titles, search, buffers."""
    parts: list[str] = []
    for block in blocks:
        kind = block["type"]
        if kind == "text":
            parts.append(block["text"])
        elif kind == "tool_result":
            parts.extend(p["text"] for p in block["content"] if p["type"] == "text")
        elif kind == "document" and "text" in block:
            parts.append(block["text"])
    return "".join(parts)


def blob_refs(blocks: list[dict[str, Any]]) -> list[str]:
    """Every blob id the content points at (to check they exist, and to export them)."""
    refs: list[str] = []
    for block in blocks:
        if block["type"] in BLOB_BLOCK_TYPES:
            refs.append(block["ref"])
            if "thumbnail_ref" in block:
                refs.append(block["thumbnail_ref"])
        elif block["type"] == "tool_result":
            refs.extend(blob_refs(block["content"]))
    return refs


def title_from(blocks: list[dict[str, Any]]) -> str:
    """A tree's default title: the first words of its root, else "Untitled". Control
    characters (a NUL, an escape) separate words: a title is for reading, and
    PostgreSQL's text columns refuse NUL, which message content may hold."""
    words = _CONTROL.sub(" ", plain_text(blocks)).split()
    if not words:
        return "Untitled"
    title = " ".join(words[:8])
    return title if len(title) <= 60 else title[:59].rstrip() + "…"


#: keys whose strings are names and ids, not text (a span redaction leaves them)
NAME_KEYS = frozenset({"type", "ref", "mime_type", "media_type", "id", "tool_use_id",
                       "generation", "response_hash"})


def scrub_strings(value: Any, sub: Any) -> tuple[Any, int]:
    """`value` (JSON-like) with `sub(text) -> (new text, count)` applied to every string
    in it but keys and names (`NAME_KEYS`); and how many spans were replaced. The same
    object comes back when nothing was."""
    if isinstance(value, str):
        new, n = sub(value)
        return (new, n) if n else (value, 0)
    if isinstance(value, list):
        total = 0
        out = []
        for v in value:
            nv, n = scrub_strings(v, sub)
            out.append(nv)
            total += n
        return (out, total) if total else (value, 0)
    if isinstance(value, dict):
        total = 0
        changed: dict[str, Any] = {}
        for k, v in value.items():
            if k in NAME_KEYS and isinstance(v, str):
                changed[k] = v
                continue
            nv, n = scrub_strings(v, sub)
            changed[k] = nv
            total += n
        return (changed, total) if total else (value, 0)
    return value, 0
