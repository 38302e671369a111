"""Agents on the loom (seed 004, seed 000): identities and personas with tool
permissions, the tool loop with human approval, routing, subagents and supervised
agent-to-agent messages.

Everything here lives in its own storage area (`AGENTS`, tables `agent*`), reaches the
core only through the Loom's public operations, and refers to nodes, trees and sessions
by id or name. An area write joins the core write it accompanies in one transaction.
"""

from __future__ import annotations

from ..store.areas import Area

AGENTS = Area("agents", "loomdb.agents", hooks="loomdb.agents.hooks:HOOKS")

__all__ = ["AGENTS"]
