"""The web app's page: one HTML file that Vite builds from `web/` into `static/app/`
(`make install`), served at `/` and at a share link's `/s/<token>`."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from starlette.responses import FileResponse, PlainTextResponse, Response

STATIC = Path(str(resources.files("loomdb.server") / "static"))


def app_page() -> Response:
    """The web app; a checkout that was never built says how to build it (the API works
    without it)."""
    built = STATIC / "app" / "index.html"
    if not built.is_file():
        return PlainTextResponse("the web app is not built: run `make install` "
                                 "(npm ci && npm run build in web/)", status_code=503)
    return FileResponse(built, media_type="text/html")
