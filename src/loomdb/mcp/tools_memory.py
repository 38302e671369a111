"""The memory an agent keeps in loomdb over MCP: documents, collections, references,
bookmarks and tags, edits, search, pending approvals; resources for documents.

Each tool is one call into the area's service plus serialization, in the shape the
CLI's `--json` and the HTTP API give (a node through `loomdb.shapes`). The MCP server
acts for the local operator, as the CLI does: it sees the whole store.

Approvals are listed, never decided here: a tool call that waits for a person must
not be approved by the agent whose call it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..shapes import node_json
from .answers import resource, tool

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from ..api import Loom


def show(loom: Loom, headish: str) -> dict[str, Any]:
    """One node in full, with its overlay (as `loomdb show --json`)."""
    node = loom.node(headish)
    return node_json(node, loom.meta(node.id))


def memory_tools(loom: Loom) -> dict[str, Callable[..., Any]]:
    """The tools by name, bound to one open store."""
    from ..agents import approvals as A
    from ..collections import service as K
    from ..documents import service as D
    from ..references import service as R
    from ..search import service as S

    def show_tool(headish: str) -> Any:
        """One node in full (content, ids, provenance) with its bookmark, tags and flags."""
        return show(loom, headish)

    def edit_tool(headish: str, text: str, author: str | None = None) -> Any:
        """Write a new version of a node; what follows it stays attached (a session
        named as `headish` uses the new version)."""
        return {"node": loom.edit(headish, text, author=author).id}

    def bookmark_tool(headish: str, label: str) -> Any:
        """Put a fixed, named label on a node; the label works as a headish."""
        return loom.bookmark(headish, label).to_json()

    def tag_tool(headish: str, tags: list[str], remove: bool = False) -> Any:
        """Add (or `remove`) tags on a node; answers its overlay."""
        return loom.tag(headish, *tags, remove=remove).to_json()

    def search_tool(query: str, mode: str = "text", tree: str | None = None,
                    role: str | None = None, author: str | None = None,
                    tag: str | None = None, kind: str | None = None,
                    limit: int = 20) -> Any:
        """Messages, document revisions and collection items, best first: by their
        words (`text`), their meaning (`semantic`) or both (`hybrid`); filter by tree,
        role, author, tag, kind (message, document, item)."""
        return {"hits": S.search(loom, S.Query(query, tree, role, author, tag, kind, limit,
                                               mode))}

    def doc_new_tool(name: str, text: str, message: str = "") -> Any:
        """Create a versioned document (its first revision)."""
        doc, rev = D.new(loom, name, text, message)
        return {"document": doc.name, "revision": rev.id}

    def doc_commit_tool(name: str, text: str, message: str = "",
                        branch: str | None = None) -> Any:
        """A new revision of a document (on its current branch, or `branch`)."""
        return {"revision": D.commit(loom, name, text, message, branch).id}

    def doc_show_tool(spec: str) -> Any:
        """A document's text: `NAME`, `NAME@REVISION` or `NAME@BRANCH`."""
        return D.show(loom, spec).to_json()

    def doc_log_tool(name: str, branch: str | None = None) -> Any:
        """A document's revisions, newest first."""
        return {"revisions": [r.log_json() for r in D.log(loom, name, branch)]}

    def doc_diff_tool(name: str, rev1: str, rev2: str) -> Any:
        """A unified diff between two revisions (or branches) of a document."""
        return {"diff": D.diff(loom, name, rev1, rev2)}

    def coll_new_tool(name: str, kind: str = "list") -> Any:
        """A collection: `list`, `tree` (items nest), `tagged` or `table`."""
        return K.new(loom, name, kind).to_json()

    def coll_add_tool(name: str, entity: str, parent: str | None = None,
                      after: str | None = None, tags: list[str] | None = None,
                      fields: dict[str, str] | None = None) -> Any:
        """Add an item pointing at any address (node, tree:ID, doc:NAME, coll:NAME,
        sha256:...) to a collection."""
        it = K.add(loom, name, entity, parent=parent, after=after, tags=tags or (),
                   fields=fields)
        return {"item": it.id}

    def coll_show_tool(name: str, tag: str | None = None,
                       where: dict[str, str] | None = None,
                       group_by: str | None = None) -> Any:
        """A collection's items in order, filtered by tag and fields (`where`)."""
        return K.show(loom, name, tag=tag, where=where, group_by=group_by)

    def link_tool(source: str, target: str, type: str = "link") -> Any:
        """Reference `target` from `source` (any two addresses)."""
        return R.link(loom, source, target, type)

    def backlinks_tool(entity: str) -> Any:
        """Everything that references an address (dangling references are marked)."""
        return {"links": R.backlinks(loom, entity)}

    def pending_tool() -> Any:
        """Tool calls waiting for a person's approval, oldest first (decided by a
        person, with `loomdb approve` or `deny`, never by this server)."""
        return {"pending": [p.to_json() for p in A.pending(loom)]}

    return {
        "show": show_tool, "edit": edit_tool, "bookmark": bookmark_tool, "tag": tag_tool,
        "search": search_tool, "doc_new": doc_new_tool, "doc_commit": doc_commit_tool,
        "doc_show": doc_show_tool, "doc_log": doc_log_tool, "doc_diff": doc_diff_tool,
        "coll_new": coll_new_tool, "coll_add": coll_add_tool, "coll_show": coll_show_tool,
        "link": link_tool, "backlinks": backlinks_tool, "pending": pending_tool,
    }


def register(server: MCPServer, loom: Loom) -> None:
    """Add the memory tools and the document resources to an MCP server."""
    from ..documents import service as D

    for name, fn in memory_tools(loom).items():
        server.add_tool(tool(fn), name=name, description=fn.__doc__, structured_output=False)

    @server.resource("loomdb://documents", mime_type="application/json")
    @resource
    def documents_resource() -> Any:
        return D.documents(loom)

    @server.resource("loomdb://document/{name}", mime_type="application/json")
    @resource
    def document_resource(name: str) -> Any:
        return D.show(loom, name).to_json()


__all__ = ["memory_tools", "register", "show"]
