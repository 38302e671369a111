"""Prompt pieces over MCP: `piece_add`, `piece_list`, `piece_log`, `piece_show`,
`piece_used_by`, and `new_thread` (a thread from a template or with a system piece).

Each tool is one call to the operator's `Door.pieces` (`loomdb.front.pieces`; a new
thread: `Door.trees.new`) in the shape of the CLI's `--json` and the HTTP API."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .catalog import ADDS, ADDS_ONCE, READS, Tool

if TYPE_CHECKING:
    from ..front import Door


def piece_tools(me: Callable[[], Door]) -> dict[str, Tool]:
    """The tools by name, acting through the operator's door (opened by `me()`)."""

    def piece_add_tool(name: str, text: str, template: bool = False) -> dict[str, Any]:
        """Add a version of a prompt piece (made when new): a text many threads name
        instead of copying; with template true, a JSON object of system, system_piece,
        pieces, options, model and prompt. The same text again adds nothing."""
        return me().pieces.add(name, text, kind="template" if template else "piece")

    def piece_list_tool() -> dict[str, Any]:
        """Every piece and template, with its newest version."""
        return {"pieces": me().pieces.list()}

    def piece_log_tool(name: str) -> dict[str, Any]:
        """A piece's versions (number, hash), oldest first."""
        return {"name": name, "versions": me().pieces.log(name)}

    def piece_show_tool(spec: str) -> dict[str, Any]:
        """A version of a piece and its text: NAME, NAME@N or NAME@HASH-PREFIX."""
        return me().pieces.show(spec)

    def piece_used_by_tool(name: str) -> dict[str, Any]:
        """The messages naming a piece (a block, or their thread's system piece)."""
        return {"name": name, "used_by": me().pieces.used_by(name)}

    def new_thread_tool(text: str, template: str | None = None,
                        system_piece: str | None = None, session: str | None = None,
                        title: str | None = None) -> dict[str, Any]:
        """Start a thread with a first message, from a template (its pieces, system,
        options and model) and/or with a piece as its system context."""
        tree, node = me().trees.new(text, template=template, system_piece=system_piece,
                                    session=session, title=title)
        return {"tree": tree.id, "node": node.id}

    return {
        "piece_add": Tool(piece_add_tool, ADDS_ONCE), "piece_list": Tool(piece_list_tool, READS),
        "piece_log": Tool(piece_log_tool, READS), "piece_show": Tool(piece_show_tool, READS),
        "piece_used_by": Tool(piece_used_by_tool, READS),
        "new_thread": Tool(new_thread_tool, ADDS),
    }
