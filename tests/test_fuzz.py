"""Fuzz tests (issue 11, item 15): truncated, mutated and random inputs for every
importer, the headish parser, content JSON and the providers config. The only errors
allowed are loomdb's own (LoomError subclasses); nothing else may escape, not even as
an import report line naming a Python exception; and a refused write leaves nothing
(row counts unchanged, the store still verifies, no tree without its messages).

Example counts are modest so the file stays fast; seeds vary per run (Hypothesis's
default), and a failure prints the example to replay.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import loomdb
from format_samples import made, missing
from helpers import row_counts, thread
from loomdb import Loom, LoomError
from loomdb.content import validate_blocks
from loomdb.headish import parse
from loomdb.interop.export import export
from loomdb.interop.formats import REGISTRY
from loomdb.interop.importer import import_file
from loomdb.providers.config import load_config, parse_config

FIXTURES = Path(__file__).parent / "fixtures" / "interop"
FUZZ = settings(max_examples=15, deadline=None, derandomize=False,
                suppress_health_check=[HealthCheck.function_scoped_fixture,
                                       HealthCheck.too_slow])
#: an import report line made from an exception that is not loomdb's own
UNTYPED = re.compile(r"^[A-Z][A-Za-z]*(Error|Exception|Warning)\b")


def samples(tmp: Path) -> dict[str, bytes]:
    """One real or hand-made sample per format of the registry (and the native export)."""
    out = {fmt: path.read_bytes() for fmt, path in made(tmp / "made").items()}
    out.update({f.name.split("_")[0]: f.read_bytes() for f in sorted(FIXTURES.iterdir())
                if f.suffix in (".json", ".jsonl")})
    out["openai_jsonl"] = (json.dumps({"messages": [
        {"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi?"},
        {"role": "assistant", "content": None, "tool_calls": [{"id": "c1", "type": "function",
         "function": {"name": "f", "arguments": '{"a": 1}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
        {"role": "assistant", "content": "Done."}]}) + "\n").encode() * 2
    out["loom"] = json.dumps({
        "root": {"text": "Once", "children": [
            {"id": "a1", "text": " upon", "children": [], "meta": {"source": "AI"}},
            {"id": "b1", "text": " a time", "children": [], "bookmark": True}]},
        "selected_node_id": "a1"}).encode()
    with loomdb.open(str(tmp / "native-src")) as src:
        ids = thread(src, ["q", "a", "q2"])
        src.edit(ids[1], "a'")
        src.tag(ids[0], "t")
        buf = io.StringIO()
        export(src, buf, format="json")
        out["loomdb"] = buf.getvalue().encode()
    return out


def import_checked(loom: Loom, path: Path, fmt: str) -> None:
    """Import `path`; only typed errors, and a store that is whole afterwards."""
    before = row_counts(loom)
    try:
        report = import_file(loom, path, format=fmt)
    except LoomError:
        assert row_counts(loom) == before  # refused before anything was written
    except RecursionError:  # pragma: no cover - a failure, named for the report
        pytest.fail("an importer recursed without bound")
    else:
        for err in report.errors:
            assert not UNTYPED.match(err["reason"]), err
    assert loom.verify().ok
    for tree in loom.trees():
        assert loom.tree_nodes(tree.id), tree.id


def mutate(data: bytes, edits: list[tuple[int, int]]) -> bytes:
    out = bytearray(data)
    for pos, byte in edits:
        if out:
            out[pos % len(out)] = byte
    return bytes(out)


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**70, 2**70) | st.floats(allow_nan=True)
    | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["id", "role", "content", "text", "type", "messages", "mapping",
                         "children", "parent", "author", "parts", "name", "input",
                         "chat_messages", "sender", "conversations", "from", "value",
                         "root", "tool_use_id", "ref", "mime_type", "trees", "nodes"])
        | st.text(max_size=8), inner, max_size=5),
    max_leaves=20,
)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Loom]:
    with loomdb.open(str(tmp_path / "store")) as loom:
        yield loom


@pytest.fixture(scope="module")
def sample_files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    return samples(tmp_path_factory.mktemp("samples"))


#: formats whose samples are JSON lines
LINES = {"oasst", "openai_jsonl", "claude_code", "codex", "pi"}
#: every format of the registry, and loomdb's own export
FORMATS = [f.name for f in REGISTRY] + ["loomdb"]


def test_every_format_has_a_sample(sample_files: dict[str, bytes]) -> None:
    assert not missing(set(sample_files))


@pytest.mark.parametrize("fmt", FORMATS)
class TestImporters:
    def test_truncated_exports(self, fmt: str, store: Loom, tmp_path: Path,
                               sample_files: dict[str, bytes]) -> None:
        data = sample_files[fmt]

        @FUZZ
        @given(cut=st.integers(0, len(data) - 1), auto=st.booleans())
        def check(cut: int, auto: bool) -> None:
            path = tmp_path / f"cut.{'jsonl' if fmt in LINES else 'json'}"
            path.write_bytes(data[:cut])
            import_checked(store, path, "auto" if auto else fmt)

        check()

    def test_mutated_exports(self, fmt: str, store: Loom, tmp_path: Path,
                             sample_files: dict[str, bytes]) -> None:
        data = sample_files[fmt]

        @FUZZ
        @given(edits=st.lists(st.tuples(st.integers(0, 10**7), st.integers(0, 255)),
                              min_size=1, max_size=8))
        def check(edits: list[tuple[int, int]]) -> None:
            path = tmp_path / "mutated.json"
            path.write_bytes(mutate(data, edits))
            import_checked(store, path, fmt)

        check()

    def test_random_json_documents(self, fmt: str, store: Loom, tmp_path: Path) -> None:
        @FUZZ
        @given(doc=JSON, lines=st.booleans())
        def check(doc: Any, lines: bool) -> None:
            path = tmp_path / "random.json"
            text = json.dumps(doc)
            path.write_text(text + "\n" + text if lines else text)
            import_checked(store, path, fmt)

        check()


class TestHeadish:
    @FUZZ
    @given(text=st.text(max_size=30) | st.from_regex(r"[a-z0-9A-Z]{0,12}[~^][0-9]{0,25}"))
    def test_parse_and_resolve_raise_only_typed_errors(self, store: Loom, text: str) -> None:
        if not store.trees():
            thread(store, ["q", "a"])
        try:
            parse(text)
            store.resolve(text)
        except LoomError:
            pass


class TestContentJson:
    @FUZZ
    @given(doc=JSON | st.lists(st.fixed_dictionaries(
        {"type": st.sampled_from(["text", "image", "tool_use", "tool_result", "thinking",
                                  "document", "audio", "x"])}, optional={
            "text": JSON, "id": JSON, "name": JSON, "input": JSON, "content": JSON,
            "ref": JSON, "mime_type": JSON, "tool_use_id": JSON}), max_size=3))
    def test_append_takes_valid_content_or_writes_nothing(self, store: Loom, doc: Any) -> None:
        if not store.trees():
            thread(store, ["q"])
        before = row_counts(store)
        try:
            validate_blocks(doc)
        except LoomError:
            pass
        try:
            store.append("main", doc)
        except LoomError:
            assert row_counts(store) == before
        assert store.verify().ok


class TestProvidersConfig:
    @FUZZ
    @given(doc=st.dictionaries(st.sampled_from(["models", "default", "x"]), JSON | st.fixed_dictionaries(
        {}, optional={"m": st.dictionaries(st.sampled_from([
            "provider", "model", "base_url", "api_key_env", "timeout", "max_retries",
            "context_window", "path", "options"]), JSON, max_size=5)}), max_size=3))
    def test_parsed_tables(self, doc: Any) -> None:
        try:
            parse_config(doc)
        except LoomError:
            pass

    @FUZZ
    @given(text=st.text(max_size=200) | st.sampled_from([
        '[models.m]\nprovider = "openai"\nmodel = "x"\ntimeout = "soon"\n',
        '[models.m]\nprovider = 3\n', 'default = 1\n', '[models]\nm = 2\n',
        '[models.m]\nprovider = "local"\npath = []\n']))
    def test_toml_files(self, tmp_path: Path, text: str) -> None:
        path = tmp_path / "providers.toml"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        try:
            load_config(path)
        except LoomError:
            pass


# -- wrong types, lone surrogates and long references, on both backends (issue 32, item 10)
_WRONG = JSON | st.sampled_from([[], {}, "x", 0, None, True])
_NATIVE_TREE = st.fixed_dictionaries({"loomdb_export": st.just(1), "tree": _WRONG}, optional={
    "nodes": _WRONG | st.lists(st.dictionaries(st.sampled_from(
        ["id", "parent", "role", "content", "created_at"]), _WRONG, max_size=4), max_size=2),
    "refs": _WRONG, "meta": _WRONG, "edges": _WRONG, "blobs": _WRONG})
_LONE = st.sampled_from(["\udcff", "\ud800", "a\udfffb"])
_SHAREGPT = st.fixed_dictionaries({"conversations": st.lists(st.fixed_dictionaries(
    {"from": st.sampled_from(["human", "gpt", "system"]),
     "value": st.text(max_size=6) | _LONE}), min_size=1, max_size=3)},
    optional={"id": st.text(max_size=6) | _LONE})
_REFERENCE = st.integers(60_000, 200_000).map(lambda n: "Z" * n) | st.sampled_from(
    ["%%%%", "____", "%_%_", "ZZZZ%"])


@pytest.fixture(scope="module", params=["sqlite", "postgres"])
def either(request: pytest.FixtureRequest,
           tmp_path_factory: pytest.TempPathFactory) -> Iterator[Loom]:
    """One store per backend for the class (each test checks its own writes)."""
    from pg import store_of

    folder = tmp_path_factory.mktemp(f"shapes-{request.param}")
    with store_of(request.param, str(folder / "store")) as url, loomdb.open(url) as loom:
        yield loom


class TestWrongShapes:
    def test_native_trees_of_wrong_types(self, either: Loom, tmp_path: Path) -> None:
        @FUZZ
        @given(trees=st.lists(_NATIVE_TREE, min_size=1, max_size=3))
        def check(trees: list[Any]) -> None:
            path = tmp_path / "export.json"
            path.write_text(json.dumps({"loomdb_export": 1, "exported_at": "x",
                                        "trees": trees}))
            import_checked(either, path, "auto")

        check()

    def test_sharegpt_with_lone_surrogates(self, either: Loom, tmp_path: Path) -> None:
        @FUZZ
        @given(records=st.lists(_SHAREGPT, min_size=1, max_size=3), lines=st.booleans())
        def check(records: list[Any], lines: bool) -> None:
            path = tmp_path / ("chats.jsonl" if lines else "chats.json")
            path.write_text("\n".join(json.dumps(r) for r in records) if lines
                            else json.dumps(records))
            import_checked(either, path, "sharegpt")

        check()

    def test_long_and_wildcard_references(self, either: Loom) -> None:
        from loomdb.collections import service as K
        from loomdb.documents import service as D

        D.new(either, "notes", "words\n")
        K.new(either, "reading", "list")
        K.add(either, "reading", "doc:notes")

        @FUZZ
        @given(ref=_REFERENCE)
        def check(ref: str) -> None:
            for call in (lambda: D.show(either, f"notes@{ref}"),
                         lambda: K.add(either, "reading", "doc:notes", after=ref),
                         lambda: K.add(either, "reading", f"coll:reading/{ref}")):
                before = row_counts(either)
                try:
                    call()
                except LoomError as exc:
                    assert len(str(exc)) < 2000 and "\n" not in str(exc)
                    assert row_counts(either) == before

        check()
