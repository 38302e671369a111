"""Copying an area's rows from one store into another, of either dialect (`loomdb migrate`).

Generic, so that a new area is copied without code of its own: its tables are the ones
its migrations create (`Area.tables`), copied in that order, every column as it is,
ids included. Both sides are first brought to the area's latest migration, so both
have the same columns; what the dialects store differently is carried over here:

* bytes: `BLOB` and `bytea` both take Python bytes (a memoryview is read as bytes);
* booleans: SQLite stores 0/1, a PostgreSQL `boolean` column is given True/False;
* generated ids: rows keep their ids; on PostgreSQL every sequence a column draws from
  (`serial`, `bigserial`, identity) is then moved past the largest id copied, so the
  next insert does not collide (an `ALWAYS` identity is written with `OVERRIDING
  SYSTEM VALUE`); SQLite's `INTEGER PRIMARY KEY` (AUTOINCREMENT too) follows by itself;
* generated columns (PostgreSQL `GENERATED ALWAYS AS ... STORED`) are not written: the
  target computes them.

Other value types (json, timestamps, numeric) are refused with the table and column
named rather than guessed at. Rows are read from the source a page at a time in
primary-key order. Into a table that already holds rows (a forced copy), a row whose
primary key is there is kept when it is equal and is an error when it differs, as is
a row that collides with another on a unique column; a table without a primary key
identifies a row by all its values.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidInput
from .areas import Area, Unit, dialect_of, prepare, unit
from .base import Backend

_PAGE = 1000
#: bound parameters per INSERT statement (SQLite's old default limit is 999)
_PARAMS = 900

Row = tuple[Any, ...]


@dataclass(frozen=True)
class Shape:
    """What a copy needs to know of a table on one side."""

    columns: tuple[str, ...]  # written columns (not generated), in table order
    key: tuple[str, ...]  # primary key columns; () when there is none
    types: dict[str, str]  # declared type per column, lower case
    sequences: dict[str, str] = field(default_factory=dict)  # column -> its sequence (PostgreSQL)
    always_identity: bool = False  # a GENERATED ALWAYS identity column (PostgreSQL)


@dataclass
class Copied:
    """Rows of one table written at the target, and rows found there already (force)."""

    written: int = 0
    kept: int = 0


def copy_area(src: Backend, dst: Backend, area: Area) -> dict[str, Copied]:
    """Copy every row of `area` from `src` into `dst`, in `dst`'s open transaction (a
    unit joins it), the area's migrations applied on both sides first."""
    tables = area.tables(dialect_of(src))
    theirs = area.tables(dialect_of(dst))
    if tables != theirs:
        raise InvalidInput(f"area {area.name}",
                           f"its {dialect_of(src)} migrations make tables {tables}, "
                           f"its {dialect_of(dst)} ones {theirs}")
    prepare(src, area)  # the source's tables brought to the area's latest migration
    with unit(dst, area) as out:
        return {table: copy_table(Unit(src), out, table) for table in tables}


def copy_table(src: Unit, dst: Unit, table: str) -> Copied:
    """Copy one table's rows (see the module docstring); the counts."""
    have, want = shape(src, table), shape(dst, table)
    if set(have.columns) != set(want.columns):
        raise InvalidInput(f"table {table}",
                           f"has columns {sorted(have.columns)} in the source but "
                           f"{sorted(want.columns)} in the target")
    done = Copied()
    fresh = dst.one(f"SELECT 1 FROM {_q(table)} LIMIT 1") is None
    for page in _pages(src, table, want.columns, have.key):
        rows = [_converted(row, want, table) for row in page]
        if not fresh:
            rows = _missing(dst, table, want, rows, done)
        _insert(dst, table, want, rows)
        done.written += len(rows)
    if done.written:
        _advance_sequences(dst, table, want)
    return done


def shape(db: Unit, table: str) -> Shape:
    """A table's columns, key and types as this side's catalog declares them."""
    found = _pg_shape(db, table) if db.dialect == "postgres" else _sqlite_shape(db, table)
    if not found.columns:
        raise InvalidInput(f"table {table}", f"does not exist in the {db.dialect} store")
    return found


def _sqlite_shape(db: Unit, table: str) -> Shape:
    # table_info leaves generated columns out; pk is the column's place in the key
    info = db.execute(f"PRAGMA table_info({_q(table)})")
    key = tuple(r[1] for r in sorted((r for r in info if r[5]), key=lambda r: r[5]))
    return Shape(tuple(r[1] for r in info), key, {r[1]: str(r[2]).lower() for r in info})


def _pg_shape(db: Unit, table: str) -> Shape:
    info = db.execute(
        "SELECT a.attname, format_type(a.atttypid, a.atttypmod), a.attgenerated, "
        "a.attidentity, pg_get_serial_sequence(?, a.attname) FROM pg_attribute a "
        "WHERE a.attrelid = to_regclass(?) AND a.attnum > 0 AND NOT a.attisdropped "
        "ORDER BY a.attnum", (table, table))
    key = db.execute(
        "SELECT a.attname FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid "
        "AND a.attnum = ANY(i.indkey) WHERE i.indrelid = to_regclass(?) AND i.indisprimary "
        "ORDER BY array_position(i.indkey::int2[], a.attnum)", (table,))
    written = [r for r in info if not r[2]]
    return Shape(tuple(r[0] for r in written), tuple(r[0] for r in key),
                 {r[0]: str(r[1]).lower() for r in written},
                 {r[0]: r[4] for r in written if r[4]},
                 any(r[3] == "a" for r in written))


def _pages(src: Unit, table: str, columns: Sequence[str], key: Sequence[str]) -> Iterator[list[Row]]:
    """The source's rows, `_PAGE` at a time in key order (a keyless table at once)."""
    select = f"SELECT {_list(columns)} FROM {_q(table)}"
    if not key:
        yield src.execute(select)
        return
    order, at = _list(key), [columns.index(k) for k in key]
    after: list[Any] = []
    while True:
        where = f" WHERE ({order}) > ({_marks(len(key))})" if after else ""
        rows = src.execute(f"{select}{where} ORDER BY {order} LIMIT {_PAGE}", after)
        if rows:
            yield rows
        if len(rows) < _PAGE:
            return
        after = [rows[-1][i] for i in at]


def _converted(row: Row, want: Shape, table: str) -> Row:
    return tuple(_value(v, want.types[c], table, c) for v, c in zip(row, want.columns, strict=True))


def _value(value: Any, target_type: str, table: str, column: str) -> Any:
    if isinstance(value, memoryview):
        value = bytes(value)
    if value is None or isinstance(value, (str, bytes, int, float)):
        if target_type == "boolean" and isinstance(value, int):
            return bool(value)
        return value
    raise InvalidInput(f"table {table}, column {column}",
                       f"holds a {type(value).__name__}, which a copy between stores "
                       "does not carry (text, numbers, booleans and bytes only)")


def _missing(dst: Unit, table: str, want: Shape, rows: list[Row], done: Copied) -> list[Row]:
    """The rows the target lacks. One whose key is there already is kept when equal and
    refused when it differs."""
    key = want.key or want.columns
    at = [want.columns.index(k) for k in key]
    same = " IS NOT DISTINCT FROM " if dst.dialect == "postgres" else " IS "
    lookup = (f"SELECT {_list(want.columns)} FROM {_q(table)} WHERE "
              + " AND ".join(f"{_q(k)}{same}?" for k in key))
    missing: list[Row] = []
    for row in rows:
        there = dst.one(lookup, [row[i] for i in at])
        if there is None:
            missing.append(row)
        elif _plain(there) == _plain(row):
            done.kept += 1
        else:
            shown = ", ".join(f"{k}={row[i]!r}" for k, i in zip(key, at, strict=True))
            raise InvalidInput(f"table {table}, row {shown}",
                               f"exists in the target with other values: {_plain(there)} "
                               f"there, {_plain(row)} in the source")
    return missing


def _plain(row: Row) -> Row:
    """A row as compared across dialects (booleans as 0/1, bytes as bytes)."""
    return tuple(bytes(v) if isinstance(v, memoryview) else int(v) if isinstance(v, bool)
                 else v for v in row)


def _insert(dst: Unit, table: str, want: Shape, rows: list[Row]) -> None:
    head = f"INSERT INTO {_q(table)} ({_list(want.columns)})"
    if want.always_identity:
        head += " OVERRIDING SYSTEM VALUE"
    one = f"({_marks(len(want.columns))})"
    per = max(1, _PARAMS // len(want.columns))
    for i in range(0, len(rows), per):
        part = rows[i:i + per]
        try:
            dst.execute(f"{head} VALUES {', '.join([one] * len(part))}",
                        [v for row in part for v in row])
        except _constraint_errors() as exc:  # another key of the row (a unique name) is taken
            raise InvalidInput(f"table {table}", "a source row conflicts with a row already "
                               f"in the target: {str(exc).strip()}") from exc


def _constraint_errors() -> tuple[type[Exception], ...]:
    """What each driver raises for a violated constraint (psycopg when installed)."""
    try:
        import psycopg
    except ImportError:
        return (sqlite3.IntegrityError,)
    return (sqlite3.IntegrityError, psycopg.IntegrityError)


def _advance_sequences(dst: Unit, table: str, want: Shape) -> None:
    """Move each sequence past the largest id now in its column (never back)."""
    for column, sequence in want.sequences.items():
        dst.execute(
            f"SELECT setval(CAST(? AS regclass), greatest(max({_q(column)}), "
            "coalesce(pg_sequence_last_value(CAST(? AS regclass)), 1))) "
            f"FROM {_q(table)} HAVING max({_q(column)}) > 0", (sequence, sequence))


def _q(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _list(names: Sequence[str]) -> str:
    return ", ".join(_q(n) for n in names)


def _marks(n: int) -> str:
    return ", ".join("?" * n)
