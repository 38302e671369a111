"""What a tool call returned.

Its own module, below both `tools` (which runs calls) and `mcp_client` (which runs
the calls an MCP server answers), so neither imports the other for it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Result:
    """What a tool call returned: text, and whether it is an error."""

    text: str
    is_error: bool = False
    #: the child tree, when the call spawned a subagent
    spawned: str | None = None

    def block(self, call_id: str, name: str) -> dict[str, Any]:
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": call_id, "name": name,
                                 "content": [{"type": "text", "text": self.text}]}
        if self.is_error:
            block["is_error"] = True
        return block
