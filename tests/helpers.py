"""Small builders the tests share."""

from __future__ import annotations

import random

from loomdb import Loom
from loomdb.users import USERS


def run_main(*args: str) -> tuple[int, str, str]:
    """`loomdb ARGS` in this process: (exit code, stdout, stderr)."""
    import contextlib
    import io

    from loomdb.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            main(list(args))
        except SystemExit as exc:
            return int(exc.code or 0), out.getvalue(), err.getvalue()
    raise AssertionError("main() always exits")


def thread(loom: Loom, texts: list[str], session: str = "main") -> list[str]:
    """A linear conversation alternating user/assistant; returns its node ids."""
    _, root = loom.new_tree(texts[0], session=session)
    ids = [root.id]
    for i, text in enumerate(texts[1:], start=1):
        ids.append(loom.append(session, text, role="assistant" if i % 2 else "user").id)
    return ids


def texts_of(loom: Loom, headish: str) -> list[str]:
    """The plain text of every message in the context at `headish` (system included)."""
    ctx = loom.context(headish)
    return ["".join(b.get("text", "") for b in m["content"]) for m in ctx["messages"]]


def row_counts(loom: Loom) -> dict[str, int]:
    """Rows per table: to prove a failed write left nothing behind."""
    tables = ["trees", "contents", "nodes", "node_sources", "node_selections", "edges",
              "edge_sources", "node_meta", "node_tags", "refs", "ref_selections", "ref_log",
              "blobs"]
    return {t: loom.backend.execute(f"SELECT count(*) FROM {t}")[0][0] for t in tables}


def grow_big(lm: Loom, n: int, seed: int = 7) -> str:
    """A tree of `n` nodes shaped like long work: one long session, a branch every so
    often from a recent message (1 to 25 messages long), an edit now and then. Written
    in one transaction (a few seconds, not one commit per node)."""
    rnd = random.Random(seed)
    tree, root = lm.new_tree("Where should the conversation start?", session="big",
                             title="Ten thousand")
    made = [root.id]
    branch, left = "", 0
    with lm.unit(USERS):
        for i in range(n - 1):
            text = f"Message {i}: a few words of a conversation that goes on"
            role = "user" if i % 2 else "assistant"
            if left:
                node = lm.append(branch, text, role=role)
                branch, left = node.id, left - 1
            elif rnd.random() < 0.06:
                at = made[rnd.randrange(max(0, len(made) - 300), len(made))]
                node = lm.append(at, text, role=role)
                branch, left = node.id, rnd.randint(1, 25)
            elif rnd.random() < 0.01:
                node = lm.edit(made[rnd.randrange(max(1, len(made) - 50), len(made))], text)
            else:
                node = lm.append("big", text, role=role)
            made.append(node.id)
    return tree.id


def long_session(lm: Loom, session: str, n: int) -> list[str]:
    """One session of `n` messages ("Message 0" to "Message n-1", user and assistant in
    turn), written in one transaction; their ids, root first."""
    _, root = lm.new_tree("Message 0", session=session, title=f"Long {session}")
    ids = [root.id]
    with lm.unit(USERS):
        for i in range(1, n):
            ids.append(lm.append(session, f"Message {i}",
                                 role="assistant" if i % 2 else "user").id)
    return ids
