"""The one error mapper: every typed error -> its CLI exit code, HTTP status, MCP code
and JSON shape, and the CLI showing exactly that for real failures."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from loomdb import edge, errors

ROOT = Path(__file__).resolve().parents[1]

CASES = [
    (errors.UsageError("--x", "no such option"), "UsageError", 400, -32602),
    (errors.InvalidInput("content[0]", "bad"), "InvalidInput", 400, -32602),
    (errors.TooLarge("content", "over 1 MB"), "TooLarge", 413, -32602),
    (errors.CycleError("edge", "would close a cycle"), "CycleError", 422, -32602),
    (errors.Unauthorized(), "Unauthorized", 401, -32001),
    (errors.NotFound("node", "01ABC"), "NotFound", 404, -32004),
    (errors.AmbiguousName("node", "01", ["01A", "01B"]), "AmbiguousName", 404, -32004),
    (errors.RefConflict("main", "A", "B"), "RefConflict", 409, -32009),
    (errors.RefsInTheWay("01ABC", ["main"]), "RefsInTheWay", 409, -32009),
    (errors.MergeConflict("doc:plan merge", [{"base": "b\n", "ours": "o\n", "theirs": "t\n"}]),
     "MergeConflict", 409, -32009),
    (errors.StoreBusy("store", "locked"), "StoreBusy", 503, -32003),
    (errors.StoreUnavailable("x.db", "not SQLite", "fix it"), "StoreUnavailable", 503, -32008),
    (errors.ReadOnlyStore("postgresql://standby/db", "cannot execute INSERT in a read-only transaction"), "ReadOnlyStore", 503, -32007),
    (errors.NotCompacted(10, 12), "NotCompacted", 422, -32602),
    (errors.ProviderError("openai", "timed out"), "ProviderError", 502, -32002),
    (errors.MissingExtra("postgres", "postgres"), "MissingExtra", 501, -32005),
    (errors.IntegrityError("blob", "sha256:a", "sha256:b"), "IntegrityError", 500, -32006),
    (errors.LoomError("something of ours"), "LoomError", 400, -32000),
]


@pytest.mark.parametrize(("exc", "name", "status", "code"), CASES, ids=[c[1] for c in CASES])
def test_every_typed_error_maps_to_exit_2_its_status_and_one_json_shape(
    exc: errors.LoomError, name: str, status: int, code: int
) -> None:
    shown = edge.failure(exc)
    assert (shown.type, shown.exit_code, shown.status, shown.mcp_code) == (name, 2, status, code)
    assert edge.exit_code(exc) == 2 and edge.http_status(exc) == status
    error = {"type": name, "message": str(exc), **details(exc)}
    assert edge.error_json(exc) == {"error": error}
    assert edge.mcp_error(exc) == {"code": code, "message": str(exc), "data": error}


def details(exc: errors.LoomError) -> dict[str, object]:
    """What an error shows beyond its message: a merge conflict's regions."""
    if isinstance(exc, errors.MergeConflict):
        return {"conflicts": exc.conflicts}
    return {}


def test_a_merge_conflict_shows_its_regions_on_one_line() -> None:
    regions = [{"base": "b\n", "ours": "ours\n", "theirs": "theirs\n"}]
    shown = edge.failure(errors.MergeConflict("doc:plan merge", regions))
    assert shown.to_json()["error"]["conflicts"] == regions
    assert "\n" not in shown.message and shown.message.startswith("doc:plan merge: 1 ")


def test_the_table_covers_every_error_class_in_errors() -> None:
    classes = [c for c in vars(errors).values()
               if isinstance(c, type) and issubclass(c, errors.LoomError)]
    covered = {type(exc) for exc, *_ in CASES}
    assert set(classes) <= covered, set(classes) - covered


def test_a_message_is_one_line() -> None:
    exc = errors.InvalidInput("content", "line one\n  line two")
    assert edge.failure(exc).message == "content: line one line two"


def test_an_error_that_is_not_ours_is_a_bug_and_hides_its_message() -> None:
    shown = edge.failure(RuntimeError("secret internals"))
    assert (shown.type, shown.exit_code, shown.status, shown.mcp_code) == (
        "InternalError", 1, 500, -32603)
    assert "secret" not in json.dumps(shown.to_json())


def test_request_validation_is_422() -> None:
    import pydantic

    class Body(pydantic.BaseModel):
        n: int

    with pytest.raises(pydantic.ValidationError) as info:
        Body.model_validate({"n": "many"})
    shown = edge.failure(info.value)
    assert (shown.status, shown.exit_code, shown.type) == (422, 2, "InvalidInput")
    assert "\n" not in shown.message


def _cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(ROOT / "src"), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    return subprocess.run([sys.executable, "-m", "loomdb", "--db", str(tmp_path / "s"), *args],
                          capture_output=True, text=True, env=env, timeout=60)


@pytest.mark.parametrize(("args", "name"), [
    (("show", "nosuchnode", "--json"), "NotFound"),
    (("add", "nowhere", "--role", "user", "--text", "hi", "--json"), "NotFound"),
    (("new", "--json"), "InvalidInput"),
    (("show", "--bogus", "--json"), "UsageError"),
])
def test_the_cli_shows_the_mapped_error(tmp_path: Path, args: tuple[str, ...], name: str) -> None:
    done = _cli(tmp_path, *args)
    assert done.returncode == 2, done
    body = json.loads(done.stdout)
    assert body["error"]["type"] == name and body["error"]["message"]
    assert done.stderr.startswith("loomdb: error: ") and done.stderr.count("\n") == 1
    assert "Traceback" not in done.stderr
