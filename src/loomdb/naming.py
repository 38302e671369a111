"""Names of documents and collections: short, and free of the characters addresses use
as separators (`@` before a revision, `/` before an item, `:` after a scheme)."""

from __future__ import annotations

import re

from .errors import InvalidInput

_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}")


def check_name(what: str, name: str) -> str:
    """Refuse a name an address could not carry unambiguously."""
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise InvalidInput(
            f"{what} name {name[:100]!r}",
            "use 1-100 letters, digits, '_', '.', '-', starting with a letter, digit or '_'",
        )
    return name
