"""Programs are operator configuration, never data (issue 22, item 2).

A program (a tool's argv, an MCP server's command) is defined only in tools.toml; thread
options only name what is there. Each test drives a real store (both backends), the
real CLI, a real server on loopback, a real MCP server process, and programs that leave
a marker file when they run, so "it did not run" is a file that does not exist."""

from __future__ import annotations

import fcntl
import json
import os
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import httpx
import pytest
from mcp import ClientSession, StdioServerParameters, stdio_client

import loomdb
from loomdb import InvalidInput, Loom
from loomdb.agents.identities import bind_session, get_persona, set_persona
from loomdb.agents.loop import Env, Plan, prepare_step, run_turn, wants_turn
from loomdb.agents.tools import Result, run_tool, toolbox
from loomdb.server import create_app
from loomdb.storage_ops import storage

sys.path.insert(0, str(Path(__file__).parent.parent / "server"))

from live import serving  # noqa: E402

from test_bad_input import run_cli  # noqa: E402
from tools_file import tools_toml  # noqa: E402

if TYPE_CHECKING:
    from loomdb.agents.config import ToolsConfig

SRC = str(Path(loomdb.__file__).parent.parent)
BACKENDS = [b for b in os.environ.get("LOOMDB_TEST_BACKENDS", "sqlite,postgres").split(",") if b]
FIXTURES = Path(__file__).parent.parent / "fixtures" / "tools"


def marker_program(marker: Path) -> list[str]:
    """An argv that leaves `marker` behind if it ever runs."""
    return [sys.executable, "-c", f"open({str(marker)!r}, 'w').write('ran')"]


def program_options(marker: Path) -> list[dict[str, Any]]:
    """Thread options that each define a program of their own."""
    argv = marker_program(marker)
    return [
        {"tools": [{"name": "evil", "command": argv}]},
        {"tools": ["spawn_subagent", {"name": "evil", "description": "x", "command": argv}]},
        {"tools": [{"name": "spawn_subagent", "args": argv[1:]}]},
        {"tools": [{"name": "spawn_subagent", "env": {"LD_PRELOAD": "/tmp/x.so"}}]},
        {"tools": [{"name": "spawn_subagent", "cwd": "/"}]},
        {"servers": {"evil": {"command": argv[0], "args": argv[1:]}}},
        {"servers": [{"command": argv[0], "args": argv[1:]}]},
        {"servers": ["ok", {"command": argv[0]}]},
        {"servers": {}},
    ]


def no_builtin(name: str, args: dict[str, Any]) -> Result:
    raise AssertionError(f"no built-in tool runs here ({name})")


def counts(lm: Loom) -> tuple[int, int]:
    trees = lm.trees()
    return len(trees), sum(len(lm.tree_nodes(t.id)) for t in trees)


# == refused on write, over every edge, nothing written =========================
def test_the_library_refuses_options_that_define_a_program(loom: Loom, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    loom.new_tree("hello", session="s")
    before = counts(loom)
    for options in program_options(marker):
        with pytest.raises(InvalidInput, match="tools.toml"):
            loom.append("s", "x", options=options)
        with pytest.raises(InvalidInput, match="tools.toml"):
            loom.new_tree("x", options=options)
        with pytest.raises(InvalidInput, match="tools.toml"):
            loom.new_tree("x", node_options=options)
        with pytest.raises(InvalidInput, match="tools.toml"):
            set_persona(loom, "p", params=options)
    assert counts(loom) == before and not marker.exists()
    # naming tools and servers is what options are for
    named = {"tools": ["list_files", {"name": "spawn_subagent", "input_schema": {}}],
             "servers": ["loom"]}
    assert loom.append("s", "x", options=named).options == named


def test_the_cli_refuses_them_with_exit_2_and_one_line(store_url: str, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    code, _, err = run_cli(store_url, "new", "--text", "hi", "--session", "s")
    assert code == 0, err
    for options in program_options(marker):
        for args in (["add", "s", "--role", "user", "--text", "x"], ["new", "--text", "x"]):
            code, out, err = run_cli(store_url, *args, "--options", json.dumps(options))
            assert code == 2 and out == "" and "tools.toml" in err, (options, code, err)
            assert len(err.strip().splitlines()) == 1
    with loomdb.open(store_url) as lm:
        assert counts(lm) == (1, 1)
    assert not marker.exists()


@pytest.fixture(params=BACKENDS)
def live(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Loom, str]]:
    """A store of each backend served for real on a loopback port."""
    from pg import store_of

    with store_of(request.param, str(tmp_path / "store")) as url, loomdb.open(url) as lm, \
            serving(create_app(lm)) as base:
        yield lm, base


def test_http_refuses_them_with_400(live: tuple[Loom, str], tmp_path: Path) -> None:
    lm, base = live
    marker = tmp_path / "ran"
    lm.new_tree("hello", session="s")
    before = counts(lm)
    with httpx.Client(base_url=base, timeout=60) as http:
        for options in program_options(marker):
            got = http.post("/api/nodes/s/append",
                            json={"role": "user", "text": "x", "options": options})
            assert got.status_code == 400, (options, got.text)
            error = got.json()["error"]
            assert error["type"] == "InvalidInput" and "tools.toml" in error["message"]
        ok = http.post("/api/nodes/s/append", json={"role": "user", "text": "x",
                                                     "options": {"tools": ["spawn_subagent"]}})
        assert ok.status_code == 201, ok.text
    assert counts(lm) == (before[0], before[1] + 1) and not marker.exists()


def mcp_session(store_url: str, job: Any) -> Any:
    """Run `job(session)` against `loomdb mcp` on the store, over the SDK's stdio client."""
    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "loomdb", "--db", store_url, "mcp"],
                                   env={"PYTHONPATH": SRC, "PATH": os.environ.get("PATH", "")})

    async def main() -> Any:
        async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
            await s.initialize()
            return await job(s)

    return anyio.run(main)


def test_mcp_refuses_them_with_a_tool_error(loom: Loom, store_url: str, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    loom.new_tree("hello", session="s")
    before = counts(loom)
    loom.close()

    async def job(s: ClientSession) -> list[tuple[bool, str]]:
        out = []
        for options in [*program_options(marker), {"tools": ["spawn_subagent"]}]:
            done = await s.call_tool("append", {"headish": "s", "text": "x", "options": options})
            out.append((bool(done.is_error), done.content[0].text))
        return out

    *refused, accepted = mcp_session(store_url, job)
    assert all(bad and "tools.toml" in text for bad, text in refused), refused
    assert not accepted[0], accepted
    with loomdb.open(store_url) as lm:
        assert counts(lm) == (before[0], before[1] + 1)
        assert lm.node("s").options == {"tools": ["spawn_subagent"]}
    assert not marker.exists()


# == imported definitions are inert ============================================
def export_with_programs(tmp_path: Path, marker: Path) -> Path:
    """A native export whose tree options and a node's options define programs (as a
    file written by hand, or by an older loomdb, may)."""
    argv = marker_program(marker)
    with loomdb.open(str(tmp_path / "source")) as src:
        tree, root = src.new_tree("hello", session="evil")
        with storage(src).transaction():  # the importers' low-level write: no option check
            node = src.write_node(
                tree=tree.id, parent=root, blocks=[{"type": "text", "text": "go"}],
                role="user", author="mallory", source="human", cache=False, kind="message",
                created_at=None, options={"tools": [{"name": "evil", "command": argv}]})
        src.set_ref("evil", node.id)
        out = tmp_path / "evil.json"
        src.export_file(out, target=tree.id, format="json")
    doc = json.loads(out.read_text())
    doc["trees"][0]["tree"]["options"] = {"servers": {"evil": {"command": argv[0],
                                                                "args": argv[1:]}}}
    out.write_text(json.dumps(doc))
    return out


def test_an_import_carrying_programs_warns_and_a_turn_never_runs_them(
        loom: Loom, store_url: str, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = export_with_programs(tmp_path, marker)
    report = loom.import_file(path)
    assert len(report.trees) == 1 and not report.errors
    warned = " ".join(w["reason"] for w in report.warnings)
    assert "tree: options servers.evil define a program" in warned
    assert "tools[0].command" in warned and "never runs" in warned
    assert wants_turn(loom, "evil")
    before = counts(loom)
    with pytest.raises(InvalidInput, match="never define a program"):
        run_turn(loom, "evil", max_steps=1, tools=no_tools())
    # the tools of a later node replace the stored ones; the stored servers still refuse
    loom.append("evil", "again", options={"tools": ["spawn_subagent"]})
    with pytest.raises(InvalidInput, match="servers"):
        run_turn(loom, "evil", max_steps=1, tools=no_tools())
    assert counts(loom) == (before[0], before[1] + 1)
    assert not marker.exists()


def test_the_cli_import_report_warns(store_url: str, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    path = export_with_programs(tmp_path, marker)
    code, out, err = run_cli(store_url, "import", str(path), "--json")
    assert code == 0, err
    warnings = json.loads(out)["warnings"]
    assert len(warnings) == 2 and all("never runs" in w["reason"] for w in warnings)
    code, out, err = run_cli(store_url, "generate", "evil", "--json")
    assert code == 2 and "never define a program" in err and not marker.exists()


# == persona rules apply before any process starts ================================
def load_tools(path: Path) -> ToolsConfig:
    from loomdb.agents.config import load_tools

    return load_tools(path)


def no_tools() -> ToolsConfig:
    from loomdb.agents.config import ToolsConfig

    return ToolsConfig()


def probe_config(folder: Path) -> tuple[ToolsConfig, Path]:
    """tools.toml with one MCP server that leaves a marker when it starts."""
    marker = folder / "probe-started"
    path = tools_toml(folder / "tools.toml", {"servers": {"probe": {
        "command": sys.executable, "args": [str(FIXTURES / "probe_server.py"), str(marker)],
        "timeout": 60}}})
    return load_tools(path), marker


@pytest.mark.parametrize("rules", [
    {"deny": ["*"]}, {"deny": ["mcp:probe"]}, {"deny": ["MCP:*"]}, {"deny": ["mcp:probe/*"]},
    {"allow": ["tool:list_files"]}, {"allow": ["builtin:*"]}, {"allow": ["mcp:other/*"]},
])
def test_a_denied_server_is_never_started(loom: Loom, tmp_path: Path,
                                          rules: dict[str, list[str]]) -> None:
    config, marker = probe_config(tmp_path)
    set_persona(loom, "strict", **rules)
    _, root = loom.new_tree("hi", session="s", options={"servers": ["probe"]})
    bind_session(loom, "s", persona="strict")
    box, ctx = prepare_step(loom, Plan(root.id, "s", "strict"), root.id,
                            get_persona(loom, "strict"), Env(tools=config))
    assert box.servers == {} and box.tools == {} and "tools" not in ctx["options"]
    assert not marker.exists()


def test_an_allowed_server_is_started_and_its_tools_are_keyed_by_server(
        loom: Loom, tmp_path: Path) -> None:
    # the control for the test above: the same server, a persona that allows it
    config, marker = probe_config(tmp_path)
    set_persona(loom, "open", allow=["mcp:probe/*"], deny=["tool:*"])
    _, root = loom.new_tree("hi", session="s", options={"servers": ["probe"]})
    box, ctx = prepare_step(loom, Plan(root.id, "s", "open"), root.id,
                            get_persona(loom, "open"), Env(tools=config))
    assert marker.exists() and box.tools["environment"].key == "mcp:probe/environment"
    assert [t["name"] for t in ctx["options"]["tools"]] == ["environment"]


# == names are resolved before anything starts ====================================
@pytest.mark.parametrize(("options", "named"), [
    ({"tools": ["ghost"], "servers": ["probe"]}, "'ghost'"),
    ({"tools": ["spawn_subagent"], "servers": ["probe", "ghost"]}, "'ghost'"),
    ({"tools": [{"name": "ghost", "input_schema": {}}], "servers": ["probe"]}, "'ghost'"),
])
def test_an_unconfigured_name_fails_the_turn_before_anything_starts(
        loom: Loom, tmp_path: Path, options: dict[str, Any], named: str) -> None:
    config, marker = probe_config(tmp_path)
    loom.new_tree("hi", session="s", options=options)
    before = counts(loom)
    with pytest.raises(InvalidInput, match=named):
        run_turn(loom, "s", max_steps=1, tools=config)
    assert counts(loom) == before and not marker.exists()


def test_an_unconfigured_name_is_exit_2_from_the_cli(store_url: str, tmp_path: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    _config, marker = probe_config(tmp_path)
    monkeypatch.setenv("LOOMDB_TOOLS", str(tmp_path / "tools.toml"))
    assert run_cli(store_url, "new", "--text", "hi", "--session", "s", "--options",
                   json.dumps({"tools": ["list_files"], "servers": ["probe"]}))[0] == 0
    code, out, err = run_cli(store_url, "generate", "s")
    assert code == 2 and "no tool 'list_files'" in err and len(err.strip().splitlines()) == 1
    assert not marker.exists()


# == what a program gets: a minimal environment and a time limit =================
def test_a_program_gets_a_minimal_environment(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("LOOMDB_URL", "postgresql://user:pw@db/loom")
    probe, marker = probe_config(tmp_path)
    config = load_tools(tools_toml(tmp_path / "tools.toml", {
        "tools": {"env_dump": {"command": [sys.executable, "-c",
                                           "import json, os; print(json.dumps(dict(os.environ)))"],
                               "env": {"PROJECT": "loom"}}},
        "servers": {"probe": {"command": probe.servers["probe"].command,
                              "args": list(probe.servers["probe"].args)}}}))
    # the environment an edge hands down (Runtime.environ); nothing reads the process's
    box = toolbox({"tools": ["env_dump"], "servers": ["probe"]}, config, environ=os.environ)
    got = run_tool(box, "env_dump", {}, no_builtin)
    assert not got.is_error, got.text
    env = json.loads(got.text)
    assert env["PROJECT"] == "loom" and env["PATH"] == os.environ["PATH"]
    assert set(env) - {"LC_CTYPE"} <= {"PATH", "HOME", "LANG", "PROJECT"}, env
    served = run_tool(box, "environment", {}, no_builtin)
    assert not served.is_error, served.text
    names = set(json.loads(served.text))
    assert marker.exists() and not names & {"OPENAI_API_KEY", "ANTHROPIC_API_KEY", "LOOMDB_URL"}


def test_a_program_over_its_time_limit_is_killed_with_its_children(tmp_path: Path) -> None:
    lock = tmp_path / "lock"
    config = load_tools(tools_toml(tmp_path / "tools.toml", {"tools": {"sleeper": {
        "command": [sys.executable, str(FIXTURES / "sleeper.py"), str(lock)], "timeout": 10}}}))
    box = toolbox({"tools": ["sleeper"]}, config, timeout=3600)
    got = run_tool(box, "sleeper", {}, no_builtin)
    assert got.is_error and "ran longer than 10 s and was stopped" in got.text
    assert lock.read_text() == "locked\n"  # the child was started before the limit
    # the lock is free only once the tool and the child it left behind are both dead
    freed = threading.Event()

    def take() -> None:
        with open(lock, "a") as f:
            fcntl.flock(f, fcntl.LOCK_EX)
            freed.set()

    taker = threading.Thread(target=take, daemon=True)
    taker.start()
    assert freed.wait(120), "a process of the tool's group outlived its time limit"


def test_the_store_limit_is_the_default_time_limit(store_url: str, tmp_path: Path) -> None:
    from loomdb.agents.loop import tools_of
    from loomdb.limits import Limits

    with loomdb.open(store_url, limits=Limits(tool_seconds=7)) as lm:
        assert tools_of(lm, {"tools": ["spawn_subagent"]}, None, Env()).timeout == 7


def test_a_server_that_will_not_start_is_a_typed_error_naming_it(loom: Loom, store_url: str,
                                                                tmp_path: Path) -> None:
    from loomdb import ProviderError

    path = tools_toml(tmp_path / "tools.toml", {"servers": {"broken": {
        "command": sys.executable, "args": ["-c", "pass"], "timeout": 60}}})
    loom.new_tree("hi", session="s", options={"servers": ["broken"]})
    before = counts(loom)
    with pytest.raises(ProviderError, match="MCP server broken: could not list its tools"):
        run_turn(loom, "s", max_steps=1, tools=load_tools(path))
    assert counts(loom) == before
