"""Trees: list, create, export, and imports of other tools' exports."""

from __future__ import annotations

import io
import os
import re
import tempfile
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from ...errors import InvalidInput, TooLarge
from ...limits import DEFAULT, Limits
from ...users import Access
from ..schemas import ERRORS, Created, ImportOut, NewTree, TreesOut
from ..state import access, state_of

if TYPE_CHECKING:
    from ...interop.report import Outcome

router = APIRouter(prefix="/api", responses=ERRORS, tags=["trees"])

EXPORT_TYPES = {"json": "application/json", "jsonl": "application/x-ndjson",
                "markdown": "text/markdown; charset=utf-8",
                "openai-jsonl": "application/x-ndjson", "chatgpt": "application/json"}
_SUFFIX = re.compile(r"\.(json|jsonl|zip)$", re.IGNORECASE)


@router.get("/trees", response_model=TreesOut)
def list_trees(request: Request, archived: bool = False,
               who: Access = Depends(access)) -> dict[str, Any]:
    """The caller's trees, newest first."""
    with state_of(request).using():
        return {"trees": [t.to_json() for t in who.trees(archived=archived)]}


@router.post("/trees", response_model=Created, status_code=201)
def new_tree(body: NewTree, request: Request, who: Access = Depends(access)) -> dict[str, str]:
    """A new tree with its first message (and a session at it when `session` is given)."""
    with state_of(request).using() as lm, who.atomic():
        tree, node = lm.new_tree(body.text, system=body.system, session=body.session,
                                 mode=body.mode, title=body.title)
        who.claim([tree.id])
    return {"tree": tree.id, "node": node.id}


@router.get("/trees/{tree}/export",
            responses={200: {"content": {t: {} for t in set(EXPORT_TYPES.values())}}})
def export_tree(request: Request, tree: str,
                format: str = Query("json", description=", ".join(EXPORT_TYPES)),
                who: Access = Depends(access)) -> Response:
    """One tree in a format other tools (or loomdb) read back."""
    from ...interop.export import export

    fmt = format.strip().lower().replace("_", "-")
    if fmt not in EXPORT_TYPES:
        raise InvalidInput("format", f"{format!r} is not one of {', '.join(EXPORT_TYPES)}")
    out = io.StringIO()
    with state_of(request).using():
        found = who.tree(tree)
        export(who.loom, out, target=found.id, format=fmt)
    return Response(out.getvalue(), media_type=EXPORT_TYPES[fmt])


@router.post("/import", response_model=ImportOut, status_code=201,
             openapi_extra={"requestBody": {"required": True, "content": {
                 "application/octet-stream": {"schema": {"type": "string",
                                                         "format": "binary"}}}}})
async def import_upload(request: Request, filename: str = Query("upload.json"),
                        format: str = Query("auto"),
                        who: Access = Depends(access)) -> dict[str, Any]:
    """Every conversation of an uploaded export, one tree each (the caller's). The file
    is the body itself, as `application/octet-stream` (a form cannot send that, so no
    other site's page can post an import), at most `limits.upload` bytes; `filename`
    names it (its suffix tells a zip).

    An upload reads no file of the server (`files=None`: a dataset's images named by
    path are not read, each a warning); each conversation's trees are recorded as the
    caller's inside that conversation's own transaction."""
    name = os.path.basename(filename) or "upload.json"
    suffix = m.group(0) if (m := _SUFFIX.search(name)) else ".json"
    fd, tmp = tempfile.mkstemp(prefix="loomdb-import-", suffix=suffix)
    try:
        with os.fdopen(fd, "wb") as fh:
            async for chunk in request.stream():  # the guard refuses past the limit
                fh.write(chunk)
        return await run_in_threadpool(_import, request, who, tmp, name, format)
    finally:
        os.unlink(tmp)


def _import(request: Request, who: Access, tmp: str, name: str,
            format: str) -> dict[str, Any]:
    with state_of(request).using() as lm:
        if os.path.getsize(tmp) > lm.limits.upload:  # the store's own limit, too
            raise TooLarge("upload", f"over the limit of {lm.limits.upload} bytes "
                           "(LOOMDB_LIMIT_UPLOAD); nothing was imported")
        if who.user is not None:
            refuse_foreign(who, trees_in_file(tmp, format, lm.limits))
        report = lm.import_file(tmp, format, files=None, in_unit=_claiming(who))
        summary: dict[str, Any] = report.to_json()
        with who.atomic():
            who.record_import(name, summary)
    return summary


def _claiming(who: Access) -> Callable[[Outcome], None]:
    """Run inside each imported conversation's transaction: a new tree becomes the
    caller's there and then; one that grew must already be theirs (else the
    conversation rolls back)."""
    def claim(outcome: Outcome) -> None:
        with who.atomic():
            if outcome.created:
                who.claim([outcome.tree])
            elif not who.sees(outcome.tree):
                raise InvalidInput("import", "this conversation belongs to another user of "
                                   "this store; it was not imported")
    return claim


def trees_in_file(path: str, format: str, limits: Limits = DEFAULT) -> set[str]:
    """The ids of the trees an import of `path` would write or grow. Imported ids derive
    from the source, so the same export imported by two users names the same trees.
    Read as an upload is: no file of the server besides it, within `limits`."""
    from ...interop.detect import FORMATS
    from ...interop.importer import NATIVE, open_export
    from ...interop.model import ParseError
    from ...interop.writer import tree_id_for

    fmt, inp = open_export(path, format, files=None, limits=limits)
    if fmt == NATIVE:
        from ...interop import native

        return {str(doc["tree"]["id"]) for _, doc in native.read_units(inp)
                if isinstance(doc, dict) and isinstance(doc.get("tree"), dict)
                and isinstance(doc["tree"].get("id"), str)}
    return {tree_id_for(conv) for conv in FORMATS[fmt](inp)
            if not isinstance(conv, ParseError) and conv.messages}


def refuse_foreign(who: Access, tree_ids: set[str]) -> None:
    """Refuse (before writing anything) an import that would grow another user's tree."""
    from ...errors import NotFound

    for tid in sorted(tree_ids):
        if who.sees(tid):
            continue
        try:
            who.loom.tree(tid)
        except NotFound:
            continue  # new: it will be the caller's
        raise InvalidInput("import", "this file holds conversations another user of this "
                           "store imported; nothing was imported")
