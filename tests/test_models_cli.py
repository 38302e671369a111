"""The model commands of the CLI: context formats and budgets, generate, compact, chat."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from test_bad_input import run_cli
from test_cli import Cli

pytestmark = pytest.mark.xdist_group("local-model")


@pytest.fixture
def cli(store_url: str) -> Cli:
    c = Cli(store_url)
    c("new", "--text", "Hello there.", "--session", "main", "--system", "Be brief.")
    c("add", "main", "--role", "assistant", "--text", "Hi! How can I help?", "--cache")
    c("add", "main", "--role", "user", "--text", "Tell me about looms.")
    return c


class TestContextFormats:
    def test_openai_prints_a_chat_completions_body(self, cli: Cli) -> None:
        body = cli("context", "main", "--format", "openai", "-m", "openai:gpt-4o-mini")
        assert body["model"] == "gpt-4o-mini"
        assert [m["role"] for m in body["messages"]] == ["system", "user", "assistant", "user"]

    def test_anthropic_prints_a_messages_body_with_system_apart_and_cache_control(self, cli: Cli) -> None:
        body = cli("context", "main", "--format", "anthropic", "-m", "anthropic:claude-sonnet-4-5")
        assert body["system"] in ("Be brief.", [{"type": "text", "text": "Be brief."}])
        assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
        assert body["messages"][1]["content"][-1]["cache_control"] == {"type": "ephemeral"}

    def test_completion_prints_the_prompt(self, cli: Cli) -> None:
        assert cli("context", "main", "--format", "completion") == {
            "prompt": "Hello there.Hi! How can I help?Tell me about looms."}

    def test_a_budget_fits_and_says_how_many_tokens(self, cli: Cli) -> None:
        full = cli("context", "main", "--format", "openai", "-m", "openai:x")
        fitted = cli("context", "main", "--format", "openai", "-m", "openai:x", "--budget", "20",
                     "--strategy", "rolling-window")
        assert fitted["tokens"] <= 20
        assert len(fitted["messages"]) < len(full["messages"])

    def test_stop_strategy_over_budget_is_an_error(self, cli: Cli, store_url: str) -> None:
        code, _, err = run_cli(store_url, "context", "main", "--budget", "3", "--strategy", "stop")
        assert code == 2 and "budget" in err


class TestGenerateCommand:
    def test_generate_prints_the_new_nodes_and_moves_the_session(self, cli: Cli) -> None:
        out = cli("generate", "main", "-n", "2", "--max-tokens", "10")
        assert len(out["nodes"]) == 2
        assert cli("session", "show", "main")["node"] == out["nodes"][0]
        assert cli("siblings", out["nodes"][0]) == {"nodes": [out["nodes"][1]]}

    def test_an_unknown_model_exits_2(self, cli: Cli, store_url: str) -> None:
        code, _, err = run_cli(store_url, "generate", "main", "-m", "nope")
        assert code == 2 and "nope" in err

    def test_compact_prints_the_compaction_node(self, cli: Cli) -> None:
        node = cli("compact", "main", "--keep", "1")["node"]
        assert cli("show", node)["kind"] == "compaction"
        assert cli("context", "main")["messages"][-1]["content"][0]["text"] == "Tell me about looms."


class TestChat:
    def test_chat_extends_a_session_turn_by_turn(self, tmp_path: Path) -> None:
        db = str(tmp_path / "store")
        proc = subprocess.run(
            [sys.executable, "-m", "loomdb", "--db", db, "chat", "--session", "talk",
             "--max-tokens", "8"],
            input="Hi!\nWhat is 2+2?\n", capture_output=True, text=True, timeout=300,
        )
        assert proc.returncode == 0, proc.stderr
        path = json.loads(subprocess.run(
            [sys.executable, "-m", "loomdb", "--db", db, "path", "talk", "--json"],
            capture_output=True, text=True, check=True).stdout)["nodes"]
        assert len(path) == 4
        roles = [json.loads(subprocess.run(
            [sys.executable, "-m", "loomdb", "--db", db, "show", n, "--json"],
            capture_output=True, text=True, check=True).stdout)["role"] for n in path]
        assert roles == ["user", "assistant", "user", "assistant"]
