"""LangGraph's checkpointer on a loomdb store: `LoomSaver`, `AsyncLoomSaver` (see
`saver`). Imported on first use, so that the area (`area.LANGGRAPH`) and its
migrations are found without LangGraph installed."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .saver import AsyncLoomSaver, LoomSaver

__all__ = ["AsyncLoomSaver", "LoomSaver"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from ...errors import MissingExtra

        try:
            from . import saver
        except ImportError as exc:
            raise MissingExtra(f"LoomSaver ({exc})", "langgraph") from exc
        return getattr(saver, name)
    raise AttributeError(name)
