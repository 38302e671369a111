"""Who may run which tool: a persona's allow / deny / approve lists (seed 004).

    deny   -> never runs (deny wins over allow)
    allow  -> empty: every tool; else only the tools listed
    approve-> allowed, but waits for a human yes before it runs

A tool is keyed by where it comes from and its name: `builtin:spawn_subagent`,
`tool:list_files` (tools.toml), `mcp:loom/search` (tool `search` of MCP server `loom`).
A rule is a pattern over keys, compared without case, `*` matching any run of
characters (`mcp:loom/*`, `tool:*`); `mcp:loom` alone means every tool of server
`loom`. A rule without a `:` is a bare tool name, matched against the name whatever
the source (`spawn_subagent`, `search`, and `*` for everything), as personas said it
before tools had sources. With no persona every tool runs without asking.

`may_start` applies the rules to a server before it is started: a server none of whose
tools could be allowed (`--deny '*'`, `--deny mcp:loom`, an allow list naming only
other sources or servers) is never started, not even to list its tools.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Literal

from .identities import Persona

Decision = Literal["run", "deny", "approve"]


def _pattern(rule: str) -> str:
    rule = rule.strip().lower()
    source, colon, rest = rule.partition(":")
    if colon and source == "mcp" and "/" not in rest:
        return f"{rule}/*"
    return rule


def _name(key: str) -> str:
    """The tool's own name in a key (`mcp:loom/search` -> `search`)."""
    source, colon, rest = key.partition(":")
    if not colon:
        return key
    return rest.partition("/")[2] if source == "mcp" else rest


def matches(rule: str, key: str) -> bool:
    """Whether a persona's rule names the tool with this key."""
    pattern, key = _pattern(rule), key.lower()
    return fnmatchcase(key if ":" in pattern else _name(key), pattern)


def _listed(key: str, rules: tuple[str, ...]) -> bool:
    return any(matches(r, key) for r in rules)


def decide(persona: Persona | None, key: str) -> Decision:
    """What happens when the model calls the tool keyed `key` under `persona`."""
    if persona is None:
        return "run"
    if _listed(key, persona.deny):
        return "deny"
    if persona.allow and not _listed(key, persona.allow):
        return "deny"
    if _listed(key, persona.approve):
        return "approve"
    return "run"


def _covers(rule: str, server: str) -> bool:
    """Whether `rule` matches every tool server `server` could list: a pattern ending in
    `*` that already matches the key's prefix matches every name after it."""
    pattern = _pattern(rule)
    if ":" not in pattern:
        return pattern.endswith("*") and fnmatchcase("", pattern)
    return pattern.endswith("*") and fnmatchcase(f"mcp:{server.lower()}/", pattern)


def _may_match(rule: str, server: str) -> bool:
    """Whether `rule` could match some tool of `server` (True when unsure)."""
    pattern = _pattern(rule)
    source, colon, rest = pattern.partition(":")
    if not colon:
        return True
    if not fnmatchcase("mcp", source):
        return False
    head, slash, _ = rest.partition("/")
    return not slash or fnmatchcase(server.lower(), head)


def may_start(persona: Persona | None, server: str) -> bool:
    """Whether any tool of MCP server `server` could be offered under `persona`."""
    if persona is None:
        return True
    if any(_covers(r, server) for r in persona.deny):
        return False
    return not persona.allow or any(_may_match(r, server) for r in persona.allow)
