"""Span redaction (issue 36): erase a string, a pattern's matches or a kind of secret
wherever it was copied, leaving every node with its id and chain hash.

`redact_spans(loom, text=... | pattern=... | secret_type=...)` replaces each span by a
marker (`[redacted:text]`, `[redacted:pattern]`, or `[redacted:<kind>]`) in message
contents (tool inputs and outputs, compaction summaries: every string of a content),
generation records (request, provider request, raw response), a node's origin and
provenance (its token list goes whole), tree titles (a default title is derived again
from the scrubbed root) and system prompts, and, store-wide, document bodies and
collection fields. Search entries and vectors of the nodes changed go in the same
transaction, and the nodes are queued to be indexed again from what they hold now.

The chain covers a content's id, not its body, and a generation's response hash, not
its raw response: so every chain hash stays, and `scrubs` keeps the digest of what
each scrubbed value holds now, which the verifier checks (a scrubbed value changed
again afterwards is tampering). Derived values made from a scrubbed message are
followed: a compaction summary whose summarized messages changed is marked stale
(`loomdb compact --redo`), a default title is derived again.

It runs as one transaction for the whole scope (all of it or nothing: a pattern past
its time budget is refused with nothing written), then the files are scrubbed as for
any forget (docs/forget.md). A dry run reads the same and writes nothing.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .. import content as C
from .. import hooks
from ..errors import InvalidInput, NotFound
from ..model import now
from ..secrets import Policy
from ..secrets.rules import RULES
from ..secrets.scan import Scanner, check_kind, marker
from ..storage_ops import storage
from .service import Within, check_reason, stale_compactions

if TYPE_CHECKING:
    from ..loom import Loom

#: characters of a text to erase, at least and at most
MIN_TEXT = 4
MAX_TEXT = 1000
#: characters of a pattern at most
MAX_PATTERN = 1000
#: seconds a pattern may spend over everything it reads (the operator's; a caller over
#: HTTP passes its own, smaller budget)
PATTERN_SECONDS = 10.0
#: matched strings kept to look for in the files afterwards
_MAX_NEEDLES = 256


class PatternBudget(InvalidInput):
    """A pattern took more than its time budget: nothing was written."""


@dataclass
class Spans:
    """What to erase: a literal text, a regular expression, or a kind of secret."""

    kind: str
    literal: str | None = None
    regex: Any = None
    scanner: Scanner | None = None
    deadline: float = 0.0
    found: set[str] = field(default_factory=set)

    @property
    def marker(self) -> str:
        return marker(self.kind)

    def needles(self) -> list[str] | None:
        """Substrings a stored value must hold to be read (None: every value is)."""
        if self.literal is None:
            return None
        forms = [self.literal, json.dumps(self.literal, ensure_ascii=False)[1:-1],
                 json.dumps(self.literal)[1:-1]]
        return sorted(set(forms))

    def __call__(self, text: str) -> tuple[str, int]:
        """`text` with every span replaced by the marker, and how many."""
        if self.literal is not None:
            n = text.count(self.literal)
            if n:
                self.found.add(self.literal)
                return text.replace(self.literal, self.marker), n
            return text, 0
        if self.scanner is not None:
            spans = self.scanner.spans(text)
            if not spans:
                return text, 0
            pieces, last = [], 0
            for start, end, _kind in spans:
                pieces += [text[last:start], self.marker]
                self._keep(text[start:end])
                last = end
            pieces.append(text[last:])
            return "".join(pieces), len(spans)
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise _over()
        try:
            matches = [m.span() for m in self.regex.finditer(text, timeout=left)]
        except TimeoutError:
            raise _over() from None
        matches = [(s, e) for s, e in matches if e > s]
        if not matches:
            return text, 0
        pieces, last = [], 0
        for start, end in matches:
            pieces += [text[last:start], self.marker]
            self._keep(text[start:end])
            last = end
        pieces.append(text[last:])
        return "".join(pieces), len(matches)

    def _keep(self, span: str) -> None:
        if len(self.found) < _MAX_NEEDLES:
            self.found.add(span)

    def file_needles(self) -> list[bytes]:
        """Bytes of what was erased (12 bytes or more), to look for in the files."""
        out: set[bytes] = set()
        for s in self.found:
            for form in (s, json.dumps(s, ensure_ascii=False)[1:-1]):
                raw = form.encode("utf-8", "surrogatepass")
                if len(raw) >= 12:
                    out.add(raw[:256])
        return sorted(out)


def _over() -> PatternBudget:
    return PatternBudget("--pattern", "took longer than its time budget on what it reads "
                         "(a pattern that backtracks?); nothing was written")


def spans_for(loom: Loom, *, text: str | None = None, pattern: str | None = None,
              secret_type: str | None = None, seconds: float = PATTERN_SECONDS) -> Spans:
    """What one of `text`, `pattern`, `secret_type` names, checked: lengths, a pattern
    that compiles, matches no empty string and not its own marker, a known kind."""
    given = [v for v in (text, pattern, secret_type) if v is not None]
    if len(given) != 1:
        raise InvalidInput("redact", "give exactly one of --text, --pattern, --secret-type")
    if text is not None:
        if not isinstance(text, str) or not MIN_TEXT <= len(text) <= MAX_TEXT:
            raise InvalidInput("--text", f"must be {MIN_TEXT} to {MAX_TEXT} characters")
        if text in marker("text") or text.strip() == "":
            raise InvalidInput("--text", "is part of the marker it would leave, or blank")
        return Spans("text", literal=text)
    if pattern is not None:
        return Spans("pattern", regex=_compile(pattern, seconds),
                     deadline=time.monotonic() + seconds)
    assert secret_type is not None
    check_kind(secret_type)
    held = Policy.parse(storage(loom).forgetting().setting("secrets"))
    known = {r.kind for r in RULES} | {r["kind"] for r in held.rules}
    if secret_type not in known:
        raise InvalidInput("--secret-type", f"{secret_type!r} is no kind the scanner knows "
                           f"({', '.join(sorted(known))})")
    only = Policy("off", {secret_type: "redact"}, [r for r in held.rules
                                                   if r["kind"] == secret_type])
    return Spans(secret_type, scanner=Scanner(only))


def _compile(pattern: str, seconds: float) -> Any:
    import regex

    if not isinstance(pattern, str) or not 1 <= len(pattern) <= MAX_PATTERN:
        raise InvalidInput("--pattern", f"must be 1 to {MAX_PATTERN} characters")
    try:
        compiled = regex.compile(pattern, regex.V0)
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        raise InvalidInput("--pattern", f"is not a regular expression ({exc})") from None
    try:
        if compiled.search("", timeout=seconds) is not None:
            raise InvalidInput("--pattern", "matches the empty string")
        if compiled.search(marker("pattern"), timeout=seconds) is not None:
            raise InvalidInput("--pattern", "matches the marker it would leave")
    except TimeoutError:
        raise _over() from None
    return compiled


@dataclass
class Scrubbed:
    """What one span redaction did, or with `dry_run` would do (never the text)."""

    marker: str
    dry_run: bool
    trees: dict[str, dict[str, int]] = field(default_factory=dict)
    ids: list[str] = field(default_factory=list)
    shared: list[str] = field(default_factory=list)
    copies: list[str] = field(default_factory=list)
    generations: list[str] = field(default_factory=list)
    retitled: list[str] = field(default_factory=list)
    stale: list[dict[str, str]] = field(default_factory=list)
    areas: list[str] = field(default_factory=list)
    seq: int = 0
    files: dict[str, Any] = field(default_factory=dict)

    @property
    def occurrences(self) -> int:
        return sum(t["occurrences"] for t in self.trees.values())

    def to_json(self) -> dict[str, Any]:
        return {"action": "redact-span", "marker": self.marker, "dry_run": self.dry_run,
                "occurrences": self.occurrences, "trees": self.trees, "ids": self.ids,
                "shared": self.shared, "copies": self.copies,
                "generations": self.generations, "retitled": self.retitled,
                "stale": self.stale, "areas": self.areas, "log": self.seq,
                "files": self.files}


def _count(out: Scrubbed, tree: str, what: str, n: int = 1) -> None:
    row = out.trees.setdefault(tree, {"nodes": 0, "occurrences": 0, "generations": 0,
                                      "titles": 0, "stale": 0})
    row[what] += n


def redact_spans(loom: Loom, spans: Spans, *, tree: str | None = None,
                 within: Within | None = None, dry_run: bool = True,
                 reason: str | None = None, actor: str | None = None) -> Scrubbed:
    """Erase every span `spans` names in the store, or in `tree`, or (`within`) in the
    trees the caller may change; see the module docstring. With `dry_run` (the
    default) nothing is written and the answer says what would change, per tree."""
    check_reason(reason)
    fs = storage(loom).forgetting()
    out = Scrubbed(spans.marker, dry_run)
    with storage(loom).transaction():
        fs.begin()
        scope = _scope(loom, tree, within)
        inside = None if scope is None else set(scope)
        needles = spans.needles()
        at = now()
        # -- contents ---------------------------------------------------------------
        scrubbed: dict[str, tuple[str, str]] = {}  # cid -> (old body, new body)
        users_of: dict[str, list[tuple[str, str]]] = {}
        #: (node, tree, body): nodes reading a scrubbed copy of their own from now on (a
        #: user's, when another user's node holds the same content), or already
        copies: list[tuple[str, str, str]] = []
        fresh: set[str] = set()  # the nodes among them that were not copies yet
        roots: dict[str, tuple[str, str]] = {}  # node -> (old body, new body)
        for cid, (body, users) in fs.span_contents(scope, needles).items():
            new, n = C.scrub_strings(json.loads(body), spans)
            if not n:
                continue
            here = [(nd, t) for nd, t in users if inside is None or t in inside]
            if not here:
                continue
            for _nd, t in here:
                _count(out, t, "nodes")
                _count(out, t, "occurrences", n)
            new_body = C.canonical(new).decode("utf-8")
            if within is not None and len(here) < len(users):
                # another user's node holds the same content: it stays theirs, and the
                # caller's nodes read a scrubbed copy of their own
                copies += [(nd, t, new_body) for nd, t in here]
                fresh |= {nd for nd, _ in here}
                roots |= {nd: (body, new_body) for nd, _ in here}
                continue
            scrubbed[cid] = (body, new_body)
            users_of[cid] = users
            roots |= {nd: (body, new_body) for nd, _ in users}
            out.shared += [nd for nd, t in users if inside is not None and t not in inside]
        for nd, t, body in fs.node_copies(scope, needles):
            new, n = C.scrub_strings(json.loads(body), spans)
            if n:
                copies.append((nd, t, C.canonical(new).decode("utf-8")))
                _count(out, t, "nodes")
                _count(out, t, "occurrences", n)
        changed = {nd for us in users_of.values() for nd, _ in us} | {c[0] for c in copies}
        out.ids = sorted(changed)
        # (a user is not told which: that would say that someone else holds the words)
        out.copies = sorted(c[0] for c in copies) if within is None else []
        # -- generation records -------------------------------------------------------
        gens: list[tuple[str, str, str, str, str]] = []
        for gid, tid, *parts in fs.span_generations(scope, needles):
            news, total = [], 0
            for part in parts:
                new_part, n = _scrub_json(part, spans)
                news.append(new_part)
                total += n
            if total:
                gens.append((gid, tid, *news))
                _count(out, tid, "generations")
                _count(out, tid, "occurrences", total)
        out.generations = sorted(g[0] for g in gens)
        # -- origins and provenance ---------------------------------------------------
        origin_ids = sorted(set(fs.span_origins(scope, needles)) | changed)
        origins: list[tuple[str, str | None, str | None]] = []
        for nid, (origin, prov) in fs.origins(origin_ids).items():
            new_origin, n1 = _scrub_json(origin, spans) if origin else (origin, 0)
            new_prov, n2 = _scrub_json(prov, spans) if prov else (prov, 0)
            if nid in changed and new_prov and '"logprobs"' in new_prov:
                doc = json.loads(new_prov)
                if isinstance(doc, dict) and doc.pop("logprobs", None) is not None:
                    new_prov, n2 = _dump(doc), n2 + 1
            if n1 or n2:
                origins.append((nid, new_origin, new_prov))
        # -- titles and system prompts ---------------------------------------------------
        retexts: list[tuple[str, str, str | None]] = []
        for tid, title, system, root in fs.tree_texts(scope):
            new_title, n1 = spans(title)
            new_system, n2 = spans(system) if system else (system, 0)
            if root in roots and title == C.title_from(json.loads(roots[root][0])):
                # the default title, derived again
                derived = C.title_from(json.loads(roots[root][1]))
                if derived != title:
                    new_title, n1 = derived, max(n1, 1)
                    out.retitled.append(tid)
            if n1 or n2:
                retexts.append((tid, new_title, new_system))
                _count(out, tid, "titles")
                _count(out, tid, "occurrences", n1 + n2)
        # -- derived: compaction summaries made from what changed -------------------------
        touched_trees = sorted({t for us in users_of.values() for _, t in us}
                               | {t for t, row in out.trees.items() if row["nodes"]})
        out.stale = stale_compactions(fs, touched_trees, changed)
        for s in out.stale:
            _count(out, s["tree"], "stale")
        if dry_run:
            return out
        # -- writing ------------------------------------------------------------------------
        marks: list[tuple[str, str, str]] = []
        for cid, (_old, new_body) in scrubbed.items():
            if within is None:
                hooks.scrub_content(loom, cid, new_body)
            else:
                hooks.keep_bodies(loom, [cid])  # a document naming it keeps its own copy
            fs.set_body(cid, new_body)
            marks.append((cid, "content", C.digest(new_body.encode("utf-8"))))
        if copies:
            fs.redact_copies(sorted(fresh))
            fs.put_copies(copies)
            # (a store copy carries such a node as a tombstone: `loomdb migrate`)
            fs.mark_redacted(sorted(fresh), "node", at)
            marks += [(nd, "node", C.digest(body.encode("utf-8"))) for nd, _t, body in copies]
        for gid, _tid, req, preq, raw in gens:
            fs.set_generation(gid, req, preq, raw)
            marks.append((gid, "generation", _raw_digest(raw)))
        for nid, origin, prov in origins:
            fs.set_origin(nid, origin, prov)
        for tid, title, system in retexts:
            fs.set_tree_texts(tid, title, system if system is not None else None)
        fs.mark_stale([(s["tree"], s["item"], s["kind"], s["source"]) for s in out.stale], at)
        ids = out.ids
        # the trees of every node changed: in scope, and others sharing a content
        trees = sorted(set(out.trees) | {t for us in users_of.values() for _, t in us})
        left = hooks.forget_nodes(loom, ids, memo_trees=trees, redacted=True)
        hooks.nodes_changed(loom, ids)
        if scope is None:
            out.areas = hooks.scrub_texts(loom, spans)
        if not out.trees and not out.areas:
            return out  # nothing found: nothing to record
        out.seq = fs.log({"at": at, "actor": actor or loom.actor, "action": "redact-span",
                          "target": spans.marker, "trees": trees,
                          "ids": out.ids, "refs": [], "reason": reason})
        fs.mark_scrubbed(marks, out.seq, at)
    storage(loom).drop_memory(ids, [])
    out.files = {**fs.scrub(sorted(fs.existing(hooks.forget_tables(loom))),
                            spans.file_needles()), **left}
    if within is not None:  # whether the file was rewritten says what others hold
        out.files.pop("vacuumed", None)
    return out


def _scope(loom: Loom, tree: str | None, within: Within | None) -> list[str] | None:
    """The trees to read (None: every tree of the store)."""
    if tree is not None:
        found = storage(loom).tree_by_id(tree)
        if found is None or (within is not None and tree not in within([tree])):
            raise NotFound("tree", tree)
        return [tree]
    if within is None:
        return None
    every = [t.id for t in loom.trees()] + [t.id for t in loom.trees(archived=True)]
    return sorted(within(every))


def _scrub_json(raw: str | None, spans: Spans) -> tuple[Any, int]:
    """A stored JSON text with its strings scrubbed (re-dumped when changed); a text
    that is not JSON is scrubbed as text."""
    if raw is None:
        return None, 0
    try:
        doc = json.loads(raw)
    except ValueError:
        return spans(raw)
    new, n = C.scrub_strings(doc, spans)
    return (_dump(new), n) if n else (raw, 0)


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def _raw_digest(raw: str) -> str:
    """The digest the verifier compares a scrubbed raw response with."""
    try:
        return C.digest(C.canonical(json.loads(raw)))
    except (TypeError, ValueError, InvalidInput):
        return C.digest(raw.encode("utf-8"))


def stale(loom: Loom, tree: str | None = None) -> list[dict[str, str]]:
    """What is stale: derived values made from what was forgotten since."""
    return storage(loom).forgetting().stale(tree)


def redo_compactions(loom: Loom, *, item: str | None = None, trees: set[str] | None = None,
                     **compact_args: Any) -> list[dict[str, str]]:
    """Compact again where each stale compaction summary was made (`item`: that one;
    `trees`: only these), keeping as many turns; the new summary is a sibling of the
    stale one, which is no longer listed as stale. What was redone."""
    from ..compaction import compact

    fs = storage(loom).forgetting()
    todo = [s for s in fs.stale() if s["kind"] == "compaction"
            and (item is None or s["item"] == item) and (trees is None or s["tree"] in trees)]
    if item is not None and not todo:
        raise NotFound("stale compaction summary", item)
    done = []
    for s in todo:
        node = storage(loom).nodes_by_id([s["item"]]).get(s["item"])
        if node is not None and node.parent is not None:
            kept = [dep for n, dep in fs.created_from(s["tree"]) if n == node.id]
            new = compact(loom, node.parent, keep=len(kept), **compact_args)
            done.append({"tree": s["tree"], "stale": s["item"], "node": new.id})
        with storage(loom).transaction():
            fs.clear_stale(s["tree"], s["item"])
    return done


__all__ = ["MAX_PATTERN", "MAX_TEXT", "MIN_TEXT", "PATTERN_SECONDS", "PatternBudget",
           "Scrubbed", "Spans", "redact_spans", "redo_compactions", "spans_for", "stale"]
