"""Compaction compacts (issue 11, item 16): the summary is bounded by the tokens it
replaces, the context gets smaller, a compaction that cannot be shorter is refused with
NotCompacted and writes nothing, and the CLI reports tokens before and after. With the
real local model (SmolLM2-135M in-process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import loomdb
from helpers import row_counts, thread
from loomdb import InvalidInput, Loom, NotCompacted
from loomdb.compaction import compact
from loomdb.tokens import count_messages

pytestmark = pytest.mark.xdist_group("local-model")

LONG = [
    "I am Ada. We go to Lisbon in May with two kids, for five days in Alfama.",
    "Lovely. May is mild there; take tram 28 and see the Oceanarium.",
    "Our budget is 1500 euros without flights. Is that enough for us?",
    "Yes, 1500 euros is comfortable for five days for a family of three.",
    "What should we do on the first day?",
]


class TestCompactionBound:
    def test_the_context_gets_smaller_and_the_record_says_by_how_much(
        self, tmp_path: Path,
    ) -> None:
        loom = loomdb.open(str(tmp_path / "s"))  # one backend: the model is the slow part
        thread(loom, LONG)
        before = count_messages(loom.context("main")["messages"])
        node = compact(loom, "main", keep=1)
        after = count_messages(loom.context("main")["messages"])
        assert after < before
        row = loom.backend.provenance.get_compaction(node.id)
        assert row is not None
        assert (row["tokens_before"], row["tokens_after"]) == (before, after)
        assert loom.verify().ok

    def test_a_compaction_that_cannot_be_shorter_is_refused_and_writes_nothing(
        self, loom: Loom,
    ) -> None:
        thread(loom, ["hi", "yo", "ok"])
        counts, head = row_counts(loom), loom.ref("main").node
        with pytest.raises(NotCompacted) as err:
            compact(loom, "main", keep=1)
        assert err.value.tokens_after >= err.value.tokens_before
        assert row_counts(loom) == counts and loom.ref("main").node == head

    def test_a_bound_below_one_token_is_refused(self, loom: Loom) -> None:
        thread(loom, LONG)
        with pytest.raises(InvalidInput, match="max-tokens"):
            compact(loom, "main", keep=1, max_tokens=0)

    def test_the_cli_reports_tokens_before_and_after(self, tmp_path: Path) -> None:
        store_url = str(tmp_path / "s")
        with loomdb.open(store_url) as loom:
            thread(loom, LONG)
            thread(loom, ["hi", "yo", "ok"], session="tiny")
        run = subprocess.run(
            [sys.executable, "-m", "loomdb", "--db", store_url, "compact", "main", "--keep",
             "1", "--max-tokens", "16", "--json"],
            capture_output=True, text=True, env=dict(os.environ), timeout=300, check=False)
        assert run.returncode == 0, run.stderr
        out = json.loads(run.stdout)
        assert set(out) == {"node", "tokens_before", "tokens_after"}
        assert out["tokens_after"] < out["tokens_before"]
        with loomdb.open(store_url) as loom:  # --max-tokens bounds what the model may write
            gen = loom.backend.provenance.get_generation(loom.node(out["node"]).provenance["generation"])
            assert gen is not None and json.loads(gen["provider_request"])["max_tokens"] <= 16
        run = subprocess.run(
            [sys.executable, "-m", "loomdb", "--db", store_url, "compact", "tiny", "--keep",
             "1", "--json"],
            capture_output=True, text=True, env=dict(os.environ), timeout=300, check=False)
        assert run.returncode == 2 and "not compacted" in json.loads(run.stdout)["error"]["message"]
