"""Read-only share links: `loomdb share HEADISH [--live]`, `share list`, `share revoke`."""

from __future__ import annotations

import click

from ..errors import UsageError
from . import JSON, arguments, emit, loom
from . import root as app

USAGE = "loomdb share HEADISH [--live] | loomdb share list | loomdb share revoke TOKEN"


@app.command()
@arguments("words", metavar="HEADISH | list | revoke TOKEN")
@click.option("--live", is_flag=True,
              help="Follow the session HEADISH names as it moves (else: a snapshot of the "
              "node).")
@JSON
@click.pass_context
def share(ctx: click.Context, words: list[str], live: bool, as_json: bool) -> None:
    """Share a branch as a read-only link, list your links, or revoke one.

    `share HEADISH` prints the link's token (shown once) and its page's path
    (`/s/TOKEN` on `loomdb serve`); whoever holds it reads that branch, nothing else.
    `share list` lists the links (id, the token's first characters), `share revoke
    TOKEN` (or the id) stops one at once."""
    shares = loom(ctx).shares
    if words[:1] == ["list"] and len(words) == 1:
        found = shares.list()
        emit(as_json, {"shares": [s.to_json() for s in found]},
             "\n".join(f"{s.id}  {s.prefix}…  {s.kind:8}  "
                       f"{s.session if s.session else s.node}  {s.created_at}" for s in found)
             or "no share links")
    elif words[:1] == ["revoke"] and len(words) == 2:
        gone = shares.revoke(words[1])
        emit(as_json, {"revoked": gone.to_json()}, f"revoked {gone.id} ({gone.prefix}…)")
    elif len(words) == 1 and words[0] not in ("list", "revoke"):
        made, token = shares.create(words[0], live=live)
        out = {"token": token, "path": f"/s/{token}", **made.to_json()}
        emit(as_json, out, f"/s/{token}\n(the token is shown once; `loomdb share revoke "
             f"{made.id}` stops the link)")
    else:
        raise UsageError("share", f"usage: {USAGE}")
