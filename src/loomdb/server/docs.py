"""`/docs`: the API's reference page, every file of it served by loomdb itself.

The page's origin holds users' tokens (the web page keeps one in its storage), so no
script from a CDN may run there. Swagger UI's files come from the `fastapi-offline`
package (a dependency of the `server` extra) under `/docs/assets`, and the page starts
it from a file of ours (`static/docs.js`), never an inline script, so the
Content-Security-Policy of `loomdb.guard` holds on it too. Without that package the
page answers 501 saying what to install; the schema stays at `/openapi.json`.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from fastapi import FastAPI
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

from ..errors import MissingExtra

PAGE = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>loomdb API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/static/docs.js"></script>
</body>
</html>
"""


def assets() -> Path | None:
    """The folder holding Swagger UI's files, if the package that ships them is here."""
    try:
        folder = Path(str(resources.files("fastapi_offline") / "static"))
    except ModuleNotFoundError:
        return None
    return folder if (folder / "swagger-ui-bundle.js").is_file() else None


def install(app: FastAPI) -> None:
    """Serve `/docs` and its assets from this machine."""
    folder = assets()
    if folder is not None:
        app.mount("/docs/assets", StaticFiles(directory=folder), name="docs-assets")

    @app.get("/docs", include_in_schema=False)
    def docs() -> HTMLResponse:
        if folder is None:
            raise MissingExtra("the /docs page", "server")
        return HTMLResponse(PAGE)
