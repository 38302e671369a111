"""Nodes for a caller (`loom.as_(caller).nodes`): read one and its relatives, append,
edit, overlay, the context a model is sent, generation, and the thread a page draws.
Every name is resolved once against what the caller sees; an operation then takes
the Position, never the text again."""

from __future__ import annotations

from collections.abc import Sequence
from threading import Event
from typing import TYPE_CHECKING, Any

from .. import shapes
from ..headish import Position
from ..loom import ContentLike
from ..model import Meta, Node
from ..storage_ops import storage
from .base import AreaDoor

if TYPE_CHECKING:
    from ..generation import Generated, Stream

#: the relatives of a node one can ask for
RELATIONS = ("path", "children", "siblings", "leaves", "versions")


class Nodes(AreaDoor):
    """Messages: each call resolves its names for the caller first."""

    def find(self, headish: str | Position) -> Position:
        """A name resolved against what the caller sees (NotFound as for an unknown
        name otherwise): what an edge holds on to before a long call (a stream)."""
        return self.sight.position(headish)

    def show(self, headish: str | Position) -> dict[str, Any]:
        """One node in full with its overlay: the one shape of `loomdb.shapes`."""
        node = self.loom.node(self.find(headish).node)
        return shapes.node_json(node, self.loom.meta(node.id))

    def get(self, headish: str | Position) -> Node:
        """The node a name shows."""
        return self.loom.node(self.find(headish).node)

    def path_json(self, headish: str | Position) -> list[dict[str, Any]]:
        """The path to a node, each node in the one shape (with its overlay)."""
        lm = self.loom
        return [shapes.node_json(n, lm.meta(n.id)) for n in lm.nodes(lm.path(self.find(headish)))]

    def related(self, headish: str | Position, relation: str) -> list[str]:
        """Node ids: the `path` from the root, the `children`, the `siblings`, the
        tree's `leaves`, or the `versions` of the node's slot."""
        from ..errors import check_choice

        check_choice("relation", relation, RELATIONS)
        pos, lm = self.find(headish), self.loom
        if relation == "path":
            return lm.path(pos)
        if relation == "children":
            return lm.children(pos)
        if relation == "siblings":
            return lm.siblings(pos)
        if relation == "leaves":
            return lm.leaves(pos.tree)
        return lm.versions(pos)

    def append(self, headish: str, content: ContentLike, *, role: str = "user",
               author: str | None = None, source: str | None = None,
               options: dict[str, Any] | None = None, expect: str | None = None) -> Node:
        """A message after `headish`; a session named there moves to it. With `expect`
        (a headish), a session that is no longer there is a RefConflict."""
        at = self.sight.at(headish)
        moved_from = self.find(expect).node if expect is not None else None
        extra: dict[str, Any] = {} if source is None else {"source": source}
        return self.loom.append(at, self.sight.content(content), role=role, author=author,
                                options=self.sight.options(options), expect=moved_from, **extra)

    def edit(self, headish: str, content: ContentLike, *, author: str | None = None) -> Node:
        """A new version of the node; what follows it stays attached. Through a session
        or view, that ref selects the new version."""
        return self.loom.edit(self.find(headish), self.sight.content(content), author=author)

    def overlay(self, headish: str, *, bookmark: str | None = None,
                tags: Sequence[str] | None = None, excluded: bool | None = None,
                pruned: bool | None = None) -> Meta:
        """Bookmark, set the tags of (exactly those), exclude or prune a node, in one
        transaction; answers its overlay."""
        lm = self.loom
        with self.sight.atomic():
            pos = self.find(headish)
            if bookmark is not None:
                lm.bookmark(pos, bookmark)
            if tags is not None:
                have = set(lm.meta(pos).tags)
                if gone := sorted(have - set(tags)):
                    lm.tag(pos, *gone, remove=True)
                if new := [t for t in tags if t not in have]:
                    lm.tag(pos, *new)
            if excluded is not None:
                lm.exclude(pos, on=excluded)
            if pruned is not None:
                lm.prune(pos, on=pruned)
            return lm.meta(pos)

    def bookmark(self, headish: str, label: str) -> Any:
        """A fixed, named label on a node (a bookmark ref); the label works as a headish."""
        return self.loom.bookmark(self.find(headish), label)

    def tag(self, headish: str, *tags: str, remove: bool = False) -> Meta:
        """Add (or `remove`) tags on a node; answers its overlay."""
        return self.loom.tag(self.find(headish), *tags, remove=remove)

    def context(self, headish: str | Position, *, format: str = "normalized",
                model: str | None = None, budget: int | None = None,
                strategy: str = "truncate-middle",
                options: dict[str, Any] | None = None) -> dict[str, Any]:
        """What a model is sent at `headish` (`agents.threads.context_at`: a persona's
        system prompt, a subagent's inherited parent path), normalized or as an
        `openai`, `anthropic` or `completion` request body; with `budget`, fitted to it."""
        from ..agents.threads import context_at
        from ..formats import request

        pos, rt = self.find(headish), self.runtime
        return request(self.loom, pos, format=format, model=model, budget=budget,
                       strategy=strategy, options=options, config=rt.config,
                       environ=rt.environ, normalized=context_at(self.loom, pos, options))

    def compaction(self, headish: str | Position) -> dict[str, Any] | None:
        """What the compaction at `headish` did (model, tokens before and after, turns
        summarized, duration), or None when that node is not a compaction."""
        row = storage(self.loom).compaction(self.find(headish).node)
        return None if row is None else dict(row)

    def generate(self, headish: str | Position, *, models: Sequence[str] = (), n: int = 1,
                 max_tokens: int | None = None, stream: Stream | None = None,
                 keep_partial: bool = False, options: dict[str, Any] | None = None,
                 auto_compact: bool = True, stop: Event | None = None) -> Generated:
        """N alternatives per model at `headish` as sibling nodes with provenance; a
        session moves to the first (a buffer tree commits its draft first), then, when
        its options ask for it, the thread is compacted. A runtime that serves callers
        over HTTP (`Runtime.served_only`) lets them name only the operator's served
        aliases, within the limits; the in-process model answers one call at a time.
        `stop` (set by whoever streams: a client that went away) ends the stream at
        its next token and keeps what was written, marked incomplete."""
        from .. import buffer  # noqa: F401  (registers buffer trees' own way to generate)
        from ..compaction import maybe_compact
        from ..generation import generate, generate_at

        pos, rt, lm = self.find(headish), self.runtime, self.loom
        served = None
        if rt.served_only:
            from ..providers.served import check_request

            check_request(models, n, lm.context(pos, options)["options"], rt.config,
                          rt.limits or lm.limits)
            served = (rt.limits or lm.limits).answer_tokens
        if stop is not None and stream is not None:
            stream, keep_partial = _stoppable(stream, stop), True
        common: dict[str, Any] = dict(models=models, n=n, max_tokens=max_tokens,
                                      stream=stream, config=rt.config, environ=rt.environ,
                                      keep_partial=keep_partial, options=options,
                                      served=served)
        if storage(lm).tree_settings(pos.tree).mode == "buffer":
            result = generate_at(lm, pos, **common)
        else:
            from ..agents.threads import shared_path, thread_context

            # a fork of a shared branch answers with the shared path before its own
            ctx = thread_context(lm, pos, options) if shared_path(lm, pos.tree) else None
            result = generate(lm, pos, lock=rt.model_lock, context=ctx, **common)
        if auto_compact and result.moved and result.session:
            maybe_compact(lm, result.session, config=rt.config, environ=rt.environ)
        return result

    def models(self) -> dict[str, Any]:
        """The models a caller may ask for (over HTTP: the operator's served aliases),
        each with its provider and model id, and the one used when none is named."""
        from ..providers.config import (
            ProvidersConfig,
            builtin_models,
            default_model,
            resolve_model,
        )
        from ..providers.served import served

        config = self.runtime.config or ProvidersConfig(models=builtin_models())
        names = served(config) if self.runtime.served_only else tuple(sorted(config.models))
        default = default_model(config, self.runtime.environ).name
        specs = [resolve_model(n, config) for n in names]
        return {"models": [{"name": n, "provider": s.kind, "model": s.model}
                           for n, s in zip(names, specs, strict=True)],
                "default": default if default in names else None}

    def logprobs(self, headish: str | Position) -> tuple[Node, list[dict[str, Any]]]:
        """Each generated token of the node (probability and top alternatives), checked
        against the chain first."""
        from ..logprobs import of_node, rows

        node = self.get(headish)
        return node, rows(of_node(self.loom, node))

    def thread(self, headish: str | Position, *, before: str | None = None,
               limit: int | None = None) -> dict[str, Any]:
        """The path to `headish` as a page draws it, one page at a time: the head, its
        tree and ref, and the last `limit` messages before `before` (a message on the
        path; none: up to the head), each with its overlay, the branches beside it and
        the versions of its slot (`content` as stored: an edge renders it), and
        whether older messages are left (`has_more`; see `front.threadpage`)."""
        from .threadpage import PAGE, page

        pos = self.find(headish)
        out = page(self.loom, pos, before, PAGE if limit is None else limit,
                   self.sight.visible)
        return {**out, "tree": self.sight.tree(pos.tree).to_json()}

    def blob(self, headish: str | Position, ref: str) -> tuple[bytes, str]:
        """The bytes and media type of a blob the node's content holds (an image, a
        document): a caller reaches a blob through a message they see, and only one
        that message names (anything else is unknown, as an unknown blob is)."""
        from ..content import blob_refs
        from ..errors import NotFound

        node = self.get(headish)
        if ref not in blob_refs(node.content):
            raise NotFound("blob", ref[:80])
        st = storage(self.loom)
        known = st.blob_known(ref)
        if known is None:
            raise NotFound("blob", ref[:80])
        return self.loom.blob(ref), known[1]


__all__ = ["RELATIONS", "Nodes"]


def _stoppable(stream: Stream, stop: Event) -> Stream:
    """`stream`, breaking the model's stream once `stop` is set (the provider then keeps
    what came as an incomplete answer)."""
    from ..providers.base import StreamBroken

    def relay(job: int, index: int, delta: str) -> None:
        if stop.is_set():
            raise StreamBroken(InterruptedError("stopped by the caller"))
        stream(job, index, delta)

    return relay
