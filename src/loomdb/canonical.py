"""Canonical JSON and its hash: the one byte form every id in loomdb is computed over.

It sits below `content` and `tool_ids` (both hash with it) so neither has to import
the other to get it.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

import rfc8785

from .errors import InvalidInput

HASH_PREFIX = "sha256:"


def canonical(value: Any) -> bytes:
    """RFC 8785 canonical JSON bytes; one canonical form for every hash in loomdb.

    Values without floats, big integers or non-ASCII keys (nearly all content) take
    the C encoder: for them `json.dumps(sort_keys=True, ensure_ascii=False)` writes
    exactly the RFC 8785 bytes (same escapes, same key order). Everything else goes
    through the `rfc8785` package. A property test pins the two paths together."""
    if is_plain(value):
        return canonical_plain(value)
    try:
        return rfc8785.dumps(value)
    except UnicodeEncodeError as exc:
        raise InvalidInput("content", f"text is not valid Unicode ({exc.reason})") from None
    except rfc8785.CanonicalizationError as exc:
        if "UTF-8" in str(exc):
            raise InvalidInput("content", "text is not valid Unicode (lone surrogate)") from None
        raise InvalidInput("content", f"cannot be canonicalized: {exc}") from None
    except (TypeError, ValueError) as exc:
        raise InvalidInput("content", f"cannot be canonicalized: {exc}") from None


def canonical_plain(value: Any) -> bytes:
    """`canonical` for a value `is_plain` accepts (callers that know it skip the check)."""
    try:
        return json.dumps(
            value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
        ).encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput("content", "text is not valid Unicode (lone surrogate)") from None


_SAFE_INT = 2**53


def is_plain(value: Any) -> bool:
    """True when the fast encoder is exactly RFC 8785 for `value` (see `canonical`)."""
    stack = [value]
    while stack:
        v = stack.pop()
        t = type(v)
        if t is str or t is bool or v is None:
            continue
        if t is int:
            if -_SAFE_INT < v < _SAFE_INT:
                continue
            return False
        if t is list:
            stack.extend(v)
        elif t is dict:
            for k in v:
                if type(k) is not str or not k.isascii():
                    return False
            stack.extend(v.values())
        else:
            return False
    return True


def digest(data: bytes) -> str:
    """`sha256:<hex>` of bytes: the one hash function, tagged with its algorithm."""
    return HASH_PREFIX + hashlib.sha256(data).hexdigest()
