"""Nodes: read one and its relatives, append, edit, overlay, context, and the thread the
web page draws. `{headish}` is URL-encoded (ref names may hold '/', '~' and '^')."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Depends, Query, Request

from ... import shapes
from ...api import Loom
from ...errors import InvalidInput
from ...users import Access
from ..render import blocks_html
from ..schemas import ERRORS, AppendIn, EditIn, MetaOut, NodeId, NodeIds, NodeOut, OverlayIn
from ..state import access, state_of

router = APIRouter(prefix="/api/nodes", responses=ERRORS, tags=["nodes"])

Format = Literal["normalized", "openai", "anthropic", "completion"]


def node_json(lm: Loom, node_id: str) -> dict[str, Any]:
    """A node as `show --json` prints it: the node with its overlay."""
    n = lm.node(node_id)
    return shapes.node_json(n, lm.meta(n.id))


def content_of(text: str | None, content: list[dict[str, Any]] | None) -> Any:
    if (text is None) == (content is None):
        raise InvalidInput("body", "give exactly one of text, content")
    return text if text is not None else content


@router.post("/{headish:path}/append", response_model=NodeId, status_code=201)
def append(headish: str, body: AppendIn, request: Request,
           who: Access = Depends(access)) -> dict[str, str]:
    """Add a message after `headish`; a session named as `headish` moves to it. With
    `expect` (a headish), a session that is no longer there is a 409."""
    with state_of(request).using() as lm:
        at = who.at(headish)  # resolved once (see Access.at)
        expect = who.position(body.expect).node if body.expect is not None else None
        node = lm.append(at, content_of(body.text, body.content), role=body.role,
                         options=body.options, expect=expect)
    return {"node": node.id}


@router.post("/{headish:path}/edit", response_model=NodeId, status_code=201)
def edit(headish: str, body: EditIn, request: Request,
         who: Access = Depends(access)) -> dict[str, str]:
    """A new version of the node; what follows it stays attached. Through a session or
    view (`main~2`), that ref selects the new version."""
    with state_of(request).using() as lm:
        pos = who.position(headish)
        node = lm.edit(pos, content_of(body.text, body.content))
    return {"node": node.id}


@router.post("/{headish:path}/overlay", response_model=MetaOut)
def overlay(headish: str, body: OverlayIn, request: Request,
            who: Access = Depends(access)) -> dict[str, Any]:
    """Bookmark, tag, exclude or prune a node, in one transaction."""
    with state_of(request).using() as lm, who.atomic():
        pos = who.position(headish)
        if body.bookmark is not None:
            lm.bookmark(pos, body.bookmark)
        if body.tags is not None:
            have = set(lm.meta(pos).tags)
            if gone := sorted(have - set(body.tags)):
                lm.tag(pos, *gone, remove=True)
            if new := [t for t in body.tags if t not in have]:
                lm.tag(pos, *new)
        if body.excluded is not None:
            lm.exclude(pos, on=body.excluded)
        if body.pruned is not None:
            lm.prune(pos, on=body.pruned)
        return dict(lm.meta(pos).to_json())


@router.get("/{headish:path}/context")
def context(headish: str, request: Request, format: Format = "normalized",
            budget: int | None = Query(None, ge=1),
            strategy: Literal["truncate-middle", "rolling-window", "stop"] = "truncate-middle",
            model: str | None = None, who: Access = Depends(access)) -> dict[str, Any]:
    """The context window at `headish`, normalized or as a provider's request body."""
    state = state_of(request)
    with state.using() as lm:
        return lm.request(who.position(headish), format=format, model=model, budget=budget,
                          strategy=strategy, config=state.config, environ=state.environ)


@router.get("/{headish:path}/thread", tags=["page"])
def thread(headish: str, request: Request, who: Access = Depends(access)) -> dict[str, Any]:
    """The path to `headish` as the web page draws it: each message with its rendered
    markdown, its overlay, the branches beside it and the versions of its slot."""
    with state_of(request).using() as lm:
        pos = who.position(headish)
        nodes = lm.nodes(lm.path(pos))
        metas = {n.id: lm.meta(n.id).to_json() for n in nodes}
        out = []
        for n in nodes:
            branches = [n.slot] + lm.siblings(n.id) if n.parent else [n.slot]
            out.append({**n.to_json(), "meta": metas[n.id], "html": blocks_html(n.content),
                        "branches": sorted(branches), "versions": lm.versions(n.id),
                        "has_logprobs": bool((n.provenance or {}).get("logprobs"))})
        ref = pos.ref.to_json() if pos.ref else None
        tree = who.tree(pos.tree).to_json()
    return {"head": pos.node, "tree": tree, "ref": ref, "messages": out}


def _related(lm: Loom, pos: Any, rel: str) -> list[str]:
    if rel == "path":
        return lm.path(pos)
    if rel == "children":
        return lm.children(pos)
    if rel == "siblings":
        return lm.siblings(pos)
    if rel == "leaves":
        return lm.leaves(pos.tree)
    return lm.versions(pos)


def _relation(rel: str) -> None:
    """One route per relative (fixed words, so a ref named `a/b` still reaches `show`)."""

    def related(headish: str, request: Request,
                who: Access = Depends(access)) -> dict[str, list[str]]:
        with state_of(request).using() as lm:
            return {"nodes": _related(lm, who.position(headish), rel)}

    related.__name__ = f"node_{rel}"
    related.__doc__ = RELATIONS[rel]
    router.add_api_route(f"/{{headish:path}}/{rel}", related, methods=["GET"],
                         response_model=NodeIds, name=f"node_{rel}")


RELATIONS = {
    "path": "Node ids from the root to `headish`, one version per slot.",
    "children": "The continuations of the node (of any of its versions).",
    "siblings": "The other branches under the same parent.",
    "leaves": "The leaves of the node's tree (pruned branches left out).",
    "versions": "Every version of the node's slot, the original first.",
}
for _rel in RELATIONS:
    _relation(_rel)


@router.get("/{headish:path}/logprobs")
def node_logprobs(headish: str, request: Request,
                  who: Access = Depends(access)) -> dict[str, Any]:
    """Each generated token of the node: its probability and top alternatives (as
    `loomdb show NODE --logprobs --json`), checked against the chain first."""
    from ...logprobs import of_node, rows

    with state_of(request).using() as lm:
        node = lm.node(who.position(headish).node)
        return {"node": node.id, "tokens": rows(of_node(lm, node))}


@router.get("/{headish:path}", response_model=NodeOut)
def show(headish: str, request: Request, who: Access = Depends(access)) -> dict[str, Any]:
    """One node in full, with its overlay (as `loomdb show --json`)."""
    with state_of(request).using() as lm:
        return node_json(lm, who.position(headish).node)
