"""`loomdb mcp` as agents expect it: every tool's annotations, the handshake answered
before the SDK is loaded (and answered exactly as the SDK's server answers it), the
connection handed to the SDK at the first call, the store opened only then.

The start-up time itself is measured by benchmarks/bench_mcp.py, never here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS, LATEST_MODERN_VERSION

import loomdb
from loomdb.mcp import catalog
from loomdb.mcp.server import offered
from loomdb.mcp.stdio import Handshake, run_sdk
from mcp_client import server

#: every tool and its annotations (readOnly, destructive, idempotent, openWorld), in the
#: groups of docs/agents.md: a tool added without deciding them fails here
ANNOTATIONS = {
    **dict.fromkeys(("context", "log", "tree", "show", "search", "doc_show", "doc_log",
                     "doc_diff", "coll_show", "backlinks", "pending", "forgotten"),
                    (True, False, True, False)),
    **dict.fromkeys(("append", "edit", "coll_add", "link"), (False, False, False, False)),
    **dict.fromkeys(("fork", "bookmark", "doc_new", "coll_new", "doc_commit"),
                    (False, False, True, False)),
    "tag": (False, True, True, False),
    "delete": (False, True, True, False),
    "redact": (False, True, False, False),
    "redact_spans": (False, True, True, False),
    **dict.fromkeys(("generate", "spawn"), (False, True, False, True)),
    "diff": (True, False, True, False),
    **dict.fromkeys(("merge", "replay", "fork_fresh"), (False, False, True, True)),
    "share_continue": (False, False, True, False),
    **dict.fromkeys(("piece_list", "piece_log", "piece_show", "piece_used_by"),
                    (True, False, True, False)),
    "piece_add": (False, False, True, False),
    "new_thread": (False, False, False, False),
}


def _refuse() -> Any:
    raise AssertionError("nothing here needs the store")


def _line(rid: int | str | None, method: str, params: Any = None) -> bytes:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if rid is not None:
        message["id"] = rid
    if params is not None:
        message["params"] = params
    return (json.dumps(message) + "\n").encode()


def _hello(rid: int | str = 0, version: str = "2025-11-25") -> bytes:
    return _line(rid, "initialize", {"protocolVersion": version, "capabilities": {},
                                     "clientInfo": {"name": "test", "version": "1"}})


#: what a client asks first: the handshake and every listing
OPENING = [_line(None, "notifications/initialized"), _line(1, "tools/list"),
           _line(2, "resources/list"), _line(3, "resources/templates/list"),
           _line(4, "prompts/list"), _line(5, "ping"), _line(6, "tools/list", {"cursor": "x"})]


def _sdk_answers(lines: list[bytes]) -> dict[Any, Any]:
    """The SDK's server (loomdb's tools and resources, no store) answering `lines`:
    each answer by its request's id."""
    tools = offered(_refuse)
    want = sum(1 for line in lines if "id" in json.loads(line))
    answers: dict[Any, Any] = {}

    class Out:
        def __init__(self, done: anyio.Event) -> None:
            self.done = done

        async def write(self, text: str) -> None:
            message = json.loads(text)
            answers[message["id"]] = message
            if len(answers) == want:
                self.done.set()

        async def flush(self) -> None:
            pass

    async def main() -> None:
        done = anyio.Event()

        async def fed() -> Any:
            for line in lines:
                yield line.decode()
            await done.wait()  # the input ends once every request is answered

        with anyio.fail_after(60):
            await run_sdk(_refuse, tools, fed(), Out(done))

    anyio.run(main)
    return answers


def _early_answers(lines: list[bytes]) -> dict[Any, Any]:
    handshake = Handshake(offered(_refuse))
    answers = {}
    for line in lines:
        taken = handshake.take(line)
        assert taken is not None, line
        for answer in taken:
            message = json.loads(answer)
            answers[message["id"]] = message
    return answers


@pytest.mark.parametrize("version", [*HANDSHAKE_PROTOCOL_VERSIONS, "1999-01-01",
                                     LATEST_MODERN_VERSION])
def test_the_handshake_answers_what_the_sdk_answers(version: str) -> None:
    lines = [_hello(0, version), *OPENING]
    early = _early_answers(lines)
    assert early == _sdk_answers(lines)
    assert early[0]["result"]["serverInfo"] == {"name": "loomdb", "version": loomdb.__version__}
    assert set(early) == {0, 1, 2, 3, 4, 5, 6}


def test_the_handshake_leaves_to_the_sdk_what_it_does_not_answer_as_the_sdk_would() -> None:
    handshake = Handshake(offered(_refuse))
    # before `initialize`: only ping is answered (the SDK answers it before, too)
    assert handshake.take(_line(1, "tools/list")) is None
    assert handshake.take(_line(None, "notifications/initialized")) is None
    assert handshake.take(_line("p", "ping")) == [b'{"jsonrpc":"2.0","id":"p","result":{}}\n']
    for odd in (b"not json\n", b"[]\n", b"[" * 100_000 + b"\n", b"\xff\xfe\n",
                b'{"id": 1, "method": "ping"}\n',
                _line(True, "ping"), _line(1.5, "ping"), _line(1, "server/discover", {}),
                _line(0, "initialize", {"protocolVersion": "2025-11-25"}),
                _line(0, "initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                        "clientInfo": {"name": "x", "version": "1"},
                                        "_meta": {"progressToken": 1}})):
        assert handshake.take(odd) is None, odd
    assert handshake.started is None and handshake.opening == []
    assert handshake.take(_hello(7)) is not None and handshake.started == 7
    assert handshake.take(_hello(8)) is None  # a second initialize is the SDK's
    assert handshake.take(_line(None, "notifications/initialized")) == []
    assert handshake.take(_line(None, "notifications/cancelled", {"requestId": 1})) == []
    assert handshake.opening == [_hello(7), _line(None, "notifications/initialized")]
    for odd in (_line(1, "tools/call", {"name": "log", "arguments": {}}),
                _line(1, "resources/read", {"uri": "loomdb://trees"}),
                _line(1, "tools/list", {"_meta": {"progressToken": 1}}),
                _line(1, "tools/list", {"cursor": 3}), _line(1, "ping", {"_meta": {}}),
                _line(1, "logging/setLevel", {"level": "info"}),
                b'{"jsonrpc": "2.0", "id": 3, "result": {}}\n'):
        assert handshake.take(odd) is None, odd


def test_every_tool_states_its_annotations_and_answers_an_object(tmp_path: Path) -> None:
    """Listed before the SDK is loaded: the table above is the whole list."""
    spec = server(str(tmp_path / "store"))
    params = StdioServerParameters(command=spec["command"], args=spec["args"], env=spec["env"])

    async def main() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            started = await s.initialize()
            return started, (await s.list_tools()).tools

    started, tools = anyio.run(main)
    assert (started.server_info.name, started.server_info.version) == ("loomdb",
                                                                      loomdb.__version__)
    listed = {t.name: t.annotations for t in tools}
    assert {name: (a.read_only_hint, a.destructive_hint, a.idempotent_hint,
                   a.open_world_hint) for name, a in listed.items()} == ANNOTATIONS
    for t in tools:
        assert t.output_schema is not None and t.output_schema["type"] == "object", t.name
        assert t.description and not t.description.startswith(" "), t.name
    assert catalog.HANDSHAKE_VERSIONS == HANDSHAKE_PROTOCOL_VERSIONS


def _talk(argv: list[str], lines: list[bytes], want: set[Any]) -> tuple[list[Any], int]:
    """Run `loomdb mcp`, write `lines` at once, read answers until every id in `want`
    is answered, close its input: every message it wrote, and its exit code."""
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, env=server("")["env"])
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(b"".join(lines))
    proc.stdin.flush()
    got: list[Any] = []
    while not want <= {m.get("id") for m in got}:
        line = proc.stdout.readline()
        assert line, got
        got.append(json.loads(line))
    proc.stdin.close()
    got.extend(json.loads(line) for line in proc.stdout)
    return got, proc.wait(timeout=60)


def test_the_store_opens_at_the_first_call_and_each_request_is_answered_once(
        tmp_path: Path) -> None:
    store = tmp_path / "store"
    argv = [sys.executable, "-m", "loomdb", "--db", str(store), "mcp"]
    got, code = _talk(argv, [_hello(), *OPENING], {0, 1, 2, 3, 4, 5, 6})
    assert code == 0 and not store.exists()  # listed, left, and never opened the store
    assert sorted(m["id"] for m in got) == [0, 1, 2, 3, 4, 5, 6]

    # pipelined: the call arrives with the handshake, is handed over with it
    call = _line(7, "tools/call", {"name": "trees_none", "arguments": {}})
    new = _line(8, "tools/call", {"name": "doc_new", "arguments": {"name": "n", "text": "x"}})
    got, code = _talk(argv, [_hello(), *OPENING, call, new, _line(9, "ping")],
                      {0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
    assert code == 0 and store.exists()
    assert sorted(m["id"] for m in got) == list(range(10))  # initialize answered once
    by_id = {m["id"]: m["result"] for m in got}
    assert by_id[7]["isError"] and "Unknown tool" in by_id[7]["content"][0]["text"]
    assert by_id[8]["structuredContent"]["document"] == "n"
    assert json.loads(by_id[8]["content"][0]["text"]) == by_id[8]["structuredContent"]


def test_a_store_that_cannot_open_fails_the_call_not_the_server() -> None:
    argv = [sys.executable, "-m", "loomdb", "--db", "postgresql://nobody@127.0.0.1:1/none",
            "mcp"]
    calls = [_line(n, "tools/call", {"name": "log", "arguments": {"headish": "main"}})
             for n in (1, 2)]
    got, code = _talk(argv, [_hello(), *calls], {0, 1, 2})
    assert code == 0
    for answer in (m["result"] for m in got if m["id"] in (1, 2)):
        assert answer["isError"]
        assert answer["structuredContent"]["code"] == -32008
        assert answer["structuredContent"]["data"]["type"] == "StoreUnavailable"


def test_an_untrusted_store_folders_configuration_fails_the_call(tmp_path: Path) -> None:
    """The configuration-trust rule holds on this edge too (tests/security/
    test_config_trust.py): a store folder's own tools.toml, never trusted, is refused
    at the first call, and its program never runs."""
    store = tmp_path / "store"
    with loomdb.open(store) as loom:
        loom.new_tree("hi", session="main")
    marker = tmp_path / "ran"
    (store / "tools.toml").write_text(
        f"[tools.pwn]\ncommand = [{json.dumps(sys.executable)}, \"-c\", "
        f"{json.dumps(f'open({str(marker)!r}, chr(119))')}]\n")
    argv = [sys.executable, "-m", "loomdb", "--db", str(store), "mcp"]
    got, code = _talk(argv, [_hello(), _line(1, "tools/call", {
        "name": "log", "arguments": {"headish": "main"}})], {0, 1})
    [answer] = [m["result"] for m in got if m["id"] == 1]
    assert code == 0 and answer["isError"], answer
    assert "tools.toml" in json.dumps(answer) and "not trusted" in json.dumps(answer)
    assert not marker.exists()


def test_a_client_of_the_newest_protocol_is_served_by_the_sdk(tmp_path: Path) -> None:
    """No handshake at 2026-07-28: the first request goes to the SDK at once."""
    with loomdb.open(tmp_path / "store") as loom:
        loom.new_tree("A heron waits.", session="main")
    spec = server(str(tmp_path / "store"))
    params = StdioServerParameters(command=spec["command"], args=spec["args"], env=spec["env"])

    async def main() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            found = await s.discover()
            tools = (await s.list_tools()).tools
            done = await s.call_tool("log", {"headish": "main"})
            return found, tools, done

    found, tools, done = anyio.run(main)
    assert found.meta["io.modelcontextprotocol/serverInfo"] == {
        "name": "loomdb", "version": loomdb.__version__}
    assert {t.name for t in tools} == set(ANNOTATIONS)
    assert done.structured_content["nodes"][0]["content"][0]["text"] == "A heron waits."
