-- Buffer mode's working buffer (seed 003): the uncommitted tail of a document, one per
-- session or view. Mutable draft state, so it lives beside refs and never in a node;
-- committing it (Generate) writes an ordinary node and empties the row's text.

CREATE TABLE IF NOT EXISTS drafts (
  ref_name TEXT PRIMARY KEY,
  text TEXT NOT NULL,
  updated_at TEXT NOT NULL
) WITHOUT ROWID;
