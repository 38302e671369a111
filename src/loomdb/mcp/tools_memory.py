"""The memory an agent keeps in loomdb over MCP: documents, collections, references,
bookmarks and tags, edits, search, pending approvals.

Each tool is one call to the operator's `Door` (`loomdb.front`) plus serialization,
in the shape the CLI's `--json` and the HTTP API give (a node through
`loomdb.shapes`), with its annotations (`catalog.Hints`). The MCP server acts for the
local operator, as the CLI does: it sees the whole store.

Approvals are listed, never decided here: a tool call that waits for a person must
not be approved by the agent whose call it is.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .catalog import ADDS, ADDS_ONCE, READS, Hints, Tool

if TYPE_CHECKING:
    from ..front import Door


def memory_tools(me: Callable[[], Door]) -> dict[str, Tool]:
    """The tools by name, acting through the operator's door (opened by `me()`)."""

    def show_tool(headish: str) -> dict[str, Any]:
        """One node in full (content, ids, provenance) with its bookmark, tags and flags."""
        return me().nodes.show(headish)

    def edit_tool(headish: str, text: str, author: str | None = None) -> dict[str, Any]:
        """Write a new version of a node; what follows it stays attached (a session
        named as `headish` uses the new version)."""
        return {"node": me().nodes.edit(headish, text, author=author).id}

    def bookmark_tool(headish: str, label: str) -> dict[str, Any]:
        """Put a fixed, named label on a node; the label works as a headish."""
        return dict(me().nodes.bookmark(headish, label).to_json())

    def tag_tool(headish: str, tags: list[str], remove: bool = False) -> dict[str, Any]:
        """Add (or `remove`) tags on a node; answers its overlay."""
        return me().nodes.tag(headish, *tags, remove=remove).to_json()

    def search_tool(query: str, mode: str = "text", tree: str | None = None,
                    role: str | None = None, author: str | None = None,
                    tag: str | None = None, kind: str | None = None,
                    limit: int = 20) -> dict[str, Any]:
        """Messages, document revisions and collection items, best first: by their
        words (`text`), their meaning (`semantic`) or both (`hybrid`); filter by tree,
        role, author, tag, kind (message, document, item)."""
        return me().search(query, tree=tree, role=role, author=author, tag=tag,
                           kind=kind, limit=limit, mode=mode).answer()

    def doc_new_tool(name: str, text: str, message: str = "") -> dict[str, Any]:
        """Create a versioned document (its first revision)."""
        doc, rev = me().documents.new(name, text, message)
        return {"document": doc.name, "revision": rev.id}

    def doc_commit_tool(name: str, text: str, message: str = "",
                        branch: str | None = None) -> dict[str, Any]:
        """A new revision of a document (on its current branch, or `branch`)."""
        return {"revision": me().documents.commit(name, text, message, branch).id}

    def doc_show_tool(spec: str) -> dict[str, Any]:
        """A document's text: `NAME`, `NAME@REVISION` or `NAME@BRANCH`."""
        return me().documents.show(spec).to_json()

    def doc_log_tool(name: str, branch: str | None = None) -> dict[str, Any]:
        """A document's revisions, newest first."""
        return {"revisions": [r.log_json() for r in me().documents.log(name, branch)]}

    def doc_diff_tool(name: str, rev1: str, rev2: str) -> dict[str, Any]:
        """A unified diff between two revisions (or branches) of a document."""
        return {"diff": me().documents.diff(name, rev1, rev2)}

    def coll_new_tool(name: str, kind: str = "list") -> dict[str, Any]:
        """A collection: `list`, `tree` (items nest), `tagged` or `table`."""
        return me().collections.new(name, kind).to_json()

    def coll_add_tool(name: str, entity: str, parent: str | None = None,
                      after: str | None = None, tags: list[str] | None = None,
                      fields: dict[str, str] | None = None) -> dict[str, Any]:
        """Add an item pointing at any address (node, tree:ID, doc:NAME, coll:NAME,
        sha256:...) to a collection."""
        it = me().collections.add(name, entity, parent=parent, after=after, tags=tags or (),
                                fields=fields)
        return {"item": it.id}

    def coll_show_tool(name: str, tag: str | None = None,
                       where: dict[str, str] | None = None,
                       group_by: str | None = None) -> dict[str, Any]:
        """A collection's items in order, filtered by tag and fields (`where`)."""
        return me().collections.show(name, tag=tag, where=where, group_by=group_by)

    def link_tool(source: str, target: str, type: str = "link") -> dict[str, Any]:
        """Reference `target` from `source` (any two addresses)."""
        return me().references.link(source, target, type)

    def backlinks_tool(entity: str) -> dict[str, Any]:
        """Everything that references an address (dangling references are marked)."""
        return {"links": me().references.backlinks(entity)}

    def pending_tool() -> dict[str, Any]:
        """Tool calls waiting for a person's approval, oldest first (decided by a
        person, with `loomdb approve` or `deny`, never by this server)."""
        return {"pending": [p.to_json() for p in me().agents.pending()]}

    return {
        "show": Tool(show_tool, READS),
        # a new version each time; the old one stays
        "edit": Tool(edit_tool, ADDS),
        # a label is taken once
        "bookmark": Tool(bookmark_tool, ADDS_ONCE),
        # a set of tags: the same call leaves the same set; `remove` loses a tag
        "tag": Tool(tag_tool, Hints(read_only=False, destructive=True, idempotent=True,
                                    open_world=False)),
        "search": Tool(search_tool, READS),
        # a name is taken once; a commit of what is already there is refused
        "doc_new": Tool(doc_new_tool, ADDS_ONCE), "doc_commit": Tool(doc_commit_tool, ADDS_ONCE),
        "doc_show": Tool(doc_show_tool, READS), "doc_log": Tool(doc_log_tool, READS),
        "doc_diff": Tool(doc_diff_tool, READS),
        "coll_new": Tool(coll_new_tool, ADDS_ONCE),
        # each call adds one more item, or one more reference
        "coll_add": Tool(coll_add_tool, ADDS), "coll_show": Tool(coll_show_tool, READS),
        "link": Tool(link_tool, ADDS), "backlinks": Tool(backlinks_tool, READS),
        "pending": Tool(pending_tool, READS),
    }


__all__ = ["memory_tools"]
