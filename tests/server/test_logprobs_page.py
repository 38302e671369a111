"""Token logprobs over HTTP: a real local-model generation with logprobs, a real server
on loopback (the page colouring them: tests/web/test_thread_generate.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from live import serving

import loomdb
from loomdb.logprobs import of_node, rows
from loomdb.server import create_app

pytestmark = [pytest.mark.xdist_group("local-model"), pytest.mark.slow]


@pytest.fixture
def generated(tmp_path: Path) -> Iterator[tuple[Any, str, str, str]]:
    """A store with a question and an answer generated with 3 alternatives per token."""
    with loomdb.open(str(tmp_path / "store")) as lm:
        _, root = lm.new_tree("Name a primary colour.", session="s")
        answer = lm.generate("s", models=["local"], max_tokens=8,
                             options={"logprobs": True, "top_logprobs": 3}).nodes[0]
        with serving(create_app(lm)) as base:
            yield lm, base, root.id, answer.id


def test_the_endpoint_answers_what_show_logprobs_prints(generated: tuple[Any, str, str, str]) -> None:
    lm, base, question, answer = generated
    got = httpx.get(f"{base}/api/nodes/{answer}/logprobs", timeout=30)
    assert got.status_code == 200
    expected = {"node": answer, "tokens": rows(of_node(lm, lm.node(answer)))}
    assert got.json() == expected and expected["tokens"]
    assert all(len(t["top"]) <= 3 for t in expected["tokens"])
    refused = httpx.get(f"{base}/api/nodes/{question}/logprobs", timeout=30)
    assert refused.status_code == 400
    assert "has no logprobs" in refused.json()["error"]["message"]
