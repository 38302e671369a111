"""Request and response bodies of the HTTP API (the CLI's `--json` shapes).

Requests refuse unknown fields, so a typo is a 422 naming the field rather than a
silently ignored option. Responses are declared so /openapi.json says what comes back.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Blocks = list[dict[str, Any]]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# -- requests ---------------------------------------------------------------------------
class NewTree(Strict):
    text: str
    system: str | None = None
    session: str | None = None
    mode: Literal["dialogue", "buffer"] = "dialogue"
    title: str | None = None


class AppendIn(Strict):
    role: str
    text: str | None = None
    content: Blocks | None = None
    options: dict[str, Any] | None = None
    expect: str | None = Field(None, description="Fail with 409 unless the session is here.")


class EditIn(Strict):
    text: str | None = None
    content: Blocks | None = None


class GenerateIn(Strict):
    n: int = Field(1, ge=1, le=64)
    models: list[str] = Field(default_factory=list)
    max_tokens: int | None = Field(None, ge=1, le=32768)
    stream: bool = False


class RefIn(Strict):
    name: str
    kind: Literal["session", "view", "bookmark"]
    at: str


class OverlayIn(Strict):
    bookmark: str | None = Field(None, description="Put this label on the node.")
    tags: list[str] | None = Field(None, description="The node's tags become exactly these.")
    excluded: bool | None = None
    pruned: bool | None = None


class BufferIn(Strict):
    append: str | None = None
    set: str | None = None


# -- responses --------------------------------------------------------------------------
class Health(BaseModel):
    ok: bool


class TreeOut(BaseModel):
    id: str
    title: str
    mode: str
    nodes: int
    root: str | None
    system: str | None
    options: dict[str, Any]
    created_at: str
    updated_at: str
    archived_at: str | None
    lineage: dict[str, Any] | None


class TreesOut(BaseModel):
    trees: list[TreeOut]


class Created(BaseModel):
    tree: str
    node: str


class MetaOut(BaseModel):
    bookmarked: bool
    label: str | None
    pruned: bool
    excluded: bool
    tags: list[str]


class NodeOut(BaseModel):
    id: str
    tree: str
    parent: str | None
    slot: str
    depth: int
    role: str
    kind: str
    author: str
    source: str
    content_id: str
    content: Blocks
    created_at: str
    chain_hash: str
    edited_from: str | None
    options: dict[str, Any] | None
    cache: bool
    tokens: int
    total_tokens: int
    provenance: dict[str, Any] | None
    origin: dict[str, Any] | None
    sources: list[dict[str, Any]]
    selections: dict[str, str]
    meta: MetaOut


class NodeIds(BaseModel):
    nodes: list[str]


class NodeId(BaseModel):
    node: str


class RefOut(BaseModel):
    name: str
    kind: str
    tree: str
    node: str
    selections: dict[str, str]
    origin: dict[str, Any] | None
    created_at: str
    updated_at: str


class RefsOut(BaseModel):
    refs: list[RefOut]


class MoveOut(BaseModel):
    seq: int
    ref: str
    at: str
    from_: str | None = Field(alias="from")
    to: str | None
    by: str
    reason: str


class RefLog(BaseModel):
    name: str
    moves: list[MoveOut]


class Deleted(BaseModel):
    deleted: str


class ImportOut(BaseModel):
    trees: list[str]
    nodes: int
    blobs: int
    skipped: int
    errors: list[Any]


class SpanOut(BaseModel):
    start: int
    end: int
    author: str
    node: str | None
    model: bool | None = None


class BufferOut(BaseModel):
    text: str
    spans: list[SpanOut] | None = None
    draft: str | None = None


class VerifyOut(BaseModel):
    ok: bool
    checked: int
    broken: list[dict[str, Any]]


class ErrorBody(BaseModel):
    type: str
    message: str


class ErrorOut(BaseModel):
    error: ErrorBody


#: the error responses every endpoint may give, for /openapi.json
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 404, 409, 422)
}
