"""Span redaction (issue 36, points 2 and 3) on both backends: a string copied into a
message, a tool call's output, a raw response, a compaction summary and a title is
erased from all of them (the SQLite files with their WAL, a pg_dump), the nodes keep
their ids, `verify` passes and lists what was scrubbed; what was derived from a
scrubbed message is stale (a compaction summary) or derived again (a title); a dry
run writes nothing; a pattern is held to its limits; over HTTP-like access a user's
redaction touches only their own trees."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import texts_of
from loomdb import Loom
from loomdb.errors import InvalidInput
from loomdb.forget import spans as S
from loomdb.generation import store
from loomdb.providers.base import Completion
from loomdb.storage_ops import storage
from loomdb.users import Owner, add_user
from test_forget import dump

SECRET = "zebra-orchid-4471-quasar"
MARK = "[redacted:text]"


def files(loom: Loom) -> bytes:
    """Every byte the store keeps: SQLite checkpointed, then its files read (the WAL
    too); PostgreSQL through pg_dump."""
    if loom.backend.dialect == "sqlite":
        loom.backend.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return dump(loom)


def five_places(loom: Loom, secret: str = SECRET) -> dict[str, str]:
    """The secret in a message (the root: the default title comes from it), a tool's
    output, a model's raw response (and its request), and a compaction summary."""
    tree, root = loom.new_tree(f"deploy with {secret} please", session="main")
    call = loom.append("main", [{"type": "tool_use", "id": "t1", "name": "env",
                                 "input": {"command": "printenv"}}], role="assistant")
    out = loom.append("main", [{"type": "tool_result", "tool_use_id": "t1",
                                "content": [{"type": "text", "text": f"KEY={secret}\n"}]}])
    pos = loom.resolve("main")
    answer = Completion(
        content=[{"type": "text", "text": "Done."}], stop_reason="end_turn",
        usage={"input_tokens": 3, "output_tokens": 1}, model="m", provider="openai",
        provider_request={"model": "m", "messages": [{"role": "user", "content": secret}]},
        raw_response={"choices": [{"message": {"content": "Done."}}], "echo": f"[{secret}]"},
        latency_ms=5)
    gen_node = store(loom, pos, loom.context(pos), [answer]).nodes[0]
    if loom.resolve("main").node != gen_node.id:
        loom.set_ref("main", gen_node.id)
    summary = loom.append("main", f"Summary: the user deployed with {secret}.",
                          kind="compaction", also=[(gen_node.id, "context")])
    storage(loom).record_compaction({
        "node_id": summary.id, "tree_id": tree.id, "model": "m", "tokens_before": 50,
        "tokens_after": 10, "duration_ms": 1, "trigger": "manual", "summarized": 3,
        "created_at": summary.created_at})
    assert secret in loom.tree(tree.id).title
    return {"tree": tree.id, "root": root.id, "call": call.id, "out": out.id,
            "gen_node": gen_node.id, "gen": gen_node.provenance["generation"],  # type: ignore[index]
            "summary": summary.id}


def test_five_kinds_of_place_are_erased_and_verify(loom: Loom) -> None:
    at = five_places(loom)
    assert loom.search(SECRET.split("-")[1])  # indexed before
    assert SECRET.encode() in files(loom)
    dry = loom.forget.redact_spans(text=SECRET)
    assert dry.dry_run and dry.trees[at["tree"]]["nodes"] == 3
    assert dry.trees[at["tree"]]["generations"] == 1 and dry.trees[at["tree"]]["titles"] == 1
    assert SECRET.encode() in files(loom)  # a dry run writes nothing
    done = loom.forget.redact_spans(text=SECRET, dry_run=False, reason="leaked")
    assert sorted(done.ids) == sorted([at["root"], at["out"], at["summary"]])
    assert done.generations == [at["gen"]] and done.retitled == [at["tree"]]
    # the nodes keep their ids; the spans read as the marker
    texts = texts_of(loom, at["out"])
    assert texts[0] == f"deploy with {MARK} please"
    assert loom.node(at["out"]).content[0]["content"][0]["text"] == f"KEY={MARK}\n"
    assert MARK in loom.node(at["summary"]).content[0]["text"]
    assert loom.tree(at["tree"]).title == f"deploy with {MARK} please"
    gen = storage(loom).generation(at["gen"])
    assert gen is not None and SECRET not in json.dumps(gen) and MARK in gen["raw_response"]
    report = loom.verify()
    assert report.ok, report.broken
    assert {(s["kind"], s["node"]) for s in report.scrubbed} == {
        ("content", at["root"]), ("content", at["out"]), ("content", at["summary"]),
        ("generation", at["gen_node"])}
    # derived: the summary was made from the scrubbed messages: stale until redone
    assert [s["item"] for s in report.stale] == [at["summary"]]
    assert [s["item"] for s in loom.forget.stale()] == [at["summary"]]
    assert not loom.search(SECRET.split("-")[1])
    assert loom.search("deploy")  # indexed again from what they hold now
    assert SECRET.encode() not in files(loom)
    assert json.dumps(SECRET)[1:-1].encode() not in files(loom)
    line = loom.forget.log(limit=1)[0]
    assert line["action"] == "redact-span" and SECRET not in json.dumps(line)
    # again: nothing is found, nothing changes
    again = loom.forget.redact_spans(text=SECRET, dry_run=False)
    assert again.trees == {} and loom.verify().ok


def test_a_scrubbed_body_changed_afterwards_is_tampering(loom: Loom) -> None:
    at = five_places(loom)
    loom.forget.redact_spans(text=SECRET, dry_run=False)
    node = loom.node(at["out"])
    forget = storage(loom).forgetting()
    with storage(loom).transaction():
        forget.set_body(node.content_id, json.dumps([{"type": "text", "text": "forged"}]))
    report = loom.verify()
    assert not report.ok and any(b["node"] == at["out"] for b in report.broken)


def test_a_pattern_and_a_secret_kind(loom: Loom) -> None:
    _, root = loom.new_tree("codes: AB-1234 and AB-9876, not AC-1", session="main")
    done = loom.forget.redact_spans(pattern=r"AB-\d{4}", dry_run=False)
    assert done.marker == "[redacted:pattern]"
    assert done.occurrences == 4  # two in the message, two in the title made from it
    assert texts_of(loom, "main") == [
        "codes: [redacted:pattern] and [redacted:pattern], not AC-1"]
    assert loom.verify().ok
    # a secret the store kept under `warn` is erased by its kind
    loom.forget.set_secrets_policy({"github-token": "warn"})
    token = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
    loom.append("main", f"token {token}", role="assistant")
    assert token.encode() in files(loom)
    done = loom.forget.redact_spans(secret_type="github-token", dry_run=False)
    assert done.marker == "[redacted:github-token]" and done.occurrences == 1
    assert texts_of(loom, "main")[-1] == "token [redacted:github-token]"
    assert token.encode() not in files(loom) and loom.verify().ok


@pytest.mark.parametrize("args", [
    {"text": "abc"}, {"text": "x" * 1001}, {"text": "redacted"}, {"pattern": "a*"},
    {"pattern": "("}, {"pattern": "x" * 1001}, {"pattern": "redacted"},
    {"secret_type": "no-such-kind"}, {}, {"text": "abcd", "pattern": "abcd"},
])
def test_what_is_refused(loom: Loom, args: dict[str, str]) -> None:
    loom.new_tree("abcd abc redacted xxxx", session="main")
    with pytest.raises(InvalidInput):
        loom.forget.redact_spans(dry_run=False, **args)
    assert texts_of(loom, "main") == ["abcd abc redacted xxxx"]


def test_a_pattern_past_its_budget_writes_nothing(loom: Loom) -> None:
    loom.new_tree("a" * 30 + "!", session="main")
    with pytest.raises(S.PatternBudget):
        loom.forget.redact_spans(pattern=r"(a|aa)+$", dry_run=False, seconds=0.05)
    assert texts_of(loom, "main") == ["a" * 30 + "!"]
    assert loom.forget.log(limit=1) == []


def test_a_user_redacts_only_their_own_trees(loom: Loom) -> None:
    ann, _ = add_user(loom, "ann")
    bob, _ = add_user(loom, "bob")
    a = loom.as_(Owner(loom, ann))
    b = loom.as_(Owner(loom, bob))
    a.trees.new(f"ann has {SECRET} here", session="a")
    b.trees.new(f"bob has {SECRET} here", session="b")
    a.nodes.append("a", f"shared {SECRET}")  # the same content in both users' trees
    b.nodes.append("b", f"shared {SECRET}")
    done = a.forget.redact_spans(text=SECRET, dry_run=False)
    assert len(done.trees) == 1 and done.shared == []
    # bob's node holds the same content: ann's node reads a scrubbed copy of its own
    assert done.copies == [] and texts_of(loom, "a")[-1] == f"shared {MARK}"
    assert [t for t in texts_of(loom, "a") if SECRET in t] == []
    assert [t for t in texts_of(loom, "b") if SECRET in t] == [
        f"bob has {SECRET} here", f"shared {SECRET}"]
    report = loom.verify()
    assert report.ok and len(report.scrubbed) == 2  # ann's root in place, her own copy
    # the operator redacts the content whole: ann's own copy of it goes too
    loom.forget.redact(loom.resolve("b").node)
    assert texts_of(loom, "a")[-1] == texts_of(loom, "b")[-1] == "[redacted]"
    assert loom.verify().ok


def test_a_tree_alone(loom: Loom) -> None:
    one, _ = loom.new_tree(f"one {SECRET}", session="one")
    loom.new_tree(f"two {SECRET}", session="two")
    loom.forget.redact_spans(text=SECRET, tree=one.id, dry_run=False)
    assert texts_of(loom, "one") == [f"one {MARK}"]
    assert texts_of(loom, "two") == [f"two {SECRET}"]


def test_a_node_redaction_makes_a_summary_stale(loom: Loom) -> None:
    at = five_places(loom, "plain-words-only-here")
    loom.forget.redact(at["out"])
    assert [s["item"] for s in loom.verify().stale] == [at["summary"]]


def test_the_documents_and_collections_hold_it_no_more(loom: Loom) -> None:
    loom.documents.new("notes", f"the key is {SECRET}")
    loom.collections.new("keys", "list")
    _, root = loom.new_tree("something", session="main")
    loom.collections.add("keys", root.id, fields={"note": f"see {SECRET}"})
    done = loom.forget.redact_spans(text=SECRET, dry_run=False)
    assert len(done.areas) == 2
    assert SECRET.encode() not in files(loom)


# -- property: random trees with random copies ---------------------------------------------
EXAMPLE = itertools.count()
#: (which session, a copy or not, where: 0 a new tree (its root and title), 1-2 a
#: message, 3 a tool's output, 4 a tool call's input)
shapes = st.lists(st.tuples(st.integers(0, 50), st.booleans(), st.integers(0, 4)),
                  min_size=1, max_size=8)


@settings(max_examples=12, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                   HealthCheck.too_slow])
@given(shape=shapes)
def test_no_copy_is_left_and_the_chain_verifies(loom: Loom, shape: list[tuple[int, bool, int]]
                                                ) -> None:
    n = next(EXAMPLE)
    secret = f"copy-{n}-of-the-needle"
    trees: list[str] = []
    made: list[str] = []
    for i, (parent, copy, where) in enumerate(shape):
        text = f"m{n}.{i} " + (secret if copy else "plain")
        if not trees or where == 0:
            made.append(loom.new_tree(text, session=f"s{n}.{i}")[1].id)
            trees.append(f"s{n}.{i}")
            continue
        session = trees[parent % len(trees)]
        if where == 3:
            made.append(loom.append(session, [{"type": "tool_result", "tool_use_id": f"x{i}",
                                   "content": [{"type": "text", "text": text}]}]).id)
        elif where == 4:
            made.append(loom.append(session, [{"type": "tool_use", "id": f"x{i}", "name": "sh",
                                               "input": {"command": f"echo {text}"}}],
                                    role="assistant").id)
        else:
            made.append(loom.append(session, text,
                                    role="assistant" if where == 2 else "user").id)
    loom.forget.redact_spans(text=secret, dry_run=False)
    assert secret.encode() not in files(loom)
    assert [loom.node(i).id for i in made] == made  # every node keeps its id
    report = loom.verify()
    assert report.ok, report.broken


def test_a_span_redaction_leaves_no_vector(loom: Loom, backend_kind: str) -> None:
    from security.test_forget_vectors import _rows, _vector

    _, root = loom.new_tree(f"The glacier carved {SECRET} a deep valley.", session="main")
    loom.search("warm up", mode="semantic")  # the area; the backlog is embedded next
    loom.search.reindex()
    assert loom.search("ice shaping land", mode="semantic")
    seq, _ = _vector(loom, root.id)
    loom.forget.redact_spans(text=SECRET, dry_run=False)
    assert _rows(loom, seq, backend_kind) == 0


def test_the_cli_is_a_dry_run_without_yes(tmp_path: Path) -> None:
    from click.testing import CliRunner

    from loomdb.cli import root

    db = str(tmp_path / "store")
    run = CliRunner().invoke
    assert run(root, ["--db", db, "new", "--text", f"hello {SECRET}"]).exit_code == 0
    dry = run(root, ["--db", db, "redact", "--text", SECRET])
    assert dry.exit_code == 0 and "dry run" in dry.output, dry.output
    assert SECRET not in dry.output
    done = run(root, ["--db", db, "redact", "--text", SECRET, "--yes", "--json"])
    assert done.exit_code == 0, done.output
    assert json.loads(done.output)["occurrences"] == 2  # the message and its title
    ok = run(root, ["--db", db, "verify"])
    assert ok.exit_code == 0 and "scrubbed" in ok.output
