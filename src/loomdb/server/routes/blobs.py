"""Blobs (an image, audio, a document's bytes) as a message names them: a caller reads
a blob through a message they see (`Door.nodes.blob`), never by its id alone."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Path, Query
from fastapi.responses import Response

from ...front import Door
from ..schemas import ERRORS
from ..state import door

router = APIRouter(prefix="/api/blobs", responses=ERRORS, tags=["nodes"])

#: media types a browser may show inline; anything else is sent as a download (a blob
#: is anyone's bytes: HTML or SVG from this origin could script the page)
INLINE = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif",
                    "audio/mpeg", "audio/ogg", "audio/wav", "audio/webm", "audio/flac",
                    "application/pdf"})


@router.get("/{ref}", responses={200: {"content": {"application/octet-stream": {}}}})
def blob(ref: str = Path(max_length=71, description="sha256:<64 hex>"),
         node: str = Query(max_length=1000, description="a message whose content names it"),
         me: Door = Depends(door)) -> Response:
    """The bytes of a blob a message holds, with its media type."""
    data, mime = me.nodes.blob(node, ref)
    inline = mime in INLINE
    headers = {"Cache-Control": "private, max-age=86400, immutable",
               "X-Content-Type-Options": "nosniff"}
    if not inline:
        headers["Content-Disposition"] = "attachment"
    return Response(data, media_type=mime if inline else "application/octet-stream",
                    headers=headers)
