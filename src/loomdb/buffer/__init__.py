"""Buffer mode (seed 003): a tree that reads like one document while keeping every branch.

The document at a point is the text of its path (root to head, one version per slot,
chosen as everywhere else: see graph.py) concatenated with no separators, followed by
the *working buffer*: the uncommitted draft of the session or view it is read
through. The two operations the seed distinguishes:

- **Branching** (`generate`): the draft is committed as a human node, then a model
  writes N continuations of the document, stored as N sibling nodes under it; the ref
  moves to the first. Switching to a sibling (`switch`) switches everything after it.
- **Editing** (`edit_span`): a character range of the document becomes new *versions*
  of exactly the nodes it touches (`edited_from`), selected in the ref it is edited
  through; everything after them stays attached, so nothing is copied.

Every node has one author. `document(...).spans` attributes each character: a node's
text to its author, except in a version, whose text is diffed (diff-match-patch,
character level with semantic cleanup) against the original of its slot: unchanged
characters keep the original's author, inserted ones belong to the version's author.

Drafts belong to refs: a draft is read and written through the exact name of a
session or view (`main`, not `main~2`, not a node id). They are mutable rows beside
the refs (`Backend.get_draft` / `set_draft`), never hashed, and survive restarts.

Offsets are indices into the Python string (Unicode code points).

The package: `values` (what the operations answer), `drafts` (where a draft lives,
and the draft), `document` (text and authorship), `looming` (generate), `spans`
(range edits), `navigation` (alternatives, switch, diverge). Importing it registers
buffer trees' own way to generate with `generation.register_mode`.
"""

from __future__ import annotations

from .. import generation as G
from .document import authorship, diff, document, text
from .drafts import append_draft, commit_draft, get_draft, set_draft
from .looming import generate, next_tokens
from .navigation import alternatives, diverge, switch
from .spans import edit_span
from .values import (
    Alternative,
    Alternatives,
    At,
    Divergence,
    Document,
    Piece,
    Span,
    Switched,
)

G.register_mode("buffer", generate)

__all__ = [
    "Alternative", "Alternatives", "At", "Divergence", "Document", "Piece", "Span", "Switched",
    "alternatives", "append_draft", "authorship", "commit_draft", "diff", "diverge", "document",
    "edit_span", "generate", "get_draft", "next_tokens", "set_draft", "switch", "text",
]
