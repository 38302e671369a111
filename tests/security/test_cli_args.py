"""Arguments the command must refuse with one line and exit 2, writing nothing (issue
22, item 10): grace periods that are not numbers of seconds (`inf`, `nan`, a century
and more), arguments that are not valid UTF-8, a token limit of zero or less (which the
local model takes as "until the context ends"), a port outside 1-65535 (which the
server would wrap to another port), and numbers too large for the store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import loomdb
from helpers import row_counts
from loomdb import InvalidInput
from loomdb.gc import service as G

HANG = 120  # a refusal takes a second; a run still going then would serve or generate


def _run(db: str, *args: str | bytes) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.run([sys.executable, "-m", "loomdb", "--db", db, *args], env=env,
                          capture_output=True, timeout=HANG, check=False)


def _refused(run: subprocess.CompletedProcess[bytes], *words: str) -> None:
    err = run.stderr.decode("utf-8")
    assert run.returncode == 2, err[-2000:]
    assert err.startswith("loomdb: error: ") and err.count("\n") == 1 and "Traceback" not in err
    for word in words:
        assert word in err, err


@pytest.fixture
def store(store_url: str) -> str:
    with loomdb.open(store_url) as lm:
        lm.new_tree("hello", session="main")
    return store_url


BAD = [
    (["gc", "--grace", "inf"], "--grace"),
    (["gc", "--grace", "-inf"], "--grace"),
    (["gc", "--grace", "nan"], "--grace"),
    (["gc", "--grace", "1e300"], "--grace"),
    (["generate", "main", "--max-tokens", "-5"], "--max-tokens"),
    (["generate", "main", "--max-tokens", "0"], "--max-tokens"),
    (["compact", "main", "--max-tokens", "-1"], "--max-tokens"),
    (["chat", "main", "--max-tokens", "-5"], "--max-tokens"),
    (["serve", "--port", "99999999"], "--port"),
    (["serve", "--port", "-1"], "--port"),
    (["gateway", "--port", "70000"], "--port"),
    (["add", "main", "--role", "user", "--text", "x", "--json", "--options",
      '{"k": 99999999999999999999999999}'], ""),
    (["search", "hello", "--limit", "99999999999999999999999"], ""),
]


@pytest.mark.parametrize(("args", "word"), BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_numbers_exit_2_with_one_line(store: str, args: list[str], word: str) -> None:
    with loomdb.open(store) as lm:
        before = row_counts(lm)
    _refused(_run(store, *args), word)
    with loomdb.open(store) as lm:
        assert row_counts(lm) == before


UTF8 = [
    ["add", "main", "--role", "user", "--text", b"caf\xe9"],
    ["new", "--text", b"x", "--session", b"s\xff"],
    ["tag", "main", b"\xc3\x28"],
    ["show", b"\xed\xa0\x80"],
    [b"\xff\xfe"],
    ["new", "--text", "x", "--title", b"t\x80", "--json"],
]


@pytest.mark.parametrize("args", UTF8, ids=range(len(UTF8)))
def test_invalid_utf8_arguments_exit_2_with_one_line(store: str, args: list[str | bytes]) -> None:
    with loomdb.open(store) as lm:
        before = row_counts(lm)
    run = _run(store, *args)
    _refused(run, "UTF-8")
    if b"--json" in [a if isinstance(a, bytes) else a.encode() for a in args]:
        assert "UTF-8" in json.loads(run.stdout)["error"]["message"]
    with loomdb.open(store) as lm:
        assert row_counts(lm) == before


def test_the_library_refuses_a_grace_it_cannot_subtract(tmp_path: Path) -> None:
    from datetime import timedelta

    with loomdb.open(str(tmp_path / "s")) as lm:
        for grace in (timedelta(days=-1), timedelta.max):
            with pytest.raises(InvalidInput, match="grace"):
                G.collect(lm, grace=grace)


@pytest.mark.parametrize("limit", [-5, 0, True, "7", 2**40])
def test_the_library_refuses_a_bad_token_limit(tmp_path: Path, limit: object) -> None:
    """Through options too (any edge that sets them), for every kind of client."""
    from loomdb.providers.clients import client_for
    from loomdb.providers.config import ModelSpec

    ctx = {"messages": [{"role": "user", "content": [{"type": "text", "text": "hi"}]}],
           "options": {"max_tokens": limit}}
    for kind in ("openai", "anthropic", "local"):
        spec = ModelSpec(name="m", kind=kind, model="m", base_url="http://127.0.0.1:9/v1")
        with pytest.raises(InvalidInput, match="max_tokens"):
            client_for(spec, environ={"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
                       ).request(ctx)
