"""Share links: make, list and revoke them (`loomdb.front.shares.Shares`), and the
read-only side a link's holder uses without a token: its page at `/s/{token}` and
`/api/s/{token}/...` (`Shared`), which reach the shared branch and nothing else."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Depends, Path, Query, Request
from fastapi.responses import Response
from pydantic import BaseModel, ConfigDict, Field

from ...front import Door
from ...front.shares import Shared, open_share
from ...front.threadpage import MAX_PAGE
from ..page import app_page
from ..render import blocks_html
from ..schemas import ERRORS
from ..state import door, state_of
from .blobs import INLINE
from .live import STREAM

router = APIRouter(prefix="/api", responses=ERRORS, tags=["shares"])
page_router = APIRouter(include_in_schema=False)

class ShareIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    headish: str = Field(min_length=1, max_length=1000,
                         description="the branch: a node (a snapshot) or a session (live)")
    live: bool = Field(False, description="follow the session `headish` names as it moves")
    allow_continue: bool = Field(False, description="let a signed-in reader continue the "
                                 "branch in a tree of their own")


class ContinueIn(BaseModel):
    model_config = ConfigDict(extra="forbid")
    session: str = Field(min_length=1, max_length=200, description="the new session's name")
    text: str = Field(min_length=1, description="the message that continues the branch")


def shared(token: str, request: Request) -> Shared:
    """Dependency: the link a path's token opens (404 when unknown, revoked or dead)."""
    state = state_of(request)
    return open_share(state.loom, token[:200], state.runtime)


@router.post("/shares", status_code=201)
def create(body: ShareIn, me: Door = Depends(door)) -> dict[str, Any]:
    """A read-only link to one of your branches: its token (shown once, never stored)
    and the path of its page. `live` follows a session; otherwise the node is fixed."""
    made, token = me.shares.create(body.headish, live=body.live,
                                   allow_continue=body.allow_continue)
    return {"token": token, "path": f"/s/{token}", **made.to_json()}


@router.get("/shares")
def listed(me: Door = Depends(door)) -> dict[str, Any]:
    """Your links (id, the token's first characters, what each shows)."""
    return {"shares": [s.to_json() for s in me.shares.list()]}


@router.delete("/shares/{token}")
def revoke(token: str, me: Door = Depends(door)) -> dict[str, Any]:
    """Revoke one of your links, named by its token or its id: it stops at once."""
    return {"revoked": me.shares.revoke(token[:200]).to_json()}


@router.post("/s/{token}/continue", status_code=201)
def fork(token: str, body: ContinueIn, me: Door = Depends(door)) -> dict[str, Any]:
    """Continue a branch shared with `allow_continue`: a new tree of yours whose root is
    `text` and whose context starts with the shared path (nothing copied; revoking the
    link leaves it). A read-only link is refused (400)."""
    tree, root = me.shares.fork(token[:200], body.session, body.text)
    return {"tree": tree.id, "node": root.id, "session": body.session}


@router.get("/shares/forks/{headish}/blobs/{ref}",
            responses={200: {"content": {"application/octet-stream": {}}}})
def fork_blob(headish: str = Path(max_length=1000, description="a message of your fork"),
              ref: str = Path(max_length=71, description="sha256:<64 hex>"),
              node: str = Query(max_length=1000,
                                description="a message of the shared path naming it"),
              me: Door = Depends(door)) -> Response:
    """The bytes of a blob a message of the shared path your fork continues from holds."""
    return _blob(*me.shares.fork_blob(headish, node, ref))


@router.get("/s/{token}", tags=["page"])
def info(link: Shared = Depends(shared)) -> dict[str, Any]:
    """What a link shows (no token needed: the link is the capability)."""
    return link.info()


@router.get("/s/{token}/thread", tags=["page"])
def thread(before: str | None = Query(None, max_length=1000),
           limit: int | None = Query(None, ge=1, le=MAX_PAGE),
           link: Shared = Depends(shared)) -> dict[str, Any]:
    """The shared path as GET /api/nodes/{headish}/thread draws it (same shape and
    paging), with nothing of the tree beside it."""
    out = link.thread(before=before, limit=limit)
    for message in out["messages"]:
        message["html"] = blocks_html(message["content"])
    return out


@router.get("/s/{token}/blobs/{ref}", tags=["page"],
            responses={200: {"content": {"application/octet-stream": {}}}})
def blob(ref: str = Path(max_length=71, description="sha256:<64 hex>"),
         node: str = Query(max_length=1000, description="a message of the path naming it"),
         link: Shared = Depends(shared)) -> Response:
    """The bytes of a blob a message of the shared path holds (as GET /api/blobs)."""
    return _blob(*link.blob(node, ref))


def _blob(data: bytes, mime: str) -> Response:
    inline = mime in INLINE
    headers = {"Cache-Control": "private, no-store", "X-Content-Type-Options": "nosniff"}
    if not inline:
        headers["Content-Disposition"] = "attachment"
    return Response(data, media_type=mime if inline else "application/octet-stream",
                    headers=headers)


@router.get("/s/{token}/events", tags=["page"], responses=STREAM)
def events(request: Request, link: Shared = Depends(shared)) -> Response:
    """Server-sent events: `change` (with the new head) when a live link's session
    moves (`loomdb.server.live`); counted against the link's maker and the client's
    address."""
    maker = f"user:{link.share.user}" if link.share.user is not None else "operator"
    address = request.client.host if request.client is not None else "unknown"
    return state_of(request).streams.stream(maker, link.stamp, link.stamp(), address)


@page_router.get("/s/{token}")
def page(token: str, request: Request) -> Response:
    """A link's page: the app, reading only through the link."""
    shared(token, request)  # an unknown or revoked link is a 404, not an empty page
    out = app_page()
    out.headers["Cache-Control"] = "no-store"  # a revoked link is not shown from a cache
    out.headers["Referrer-Policy"] = "no-referrer"  # nor its token handed to other sites
    return out
