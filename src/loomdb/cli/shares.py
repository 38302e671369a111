"""Share links: `loomdb share HEADISH [--live] [--allow-continue]`, `share list`, `share
revoke`, and `share continue TOKEN SESSION --text T` (a fork of a shared branch)."""

from __future__ import annotations

import click

from ..errors import UsageError
from . import JSON, arguments, emit, loom
from . import root as app

USAGE = ("loomdb share HEADISH [--live] [--allow-continue] | loomdb share list | "
         "loomdb share revoke TOKEN | loomdb share continue TOKEN SESSION --text T")


@app.command()
@arguments("words", metavar="HEADISH | list | revoke TOKEN | continue TOKEN SESSION")
@click.option("--live", is_flag=True,
              help="Follow the session HEADISH names as it moves (else: a snapshot of the "
              "node).")
@click.option("--allow-continue", is_flag=True,
              help="Let a signed-in reader continue the branch in a tree of their own.")
@click.option("--text", default=None, help="continue: the message that continues it.")
@JSON
@click.pass_context
def share(ctx: click.Context, words: list[str], live: bool, allow_continue: bool,
          text: str | None, as_json: bool) -> None:
    """Share a branch as a read-only link, list your links, or revoke one.

    `share HEADISH` prints the link's token (shown once) and its page's path
    (`/s/TOKEN` on `loomdb serve`); whoever holds it reads that branch, nothing else.
    `share list` lists the links (id, the token's first characters), `share revoke
    TOKEN` (or the id) stops one at once. `share continue TOKEN SESSION --text T`
    forks a branch shared with `--allow-continue` into a tree of yours whose context
    starts with the shared path (nothing copied; revoking the link leaves the fork)."""
    shares = loom(ctx).shares
    if words[:1] == ["list"] and len(words) == 1:
        found = shares.list()
        emit(as_json, {"shares": [s.to_json() for s in found]},
             "\n".join(f"{s.id}  {s.prefix}…  {s.kind:8}  "
                       f"{s.session if s.session else s.node}  {s.created_at}"
                       + (f"  continue: {s.forks} forks" if s.allow_continue else "")
                       for s in found)
             or "no share links")
    elif words[:1] == ["revoke"] and len(words) == 2:
        gone = shares.revoke(words[1])
        emit(as_json, {"revoked": gone.to_json()}, f"revoked {gone.id} ({gone.prefix}…)")
    elif words[:1] == ["continue"] and len(words) == 3:
        tree, root = shares.fork(words[1], words[2], text or "")
        emit(as_json, {"tree": tree.id, "node": root.id, "session": words[2]},
             f"{words[2]}: a new tree {tree.id} continuing the shared branch")
    elif len(words) == 1 and words[0] not in ("list", "revoke", "continue"):
        made, token = shares.create(words[0], live=live, allow_continue=allow_continue)
        out = {"token": token, "path": f"/s/{token}", **made.to_json()}
        emit(as_json, out, f"/s/{token}\n(the token is shown once; `loomdb share revoke "
             f"{made.id}` stops the link)")
    else:
        raise UsageError("share", f"usage: {USAGE}")
