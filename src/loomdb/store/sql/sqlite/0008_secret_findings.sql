-- The secrets scanner's findings (docs/security.md): one row per secret found as
-- content came in: its kind, the node or generation record it was in, the place in
-- that value (`content[1].input.command`) and the character span there, what was done
-- (`redact`, `warn`), and whose rule found it. Never the secret itself.
CREATE TABLE secret_findings (
  seq INTEGER PRIMARY KEY,
  at TEXT NOT NULL,
  tree_id TEXT NOT NULL,
  item TEXT NOT NULL,
  kind TEXT NOT NULL,
  place TEXT NOT NULL,
  span_start INTEGER NOT NULL,
  span_end INTEGER NOT NULL,
  action TEXT NOT NULL,
  rule TEXT NOT NULL
);
CREATE INDEX secret_findings_tree ON secret_findings (tree_id, seq);
