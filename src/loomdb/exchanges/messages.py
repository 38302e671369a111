"""A request's messages as every wire hands them to the exchange: loomdb's blocks, and
the key each message contributes to its path digest (see `paths.py`).

A wire module (`openai_chat.py`, `responses.py`, `anthropic_messages.py`) turns its own
shapes into `Message(role, blocks, key)`; nothing here knows a wire. The key is a
function of (role, blocks as a client re-sends them) only, so a message matches
whichever way a client spells it:

- the key of a message holding one text block is the role's letter, the text's
  length, a colon and the text; any other content keys as the role, `#`, the length
  and the canonical JSON of its blocks. Keys are self-delimiting, so a path's digest is
  the hash of its keys concatenated. No canonical JSON and no hash is computed per text
  message on the hot path;
- thinking is never part of a key (`resent`): clients do not re-send it consistently
  (OpenAI clients drop it, Anthropic clients send it back signed), so an answer's
  thinking is kept in its node and left out of its key;
- media bytes go to the blob store (`Message.blobs`, written with the exchange) and the
  block names them by digest (`stored_media`).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, overload

from ..content import canonical, digest
from ..errors import InvalidInput

_LETTER = {"system": "s", "user": "u", "assistant": "a", "tool": "t"}
Blocks = list[dict[str, Any]]
Blobs = dict[str, tuple[bytes, str]]


@dataclass
class Message:
    """One request message as loomdb stores it, with its path key."""

    role: str
    blocks: Blocks
    key: str
    blobs: Blobs = field(default_factory=dict)


class Messages(Sequence[Message]):
    """A request's messages as parallel lists (roles, keys, and the normalized messages
    a model client takes, blocks inside): a 2,000-message history is converted by a few
    list comprehensions, not 2,000 objects."""

    def __init__(self, roles: list[str], sent: list[dict[str, Any]] | None,
                 keys: list[str] | None, blobs: Blobs | None = None,
                 texts: list[str] | None = None) -> None:
        self.roles, self._made, self._keys = roles, sent, keys
        self.blobs = blobs or {}
        self._texts = texts  # plain text messages: `sent` and `keys` made when asked for

    @property
    def keys(self) -> list[str]:
        """Each message's path key (`key_of`); a plain text message's made when first
        asked for (only recording asks: a recording proxy forwards before)."""
        if self._keys is None:
            self._keys = [f"{_LETTER[r]}{len(t)}:{t}"
                          for r, t in zip(self.roles, self._texts or (), strict=True)]
        return self._keys

    def key_bound(self) -> int:
        """At least the length of every key together (without making them)."""
        if self._keys is None and self._texts is not None:  # `<role><length>:` then text
            return sum(map(len, self._texts)) + 14 * len(self._texts)
        return sum(map(len, self.keys))

    @property
    def _sent(self) -> list[dict[str, Any]]:
        if self._made is None:
            self._made = [{"role": r, "content": [{"type": "text", "text": t}]}
                          for r, t in zip(self.roles, self._texts or (), strict=True)]
        return self._made

    @classmethod
    def of(cls, items: Sequence[Message]) -> Messages:
        blobs = {k: v for m in items for k, v in m.blobs.items()}
        return cls([m.role for m in items],
                   [{"role": m.role, "content": m.blocks} for m in items],
                   [m.key for m in items], blobs)

    @classmethod
    def texts(cls, roles: list[str], texts: list[str]) -> Messages:
        """Plain text messages (the everyday request), with no object per message (a
        recording proxy, which sends the client's own body on, never makes them)."""
        return cls(roles, None, None, texts=texts)

    def __len__(self) -> int:
        return len(self.roles)

    @overload
    def __getitem__(self, i: int) -> Message: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[Message]: ...

    def __getitem__(self, i: int | slice) -> Message | Sequence[Message]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        return Message(self.roles[i], self.blocks(i), self.keys[i])

    def blocks(self, i: int) -> Blocks:
        if self._made is None:
            return [{"type": "text", "text": (self._texts or [])[i]}]
        return self._made[i]["content"]  # type: ignore[no-any-return]

    def __add__(self, other: Messages) -> Messages:
        return Messages(self.roles + other.roles, self._sent + other._sent,
                        self.keys + other.keys, {**self.blobs, **other.blobs})

    def sent(self) -> list[dict[str, Any]]:
        """The normalized messages a model client takes (a new list; shared dicts)."""
        return list(self._sent)


def key_of(role: str, blocks: Sequence[Mapping[str, Any]]) -> str:
    """The text a message contributes to its path digest (module docstring)."""
    if len(blocks) == 1 and blocks[0].get("type") == "text" and len(blocks[0]) == 2:
        text = str(blocks[0]["text"])
        return f"{_LETTER[role]}{len(text)}:{text}"
    body = canonical(list(blocks)).decode("utf-8")
    return f"{role}#{len(body)}:{body}"


def resent(blocks: Blocks) -> Blocks:
    """The blocks of a message as they key (no thinking)."""
    kept = [b for b in blocks if b["type"] != "thinking"]
    return kept or [{"type": "text", "text": ""}]


def message(role: str, blocks: Blocks, blobs: Blobs | None = None) -> Message:
    """A Message with its key (an assistant's thinking left out of the key)."""
    if not blocks:
        blocks = [{"type": "text", "text": ""}]
    keyed = resent(blocks) if role == "assistant" else blocks
    return Message(role, blocks, key_of(role, keyed), blobs or {})


def node_key(role: str, content: Blocks) -> str:
    """The key of a stored node's message, as a client re-sending it keys."""
    return key_of(role, resent(content) if role == "assistant" else content)


def utf8(text: str, where: str) -> str:
    """`text`, refused when it holds a lone surrogate (no UTF-8 can carry it)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput(where, "text is not valid Unicode") from None
    return text


def stored_media(kind: str, data: str, mime: str, where: str, blobs: Blobs,
                 encoded: bool = True) -> dict[str, Any]:
    """A media block (`image`, `document`) whose bytes (base64 `data`) go to the blob
    store with the exchange."""
    try:
        raw = base64.b64decode(data, validate=True) if encoded else data.encode("utf-8")
    except (binascii.Error, ValueError, UnicodeEncodeError):
        raise InvalidInput(where, "the data is not valid base64") from None
    ref = digest(raw)
    blobs[ref] = (raw, mime)
    return {"type": kind, "ref": ref, "mime_type": mime}


def check_size(msgs: Messages, max_bytes: int) -> None:
    """Refuse a message over the store's content limit before any model is asked (a
    TooLarge, 413): the model would otherwise fail on it first (a 502) or answer what
    could never be recorded."""
    if msgs.key_bound() * 4 + 32 <= max_bytes:  # none can be: all are not
        return
    for i, key in enumerate(msgs.keys):  # a key is `<role><length>:` and its content
        if len(key) * 4 + 32 <= max_bytes:
            continue
        head = key.index(":") + 1
        wrapped = 0 if "#" in key[:head] else len('[{"text":"","type":"text"}]')
        if len(key.encode("utf-8", "surrogatepass")) - head + wrapped > max_bytes:
            from ..errors import TooLarge

            raise TooLarge(f"messages[{i}]", f"about {len(key)} bytes is over the limit of "
                           f"{max_bytes} bytes for one message")
