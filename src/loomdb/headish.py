"""Headish: how a user names a point (MODEL.md).

    <node id> | <unique id prefix of 6+ chars> | <ref name>   then any of  ~N  ^
    `X~N` is the N-th ancestor of X on its path, `X^` its parent (as in git).

A ref name wins over an id prefix that happens to spell the same (as a branch name
does in git). Unknown and ambiguous names raise errors that list the candidates.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from .errors import AmbiguousName, InvalidInput, NotFound
from .model import Ref
from .store.base import Backend

_SUFFIX = re.compile(r"(~\d*|\^\d*)")
_ID_CHARS = re.compile(r"^[0-9A-HJKMNP-TV-Z]+$")
MIN_PREFIX = 6


@dataclass(frozen=True)
class Position:
    """A resolved headish: the node, its tree, and the ref whose selections apply.

    `session` is set only when the headish was exactly a session's name: appending
    there moves that session; a node id or an ancestor expression moves nothing."""

    node: str
    tree: str
    ref: Ref | None = None
    session: str | None = None
    selections: dict[str, str] = field(default_factory=dict)


#: resolves a base name (no `~N` / `^`) to (node id, the ref it came from, if any)
BaseResolver = Callable[[str], tuple[str, Ref | None]]


def looks_like_prefix(base: str) -> bool:
    """Whether a base name could be an id prefix (long enough, of id characters)."""
    return len(base) >= MIN_PREFIX and _ID_CHARS.match(base.upper()) is not None


def same_ref(a: Ref, b: Ref) -> bool:
    """Whether two reads of a name found the same ref (not one deleted and made again:
    a name can move to another tree, and so to another owner)."""
    return a.name == b.name and a.tree == b.tree and a.created_at == b.created_at


def parse(text: str) -> tuple[str, int]:
    """Split a headish into its base name and how many generations to go up."""
    if not isinstance(text, str) or not text.strip():
        raise InvalidInput("headish", "empty; give a node id, an id prefix or a ref name")
    text = text.strip()
    cut = min((i for i in (text.find("~"), text.find("^")) if i >= 0), default=len(text))
    base, rest = text[:cut], text[cut:]
    if not base:
        raise InvalidInput(f"headish {text!r}", "nothing before '~' or '^'")
    up = 0
    pos = 0
    while pos < len(rest):
        m = _SUFFIX.match(rest, pos)
        if not m:
            raise InvalidInput(f"headish {text!r}", f"cannot read {rest[pos:]!r}; use ~N or ^")
        step = m.group(0)
        digits = step[1:]
        if step[0] == "^" and digits not in ("", "1"):
            raise InvalidInput(f"headish {text!r}", "a node has one parent; use ^ or ~N")
        up += int(digits) if digits else 1
        pos = m.end()
    return base, up


def resolve_base(backend: Backend, base: str) -> tuple[str, Ref | None]:
    """A base name -> (node id, the ref it came from, if any)."""
    ref = backend.refs.get_ref(base)
    if ref is not None:
        return ref.node, ref
    upper = base.upper()
    if len(base) >= MIN_PREFIX and _ID_CHARS.match(upper):
        found = backend.nodes.node_ids_with_prefix(upper, AmbiguousName.LOOKUP)
        if len(found) == 1:
            return found[0], None
        if len(found) > 1:
            raise AmbiguousName("headish", base, found)
    candidates = backend.refs.ref_names_like(base, 10)
    if len(base) >= 2 and _ID_CHARS.match(upper):
        candidates += backend.nodes.node_ids_with_prefix(upper[:4], 5)
    if len(base) < MIN_PREFIX and _ID_CHARS.match(upper):
        raise NotFound(f"headish (id prefixes need {MIN_PREFIX}+ characters)", base, candidates)
    raise NotFound("headish", base, candidates)
