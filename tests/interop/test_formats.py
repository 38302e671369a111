"""The registry of formats (`loomdb.interop.formats`): every format is told from its
content alone, today's Claude Code files included, and what lists formats (the
command line's help, the docs) lists the registry."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

import loomdb
from format_samples import WRITTEN, fixture_files, made, missing
from loomdb import Loom
from loomdb.cli.interop import _IMPORT_FORMATS, _WATCH_FORMATS
from loomdb.errors import InvalidInput
from loomdb.interop import open_source, parse_file
from loomdb.interop.formats import AGENTS, REGISTRY
from loomdb.interop.sniff import MAX_SKIPPED
from loomdb.interop.watch import Watcher

ROOT = Path(__file__).resolve().parents[2]
TODAY = sorted(WRITTEN.glob("claude-code-2.1.*.jsonl"))


@pytest.fixture(scope="module")
def samples(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return made(tmp_path_factory.mktemp("samples"))


def test_every_fixture_of_every_format_is_told_without_its_name(
    tmp_path: Path, samples: dict[str, Path]
) -> None:
    cases = {**fixture_files(), **{path: fmt for fmt, path in samples.items()}}
    assert not missing(set(cases.values()))
    for number, (path, fmt) in enumerate(sorted(cases.items())):
        neutral = tmp_path / f"{number}.data"  # no extension says what it is
        shutil.copyfile(path, neutral)
        found, _ = open_source(neutral)
        assert found == fmt, path.name
        assert any(not hasattr(item, "reason") for item in parse_file(neutral)), path.name


def test_todays_claude_code_files_start_with_records_no_format_knows() -> None:
    assert TODAY
    for path in TODAY:
        assert '"type":"queue-operation"' in path.read_text().split("\n", 1)[0] or \
            '"type":"mode"' in path.read_text().split("\n", 1)[0]
        assert open_source(path)[0] == "claude_code"


def test_records_of_unknown_types_are_passed_over_only_before_the_first_known(
    tmp_path: Path, samples: dict[str, Path]
) -> None:
    pi = samples["pi"].read_bytes()
    few = tmp_path / "few.data"
    few.write_bytes(b'{"type": "something-new", "n": 1}\n' * MAX_SKIPPED + pi)
    assert open_source(few)[0] == "pi"
    many = tmp_path / "many.data"
    many.write_bytes(b'{"type": "something-new", "n": 1}\n' * (MAX_SKIPPED + 1) + pi)
    with pytest.raises(InvalidInput, match="unknown export format"):
        open_source(many)
    untyped = tmp_path / "untyped.data"  # a record with no type is no record type to pass
    untyped.write_bytes(b'{"n": 1}\n' + pi)
    with pytest.raises(InvalidInput, match="unknown export format"):
        open_source(untyped)


def test_todays_claude_code_files_import_without_a_format(loom: Loom) -> None:
    for path in TODAY:
        report = loom.import_file(path)
        assert report.format == "claude_code" and report.trees and report.nodes, path.name
        assert not report.errors, report.errors
    tree = loom.trees()[0]
    assert loom.tree_nodes(tree.id)


def test_a_session_whose_subagent_file_is_missing_says_so() -> None:
    said = [w for item in parse_file(WRITTEN / "claude-code-2.1.332-subagent.jsonl")
            for w in getattr(item, "warnings", [])]
    assert any("subagent run(s) whose file is missing (agent-af65d18125695fe6a.jsonl" in w
               for w in said), said


def test_watch_records_todays_claude_code_files(loom: Loom, tmp_path: Path) -> None:
    project = tmp_path / "projects" / "-home-work"
    project.mkdir(parents=True)
    for path in TODAY:
        shutil.copyfile(path, project / path.name)
    done = loom.watcher(tmp_path / "projects").step()
    assert {d.path.name for d in done} == {p.name for p in TODAY}
    assert all(d.error is None and d.report is not None and d.report.nodes for d in done), \
        [d.to_json() for d in done]
    assert len(loom.trees()) >= len(TODAY)
    assert loom.watcher(tmp_path / "projects", "claude-code").step()  # --format: the same
    assert all(not d.report.nodes for d in loom.watcher(tmp_path / "projects").step()
               if d.report is not None)


def test_watch_takes_only_an_agents_format(tmp_path: Path) -> None:
    loom = loomdb.open(str(tmp_path / "store"))
    with loom, pytest.raises(InvalidInput, match="unknown format 'chatgpt'; supported: auto, "
                       "claude-code, codex, pi"):
        Watcher(loom, tmp_path, format="chatgpt")
    with loomdb.open(str(tmp_path / "store")) as lm:
        assert Watcher(lm, tmp_path, format="pi").format == "pi"


def test_the_help_and_the_docs_list_the_registry() -> None:
    names = [f.cli for f in REGISTRY]
    assert _IMPORT_FORMATS.split(" ")[0].split("|")[1:-1] == names
    assert _WATCH_FORMATS.split(" ")[0].split("|")[1:] == [f.cli for f in AGENTS]
    interop = (ROOT / "docs" / "interop.md").read_text()
    readme = (ROOT / "README.md").read_text()
    listed = re.search(r"--format auto\|([a-z|-]+)\|loomdb\]", interop)
    assert listed and listed.group(1).split("|") == names
    listed = re.search(r"--format auto\\\|([a-z\\|-]+)\\\|loomdb\]", readme)
    assert listed and listed.group(1).split("\\|") == names
    watch = re.search(r"watch DIR \[--format auto\|([a-z|-]+)\]", interop)
    assert watch and watch.group(1).split("|") == [f.cli for f in AGENTS]
