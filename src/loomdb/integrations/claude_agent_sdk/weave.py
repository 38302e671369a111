"""A stored session as the tree a Claude Code import makes of the same lines.

After each append the session's lines (and its subagents' lines) are folded by the
Claude Code importer's own folding (`loomdb.interop.claude_code.parse_entries`) and
written by its writer, which derives every id from the session and line ids: what is
already in the tree is found and skipped, so only the new messages are written, and
the tree is the one `loomdb import` of the session's file makes (and finds again). A
subagent's transcript (`subagents/agent-<id>`) is its own tree with the spawn lineage
of the Task call that started it.

A reply still being written is left out until it is whole: Claude Code writes one line
per content block of an API reply, streaming its tool calls between their results, and
the SDK may send a batch in the middle of it. The lines from the first line of the last
reply on are woven once that reply has stopped for another reason than a tool call (its
`stop_reason`: the turn ended), or a prompt follows it; before that a reply half
written would be a message the next batch makes a second version of.

A fork (`fork_session_via_store`: the source's lines copied under fresh uuids, each
naming the line it copies in `forkedFrom`) is not copied: its copied lines are read as
the source's own, so the fork is a session ref in the source's tree at the message it
was cut at (`import/claude-code/fork-<id>`), and what the fork says next is a branch
there, continuing from that message.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ...errors import InvalidInput
from ...interop.claude_code import parse_entries
from ...interop.model import Head, ImportedConversation, ParseError
from ...interop.writer import write_conversation
from ...store.areas import Unit

if TYPE_CHECKING:
    from ...api import Loom

_AGENT = re.compile(r"(?:^|/)agent-([A-Za-z0-9_-]{1,128})$")
_MESSAGES = ("user", "assistant", "system")


def agent_of(subpath: str) -> str | None:
    """The agent id of a subagent transcript's subpath (`subagents/agent-<id>`)."""
    found = _AGENT.search(subpath)
    return found.group(1) if found else None


class Woven:
    """What a weave made: the main tree, each subagent's, and a fork's ref and branches."""

    def __init__(self) -> None:
        self.tree: str | None = None
        self.agents: dict[str, str] = {}
        self.fork_ref: str | None = None
        self.fork_nodes: list[str] = []
        self.problem: str | None = None


def weave(loom: Loom, db: Unit, session_id: str, lines: list[dict[str, Any]],
          agents: dict[str, list[dict[str, Any]]],
          source: tuple[str, list[dict[str, Any]]] | None) -> Woven:
    """Write the session's tree (inside the caller's unit). `source`: (id, lines) of the
    session a fork was cut from, when this session is one held by the store."""
    out = Woven()
    whole = settled(lines)
    agents = {agent: settled(own) for agent, own in agents.items()}
    try:
        if source is not None and forked(lines):
            _fork(loom, session_id, lines, source, out)
        else:
            _session(loom, session_id, whole, agents, out, waiting=len(whole) < len(lines))
    except InvalidInput as exc:
        out.problem = str(exc)  # the lines stay stored as given; the tree waits for more
    return out


def settled(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The lines but a last reply still being written (see the module docstring)."""
    last = next((i for i in range(len(lines) - 1, -1, -1) if _reply(lines[i]) is not None), None)
    if last is None:
        return lines
    if lines[last]["message"].get("stop_reason") not in (None, "tool_use"):
        return lines
    reply = _reply(lines[last])
    first = next(i for i, line in enumerate(lines) if _reply(line) == reply)
    if any(_prompt(line) for line in lines[last + 1:]):
        return lines
    return lines[:first]


def _reply(line: dict[str, Any]) -> str | None:
    """The API reply id of an assistant line."""
    message = line.get("message")
    if line.get("type") != "assistant" or not isinstance(message, dict):
        return None
    mid = message.get("id")
    return mid if isinstance(mid, str) else None


def _prompt(line: dict[str, Any]) -> bool:
    """A user line that is no tool result (the next turn began)."""
    message = line.get("message")
    if line.get("type") != "user" or not isinstance(message, dict):
        return False
    content = message.get("content")
    return isinstance(content, str) or (isinstance(content, list) and not all(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content))


def forked(lines: Sequence[dict[str, Any]]) -> str | None:
    """The session a transcript was forked from (its copied lines name it), or None."""
    for line in lines:
        origin = line.get("forkedFrom")
        if isinstance(origin, dict) and isinstance(origin.get("sessionId"), str):
            return str(origin["sessionId"])
    return None


def _session(loom: Loom, session_id: str, lines: list[dict[str, Any]],
             agents: dict[str, list[dict[str, Any]]], out: Woven, *, waiting: bool) -> None:
    """The session's trees. While its last reply is `waiting` to be whole, a subagent's
    run that no Task call names yet waits too (the call may be in that reply): a tree
    is made with its lineage or not at all."""
    written: dict[tuple[str, str], tuple[str, str]] = {}
    for item in parse_entries(session_id, lines, agents, limits=loom.limits):
        if isinstance(item, ParseError):
            out.problem = f"{item.where}: {item.reason}"
            continue
        if waiting and item.spawn is None and item.source_id != session_id:
            continue
        outcome = write_conversation(loom, item, {}, written)
        if item.source_id == session_id:
            out.tree = outcome.tree
        elif item.source_id.startswith(f"{session_id}/agent-"):
            out.agents[item.source_id.rpartition("/agent-")[2]] = outcome.tree


def _fork(loom: Loom, session_id: str, lines: list[dict[str, Any]],
          source: tuple[str, list[dict[str, Any]]], out: Woven) -> None:
    """The fork's lines read as its source's: copied lines are the source's own, the
    others hang from them; written as the source's conversation with one head. The
    copied lines are whole (a copy is written at once); what the fork said since waits
    for its last reply to be whole, as a session's lines do."""
    source_id, source_lines = source
    copies = {line["uuid"]: line["forkedFrom"]["messageUuid"] for line in lines
              if isinstance(line.get("uuid"), str) and isinstance(line.get("forkedFrom"), dict)
              and isinstance(line["forkedFrom"].get("messageUuid"), str)}
    own: list[dict[str, Any]] = []
    for line in lines:
        if line.get("uuid") in copies:
            continue
        line = dict(line)
        for key in ("parentUuid", "logicalParentUuid"):
            if line.get(key) in copies:
                line[key] = copies[line[key]]
        own.append(line)
    own = settled(own)
    kept = {str(line["uuid"]) for line in own if isinstance(line.get("uuid"), str)}
    lines = [line for line in lines if line.get("uuid") in copies or line.get("uuid") in kept]
    leaf = next((copies.get(line["uuid"], line["uuid"]) for line in reversed(lines)
                 if line.get("type") in _MESSAGES and isinstance(line.get("uuid"), str)), None)
    convs = [c for c in parse_entries(source_id, source_lines + own, {}, limits=loom.limits)
             if isinstance(c, ImportedConversation) and c.source_id == source_id]
    if not convs or leaf is None:
        return
    conv = convs[0]
    holder = next((m.source_id for m in conv.messages if leaf in m.metadata.get("uuids", [])),
                  None)
    if holder is None:
        return
    head = f"session:{session_id}"
    conv.heads = [Head(head, holder, f"fork-{session_id}")]
    written: dict[tuple[str, str], tuple[str, str]] = {}
    outcome = write_conversation(loom, conv, {}, written)
    out.tree = outcome.tree
    mine = {str(line["uuid"]) for line in own if isinstance(line.get("uuid"), str)}
    by_source = {m.source_id: m for m in conv.messages}
    out.fork_nodes = sorted(
        written[(source_id, m.source_id)][1] for m in conv.messages
        if m.source_id in mine and (m.parent_source_id is None
                                    or m.parent_source_id not in mine)
        and m.source_id in by_source and (source_id, m.source_id) in written)
    for ref in loom.refs("session", outcome.tree):
        imported = ref.origin.get("imported") if isinstance(ref.origin, dict) else None
        if isinstance(imported, dict) and imported.get("head") == head:
            out.fork_ref = ref.name


def dumps(nodes: list[str]) -> str | None:
    return json.dumps(nodes) if nodes else None
