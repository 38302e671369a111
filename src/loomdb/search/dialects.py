"""Which search storage a unit's store takes (`storage.SearchStorage`): the one place
the search area looks at the dialect."""

from __future__ import annotations

from ..store.areas import Unit
from . import postgres, sqlite
from .storage import SearchStorage

_BY_DIALECT: dict[str, SearchStorage] = {"sqlite": sqlite.STORAGE, "postgres": postgres.STORAGE}


def storage(db: Unit) -> SearchStorage:
    """The search storage of the unit's store."""
    return _BY_DIALECT[db.dialect]
