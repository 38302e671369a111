"""simonw/llm's fragments (a logs.db made by llm's own migrations) and templates (YAML
files as llm reads them) as pieces and templates, through `loomdb piece import-llm` on
both backends: aliases name pieces, a second import adds nothing, a template keeps what
loomdb's templates hold and lists the rest, and only the paths given are read."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# the llm package is a test dependency: missing, the test fails (never skips)
import sqlite_utils  # noqa: E402
from llm import migrations  # noqa: E402

from loomdb import Loom
from test_bad_input import run_cli


def logs_db(path: Path) -> None:
    db = sqlite_utils.Database(path)
    migrations.migrate(db)
    db["fragments"].insert_all([
        {"id": 1, "hash": "a" * 64, "content": "Looms hold warp threads.",
         "datetime_utc": "2026-01-01", "source": "facts.txt"},
        {"id": 2, "hash": "b" * 64, "content": "Answer like a weaver.",
         "datetime_utc": "2026-01-01", "source": "-"}])
    db["fragment_aliases"].insert({"alias": "facts", "fragment_id": 1})
    db.close()


def templates_dir(folder: Path, outside: Path) -> Path:
    folder.mkdir()
    (folder / "weaver.yaml").write_text(
        "system: Be brief.\nprompt: 'Question: $input'\nmodel: local\n"
        "options:\n  temperature: 0\nfragments:\n- facts\n- https://example.com/x.txt\n"
        f"system_fragments:\n- fragment-{'b' * 12}\ndefaults:\n  x: 1\n", "utf-8")
    (folder / "plain.yaml").write_text("Summarize $input\n", "utf-8")  # a text: a prompt
    (folder / "broken.yaml").write_text("system: [unclosed\n", "utf-8")
    (folder / "notes.txt").write_text("not a template", "utf-8")
    outside.write_text("system: read me\n", "utf-8")
    (folder / "linked.yaml").symlink_to(outside)
    return folder


def test_fragments_and_templates_come_in(store_url: str, loom: Loom, tmp_path: Path) -> None:
    def run(*args: str) -> Any:
        code, out, err = run_cli(store_url, *args, "--json")
        assert code == 0, err
        return json.loads(out)

    logs_db(tmp_path / "logs.db")
    folder = templates_dir(tmp_path / "templates", tmp_path / "outside.yaml")
    args = ("piece", "import-llm", "--logs", str(tmp_path / "logs.db"),
            "--templates", str(folder))
    out = run(*args)
    assert out["fragments"] == {"added": 2, "unchanged": 0, "skipped": []}
    assert out["templates"]["added"] == 2
    assert sorted(out["templates"]["skipped"]) == [
        "template broken: is not YAML (ParserError)",
        "template linked: 'linked.yaml' is not a regular file"]
    assert out["templates"]["left_out"] == {
        "weaver": ["defaults", "fragment https://example.com/x.txt"]}
    again = run(*args)
    assert again["fragments"]["added"] == 0 and again["fragments"]["unchanged"] == 2
    assert again["templates"]["added"] == 0
    listed = {p["name"]: p["kind"] for p in run("piece", "list")["pieces"]}
    assert listed == {"facts": "piece", f"fragment-{'b' * 12}": "piece",
                      "weaver": "template", "plain": "template"}
    made = run("new", "--text", "what is a loom?", "--template", "weaver", "--session", "w")
    ctx = run("context", "w")
    assert [[b["text"] for b in m["content"]] for m in ctx["messages"]] == [
        ["Answer like a weaver.", "Be brief."],
        ["Looms hold warp threads.", "Question: what is a loom?"]]
    assert ctx["options"] == {"temperature": 0, "model": "local"}
    assert run("piece", "used-by", "facts")["used_by"] == [{"tree": made["tree"],
                                                             "node": made["node"]}]
    run("new", "--text", "the loom", "--template", "plain", "--session", "p")
    assert run("context", "p")["messages"][0]["content"][0]["text"] == "Summarize the loom"
    code, _, err = run_cli(store_url, "piece", "import-llm", "--logs", str(folder))
    assert code != 0 and "not a regular file" in err and len(err.strip().splitlines()) == 1
