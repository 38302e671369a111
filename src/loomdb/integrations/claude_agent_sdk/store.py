"""`LoomSessionStore`: the Claude Agent SDK's `SessionStore` on a loomdb store.

    store = LoomSessionStore("./store")                  # or a postgresql:// URL
    async for message in query(prompt="...", options=ClaudeAgentOptions(session_store=store)):
        ...

All six methods of the protocol: `append` and `load`, and `list_sessions`,
`list_session_summaries`, `delete`, `list_subkeys`. Sessions are keyed by project and
session id, a subagent's transcript by its subpath beside them. Each entry is kept as
its JSON text and loaded back equal to what was appended (the one invariant the SDK
asks); an entry with a `uuid` already stored for the transcript is not stored twice
(the SDK retries a batch that failed). An entry a fork copied from another session of
the store keeps only the fields it changed, beside the entry it copied.

The same lines are the session's tree in loomdb (`weave`): the tree `loomdb import`
makes of the session's file, with subagents as child trees, and a fork as a session
ref in its source's tree. `list_session_summaries` keeps the SDK's own summary of each
session, folded at each append by the SDK's `fold_session_summary`, whose `data` is
stored as it is given.

The protocol's methods are coroutines; each runs its one transaction in a worker thread
(a loomdb store is synchronous).
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import TYPE_CHECKING, Any

from ...errors import InvalidInput, MissingExtra, NotFound
from ...jsondepth import check_depth
from . import storage
from .area import SESSIONS
from .weave import Woven, agent_of, dumps, forked, weave

if TYPE_CHECKING:
    from ...api import Loom


class LoomSessionStore:
    """The Claude Agent SDK's session store on a loomdb store (see the module docstring)."""

    def __init__(self, path_or_url: str | Loom) -> None:
        if isinstance(path_or_url, str):
            import loomdb

            self.loom = loomdb.open(path_or_url)
            self._own = True
        else:
            self.loom, self._own = path_or_url, False

    def close(self) -> None:
        """Release the store (when this object opened it)."""
        if self._own:
            self.loom.close()

    def __enter__(self) -> LoomSessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- the protocol ---------------------------------------------------------------------
    async def append(self, key: dict[str, Any], entries: list[dict[str, Any]]) -> None:
        await asyncio.to_thread(self.append_sync, key, entries)

    async def load(self, key: dict[str, Any]) -> list[dict[str, Any]] | None:
        return await asyncio.to_thread(self.load_sync, key)

    async def list_sessions(self, project_key: str) -> list[dict[str, Any]]:
        rows = await asyncio.to_thread(self._sessions, project_key)
        return [{"session_id": sid, "mtime": mtime} for sid, mtime, _ in rows]

    async def list_session_summaries(self, project_key: str) -> list[dict[str, Any]]:
        rows = await asyncio.to_thread(self._sessions, project_key)
        return [{"session_id": sid, "mtime": mtime, "data": json.loads(summary)["data"]}
                for sid, mtime, summary in rows if summary is not None]

    async def delete(self, key: dict[str, Any]) -> None:
        await asyncio.to_thread(self.delete_sync, key)

    async def list_subkeys(self, key: dict[str, Any]) -> list[str]:
        return await asyncio.to_thread(self._subkeys, key)

    # -- the work, in one transaction each ------------------------------------------------
    def append_sync(self, key: dict[str, Any], entries: list[dict[str, Any]]) -> None:
        """`append`, run in the caller's thread."""
        project, sid, subpath = _key(key)
        if not isinstance(entries, list):
            raise InvalidInput("entries", "expected a list of JSON objects")
        texts = [self._text(e, i) for i, e in enumerate(entries)]
        if not entries:
            return
        mtime = int(time.time() * 1000)
        with self.loom.unit(SESSIONS) as db:
            k = storage.ensure_session(db, project, sid, subpath, mtime)
            seq = storage.last_seq(db, k)
            uuids = [e["uuid"] for e in entries if isinstance(e.get("uuid"), str)]
            seen = storage.known_uuids(db, k, uuids) if uuids else set()
            added: list[dict[str, Any]] = []
            for entry, text in zip(entries, texts, strict=True):
                uuid = entry.get("uuid") if isinstance(entry.get("uuid"), str) else None
                if uuid is not None:
                    if uuid in seen:
                        continue
                    seen.add(uuid)
                seq += 1
                base = self._base(db, project, entry) if subpath == "" else None
                if base is not None:
                    storage.put_entry(db, k, seq, uuid, base[:2], base[2])
                else:
                    storage.put_entry(db, k, seq, uuid, None, text)
                added.append(entry)
            if not added:
                return  # a batch sent again: nothing changed (not even its time)
            summary = self._summary(db, project, sid, subpath, key, added, mtime)
            storage.touch(db, k, mtime, summary)
            self._weave(db, project, sid)

    def load_sync(self, key: dict[str, Any]) -> list[dict[str, Any]] | None:
        """`load`, run in the caller's thread."""
        project, sid, subpath = _key(key)
        with self.loom.unit(SESSIONS) as db:
            found = storage.session(db, project, sid, subpath)
            return None if found is None else _entries(db, found[0])

    def delete_sync(self, key: dict[str, Any]) -> None:
        """`delete`: a main transcript with its subagents' and their trees (a fork: its
        ref and its own branch); a subpath alone with its tree."""
        project, sid, subpath = _key(key)
        trees: list[str] = []
        branches: list[str] = []
        with self.loom.unit(SESSIONS) as db:
            found = storage.session(db, project, sid, subpath)
            if found is None:
                return
            keys = [found[0]] + ([k for k, _ in storage.subpaths(db, project, sid)]
                                 if subpath == "" else [])
            for k in keys:
                row = storage.project_session(db, k)
                here = storage.session(db, *row) if row else None
                if here is None:
                    continue
                if here[4] is not None:  # a fork: its ref, and its own branches
                    try:
                        self.loom.delete_ref(here[4])
                    except NotFound:
                        pass
                    branches += json.loads(here[5]) if here[5] else []
                elif here[3] is not None and storage.of_tree(db, here[3]) == [k]:
                    trees.append(here[3])
                _own_entries(db, k)
                storage.delete_session(db, k)
        for node in branches:
            self.loom.forget.delete(node, force=True, reason=f"Claude session {sid} deleted")
        for tree in trees:
            self.loom.forget.delete_tree(tree, force=True, reason=f"Claude session {sid} deleted")

    def _subkeys(self, key: dict[str, Any]) -> list[str]:
        project, sid, _ = _key(key, subpath=False)
        with self.loom.unit(SESSIONS) as db:
            return [sub for _, sub in storage.subpaths(db, project, sid)]

    def _sessions(self, project: str) -> list[tuple[str, int, str | None]]:
        if not isinstance(project, str):
            raise InvalidInput("project_key", "expected a string")
        with self.loom.unit(SESSIONS) as db:
            return storage.sessions(db, project)

    # -- parts ----------------------------------------------------------------------------
    def _text(self, entry: Any, i: int) -> str:
        if not isinstance(entry, dict) or not isinstance(entry.get("type"), str):
            raise InvalidInput(f"entries[{i}]", "expected a JSON object with a string `type`")
        check_depth(entry, self.loom.limits.json_depth, f"entries[{i}]")
        try:
            text = json.dumps(entry, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise InvalidInput(f"entries[{i}]", f"is not JSON ({exc})") from None
        limit = self.loom.limits.session_line
        if len(text.encode("utf-8", "surrogatepass")) > limit:
            raise InvalidInput(f"entries[{i}]", f"longer than {limit} bytes "
                               "(LOOMDB_LIMIT_SESSION_LINE)")
        return text

    def _base(self, db: Any, project: str, entry: dict[str, Any]) -> tuple[int, int, str] | None:
        """(session, seq, the fields it changed) when the entry copies an entry of another
        session of this project (a fork's line) held whole."""
        origin = entry.get("forkedFrom")
        if not isinstance(origin, dict):
            return None
        src, uuid = origin.get("sessionId"), origin.get("messageUuid")
        if not isinstance(src, str) or not isinstance(uuid, str):
            return None
        found = storage.session(db, project, src, "")
        copied = storage.by_uuid(db, found[0], uuid) if found else None
        if found is None or copied is None or copied[1] is not None:
            return None
        base = json.loads(copied[2])
        patch = {"set": {k: v for k, v in entry.items() if k not in base or base[k] != v},
                 "del": [k for k in base if k not in entry]}
        if _apply(base, patch) != entry:
            return None
        return found[0], copied[0], json.dumps(patch, ensure_ascii=False, separators=(",", ":"))

    def _summary(self, db: Any, project: str, sid: str, subpath: str, key: dict[str, Any],
                 added: list[dict[str, Any]], mtime: int) -> str | None:
        """The SDK's summary of a main transcript, folded over the entries just added."""
        if subpath or not added:
            return None
        try:
            from claude_agent_sdk import fold_session_summary
        except ImportError as exc:
            raise MissingExtra(f"session summaries ({exc})", "claude-agent-sdk") from exc
        held = next((summary for s, _, summary in storage.sessions(db, project) if s == sid),
                    None)
        prev = json.loads(held) if held is not None else None
        entries: Any = added  # the SDK's entries: JSON objects, as `_text` checked
        folded = dict(fold_session_summary(prev, {"project_key": project, "session_id": sid},
                                           entries))
        folded["mtime"] = mtime
        return json.dumps(folded, ensure_ascii=False, separators=(",", ":"))

    def _weave(self, db: Any, project: str, sid: str) -> None:
        main = storage.session(db, project, sid, "")
        if main is None:
            return
        lines = _entries(db, main[0])
        agents: dict[str, list[dict[str, Any]]] = {}
        keys: dict[str, int] = {}
        for k, sub in storage.subpaths(db, project, sid):
            agent = agent_of(sub)
            if agent is not None:
                agents[agent], keys[agent] = _entries(db, k), k
        source = None
        origin = forked(lines)
        if origin is not None and origin != sid:
            held = storage.session(db, project, origin, "")
            if held is not None:
                source = (origin, _entries(db, held[0]))
        woven: Woven = weave(self.loom, db, sid, lines, agents, source)
        storage.set_tree(db, main[0], woven.tree, woven.fork_ref, dumps(woven.fork_nodes),
                         woven.problem)
        for agent, tree in woven.agents.items():
            storage.set_tree(db, keys[agent], tree, None, None, None)


def _key(key: Any, *, subpath: bool = True) -> tuple[str, str, str]:
    """(project, session id, subpath or '') of a key, refused when it is no key."""
    if not isinstance(key, dict):
        raise InvalidInput("key", "expected {project_key, session_id[, subpath]}")
    project, sid, sub = key.get("project_key"), key.get("session_id"), key.get("subpath", "")
    for name, value in (("project_key", project), ("session_id", sid)):
        if not isinstance(value, str) or not value or len(value) > 1024:
            raise InvalidInput(f"key.{name}", "expected a string of 1 to 1024 characters")
    if not subpath:
        sub = ""
    elif "subpath" in key and (not isinstance(sub, str) or not sub or len(sub) > 1024):
        raise InvalidInput("key.subpath", "expected a string of 1 to 1024 characters, or none "
                           "for the main transcript")
    return str(project), str(sid), str(sub)


def _entries(db: Any, k: int) -> list[dict[str, Any]]:
    """A transcript's entries as appended (copied entries resolved)."""
    rows = storage.entries(db, k)
    bases: dict[int, dict[int, str]] = {}
    for _, _, bs, bq, _ in rows:
        if bs is not None and bq is not None:
            bases.setdefault(bs, {})[bq] = ""
    for bs, seqs in bases.items():
        bases[bs] = storage.entries_at(db, bs, list(seqs))
    out = []
    for _, _, bs, bq, text in rows:
        if bs is None or bq is None:
            out.append(json.loads(text))
        else:
            out.append(_apply(json.loads(bases[bs][bq]), json.loads(text)))
    return out


def _own_entries(db: Any, k: int) -> None:
    """Entries of other transcripts copied from this one, written whole (it goes)."""
    for other, seq, base_seq, patch in storage.based_on(db, k):
        base = storage.entries_at(db, k, [base_seq])[base_seq]
        whole = _apply(json.loads(base), json.loads(patch))
        storage.set_entry(db, other, seq, json.dumps(whole, ensure_ascii=False,
                                                     separators=(",", ":")))


def _apply(base: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in base.items() if k not in patch["del"]}
    out.update(patch["set"])
    return out
