-- A link may let a signed-in reader continue the shared path in a tree of their own
-- (`allow_continue`). Each such fork keeps its grant here, made with the fork: the exact
-- node it continues from, which the fork's context reads through this row (not the
-- link's), so revoking the link leaves forks already made.
ALTER TABLE shares ADD COLUMN allow_continue INTEGER NOT NULL DEFAULT 0;
CREATE TABLE share_forks (
  tree_id TEXT PRIMARY KEY,
  share_id TEXT NOT NULL,
  source_tree TEXT NOT NULL,
  source_node TEXT NOT NULL,
  user_id TEXT,
  created_at TEXT NOT NULL
);
CREATE INDEX share_forks_share ON share_forks (share_id);
