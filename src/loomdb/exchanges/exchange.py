"""One exchange, without HTTP and without a wire: ask the model, record the answer.

A wire module (`openai_chat.py`, `responses.py`, `anthropic_messages.py`; listed in
`wires.py`) parses its request body into one internal request, an `Exchange`: the
messages as loomdb's blocks with their path keys (`messages.py`), what the model is
sent (`ctx`: messages and options in loomdb's neutral terms), how many answers, and
the request itself for provenance. `Gateway.run` asks the model and records the
exchange, giving one internal result (`Result`: the answers and where they were
recorded); `Gateway.stream` does the same while the model's stream goes out as one
internal event stream (`events.py`). The wire turns the result or the events into its
own answer or chunks. Nothing here knows a wire's shapes.

`Gateway` holds what every request shares (the Loom, the providers config, a lock that
serializes recording in this process). The model sees the request's own messages (the
client's view of the conversation is the one it asked about), fitted into the model's
window when the alias names one (`window.py`); the store sees the same messages as a
path, whole. Recording happens only after the model answered, in one transaction
(`record.py`), so a failed call writes nothing. What the match needs of the request
alone (the digests of its last prefixes, a hash of the whole history) is computed on
another thread while the model is asked (`Gateway.complete`): only recording needs it,
so none of it stands before the request goes to the model, and the hashing, which
releases the interpreter's lock, overlaps the wait for the answer.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..limits import Limits
from ..model import new_id
from ..providers.config import ModelSpec, ProvidersConfig, builtin_models
from ..providers.served import served, served_alias
from . import paths
from .messages import Messages, check_size
from .record import Recorded, record

if TYPE_CHECKING:
    from ..loom import Loom
    from ..providers.base import Client, Completion, StreamCallback
    from .events import Emit

MAX_N = 16
ClientFactory = Callable[[ModelSpec], "Client"]


@dataclass
class Exchange:
    """One parsed request, whatever its wire: ready to send and to record."""

    #: the name the client gave its model (answers carry it back)
    model: str
    spec: ModelSpec
    client: Client
    msgs: Messages
    digests: paths.Digests
    #: what the model is sent: {"messages", "options"} in loomdb's neutral terms
    ctx: dict[str, Any]
    n: int
    #: the request without its messages, kept in the answers' provenance
    params: dict[str, Any]
    ids: list[str]
    created: int
    logprobs: bool = False
    #: where the request's messages already are (a continued response), else matched
    after: paths.Hit | None = None
    #: what the wire keeps for its answer (a previous response id, stream options...)
    wire: dict[str, Any] = field(default_factory=dict)
    #: the answer's length was lowered to fit the model's window (`window.py`)
    capped: bool = False
    #: the match's digests being computed while the model is asked (`Gateway.complete`)
    warm: Future[None] | None = None

    def stop_reason(self, answer: Completion) -> str:
        """An answer's stop reason as the client is told it (Anthropic's words): an
        answer that ran into the length the gateway lowered for the model's window, not
        into the client's own `max_tokens`, ended its turn (its node keeps the model's
        own reason)."""
        reason = answer.stop_reason or "end_turn"
        return "end_turn" if self.capped and reason == "max_tokens" else reason


@dataclass
class Result:
    """One exchange done: the answers, and where they were recorded."""

    answers: list[Completion]
    recorded: Recorded


class Gateway:
    """What the gateway's endpoints share (see the module docstring)."""

    def __init__(
        self,
        loom: Loom,
        *,
        config: ProvidersConfig | None = None,
        environ: Mapping[str, str] | None = None,
        clients: ClientFactory | None = None,
        limits: Limits | None = None,
    ) -> None:
        self.loom = loom
        self.limits = limits or loom.limits
        self.config = config or ProvidersConfig(models=builtin_models())
        self.environ = environ
        self._clients = clients
        self._cache: dict[str, Client] = {}
        self.lock = threading.Lock()

    def models(self) -> list[ModelSpec]:
        """The models served (see `loomdb.providers.served`)."""
        return [self.config.models[name] for name in served(self.config)]

    def client(self, spec: ModelSpec) -> Client:
        if spec.name not in self._cache:
            if self._clients is not None:
                self._cache[spec.name] = self._clients(spec)
            else:
                from ..providers.clients import client_for

                self._cache[spec.name] = client_for(
                    spec, environ=self.environ, blob_reader=self.loom.blob)
        return self._cache[spec.name]

    def spec(self, name: Any) -> ModelSpec:
        """The served alias a client's model name stands for: the alias itself, or the
        one the operator's name patterns map it to (`[server.names]`); anything else
        is a NotFound naming what is served."""
        if not isinstance(name, str) or not name:
            raise InvalidInput("model", "a model name is required")
        return served_alias(name, self.config)

    def exchange(
        self, body: Mapping[str, Any], msgs: Messages, options: dict[str, Any], *,
        n: int = 1, sent: list[dict[str, Any]] | None = None, logprobs: bool = False,
        after: paths.Hit | None = None, params: dict[str, Any] | None = None,
        forward: bytes | None = None,
    ) -> Exchange:
        """The internal request for converted messages and options; `sent` replaces
        what the model sees when it differs from them (a continued response: the
        path's context); `forward`, the client's own body as a recording proxy sends
        it upstream (`ctx["forward"]`: the bytes, not re-encoded)."""
        spec = self.spec(body.get("model"))
        most = min(MAX_N, self.limits.alternatives)
        if type(n) is not int or not 1 <= n <= most:
            raise InvalidInput("n", f"must be an integer from 1 to {most}")
        check_size(msgs, self.loom.max_content_bytes)
        ctx: dict[str, Any] = {"messages": msgs.sent() if sent is None else sent,
                               "options": options}
        if forward is not None:
            ctx["forward"] = forward
        if params is None:
            params = {k: v for k, v in body.items() if k != "messages"}
        return Exchange(
            str(body["model"]), spec, self.client(spec), msgs,
            paths.Digests(lambda: msgs.keys),
            ctx, n, params, [new_id() for _ in range(n)], int(time.time()), logprobs, after,
        )

    def complete(self, ex: Exchange, stream: StreamCallback | None = None) -> list[Completion]:
        """Ask the model; a ProviderError passes up untouched (nothing is written)."""
        from .window import fitted

        pending = ex.msgs.blobs  # the request's media, stored only with the exchange

        def blob(ref: str) -> bytes:
            return pending[ref][0] if ref in pending else self.loom.blob(ref)

        if ex.after is None and ex.warm is None:  # the match's digests, meanwhile
            ex.warm = _WARMER.submit(_warm, ex.digests)
        ctx = fitted(ex.ctx, ex.spec)
        ex.capped = ctx["options"].get("max_tokens") != ex.ctx["options"].get("max_tokens")
        answers = ex.client.complete(ctx, n=ex.n, stream=stream, blob_reader=blob,
                                     served=self.served(ctx))
        if len(answers) != ex.n:
            raise InvalidInput("n", f"the model gave {len(answers)} answers, not {ex.n}")
        return answers

    def served(self, ctx: Mapping[str, Any]) -> int:
        """Every gateway caller is over HTTP: its provider body is held to the allow-list
        (`providers.served.served_body`), its answer to the request's own maximum."""
        own = (ctx.get("options") or {}).get("max_tokens")
        return own if type(own) is int and own > 0 else self.limits.answer_tokens

    def record(self, ex: Exchange, answers: list[Completion], session: str | None) -> Recorded:
        if ex.warm is not None:  # the digests are the exchange's again (or its error)
            ex.warm.result()
        with self.lock:
            done = record(self.loom, ex.msgs, ex.digests, answers, ex.ids,
                          request=ex.params, session=session, after=ex.after)
            return done

    def run(self, ex: Exchange, session: str | None) -> Result:
        """Ask, then record: the one internal result every wire answers from."""
        answers = self.complete(ex)
        return Result(answers, self.record(ex, answers, session))

    def stream(self, ex: Exchange, session: str | None, emit: Emit) -> Result:
        """Ask with the model's stream going to `emit` as internal events, record, then
        emit `End`. A failure raises, with nothing recorded."""
        from .events import End, Streamer

        streamer = Streamer(emit)
        answers = self.complete(ex, stream=streamer)
        streamer.finish(answers)
        result = Result(answers, self.record(ex, answers, session))
        emit(End(result))
        return result


#: the threads that compute digests while models answer (started when first needed)
_WARMER = ThreadPoolExecutor(2, thread_name_prefix="loomdb-digests")


def _warm(digests: paths.Digests) -> None:
    """What `paths.find` asks first: the digests of the whole request and of all but
    its last message (a continuation, a re-ask), left in `digests`."""
    digests.at(paths.last_two(len(digests.keys)))


def loomdb_part(ex: Exchange, rec: Recorded) -> dict[str, Any]:
    """Where the exchange went in the store (an extension field; SDKs keep extras)."""
    return {"tree": rec.tree, "nodes": ex.ids, "request_node": rec.last,
            "written": rec.written, "edited": rec.edited}


def own_usage(result: Result) -> list[dict[str, int]]:
    """Each answer's usage: the provider's counts, else loomdb's own (a local stream
    gives none): the answer's tokens and the path's before it."""
    return [a.usage or {"input_tokens": n.total_tokens - n.tokens, "output_tokens": n.tokens}
            for a, n in zip(result.answers, result.recorded.answers, strict=True)]
