"""tools.toml (the operator's programs, by name) and permission keys by source: what a
file may say, each mistake one InvalidInput naming the file and the key, and how
persona rules match `builtin:`, `tool:` and `mcp:SERVER/` keys."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from loomdb import InvalidInput
from loomdb.agents.config import load_tools
from loomdb.agents.identities import Persona
from loomdb.agents.permissions import decide, matches, may_start
from loomdb.agents.tools import Result, run_tool, toolbox
from test_bad_input import run_cli
from tools_file import tools_toml


def no_builtin(name: str, args: dict[str, Any]) -> Result:
    raise AssertionError(f"no built-in tool runs here ({name})")


GOOD = """
[tools.list_files]
description = "List the files of the project"
command = ["python", "list_files.py"]
input_schema = { type = "object", properties = {} }

[tools.slow]
command = ["sleep", "1"]
cwd = "work"
timeout = 2.5
env = { PROJECT = "loom" }

[servers.loom]
command = "loomdb"
args = ["--db", "store", "mcp"]
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "tools.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_tools_toml_defines_tools_and_servers_by_name(tmp_path: Path) -> None:
    config = load_tools(write(tmp_path, GOOD))
    listing = config.tools["list_files"]
    assert listing.command == ("python", "list_files.py")
    assert listing.description == "List the files of the project"
    assert listing.program.cwd == tmp_path and listing.program.timeout is None
    slow = config.tools["slow"]
    assert slow.program.cwd == tmp_path / "work" and slow.program.timeout == 2.5
    assert dict(slow.program.env) == {"PROJECT": "loom"}
    loom = config.servers["loom"]
    assert (loom.command, loom.args) == ("loomdb", ("--db", "store", "mcp"))
    assert load_tools(tmp_path / "missing.toml").tools == {}
    assert load_tools(None).servers == {}


@pytest.mark.parametrize(("text", "where"), [
    ("[tools.x\ncommand = 1", "not valid TOML"),
    ("model = 1", "model"),
    ("tools = 3", "tools"),
    ("[tools.x]\ndescription = 'no command'", "tools.x.command"),
    ("[tools.x]\ncommand = 'ls'", "tools.x.command"),
    ("[tools.x]\ncommand = []", "tools.x.command"),
    ("[tools.x]\ncommand = ['ls', 3]", "tools.x.command"),
    ("[tools.x]\ncommand = ['ls']\nshell = true", "tools.x"),
    ("[tools.x]\ncommand = ['ls']\nenv = { A = 1 }", "tools.x.env"),
    ("[tools.x]\ncommand = ['ls']\ntimeout = 0", "tools.x.timeout"),
    ("[tools.x]\ncommand = ['ls']\ntimeout = inf", "tools.x.timeout"),
    ("[tools.x]\ncommand = ['ls']\ntimeout = true", "tools.x.timeout"),
    ("[tools.x]\ncommand = ['ls']\ninput_schema = 'object'", "tools.x.input_schema"),
    ("[tools.x]\ncommand = ['ls']\ncwd = 3", "tools.x.cwd"),
    ("[tools.spawn_subagent]\ncommand = ['ls']", "tools.spawn_subagent"),
    ("[tools.Spawn_Subagent]\ncommand = ['ls']", "tools.Spawn_Subagent"),
    ("[tools.a]\ncommand = ['ls']\n[tools.A]\ncommand = ['ls']", "tools.A"),
    ("[tools.'a/b']\ncommand = ['ls']", "tools.a/b"),
    ("[tools.'mcp:x']\ncommand = ['ls']", "tools.mcp:x"),
    ("[servers.s]\nargs = []", "servers.s.command"),
    ("[servers.s]\ncommand = ['loomdb']", "servers.s.command"),
    ("[servers.s]\ncommand = 'loomdb'\nargs = 'mcp'", "servers.s.args"),
    ("[servers.'a/b']\ncommand = 'loomdb'", "servers.a/b"),
])
def test_a_malformed_tools_toml_is_one_error_naming_the_file_and_the_key(
        tmp_path: Path, text: str, where: str) -> None:
    path = write(tmp_path, text)
    with pytest.raises(InvalidInput) as caught:
        load_tools(path)
    assert str(path) in str(caught.value) and where in str(caught.value)


def test_a_malformed_tools_toml_stops_a_turn_from_the_cli_with_exit_2(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = tmp_path / "store"
    assert run_cli(str(store), "new", "--text", "hi", "--session", "s", "--options",
                   json.dumps({"tools": ["spawn_subagent"]}))[0] == 0
    write(store, "[tools.spawn_subagent]\ncommand = ['ls']")
    # the store folder's own tools.toml is read once its user trusts the folder
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    assert run_cli(str(store), "trust")[0] == 0
    code, out, err = run_cli(str(store), "generate", "s")
    assert code == 2 and "tools.toml" in err and "shadow a built-in" in err
    assert len(err.strip().splitlines()) == 1 and out == ""


def test_a_configured_tool_runs_in_the_folder_of_tools_toml(tmp_path: Path) -> None:
    (tmp_path / "list_files.py").write_text(
        "import json, os, sys\n"
        "args = json.load(sys.stdin)\n"
        "print(json.dumps({'cwd': os.getcwd(), 'args': args}))\n", encoding="utf-8")
    config = load_tools(tools_toml(tmp_path / "tools.toml", {"tools": {"list_files": {
        "command": [sys.executable, "list_files.py"]}}}))
    box = toolbox({"tools": ["LIST_FILES"]}, config)  # names are compared without case
    got = run_tool(box, "list_files", {"glob": "*.py"}, no_builtin)
    assert not got.is_error, got.text
    assert json.loads(got.text) == {"cwd": str(tmp_path), "args": {"glob": "*.py"}}
    failed = run_tool(toolbox({"tools": ["x"]}, load_tools(tools_toml(
        tmp_path / "bad.toml", {"tools": {"x": {"command": [sys.executable, "-c", "exit(3)"]}}}))),
        "x", {}, no_builtin)
    assert failed.is_error and failed.text == "exit code 3"


@pytest.mark.parametrize(("rule", "key", "hit"), [
    ("builtin:spawn_subagent", "builtin:spawn_subagent", True),
    ("BUILTIN:Spawn_Subagent", "builtin:spawn_subagent", True),
    ("tool:spawn_subagent", "builtin:spawn_subagent", False),
    ("tool:list_files", "tool:list_files", True),
    ("tool:*", "tool:list_files", True),
    ("tool:*", "mcp:loom/list_files", False),
    ("mcp:loom/search", "mcp:loom/search", True),
    ("mcp:loom/search", "mcp:other/search", False),
    ("mcp:loom", "mcp:loom/search", True),
    ("mcp:loom", "mcp:loomy/search", False),
    ("mcp:*/search", "mcp:loom/search", True),
    ("mcp:*", "tool:search", False),
    # a bare name is the tool's own name, whatever its source (personas before sources)
    ("search", "mcp:loom/search", True),
    ("Search", "tool:search", True),
    ("spawn_subagent", "builtin:spawn_subagent", True),
    ("*", "mcp:loom/anything", True),
    ("search", "mcp:loom/research", False),
])
def test_rules_match_keys_by_source_and_name_without_case(rule: str, key: str, hit: bool) -> None:
    assert matches(rule, key) is hit


def test_a_configured_tool_and_a_builtin_are_told_apart() -> None:
    persona = Persona("p", deny=("tool:*",), approve=("builtin:spawn_subagent",))
    assert decide(persona, "tool:list_files") == "deny"
    assert decide(persona, "builtin:spawn_subagent") == "approve"
    assert decide(persona, "mcp:loom/search") == "run"


@pytest.mark.parametrize(("allow", "deny", "starts"), [
    ((), (), True),
    ((), ("*",), False),
    ((), ("mcp:loom",), False),
    ((), ("mcp:LOOM/*",), False),
    ((), ("mcp:lo*",), False),
    ((), ("*:*",), False),
    ((), ("mcp:other",), True),
    ((), ("mcp:loom/search",), True),   # its other tools may still be offered
    ((), ("search",), True),
    (("tool:list_files",), (), False),
    (("builtin:*", "tool:*"), (), False),
    (("mcp:other/*",), (), False),
    (("mcp:loom/search",), (), True),
    (("search",), (), True),
    (("mcp:*",), (), True),
])
def test_a_server_starts_only_when_the_persona_could_allow_one_of_its_tools(
        allow: tuple[str, ...], deny: tuple[str, ...], starts: bool) -> None:
    assert may_start(Persona("p", allow=allow, deny=deny), "loom") is starts
    assert may_start(None, "loom")
