"""A user mistake never shows a traceback: every wrong invocation of every command is
one line on stderr, exit 2, and `{"error": ...}` on stdout with --json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from loomdb.cli import main

NODE = "01JZZZZZZZZZZZZZZZZZZZZZZZ"

#: (arguments, why it is wrong): no args, bad options, bad values, unknown names,
#: missing and wrong files, across every command
CORPUS: list[tuple[str, ...]] = [
    (), ("nosuchcommand",), ("--bogus",),
    ("new",), ("new", "--bogus"), ("new", "--text", "hi", "--mode", "sideways"),
    ("add",), ("add", "s"), ("add", "s", "--role", "wizard", "--text", "x"),
    ("add", "nowhere", "--role", "user", "--text", "x"), ("add", "s", "--bogus"),
    ("edit",), ("edit", NODE, "--text", "x"), ("select",), ("select", "s", NODE),
    ("link",), ("link", NODE, NODE), ("bookmark",), ("tag",), ("exclude",), ("prune",),
    ("fork",), ("fork", "nowhere", "b"), ("path",), ("path", "nowhere"),
    ("children", "~~"), ("siblings", NODE), ("versions", "x^^^"), ("leaves",),
    ("branch-points", "nosuchtree"), ("show",), ("show", NODE), ("log",), ("tree",),
    ("tree", "nosuchtree"), ("archive",), ("verify", "--bogus"), ("context",),
    ("context", "nowhere", "--format", "klingon"), ("context", "nowhere", "--budget", "many"),
    ("generate",), ("generate", "nowhere", "-n", "abc"), ("compact",), ("chat", "--bogus"),
    ("buffer",), ("buffer", "nosuchsub"), ("import",), ("import", "/no/such/file.json"),
    ("import", "{here}/not-an-export.txt"), ("import", "{here}/garbage.json"),
    ("export",), ("export", "nosuchtree"), ("migrate",), ("backup",), ("backlinks",),
    ("search",), ("gc", "--bogus"), ("pending", "--bogus"), ("approve",), ("deny",), ("route",), ("spawn",),
    ("propose",), ("inbox",), ("reject",), ("amend",), ("serve", "--port", "notaport"),
    ("session",), ("session", "show", "nosuchsession"), ("view", "nosuchsub"),
    ("doc",), ("doc", "show", "nosuchdoc"), ("coll",), ("coll", "show", "nosuchcoll"),
    ("agent", "add"), ("persona", "show", "nosuchpersona"), ("user", "add"),
    ("edges",), ("edges", NODE), ("rename",), ("rename", "nosuchtree", "title"),
    ("view", "delete", "nosuchview"), ("bookmark", "somenode"), ("bookmark", "list", "--bogus"),
    ("delete",), ("delete", NODE), ("delete", "tree:nosuchtree", "--bogus"), ("redact",),
    ("redact", NODE), ("forgotten", "--limit", "many"), ("secrets", "--set", "jwt"),
    ("secrets", "--set", "jwt=shout"), ("secrets", "--rule", "x=("), ("secrets", "--limit", "0"),
    ("watch",),
    ("delete", NODE, "--now"), ("delete", "tree:nosuchtree", "--export-to", "x"),
    ("trash", "--bogus"), ("restore",), ("restore", "nosuchtree"), ("hold", "nosuchtree"),
    ("hold", "--remove"), ("gc", "--trash-for", "soon"),
    ("watch", "/no/such/folder"), ("watch", "{here}", "--interval", "soon"),
    ("user", "token"), ("user", "token", "nosuchuser"),
    ("share",), ("share", "nowhere"), ("share", "revoke"), ("share", "revoke", "nosuchtoken"),
    ("share", "list", "--bogus"),
    ("diff",), ("diff", "nowhere", "x"), ("merge",), ("merge", "a", "b", "--text", "x",
                                                       "--summary", "m"),
    ("merge", "nowhere", "x"), ("replay", "x"), ("replay", "nowhere", "--session", "s",
                                                  "--no-generate"),
    ("replay", "x", "--session", "s", "-n", "0"), ("fork", "x", "y", "--summary", "m"),
    ("fork", "nowhere", "y", "--fresh"),
    ("trust",), ("trust", "/no/such/folder"), ("trust", "--list", "{here}"),
    ("trust", "--remove", "{here}"), ("--providers", "{here}", "generate", "s"),
    ("piece",), ("piece", "add"), ("piece", "add", "x"), ("piece", "show", "nosuchpiece"),
    ("piece", "log", "nosuchpiece"), ("piece", "add", "x", "--text", ""),
    ("piece", "import-llm", "/no/such/logs.db"), ("new", "--template", "nosuchtemplate"),
    ("redact", "--text", "ab"), ("redact", "--pattern", "("), ("compact", "--redo", "nowhere"),
]


@pytest.fixture
def here(tmp_path: Path) -> Path:
    (tmp_path / "not-an-export.txt").write_text("hello, I am not an export\n")
    (tmp_path / "garbage.json").write_bytes(b'{"mapping": [1, 2')
    return tmp_path


@pytest.mark.parametrize("args", CORPUS, ids=lambda a: " ".join(a) or "(none)")
@pytest.mark.parametrize("as_json", [False, True], ids=["text", "json"])
def test_a_wrong_invocation_is_one_line_exit_2_never_a_traceback(
    args: tuple[str, ...], as_json: bool, here: Path, capsys: pytest.CaptureFixture[str],
) -> None:
    argv = ["--db", str(here / "store"), *(a.format(here=here) for a in args)]
    argv += ["--json"] if as_json and args else []
    with pytest.raises(SystemExit) as done:
        main(argv)
    out, err = capsys.readouterr()
    assert done.value.code == 2, (argv, out, err)
    assert "Traceback" not in out + err
    assert err.startswith("loomdb: error: ") and err.count("\n") == 1, err
    if as_json and args:
        assert json.loads(out)["error"]["message"]


def test_the_corpus_is_large_and_reaches_every_command() -> None:
    from loomdb.cli import app

    assert len(CORPUS) >= 40
    commands = set(app.commands)
    reached = {a[0] for a in CORPUS if a and a[0] in commands}
    assert commands - reached <= {"trees", "gateway", "mcp"}, commands - reached
