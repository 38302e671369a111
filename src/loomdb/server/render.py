"""Markdown in messages, rendered by the server and sanitized before any browser sees it.

markdown-it-py (CommonMark, raw HTML off) renders; nh3 then keeps only a fixed set of
tags and attributes, so a message can never run script in the page.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any

TAGS = {"p", "br", "hr", "em", "strong", "code", "pre", "blockquote", "ul", "ol", "li",
        "h1", "h2", "h3", "h4", "h5", "h6", "a", "table", "thead", "tbody", "tr", "th", "td",
        "del", "s"}
ATTRIBUTES = {"a": {"href", "title"}, "code": {"class"}, "th": {"align"}, "td": {"align"}}


@lru_cache(maxsize=1)
def _md() -> Any:
    from markdown_it import MarkdownIt

    return MarkdownIt("commonmark", {"html": False, "linkify": False}).enable("table").enable(
        "strikethrough")


def markdown_html(text: str) -> str:
    """Safe HTML for a message's markdown text."""
    import nh3

    return nh3.clean(_md().render(text), tags=TAGS, attributes=ATTRIBUTES,
                     url_schemes={"http", "https", "mailto"}, link_rel="noopener noreferrer")


def blocks_html(blocks: list[dict[str, Any]]) -> str:
    """A message's blocks as safe HTML: text as markdown, anything else as a labelled line."""
    import html

    out = []
    for b in blocks:
        if b.get("type") == "text":
            out.append(markdown_html(b.get("text", "")))
        elif b.get("type") == "thinking":
            out.append(f"<blockquote>{html.escape(str(b.get('thinking', '')))}</blockquote>")
        else:
            label = b.get("name") or b.get("mime_type") or ""
            out.append(f"<p><code>[{html.escape(str(b.get('type')))} {html.escape(str(label))}]"
                       "</code></p>")
    return "".join(out)
