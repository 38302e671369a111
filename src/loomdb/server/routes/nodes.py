"""Nodes: read one and its relatives, append, edit, overlay, context, and the thread the
web page draws. `{headish}` is URL-encoded (ref names may hold '/', '~' and '^'). Each
route is one call to the caller's `Door` (`loomdb.front.nodes`) and its serialization."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Query

from ...errors import InvalidInput
from ...front import Door
from ...front.nodes import RELATIONS
from ...front.threadpage import MAX_PAGE, PAGE
from ..render import blocks_html
from ..schemas import ERRORS, AppendIn, EditIn, MetaOut, NodeId, NodeIds, NodeOut, OverlayIn
from ..state import door

router = APIRouter(prefix="/api/nodes", responses=ERRORS, tags=["nodes"])

Format = Literal["normalized", "openai", "anthropic", "completion"]


def content_of(text: str | None, content: list[dict[str, Any]] | None) -> Any:
    """A body's `text` or `content` (blocks): exactly one of them."""
    if (text is None) == (content is None):
        raise InvalidInput("body", "give exactly one of text, content")
    return text if text is not None else content


@router.post("/{headish:path}/append", response_model=NodeId, status_code=201)
def append(headish: str, body: AppendIn, me: Door = Depends(door)) -> dict[str, str]:
    """Add a message after `headish`; a session named as `headish` moves to it. With
    `expect` (a headish), a session that is no longer there is a 409."""
    node = me.nodes.append(headish, content_of(body.text, body.content), role=body.role,
                           options=body.options, expect=body.expect)
    return {"node": node.id}


@router.post("/{headish:path}/edit", response_model=NodeId, status_code=201)
def edit(headish: str, body: EditIn, me: Door = Depends(door)) -> dict[str, str]:
    """A new version of the node; what follows it stays attached. Through a session or
    view (`main~2`), that ref selects the new version."""
    return {"node": me.nodes.edit(headish, content_of(body.text, body.content)).id}


@router.post("/{headish:path}/overlay", response_model=MetaOut)
def overlay(headish: str, body: OverlayIn, me: Door = Depends(door)) -> dict[str, Any]:
    """Bookmark, tag, exclude or prune a node, in one transaction."""
    return dict(me.nodes.overlay(headish, bookmark=body.bookmark, tags=body.tags,
                                 excluded=body.excluded, pruned=body.pruned).to_json())


@router.get("/{headish:path}/context")
def context(headish: str, format: Format = "normalized",
            budget: int | None = Query(None, ge=1),
            strategy: Literal["truncate-middle", "rolling-window", "stop"] = "truncate-middle",
            model: str | None = None, me: Door = Depends(door)) -> dict[str, Any]:
    """The context window at `headish`, normalized or as a provider's request body."""
    return me.nodes.context(headish, format=format, model=model, budget=budget,
                            strategy=strategy)


@router.get("/{headish:path}/thread", tags=["page"])
def thread(headish: str,
           before: str | None = Query(None, max_length=1000,
                                      description="a message on the path: the page ends "
                                      "just before it (none: at the head)"),
           limit: int = Query(PAGE, ge=1, le=MAX_PAGE, description="messages in the page"),
           me: Door = Depends(door)) -> dict[str, Any]:
    """The path to `headish` as the web page draws it, a page at a time from the end:
    each message with its rendered markdown, its overlay, the branches beside it and
    the versions of its slot; `has_more` when older messages are left (ask again with
    `before` set to the first message of the page)."""
    out = me.nodes.thread(headish, before=before, limit=limit)
    for message in out["messages"]:
        message["html"] = blocks_html(message["content"])
    return out


def _relation(rel: str) -> None:
    """One route per relative (fixed words, so a ref named `a/b` still reaches `show`)."""

    def related(headish: str, me: Door = Depends(door)) -> dict[str, list[str]]:
        return {"nodes": me.nodes.related(headish, rel)}

    related.__name__ = f"node_{rel}"
    related.__doc__ = DESCRIPTIONS[rel]
    router.add_api_route(f"/{{headish:path}}/{rel}", related, methods=["GET"],
                         response_model=NodeIds, name=f"node_{rel}")


DESCRIPTIONS = {
    "path": "Node ids from the root to `headish`, one version per slot.",
    "children": "The continuations of the node (of any of its versions).",
    "siblings": "The other branches under the same parent.",
    "leaves": "The leaves of the node's tree (pruned branches left out).",
    "versions": "Every version of the node's slot, the original first.",
}
for _rel in RELATIONS:
    _relation(_rel)


@router.get("/{headish:path}/logprobs")
def node_logprobs(headish: str, me: Door = Depends(door)) -> dict[str, Any]:
    """Each generated token of the node: its probability and top alternatives (as
    `loomdb show NODE --logprobs --json`), checked against the chain first."""
    node, tokens = me.nodes.logprobs(headish)
    return {"node": node.id, "tokens": tokens}


@router.get("/{headish:path}", response_model=NodeOut)
def show(headish: str, me: Door = Depends(door)) -> dict[str, Any]:
    """One node in full, with its overlay (as `loomdb show --json`)."""
    return me.nodes.show(headish)
