"""`loomdb import` / `loomdb export` through the command line: the summary shape, exit
codes, idempotency, and a full export -> import -> verify cycle between two stores."""

from __future__ import annotations

import contextlib
import io
import json
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent / "interop"))

from interop_fixtures import cg_branched, sample, write_json  # noqa: E402

import loomdb.cli.interop  # noqa: E402,F401  (registers the commands until cli/__init__ does)
from loomdb.cli import main  # noqa: E402

SUMMARY_KEYS = {"trees", "nodes", "blobs", "skipped", "errors", "warnings"}


def run_cli(db: str, *args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(["--db", db, *args])
        except SystemExit as exc:
            return int(exc.code or 0), out.getvalue(), err.getvalue()
    raise AssertionError("main() always exits")


def run_json(db: str, *args: str) -> tuple[int, dict]:
    code, out, err = run_cli(db, *args, "--json")
    return code, json.loads(out)


class TestImportCommand:
    def test_the_json_summary_has_exactly_the_documented_shape(self, store_url: str) -> None:
        code, summary = run_json(store_url, "import", str(sample("claude_export_first10.json")))
        assert code == 0 and set(summary) == SUMMARY_KEYS
        assert len(summary["trees"]) == 10 and all(isinstance(t, str) for t in summary["trees"])
        assert summary["nodes"] == 66 and summary["blobs"] == 0
        assert summary["skipped"] == 0 and summary["errors"] == []
        code, trees = run_json(store_url, "trees")
        counts = {t["id"]: t["nodes"] for t in trees["trees"]}
        raw = json.loads(sample("claude_export_first10.json").read_text())
        assert sorted(counts.values()) == sorted(len(c["chat_messages"]) for c in raw)

    def test_the_text_summary_says_what_was_read_and_quiet_draws_no_bar(
        self, store_url: str
    ) -> None:
        path = sample("claude_export_first10.json")
        code, out, err = run_cli(store_url, "import", str(path), "--quiet")
        assert code == 0 and err == ""
        read = next(line for line in out.splitlines() if line.startswith("read "))
        size = path.stat().st_size
        assert f"read {size / 1e3:.1f} kB in " in read and "(10 conversation(s), " in read
        assert "messages/s)" in read

    def test_importing_twice_adds_nothing(self, store_url: str) -> None:
        path = str(sample("chatgpt_export_librechat_chatgpt-tree.json"))
        _, first = run_json(store_url, "import", path)
        code, second = run_json(store_url, "import", path)
        assert code == 0
        assert second == {"trees": [], "nodes": 0, "blobs": 0, "skipped": first["nodes"],
                          "errors": [], "warnings": []}
        code, out, _ = run_cli(store_url, "verify", "--json")
        assert code == 0 and json.loads(out)["ok"] is True

    def test_the_active_branch_is_a_session(self, store_url: str) -> None:
        path = str(sample("chatgpt_fixture_mitkury_example-conversation.json"))
        _, summary = run_json(store_url, "import", path)
        raw = json.loads(Path(path).read_text())[0]
        _, sessions = run_json(store_url, "session", "list")
        (session,) = sessions["sessions"]
        assert session["tree"] == summary["trees"][0]
        code, shown = run_json(store_url, "show", session["name"])
        assert code == 0 and shown["origin"]["message"] == raw["current_node"]

    def test_errors_exit_1_with_the_good_conversations_imported(
        self, store_url: str, tmp_path: Path
    ) -> None:
        bad = {"title": "broken", "conversation_id": "bad", "mapping": "nope"}
        path = write_json(tmp_path, "c.json", [cg_branched("good-1"), bad, cg_branched("good-2")])
        code, summary = run_json(store_url, "import", str(path))
        assert code == 1 and len(summary["trees"]) == 2 and summary["nodes"] == 12
        (error,) = summary["errors"]
        assert set(error) == {"where", "reason"} and "c.json[1]" in error["where"]
        code, out, _ = run_cli(store_url, "import", str(path))
        assert code == 1 and "1 error(s):" in out and "c.json[1]" in out

    def test_stop_on_error(self, store_url: str, tmp_path: Path) -> None:
        bad = {"title": "broken", "conversation_id": "bad", "mapping": "nope"}
        path = write_json(tmp_path, "c.json", [cg_branched("good-1"), bad, cg_branched("good-2")])
        code, summary = run_json(store_url, "import", str(path), "--stop-on-error")
        assert code == 1 and len(summary["trees"]) == 1 and len(summary["errors"]) == 1

    def test_an_unreadable_file_exits_2_and_writes_nothing(self, store_url: str, tmp_path: Path) -> None:
        path = tmp_path / "notes.json"
        path.write_text("these are not conversations")
        code, out, err = run_cli(store_url, "import", str(path), "--json")
        assert code == 2 and "error" in json.loads(out) and "loomdb: error:" in err
        code, out, _ = run_cli(store_url, "import", str(tmp_path / "missing.json"))
        assert code == 2
        code, out, _ = run_cli(store_url, "import", str(path), "--format", "whatsapp")
        assert code == 2
        _, trees = run_json(store_url, "trees")
        assert trees["trees"] == []

    def test_format_names_use_dashes_on_the_command_line(
        self, store_url: str, tmp_path: Path
    ) -> None:
        path = tmp_path / "train.jsonl"
        path.write_text(json.dumps({"messages": [{"role": "user", "content": "hi"},
                                                 {"role": "assistant", "content": "yo"}]}) + "\n")
        code, summary = run_json(store_url, "import", str(path), "--format", "openai-jsonl")
        assert code == 0 and summary["nodes"] == 2

    def test_a_chatgpt_export_zip_with_its_files(self, store_url: str, tmp_path: Path) -> None:
        conv = cg_branched("zipped")
        conv["mapping"]["u1"]["message"]["content"] = {
            "content_type": "multimodal_text",
            "parts": [{"content_type": "image_asset_pointer",
                       "asset_pointer": "file-service://file-Img42", "width": 2, "height": 2},
                      "what is this?"],
        }
        path = tmp_path / "export.zip"
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr("conversations.json", json.dumps([conv]))
            zf.writestr("file-Img42-pic.png", b"\x89PNG pixels")
        code, summary = run_json(store_url, "import", str(path))
        assert code == 0 and summary["blobs"] == 1 and summary["nodes"] == 6


class TestExportCommand:
    def test_export_all_then_import_elsewhere_is_identical(self, store_url: str, tmp_path: Path) -> None:
        for name in ("chatgpt_export_librechat_chatgpt-tree.json", "oasst_en_first10_trees.jsonl"):
            run_cli(store_url, "import", str(sample(name)))
        run_cli(store_url, "bookmark", "import/chatgpt/d5dc5307~2", "halfway")
        run_cli(store_url, "tag", "import/chatgpt/d5dc5307", "kept")
        out_file = tmp_path / "backup.jsonl"
        code, out, err = run_cli(store_url, "export", "--all", "--format", "jsonl", "-o", str(out_file))
        assert code == 0 and out == "" and len(out_file.read_text().splitlines()) == 11
        other = str(tmp_path / "other")
        code, summary = run_json(other, "import", str(out_file))
        assert code == 0 and len(summary["trees"]) == 11 and summary["errors"] == []
        code, again, _ = run_cli(other, "export", "--all", "--format", "jsonl")
        assert again == out_file.read_text()
        assert run_cli(other, "verify")[0] == 0
        _, shown = run_json(other, "show", "halfway")
        assert shown["id"]

    def test_export_to_stdout_in_each_format(self, store_url: str) -> None:
        run_cli(store_url, "import", str(sample("chatgpt_fixture_mitkury_example-conversation.json")))
        _, sessions = run_json(store_url, "session", "list")
        name = sessions["sessions"][0]["name"]
        code, out, _ = run_cli(store_url, "export", name, "--format", "json")
        assert code == 0 and json.loads(out)["trees"][0]["loomdb_export"] == 1
        code, out, _ = run_cli(store_url, "export", name, "--format", "markdown")
        assert code == 0 and out.startswith("# ")
        code, out, _ = run_cli(store_url, "export", name, "--format", "openai-jsonl")
        assert code == 0 and all("messages" in json.loads(x) for x in out.splitlines())
        code, out, _ = run_cli(store_url, "export", name, "--format", "chatgpt")
        assert code == 0 and json.loads(out)[0]["mapping"]

    def test_export_needs_a_tree_or_all(self, store_url: str, tmp_path: Path) -> None:
        assert run_cli(store_url, "export")[0] == 2
        assert run_cli(store_url, "export", "nope", "--format", "json")[0] == 2
        assert run_cli(store_url, "export", "--all", "--format", "pdf")[0] == 2
        code, _, _ = run_cli(store_url, "export", "--all", "-o", str(tmp_path / "no" / "x.json"))
        assert code == 2
