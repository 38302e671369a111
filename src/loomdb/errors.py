"""The error hierarchy: every error loomdb raises on purpose is one of these.

    LoomError                       root: catch this to catch everything of ours
    ├── NotFound (also KeyError)    an id, prefix, ref or tree that does not exist
    │   └── AmbiguousName           a prefix or name that matches several things
    ├── InvalidInput (ValueError)   bad input: says where and why; nothing was written
    │   ├── UsageError              a malformed call: unknown option, missing argument
    │   ├── CycleError              an edge that would close a cycle
    │   └── TooLarge                a payload over the configured size limit
    ├── RefConflict                 a compare-and-swap on a ref saw another value
    │   └── RefsInTheWay            a delete that would take refs with it, not forced
    ├── MergeConflict               a merge whose two sides changed the same lines
    ├── StoreBusy                   the store stayed locked by other writers too long
    ├── StoreUnavailable            the store named cannot be opened (says how to fix)
    ├── ReadOnlyStore               the server refused a write: a standby, or read-only
    ├── Unauthorized                a caller without valid credentials (HTTP, MCP)
    ├── IntegrityError              stored bytes do not match their hash
    ├── MissingExtra                an optional part is not installed (says how)
    ├── NotCompacted                a compaction would not make the context smaller
    └── ProviderError               a model provider failed (down, timeout, bad reply)

A test (tests/test_docs_hold.py) holds this drawing to the classes below. The edges
translate these in one place, `loomdb.edge` (CLI exit code 2 and one JSON shape, HTTP
status, MCP error); the library never prints or exits.
"""

from __future__ import annotations

from collections.abc import Sequence


class LoomError(Exception):
    """Root of every error loomdb raises on purpose."""


class NotFound(LoomError, KeyError):
    """Something named does not exist. A KeyError so mapping-style code works."""

    def __init__(self, what: str, name: str, candidates: Sequence[str] = ()) -> None:
        self.what = what
        self.name = name
        self.candidates = list(candidates)
        super().__init__(str(self))

    def __str__(self) -> str:
        msg = f"unknown {self.what}: {self.name!r}"
        if self.candidates:
            msg += " (did you mean: " + ", ".join(self.candidates[:10]) + "?)"
        return msg


class AmbiguousName(NotFound):
    """A prefix or name matched more than one thing; the candidates are listed (ten of
    them, and how many more). `capped`: the lookup stopped at len(candidates), so there
    may be more than it counted."""

    #: how many candidates a lookup fetches for this error at most
    LOOKUP = 1001

    def __init__(self, what: str, name: str, candidates: Sequence[str] = ()) -> None:
        candidates = list(candidates)
        self.capped = len(candidates) >= self.LOOKUP
        super().__init__(what, name, candidates)

    def __str__(self) -> str:
        shown = ", ".join(self.candidates[:10])
        rest = len(self.candidates) - 10
        more = "" if rest <= 0 else f" and {'at least ' if self.capped else ''}{rest} more"
        return (f"ambiguous {self.what}: {self.name!r} matches {len(self.candidates)}"
                f"{'+' if self.capped else ''}: {shown}{more}")


class InvalidInput(LoomError, ValueError):
    """Input that loomdb refuses: `where` names the place, `why` the reason."""

    def __init__(self, where: str, why: str) -> None:
        self.where = where
        self.why = why
        super().__init__(f"{where}: {why}" if where else why)


class UsageError(InvalidInput):
    """A call that is malformed as a call (unknown command or option, missing or
    ill-typed argument), as opposed to well-formed input that loomdb refuses."""


class CycleError(InvalidInput):
    """An edge or parent link that would make the graph cyclic."""


class TooLarge(InvalidInput):
    """A payload over the configured limit; large payloads belong in the blob store."""


class RefConflict(LoomError):
    """A ref moved under us: the compare-and-swap expected one node and found another."""

    def __init__(self, ref: str, expected: str | None, actual: str | None) -> None:
        self.ref = ref
        self.expected = expected
        self.actual = actual
        super().__init__(
            f"ref {ref!r} moved: expected it at {expected or 'nothing'}, "
            f"found it at {actual or 'nothing'}"
        )


class RefsInTheWay(RefConflict):
    """A delete would take refs with it and was not forced (loomdb.forget)."""

    def __init__(self, target: str, refs: Sequence[str]) -> None:
        LoomError.__init__(
            self, f"{target}: {len(refs)} ref(s) point at or below it "
            f"({', '.join(refs[:5])}{', ...' if len(refs) > 5 else ''}); "
            "delete them too with --force (force=true)")
        self.ref, self.expected, self.actual = refs[0], None, None
        self.refs = list(refs)


class MergeConflict(LoomError):
    """A three-way merge whose two sides changed the same region: reported with the
    regions (`conflicts`, each `{"base", "ours", "theirs"}`), never resolved by guess;
    nothing was written. Like a moved ref, a conflict between two histories (HTTP 409)."""

    def __init__(self, where: str, conflicts: list[dict[str, str]]) -> None:
        self.where = where
        self.conflicts = conflicts
        shown = "; ".join(
            f"ours {c['ours']!r} vs theirs {c['theirs']!r} (base {c['base']!r})"
            for c in conflicts[:3])
        super().__init__(f"{where}: {len(conflicts)} conflicting region(s), nothing written: "
                         f"{shown}")


class StoreBusy(LoomError):
    """The store stayed locked by other writers (or had no free connection) for longer
    than the busy timeout; nothing was written and trying again later may succeed."""

    def __init__(self, store: str, why: str) -> None:
        self.store = store
        self.why = why
        super().__init__(f"{store}: busy ({why}); nothing was written, try again")


class StoreUnavailable(LoomError):
    """The store named cannot be opened as a loomdb store: its database does not exist,
    its server does not answer, its file is unreadable, not SQLite, or another program's
    database. Nothing was written; `fix` says what to do."""

    def __init__(self, store: str, why: str, fix: str) -> None:
        self.store = store
        self.why = why
        self.fix = fix
        super().__init__(f"cannot open {store}: {why}; {fix}")


class ReadOnlyStore(LoomError):
    """The server refused the write because it is read-only: a hot standby named as the
    primary (a configuration left stale by a failover) or a database in read-only mode.
    Nothing was written; point the store URL at the primary."""

    def __init__(self, store: str, why: str) -> None:
        self.store = store
        self.why = why
        super().__init__(
            f"{store}: the server is read-only ({why}); nothing was written. Is this a "
            "standby? Point the store URL at the primary"
        )


class Unauthorized(LoomError):
    """A caller that did not prove who it is (missing or wrong token); said without
    telling which part was wrong."""

    def __init__(self, why: str = "missing or invalid credentials") -> None:
        self.why = why
        super().__init__(why)


class IntegrityError(LoomError):
    """Stored data no longer matches the hash that names it."""

    def __init__(self, what: str, expected: str, got: str) -> None:
        self.what = what
        self.expected = expected
        self.got = got
        super().__init__(f"{what}: expected {expected}, got {got}")


class MissingExtra(LoomError):
    """An optional dependency is missing; the message gives the install command."""

    def __init__(self, feature: str, extra: str) -> None:
        self.feature = feature
        self.extra = extra
        super().__init__(f"{feature} needs the '{extra}' extra: pip install 'loomdb[{extra}]'")


class NotCompacted(LoomError):
    """A compaction whose summary would not be shorter than what it replaces; nothing
    was written (keep fewer turns verbatim, or compact later)."""

    def __init__(self, tokens_before: int, tokens_after: int) -> None:
        self.tokens_before = tokens_before
        self.tokens_after = tokens_after
        super().__init__(
            f"not compacted: the summary would take {tokens_after} tokens where the messages "
            f"it replaces take {tokens_before}; nothing was written (keep fewer turns with "
            "--keep, or compact a longer conversation)"
        )


class ProviderError(LoomError):
    """A model provider failed: unreachable, timed out, rate-limited, or replied badly."""

    def __init__(self, provider: str, why: str, *, retryable: bool = False) -> None:
        self.provider = provider
        self.why = why
        self.retryable = retryable
        super().__init__(f"{provider}: {why}")


def check_choice(what: str, value: object, allowed: Sequence[str]) -> None:
    """Refuse a value outside a fixed vocabulary (roles, modes, edge types...)."""
    if value not in allowed:
        raise InvalidInput(what, f"{value!r} is not one of {', '.join(allowed)}")
