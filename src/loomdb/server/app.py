"""The app factory: one FastAPI app over one Loom, its API under /api and the web page
at /, every asset served from this package (nothing from a CDN)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

from fastapi import Depends, FastAPI
from fastapi.responses import Response
from fastapi.staticfiles import StaticFiles

from ..api import Loom
from ..api import open as open_loom
from ..front import Runtime
from ..gateway.app import gateway_router
from ..guard import Guard, Trust
from . import docs, errors
from .live import Writes
from .page import STATIC, app_page
from .routes import (
    agents,
    blobs,
    branches,
    buffer,
    collections,
    documents,
    forget,
    gc,
    generate,
    lineage,
    live,
    meta,
    nodes,
    pieces,
    references,
    refs,
    search,
    shares,
    trees,
)
from .state import ServerState, access

#: the routes that take a raw upload (`application/octet-stream`) rather than JSON
UPLOADS = frozenset({"/api/import"})


def create_app(loom_or_url: Loom | str | Path | None, *, config: Any = None,
               environ: Mapping[str, str] | None = None,
               trust: Trust | None = None, runtime: Runtime | None = None) -> FastAPI:
    """The app serving a Loom, or the store at a folder or URL (opened here, closed when
    the app stops). `runtime` is how its callers' operations reach models (default:
    the Loom's), or give its parts: `config` the providers config generation uses
    (default: the built-in models), `environ` where API keys are read (default: the
    Loom's settings; a store opened here by `loomdb.open`, which reads the process's
    environment without settings given); `trust` the hosts it answers to and the limits of what it takes
    (`loomdb.guard`; default: the loopback names and the Loom's limits). HTTP callers
    may name only the served models (`Runtime.serving`)."""
    owned = not isinstance(loom_or_url, Loom)
    loom = loom_or_url if isinstance(loom_or_url, Loom) else open_loom(loom_or_url)
    trust = trust or Trust(limits=loom.limits)
    base = runtime or loom.runtime
    if environ is not None:
        base = base.with_environ(environ)
    if config is not None:
        base = replace(base, config=config)
    state = ServerState(loom, owned=owned, runtime=base.serving(trust.limits))

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        yield
        if state.owned:
            loom.close()

    app = FastAPI(title="loomdb", version=_version(), lifespan=lifespan,
                  docs_url=None, redoc_url=None,
                  description="Git for LLM conversations, over HTTP. Send "
                  "`Authorization: Bearer TOKEN` once the store has users, and every "
                  "POST as `application/json` (an import: `application/octet-stream`).")
    app.state.loomdb = state
    errors.install(app)
    for router in (meta.router, trees.router, generate.router, nodes.router, refs.router,
                   buffer.router, documents.router, collections.router, references.router,
                   search.router, gc.router, forget.router, blobs.router,
                   lineage.router, agents.router, shares.router, live.router, branches.router,
                   pieces.router,
                   shares.page_router):
        app.include_router(router)
    # /v1 speaks OpenAI's API (its reference documents it), not this app's schema; its
    # callers pass the API's door (a store without users answers loopback only), and the
    # gateway's own door refuses a store with users (`front.gateway`)
    app.include_router(gateway_router(loom, runtime=state.runtime),
                       dependencies=[Depends(access)], include_in_schema=False)
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
    docs.install(app)
    app.add_middleware(Writes, streams=state.streams)
    app.add_middleware(Guard, trust=replace(trust, uploads=trust.uploads | UPLOADS))

    @app.get("/", include_in_schema=False)
    def page() -> Response:
        return app_page()

    return app


def _version() -> str:
    from .. import __version__

    return __version__
