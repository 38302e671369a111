"""The secrets scanner at every way in (docs/security.md).

A corpus of planted secrets of every kind the default rules name goes in through
every way content enters a store: appends (the text fast path and tool blocks), a
Claude Code session, a Codex rollout and a ChatGPT export imported, and a gateway
exchange recorded (request, answer, raw response). Under the default policy
(`redact`) no byte of any secret is then in the SQLite file with its WAL, in a
`pg_dump` of the PostgreSQL store, in an export or in the blob folder, the findings
name each kind without the secret, and `verify` passes. Under `refuse` every one of
those writes fails in one line and nothing is written; under `warn` the content is
kept and listed. The false-positive rate of the default rules over the project's own
agent sessions and chat exports is measured and printed."""

from __future__ import annotations

import io
import json
import os
import random
import string
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import loomdb
from loomdb import Loom
from loomdb.errors import InvalidInput
from loomdb.exchanges import openai_chat
from loomdb.exchanges.exchange import Gateway
from loomdb.providers.base import Completion
from loomdb.secrets import Scanner, SecretRefused
from loomdb.secrets.rules import ENTROPY, RULES
from pg import store_of

BACKENDS = [b for b in os.environ.get("LOOMDB_TEST_BACKENDS", "sqlite,postgres").split(",") if b]
FIXTURES = Path(__file__).parent / "fixtures"
_R = random.Random(36)
_AN = string.ascii_letters + string.digits


def _s(n: int, alphabet: str = _AN) -> str:
    return "".join(_R.choice(alphabet) for _ in range(n))


_PEM_BODY = [_s(64, _AN + "+/") for _ in range(4)]
_JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI" + _s(20) + "." + _s(43, _AN + "_-")
#: (kind, the text it is planted in, the secret itself: what must not be stored)
CORPUS: list[tuple[str, str, str]] = [
    (kind, text.format(s=secret), secret) for kind, text, secret in [
        ("openai-api-key", "OPENAI_API_KEY={s}", "sk-proj-" + _s(40, _AN + "_-")),
        ("openai-api-key", "key: {s}", "sk-" + _s(20, string.ascii_letters) + "7" + _s(27)),
        ("anthropic-api-key", "export ANTHROPIC_API_KEY='{s}'", "sk-ant-api03-" + _s(90, _AN + "_-")),
        ("aws-access-key", "aws_access_key_id = {s}", "AKIA" + _s(16, string.ascii_uppercase + string.digits)),
        ("aws-secret-key", "aws_secret_access_key = {s}", _s(40, _AN + "+/")),
        ("github-token", "git clone https://x:{s}@github.com/o/r", "ghp_" + _s(36)),
        ("github-token", "GH_TOKEN={s}", "github_pat_" + _s(22) + "_" + _s(59)),
        ("gitlab-token", "PRIVATE-TOKEN: {s}", "glpat-" + _s(20, _AN + "_-")),
        ("slack-token", "SLACK_BOT_TOKEN={s}", "xoxb-" + _s(12, string.digits) + "-" + _s(24)),
        ("slack-webhook", "curl -X POST {s}", "https://hooks.slack.com/services/T0" + _s(9) + "/B0" + _s(9) + "/" + _s(24)),
        ("stripe-key", "stripe.api_key = \"{s}\"", "sk_live_" + _s(24)),
        ("google-api-key", "?key={s}&q=1", "AIza" + _s(35, _AN + "_-")),
        ("private-key", "{s}", "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(_PEM_BODY)
         + "\n-----END RSA PRIVATE KEY-----"),
        ("jwt", "token={s}", _JWT),
        ("sendgrid-key", "SENDGRID_API_KEY={s}", "SG." + _s(22, _AN + "_-") + "." + _s(43, _AN + "_-")),
        ("twilio-key", "TWILIO_API_KEY={s}", "SK" + _s(32, "0123456789abcdef")),
        ("npm-token", "//registry.npmjs.org/:_authToken={s}", "npm_" + _s(36)),
        ("huggingface-token", "HF_TOKEN={s}", "hf_" + _s(34)),
        ("azure-storage-key", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey={s};",
         _s(86, _AN + "+/") + "=="),
        ("telegram-bot-token", "https://api.telegram.org/bot{s}/getMe",
         _s(9, string.digits) + ":AA" + _s(33, _AN + "_-")),
        ("password-in-url", "DATABASE_URL=postgresql://app:{s}@db.internal:5432/prod",
         "S3cr3t-" + _s(12)),
        ("password-in-url", "redis://default:{s}@cache:6379/0", _s(24)),
        ("authorization-header", "curl -H 'Authorization: Bearer {s}' https://api.example.com",
         _s(40, _AN + "._-")),
        ("password-assignment", "DB_PASSWORD=\"{s}\"", "Tr0ub4dor&3" + _s(10)),
    ]
]
ALL = "\n".join(text for _, text, _ in CORPUS)
KINDS = {k for k, _, _ in CORPUS}


def _needles() -> list[bytes]:
    """The bytes that must not be stored: each secret (a private key: its lines)."""
    out = []
    for kind, _, secret in CORPUS:
        out += [line.encode() for line in _PEM_BODY] if kind == "private-key" else [secret.encode()]
    return out


# -- the rules, no store ---------------------------------------------------------------
def test_every_kind_is_found_and_only_the_secret_goes() -> None:
    scan = Scanner()
    assert KINDS | {ENTROPY} == {r.kind for r in RULES}  # a planted sample of every rule
    for kind, text, secret in CORPUS:
        found: list[Any] = []
        kept = scan.text(f"before {text} after", "t", found)
        assert [f.kind for f in found] == [kind], (kind, found)
        assert secret not in kept and f"[redacted:{kind}]" in kept, kept
        assert kept.startswith("before ") and kept.endswith(" after")
    found = []
    scan.value(json.loads(json.dumps({"a": [ALL]})), "x", found)  # JSON-escaped copies too
    assert {f.kind for f in found} == KINDS


@pytest.mark.parametrize("text", [
    "postgres://user:password@localhost/db", "postgresql://app:${DB_PASSWORD}@db/prod",
    "https://user:<password>@example.com", "redis://:***@cache", "mysql://root:@localhost",
    "Authorization: Bearer $TOKEN", "Authorization: Bearer <your-token-here>",
    "password = \"changeme\"", "password: '${PASSWORD}'", "sk-learn-compatible-estimator-wrapper",
    "the task-tracking-and-scheduling-subsystem", "ghp_short", "AKIA is a prefix", "eyJhbGciOi",
    "-----BEGIN PUBLIC KEY-----\nMIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEA\n-----END PUBLIC KEY-----",
    "see https://docs.python.org/3/library/re.html#re.Pattern for details",
    # what entropy alone must not flag: ids, hashes, paths and identifiers
    '{"id": "toolu_01NZnG9ZjS7ybSmvjKtx2ZCz", "call": "call_Zx9QmT4vLp2RwK8sNc5YhB7d"}',
    '"3f786850e387550fdab836ed7e6dc881de23001b" "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"',
    "'/var/folders/49/l4171l3n219_xwq30fmyzr8w0000gn/T/TemporaryItems/x'",
    'name = "HttpRequestHandlerFactoryBuilder"', 'token: "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa1A"',
])
def test_what_looks_like_a_secret_but_is_not(text: str) -> None:
    assert Scanner().spans(text) == []


_RANDOM = "Zx9QmT4vLp2RwK8sNc5YhB7dFg3JtE6u"


@pytest.mark.parametrize("text", [
    f'client_secret: "{_RANDOM}"', f"API_TOKEN={_RANDOM}", f"x = '{_RANDOM}'",
    f'{{"auth": "{_RANDOM}=="}}', f"credentials:  {_RANDOM}\n",
])
def test_entropy_alone_is_listed_not_changed(text: str) -> None:
    """A random-looking token no rule names: `warn` by default (kept, listed); a
    policy naming the kind redacts it; `all=off` stops looking."""
    from loomdb.secrets import Policy

    found: list[Any] = []
    assert Scanner().text(text, "t", found) == text
    assert [(f.kind, f.action, text[f.start:f.end].rstrip("=")) for f in found] == [
        (ENTROPY, "warn", _RANDOM)]
    strict = Policy()
    strict.set(ENTROPY, "redact")
    assert Scanner(strict).text(text, "t", []) == text.replace(
        text[found[0].start:found[0].end], f"[redacted:{ENTROPY}]")
    quiet = Policy()
    quiet.set("all", "off")
    assert Scanner(quiet).spans(text) == [] and not Scanner(quiet).active


def test_a_policy_per_source_over_the_stores() -> None:
    from loomdb.model import SOURCES
    from loomdb.secrets import Policy
    from loomdb.secrets.scan import SOURCE_NAMES

    assert SOURCE_NAMES == SOURCES

    p = Policy()
    p.set("jwt", "warn")
    p.set("all", "refuse", source="import")
    p.set("aws-access-key", "warn", source="agent")
    assert [p.action("jwt"), p.action("jwt", "import"), p.action("jwt", "agent")] == [
        "warn", "refuse", "warn"]
    assert [p.action("aws-access-key"), p.action("aws-access-key", "agent"),
            p.action("aws-access-key", "human")] == ["redact", "warn", "redact"]
    assert p.action(ENTROPY) == "warn" and p.action(ENTROPY, "import") == "refuse"
    assert Policy.parse(json.dumps(p.as_dict())) == p
    for bad in [("jwt", "warn", "nobody"), ("jwt", "explode", "import"), ("Bad Kind", "warn", "import")]:
        with pytest.raises(InvalidInput) as caught:
            p.set(*bad)
        assert "\n" not in str(caught.value)


def test_false_positives_on_the_projects_own_sessions_and_exports() -> None:
    """The default rules over every message of tests/fixtures' agent sessions and chat
    exports: at most 1 flagged message in 1,000 (the count is printed)."""
    from loomdb.interop.importer import _parse, open_export
    from loomdb.limits import DEFAULT

    class _Limits:
        limits = DEFAULT

    scan, total, flagged = Scanner(), 0, 0
    files = sorted(p for d in ("agent-sessions", "interop") for p in (FIXTURES / d).rglob("*")
                   if p.is_file() and p.suffix in (".json", ".jsonl"))
    for path in files:
        try:
            fmt, inp = open_export(path)
        except InvalidInput:
            fmt, inp = open_export(path, "claude-code")
        for conv in _parse(_Limits, fmt, inp, False):  # type: ignore[arg-type]
            for m in getattr(conv, "messages", None) or []:
                found: list[Any] = []
                scan.value(m.content, "content", found)
                total, flagged = total + 1, flagged + bool(found)
    rate = 1000 * flagged / total
    print(f"\nsecrets scanner: {flagged} of {total} fixture messages flagged"
          f" ({rate:.2f} per 1,000)")
    assert total > 1000 and rate <= 1.0


# -- every way in, on both backends ----------------------------------------------------
def _claude_code(folder: Path) -> Path:
    sid = "5c0375b4-57a5-4f26-b12d-d022ee4e51b7"
    base = {"isSidechain": False, "userType": "external", "cwd": "/w", "sessionId": sid,
            "version": "1.0.108", "gitBranch": "main"}
    lines = [
        {**base, "parentUuid": None, "type": "user", "uuid": "u1",
         "timestamp": "2025-09-07T09:52:00.000Z",
         "message": {"role": "user", "content": "deploy with these:\n" + ALL}},
        {**base, "parentUuid": "u1", "type": "assistant", "uuid": "a1",
         "timestamp": "2025-09-07T09:52:01.000Z", "requestId": "req_1",
         "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "m",
                     "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash",
                                  "input": {"command": "cat .env && echo " + ALL}}],
                     "stop_reason": None, "usage": {"input_tokens": 1, "output_tokens": 1}}},
        {**base, "parentUuid": "a1", "type": "user", "uuid": "u2",
         "timestamp": "2025-09-07T09:52:02.000Z",
         "message": {"role": "user", "content": [{"tool_use_id": "toolu_1", "type": "tool_result",
                                                  "content": ALL}]},
         "toolUseResult": {"stdout": ALL, "stderr": "", "interrupted": False}},
    ]
    path = folder / f"{sid}.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines))
    return path


def _codex(folder: Path) -> Path:
    def line(t: str, payload: dict[str, Any]) -> str:
        return json.dumps({"timestamp": t, "type": "response_item", "payload": payload}) + "\n"

    meta = {"timestamp": "2025-11-17T21:30:28.664Z", "type": "session_meta",
            "payload": {"id": "019a93b9-f380-7600-98ff-940e6b99603c",
                        "timestamp": "2025-11-17T21:30:28.608Z", "cwd": "/w",
                        "originator": "codex_cli_rs", "cli_version": "0.58.0"}}
    path = folder / "rollout-2025-11-17T21-30-28-019a93b9-f380-7600-98ff-940e6b99603c.jsonl"
    path.write_text(json.dumps(meta) + "\n" + "".join([
        line("2025-11-17T21:30:45.025Z", {"type": "message", "role": "user",
                                          "content": [{"type": "input_text", "text": ALL}]}),
        line("2025-11-17T21:30:46.025Z", {
            "type": "function_call", "name": "shell", "call_id": "call_1",
            "arguments": json.dumps({"command": ["bash", "-lc", "env; echo " + ALL]})}),
        line("2025-11-17T21:30:47.025Z", {"type": "function_call_output", "call_id": "call_1",
                                          "output": json.dumps({"output": ALL})}),
        line("2025-11-17T21:30:48.025Z", {"type": "message", "role": "assistant",
                                          "content": [{"type": "output_text", "text": ALL}]}),
    ]))
    return path


def _chatgpt(folder: Path) -> Path:
    def msg(i: int, role: str, text: str, parent: str | None, child: str | None) -> dict[str, Any]:
        return {"id": f"m{i}", "parent": parent, "children": [child] if child else [],
                "message": {"id": f"m{i}", "author": {"role": role, "metadata": {}},
                            "create_time": 1704067300 + i, "metadata": {},
                            "content": {"content_type": "text", "parts": [text]}}}

    conv = {"id": "conv-1", "title": "keys " + CORPUS[3][2], "create_time": 1704067300,
            "update_time": 1704067400, "current_node": "m2",
            "mapping": {"m1": msg(1, "user", ALL, None, "m2"),
                        "m2": msg(2, "assistant", "You pasted:\n" + ALL, "m1", None)}}
    path = folder / "conversations.json"
    path.write_text(json.dumps([conv]))
    return path


def _answer() -> Completion:
    return Completion(content=[{"type": "text", "text": "I see " + ALL}], stop_reason="end_turn",
                      usage={"input_tokens": 3, "output_tokens": 3}, model="m", provider="openai",
                      provider_request={"model": "m", "messages": [{"role": "user", "content": ALL}],
                                        "metadata": {"note": ALL}},
                      raw_response={"choices": [{"message": {"content": "I see " + ALL}}]},
                      latency_ms=1)


def _every_way_in(lm: Loom, folder: Path) -> None:
    """Write the corpus through every way in (each raises under `refuse`)."""
    steps = [
        lambda: lm.new_tree(ALL, session="s", title="Title " + CORPUS[0][2]),
        lambda: lm.append("s", "fast path: " + ALL),
        lambda: lm.append("s", [{"type": "tool_use", "id": "t1", "name": "bash",
                                 "input": {"command": ALL}}], role="assistant"),
        lambda: lm.append("s", [{"type": "tool_result", "tool_use_id": "t1",
                                 "content": [{"type": "text", "text": ALL}]}], role="tool"),
        lambda: _imported(lm, _claude_code(folder), "claude-code"),
        lambda: _imported(lm, _codex(folder), "codex"),
        lambda: _imported(lm, _chatgpt(folder), "chatgpt"),
        lambda: _gateway(lm),
    ]
    for step in steps:
        step()


def _imported(lm: Loom, path: Path, fmt: str) -> None:
    report = lm.import_file(path, fmt, stop_on_error=True)
    if report.errors:
        raise InvalidInput(str(path.name), str(report.errors[0]))
    assert report.nodes >= 2, report


def _gateway(lm: Loom) -> None:
    gw = Gateway(lm)
    ex = openai_chat.parse(gw, {"model": "local", "user": CORPUS[3][2], "messages": [
        {"role": "system", "content": "You hold " + CORPUS[5][2]},
        {"role": "user", "content": ALL}]})
    gw.record(ex, [_answer()], None)


@pytest.fixture(scope="module", params=BACKENDS)
def redacted(request: pytest.FixtureRequest,
             tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Loom, str, Path]]:
    """(a store with the corpus written every way in under the default policy, its URL,
    its folder)."""
    folder = tmp_path_factory.mktemp(f"secrets-{request.param}")
    (folder / "in").mkdir()
    with store_of(request.param, str(folder / "store")) as url, loomdb.open(url) as lm:
        _every_way_in(lm, folder / "in")
        yield lm, url, folder


def _stored_bytes(lm: Loom, url: str, folder: Path) -> bytes:
    """Every byte the store keeps: its files (SQLite with WAL; blobs), or a pg_dump."""
    data = b""
    if not url.startswith("postgres"):
        lm.backend.execute("SELECT 1")  # (the WAL is read as it is, not checkpointed)
    for p in (folder / "store").rglob("*"):
        if p.is_file():
            data += p.read_bytes()
    if url.startswith("postgres"):
        dsn = url.split("?")[0]
        data += subprocess.run(["pg_dump", "--no-owner", dsn], check=True,
                               capture_output=True, timeout=60).stdout
    return data


def test_no_byte_of_a_secret_is_stored_exported_or_in_the_blobs(
        redacted: tuple[Loom, str, Path]) -> None:
    lm, url, folder = redacted
    assert len(lm.trees()) == 5
    stored = _stored_bytes(lm, url, folder)
    assert b"[redacted:private-key]" in stored and len(stored) > 10_000
    out = io.StringIO()
    lm.export(out)
    exported = out.getvalue().encode()
    assert b"[redacted:aws-access-key]" in exported
    backed = b""  # a PostgreSQL store's backup is its pg_dump, read above
    if not url.startswith("postgres"):
        backup = folder / f"backup-{len(list(folder.glob('backup-*')))}"
        lm.backup(str(backup))
        backed = b"".join(p.read_bytes() for p in backup.rglob("*") if p.is_file())
        assert b"[redacted:aws-access-key]" in backed, backup
    for needle in _needles():
        assert needle not in stored, needle
        assert needle not in exported, needle
        assert needle not in backed, needle


def test_the_findings_name_every_kind_and_never_the_secret(
        redacted: tuple[Loom, str, Path]) -> None:
    lm, _, _ = redacted
    found = _findings(lm)
    assert {f["kind"] for f in found} == KINDS
    assert {f["action"] for f in found} == {"redact"}
    places = {f["place"].split("[")[0].split(".")[0] for f in found}
    assert {"content", "title", "raw_response", "provider_request", "request"} <= places, places
    text = json.dumps(found).encode()
    assert not any(needle in text for needle in _needles())
    report = lm.verify()
    assert report.ok, report


def _findings(lm: Loom) -> list[dict[str, Any]]:
    from loomdb.forget import secrets as S

    return S.findings(lm, limit=10_000)


@pytest.fixture(scope="module", params=BACKENDS)
def blank(request: pytest.FixtureRequest,
          tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Loom, Path]]:
    folder = tmp_path_factory.mktemp(f"secrets-refuse-{request.param}")
    (folder / "in").mkdir()
    with store_of(request.param, str(folder / "store")) as url, loomdb.open(url) as lm:
        yield lm, folder


def test_under_refuse_nothing_is_written(blank: tuple[Loom, Path]) -> None:
    from loomdb.forget import secrets as S

    lm, folder = blank
    S.set_policy(lm, {"all": "refuse"})
    lm.new_tree("clean", session="s")  # a write without a secret goes on
    before = (len(lm.trees()), lm.tree(lm.trees()[0].id).nodes)
    for step in [
        lambda: lm.new_tree(ALL, session="s2"),
        lambda: lm.append("s", "fast path: " + CORPUS[3][2]),
        lambda: lm.append("s", [{"type": "tool_use", "id": "t1", "name": "bash",
                                 "input": {"command": CORPUS[12][1]}}], role="assistant"),
        lambda: _imported(lm, _claude_code(folder / "in"), "claude-code"),
        lambda: _imported(lm, _codex(folder / "in"), "codex"),
        lambda: _imported(lm, _chatgpt(folder / "in"), "chatgpt"),
        lambda: _gateway(lm),
    ]:
        with pytest.raises(InvalidInput) as caught:
            step()
        assert "refuses them" in str(caught.value) and "\n" not in str(caught.value)
    assert (len(lm.trees()), lm.tree(lm.trees()[0].id).nodes) == before
    assert _findings(lm) == []
    with pytest.raises(SecretRefused):
        lm.append("s", CORPUS[0][1])
    S.set_policy(lm, {"all": "warn", "jwt": "redact"})  # warn: kept, and listed
    node = lm.append("s", CORPUS[3][1] + " " + CORPUS[13][1])
    text = node.content[0]["text"]
    assert CORPUS[3][2] in text and "[redacted:jwt]" in text
    assert [(f["kind"], f["action"]) for f in _findings(lm)] == [
        ("jwt", "redact"), ("aws-access-key", "warn")]
    warned, _ = lm.new_tree(CORPUS[3][1])  # a new tree's content: listed once
    assert [f["kind"] for f in S.findings(lm, tree=warned.id)] == ["aws-access-key"]
    S.set_policy(lm, {"all": "redact"})


def test_a_source_refuses_what_the_store_redacts(blank: tuple[Loom, Path]) -> None:
    """Imports refused, live writes redacted: the import writes nothing, the human's
    append and the agent's are redacted, an agent's kept where its source says warn."""
    from loomdb.forget import secrets as S

    lm, folder = blank
    S.set_policy(lm, {"all": "refuse"}, source="import")
    S.set_policy(lm, {"jwt": "warn"}, source="agent")
    lm.new_tree("clean", session="p")
    trees = len(lm.trees())
    with pytest.raises(InvalidInput, match="refuses them"):
        _imported(lm, _codex(folder / "in"), "codex")
    assert len(lm.trees()) == trees
    mine = lm.append("p", "mine: " + CORPUS[13][1])
    theirs = lm.append("p", "theirs: " + CORPUS[13][1], role="assistant", source="agent")
    assert "[redacted:jwt]" in mine.content[0]["text"]
    assert CORPUS[13][2] in theirs.content[0]["text"]
    assert S.policy(lm)["sources"]["import"] == {"default": "refuse"}
    S.set_policy(lm, {"all": "redact"}, source="import")
    S.set_policy(lm, {"all": "redact"}, source="agent")


def test_documents_collection_fields_and_drafts_are_looked_at(blank: tuple[Loom, Path]) -> None:
    """The areas' own writes pass the same policy: a document's revisions, a
    collection item's fields, a buffer's draft (set, or appended in pieces)."""
    from loomdb.forget import secrets as S

    lm, _ = blank
    key, jwt = CORPUS[3][2], CORPUS[13][2]
    _, first = lm.documents.new("deploy-notes", f"keys:\n{CORPUS[3][1]}\n")
    again = lm.documents.commit("deploy-notes", f"keys:\n{CORPUS[13][1]}\n")
    for rev in (first, again):
        text = json.dumps(lm.documents.show(f"deploy-notes@{rev.id}").blocks)
        assert key not in text and jwt not in text and "[redacted:" in text
    tree, root = lm.new_tree("notes", session="picks-s")
    lm.collections.new("picks", kind="list")
    item = lm.collections.add("picks", root.id, fields={"note": "login " + CORPUS[0][1]})
    fields = lm.collections.set_fields("picks", item.id, {"token": jwt, "plain": "kept"}).fields
    assert CORPUS[0][2] not in json.dumps(fields) and jwt not in json.dumps(fields)
    assert fields["plain"] == "kept" and fields["token"] == "[redacted:jwt]"
    lm.new_tree("Once", mode="buffer", session="tale-s")
    assert "[redacted:jwt]" in lm.buffer.set_draft("tale-s", "draft " + jwt)
    half = len(key) // 2
    lm.buffer.set_draft("tale-s", "then ")
    lm.buffer.append_draft("tale-s", "aws_access_key_id = " + key[:half])
    whole = lm.buffer.append_draft("tale-s", key[half:] + " done")
    assert key not in whole and whole.endswith("[redacted:aws-access-key] done")
    places = {(f["place"].split("[")[0].split(".")[0], f["kind"]) for f in _findings(lm)}
    assert {("content", "aws-access-key"), ("content", "jwt"), ("fields", "openai-api-key"),
            ("fields", "jwt"), ("draft", "jwt"), ("draft", "aws-access-key")} <= places
    S.set_policy(lm, {"all": "refuse"})
    try:
        for step in [lambda: lm.documents.commit("deploy-notes", CORPUS[5][1]),
                     lambda: lm.collections.set_fields("picks", item.id, {"x": jwt}),
                     lambda: lm.buffer.append_draft("tale-s", " " + jwt)]:
            with pytest.raises(SecretRefused):
                step()
        assert lm.collections.set_fields("picks", item.id, {}).fields.keys() == {
            "note", "token", "plain"}
        assert jwt not in lm.buffer.draft("tale-s")
    finally:
        S.set_policy(lm, {"all": "redact"})


def test_a_lossless_export_holding_a_secret_arrives_redacted_and_verifies(
        blank: tuple[Loom, Path], tmp_path: Path) -> None:
    """A store that kept a secret (`warn`) exports it; a store that redacts imports the
    export: that node arrives as a redaction leaves it (its content id and chain hash
    cannot change under it), the rest as it was, and `verify` passes there."""
    from loomdb.forget import secrets as S

    lm, _ = blank
    S.set_policy(lm, {"all": "warn"})
    tree, _ = lm.new_tree("kept as it came", session="w")
    leaked = lm.append("w", "the key is " + CORPUS[3][2])
    clean = lm.append("w", "and this is plain")
    S.set_policy(lm, {"all": "redact"})
    path = tmp_path / "export.json"
    lm.export_file(path, target=tree.id)
    with loomdb.open(tmp_path / "other") as other:
        report = other.import_file(path)
        assert not report.errors, report.errors
        assert other.node(leaked.id).content == [{"type": "text", "text": "[redacted]"}]
        assert other.node(clean.id).content == clean.content
        assert other.verify().ok
        assert [(f["kind"], f["item"]) for f in _findings(other)] == [
            ("aws-access-key", leaked.id)]
        assert CORPUS[3][2].encode() not in b"".join(
            p.read_bytes() for p in (tmp_path / "other").rglob("*") if p.is_file())


def test_the_command_sets_the_policy_and_lists_findings_never_the_secret(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from loomdb.cli import main

    def run(*args: str) -> Any:
        with pytest.raises(SystemExit) as done:
            main(["--db", str(tmp_path / "store"), *args, "--json"])
        out = capsys.readouterr().out
        assert done.value.code in (0, None), out
        return json.loads(out)

    kept = run("secrets", "--set", "jwt=warn", "--rule", "acme-token=acme_[0-9a-f]{16}")
    assert kept["default"] == "redact" and kept["kinds"] == {"jwt": "warn"}
    assert kept["rules"] == [{"kind": "acme-token", "pattern": "acme_[0-9a-f]{16}"}]
    run("new", "--text", "use acme_0123456789abcdef and " + CORPUS[0][1])
    found = run("secrets")
    assert sorted((f["kind"], f["action"], f["rule"]) for f in found) == [
        ("acme-token", "redact", "operator"), ("openai-api-key", "redact", "loomdb")]
    assert CORPUS[0][2] not in json.dumps(found)
    assert run("secrets", "--policy")["known"] == [r.kind for r in RULES]
    per = run("secrets", "--source", "import", "--set", "all=warn", "--set", "jwt=refuse")
    assert per["sources"] == {"import": {"default": "warn", "kinds": {"jwt": "refuse"}}}
