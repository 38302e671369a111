"""The agents area's hooks (`loomdb.hooks`): its part of a forget. Tool inputs,
supervised messages and spawn tasks copy a message's text; they are deleted with
deleted nodes and erased for redacted ones, and a tree deleted whole takes the rows
about it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ..hooks import AreaHooks
from . import AGENTS

if TYPE_CHECKING:
    from ..loom import Loom

#: a redacted tool input, as the area keeps JSON
_REDACTED_JSON = '{"redacted":true}'


class AgentHooks(AreaHooks):
    forget_tables = ("agent_tool_calls", "agent_messages", "agent_spawns")

    def forget_nodes(self, loom: Loom, ids: Sequence[str], memo_trees: Sequence[str],
                     redacted: bool) -> None:
        with loom.unit(AGENTS) as db:
            for cond, args in db.where_in("node", ids):
                if redacted:
                    db.execute(f"UPDATE agent_tool_calls SET input = ? WHERE {cond}",
                               [_REDACTED_JSON, *args])
                    db.execute(f"UPDATE agent_messages SET text = ?, original = ? WHERE {cond}",
                               ["[redacted]", "[redacted]", *args])
                else:
                    db.execute(f"DELETE FROM agent_tool_calls WHERE {cond}", args)
                    db.execute(f"DELETE FROM agent_messages WHERE {cond}", args)
            if redacted:
                return
            for column, table in (("result_node", "agent_tool_calls"),
                                  ("from_node", "agent_messages"),
                                  ("parent_node", "agent_spawns"),
                                  ("summary_node", "agent_spawns")):
                for cond, args in db.where_in(column, ids):
                    db.execute(f"DELETE FROM {table} WHERE {cond}", args)

    def forget_tree(self, loom: Loom, tree: str) -> None:
        with loom.unit(AGENTS) as db:
            db.execute("DELETE FROM agent_spawns WHERE child_tree = ? OR parent_tree = ?",
                       (tree, tree))
            db.execute("DELETE FROM agent_tool_calls WHERE tree = ?", (tree,))


HOOKS = AgentHooks()
