"""Gateway overhead: a chat request through the recording gateway vs the model served directly.

    python benchmarks/bench_gateway.py [--history 2000] [--turns 200] [--db PATH|URL]

A server process (uvicorn on loopback) serves both routes over one store:
- `/v1/chat/completions`, the gateway: parse, convert, match the history to the stored
  path, ask the model, record the new question and the answer (one transaction);
- `/direct/v1/chat/completions`, the same model behind a bare OpenAI-style route:
  parse the same body, ask the model, answer. That is the "direct model latency".
The model answers at once in process (a fixed reply), so the difference is what the
gateway adds. The client posts pre-encoded bytes over one keep-alive connection:
no SDK re-serialises the big body inside a measured call.

The conversation starts with a stored history of `--history` messages (written by
one gateway call), then each turn re-sends the whole history plus one new message, as
chat apps do. Turns alternate between the two routes.

Then path matching alone (convert + prefix digests + memo look-up, no HTTP) against
history length, with the per-message constant from a least-squares line.

First, the Anthropic wire as a recording proxy (`--only anthropic`): `/v1/messages` to
an alias whose provider is `anthropic`, in front of a loopback upstream stub answering at
once (a bare ASGI app), beside the same request sent to the stub directly: time to
the first byte and to the last, streamed and whole, at `--history` recorded messages,
and the gateway process's CPU time per request (read between requests from a route the
benchmark adds; a figure other load on the machine hardly moves).
"""


import argparse
import gc
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from common import TEXT  # noqa: E402

USER = TEXT[:120]
ANSWER = TEXT[:400]


class Instant:
    """The model: a fixed answer, at once (so only the gateway's own cost is measured)."""

    def complete(self, ctx: Any, *, n: int = 1, **_: Any) -> list[Any]:
        from loomdb.providers.base import Completion

        return [Completion(
            content=[{"type": "text", "text": ANSWER}], stop_reason="end_turn",
            usage={"input_tokens": len(ctx["messages"]), "output_tokens": 1}, model="instant",
            provider="bench", provider_request={"messages": ctx["messages"]},
            raw_response={"choices": [{"message": {"role": "assistant", "content": ANSWER}}]},
            latency_ms=0, alias="instant") for _ in range(n)]


def serve(db: str, port: int) -> None:
    """The server process: the gateway and the direct route over one store."""
    import uvicorn
    from fastapi import Request
    from fastapi.responses import Response

    import loomdb
    from loomdb.front import Runtime
    from loomdb.gateway import create_gateway_app
    from loomdb.providers.config import ModelSpec, ProvidersConfig

    loom = loomdb.open(db)
    spec = ModelSpec(name="instant", kind="local", model="instant")
    model = Instant()
    runtime = Runtime(config=ProvidersConfig(models={"instant": spec}))
    app = create_gateway_app(loom, runtime=runtime,
                             clients=lambda _spec: model)

    @app.middleware("http")
    async def cpu_time(request: Request, call_next: Any) -> Response:
        # the server process's CPU time for this request (one request at a time): a
        # figure the other loads on a shared machine hardly move, unlike wall time
        t0 = time.process_time()
        response = await call_next(request)
        body = b"".join([chunk async for chunk in response.body_iterator])
        ms = (time.process_time() - t0) * 1000
        return Response(body, status_code=response.status_code,
                        headers={**response.headers, "x-cpu-ms": f"{ms:.3f}"})

    @app.post("/direct/v1/chat/completions")
    async def direct(request: Request) -> Response:
        body = json.loads(await request.body())
        ctx = {"messages": body["messages"], "options": {}}
        answer = model.complete(ctx)[0]
        return Response(json.dumps({
            "id": "direct", "object": "chat.completion", "model": "instant",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": answer.text}}],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }), media_type="application/json")

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def history(n: int) -> list[dict[str, str]]:
    out = []
    for i in range(n):
        out.append({"role": "user", "content": f"{i}: {USER}"} if i % 2 == 0
                   else {"role": "assistant", "content": ANSWER})
    return out


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))]


def overhead(db: str, size: int, turns: int) -> None:
    import httpx

    port = _free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen([sys.executable, __file__, "--serve", str(port), "--db", db], env=env)
    try:
        base = f"http://127.0.0.1:{port}"
        _wait(base)
        with httpx.Client(timeout=60) as http:
            msgs = history(size - 1)
            seed = http.post(base + "/v1/chat/completions",
                             content=_body(msgs), headers=_JSON)  # stores the history
            seed.raise_for_status()
            msgs.append({"role": "assistant", "content": ANSWER})
            routes: dict[str, list[float]] = {"gateway": [], "direct": []}
            cpu: dict[str, list[float]] = {"gateway": [], "direct": []}
            for turn in range(turns):
                for name, path in (("gateway", "/v1/chat/completions"),
                                   ("direct", "/direct/v1/chat/completions")):
                    body = _body([*msgs, {"role": "user", "content": f"turn {turn} {name}"}])
                    t0 = time.perf_counter()
                    r = http.post(base + path, content=body, headers=_JSON)
                    routes[name].append((time.perf_counter() - t0) * 1000)
                    r.raise_for_status()
                    cpu[name].append(float(r.headers["x-cpu-ms"]))
                    if name == "gateway":
                        assert r.json()["loomdb"]["written"] == 1, r.json()["loomdb"]
                msgs += [{"role": "user", "content": f"turn {turn} gateway"},
                         {"role": "assistant", "content": ANSWER}]
    finally:
        proc.terminate()
        proc.wait(10)
    kb = len(_body(msgs)) / 1024
    g, d = routes["gateway"], routes["direct"]
    diffs = [a - b for a, b in zip(g, d, strict=True)]
    print(f"history {size} messages, body ~{kb:.0f} KiB, {turns} turns per route")
    for name, values in (("gateway", g), ("direct model", d), ("overhead (paired)", diffs)):
        print(f"  {name:<18} p50 {pct(values, 50):7.2f} ms   p99 {pct(values, 99):7.2f} ms")
    print(f"  overhead p50 = gateway p50 - direct p50 = {pct(g, 50) - pct(d, 50):.2f} ms"
          " (target <= 5 ms on SQLite)")
    gc, dc = cpu["gateway"], cpu["direct"]
    print("  server CPU time per request (robust to other load on the machine):")
    for name, values in (("gateway", gc), ("direct model", dc),
                         ("overhead (paired)", [a - b for a, b in zip(gc, dc, strict=True)])):
        print(f"  {name:<18} p50 {pct(values, 50):7.2f} ms   p99 {pct(values, 99):7.2f} ms")


# == the Anthropic wire: the recording proxy over a loopback upstream ===============
def stub(port: int) -> None:
    """The upstream: Anthropic's Messages API answering at once (a fixed message, or
    its stream), a bare ASGI app with no framework, so what it costs is the floor."""
    import uvicorn

    message = {"id": "msg_bench", "type": "message", "role": "assistant", "model": "bench",
               "content": [{"type": "text", "text": ANSWER}], "stop_reason": "end_turn",
               "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}}
    events = [("message_start", {"type": "message_start", "message": {
                  **message, "content": [], "stop_reason": None}}),
              ("content_block_start", {"type": "content_block_start", "index": 0,
                                       "content_block": {"type": "text", "text": ""}}),
              *[("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {
                  "type": "text_delta", "text": ANSWER[i:i + 100]}})
                for i in range(0, len(ANSWER), 100)],
              ("content_block_stop", {"type": "content_block_stop", "index": 0}),
              ("message_delta", {"type": "message_delta", "delta": {
                  "stop_reason": "end_turn", "stop_sequence": None},
                  "usage": {"output_tokens": 1}}),
              ("message_stop", {"type": "message_stop"})]
    whole = json.dumps(message).encode()
    streamed = [f"event: {k}\ndata: {json.dumps(v)}\n\n".encode() for k, v in events]

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            part = await receive()
            body += part.get("body", b"")
            if not part.get("more_body"):
                break
        stream = b'"stream": true' in body or b'"stream":true' in body
        kind = b"text/event-stream" if stream else b"application/json"
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", kind)]})
        for chunk in streamed if stream else [whole]:
            await send({"type": "http.response.body", "body": chunk, "more_body": True})
        await send({"type": "http.response.body", "body": b""})

    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def serve_proxy(db: str, port: int, upstream: str) -> None:
    """The gateway with one `anthropic` alias in front of the stub."""
    import uvicorn

    import loomdb
    from loomdb.front import Runtime
    from loomdb.gateway import create_gateway_app
    from loomdb.providers.config import parse_config
    from loomdb.settings import Settings

    config = parse_config({"models": {"claude": {
        "provider": "anthropic", "model": "bench", "base_url": upstream, "api_key_env": "KEY",
        "max_retries": 0}}})
    loom = loomdb.open(db)
    runtime = Runtime(config=config, settings=Settings(environ={"KEY": "k"}))
    app = create_gateway_app(loom, runtime=runtime)

    @app.get("/bench/cpu")
    def cpu() -> dict[str, float]:
        """The process's CPU time so far (every thread's), read between requests."""
        return {"ms": time.process_time() * 1000}

    gc.collect()  # as `loomdb gateway` does before it serves
    gc.freeze()
    uvicorn.run(app, host="127.0.0.1", port=port, log_level="warning")


def _timed(http: Any, url: str, body: bytes) -> tuple[float, float]:
    """(ms to the first byte of the body, ms to the last)."""
    t0 = time.perf_counter()
    with http.stream("POST", url, content=body, headers=_ANTHROPIC) as r:
        first = None
        for _ in r.iter_raw():
            if first is None:
                first = time.perf_counter()
        r.raise_for_status()
    end = time.perf_counter()
    return ((first or end) - t0) * 1000, (end - t0) * 1000


def anthropic_overhead(db: str, size: int, turns: int) -> None:
    """The recording proxy (`/v1/messages` to an `anthropic` alias) beside the same
    request sent to the upstream stub directly, at `size` recorded messages."""
    import httpx

    stub_port, gw_port = _free_port(), _free_port()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    upstream = f"http://127.0.0.1:{stub_port}"
    procs = [subprocess.Popen([sys.executable, __file__, "--stub", str(stub_port)], env=env),
             subprocess.Popen([sys.executable, __file__, "--proxy", str(gw_port), "--db", db,
                               "--upstream", upstream], env=env)]
    base = f"http://127.0.0.1:{gw_port}"
    try:
        _wait(base)
        msgs = history(size - 1)
        with httpx.Client(timeout=60) as http:
            http.post(base + "/v1/messages", content=_anthropic(msgs, False),
                      headers=_ANTHROPIC).raise_for_status()  # stores the history
            msgs.append({"role": "assistant", "content": ANSWER})
            got: dict[tuple[str, bool], list[tuple[float, float]]] = {}
            cpu: dict[bool, list[float]] = {False: [], True: []}

            def used() -> float:
                return float(http.get(base + "/bench/cpu").json()["ms"])

            for turn in range(turns):
                for stream in (False, True):
                    body = _anthropic([*msgs, {"role": "user", "content": f"turn {turn} {stream}"}],
                                      stream)
                    for name, url in (("gateway", base + "/v1/messages"),
                                      ("direct", upstream + "/v1/messages")):
                        before = used() if name == "gateway" else 0.0
                        got.setdefault((name, stream), []).append(_timed(http, url, body))
                        if name == "gateway":
                            between = used()
                            cpu[stream].append(between - before - (used() - between))
    finally:
        for proc in procs:
            proc.terminate()
            proc.wait(10)
    kb = len(_anthropic(msgs, False)) / 1024
    print(f"Anthropic wire, recording proxy over a loopback upstream stub: history {size} "
          f"messages (~{kb:.0f} KiB), {turns} turns each")
    for stream in (False, True):
        g, d = got[("gateway", stream)], got[("direct", stream)]
        for i, what in ((0, "first byte"), (1, "last byte")):
            gv, dv = [x[i] for x in g], [x[i] for x in d]
            paired = [a - b for a, b in zip(gv, dv, strict=True)]
            print(f"  {'streamed' if stream else 'whole':8} {what:10}  gateway p50 "
                  f"{pct(gv, 50):7.2f} ms  direct p50 {pct(dv, 50):7.2f} ms  overhead p50 "
                  f"{pct(paired, 50):6.2f} ms  p99 {pct(paired, 99):6.2f} ms (goal <= 3 ms p50)")
        print(f"  {'streamed' if stream else 'whole':8} the gateway process's CPU time per "
              f"request (robust to other load): p50 {pct(cpu[stream], 50):6.2f} ms  p99 "
              f"{pct(cpu[stream], 99):6.2f} ms")


_ANTHROPIC = {"content-type": "application/json", "anthropic-version": "2023-06-01"}


def _anthropic(msgs: list[dict[str, str]], stream: bool) -> bytes:
    return json.dumps({"model": "claude", "max_tokens": 64, "stream": stream,
                       "messages": msgs}).encode()


def matching(db: str, sizes: list[int]) -> None:
    """Path matching alone (convert, digests, memo look-up) against history length."""
    import loomdb
    from loomdb.exchanges import openai_chat, paths
    from loomdb.exchanges.exchange import Gateway

    print("path matching (convert + prefix digests + memo look-up), CPU time per request:")
    points = []
    with loomdb.open(db) as loom:
        gw = Gateway(loom)
        for size in sizes:
            msgs = history(size)
            raw = json.dumps({"model": "local", "messages": msgs})
            ex = openai_chat.parse(gw, {"model": "local", "messages": msgs})
            gw.record(ex, Instant().complete(ex.ctx), None)  # the history is now stored
            resent = json.loads(raw)["messages"] + [
                {"role": "assistant", "content": ANSWER}, {"role": "user", "content": "new"}]
            times = []
            for _ in range(15):
                t0 = time.process_time()
                converted = openai_chat.messages(resent)
                digests = paths.Digests(converted.keys)
                with loom.unit(paths.GATEWAY) as unit:
                    hit = paths.find(unit, loom, digests, None)
                times.append((time.process_time() - t0) * 1000)
            assert hit is not None and hit.index == len(resent) - 2
            ms = statistics.median(times)
            points.append((size, ms))
            print(f"  {size:6d} messages  {ms:7.3f} ms   {ms / size * 1000:6.2f} µs/message")
    slope, icept = _fit(points)
    print(f"  linear: {icept:.3f} ms + {slope * 1000:.2f} µs x messages (least squares)")


def _fit(points: list[tuple[int, float]]) -> tuple[float, float]:
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    slope = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x in xs)
    return slope, my - slope * mx


_JSON = {"content-type": "application/json"}


def _body(msgs: list[dict[str, str]]) -> bytes:
    return json.dumps({"model": "instant", "messages": msgs}).encode()


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait(base: str) -> None:
    import httpx

    for _ in range(300):
        try:
            httpx.get(base + "/v1/models", timeout=1)
            return
        except httpx.TransportError:
            time.sleep(0.1)
    raise RuntimeError("the benchmark server did not start")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--history", type=int, default=2000)
    parser.add_argument("--turns", type=int, default=200)
    parser.add_argument("--db", default=None, help="store (default: a fresh SQLite folder)")
    parser.add_argument("--serve", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--sizes", default="250,500,1000,2000,4000")
    parser.add_argument("--stub", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--proxy", type=int, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--upstream", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--only", choices=["openai", "anthropic", "matching"], default=None)
    args = parser.parse_args()
    if args.serve is not None:
        serve(args.db, args.serve)
        return
    if args.stub is not None:
        stub(args.stub)
        return
    if args.proxy is not None:
        serve_proxy(args.db, args.proxy, args.upstream)
        return
    with tempfile.TemporaryDirectory() as tmp:
        if args.only in (None, "anthropic"):
            anthropic_overhead(str(Path(tmp) / "anthropic"), args.history,
                               max(10, args.turns // 2))
        if args.only == "anthropic":
            return
        if args.only in (None, "openai"):
            overhead(args.db or str(Path(tmp) / "overhead"), args.history, args.turns)
        if args.only in (None, "matching"):
            matching(str(Path(tmp) / "matching"), [int(s) for s in args.sizes.split(",")])


if __name__ == "__main__":
    main()
