"""What an imported conversation holds, as one digest: equal for exact copies (an
import skips a conversation met again in the same file when its copy is exact)."""

from __future__ import annotations

import hashlib
import json
from typing import Any

from .. import content as C
from .model import ImportedConversation


class Fingerprint:
    """A digest of everything a parsed conversation holds: equal for exact copies.

    Kept per conversation id while a file is read (not the conversation itself), so
    spotting a repeated conversation costs a hash each; fields are hashed in place,
    without copying the conversation. Fed part by part for a conversation given in
    parts: its messages and attachments in order, then the last part's own fields."""

    def __init__(self) -> None:
        self.messages = hashlib.sha256()
        self.attachments = hashlib.sha256()

    def feed(self, conv: ImportedConversation) -> None:
        """The messages and attachments of `conv` (the whole conversation or a part)."""
        for m in conv.messages:
            _feed(self.messages, vars(m))
        for att in conv.attachments:  # bytes hashed as such, not through JSON
            _feed(self.attachments, [att.key, att.mime_type, att.name,
                                     C.digest(att.data) if att.data is not None else None])

    def mark(self, conv: ImportedConversation) -> str:
        """The digest, with the fields of `conv` (the whole, or its last part)."""
        digest = hashlib.sha256()
        _feed(digest, {k: v for k, v in vars(conv).items() if k not in ("messages", "attachments")})
        digest.update(self.messages.digest() + self.attachments.digest())
        return digest.hexdigest()


def _feed(digest: Any, value: Any) -> None:
    body = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    digest.update(body.encode("utf-8", "surrogatepass") + b"\n")


def fingerprint(conv: ImportedConversation) -> str:
    """The `Fingerprint` of a whole conversation."""
    found = Fingerprint()
    found.feed(conv)
    return found.mark(conv)
