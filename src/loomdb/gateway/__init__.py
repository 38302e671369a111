"""A model gateway that records every exchange into the loom, speaking OpenAI's Chat
Completions and Responses APIs and Anthropic's Messages API.

Point any OpenAI or Anthropic client's base URL at it: each call is forwarded to the model its
`model` names (a providers.toml alias; `local` is SmolLM2 in process) and recorded as
branching history. Re-sent histories are matched to the path already stored, so a
conversation grows one node per message; a retry becomes a sibling, an edited earlier
message a version. This package is the HTTP edge (`app.py` the handlers, `body.py`
the request bodies): each handler is one call on the front door's gateway
(`loomdb.front.gateway`); the service behind it is `loomdb.exchanges` (`paths.py`
matching, `record.py` where messages go, a module per wire for its shapes).

The web app is imported on first use of its names, so importing the package costs
nothing a process that never serves it would pay.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import create_gateway_app, gateway_router

__all__ = ["create_gateway_app", "gateway_router"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from . import app

        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
