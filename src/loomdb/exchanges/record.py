"""Recording one exchange: the request's messages onto a path, the answers after it.

Everything happens in one transaction, after the model has answered: the match, the
request's new messages, the answers with their generation records, the memo entries
and the session move. An upstream failure therefore writes nothing, and two clients
racing on one conversation are serialized by the store, not by the gateway's memory.

Where the request's messages go (k = first message past the longest known prefix):
- nothing known: a new tree, its root the first message;
- k past the end (the whole request is known, e.g. a regenerate): the answers become
  siblings of the answers already there;
- message k differs from what the store holds there, and the request goes on with
  messages the store holds after it: an edit. Message k becomes a new *version* of
  that slot and the stored messages after it are reattached (children hang on slots,
  nothing is copied); the path is read through the new version from then on;
- otherwise the new messages are appended after the known prefix, the first one
  being a sibling of whatever was there (a branch).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from ..content import title_from
from ..errors import InvalidInput
from ..generation import record as generation_record
from ..headish import Position
from ..storage_ops import storage
from . import paths
from .messages import Message, Messages, key_of, resent

if TYPE_CHECKING:
    from ..loom import Loom
    from ..model import Node
    from ..providers.base import Completion
    from ..store.areas import Unit

_ORIGIN = {"via": "gateway"}


@dataclass
class Recorded:
    """What one exchange wrote: the answer nodes, where the request ended, and counts."""

    answers: list[Node]
    last: str
    tree: str
    written: int
    edited: str | None = None


@dataclass
class _Place:
    """Where the walk over the request stands: message `index` is `node`, seen through
    `selections` (non-empty only for stored nodes reattached under an edit)."""

    index: int
    node: str
    selections: dict[str, str]
    #: a node's depth in its tree less its message's index in the request (non-zero
    #: only past a compaction: the request's summary stands for the turns before it)
    offset: int = 0


def record(
    loom: Loom,
    msgs: Messages,
    digests: paths.Digests,
    answers: Sequence[Completion],
    answer_ids: Sequence[str],
    *,
    request: Mapping[str, Any],
    session: str | None = None,
    after: paths.Hit | None = None,
) -> Recorded:
    """Write one exchange (module docstring) in one transaction. `after` names where
    the request's messages already are (a continued response), skipping the match. The
    answers are kept among the recent ones, where a client's compaction of its history
    is looked for (`compacted.py`)."""
    from . import compacted

    for data, mime in msgs.blobs.values():
        loom.put_blob(data, mime)
    with loom.unit(paths.GATEWAY) as db:
        tree = _session_tree(loom, session)
        hit = after or paths.find(db, loom, digests, tree)
        if hit is None and tree is not None:
            raise InvalidInput(
                "X-Loomdb-Session", f"session {session!r} is on tree {tree}, which holds no "
                "path starting with this request's first message")
        written = 0
        edited = None
        compaction = None
        if after is None and tree is None and _only_system(msgs, hit):
            compaction = compacted.find(loom, db, msgs)
        if compaction is not None:
            place = _Place(*compaction.write(loom, db, digests))
            tree_id, written = compaction.leaf.tree, 1
        elif hit is None:
            place, tree_id = _new_tree(loom, db, msgs, digests)
            written = 1
        else:
            tree_id = hit.tree
            place = _Place(hit.index, hit.node, hit.selections, hit.offset)
            step = _edit(loom, db, msgs, digests, place, hit.tree)
            if step is not None:
                place, edited = step
                written = 1
        place, more = _append_rest(loom, db, msgs, digests, place, tree_id)
        written += more
        nodes = _answers(loom, db, msgs, digests, place, tree_id, answers, answer_ids, request)
        compacted.wrote(db, tree_id, [n.id for n in nodes])
        if session is not None:
            _move_session(loom, session, nodes[0])
    return Recorded(nodes, place.node, tree_id, written, edited)


def _only_system(msgs: Messages, hit: paths.Hit | None) -> bool:
    """Nothing of the request is known past its leading system messages."""
    if len(msgs) < 2:
        return False
    first = next((i for i, r in enumerate(msgs.roles) if r != "system"), len(msgs))
    return hit is None or hit.index < first


def _session_tree(loom: Loom, session: str | None) -> str | None:
    if session is None:
        return None
    ref = storage(loom).find_ref(session)
    if ref is None:
        return None
    if ref.kind != "session":
        raise InvalidInput("X-Loomdb-Session", f"{session!r} is a {ref.kind}, not a session")
    return ref.tree


def _new_tree(
    loom: Loom, db: Unit, msgs: Messages, digests: paths.Digests
) -> tuple[_Place, str]:
    first = msgs[0]
    user = msgs.roles.index("user") if "user" in msgs.roles else None
    title = title_from(msgs.blocks(user)) if user is not None else None
    _, root = loom.new_tree(first.blocks, role=first.role, source=_source(first.role),
                            title=title, origin=_ORIGIN)
    paths.remember(db, digests.at([0])[0], root.tree, root.id, 0, None)
    return _Place(0, root.id, {}), root.tree


def _edit(
    loom: Loom, db: Unit, msgs: Messages, digests: paths.Digests, place: _Place,
    tree: str,
) -> tuple[_Place, str] | None:
    """An edited message k with the stored rest re-sent after it: a version of k, the
    rest reattached (memoized as seen through the version). None when not that case."""
    k = place.index + 1
    if k + 1 >= len(msgs):
        return None
    found = _edited_slot(loom, place.node, msgs[k], msgs[k + 1])
    if found is None:
        return None
    old, after = found
    at = Position(old.id, tree, None, None, dict(place.selections))
    version = loom.edit(at, msgs[k].blocks, source=_source(msgs[k].role))
    selections = {**place.selections, old.slot: version.id}
    keys = digests.at(range(k, len(msgs)))
    shift = place.offset
    paths.remember(db, keys[k], tree, version.id, k + shift, place.selections or None)
    paths.remember(db, keys[k + 1], tree, after.id, k + 1 + shift, selections)
    index, node = k + 1, after
    while index + 1 < len(msgs):
        nxt = _child_matching(loom, node.id, msgs[index + 1])
        if nxt is None:
            break
        index, node = index + 1, nxt
        paths.remember(db, keys[index], tree, node.id, index + shift, selections)
    return _Place(index, node.id, selections, shift), version.id


def _edited_slot(loom: Loom, parent: str, edited: Message, following: Message) -> tuple[Node, Node] | None:
    """(the stored node at the edited position, its child matching the next message)."""
    for old in loom.nodes(loom.children(parent)):
        if old.role != edited.role or _key(old) == edited.key:
            continue
        after = _child_matching(loom, old.id, following)
        if after is not None:
            return old, after
    return None


def _child_matching(loom: Loom, parent: str, msg: Message) -> Node | None:
    for child in loom.nodes(loom.children(parent)):
        if child.role == msg.role and _key(child) == msg.key:
            return child
    return None


def _key(node: Node) -> str:
    return key_of(node.role, resent(node.content) if node.role == "assistant" else node.content)


def _append_rest(
    loom: Loom, db: Unit, msgs: Messages, digests: paths.Digests, place: _Place,
    tree: str,
) -> tuple[_Place, int]:
    """Append the messages after `place`, one node each, memoizing every prefix."""
    start = place.index + 1
    if start >= len(msgs):
        return place, 0
    keys = digests.at(range(start, len(msgs)))
    at = Position(place.node, tree, None, None, dict(place.selections))
    for index in range(start, len(msgs)):
        msg = msgs[index]
        node = loom.append(at, msg.blocks, role=msg.role, source=_source(msg.role),
                           origin=_ORIGIN)
        paths.remember(db, keys[index], tree, node.id, index + place.offset, None)
        at = Position(node.id, tree)
    return _Place(len(msgs) - 1, at.node, {}, place.offset), len(msgs) - start


def _answers(
    loom: Loom, db: Unit, msgs: Messages, digests: paths.Digests, place: _Place,
    tree: str, answers: Sequence[Completion], ids: Sequence[str], request: Mapping[str, Any],
) -> list[Node]:
    """The answers as sibling nodes after the request's last message, with provenance."""
    ctx = {"gateway": dict(request), "messages": {"through": place.node, "count": len(msgs)}}
    at = Position(place.node, tree, None, None, dict(place.selections))
    nodes: list[Node] = []
    for answer, node_id in zip(answers, ids, strict=True):
        kept = replace(answer, provider_request=_elided(answer.provider_request, place.node))
        provenance = generation_record(loom, tree, ctx, kept)
        provenance["via"] = "gateway"
        node = loom.append(
            at, answer.content, role="assistant", author=answer.alias or answer.model,
            source="agent", provenance=provenance, node_id=node_id,
            tokens=(answer.usage or {}).get("output_tokens"),
        )
        digest = digests.extended(key_of("assistant", resent(answer.content)))
        paths.remember(db, digest, tree, node.id, len(msgs) + place.offset, None)
        nodes.append(node)
    return nodes


def _elided(body: Mapping[str, Any], through: str) -> dict[str, Any]:
    """The provider request with its message list replaced by the path it rendered:
    the messages are the path (stored once, content-addressed); storing them again
    with every call would make a long conversation's provenance quadratic."""
    out = dict(body)
    if isinstance(out.get("messages"), list):
        out["messages"] = {"through": through, "count": len(out["messages"])}
    return out


def _move_session(loom: Loom, name: str, node: Node) -> None:
    if storage(loom).find_ref(name) is None:
        loom.fork(Position(node.id, node.tree), name)
    else:
        loom.set_ref(name, Position(node.id, node.tree))


def _source(role: str) -> str:
    return "agent" if role in ("assistant", "tool") else "human"
