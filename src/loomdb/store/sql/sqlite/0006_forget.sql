-- Forgetting (docs/forget.md): what was deleted or redacted, never the content itself.
--
-- * forget_log: one line per delete, redaction or retention sweep: who, when, which ids
--   (JSON lists), the refs deleted with them, the reason given;
-- * forgotten: the ids of deleted nodes and trees, so an import of an export made
--   before does not bring them back (import ids are derived from the source's ids);
-- * redactions: the content ids (raw digests, as nodes hold them) and generation ids
--   whose stored text was erased: the verifier tells a redaction from tampering.
CREATE TABLE forget_log (
  seq INTEGER PRIMARY KEY,
  at TEXT NOT NULL,
  actor TEXT NOT NULL,
  action TEXT NOT NULL,
  target TEXT NOT NULL,
  trees TEXT NOT NULL,
  ids TEXT NOT NULL,
  refs TEXT NOT NULL,
  reason TEXT
);
CREATE TABLE forgotten (
  id TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('node', 'tree')),
  tree_id TEXT NOT NULL,
  at TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE redactions (
  item TEXT PRIMARY KEY,
  kind TEXT NOT NULL CHECK (kind IN ('content', 'generation')),
  at TEXT NOT NULL
) WITHOUT ROWID;
-- the store's own settings for forgetting: `retention`, the default of `gc --older-than`
CREATE TABLE forget_settings (
  name TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
-- the nodes that read their body from another node: only nodes repeating a content enter
-- it (an append of new content writes no page of it), and a forget finds every holder of
-- a content, or the nodes a deleted holder must hand its body to, without a table scan
CREATE INDEX nodes_body_key ON nodes (body_key) WHERE body_key IS NOT NULL;
-- a store that had nodes before this version may hold stale copies of moved cells in
-- free space (secure_delete was off): its first forget looks for its text in the file
-- and rewrites the file (VACUUM) once, then clears this
INSERT INTO forget_settings (name, value) SELECT 'stale_copies', '1'
  WHERE EXISTS (SELECT 1 FROM nodes);
