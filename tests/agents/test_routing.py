"""Routing: thread, session, persona (latest session, or a new one) and smart (the
session whose words best match), through the library and `--route` in the CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import loomdb
from loomdb import InvalidInput, Loom, NotFound
from loomdb.agents.identities import bind_session, binding, set_persona
from loomdb.agents.routing import parse_route, route, write

SRC = str(Path(loomdb.__file__).parent.parent)


def test_thread_and_session_routes(loom: Loom) -> None:
    _, root = loom.new_tree("hello", session="s")
    node = loom.append("s", "more", role="assistant")
    # ids made in one millisecond share their first 25 characters: the shortest
    # prefix that names the root alone
    short = next(root.id[:k] for k in range(10, 27) if not node.id.startswith(root.id[:k]))
    assert route(loom, "thread", short).headish == root.id
    found = route(loom, "session", "s")
    assert found.headish == "s" and node.id in found.why
    with pytest.raises(NotFound):
        route(loom, "session", "ghost")


def test_persona_routes_to_its_latest_session_or_starts_one(loom: Loom) -> None:
    set_persona(loom, "p")
    first = route(loom, "persona", "p")
    assert first.headish is None and first.new == "p/main"
    root = write(loom, first, "start here", role="user")
    assert loom.resolve("p/main").node == root.id and binding(loom, "p/main").persona == "p"
    loom.new_tree("other", session="later")
    bind_session(loom, "later", persona="p")
    assert route(loom, "persona", "p").headish == "later"
    loom.delete_ref("later")
    assert route(loom, "persona", "p").headish == "p/main"


def test_smart_routes_to_the_session_that_shares_the_rarest_words(loom: Loom) -> None:
    loom.new_tree("Planning the garden: tomatoes and basil this spring.", session="garden")
    loom.new_tree("Tax forms are due; the spring deadline is close.", session="taxes")
    loom.new_tree("Basil pesto recipe for dinner.", session="cooking")
    found = route(loom, "smart", "when should I plant tomatoes in spring?")
    assert found.headish == "garden" and "tomatoes" in found.why
    assert route(loom, "smart", "tax deadline").headish == "taxes"
    with pytest.raises(NotFound):
        route(loom, "smart", "quantum chromodynamics")


def test_bad_routes_are_typed_errors() -> None:
    for bad in ("", "session", "nowhere:x", "smart:  "):
        with pytest.raises(InvalidInput):
            parse_route(bad)
    assert parse_route("smart:a:b") == ("smart", "a:b")


def test_the_cli_routes_add_and_prints_the_route(store_url: str) -> None:
    env = {**os.environ, "PYTHONPATH": SRC}

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "loomdb", "--db", store_url, *args],
                              capture_output=True, text=True, env=env, timeout=300, check=False)

    assert run("new", "--text", "bird watching notes", "--session", "birds").returncode == 0
    added = run("add", "--route", "smart:watching birds", "--role", "user", "--text", "a heron",
                "--json")
    assert added.returncode == 0, added.stderr
    shown = json.loads(run("route", "--session", "birds", "--json").stdout)
    assert shown["headish"] == "birds" and json.loads(added.stdout)["node"] in shown["why"]
    both = run("add", "birds", "--route", "session:birds", "--role", "user", "--text", "x")
    assert both.returncode == 2 and "not both" in both.stderr
    none = run("route", "--json")
    assert none.returncode == 2 and "error" in json.loads(none.stdout)
