"""The fuzz pass over the command (issue 22, acceptance): argv built from every command
and its options, filled with random and malformed strings (lone surrogates, as Python
hands over invalid UTF-8 arguments), huge and negative numbers, `inf` and `nan`, broken
JSON, deep brackets. Every run exits 0 or 2, a refusal is one line on stderr, and no
run prints a traceback. Both backends; the model behind every alias is an endpoint
that is down, so a command that asks a model fails fast (exit 2) instead of running
one. Commands that run until stopped (serve, gateway, mcp, chat, watch) are left out;
no string holds a `/`, so no argument names a path outside the test's folder.
"""

from __future__ import annotations

import contextlib
import io
import sys
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import loomdb
from loomdb.cli import app, main

pytestmark = pytest.mark.slow

SKIPPED = {"serve", "gateway", "mcp", "chat", "watch"}
DOWN_TOML = ('default = "down"\n[models.down]\nprovider = "openai"\n'
             'base_url = "http://127.0.0.1:1/v1"\nmodel = "m"\nmax_retries = 0\ntimeout = 5\n')


def _commands() -> list[tuple[list[str], click.Command]]:
    """Every (command path, command) a user can run, groups opened."""
    out: list[tuple[list[str], click.Command]] = []
    ctx = click.Context(app)
    for name in app.list_commands(ctx):
        if name in SKIPPED:
            continue
        cmd = app.get_command(ctx, name)
        if isinstance(cmd, click.Group):
            out += [([name, sub], cmd.commands[sub]) for sub in cmd.commands]
        elif cmd is not None:
            out.append(([name], cmd))
    return out


COMMANDS = _commands()


def _options(cmd: click.Command) -> list[str]:
    return [o for p in cmd.params if isinstance(p, click.Option) for o in p.opts]


_WEIRD = st.sampled_from([
    "main", "main~1", "main^", "main~99999999999999999999", "~", "^^^", "", " ", "-", "--",
    "\udcff", "caf\udce9", "\ud800", "a\udc80b", "99999999999999999999999999", "-5", "0",
    "-1e308", "1e999", "inf", "-inf", "nan", "NaN", "{", "[" * 500, '{"a": ' * 100,
    '{"k": 1e999}', '{"tools": [{"command": ["sh"]}]}', "[]", "{}", "null", "true",
    "sha256:" + "0" * 64, "01ARZ3NDEKTSV4RRFFQ69G5FAV", "doc:main", "tree:x", "--json",
    "user", "assistant", "system", "x" * 5000, "\u202e", "dialogue", "buffer",
])
_TEXT = st.text(st.characters(blacklist_characters="/\x00", blacklist_categories=()),
                max_size=30)


@st.composite
def argv(draw: st.DrawFn) -> list[str]:
    path, cmd = draw(st.sampled_from(COMMANDS))
    options = _options(cmd)
    tokens = st.one_of(_WEIRD, _TEXT, st.integers(-(2**80), 2**80).map(str),
                       st.sampled_from(options) if options else _WEIRD)
    # positional values first (a headish, a name, a text), then anything
    lead = draw(st.lists(st.one_of(st.sampled_from(["main", "main~1", "s2", "hello"]), _WEIRD),
                         max_size=2))
    return [*path, *lead, *draw(st.lists(tokens, max_size=6))]


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def store(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory,
          ) -> Iterator[str]:
    from pg import store_of

    folder = tmp_path_factory.mktemp(f"fuzz-cli-{request.param}")
    with store_of(request.param, str(folder / "store")) as url:
        with loomdb.open(url) as lm:
            lm.new_tree("seed words", session="main")
            lm.append("main", "more words", role="assistant")
        yield url


counts = {"runs": 0, "exit 0": 0, "exit 2": 0}


def _run(store: str, args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(["--db", store, *args])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            return code, out.getvalue(), err.getvalue()
    raise AssertionError("main() always exits")


def test_random_argv_exits_0_or_2_without_a_traceback(
        store: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    # `loomdb trust` among the commands writes the user's configuration: this test's own
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    toml = tmp_path / "providers.toml"
    toml.write_text(DOWN_TOML)
    monkeypatch.setenv("LOOMDB_PROVIDERS", str(toml))
    monkeypatch.setattr(sys, "stdin", io.StringIO(""))
    counts.update(dict.fromkeys(counts, 0))

    @given(args=argv())
    @settings(max_examples=500, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    def run(args: list[str]) -> None:
        code, out, err = _run(store, args)
        counts["runs"] += 1
        assert "Traceback" not in out + err, (args, err[-2000:])
        assert code in (0, 2), (args, code, err[-2000:])
        counts[f"exit {code}"] += 1
        if code == 2:
            assert err.startswith("loomdb: error: ") and err.count("\n") == 1, (args, err)

    run()
    print(f"\ncli: {counts['runs']} runs over {len(COMMANDS)} commands, "
          f"{counts['exit 0']} exit 0, {counts['exit 2']} exit 2, no traceback")
    with loomdb.open(store) as lm:
        assert lm.verify().ok
