"""Small builders the tests share."""

from __future__ import annotations

from loomdb import Loom


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
