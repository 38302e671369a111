"""Prompt piece operations over a Loom, each one unit of work, for a `Scope` (whose
pieces a caller sees): the service decides, the edges only pass the caller on.

A piece is a name and a line of versions; a version is a content id of the shared
content layer (`sha256:` over the canonical blocks), its body kept once in
`piece_contents` however many pieces, versions and threads name it. Adding a text
equal to the piece's newest version adds nothing. A thread names a piece by a block
(`{"piece": "NAME"}`, the newest version when the context is assembled, or
`{"piece": "NAME@VERSION"}`, pinned) or as its system piece (the `system_piece`
option); what it stores is the piece's exact id, found once at write time against
what the writer sees, and the pinned content id in full (docs/security.md, stored
references). A template is a piece whose text is a JSON object: a system, a system
piece, pieces, options and a default model a new thread starts from.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .. import content as C
from ..errors import InvalidInput, NotFound, TooLarge, check_choice
from ..limits import check_reference
from ..model import new_id, now
from ..naming import check_name
from . import KINDS, PIECES
from . import storage as S
from .storage import Piece, Version

if TYPE_CHECKING:
    from ..loom import Loom

#: what a name taken by someone else reads as (the same whoever holds it)
TAKEN = "the name is taken (names are unique in the store); choose another"
#: the option naming a thread's system piece
SYSTEM_OPTION = "system_piece"
#: the fields of a template
TEMPLATE_FIELDS = ("system", "system_piece", "pieces", "options", "model", "prompt")


@dataclass(frozen=True)
class Scope:
    """Whose pieces a caller sees: one user's (`owner`), or every one (`everyone`: the
    operator, who adds pieces as nobody's)."""

    owner: str | None = None
    everyone: bool = True

    def sees(self, piece: Piece) -> bool:
        return self.everyone or piece.owner == self.owner


OPERATOR = Scope()


def _text_of(value: str, where: str, limit: int) -> list[dict[str, Any]]:
    if not isinstance(value, str) or not value:
        raise InvalidInput(where, "a piece is a non-empty text")
    C.check_text(value, where)
    size = len(value.encode("utf-8"))
    if size > limit:
        raise TooLarge(where, f"{size} bytes is over the limit of {limit} bytes for a piece "
                       "(LOOMDB_LIMIT_PIECE)")
    return C.text(value)


def _find(loom: Loom, scope: Scope, name: str, db: Any) -> Piece:
    check_reference("piece", name)
    piece = S.by_name(db, name)
    if piece is None or not scope.sees(piece):
        raise NotFound("piece", name[:100])
    return piece


def add(loom: Loom, scope: Scope, name: str, text: str, *, kind: str = "piece") -> tuple[Piece, Version, bool]:
    """A new version of piece `name` holding `text` (the piece made when new). (piece,
    its newest version, whether this call added it: the same text again adds nothing)."""
    check_name("piece", name)
    check_choice("piece kind", kind, KINDS)
    if kind == "template":
        text = template_text(loom, scope, text)
    blocks = _text_of(text, f"piece {name}", loom.limits.piece)
    cid, body = C.encode(blocks, loom.max_content_bytes)
    at = now()
    with loom.unit(PIECES) as db:
        piece = S.by_name(db, name)
        if piece is not None and not scope.sees(piece):
            raise InvalidInput(f"piece {name!r}", TAKEN)
        if piece is not None and piece.kind != kind:
            raise InvalidInput(f"piece {name!r}", f"is a {piece.kind}, not a {kind}")
        if piece is None:
            if S.count_owned(db, scope.owner) >= loom.limits.pieces:
                raise InvalidInput(f"piece {name!r}", f"{loom.limits.pieces} pieces is the "
                                   "limit (LOOMDB_LIMIT_PIECES)")
            piece = Piece(new_id(), name, kind, scope.owner, at)
            S.insert(db, piece)
            last = None
        else:
            last = S.latest(db, [piece.id]).get(piece.id)
        if last is not None and last.content_id == cid:
            return piece, last, False
        number = 1 if last is None else last.number + 1
        if number > loom.limits.piece_versions:
            raise InvalidInput(f"piece {name!r}", f"{loom.limits.piece_versions} versions is "
                               "the limit (LOOMDB_LIMIT_PIECE_VERSIONS)")
        S.put_body(db, cid, body.decode("utf-8"), at)
        version = Version(piece.id, number, cid, at)
        S.insert_version(db, version)
    return piece, version, True


def listed(loom: Loom, scope: Scope) -> list[dict[str, Any]]:
    """The pieces the scope sees, by name, with their newest version."""
    if not loom.has_area(PIECES):
        return []
    with loom.unit(PIECES) as db:
        pieces = S.listed(db, scope.owner, scope.everyone)
        newest = S.latest(db, [p.id for p in pieces])
    return [{"name": p.name, "kind": p.kind, "versions": newest[p.id].number,
             "hash": newest[p.id].content_id} for p in pieces if p.id in newest]


def log(loom: Loom, scope: Scope, name: str) -> list[Version]:
    """A piece's versions, oldest first."""
    with loom.unit(PIECES) as db:
        return S.versions(db, _find(loom, scope, name, db).id)


def split(spec: str) -> tuple[str, str | None]:
    """`NAME` or `NAME@VERSION` (a version number or a hash prefix)."""
    check_reference("piece", spec)
    name, at, version = spec.partition("@")
    if at and not version:
        raise InvalidInput(f"piece {spec[:100]!r}", "give a version after '@'")
    return name, (version if at else None)


def _version(db: Any, piece: Piece, version: str | None) -> Version:
    found = S.versions(db, piece.id)
    if version is None:
        return found[-1]
    if version.isdigit() and len(version) <= 5:  # a number; a longer one is a hash prefix
        hits = [v for v in found if v.number == int(version)]
    else:
        prefix = version if version.startswith(C.HASH_PREFIX) else C.HASH_PREFIX + version
        hits = [v for v in found if v.content_id.startswith(prefix.lower())]
    if len(hits) != 1:
        why = "names no version" if not hits else "names more than one version: give more of it"
        raise InvalidInput(f"piece {piece.name}@{version[:80]}", why)
    return hits[0]


def show(loom: Loom, scope: Scope, spec: str) -> dict[str, Any]:
    """One version of a piece (the newest unless `NAME@VERSION`) and its text."""
    name, version = split(spec)
    with loom.unit(PIECES) as db:
        piece = _find(loom, scope, name, db)
        v = _version(db, piece, version)
        body = S.bodies(db, [v.content_id])[v.content_id]
    return {"name": piece.name, "kind": piece.kind, **v.to_json(),
            "text": C.plain_text(json.loads(body))}


def used_by(loom: Loom, scope: Scope, name: str, visible: Any = None) -> list[dict[str, str]]:
    """The nodes naming a piece (`visible`: the trees of them the caller sees)."""
    with loom.unit(PIECES) as db:
        found = S.uses(db, _find(loom, scope, name, db).id)
    trees = {t for t, _ in found}
    keep = trees if visible is None else visible(trees)
    return [{"tree": t, "node": n} for t, n in found if t in keep]


# == names in content, at write time ==================================================
def resolve_block(loom: Loom, scope: Scope, block: dict[str, Any], where: str, db: Any) -> dict[str, Any]:
    """A piece block as stored: the piece's exact id, found against `scope` (an `id`
    the block brings is checked, never trusted for a user), and a pinned version in full."""
    spec = block.get("piece")
    if not isinstance(spec, str):
        raise InvalidInput(f"{where}.piece", "names a piece: NAME or NAME@VERSION")
    name, version = split(spec)
    found = S.by_name(db, name) if loom.has_area(PIECES) else None
    given = block.get("id")
    if found is None or not scope.sees(found) or (given is not None and given != found.id
                                                   and not scope.everyone):
        raise InvalidInput(where, f"names no piece {name[:100]!r} you have")
    if found.kind != "piece":
        raise InvalidInput(where, f"{name!r} is a template; a thread names pieces")
    out: dict[str, Any] = {"type": "piece", "piece": name, "id": found.id}
    pinned = block.get("version")
    if version is not None:
        out["version"] = _version(db, found, version).content_id
    elif isinstance(pinned, str):
        if not S.has_version(db, found.id, pinned):
            raise InvalidInput(where, f"piece {name!r} has no version {pinned[:80]}")
        out["version"] = pinned
    return out


def resolve_blocks(loom: Loom, scope: Scope, blocks: list[dict[str, Any]],
                   where: str = "content") -> list[dict[str, Any]]:
    """Content with every piece block resolved (see `resolve_block`); a block naming a
    piece the scope does not have refuses the whole content, in one line."""
    if not any(isinstance(b, dict) and ("piece" in b and b.get("type") in (None, "piece"))
               for b in blocks):
        return blocks
    if not loom.has_area(PIECES):
        name = next(b["piece"] for b in blocks if isinstance(b, dict) and "piece" in b)
        raise InvalidInput(where, f"names no piece {str(name)[:100]!r} you have")
    out = []
    with loom.unit(PIECES) as db:
        for i, b in enumerate(blocks):
            if isinstance(b, dict) and "piece" in b and b.get("type") in (None, "piece"):
                out.append(resolve_block(loom, scope, b, f"{where}[{i}]", db))
            else:
                out.append(b)
    return out


def resolve_option(loom: Loom, scope: Scope, value: Any, where: str = "options") -> dict[str, Any]:
    """A `system_piece` option as stored: a piece block's fields (name, exact id, pin)."""
    block = {"piece": value} if isinstance(value, str) else value
    if not isinstance(block, dict):
        raise InvalidInput(f"{where}.{SYSTEM_OPTION}", "names a piece: NAME or NAME@VERSION")
    resolved = resolve_blocks(loom, scope, [block], f"{where}.{SYSTEM_OPTION}")[0]
    resolved.pop("type")
    return resolved


def piece_options(loom: Loom, scope: Scope, options: dict[str, Any] | None,
                  where: str = "options") -> dict[str, Any] | None:
    if not options or SYSTEM_OPTION not in options:
        return options
    return {**options, SYSTEM_OPTION: resolve_option(loom, scope, options[SYSTEM_OPTION], where)}


# == expansion, at read time ========================================================
def _wanted(ctx: dict[str, Any]) -> list[dict[str, Any]]:
    refs = [b for m in ctx["messages"] for b in m["content"] if b.get("type") == "piece"]
    system = ctx["options"].get(SYSTEM_OPTION)
    if isinstance(system, dict):
        refs.append(system)
    return refs


def expand(loom: Loom, owner: str | None, ctx: dict[str, Any]) -> dict[str, Any]:
    """The context with every piece block replaced by the piece's text, and the system
    piece leading the system message. A reference is followed by its exact id only, and
    only to a piece of `owner` (the owner of the tree that holds it; None: the
    operator's tree, which may name any): anything else reads as a piece that is not
    available, in the one sentence it gives whatever the reason."""
    refs = _wanted(ctx)
    texts: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
    if refs and loom.has_area(PIECES):
        with loom.unit(PIECES) as db:
            ids = [r["id"] for r in refs if isinstance(r.get("id"), str)]
            pieces = {i: p for i, p in S.by_ids(db, ids).items()
                      if owner is None or p.owner == owner}
            newest = S.latest(db, list(pieces))
            pinned = [r["id"] for r in refs if isinstance(r.get("version"), str)]
            held = S.held_versions(db, [p for p in pinned if p in pieces]) if pinned else set()
            wanted: dict[tuple[str, str | None], str] = {}
            for r in refs:
                pid, pin = r.get("id"), r.get("version")
                if pid not in pieces or pid not in newest:
                    continue
                if isinstance(pin, str):
                    if (pid, pin) in held:
                        wanted[(pid, pin)] = pin
                else:
                    wanted[(pid, None)] = newest[pid].content_id
            bodies = S.bodies(db, list(wanted.values()))
            texts = {k: json.loads(bodies[c]) for k, c in wanted.items() if c in bodies}
    options = dict(ctx["options"])
    system = options.pop(SYSTEM_OPTION, None)
    messages = []
    for msg in ctx["messages"]:
        if any(b.get("type") == "piece" for b in msg["content"]):
            content: list[dict[str, Any]] = []
            for b in msg["content"]:
                content.extend(_blocks(texts, b) if b.get("type") == "piece" else [b])
            msg = {**msg, "content": content}
        messages.append(msg)
    if system is not None:
        lead = _blocks(texts, system if isinstance(system, dict) else {"piece": str(system)})
        if messages and messages[0]["role"] == "system":
            messages[0] = {**messages[0], "content": lead + messages[0]["content"]}
        else:
            messages.insert(0, {"role": "system", "content": lead})
    return {**ctx, "messages": messages, "options": options}


def _blocks(texts: dict[tuple[str, str | None], list[dict[str, Any]]],
            ref: dict[str, Any]) -> list[dict[str, Any]]:
    pin = ref.get("version") if isinstance(ref.get("version"), str) else None
    found = texts.get((str(ref.get("id")), pin))
    if found is not None:
        return found
    return C.text(f"[piece {str(ref.get('piece'))[:100]} is not available]")


# == templates ======================================================================
def template_text(loom: Loom, scope: Scope, text: str) -> str:
    """A template's text checked and made canonical: a JSON object of `TEMPLATE_FIELDS`
    whose pieces the adder has."""
    try:
        value = json.loads(text)
    except ValueError:
        raise InvalidInput("template", "is a JSON object (system, system_piece, pieces, "
                           "options, model, prompt)") from None
    return json.dumps(check_template(loom, scope, value), ensure_ascii=False, sort_keys=True)


def check_template(loom: Loom, scope: Scope, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise InvalidInput("template", "is a JSON object")
    extra = sorted(set(value) - set(TEMPLATE_FIELDS))
    if extra:
        raise InvalidInput("template", f"unknown fields {extra}; allowed: {list(TEMPLATE_FIELDS)}")
    for key in ("system", "system_piece", "model", "prompt"):
        if value.get(key) is not None and not isinstance(value[key], str):
            raise InvalidInput(f"template.{key}", "is a text")
        C.check_text(value.get(key), f"template.{key}")
    if value.get("options") is not None and not isinstance(value["options"], dict):
        raise InvalidInput("template.options", "is a JSON object")
    pieces = value.get("pieces") or []
    if not isinstance(pieces, list) or not all(isinstance(p, str) for p in pieces):
        raise InvalidInput("template.pieces", "is a list of piece names")
    named = [{"piece": p} for p in pieces]
    if value.get("system_piece"):
        named.append({"piece": value["system_piece"]})
    if named:
        resolve_blocks(loom, scope, named, "template")
    return {k: v for k, v in value.items() if v not in (None, [], {})}


def template(loom: Loom, scope: Scope, name: str) -> dict[str, Any]:
    """A template's newest version, as its JSON object."""
    with loom.unit(PIECES) as db:
        piece = _find(loom, scope, name, db)
        if piece.kind != "template":
            raise InvalidInput(f"template {name!r}", "is a piece, not a template")
        v = _version(db, piece, None)
        body = S.bodies(db, [v.content_id])[v.content_id]
    value: dict[str, Any] = json.loads(C.plain_text(json.loads(body)))
    return value


def apply_template(tpl: dict[str, Any], text: Any, system: str | None,
                   options: dict[str, Any] | None) -> tuple[Any, str | None, dict[str, Any], dict[str, Any]]:
    """(first message, system, tree options, root node options) of a new thread from a
    template: its pieces lead the first message (a `prompt` with `$input` takes the
    message's text), its system unless one is given, its options under the given ones,
    its model the default, its system piece on the root."""
    if isinstance(text, str) and tpl.get("prompt"):
        prompt = str(tpl["prompt"])
        text = prompt.replace("$input", text) if "$input" in prompt else prompt + "\n\n" + text
    blocks = C.text(text) if isinstance(text, str) else list(text)
    first = [{"piece": p} for p in tpl.get("pieces", [])] + blocks
    merged = dict(tpl.get("options") or {})
    if tpl.get("model"):
        merged.setdefault("model", tpl["model"])
    merged.update(options or {})
    root = {SYSTEM_OPTION: tpl["system_piece"]} if tpl.get("system_piece") else {}
    return first, system if system is not None else tpl.get("system"), merged, root


# == uses, from the core's writes ===================================================
def uses_of(nodes: Iterable[Any]) -> list[tuple[str, str, str]]:
    """(piece id, node id, tree id) of every piece the nodes name."""
    out = []
    for node in nodes:
        for b in node.content:
            if b.get("type") == "piece" and isinstance(b.get("id"), str):
                out.append((b["id"], node.id, node.tree))
        system = (node.options or {}).get(SYSTEM_OPTION)
        if isinstance(system, dict) and isinstance(system.get("id"), str):
            out.append((system["id"], node.id, node.tree))
    return out


def stored_bodies(loom: Loom) -> int:
    """How many piece bodies the store keeps (each once)."""
    if not loom.has_area(PIECES):
        return 0
    with loom.unit(PIECES) as db:
        return S.count_bodies(db)


__all__ = ["OPERATOR", "SYSTEM_OPTION", "Scope", "add", "expand", "listed", "log",
           "resolve_blocks", "show", "used_by"]
