"""Trees: list, create, export, and imports of other tools' exports
(`loomdb.front.trees.Trees`)."""

from __future__ import annotations

import io
import os
import re
import tempfile
from typing import Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from ...errors import InvalidInput
from ...front import Door
from ..schemas import ERRORS, Created, ImportOut, NewTree, TreeOut, TreePatch, TreesOut
from ..state import door

router = APIRouter(prefix="/api", responses=ERRORS, tags=["trees"])

EXPORT_TYPES = {"json": "application/json", "jsonl": "application/x-ndjson",
                "markdown": "text/markdown; charset=utf-8",
                "openai-jsonl": "application/x-ndjson", "chatgpt": "application/json"}
_SUFFIX = re.compile(r"\.(json|jsonl|zip)$", re.IGNORECASE)


@router.get("/trees", response_model=TreesOut)
def list_trees(archived: bool = False, me: Door = Depends(door)) -> dict[str, Any]:
    """The caller's trees, newest first."""
    return {"trees": [t.to_json() for t in me.trees.list(archived=archived)]}


@router.post("/trees", response_model=Created, status_code=201)
def new_tree(body: NewTree, me: Door = Depends(door)) -> dict[str, str]:
    """A new tree with its first message (and a session at it when `session` is given)."""
    tree, node = me.trees.new(body.text, system=body.system, session=body.session,
                              mode=body.mode, title=body.title, template=body.template,
                              system_piece=body.system_piece)
    return {"tree": tree.id, "node": node.id}


@router.patch("/trees/{tree}", response_model=TreeOut)
def update_tree(tree: str, body: TreePatch, me: Door = Depends(door)) -> dict[str, Any]:
    """Rename a tree (`title`), archive it or bring it back (`archived`)."""
    return me.trees.update(tree, title=body.title, archived=body.archived).to_json()


@router.get("/trees/{tree:path}/map", tags=["page"],
            responses={200: {"content": {"application/json": {}}}})
def tree_map(tree: str,
             at: str | None = Query(None, max_length=1000,
                                    description="a headish in the tree: the path shown"),
             me: Door = Depends(door)) -> Response:
    """The whole tree as the tree map draws it, in one compact answer: parallel arrays
    of its nodes (ids, parent and slot as row numbers, role, kind, a short preview), the
    refs by kind, the row whose path is shown, pruned and excluded rows. Sent as the
    service made it (no response model: checking 60,000 values costs more than making
    them)."""
    return Response(me.trees.map(tree, at), media_type="application/json")


@router.get("/trees/{tree}/export",
            responses={200: {"content": {t: {} for t in set(EXPORT_TYPES.values())}}})
def export_tree(tree: str, format: str = Query("json", description=", ".join(EXPORT_TYPES)),
                me: Door = Depends(door)) -> Response:
    """One tree in a format other tools (or loomdb) read back."""
    fmt = format.strip().lower().replace("_", "-")
    if fmt not in EXPORT_TYPES:
        raise InvalidInput("format", f"{format!r} is not one of {', '.join(EXPORT_TYPES)}")
    out = io.StringIO()
    me.trees.export(tree, out, format=fmt)
    return Response(out.getvalue(), media_type=EXPORT_TYPES[fmt])


@router.post("/import", response_model=ImportOut, status_code=201,
             openapi_extra={"requestBody": {"required": True, "content": {
                 "application/octet-stream": {"schema": {"type": "string",
                                                         "format": "binary"}}}}})
async def import_upload(request: Request, filename: str = Query("upload.json"),
                        format: str = Query("auto"),
                        me: Door = Depends(door)) -> dict[str, Any]:
    """Every conversation of an uploaded export, one tree each (the caller's). The file
    is the body itself, as `application/octet-stream` (a form cannot send that, so no
    other site's page can post an import), at most `limits.upload` bytes; `filename`
    names it (its suffix tells a zip). An upload reads no file of the server: a
    dataset's images named by path are not read, each a warning."""
    name = os.path.basename(filename) or "upload.json"
    suffix = m.group(0) if (m := _SUFFIX.search(name)) else ".json"
    fd, tmp = tempfile.mkstemp(prefix="loomdb-import-", suffix=suffix)
    try:
        with os.fdopen(fd, "wb") as fh:
            async for chunk in request.stream():  # the guard refuses past the limit
                fh.write(chunk)
        report = await run_in_threadpool(me.trees.import_upload, tmp, name, format)
        summary: dict[str, Any] = report.to_json()
        return summary
    finally:
        os.unlink(tmp)
