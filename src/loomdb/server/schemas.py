"""Request and response bodies of the HTTP API (the CLI's `--json` shapes).

Requests refuse unknown fields, so a typo is a 422 naming the field rather than a
silently ignored option. Responses are declared so /openapi.json says what comes back.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Blocks = list[dict[str, Any]]
#: the longest grace a collection takes, in seconds (ten years: any longer keeps all)
GRACE_MAX = 10 * 365 * 24 * 3600


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


# -- requests ---------------------------------------------------------------------------
class NewTree(Strict):
    text: str
    system: str | None = None
    session: str | None = None
    mode: Literal["dialogue", "buffer"] = "dialogue"
    title: str | None = None
    template: str | None = Field(None, description="Start from this template of yours.")
    system_piece: str | None = Field(None, description="A piece of yours as the system "
                                     "context: NAME (its newest version) or NAME@VERSION.")


class PieceIn(Strict):
    name: str
    text: str
    kind: Literal["piece", "template"] = "piece"


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


class NewDocument(Strict):
    name: str
    text: str | None = None
    content: Blocks | None = None
    message: str = ""


class CommitIn(Strict):
    text: str | None = None
    content: Blocks | None = None
    message: str = ""
    branch: str | None = Field(None, description="Default: the current branch.")


class BranchIn(Strict):
    name: str
    at: str | None = Field(None, description="A revision or branch (default: current).")


class CheckoutIn(Strict):
    target: str = Field(description="A branch or a revision.")


class MergeIn(Strict):
    branch: str
    message: str = ""


class FromMessageIn(Strict):
    headish: str
    name: str
    message: str = ""


class NewCollection(Strict):
    name: str
    kind: Literal["list", "tree", "tagged", "table"] = "list"


class ItemIn(Strict):
    entity: str = Field(description="Any address: node, tree:ID, doc:NAME[@REV], "
                        "coll:NAME[/ITEM], sha256:...")
    parent: str | None = Field(None, description="Nest under this item (a tree).")
    after: str | None = Field(None, description="Place right after this item.")
    tags: list[str] = Field(default_factory=list)
    fields: dict[str, str] = Field(default_factory=dict)


class MoveIn(Strict):
    parent: str | None = None
    after: str | None = None
    first: bool = False


class TagsIn(Strict):
    tags: list[str]
    remove: bool = False


class LinkIn(Strict):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    from_: str = Field(alias="from")
    to: str
    type: str = Field("link", description="Between nodes: annotation or link; else any "
                      "name (cites, source...).")


class GcIn(Strict):
    dry_run: bool = False
    grace: float | None = Field(default=None, ge=0, le=GRACE_MAX, allow_inf_nan=False,
                                description="Seconds: anything newer is kept (default "
                                "an hour).")


# -- responses --------------------------------------------------------------------------
class Health(BaseModel):
    ok: bool


class MeOut(BaseModel):
    user: str | None
    users: bool


class ServedModel(BaseModel):
    name: str
    provider: str
    model: str


class ModelsOut(BaseModel):
    models: list[ServedModel]
    default: str | None


class TreePatch(Strict):
    title: str | None = Field(None, max_length=1000)
    archived: bool | None = None


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
    #: what the import says although nothing failed (a file the upload named, not read)
    warnings: list[Any] = []


class SpanOut(BaseModel):
    start: int
    end: int
    author: str
    node: str | None
    model: bool | None = None
    kind: Literal["user", "model", "edit", "draft"] | None = None


class BufferOut(BaseModel):
    text: str
    spans: list[SpanOut] | None = None
    draft: str | None = None


class VerifyOut(BaseModel):
    ok: bool
    checked: int
    broken: list[dict[str, Any]]


class DocumentRow(BaseModel):
    document: str
    branch: str | None
    revision: str


class DocumentsOut(BaseModel):
    documents: list[DocumentRow]


class DocumentCreated(BaseModel):
    document: str
    revision: str


class RevisionOut(BaseModel):
    revision: str


class RevisionLine(BaseModel):
    id: str
    message: str
    parents: list[str]
    created_at: str


class DocumentLog(BaseModel):
    revisions: list[RevisionLine]


class DocumentAt(BaseModel):
    document: str
    branch: str | None
    revision: str


class DocumentGraph(BaseModel):
    document: str
    branch: str | None = Field(description="The current branch (null when a revision "
                               "is checked out).")
    revision: str = Field(description="The current revision.")
    branches: dict[str, str] = Field(description="Each branch's head revision.")
    revisions: list[RevisionLine] = Field(description="Every revision, oldest first.")


class MergeOut(BaseModel):
    revision: str
    parents: list[str]


class DocumentShown(BaseModel):
    document: str
    revision: str
    text: str | None = Field(None, description="A text document's text.")
    content: Blocks | None = Field(None, description="Any other document's blocks.")


class DiffOut(BaseModel):
    diff: str


class FromMessageOut(BaseModel):
    document: str
    revision: str
    content_id: str


class CollectionOut(BaseModel):
    collection: str
    kind: str


class CollectionsOut(BaseModel):
    collections: list[CollectionOut]


class ItemId(BaseModel):
    item: str


class ItemMoved(BaseModel):
    item: str
    parent: str | None


class ItemTags(BaseModel):
    item: str
    tags: list[str]


class ItemFields(BaseModel):
    item: str
    fields: dict[str, str]


class Removed(BaseModel):
    removed: list[str]


class ItemRow(BaseModel):
    id: str
    entity: str
    title: str
    parent: str | None
    depth: int
    tags: list[str]
    fields: dict[str, str]
    dangling: bool | None = None


class CollectionShown(BaseModel):
    collection: str
    kind: str
    items: list[ItemRow] | None = None
    groups: dict[str, list[ItemRow]] | None = None


class EdgeSource(BaseModel):
    node: str
    role: str


class EdgeOut(BaseModel):
    """A link between two nodes: the core's edge."""

    id: str
    tree: str
    type: str
    target: str
    sources: list[EdgeSource]
    created_at: str


class ReferenceOut(BaseModel):
    """A link with any other end: a reference of the references area."""

    model_config = ConfigDict(populate_by_name=True)
    id: str
    from_: str = Field(alias="from")
    to: str
    type: str
    created_at: str


LinkOut = EdgeOut | ReferenceOut


class Backlink(BaseModel):
    model_config = ConfigDict(populate_by_name=True)
    from_: str = Field(alias="from")
    to: str
    type: str
    dangling: bool | None = None


class LinksOut(BaseModel):
    links: list[Backlink]


class Hit(BaseModel):
    entity: str
    kind: str
    tree: str | None = None
    #: plain text; `marks` are its matches, [start, end] in characters (code points)
    snippet: str
    marks: list[list[int]] = []
    score: float
    #: a message hit: its role and when it was written
    role: str | None = None
    created_at: str | None = None
    #: a message hit: off its tree's main line (a fork, or a later version)
    side: bool | None = None
    #: a message hit: the latest message of the branches through it (itself if none)
    leaf: str | None = None


class SearchOut(BaseModel):
    hits: list[Hit]
    #: semantic and hybrid: entries not embedded yet (not ranked by meaning)
    pending: int | None = None


class SearchStatusOut(BaseModel):
    #: entries with a vector
    embedded: int
    #: entries in the search index (and messages waiting to enter it)
    total: int
    #: entries not embedded yet (the embedding worker's backlog)
    pending: int


class GcOut(BaseModel):
    contents: int
    blobs: int
    bytes: int
    #: the trees purged from the trash (their time there over, no hold)
    purged: list[dict[str, Any]] = []


class ErrorBody(BaseModel):
    type: str
    message: str


class ErrorOut(BaseModel):
    error: ErrorBody


class Conflict(BaseModel):
    base: str
    ours: str
    theirs: str


class ConflictBody(ErrorBody):
    conflicts: list[Conflict]


class ConflictOut(BaseModel):
    """A merge conflict: the error with the conflicting regions."""

    error: ConflictBody


#: the error responses every endpoint may give, for /openapi.json
ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorOut} for code in (400, 401, 404, 409, 422)
}
