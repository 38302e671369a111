"""The references area's SQL: every function takes the unit it runs in."""

from __future__ import annotations

from typing import Any

from ..store.areas import Unit

Row = tuple[str, str, str, str, str]  # from_key, from_addr, to_key, to_addr, type


def insert(db: Unit, row: tuple[Any, ...]) -> None:
    """(id, from_key, from_addr, to_key, to_addr, type, created_at)"""
    db.execute("INSERT INTO ref_links VALUES (?, ?, ?, ?, ?, ?, ?)", row)


def to_address(db: Unit, address: str) -> list[Row]:
    """Links made to an address as written (the thing it named is gone)."""
    return [tuple(r) for r in db.execute(
        "SELECT from_key, from_addr, to_key, to_addr, type FROM ref_links "
        "WHERE to_addr = ? ORDER BY id", (address,))]


def to_key(db: Unit, key: str) -> list[Row]:
    """Links to a key or to one of its revisions (`key@...`)."""
    return [tuple(r) for r in db.execute(
        "SELECT from_key, from_addr, to_key, to_addr, type FROM ref_links "
        "WHERE to_key = ? OR substr(to_key, 1, ?) = ? ORDER BY id",
        (key, len(key) + 1, key + "@"))]


def keys(db: Unit) -> list[str]:
    """Every key a link points from or at."""
    return [str(r[0]) for r in db.execute(
        "SELECT to_key FROM ref_links UNION SELECT from_key FROM ref_links")]
