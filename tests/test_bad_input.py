"""Bad input: a typed error in the library, exit 2 in the CLI, and nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import row_counts, run_main, thread
from loomdb import CycleError, InvalidInput, Loom, LoomError, NotFound, TooLarge


def run_cli(db: str, *args: str) -> tuple[int, str, str]:
    return run_main("--db", db, *args)


CASES = [
    ("unknown headish", NotFound, lambda lm, ids: lm.append("nope", "x"),
     ["add", "nope", "--role", "user", "--text", "x"]),
    ("a cycle", CycleError, lambda lm, ids: lm.link(ids[1], ids[0], type="annotation"),
     ["link", "{1}", "{0}", "--type", "annotation"]),
    ("a continuation across trees", InvalidInput,
     lambda lm, ids: lm.append("main", "x", also=[ids[2]]),
     ["add", "main", "--role", "user", "--text", "x", "--also", "{2}"]),
    ("an edit of a missing node", NotFound,
     lambda lm, ids: lm.edit("01ARZ3NDEKTSV4RRFFQ69G5FAV", "x"),
     ["edit", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "--text", "x"]),
    ("invalid JSON content", InvalidInput,
     lambda lm, ids: lm.append("main", [{"type": "text", "txt": "x"}]),
     ["add", "main", "--role", "user", "--content-json", '[{"type": "text", "text": '] ),
    ("an unknown role", InvalidInput, lambda lm, ids: lm.append("main", "x", role="robot"),
     ["add", "main", "--role", "robot", "--text", "x"]),
]


@pytest.fixture
def setup(loom: Loom) -> tuple[Loom, list[str]]:
    ids = thread(loom, ["q", "a"])
    _, other = loom.new_tree("another tree")
    return loom, ids + [other.id]


class TestLibrary:
    @pytest.mark.parametrize("name, error, call, argv", CASES, ids=[c[0] for c in CASES])
    def test_each_is_a_typed_error_and_writes_nothing(self, setup, name, error, call, argv) -> None:  # type: ignore[no-untyped-def]
        loom, ids = setup
        before = row_counts(loom)
        with pytest.raises(error):
            call(loom, ids)
        assert row_counts(loom) == before

    def test_invalid_utf8_in_a_file_is_refused(self, loom: Loom, tmp_path: Path) -> None:
        thread(loom, ["q"])
        bad = tmp_path / "bad.txt"
        bad.write_bytes(b"ok \xc3\x28 not utf-8")
        before = row_counts(loom)
        with pytest.raises(InvalidInput, match="UTF-8"):
            loom.append("main", loom.file_content(bad))
        assert row_counts(loom) == before

    def test_a_50_mb_text_block_is_over_the_limit(self, loom: Loom) -> None:
        thread(loom, ["q"])
        before = row_counts(loom)
        with pytest.raises(TooLarge):
            loom.append("main", "x" * (50 * 1024 * 1024))
        assert row_counts(loom) == before

    def test_only_our_error_types_escape(self, loom: Loom) -> None:
        for bad in (None, 5, {"type": "text"}, [None], [{"type": 1}]):
            with pytest.raises(LoomError):
                loom.new_tree(bad)  # type: ignore[arg-type]


class TestCommandLine:
    @pytest.mark.parametrize("name, error, call, argv", CASES, ids=[c[0] for c in CASES])
    def test_each_exits_2_with_one_line_and_writes_nothing(self, setup, store_url, name, error, call, argv) -> None:  # type: ignore[no-untyped-def]
        loom, ids = setup
        before = row_counts(loom)
        args = [a.format(*ids) if a.startswith("{") and a.endswith("}") else a for a in argv]
        code, out, err = run_cli(store_url, *args)
        assert code == 2
        assert err.startswith("loomdb: error: ") and err.count("\n") == 1
        code, out, err = run_cli(store_url, *args, "--json")
        assert code == 2 and "error" in json.loads(out)
        assert row_counts(loom) == before

    def test_invalid_utf8_file_exits_2(self, setup, store_url: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
        bad = tmp_path / "bad.txt"
        bad.write_bytes(b"\xff\xfe\xfd")
        code, _, err = run_cli(store_url, "add", "main", "--role", "user", "--file", str(bad))
        assert code == 2 and "UTF-8" in err

    def test_a_50_mb_text_block_exits_2(self, setup, store_url: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
        big = tmp_path / "big.txt"
        big.write_bytes(b"y" * (50 * 1024 * 1024))
        code, _, err = run_cli(store_url, "add", "main", "--role", "user", "--file", str(big))
        assert code == 2 and "limit" in err
