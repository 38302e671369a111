"""The OpenAI-side clients as their users run them, against `loomdb gateway` with the
local model: the openai SDK streaming tool calls and streamed Responses, `llm -T`
(streamed), the Codex CLI (`codex exec`, streamed Responses only) and pi. On the main
this was written against, a streamed tool call came back as JSON text with
`finish_reason: "stop"`, and a streamed Responses call (all Codex speaks) was a 400."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from agents_live import Gateway, node_tool, start, texts
from openai import OpenAI

WEATHER = {"type": "function", "function": {
    "name": "weather", "description": "The weather in a city",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}},
                   "required": ["city"]}}}

#: one module, one worker: its live gateway is started once
pytestmark = pytest.mark.xdist_group("agent-clients")


@pytest.fixture(scope="module")
def gw(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    yield from start(tmp_path_factory.mktemp("agent-clients"))


def client(gw: Gateway) -> OpenAI:
    return OpenAI(base_url=gw.base + "/v1", api_key="unused", max_retries=0, timeout=300)


def test_streamed_tool_calls_come_as_deltas_and_make_the_same_node(gw: Gateway) -> None:
    asked = [{"role": "user", "content": "Weather in Paris?"}]
    chunks = list(client(gw).chat.completions.create(
        model="local", messages=asked, tools=[WEATHER], tool_choice="required", stream=True,
        max_tokens=40))
    calls = [c for ch in chunks for c in (ch.choices[0].delta.tool_calls or []) if ch.choices]
    finish = [ch.choices[0].finish_reason for ch in chunks if ch.choices][-1]
    assert finish == "tool_calls"
    assert calls[0].id and calls[0].function.name == "weather"
    arguments = "".join(c.function.arguments or "" for c in calls)
    whole = client(gw).chat.completions.create(model="local", messages=asked, tools=[WEATHER],
                                               tool_choice="required", max_tokens=40)
    with gw.open() as lm:
        streamed, plain = lm.node(chunks[0].id), lm.node(whole.id)
        assert streamed.content == [{"type": "tool_use", "id": calls[0].id, "name": "weather",
                                     "input": json.loads(arguments)}]
        assert [b["type"] for b in plain.content] == ["tool_use"]
        assert lm.siblings(streamed.id) == [plain.id]  # the same request: siblings


def test_streamed_responses_and_previous_response_id(gw: Gateway) -> None:
    c = client(gw)
    events = list(c.responses.create(model="local", input="Name a fruit.", stream=True,
                                     max_output_tokens=6))
    kinds = [e.type for e in events]
    assert kinds[:2] == ["response.created", "response.in_progress"]
    assert {"response.output_item.added", "response.content_part.added",
            "response.output_text.delta", "response.output_item.done"} <= set(kinds)
    # the last: completed, or (the answer cut at max_output_tokens) incomplete, as OpenAI
    assert kinds[-1] in ("response.completed", "response.incomplete")
    first = events[-1].response
    assert first.output_text == "".join(e.delta for e in events
                                        if e.type == "response.output_text.delta")
    calls = list(c.responses.create(
        model="local", input="Weather in Paris?", stream=True, max_output_tokens=40,
        tools=[{"type": "function", **WEATHER["function"]}], tool_choice="required",
        previous_response_id=first.id))
    kinds = [e.type for e in calls]
    assert "response.function_call_arguments.delta" in kinds
    done = calls[-1].response
    call = [o for o in done.output if o.type == "function_call"][0]
    with gw.open() as lm:
        assert lm.node(first.id).content == [{"type": "text", "text": first.output_text}]
        path = lm.path(done.id)
        assert path[:2] == lm.path(first.id) and len(path) == 4
        assert lm.node(done.id).content == [{"type": "tool_use", "id": call.call_id,
                                             "name": "weather",
                                             "input": json.loads(call.arguments)}]


def test_llm_tools_streamed(gw: Gateway) -> None:
    config = gw.home / "llm"
    config.mkdir(exist_ok=True)
    (config / "extra-openai-models.yaml").write_text(
        f"- model_id: loomdb-local\n  model_name: local\n  api_base: {gw.base}/v1\n"
        "  supports_tools: true\n", encoding="utf-8")
    run = subprocess.run(
        [sys.executable, "-m", "llm", "-m", "loomdb-local", "-T", "llm_version", "--td",
         "-o", "max_tokens", "40", "--cl", "2", "Which version of llm is this? Use the tool."],
        env={**gw.env(LLM_USER_PATH=str(config), OPENAI_API_KEY="unused")}, text=True,
        capture_output=True, timeout=600)
    with gw.open() as lm:
        uses = [b for t in lm.trees() for leaf in lm.leaves(t.id) for n in lm.nodes(lm.path(leaf))
                for b in n.content if b["type"] == "tool_use" and b["name"] == "llm_version"]
    assert uses, (run.stdout, run.stderr)
    assert "llm_version" in run.stdout + run.stderr  # llm saw the streamed call and ran it


def test_codex_exec_records_its_turns(gw: Gateway) -> None:
    codex_home = gw.home / "codex"
    codex_home.mkdir(exist_ok=True)
    (codex_home / "config.toml").write_text(
        'model = "small"\nmodel_provider = "loomdb"\n\n[model_providers.loomdb]\n'
        f'name = "loomdb"\nbase_url = "{gw.base}/v1"\nwire_api = "responses"\n',
        encoding="utf-8")
    last = gw.home / "codex-last.txt"
    run = subprocess.run([str(node_tool("codex")), "exec", "--skip-git-repo-check",
                          "--output-last-message", str(last), "Say hello"],
                         env=gw.env(CODEX_HOME=str(codex_home)), cwd=gw.work, text=True,
                         capture_output=True, timeout=600, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, (run.stdout[-2000:], run.stderr[-2000:])
    said = last.read_text(encoding="utf-8").strip()
    with gw.open() as lm:
        found = [n for t in lm.trees() for leaf in lm.leaves(t.id)
                 for n in [lm.node(leaf)] if texts(n).strip() == said]
        assert found, said
        path = lm.nodes(lm.path(found[0].id))
        assert any(n.role == "user" and "Say hello" in texts(n) for n in path)
        assert path[0].role == "system"  # Codex's instructions lead the path


def pi(gw: Gateway, *args: str, window: int = 100000,
       cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """The real pi against the gateway (a provider of its models.json)."""
    agent = gw.home / ".pi" / "agent"
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "models.json").write_text(json.dumps({"providers": {"loomdb": {
        "baseUrl": f"{gw.base}/v1", "api": "openai-completions", "apiKey": "unused",
        "compat": {"supportsDeveloperRole": False, "supportsReasoningEffort": False},
        "models": [{"id": "small", "contextWindow": window, "maxTokens": 64}]}}}),
        encoding="utf-8")
    run = subprocess.run([str(node_tool("pi")), "--provider", "loomdb", "--model", "small",
                          *args], env=gw.env(), cwd=cwd or gw.work, text=True,
                         capture_output=True, timeout=600, stdin=subprocess.DEVNULL)
    assert run.returncode == 0, (run.stdout[-2000:], run.stderr[-2000:])
    return run


def test_pi_through_the_gateway(gw: Gateway) -> None:
    agent = gw.home / ".pi" / "agent"
    run = pi(gw, "-p", "Say hello")
    with gw.open() as lm:
        found = [leaf for t in lm.trees() for leaf in lm.leaves(t.id)
                 if texts(lm.node(leaf)).strip() and texts(lm.node(leaf)).strip()
                 in run.stdout]
        assert found, run.stdout
        path: list[Any] = lm.nodes(lm.path(found[0]))
        assert [n.role for n in path][-2:] == ["user", "assistant"]
        assert texts(path[-2]) == "Say hello"
    sessions = list((agent / "sessions").rglob("*.jsonl"))
    assert sessions  # pi kept its own session too


def test_pis_own_compaction_is_a_compaction_node_on_the_same_path(gw: Gateway) -> None:
    """pi compacts its history itself (a window of 3,000 tokens, 2,950 kept free): its
    next request sends the summary, the turn it kept and the new question; the gateway
    records a compaction node after the last answer, not a new tree."""
    work = gw.work / "compacting"
    work.mkdir()
    settings = gw.home / ".pi" / "agent" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)  # whichever pi test runs first
    settings.write_text(json.dumps({"compaction": {
        "enabled": True, "reserveTokens": 2950, "keepRecentTokens": 10}}), encoding="utf-8")
    try:
        pi(gw, "-p", "My name is Ada.", window=3000, cwd=work)
        pi(gw, "-c", "-p", "What is my name?", window=3000, cwd=work)
    finally:
        settings.unlink()
    with gw.open() as lm:
        paths = [lm.nodes(lm.path(leaf)) for t in lm.trees() for leaf in lm.leaves(t.id)]
        ours = [p for p in paths if any(texts(n) == "What is my name?" for n in p)]
        assert len(ours) == 1, [[texts(n)[:30] for n in p] for p in paths]
        kinds = [(n.role, n.kind) for n in ours[0]]
        assert ("user", "compaction") in kinds
        at = kinds.index(("user", "compaction"))
        assert any(texts(n) == "My name is Ada." for n in ours[0][:at])  # the same path
        assert texts(ours[0][at]).startswith("The conversation history before this point")
