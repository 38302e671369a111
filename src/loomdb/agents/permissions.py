"""Who may run which tool: a persona's allow / deny / approve lists (seed 004).

    deny   -> never runs (deny wins over allow)
    allow  -> empty: every tool; else only the tools listed
    approve-> allowed, but waits for a human yes before it runs

`*` in a list matches every tool. With no persona every tool runs without asking.
"""

from __future__ import annotations

from typing import Literal

from .identities import Persona

Decision = Literal["run", "deny", "approve"]


def _listed(tool: str, names: tuple[str, ...]) -> bool:
    return tool in names or "*" in names


def decide(persona: Persona | None, tool: str) -> Decision:
    """What happens when the model calls `tool` under `persona`."""
    if persona is None:
        return "run"
    if _listed(tool, persona.deny):
        return "deny"
    if persona.allow and not _listed(tool, persona.allow):
        return "deny"
    if _listed(tool, persona.approve):
        return "approve"
    return "run"
