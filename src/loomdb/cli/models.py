"""Commands that involve models: context (in provider formats), generate, chat, compact."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import typer

from ..errors import InvalidInput
from . import JSON, State, emit, loom
from . import root as app


def providers_config(ctx: typer.Context) -> Any:
    """$LOOMDB_PROVIDERS, else providers.toml in the store folder, else the built-ins."""
    from ..api import load_providers

    path = os.environ.get("LOOMDB_PROVIDERS")
    if path is None:
        state = ctx.find_object(State)
        db = state.db if state is not None else None
        if db and "://" not in db:
            path = str(Path(db) / "providers.toml")
    return load_providers(path)


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

    lm = loom(ctx)
    config = providers_config(ctx) if format in ("openai", "anthropic") else None
    emit(True, lm.request(headish, format=format, model=model, budget=budget, strategy=strategy,
                          options=_json_arg("--options", options), config=config,
                          environ=os.environ))


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
    logprobs: int = typer.Option(None, "--logprobs", metavar="K",
                                 help="Keep token logprobs with K top alternatives (0-20)."),
    route: str = typer.Option(None, "--route", help="Instead of HEADISH: thread:N, session:S, persona:P or smart:TEXT."),
    max_steps: int = typer.Option(None, "--max-steps", help="Tool loop: at most this many model steps."),
    persona: str = typer.Option(None, "--persona", help="Generate as this persona."),
    as_json: bool = JSON,
) -> None:
    """N alternatives per model at HEADISH as sibling nodes; a session moves to the first.
    With tools, a persona or --max-steps: the agent's tool loop (see `loomdb pending`)."""
    from .agents import agent_turn, route_to

    lm = loom(ctx)
    config = providers_config(ctx)
    headish = route_to(lm, headish, route)
    if agent_turn(lm, headish, model, n, max_tokens, max_steps, persona, config, as_json):
        return
    extra: dict[str, Any] = {}
    if logprobs is not None:
        if not 0 <= logprobs <= 20:
            raise InvalidInput("--logprobs", f"must be from 0 to 20, got {logprobs}")
        extra["options"] = {"logprobs": True, "top_logprobs": logprobs}
    result = lm.generate(
        headish, models=model, n=n, max_tokens=max_tokens,
        stream=_printer(stream and not as_json), config=config,
        environ=os.environ, keep_partial=keep_partial, **extra,
    )
    if stream and not as_json:
        sys.stdout.write("\n")
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
    lm = loom(ctx)
    node = lm.compact(headish, keep=keep, model=model, config=providers_config(ctx),
                      environ=os.environ, max_tokens=max_tokens)
    row: dict[str, Any] = dict(lm.compaction(node.id) or {})
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
    as_json: bool = JSON,
) -> None:
    """Talk to a model, turn by turn, extending a session (like `llm chat`). Ctrl-D ends.
    With --json: one JSON object per turn, nothing streamed."""
    from .chat import run

    run(loom(ctx), headish, model=model, system=system, max_tokens=max_tokens,
        session=session, config=providers_config(ctx), as_json=as_json)
