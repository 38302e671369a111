-- Span redaction (docs/forget.md, "Redact a span everywhere"): a content, generation
-- record or node whose stored value had spans replaced by a marker. The chain covers
-- a content's id (and a generation's response hash), not what is stored under it, so
-- the verifier checks the stored value against the digest the scrub left (`digest`)
-- and lists it as scrubbed, not tampered. `seq` is the line of the record of forgetting.
CREATE TABLE scrubs (
  item TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('content', 'generation', 'node')),
  digest TEXT NOT NULL,
  seq INTEGER NOT NULL,
  at TEXT NOT NULL
) WITHOUT ROWID;
-- Derived values made from what was forgotten since: a compaction summary whose
-- summarized messages were redacted or scrubbed (until `loomdb compact --redo`), a
-- title re-derived. `source`: the node it came from; never content.
CREATE TABLE stale (
  tree_id TEXT NOT NULL,
  item TEXT NOT NULL,
  kind TEXT NOT NULL,
  source TEXT NOT NULL,
  at TEXT NOT NULL,
  PRIMARY KEY (tree_id, item)
) WITHOUT ROWID;
-- A user's span redaction of a content another user's node holds too: the user's
-- nodes read their own scrubbed copy of it (they hold neither a body nor a pointer,
-- as a redacted copy, and read this body in place of the tombstone).
CREATE TABLE node_scrubs (
  node_id TEXT PRIMARY KEY,
  body TEXT NOT NULL
) WITHOUT ROWID;
