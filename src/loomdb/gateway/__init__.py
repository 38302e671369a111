"""An OpenAI-compatible gateway that records every exchange into the loom.

Point any OpenAI client's `base_url` at it: each call is forwarded to the model its
`model` names (a providers.toml alias; `local` is SmolLM2 in process) and recorded as
branching history. Re-sent histories are matched to the path already stored, so a
conversation grows one node per message; a retry becomes a sibling, an edited earlier
message a version. See `paths.py` (matching), `record.py` (where messages go),
`convert.py` (wire shapes) and `app.py` (HTTP).
"""

from .app import create_gateway_app, gateway_router

__all__ = ["create_gateway_app", "gateway_router"]
