"""loomdb over HTTP: a JSON API and a web page, both served by one FastAPI app.

    from loomdb.server import create_app
    app = create_app("./.loomdb")          # or a Loom; then run it with uvicorn

The layer is thin: each route checks who is asking (`loomdb.users.Access`), calls the
library, and returns the CLI's `--json` shape; errors leave through one table
(`loomdb.server.errors`). Needs the `server` extra.
"""

from __future__ import annotations

try:
    from .app import create_app
except ImportError as exc:  # pragma: no cover - depends on what is installed
    from ..errors import MissingExtra

    raise MissingExtra("the HTTP server", "server") from exc

__all__ = ["create_app"]
