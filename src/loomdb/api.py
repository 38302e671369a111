"""The composition root: `loomdb.Loom`, every operation loomdb offers behind one door.

The core `Loom` (loomdb.loom) stores and reads conversations and knows nothing of
models or file formats. This `Loom` adds the services on top of it: generation,
chat turns, compaction, context as a provider request, buffer documents
(`loom.buffer.<op>`), import, export, store copies and tree drawings. The CLI is
argument parsing and printing over these methods; the HTTP API and the MCP server
will be too. Heavy parts (model clients, tokenizers, parsers) load on first use, so
opening a store stays cheap.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TextIO

from .headish import Position
from .loom import Loom as CoreLoom
from .model import Node

if TYPE_CHECKING:
    from . import buffer as B
    from .agents.config import ToolsConfig
    from .chat import Turn
    from .front import Door
    from .front.agents import Agents
    from .front.collections import Collections
    from .front.documents import Documents
    from .front.forget import Forget, Gc
    from .front.links import References, Search
    from .front.runtime import Runtime
    from .front.shares import Shares
    from .generation import Generated, Stream
    from .interop.report import ImportReport, Outcome
    from .interop.watch import Watcher
    from .providers.config import ModelSpec, ProvidersConfig
    from .settings import Settings
    from .transfer import CopyReport
    from .treeview import TreeView
    from .users import Access

At = str | Position
Progress = Any  # (report, bytes read, total bytes) -> None; see interop.importer


class Buffer:
    """Buffer trees as documents (`loom.buffer.<op>`): see `loomdb.buffer`, imported by
    each operation on first use, so a command that never touches a buffer never loads
    it (importing it registers buffer trees' own way to generate)."""

    def __init__(self, loom: Loom) -> None:
        self._loom = loom

    def text(self, at: At) -> str:
        """The committed document at `at` (the path's text, joined)."""
        from . import buffer as B

        return B.text(self._loom, at)

    def document(self, at: At) -> B.Document:
        """The document with its pieces, draft and authorship spans."""
        from . import buffer as B

        return B.document(self._loom, at)

    def draft(self, at: At, *, strict: bool = True) -> str:
        """The draft of a session or view (`strict=False`: '' at any other point)."""
        from . import buffer as B

        return B.get_draft(self._loom, at, strict=strict)

    def set_draft(self, at: At, text: str) -> str:
        """Replace the draft of a session or view; returns it."""
        from . import buffer as B

        return B.set_draft(self._loom, at, text)

    def append_draft(self, at: At, text: str) -> str:
        """Add text at the end of the draft (atomically); returns the whole draft."""
        from . import buffer as B

        return B.append_draft(self._loom, at, text)

    def commit(self, at: At, *, author: str | None = None) -> Node | None:
        """The draft as a node after the ref's head, the ref moved; None when empty."""
        from . import buffer as B

        return B.commit_draft(self._loom, at, author=author)

    def edit(self, at: At, start: int, end: int, text: str, *,
             author: str | None = None) -> list[Node]:
        """Replace `document.text[start:end]` by new versions of the nodes it touches."""
        from . import buffer as B

        return B.edit_span(self._loom, at, start, end, text, author=author)

    def alternatives(self, at: At, index: int | str) -> B.Alternatives:
        """What could fill a position of the path: branches and versions."""
        from . import buffer as B

        return B.alternatives(self._loom, at, index)

    def switch(self, at: At, node: At) -> B.Switched:
        """Show another branch or version through the ref at `at`."""
        from . import buffer as B

        return B.switch(self._loom, at, node)

    def diverge(self, a: At, b: At) -> B.Divergence:
        """Where two paths part."""
        from . import buffer as B

        return B.diverge(self._loom, a, b)


class Loom(CoreLoom):
    """A store of branching conversations with every service loomdb offers.

    `loom.as_(caller)` acts for a caller (see `loomdb.front`): `loom.as_(user).documents
    .commit(...)`. The Loom's own area objects (`loom.documents`, `loom.collections`,
    `loom.references`, `loom.search`, `loom.forget`, `loom.gc`, `loom.agents`,
    `loom.shares`) act for the local operator, who sees the whole store, as the CLI
    does."""

    _runtime: Runtime | None = None

    @property
    def runtime(self) -> Runtime:
        """How models and programs are reached (`loomdb.front.runtime`): given by the
        edge that opened the store; the default reaches the built-in models, with API
        keys from the store's settings."""
        if self._runtime is None:
            from .front.runtime import Runtime

            self._runtime = Runtime(settings=self.settings)
        return self._runtime

    @runtime.setter
    def runtime(self, value: Runtime) -> None:
        self._runtime = value
        self.__dict__.pop("_door", None)

    @property
    def operator(self) -> Access:
        """The local operator as a caller: sees and may use the whole store."""
        return self._door.caller

    def as_(self, caller: Access, *, runtime: Runtime | None = None) -> Door:
        """Every area's operations acting for `caller` (`users.Everyone`, the operator;
        `users.Owner`, a user), under `runtime` (default: this Loom's)."""
        from .front import Door

        return Door(caller, runtime or self.runtime)

    @cached_property
    def _door(self) -> Door:
        from .front import Door
        from .users import Everyone

        return Door(Everyone(self), self.runtime)

    def _with(self, config: ProvidersConfig | None,
              environ: Mapping[str, str] | None) -> Door:
        """The operator's door, with a call's own config or environment if it gives one."""
        if config is None and environ is None:
            return self._door
        from dataclasses import replace

        rt = self.runtime if environ is None else self.runtime.with_environ(environ)
        return self.as_(self.operator, runtime=replace(rt, config=config or rt.config))

    def _environ(self, environ: Mapping[str, str] | None) -> Mapping[str, str]:
        """Where a call's API keys are read: its own, else the runtime's (settings)."""
        return self.runtime.environ if environ is None else environ

    @property
    def documents(self) -> Documents:
        """Versioned documents (`loomdb.front.documents`), for the operator."""
        return self._door.documents

    @property
    def collections(self) -> Collections:
        """Collections of items pointing at any address, for the operator."""
        return self._door.collections

    @property
    def references(self) -> References:
        """Links between any two addresses, and backlinks, for the operator."""
        return self._door.references

    @property
    def search(self) -> Search:
        """Search by words or meaning: `loom.search("words", mode="hybrid")`."""
        return self._door.search

    @property
    def forget(self) -> Forget:
        """Delete, redact, and the record of forgetting, for the operator."""
        return self._door.forget

    @property
    def gc(self) -> Gc:
        """Garbage collection of contents and blobs nothing reachable uses."""
        return self._door.gc

    @property
    def agents(self) -> Agents:
        """Tool calls waiting for a person: list, approve, deny."""
        return self._door.agents

    @property
    def shares(self) -> Shares:
        """Read-only share links to branches: make, list, revoke, open."""
        return self._door.shares

    @cached_property
    def buffer(self) -> Buffer:
        """Buffer-mode operations: drafts, commits, span edits, branches."""
        return Buffer(self)

    # == models ======================================================================
    def generate(
        self,
        at: At,
        *,
        models: Sequence[str] = (),
        n: int = 1,
        max_tokens: int | None = None,
        stream: Stream | None = None,
        config: ProvidersConfig | None = None,
        environ: Mapping[str, str] | None = None,
        keep_partial: bool = False,
        options: dict[str, Any] | None = None,
        auto_compact: bool = True,
    ) -> Generated:
        """N alternatives per model at `at` as sibling nodes with provenance; a session
        moves to the first (buffer trees commit their draft first). Then, when the
        session moved and its options ask for it, the thread is compacted."""
        return self._with(config, environ).nodes.generate(
            at, models=models, n=n, max_tokens=max_tokens, stream=stream,
            keep_partial=keep_partial, options=options, auto_compact=auto_compact)

    def chat_session(self, at: str | None = None, session: str | None = None) -> str:
        """The session a chat extends: `at` if it names one, else one forked there; with
        no `at`, `session` or a fresh name (made with a new tree on the first turn)."""
        from .chat import start

        return start(self, at, session)

    def chat_turn(
        self,
        session: str,
        text: str,
        *,
        model: str | None = None,
        system: str | None = None,
        max_tokens: int | None = None,
        stream: Stream | None = None,
        config: ProvidersConfig | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Turn:
        """One turn: `text` appended to `session` (made if new), the answer generated."""
        from .chat import turn

        return turn(self, session, text, model=model, system=system, max_tokens=max_tokens,
                    stream=stream, config=config, environ=self._environ(environ))

    def compact(
        self,
        at: At,
        *,
        keep: int = 2,
        model: str | None = None,
        config: ProvidersConfig | None = None,
        environ: Mapping[str, str] | None = None,
        max_tokens: int | None = None,
    ) -> Node:
        """Summarize all but the newest `keep` turns (in at most `max_tokens`, default
        half the tokens they take) into a compaction node; a session named as `at`
        moves to it. NotCompacted, nothing written, when it would not be shorter."""
        from .compaction import compact

        return compact(self, at, keep=keep, model=model, config=config,
                       environ=self._environ(environ), max_tokens=max_tokens)

    def maybe_compact(
        self, at: At, *, config: ProvidersConfig | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> Node | None:
        """Compact when the thread's options ask for it and it is past the threshold."""
        from .compaction import maybe_compact

        return maybe_compact(self, at, config=config, environ=self._environ(environ))

    def request(
        self,
        at: At,
        *,
        format: str = "normalized",
        model: str | None = None,
        budget: int | None = None,
        strategy: str = "truncate-middle",
        options: dict[str, Any] | None = None,
        config: ProvidersConfig | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """The context at `at` as a request body: normalized, openai, anthropic or
        completion; with `budget`, fitted to it (`strategy`) with `tokens` added. The
        context is what a model is sent there (`agents.threads.context_at`: a persona's
        system prompt, a subagent's inherited parent path), the same on every edge."""
        return self._with(config, environ).nodes.context(
            at, format=format, model=model, budget=budget, strategy=strategy, options=options)

    def models(self, config: ProvidersConfig | None = None) -> list[ModelSpec]:
        """Every model alias known: the built-ins and those of the providers config."""
        from .providers.config import builtin_models

        known = dict(builtin_models())
        if config is not None:
            known.update(config.models)
        return list(known.values())

    # == files =======================================================================
    def import_file(
        self,
        path: str | os.PathLike[str],
        format: str = "auto",
        *,
        stop_on_error: bool = False,
        progress: Progress | None = None,
        files: str | os.PathLike[str] | None | Literal["beside"] = "beside",
        in_unit: Callable[[Outcome], None] | None = None,
    ) -> ImportReport:
        """Import every conversation of an export file, one transaction each.

        `files`: where files the export names (a dataset's images) may be read from:
        "beside" (its own folder), another folder, or None (none: an upload). `in_unit`
        runs inside each conversation's transaction with what it wrote."""
        from .agents.subagents import record_imported
        from .interop.files import BESIDE
        from .interop.importer import import_file

        return import_file(self, path, format, stop_on_error=stop_on_error, progress=progress,
                           on_spawn=lambda spawned: record_imported(self, spawned),
                           files=BESIDE if files == "beside" else files, in_unit=in_unit)

    def watcher(self, folder: str | os.PathLike[str], format: str = "auto") -> Watcher:
        """A follower of a folder of agent session files: each `step()` imports the
        files that changed (see `loomdb.interop.watch`); `format` an agent format's
        name, or "auto" (each file's lines say)."""
        from .agents.subagents import record_imported
        from .interop.watch import Watcher

        return Watcher(self, folder, on_spawn=lambda spawned: record_imported(self, spawned),
                       format=format)

    def export(
        self, out: TextIO, *, target: str | None = None, format: str = "json",
        paths: str = "leaves", cwd: str | None = None,
    ) -> int:
        """Write one tree (`target`) or every tree to a text stream; returns the count.
        `cwd`: the project folder a coding agent's session names (claude-code, codex, pi)."""
        from .interop.export import export

        return export(self, out, target=target, format=format, paths=paths, cwd=cwd)

    def export_file(
        self, path: str | os.PathLike[str], *, target: str | None = None,
        format: str = "json", paths: str = "leaves", cwd: str | None = None,
    ) -> int:
        """`export` into a file, atomically (renamed into place when complete)."""
        from .interop.export import export_file

        return export_file(self, path, target=target, format=format, paths=paths, cwd=cwd)

    def copy_to(self, target: CoreLoom, *, force: bool = False) -> CopyReport:
        """Copy this whole store into `target` (verified there before it commits)."""
        from .transfer import copy_store as _copy

        return _copy(self, target, force=force)

    # == drawing =====================================================================
    def tree_view(self, name: str) -> TreeView:
        """A tree's shape for drawing: children, versions, refs and flags per node."""
        from .treeview import tree_view

        return tree_view(self, name)


def _settings(settings: Settings | None) -> Settings:
    """The settings given, else the process's environment read now: `loomdb.open` and
    `loomdb.copy_store` are the library's entry points, an edge like the CLI."""
    if settings is not None:
        return settings
    from .settings import Settings

    return Settings.from_environ(os.environ)


def open(db: str | Path | None = None, *, settings: Settings | None = None,  # noqa: A001 - mirrors sqlite3.connect
         **options: Any) -> Loom:
    """Open the store at a folder or URL (default: $LOOMDB_URL, $LOOMDB_HOME, ./.loomdb).

    Without `settings` the process's environment is read once, here (`loomdb.settings`:
    the default store, SQLite's durability, a PostgreSQL store's blobs, API keys);
    `settings=Settings()` opens a store that sees no environment at all."""
    return Loom.open(db, settings=_settings(settings), **options)


def copy_store(source: str, target: str, *, force: bool = False,
               partitions: int = 0, settings: Settings | None = None) -> CopyReport:
    """Copy the whole store at `source` into the one at `target` (`loomdb migrate`);
    `partitions` > 0 splits a new PostgreSQL target's per-tree tables by tree id.
    `settings` as for `open`."""
    from .store.partitions import with_partitions

    given = _settings(settings)
    with Loom.open(source, settings=given) as src, \
            Loom.open(with_partitions(target, partitions), settings=given) as dst:
        return src.copy_to(dst, force=force)


def load_providers(path: str | Path | None = None) -> ProvidersConfig:
    """The model aliases of a providers.toml (None: the built-ins only)."""
    from .providers.config import load_config

    return load_config(path)


def load_tools(path: str | Path | None = None) -> ToolsConfig:
    """The programs and MCP servers of a tools.toml an agent's turn may run (None or a
    missing file: none)."""
    from .agents.config import load_tools as load

    return load(path)


__all__ = ["Buffer", "Loom", "copy_store", "load_providers", "load_tools", "open"]
