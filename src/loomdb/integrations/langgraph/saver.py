"""`LoomSaver` and `AsyncLoomSaver`: LangGraph's checkpointer on a loomdb store.

    with LoomSaver.from_conn_string("./store") as saver:          # or a postgresql:// URL
        graph = builder.compile(checkpointer=saver)

    async with AsyncLoomSaver.from_conn_string(url) as saver: ...

Every capability of `BaseCheckpointSaver` (langgraph-checkpoint 4.x), in both forms:
put, put_writes, get_tuple, list, delete_thread, and delete_for_runs, copy_thread and
prune. A checkpoint is one row: the checkpoint without its values and its metadata
(written by the saver's serializer), and one reference per channel value:

* a message channel (`messages`, or those named by `message_channels`) holding a list
  of LangChain messages: the node at the tip of the list in the thread's tree
  (`paths.py`): a step stores only its new messages, and a checkpoint updated in the
  past is a branch of the tree, its line of checkpoints a new session ref
  (`lg/<thread>/fork-N`; the first line is `lg/<thread>`);
* any other value: its serialized bytes, inline when small, else stored once per
  thread under their digest (`lg_blobs`): a value that does not change is not
  written again, and two checkpoints holding the same value share it.

Pending writes are kept exactly as `put_writes` was given them, by checkpoint,
namespace, task and index. The async methods run the same code in a worker thread (a
loomdb store is synchronous; its connections belong to the thread that uses them).
"""

from __future__ import annotations

import asyncio
import builtins
import hashlib
import zlib
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import asynccontextmanager, contextmanager
from typing import TYPE_CHECKING, Any

import ormsgpack
from langchain_core.messages import BaseMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import (
    WRITES_IDX_MAP,
    BaseCheckpointSaver,
    ChannelVersions,
    Checkpoint,
    CheckpointMetadata,
    CheckpointTuple,
    get_checkpoint_id,
    get_serializable_checkpoint_metadata,
    writes_sort_key,
)
from langgraph.checkpoint.serde.base import SerializerProtocol

from ...model import now
from ...store.areas import Unit
from . import compact, storage
from .area import LANGGRAPH
from .messages import is_messages
from .paths import Paths, Thread
from .refs import Branches

if TYPE_CHECKING:
    from ...api import Loom

#: values whose serialized bytes are at most this long stay in the row that uses them
INLINE = 64
_PAGE = 100


class _Saver(BaseCheckpointSaver[int]):
    """What both savers share (see the module docstring)."""

    def __init__(self, loom: Loom, *, serde: SerializerProtocol | None = None,
                 message_channels: Sequence[str] = ("messages",)) -> None:
        super().__init__(serde=serde)
        self.loom = loom
        self.message_channels = frozenset(message_channels)
        self.paths = Paths(loom, self.serde)
        self.branches = Branches(loom)

    # -- put ------------------------------------------------------------------------------
    def put(self, config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata,
            new_versions: ChannelVersions) -> RunnableConfig:
        conf = config["configurable"]
        thread_id, ns = str(conf["thread_id"]), str(conf.get("checkpoint_ns", ""))
        parent_id = conf.get("checkpoint_id")
        rest: dict[str, Any] = dict(checkpoint)
        values: dict[str, Any] = rest.pop("channel_values")
        cid = str(rest.pop("id"))
        md = get_serializable_checkpoint_metadata(config, metadata)
        with self.loom.unit(LANGGRAPH) as db:
            key, tree = storage.ensure_thread(db, thread_id, now(), lock=True)
            thread = Thread(key, thread_id, tree)
            parent = storage.checkpoint(db, key, ns, parent_id) if parent_id else None
            before = _unpack(parent[3])[4] if parent else {}
            bases = before or self._above(db, key, ns, md)
            refs: dict[str, Any] = {}
            added: builtins.list[tuple[str, BaseMessage]] = []
            for channel, value in values.items():
                had = before.get(channel)
                if had is not None and channel not in new_versions:
                    refs[channel] = had  # unchanged since the parent: the same reference
                elif channel in self.message_channels and is_messages(value):
                    base = bases.get(channel)
                    tip = base[1] if base is not None and base[0] == "p" else None
                    refs[channel] = ["p", *self.paths.store(db, thread, value, tip, added)]
                else:
                    refs[channel] = self._value(db, key, value)
            if added and parent is not None:
                self._compact(db, key, ns, parent[0], before, added)
            cp_type, cp = self.serde.dumps_typed(rest)
            md_type, md_bytes = self.serde.dumps_typed(md)
            body = _pack([cp_type, cp, md_type, md_bytes, refs])
            branch = None
            if ns == "":
                branch = self.branches.follow(db, thread, parent_id, parent[2] if parent else None,
                                              cid, self._tip(before), self._tip(refs))
            run_id = md.get("run_id")
            storage.put_checkpoint(db, key, ns, (cid, parent_id, branch, body),
                                   str(run_id) if run_id is not None else None)
        return {"configurable": {"thread_id": thread_id, "checkpoint_ns": ns,
                                 "checkpoint_id": cid}}

    def _above(self, db: Unit, key: int, ns: str, md: Any) -> dict[str, Any]:
        """The references of the checkpoint a subgraph's first checkpoint runs under
        (`metadata.parents`), so its messages continue the path they share."""
        parents = md.get("parents") if isinstance(md, dict) else None
        if not ns or not isinstance(parents, dict):
            return {}
        outer = ns.rpartition("|")[0]
        pid = parents.get(outer)
        row = storage.checkpoint(db, key, outer, pid) if isinstance(pid, str) else None
        if row is None:
            return {}
        return {c: r for c, r in _unpack(row[3])[4].items() if r[0] == "p"}

    def _tip(self, refs: dict[str, Any]) -> str | None:
        """The tip the thread's session follows: its first message channel's."""
        for channel in sorted(self.message_channels):
            ref = refs.get(channel)
            if ref is not None and ref[0] == "p":
                tip: str | None = ref[1]
                return tip
        return None

    def _value(self, db: Unit, key: int, value: Any) -> builtins.list[Any]:
        type_, data = self.serde.dumps_typed(value)
        if len(data) <= INLINE:
            return ["i", type_, data]
        digest = hashlib.sha256(type_.encode() + b"\0" + data).digest()[:16]
        storage.put_blob(db, key, digest, type_, data)
        return ["h", digest]

    def _compact(self, db: Unit, key: int, ns: str, parent_id: str, before: dict[str, Any],
                 added: builtins.list[tuple[str, BaseMessage]]) -> None:
        """The parent's stored values and pending writes that hold the messages this put
        added, rewritten to name their nodes (see `compact`)."""
        refs = [r for r in before.values() if r[0] == "h"]
        refs += [r for w in storage.writes(db, key, ns, [parent_id])
                 if (r := ormsgpack.unpackb(w[5]))[0] == "h"]
        found = storage.blobs(db, key, sorted({r[1] for r in refs}))
        messages = dict(added)
        for digest, (type_, data) in found.items():
            if type_.startswith(compact.PREFIX):
                continue
            value = self.serde.loads_typed((type_, data))
            try:
                skeleton, count = compact.skeleton(value, added)
            except compact.Refused:
                continue
            if not count:
                continue
            short_type, short = self.serde.dumps_typed(skeleton)
            back = compact.inflate(self.serde.loads_typed((short_type, short)), messages)
            if len(short) < len(data) and self.serde.dumps_typed(back) == (type_, data):
                storage.compact_blob(db, key, digest, compact.PREFIX + short_type, short)

    # -- put_writes -------------------------------------------------------------------------
    def put_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]],
                   task_id: str, task_path: str = "") -> None:
        conf = config["configurable"]
        thread_id, ns = str(conf["thread_id"]), str(conf.get("checkpoint_ns", ""))
        cid = str(conf["checkpoint_id"])
        with self.loom.unit(LANGGRAPH) as db:
            key, _ = storage.ensure_thread(db, thread_id, now())
            for i, (channel, value) in enumerate(writes):
                idx = WRITES_IDX_MAP.get(channel, i)
                ref = ormsgpack.packb(self._value(db, key, value))
                storage.put_write(db, key, ns, (cid, task_id, idx, channel, task_path, ref),
                                  replace=idx < 0)

    # -- reading ----------------------------------------------------------------------------
    def get_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        conf = config["configurable"]
        thread_id, ns = str(conf["thread_id"]), str(conf.get("checkpoint_ns", ""))
        cid = get_checkpoint_id(config)
        with self.loom.unit(LANGGRAPH) as db:
            found = storage.thread(db, thread_id)
            if found is None:
                return None
            key = found[0]
            row = storage.checkpoint(db, key, ns, cid) if cid else storage.latest(db, key, ns)
            if row is None:
                return None
            return self._tuples(db, thread_id, key, [(ns, row)])[0]

    def list(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
             before: RunnableConfig | None = None, limit: int | None = None,
             ) -> Iterator[CheckpointTuple]:
        conf = config["configurable"] if config else {}
        ns = conf.get("checkpoint_ns")
        only = get_checkpoint_id(config) if config else None
        cursor = get_checkpoint_id(before) if before else None
        left = limit
        with self.loom.unit(LANGGRAPH) as db:
            if config is not None:
                found = storage.thread(db, str(conf["thread_id"]))
                threads = [(found[0], str(conf["thread_id"]))] if found else []
            else:
                threads = storage.all_threads(db)
        for key, thread_id in threads:
            after: str | None = None
            while left is None or left > 0:
                with self.loom.unit(LANGGRAPH) as db:
                    rows = storage.checkpoints(db, key, ns, cursor, after, _PAGE)
                    if not rows:
                        break
                    after = rows[-1][1][0]
                    keep = [(n, r) for n, r in rows if (only is None or r[0] == only)
                            and (not filter or _matches(self._metadata(r), filter))]
                    tuples = self._tuples(db, thread_id, key, keep[:left] if left else keep)
                yield from tuples
                if left is not None:
                    left -= len(tuples)
                if len(rows) < _PAGE:
                    break

    def _metadata(self, row: storage.Row) -> Any:
        fields = _unpack(row[3])
        return self.serde.loads_typed((fields[2], fields[3]))

    def _tuples(self, db: Unit, thread_id: str, key: int,
                rows: Sequence[tuple[str, storage.Row]]) -> builtins.list[CheckpointTuple]:
        """The checkpoint tuples of rows, their values and writes read in one go."""
        unpacked = [(ns, row, _unpack(row[3])) for ns, row in rows]
        by_ns: dict[str, builtins.list[str]] = {}
        for ns, row, _ in unpacked:
            by_ns.setdefault(ns, []).append(row[0])
        pending: dict[tuple[str, str], builtins.list[storage.WriteRow]] = {}
        for ns, ids in by_ns.items():
            for w in storage.writes(db, key, ns, ids):
                pending.setdefault((ns, w[0]), []).append(w)
        wanted = {r[1] for *_, f in unpacked for r in f[4].values() if r[0] == "h"}
        write_refs = {w[5]: ormsgpack.unpackb(w[5]) for ws in pending.values() for w in ws}
        wanted |= {r[1] for r in write_refs.values() if r[0] == "h"}
        blobs = self._blobs(db, key, wanted)
        out: builtins.list[CheckpointTuple] = []
        for ns, (cid, parent_id, _, _), (cp_type, cp, md_type, md, refs) in unpacked:
            checkpoint = self.serde.loads_typed((cp_type, cp))
            checkpoint["id"] = cid
            checkpoint["channel_values"] = {c: self._load(r, blobs) for c, r in refs.items()}
            writes = sorted(pending.get((ns, cid), []), key=lambda w: writes_sort_key(w[4], w[1], w[2]))
            out.append(CheckpointTuple(
                config={"configurable": {"thread_id": thread_id, "checkpoint_ns": ns,
                                         "checkpoint_id": cid}},
                checkpoint=checkpoint,
                metadata=self.serde.loads_typed((md_type, md)),
                parent_config={"configurable": {"thread_id": thread_id, "checkpoint_ns": ns,
                                                "checkpoint_id": parent_id}}
                if parent_id else None,
                pending_writes=[(w[1], w[3], self._load(write_refs[w[5]], blobs)) for w in writes],
            ))
        return out

    def _blobs(self, db: Unit, key: int, digests: set[bytes]) -> dict[bytes, Any]:
        """The values stored under these digests, read and inflated (see `compact`)."""
        found = storage.blobs(db, key, sorted(digests)) if digests else {}
        out: dict[bytes, Any] = {}
        short: dict[bytes, Any] = {}
        for digest, (type_, data) in found.items():
            if type_.startswith(compact.PREFIX):
                short[digest] = self.serde.loads_typed((type_[len(compact.PREFIX):], data))
            else:
                out[digest] = _Raw(type_, data)
        if short:
            nodes = set().union(*(compact.marks(v) for v in short.values()))
            messages = self.paths.by_id(sorted(nodes))
            for digest, skeleton in short.items():
                out[digest] = _Short(skeleton, messages)
        return out

    def _load(self, ref: builtins.list[Any], blobs: dict[bytes, Any]) -> Any:
        if ref[0] == "p":
            return self.paths.messages(ref[1])
        if ref[0] == "i":
            return self.serde.loads_typed((ref[1], ref[2]))
        held = blobs[ref[1]]
        if isinstance(held, _Short):
            return compact.inflate(held.skeleton, held.messages)
        return self.serde.loads_typed((held.type, held.data))

    # -- deleting and copying ---------------------------------------------------------------
    def delete_thread(self, thread_id: str) -> None:
        """Its checkpoints and writes, and its tree when no other thread shares it (a
        copy): then a loomdb forget of the tree, whose hook deletes the thread's rows in
        the same transaction. A shared tree loses only this thread's refs."""
        with self.loom.unit(LANGGRAPH) as db:
            found = storage.thread(db, str(thread_id))
            if found is None:
                return
            key, tree = found
            alone = tree is None or [k for k, _ in storage.threads_of_tree(db, tree)] == [key]
            if not alone or tree is None:
                branches = storage.branches(db, key)
                storage.delete_thread(db, key)
                self.branches.drop(str(thread_id), branches)
        if alone and tree is not None:
            self.loom.forget.delete_tree(tree, force=True,
                                         reason=f"LangGraph thread {thread_id} deleted")
        self.paths.forget()

    def delete_for_runs(self, run_ids: Sequence[str]) -> None:
        with self.loom.unit(LANGGRAPH) as db:
            found = storage.of_runs(db, [str(r) for r in run_ids]) if run_ids else []
            gone: dict[tuple[int, str], builtins.list[str]] = {}
            for key, ns, cid in found:
                gone.setdefault((key, ns), []).append(cid)
            for (key, ns), ids in gone.items():
                storage.delete_checkpoints(db, key, ns, ids)
            for key in {k for k, _ in gone}:
                self._sweep(db, key)

    def copy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        """Every checkpoint and write; the messages are not copied: the target's refs
        point into the source's tree, which both threads then share."""
        with self.loom.unit(LANGGRAPH) as db:
            found = storage.thread(db, str(source_thread_id))
            if found is None:
                return
            src, tree = found
            dst, had = storage.ensure_thread(db, str(target_thread_id), now())
            storage.copy_thread(db, src, dst)
            if had is None and tree is not None:
                storage.set_tree(db, dst, tree)
            self.branches.copy(db, str(source_thread_id), str(target_thread_id), src)

    def prune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        """`keep_latest`: the newest checkpoint of each namespace stays (the messages of
        the pruned ones stay in the tree, which is the conversation); `delete`: as
        `delete_thread`."""
        if strategy == "delete":
            for thread_id in thread_ids:
                self.delete_thread(thread_id)
            return
        if strategy != "keep_latest":
            raise ValueError(f"unknown prune strategy {strategy!r} (keep_latest or delete)")
        with self.loom.unit(LANGGRAPH) as db:
            for thread_id in thread_ids:
                found = storage.thread(db, str(thread_id))
                if found is None:
                    continue
                key = found[0]
                for ns in storage.namespaces(db, key):
                    storage.delete_checkpoints(db, key, ns, storage.older_than_latest(db, key, ns))
                self._sweep(db, key)

    def _sweep(self, db: Unit, key: int) -> None:
        """Delete the thread's stored values no checkpoint or write refers to any more."""
        used = {r[1] for body in storage.bodies(db, key) for r in _unpack(body)[4].values()
                if r[0] == "h"}
        used |= {r[1] for v in storage.write_values(db, key) if (r := ormsgpack.unpackb(v))[0] == "h"}
        unused = [d for d in storage.blob_digests(db, key) if d not in used]
        if unused:
            storage.delete_blobs(db, key, unused)

    # -- versions ---------------------------------------------------------------------------
    def get_next_version(self, current: int | None, channel: None = None) -> int:
        """1, 2, 3...: small integers (a checkpoint names its values, not their versions,
        so two branches may reuse a version number)."""
        if current is None:
            return 1
        if isinstance(current, str):  # written by another saver
            return int(current.split(".")[0]) + 1
        return int(current) + 1

    # -- async: the same, in a worker thread ---------------------------------------------------
    async def aget_tuple(self, config: RunnableConfig) -> CheckpointTuple | None:
        return await asyncio.to_thread(self.get_tuple, config)

    async def alist(self, config: RunnableConfig | None, *, filter: dict[str, Any] | None = None,
                    before: RunnableConfig | None = None, limit: int | None = None,
                    ) -> AsyncIterator[CheckpointTuple]:
        found = await asyncio.to_thread(
            lambda: list(self.list(config, filter=filter, before=before, limit=limit)))
        for item in found:
            yield item

    async def aput(self, config: RunnableConfig, checkpoint: Checkpoint,
                   metadata: CheckpointMetadata, new_versions: ChannelVersions) -> RunnableConfig:
        return await asyncio.to_thread(self.put, config, checkpoint, metadata, new_versions)

    async def aput_writes(self, config: RunnableConfig, writes: Sequence[tuple[str, Any]],
                          task_id: str, task_path: str = "") -> None:
        await asyncio.to_thread(self.put_writes, config, writes, task_id, task_path)

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, thread_id)

    async def adelete_for_runs(self, run_ids: Sequence[str]) -> None:
        await asyncio.to_thread(self.delete_for_runs, run_ids)

    async def acopy_thread(self, source_thread_id: str, target_thread_id: str) -> None:
        await asyncio.to_thread(self.copy_thread, source_thread_id, target_thread_id)

    async def aprune(self, thread_ids: Sequence[str], *, strategy: str = "keep_latest") -> None:
        await asyncio.to_thread(lambda: self.prune(thread_ids, strategy=strategy))


class LoomSaver(_Saver):
    """LangGraph's checkpointer on a loomdb store (see the module docstring)."""

    @classmethod
    @contextmanager
    def from_conn_string(cls, path_or_url: str, *, serde: SerializerProtocol | None = None,
                         message_channels: Sequence[str] = ("messages",)) -> Iterator[LoomSaver]:
        """A saver on the store at a folder or a `postgresql://` URL, closed at the end."""
        import loomdb

        loom = loomdb.open(path_or_url)
        try:
            yield cls(loom, serde=serde, message_channels=message_channels)
        finally:
            loom.close()


class AsyncLoomSaver(_Saver):
    """The same checkpointer, opened and closed as an async context manager (its async
    methods are what an async graph calls; the sync ones work too)."""

    @classmethod
    @asynccontextmanager
    async def from_conn_string(cls, path_or_url: str, *, serde: SerializerProtocol | None = None,
                               message_channels: Sequence[str] = ("messages",),
                               ) -> AsyncIterator[AsyncLoomSaver]:
        """A saver on the store at a folder or a `postgresql://` URL, closed at the end."""
        import loomdb

        loom = await asyncio.to_thread(loomdb.open, path_or_url)
        try:
            yield cls(loom, serde=serde, message_channels=message_channels)
        finally:
            await asyncio.to_thread(loom.close)


class _Raw:
    """A stored value's bytes, read as they are used (a value two rows share is
    read for each: each gets its own object, as from any other saver)."""

    __slots__ = ("data", "type")

    def __init__(self, type_: str, data: bytes) -> None:
        self.type, self.data = type_, data


class _Short:
    """A rewritten value and the messages it names, inflated as it is used."""

    __slots__ = ("messages", "skeleton")

    def __init__(self, skeleton: Any, messages: dict[str, BaseMessage]) -> None:
        self.skeleton, self.messages = skeleton, messages


#: a checkpoint row's body: [checkpoint type, bytes, metadata type, bytes, {channel:
#: reference}] in msgpack, deflated with a preset dictionary of the names every LangGraph
#: checkpoint repeats (half its size: the names are most of a small checkpoint). The
#: first byte says how; a shipped dictionary never changes (a new one is a new byte).
_DEFLATED_1 = 1
_WORDS_1 = b"".join((
    b"msgpack", b"\xa1v\x04\xa2ts\xd9 20", b"+00:00", b"channel_versions", b"versions_seen",
    b"updated_channels", b"__input__", b"__start__", b"branch:to:", b"messages", b"source",
    b"input", b"loop", b"update", b"fork", b"step", b"parents", b"run_id", b"\xa1p", b"\xa1h",
    b"\xa1i\xa4null", b"__interrupt__", b"__pregel_", b"checkpoint_ns", b"thread_id"))


def _pack(fields: list[Any]) -> bytes:
    out = zlib.compressobj(6, zlib.DEFLATED, -15, 9, zlib.Z_DEFAULT_STRATEGY, _WORDS_1)
    return bytes([_DEFLATED_1]) + out.compress(ormsgpack.packb(fields)) + out.flush()


def _unpack(body: bytes) -> list[Any]:
    """The fields `_pack` wrote."""
    if body[:1] != bytes([_DEFLATED_1]):
        raise ValueError(f"a checkpoint body of an unknown form ({body[:1]!r})")
    out = zlib.decompressobj(-15, _WORDS_1)
    fields: list[Any] = ormsgpack.unpackb(out.decompress(body[1:]) + out.flush())
    return fields


def _matches(metadata: Any, wanted: dict[str, Any]) -> bool:
    return isinstance(metadata, dict) and all(metadata.get(k) == v for k, v in wanted.items())
