"""The forgetting commands on both backends, as processes: delete (exit 2 and nothing
written when refs are in the way), redact, verify after it (exit 0, the redaction
listed), the record, and retention (`gc --older-than`, a store's default) through the
trash: restore, hold, purge with an export first."""

from __future__ import annotations

import json
from pathlib import Path

from test_bad_input import run_cli
from test_cli import Cli, cli  # noqa: F401 (the fixture)

FIXTURE = (Path(__file__).parent / "fixtures" / "interop"
           / "chatgpt_fixture_mitkury_example-conversation.json")


def fails(db: str, *args: str) -> str:
    code, out, err = run_cli(db, *args)
    assert code == 2, (out, err)
    assert len(err.strip().splitlines()) == 1
    return err


def test_delete_redact_verify_and_the_record(cli: Cli) -> None:  # noqa: F811
    made = cli("new", "--text", "q0", "--session", "main")
    a1 = cli("add", "main", "--role", "assistant", "--text", "cli-secret")["node"]
    q2 = cli("add", "main", "--role", "user", "--text", "q2")["node"]
    err = fails(cli.db, "delete", q2)
    assert "--force" in err
    assert cli("path", "main")["nodes"] == [made["node"], a1, q2]
    done = cli("redact", a1, "--reason", "pii")
    assert done["ids"] == [a1] and done["shared"] == []
    report = cli("verify")
    assert report["ok"] and report["redacted"][0]["node"] == a1
    done = cli("delete", q2, "--force", "--reason", "asked")
    assert done["refs"] == ["main"] and done["ids"] == [q2]
    lines = cli("forgotten")
    assert [(e["action"], e["reason"]) for e in lines] == [("delete", "asked"), ("redact", "pii")]
    assert cli("forgotten", "--tree", made["tree"], "--limit", "1")[0]["action"] == "delete"
    fails(cli.db, "forgotten", "--limit", "0")
    fails(cli.db, "delete", "tree:NOSUCH")
    fails(cli.db, "delete", a1, "--now")
    put = cli("delete", f"tree:{made['tree']}", "--reason", "tidy")
    assert put["rule"] == "delete" and cli("trees")["trees"] == []
    done = cli("delete", f"tree:{made['tree']}", "--now")
    assert done["trees_deleted"] == [made["tree"]] and cli("trash") == []
    fails(cli.db, "redact", "nosuchref")


def test_retention_trashes_only_trees_not_touched_then_purges(cli: Cli) -> None:  # noqa: F811
    cli("import", str(FIXTURE))
    old = cli("trees")["trees"][0]
    assert old["updated_at"] < "2025"  # the conversation's own times
    fresh = cli("new", "--text", "today", "--session", "today")["tree"]
    fails(cli.db, "gc", "--older-than", "90 days")
    fails(cli.db, "gc", "--older-than", "0d")
    fails(cli.db, "gc", "--tree", fresh)
    plan = cli("gc", "--older-than", "365d", "--dry-run")
    assert [t["id"] for t in plan["retention"]["trees"]] == [old["id"]]
    assert {t["id"] for t in cli("trees")["trees"]} == {old["id"], fresh}
    assert cli("gc", "--older-than", "365d", "--tree", fresh)["retention"]["trashed"] == 0
    done = cli("gc", "--older-than", "365d")
    assert done["retention"]["trashed"] == 1 and done["purged"] == []
    assert [t["id"] for t in cli("trees")["trees"]] == [fresh]
    assert [e["id"] for e in cli("trash")] == [old["id"]]
    assert cli("restore", old["id"])["id"] == old["id"]
    assert cli("hold", f"tree:{old['id']}")["tree"] == old["id"]
    assert cli("gc", "--older-than", "365d")["retention"]["held"] == [old["id"]]
    cli("hold", f"tree:{old['id']}", "--remove")
    assert cli("gc", "--trash-for", "0s") == {"trash_for": "0s"}
    done = cli("gc", "--older-than", "365d", "--export-to", str(Path(cli.db).parent / "out"))
    assert [e["id"] for e in done["purged"]] == [old["id"]]
    assert (Path(cli.db).parent / "out" / f"{old['id']}.json").exists()
    assert cli("forgotten")[0]["action"] == "retention"
    assert cli("trash") == [] and cli("verify")["ok"]


def test_a_kept_default_applies_to_plain_gc(cli: Cli) -> None:  # noqa: F811
    cli("import", str(FIXTURE))
    fresh = cli("new", "--text", "today", "--session", "today")["tree"]
    fails(cli.db, "gc", "--retention", "forever")
    assert cli("gc", "--retention", "365d") == {"retention": "365d", "will_trash": 1,
                                                "held": 0}
    assert "retention" in cli("gc")
    assert [t["id"] for t in cli("trees")["trees"]] == [fresh]
    assert cli("gc", "--retention", "off") == {"retention": None}
    assert "retention" not in cli("gc")


def test_text_output(tmp_path: Path) -> None:
    db = str(tmp_path / "s")
    code, out, _ = run_cli(db, "new", "--text", "q", "--session", "m", "--json")
    node = json.loads(out)["node"]
    code, out, err = run_cli(db, "delete", node, "--force")
    assert code == 0 and out.startswith("deleted 1 node(s)"), err
    code, out, _ = run_cli(db, "forgotten")
    assert " delete " in out
