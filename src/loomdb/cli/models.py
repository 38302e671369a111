"""Commands that involve models: context (in provider formats), generate, chat, compact."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import typer

from ..errors import InvalidInput
from . import JSON, State, app, emit, loom

FORMATS = ("normalized", "openai", "anthropic", "completion")
STRATEGIES = ("truncate-middle", "rolling-window", "stop")


def providers_config(ctx: typer.Context) -> Any:
    """$LOOMDB_PROVIDERS, else providers.toml in the store folder, else the built-ins."""
    from ..providers.config import load_config

    path = os.environ.get("LOOMDB_PROVIDERS")
    if path is None:
        db = ctx.find_object(State).db  # type: ignore[union-attr]
        if db and "://" not in db:
            path = str(Path(db) / "providers.toml")
    return load_config(path)


def _spec(ctx: typer.Context, model: str | None, normalized: dict[str, Any]) -> Any:
    from ..generation import pick_models

    return pick_models(loom(ctx), [model] if model else [], normalized,
                       providers_config(ctx), os.environ)[0]


@app.command()
def context(
    ctx: typer.Context,
    headish: str = typer.Argument(...),
    format: str = typer.Option("normalized", "--format", help="normalized, openai, anthropic or completion."),
    model: str = typer.Option(None, "-m", "--model", help="Model or alias the request is for."),
    budget: int = typer.Option(None, "--budget", help="Fit the context into this many tokens."),
    strategy: str = typer.Option("truncate-middle", "--strategy", help="truncate-middle, rolling-window or stop."),
    options: str = typer.Option(None, "--options", help="Call options merged last (JSON)."),
    as_json: bool = JSON,
) -> None:
    """The context window at HEADISH, normalized or as a provider request body."""
    from .write import _json_arg

    if format not in FORMATS:
        raise InvalidInput("--format", f"{format!r} is not one of {', '.join(FORMATS)}")
    if strategy not in STRATEGIES:
        raise InvalidInput("--strategy", f"{strategy!r} is not one of {', '.join(STRATEGIES)}")
    lm = loom(ctx)
    normalized = lm.context(headish, _json_arg("--options", options))
    tokens = None
    if budget is not None:
        from ..providers.budget import fit

        normalized, tokens = fit(normalized, budget, strategy)
    body = _render(ctx, normalized, format, model, lm)
    if tokens is not None:
        body = {**body, "tokens": tokens} if format != "normalized" else {**normalized, "tokens": tokens}
    emit(True, body)


def _render(ctx: typer.Context, normalized: dict[str, Any], format: str, model: str | None, lm: Any) -> dict[str, Any]:
    from ..providers import requests as openai_req
    from ..providers.requests_anthropic import anthropic_request

    if format == "normalized":
        return normalized
    if format == "completion":
        return openai_req.completion_prompt(normalized)
    spec = _spec(ctx, model, normalized)
    if format == "openai":
        return openai_req.openai_chat_request(normalized, model=spec.model, blob_reader=lm.blob)
    return anthropic_request(normalized, model=spec.model, blob_reader=lm.blob)


def _printer(stream: bool) -> Any:
    if not stream:
        return None

    def show(job: int, index: int, delta: str) -> None:
        if job == 0 and index == 0:
            sys.stdout.write(delta)
            sys.stdout.flush()

    return show


@app.command()
def generate(
    ctx: typer.Context,
    headish: str = typer.Argument(None),
    model: list[str] = typer.Option([], "-m", "--model", help="Model or alias (repeatable)."),
    n: int = typer.Option(1, "-n", help="Alternatives per model."),
    max_tokens: int = typer.Option(None, "--max-tokens"),
    stream: bool = typer.Option(False, "--stream", help="Print the first answer as it arrives."),
    keep_partial: bool = typer.Option(False, "--keep-partial", help="Keep an interrupted answer, marked incomplete."),
    route: str = typer.Option(None, "--route", help="Instead of HEADISH: thread:N, session:S, persona:P or smart:TEXT."),
    max_steps: int = typer.Option(None, "--max-steps", help="Tool loop: at most this many model steps."),
    persona: str = typer.Option(None, "--persona", help="Generate as this persona."),
    as_json: bool = JSON,
) -> None:
    """N alternatives per model at HEADISH as sibling nodes; a session moves to the first.
    With tools, a persona or --max-steps: the agent's tool loop (see `loomdb pending`)."""
    from ..compaction import maybe_compact
    from ..generation import generate_at
    from .agents import agent_turn, route_to

    lm = loom(ctx)
    config = providers_config(ctx)
    headish = route_to(lm, headish, route)
    if agent_turn(lm, headish, model, n, max_tokens, max_steps, persona, config, as_json):
        return
    result = generate_at(
        lm, headish, models=model, n=n, max_tokens=max_tokens,
        stream=_printer(stream and not as_json), config=config, environ=os.environ,
        keep_partial=keep_partial,
    )
    if stream and not as_json:
        sys.stdout.write("\n")
    if result.moved and result.session:
        maybe_compact(lm, result.session, config=config, environ=os.environ)
    for err in result.errors:
        typer.echo(f"loomdb: warning: {err}", err=True)
    ids = [n.id for n in result.nodes]
    emit(as_json, {"nodes": ids}, "\n".join(ids))


@app.command()
def compact(
    ctx: typer.Context,
    headish: str = typer.Argument(...),
    keep: int = typer.Option(2, "--keep", help="Newest turns kept verbatim."),
    model: str = typer.Option(None, "-m", "--model"),
    max_tokens: int = typer.Option(
        None, "--max-tokens", help="Longest summary (default: half the tokens it replaces)."),
    as_json: bool = JSON,
) -> None:
    """Summarize older turns into a compaction node; context then starts from it.
    Refuses (exit 2, nothing written) when the summary would not be shorter."""
    from ..compaction import compact as run

    lm = loom(ctx)
    node = run(lm, headish, keep=keep, model=model, config=providers_config(ctx),
               environ=os.environ, max_tokens=max_tokens)
    row = lm.backend.get_compaction(node.id) or {}
    data = {"node": node.id, "tokens_before": row.get("tokens_before"),
            "tokens_after": row.get("tokens_after")}
    emit(as_json, data, f"{node.id} ({data['tokens_before']} -> {data['tokens_after']} tokens)")


@app.command()
def chat(
    ctx: typer.Context,
    headish: str = typer.Argument(None, help="Where to continue (default: a new tree)."),
    model: str = typer.Option(None, "-m", "--model"),
    system: str = typer.Option(None, "--system", help="System context for a new tree."),
    max_tokens: int = typer.Option(None, "--max-tokens"),
    session: str = typer.Option(None, "--session", help="Session to extend or create."),
) -> None:
    """Talk to a model, turn by turn, extending a session (like `llm chat`). Ctrl-D ends."""
    from .chat import run

    run(loom(ctx), headish, model=model, system=system, max_tokens=max_tokens,
        session=session, config=providers_config(ctx))
