"""Commands that involve models: context (in provider formats), generate, chat, compact."""

from __future__ import annotations

import sys
from typing import Any

import click

from ..errors import InvalidInput
from . import JSON, argument, emit, json_arg, loom, repeatable
from . import root as app
from .settings import providers_config as providers_config


@app.command()
@argument("headish")
@click.option("--format", default="normalized", help="normalized, openai, anthropic or completion.")
@click.option("-m", "--model", help="Model or alias the request is for.")
@click.option("--budget", type=int, help="Fit the context into this many tokens.")
@click.option("--strategy", default="truncate-middle",
              help="truncate-middle, rolling-window or stop.")
@click.option("--options", help="Call options merged last (JSON).")
@JSON
@click.pass_context
def context(ctx: click.Context, headish: str, format: str, model: str | None,
            budget: int | None, strategy: str, options: str | None, as_json: bool) -> None:
    """The context window at HEADISH, normalized or as a provider request body."""
    lm = loom(ctx)
    config = providers_config(ctx) if format in ("openai", "anthropic") else None
    emit(True, lm.request(headish, format=format, model=model, budget=budget, strategy=strategy,
                          options=json_arg("--options", options), config=config))


def _printer(stream: bool) -> Any:
    if not stream:
        return None

    def show(job: int, index: int, delta: str) -> None:
        if job == 0 and index == 0:
            sys.stdout.write(delta)
            sys.stdout.flush()

    return show


@app.command()
@argument("headish", required=False)
@repeatable("-m", "--model", help="Model or alias (repeatable).")
@click.option("-n", default=1, help="Alternatives per model.")
@click.option("--max-tokens", type=click.IntRange(min=1, max=2**31 - 1))
@click.option("--stream", is_flag=True, help="Print the first answer as it arrives.")
@click.option("--keep-partial", is_flag=True,
              help="Keep an interrupted answer, marked incomplete.")
@click.option("--logprobs", type=int, metavar="K",
              help="Keep token logprobs with K top alternatives (0-20).")
@click.option("--route", help="Instead of HEADISH: thread:N, session:S, persona:P or smart:TEXT.")
@click.option("--max-steps", type=int, help="Tool loop: at most this many model steps.")
@click.option("--persona", help="Generate as this persona.")
@JSON
@click.pass_context
def generate(ctx: click.Context, headish: str | None, model: list[str], n: int,
             max_tokens: int | None, stream: bool, keep_partial: bool, logprobs: int | None,
             route: str | None, max_steps: int | None, persona: str | None,
             as_json: bool) -> None:
    """N alternatives per model at HEADISH as sibling nodes; a session moves to the first.
    With tools, a persona or --max-steps: the agent's tool loop (see `loomdb pending`)."""
    from .agent_hooks import agent_turn, route_to

    lm = loom(ctx)
    config = providers_config(ctx)
    at = route_to(lm, headish, route)
    if agent_turn(lm, at, model, n, max_tokens, max_steps, persona, config, as_json):
        return
    extra: dict[str, Any] = {}
    if logprobs is not None:
        if not 0 <= logprobs <= 20:
            raise InvalidInput("--logprobs", f"must be from 0 to 20, got {logprobs}")
        extra["options"] = {"logprobs": True, "top_logprobs": logprobs}
    result = lm.generate(
        at, models=model, n=n, max_tokens=max_tokens,
        stream=_printer(stream and not as_json), config=config,
        keep_partial=keep_partial, **extra,
    )
    if stream and not as_json:
        sys.stdout.write("\n")
    for err in result.errors:
        click.echo(f"loomdb: warning: {err}", err=True)
    ids = [n.id for n in result.nodes]
    emit(as_json, {"nodes": ids}, "\n".join(ids))


@app.command()
@argument("headish", required=False)
@click.option("--keep", default=2, help="Newest turns kept verbatim.")
@click.option("-m", "--model")
@click.option("--max-tokens", type=click.IntRange(min=1, max=2**31 - 1),
              help="Longest summary (default: half the tokens it replaces).")
@click.option("--redo", is_flag=True, help="Compact again where each stale summary (made "
              "from messages redacted since; `loomdb verify` lists them) was made, or the "
              "one HEADISH names.")
@JSON
@click.pass_context
def compact(ctx: click.Context, headish: str | None, keep: int, model: str | None,
            max_tokens: int | None, redo: bool, as_json: bool) -> None:
    """Summarize older turns into a compaction node; context then starts from it.
    Refuses (exit 2, nothing written) when the summary would not be shorter."""
    lm = loom(ctx)
    if redo:
        done = lm.forget.redo_compactions(headish, model=model, max_tokens=max_tokens,
                                          config=providers_config(ctx))
        emit(as_json, done, "\n".join(f"{d['stale']} -> {d['node']} (tree {d['tree']})"
                                      for d in done) or "no stale compaction summary")
        return
    if headish is None:
        raise click.UsageError("give HEADISH (or --redo)")
    node = lm.compact(headish, keep=keep, model=model, config=providers_config(ctx),
                      max_tokens=max_tokens)
    row = lm.as_(lm.operator).nodes.compaction(node.id) or {}
    data = {"node": node.id, "tokens_before": row.get("tokens_before"),
            "tokens_after": row.get("tokens_after")}
    emit(as_json, data, f"{node.id} ({data['tokens_before']} -> {data['tokens_after']} tokens)")


@app.command()
@argument("headish", required=False, help="Where to continue (default: a new tree).")
@click.option("-m", "--model")
@click.option("--system", help="System context for a new tree.")
@click.option("--max-tokens", type=click.IntRange(min=1, max=2**31 - 1))
@click.option("--session", help="Session to extend or create.")
@JSON
@click.pass_context
def chat(ctx: click.Context, headish: str | None, model: str | None, system: str | None,
         max_tokens: int | None, session: str | None, as_json: bool) -> None:
    """Talk to a model, turn by turn, extending a session (like `llm chat`). Ctrl-D ends.
    With --json: one JSON object per turn, nothing streamed."""
    from .chat import run

    run(loom(ctx), headish, model=model, system=system, max_tokens=max_tokens,
        session=session, config=providers_config(ctx), as_json=as_json)
